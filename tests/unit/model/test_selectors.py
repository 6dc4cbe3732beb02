"""Label selectors and node selector terms (kplan/model/selectors.py, reference 3.4)."""

from __future__ import annotations

from typing import Any

import pytest

from kplan.errors import InputError
from kplan.model.parse import Where, parse_label_selector, parse_node_selector_term
from kplan.model.selectors import LabelSelector, NodeSelector, Requirement, parse_int64, selector_matches

W = Where("test.yaml", "Pod", "default/p")


@pytest.mark.parametrize("req, labels, matches", [
    pytest.param(Requirement("env", "In", ("a", "b")), {"env": "b"}, True, id="In matches a listed value"),
    pytest.param(Requirement("env", "In", ("a",)), {"env": "c"}, False, id="In rejects an unlisted value"),
    pytest.param(Requirement("env", "In", ("a",)), {}, False, id="In rejects a missing label"),
    pytest.param(Requirement("env", "NotIn", ("a",)), {}, True, id="NotIn accepts a missing label"),
    pytest.param(Requirement("env", "NotIn", ("a",)), {"env": "a"}, False, id="NotIn rejects a listed value"),
    pytest.param(Requirement("env", "NotIn", ("a",)), {"env": "b"}, True, id="NotIn accepts another value"),
    pytest.param(Requirement("env", "Exists"), {"env": ""}, True, id="Exists accepts an empty value"),
    pytest.param(Requirement("env", "Exists"), {}, False, id="Exists rejects a missing label"),
    pytest.param(Requirement("env", "DoesNotExist"), {}, True, id="DoesNotExist accepts a missing label"),
    pytest.param(Requirement("env", "DoesNotExist"), {"env": "x"}, False, id="DoesNotExist rejects a present label"),
    pytest.param(Requirement("gpus", "Gt", ("2",)), {"gpus": "3"}, True, id="Gt compares as integers"),
    pytest.param(Requirement("gpus", "Gt", ("2",)), {"gpus": "2"}, False, id="Gt is strict"),
    pytest.param(Requirement("gpus", "Gt", ("9",)), {"gpus": "10"}, True, id="Gt does not compare as strings"),
    pytest.param(Requirement("gpus", "Lt", ("2",)), {"gpus": "-5"}, True, id="Lt accepts negative labels"),
    pytest.param(Requirement("gpus", "Lt", ("2",)), {"gpus": "+1"}, True, id="a leading plus parses as in Go"),
    pytest.param(Requirement("gpus", "Gt", ("2",)), {"gpus": "3.5"}, False, id="a non-integer label never matches Gt"),
    pytest.param(Requirement("gpus", "Lt", ("x",)), {"gpus": "1"}, False, id="a non-integer value never matches Lt"),
    pytest.param(Requirement("gpus", "Gt", ("2",)), {}, False, id="Gt rejects a missing label"),
    pytest.param(Requirement("gpus", "Gt", ("1", "2")), {"gpus": "5"}, False, id="Gt with two values never matches"),
    pytest.param(Requirement("gpus", "Gt", ("1",)), {"gpus": "99999999999999999999"}, False,
                 id="a label beyond int64 never matches"),
])
def test_requirement(req: Requirement, labels: dict[str, str], matches: bool) -> None:
    assert req.matches(labels) is matches


@pytest.mark.parametrize("text, parsed", [
    pytest.param("42", 42, id="digits parse"),
    pytest.param("-7", -7, id="a minus sign parses"),
    pytest.param("+7", 7, id="a plus sign parses"),
    pytest.param("9223372036854775807", 2**63 - 1, id="the largest int64 parses"),
    pytest.param("9223372036854775808", None, id="one beyond int64 does not parse"),
    pytest.param("", None, id="an empty string does not parse"),
    pytest.param("1_0", None, id="underscores do not parse in base 10"),
    pytest.param(" 1", None, id="spaces do not parse"),
    pytest.param("٣", None, id="non-ASCII digits do not parse"),
])
def test_parse_int64_follows_strconv(text: str, parsed: int | None) -> None:
    assert parse_int64(text) == parsed


