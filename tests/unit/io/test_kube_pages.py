"""Splitting list pages into objects: the same objects json.loads sees, with apiVersion and kind
added and managedFields and kubectl's last-applied copy dropped, whatever the layout."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kplan.io.kube import KINDS, LAST_APPLIED, split_list

POD_PREFIX = '{"apiVersion":"v1","kind":"Pod"'


def expected(item: dict[str, Any]) -> dict[str, Any]:
    """What an item should become, computed the plain way."""
    out = {"apiVersion": "v1", "kind": "Pod", **{k: v for k, v in item.items() if k not in ("apiVersion", "kind")}}
    md = out.get("metadata")
    if isinstance(md, dict):
        md = {k: v for k, v in md.items() if k != "managedFields"}
        ann = md.get("annotations")
        if isinstance(ann, dict) and LAST_APPLIED in ann:
            ann = {k: v for k, v in ann.items() if k != LAST_APPLIED}
            if ann:
                md["annotations"] = ann
            else:
                del md["annotations"]
        out["metadata"] = md
    return out


def page(items: list[Any], indent: int | None = None, **meta: Any) -> str:
    return json.dumps({"kind": "PodList", "apiVersion": "v1", "metadata": meta, "items": items}, indent=indent)


POD = {"metadata": {"name": "a", "namespace": "ns", "managedFields": [{"manager": "kubelet"}],
                    "annotations": {LAST_APPLIED: '{"kind":"Pod"}', "keep": "me"}},
       "spec": {"nodeName": "n1", "template": {"metadata": {"managedFields": "nested ones are not touched"}}},
       "status": {"phase": "Running", "message": 'unicode é ✓, "quotes" and a \\ backslash'}}


@pytest.mark.parametrize("text, items", [
    pytest.param(page([POD]), [expected(POD)], id="a compact page"),
    pytest.param(page([POD, POD], indent=2), [expected(POD)] * 2, id="a pretty-printed page"),
    pytest.param(page([]), [], id="no items"),
    pytest.param('{"kind":"PodList","items":null}', [], id="items null"),
    pytest.param('{}', [], id="an empty object"),
    pytest.param(page([{}]), [{"apiVersion": "v1", "kind": "Pod"}], id="an empty item"),
    pytest.param(page([{"kind": "Other", "apiVersion": "x/v9", "spec": {}}]),
                 [{"apiVersion": "v1", "kind": "Pod", "spec": {}}], id="the list's kind wins over an item's"),
    pytest.param(page([{"metadata": {"annotations": {LAST_APPLIED: "{}"}}}]), [{"apiVersion": "v1", "kind": "Pod",
                 "metadata": {}}], id="annotations left empty are dropped"),
    pytest.param(page([{"metadata": {"managedFields": None}}]), [{"apiVersion": "v1", "kind": "Pod",
                 "metadata": {}}], id="managedFields null is dropped too"),
])
def test_pages_split_into_objects(text: str, items: list[dict[str, Any]]) -> None:
    _, got = split_list(text, POD_PREFIX)
    assert [json.loads(g) for g in got] == items
    assert all(g.startswith(POD_PREFIX) for g in got)


def test_untouched_values_keep_the_exact_text_the_server_sent() -> None:
    text = '{"items":[{"metadata":{"name":"a"},"spec":{"x":1.50,"y":"\\u00e9"}}]}'
    assert split_list(text, POD_PREFIX)[1] == ['{"apiVersion":"v1","kind":"Pod","metadata":{"name":"a"},'
                                               '"spec":{"x":1.50,"y":"\\u00e9"}}']


def test_the_list_metadata_is_decoded() -> None:
    head, _ = split_list(page([POD], continue_="t", remainingItemCount=3), POD_PREFIX)
    assert head["metadata"] == {"continue_": "t", "remainingItemCount": 3} and head["kind"] == "PodList"


@pytest.mark.parametrize("text", [
    pytest.param('{"items":[{"a":1}', id="cut short"),
    pytest.param('{"items":[{"a":1}}', id="a wrong bracket"),
    pytest.param('[1,2]', id="not an object"),
    pytest.param('{"items":[1]}', id="an item that is not an object"),
    pytest.param('{1:2}', id="a member name that is not a string"),
    pytest.param('{"items":[{"a" 1}]}', id="a missing colon"),
])
def test_broken_pages_raise_value_errors(text: str) -> None:
    with pytest.raises((ValueError, IndexError)):
        split_list(text, POD_PREFIX)


def test_every_kind_gets_its_own_api_version() -> None:
    from kplan.io.kube import _item_prefix

    pdb = next(k for k in KINDS if k.resource == "poddisruptionbudgets")
    assert _item_prefix(pdb) == '{"apiVersion":"policy/v1","kind":"PodDisruptionBudget"'


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3),
    max_leaves=10)
items_strategy = st.lists(st.dictionaries(
    st.sampled_from(["metadata", "spec", "status", "kind", "apiVersion", "data"]),
    st.one_of(json_values, st.fixed_dictionaries({}, optional={
        "name": st.text(max_size=5), "managedFields": json_values,
        "annotations": st.dictionaries(st.sampled_from([LAST_APPLIED, "a", "b"]), st.text(max_size=5), max_size=2)}))),
    max_size=4)


@settings(max_examples=150, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(items=items_strategy, indent=st.sampled_from([None, 0, 2]))
def test_splitting_agrees_with_json_loads(items: list[dict[str, Any]], indent: int | None) -> None:
    head, got = split_list(page(items, indent=indent, resourceVersion="1"), POD_PREFIX)
    assert [json.loads(g) for g in got] == [expected(i) for i in items]
    assert head["metadata"] == {"resourceVersion": "1"}
