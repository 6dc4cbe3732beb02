"""Label selectors written as text, parsed as kubectl -l does (apimachinery labels.Parse)."""

from __future__ import annotations

import pytest

from kplan.model.name_rules import label_value, qualified_name
from kplan.model.selector_syntax import SelectorSyntaxError, parse_selector
from kplan.model.selectors import Requirement

PARSES = [
    ("equality, inequality, set, negated existence, existence",
     "a=b,c!=d,e in (f,g),!h,i",
     [("a", "In", ("b",)), ("c", "NotIn", ("d",)), ("e", "In", ("f", "g")), ("h", "DoesNotExist", ()),
      ("i", "Exists", ())]),
    ("double equals is equality", "a==b", [("a", "In", ("b",))]),
    ("whitespace around operators and values is ignored", "  a  =  b ,  c in ( x , y ) ",
     [("a", "In", ("b",)), ("c", "In", ("x", "y"))]),
    ("an empty text selects everything", "", []),
    ("a missing value after = is the empty string", "a=", [("a", "In", ("",))]),
    ("() is the set holding the empty string", "z notin ()", [("z", "NotIn", ("",))]),
    ("empty entries in a set are the empty string", "x in (foo,,baz)", [("x", "In", ("", "baz", "foo"))]),
    ("a leading comma in a set is the empty string", "x in (,a)", [("x", "In", ("", "a"))]),
    ("in and notin are plain words where a key or value is expected", "in in (in,notin)",
     [("in", "In", ("in", "notin"))]),
    ("gt and lt take one integer", "k>3,l<5", [("k", "Gt", ("3",)), ("l", "Lt", ("5",))]),
    ("prefixed keys", "app.kubernetes.io/name=db", [("app.kubernetes.io/name", "In", ("db",))]),
    ("requirements are sorted by key, as upstream", "b=1,a=2", [("a", "In", ("2",)), ("b", "In", ("1",))]),
]


@pytest.mark.parametrize("text,want", [c[1:] for c in PARSES], ids=[c[0] for c in PARSES])
def test_parses(text: str, want: list[tuple[str, str, tuple[str, ...]]]) -> None:
    sel = parse_selector(text)
    assert sel.match_labels == ()
    assert sel.expressions == tuple(Requirement(k, op, vals) for k, op, vals in want)


MATCHES = [
    ("a=b matches b", "a=b", {"a": "b"}, True),
    ("a=b needs the key", "a=b", {}, False),
    ("a!=b matches a missing key", "a!=b", {}, True),
    ("notin matches a missing key", "a notin (x)", {}, True),
    ("!a rejects any value of a", "!a", {"a": ""}, False),
    ("a exists with an empty value", "a", {"a": ""}, True),
    ("a= matches only the empty value", "a=", {"a": "x"}, False),
    ("gt compares integers", "n>9", {"n": "10"}, True),
    ("gt on a non-integer label is false", "n>9", {"n": "ten"}, False),
    ("all requirements must hold", "a=b,c", {"a": "b"}, False),
    ("the empty selector matches anything", "", {"x": "y"}, True),
]


@pytest.mark.parametrize("text,labels,want", [c[1:] for c in MATCHES], ids=[c[0] for c in MATCHES])
def test_matches(text: str, labels: dict[str, str], want: bool) -> None:
    assert parse_selector(text).matches(labels) is want


ERRORS = [
    ("two words without an operator", "a b",
     "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
    ("in without parentheses", "a in b", "unable to parse requirement: found 'b' expected: '('"),
    ("an unclosed set", "a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
    ("a trailing comma", "a,", "found '', expected: identifier after ','"),
    ("a leading comma", ",a", "found ',', expected: !, identifier, or 'end of string'"),
    ("a value after a negated key", "!a=b", "found '=', expected: ',' or 'end of string'"),
    ("two values after =", "a=b c", "found 'c', expected: ',' or 'end of string'"),
    ("gt with a word", "k>x",
     "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an "
     "integer"),
    ("an upper-case key prefix", "A/b=c",
     'unable to parse requirement: Invalid value: "A/b": prefix part a lowercase RFC 1123 subdomain must consist of '
     "lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. "
     "'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
    ("a negative bound is no valid label value, as upstream", "l<-1",
     'unable to parse requirement: values[0][l]: Invalid value: "-1": a valid label must be an empty string or '
     "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
     "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
     "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
    ("a value with a forbidden character", "a=b@c",
     'unable to parse requirement: values[0][a]: Invalid value: "b@c": a valid label must be an empty string or '
     "consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character "
     "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
     "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"),
]


@pytest.mark.parametrize("text,message", [c[1:] for c in ERRORS], ids=[c[0] for c in ERRORS])
def test_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorSyntaxError) as e:
        parse_selector(text)
    assert str(e.value) == message


@pytest.mark.parametrize("name,ok", [("zone", True), ("topology.kubernetes.io/zone", True), ("a/b/c", False),
                                     ("/zone", False), ("-zone", False), ("x" * 63, True), ("x" * 64, False)],
                         ids=["plain", "prefixed", "two slashes", "empty prefix", "leading dash", "63 characters",
                              "64 characters"])
def test_qualified_names(name: str, ok: bool) -> None:
    assert (qualified_name(name) == []) is ok


@pytest.mark.parametrize("value,ok", [("", True), ("zone-a", True), ("a b", False), ("x" * 64, False)],
                         ids=["empty", "plain", "space", "too long"])
def test_label_values(value: str, ok: bool) -> None:
    assert (label_value(value) == []) is ok