@pytest.mark.parametrize("raw, labels, matches", [
    pytest.param(None, {"a": "b"}, False, id="a nil selector matches nothing"),
    pytest.param({}, {}, True, id="an empty selector matches everything"),
    pytest.param({"matchLabels": {"app": "web"}}, {"app": "web", "x": "y"}, True,
                 id="matchLabels needs each pair"),
    pytest.param({"matchLabels": {"app": "web", "tier": "fe"}}, {"app": "web"}, False,
                 id="matchLabels misses one pair"),
    pytest.param({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "NotIn",
                                                                       "values": ["db"]}]},
                 {"app": "web", "tier": "db"}, False, id="labels and expressions are ANDed"),
])
def test_label_selector(raw: dict[str, Any] | None, labels: dict[str, str], matches: bool) -> None:
    assert selector_matches(parse_label_selector(raw, W, "selector"), labels) is matches


@pytest.mark.parametrize("raw, message", [
    pytest.param({"matchExpressions": [{"key": "a", "operator": "In"}]},
                 "test.yaml: Pod default/p: selector.matchExpressions[0].values: Required value: must be specified "
                 "when `operator` is 'In' or 'NotIn'", id="In without values is invalid"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]},
                 "test.yaml: Pod default/p: selector.matchExpressions[0].values: Forbidden: may not be specified "
                 "when `operator` is 'Exists' or 'DoesNotExist'", id="Exists with values is invalid"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]},
                 "test.yaml: Pod default/p: selector.matchExpressions[0].operator: Unsupported value: ",
                 id="Gt is no label selector operator"),
])
def test_invalid_label_selectors_name_the_field(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(InputError) as e:
        parse_label_selector(raw, W, "selector")
    # the file, object and field are fixed; the wording after "Unsupported value: " is kplan's own
    assert str(e.value) == message or (message.endswith(": ") and str(e.value).startswith(message))


@pytest.mark.parametrize("raw, node, labels, matches", [
    pytest.param({}, "n1", {"a": "1"}, False, id="an empty term matches nothing"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]},
                                       {"key": "b", "operator": "Exists"}]}, "n1", {"a": "1"}, False,
                 id="expressions inside a term are ANDed"),
    pytest.param({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]}, "n1", {}, True,
                 id="matchFields metadata.name In selects the named node"),
    pytest.param({"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]}, "n2", {},
                 True, id="matchFields metadata.name NotIn selects the other nodes"),
    pytest.param({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1", "n2"]}]}, "n1", {},
                 False, id="matchFields with two values is invalid and never matches"),
    pytest.param({"matchFields": [{"key": "metadata.name", "operator": "Exists"}]}, "n1", {}, False,
                 id="matchFields supports only In and NotIn"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "In", "values": ["1"]}],
                  "matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n2"]}]}, "n1", {"a": "1"},
                 False, id="expressions and fields must both hold"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["x"]}]}, "n1", {"a": "1"}, False,
                 id="a term with an unparseable Gt value never matches"),
    pytest.param({"matchExpressions": [{"key": "a", "operator": "In"}]}, "n1", {"a": "1"}, False,
                 id="a term with In and no values never matches"),
])
def test_node_selector_term(raw: dict[str, Any], node: str, labels: dict[str, str], matches: bool) -> None:
    assert parse_node_selector_term(raw, W, "term").matches(node, labels) is matches


def test_node_selector_terms_are_ored() -> None:
    terms = [parse_node_selector_term({"matchExpressions": [{"key": "a", "operator": "Exists"}]}, W, "t0"),
             parse_node_selector_term({"matchExpressions": [{"key": "b", "operator": "Exists"}]}, W, "t1")]
    ns = NodeSelector(tuple(terms))
    assert ns.matches("n", {"b": ""}) and ns.matches("n", {"a": ""}) and not ns.matches("n", {"c": ""})


def test_a_node_selector_without_terms_matches_no_node() -> None:
    assert not NodeSelector(()).matches("n", {"a": "1"})


def test_with_requirements_ands_more_terms() -> None:
    sel = LabelSelector((("app", "web"),)).with_requirements((Requirement("pod-template-hash", "In", ("abc",)),))
    assert sel.matches({"app": "web", "pod-template-hash": "abc"})
    assert not sel.matches({"app": "web", "pod-template-hash": "def"})
