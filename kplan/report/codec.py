"""Typed result documents: frozen dataclasses written as JSON values, read back, and described
by a JSON Schema, all three from the same declarations.

A document class is a frozen dataclass. Each field becomes a JSON member, named in camelCase
after the attribute (``nominated_node`` → ``nominatedNode``) unless ``member(json=...)`` names it,
in declaration order. ``member`` also says when a member is left out (``omit``: a predicate on
the value, so that a member that is usually absent stays absent), which members hold one of a few
strings (``enum``), and which nested document is written inline (its members next to the
field's siblings). Quantities are integers in the classes (millicores, bytes, counts) and
Kubernetes quantity strings in the document (``"3920m"``, ``"16Gi"``): a field annotated
``Annotated[int, Quantity("cpu")]`` says which resource, and ``Quantity()`` inside a mapping
takes the resource from the mapping's key (``{"cpu": "4", "memory": "16Gi", "pods": "110"}``).

Supported field types: ``int``, ``float``, ``str``, ``bool``, ``None``, unions of them,
``Literal`` strings, enums (written as their values), ``tuple[X, ...]``, ``dict[str, X]``, other document classes (unions of
those are told apart by their ``Literal`` fields) and the quantities above.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from kplan.model.quantity import format_resource, resource_value

#: a Kubernetes quantity (k8s.io/apimachinery/pkg/api/resource, the regexp of its ParseQuantity)
QUANTITY_PATTERN = r"^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)(([KMGTPE]i)|[numkMGTPE]|([eE][+-]?[0-9]+))?$"


@dataclass(frozen=True)
class Quantity:
    """Annotates an ``int`` field written as a quantity of ``resource``; ``None``: the key of the
    mapping that holds it names the resource."""

    resource: str | None = None


Omit = Callable[[Any], bool]


def is_none(v: Any) -> bool:
    return v is None


def is_empty(v: Any) -> bool:
    return not v


def member(*, json: str | None = None, omit: Omit | None = None, enum: tuple[str, ...] = (), inline: bool = False,
           default: Any = dataclasses.MISSING) -> Any:
    """A field with how it is written: its JSON name, when it is left out, its allowed values."""
    meta = {"json": json, "omit": omit, "enum": enum, "inline": inline}
    if default is dataclasses.MISSING and omit is not None:
        raise TypeError("a member that may be left out needs the default it reads back as")
    return dataclasses.field(default=default, metadata=meta)


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(w[:1].upper() + w[1:] for w in rest)


@dataclass(frozen=True)
class _Field:
    attr: str
    json: str
    hint: Any
    omit: Omit | None
    enum: tuple[str, ...]
    inline: bool
    required: bool


@cache
def fields_of(cls: type) -> tuple[_Field, ...]:
    hints = typing.get_type_hints(cls, include_extras=True)
    out = []
    for f in dataclasses.fields(cls):
        m = f.metadata
        out.append(_Field(f.name, m.get("json") or camel(f.name), hints[f.name], m.get("omit"), m.get("enum", ()),
                          bool(m.get("inline")),
                          f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING))
    return tuple(out)


def _split(hint: Any) -> tuple[Any, Quantity | None]:
    if get_origin(hint) is Annotated:
        base, *extra = get_args(hint)
        return base, next((e for e in extra if isinstance(e, Quantity)), None)
    return hint, None


def _is_union(hint: Any) -> bool:
    return get_origin(hint) in (Union, types.UnionType)


# ------------------------------------------------------------------------------ writing

def encode(doc: Any) -> Any:
    """The document as JSON values (dicts in member order, lists, strings, numbers, booleans, null)."""
    return _encode(doc, type(doc), None)


def _encode(v: Any, hint: Any, key: str | None) -> Any:
    hint, qty = _split(hint)
    if v is None:
        return None
    if qty is not None:
        res = qty.resource or key
        assert res is not None, "a Quantity() outside a mapping names its resource"
        return format_resource(res, v)
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        out: dict[str, Any] = {}
        for f in fields_of(type(v)):
            x = getattr(v, f.attr)
            if f.inline:
                out.update(_encode(x, f.hint, None))
            elif f.omit is None or not f.omit(x):
                out[f.json] = _encode(x, f.hint, None)
        return out
    if _is_union(hint):
        hint = next((h for h in get_args(hint) if h is not type(None)), Any)
    origin, args = get_origin(hint), get_args(hint)
    if isinstance(v, tuple | list):
        item = args[0] if args else Any
        return [_encode(x, item, None) for x in v]
    if isinstance(v, Mapping):
        value = args[1] if origin is dict and len(args) == 2 else Any
        return {str(k): _encode(x, value, str(k)) for k, x in v.items()}
    if isinstance(v, str):  # StrEnum members are written as their value
        return str(v)
    return v


# ------------------------------------------------------------------------------ reading

T = TypeVar("T")


def decode(cls: type[T], data: Any) -> T:
    """A document class from the JSON values ``encode`` writes (or a JSON/YAML file holds)."""
    found: T = _decode(data, cls, None)
    return found


def _decode(data: Any, hint: Any, key: str | None) -> Any:
    hint, qty = _split(hint)
    if qty is not None:
        if data is None:
            return None
        res = qty.resource or key
        assert res is not None
        return resource_value(res, data)
    if _is_union(hint):
        options = [h for h in get_args(hint) if h is not type(None)]
        if data is None:
            return None
        classes = [h for h in options if isinstance(h, type) and dataclasses.is_dataclass(h)]
        if classes:
            return _decode(data, _pick(classes, data), key)
        return _decode(data, options[0], key) if len(options) == 1 else data
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return hint(**_members(hint, data))
    if isinstance(hint, type) and issubclass(hint, Enum):
        return hint(data)
    origin, args = get_origin(hint), get_args(hint)
    if origin is tuple:
        return tuple(_decode(x, args[0], None) for x in data)
    if origin is list:
        return [_decode(x, args[0], None) for x in data]
    if origin is dict:
        return {k: _decode(x, args[1], k) for k, x in data.items()}
    if hint is float and isinstance(data, int):
        return data
    return data


def _members(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    kw: dict[str, Any] = {}
    for f in fields_of(cls):
        if f.inline:
            kw[f.attr] = _decode(data, f.hint, None)
        elif f.json in data:
            kw[f.attr] = _decode(data[f.json], f.hint, None)
        elif f.required:
            raise ValueError(f"{cls.__name__}: member {f.json!r} is missing")
    return kw


def _pick(classes: list[type], data: Mapping[str, Any]) -> type:
    """The class of a union whose Literal members match ``data``."""
    for c in classes:
        consts = [(f.json, get_args(f.hint)) for f in fields_of(c) if get_origin(f.hint) is Literal]
        if all(data.get(name) in values for name, values in consts):
            return c
    raise ValueError(f"none of {', '.join(c.__name__ for c in classes)} matches {sorted(data)}")


# ------------------------------------------------------------------------------ JSON Schema

def json_schema(roots: tuple[type, ...], *, schema_id: str, title: str, description: str) -> dict[str, Any]:
    """A JSON Schema (draft 2020-12) that every document of one of ``roots`` satisfies: one of the
    roots, each class a ``$defs`` entry that admits no member it does not declare."""
    defs: dict[str, Any] = {}
    for r in roots:
        _schema(r, defs)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": schema_id, "title": title,
            "description": description, "oneOf": [{"$ref": f"#/$defs/{r.__name__}"} for r in roots],
            "$defs": dict(sorted(defs.items()))}


def _object(cls: type, defs: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    props: dict[str, Any] = {}
    required: list[str] = []
    for f in fields_of(cls):
        if f.inline:
            inner, req = _object(_split(f.hint)[0], defs)
            props.update(inner)
            required += req
            continue
        s = _schema(f.hint, defs)
        if f.enum:
            s = {"enum": list(f.enum)}
        props[f.json] = s
        if f.omit is None:
            required.append(f.json)
    return props, required


def _schema(hint: Any, defs: dict[str, Any]) -> dict[str, Any]:
    hint, qty = _split(hint)
    if qty is not None:
        what = f"a quantity of {qty.resource}" if qty.resource else "a quantity of the resource its key names"
        return {"type": "string", "pattern": QUANTITY_PATTERN, "description": what}
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        name = hint.__name__
        if name not in defs:
            defs[name] = {}  # placeholder: a class may refer to itself
            props, required = _object(hint, defs)
            entry: dict[str, Any] = {"type": "object"}
            if hint.__doc__ and not hint.__doc__.startswith(f"{name}("):
                entry["description"] = " ".join(hint.__doc__.split())
            entry |= {"properties": props, "required": required, "additionalProperties": False}
            defs[name] = entry
        return {"$ref": f"#/$defs/{name}"}
    if isinstance(hint, type) and issubclass(hint, Enum):
        return {"enum": [m.value for m in hint]}
    if _is_union(hint):
        options = [_schema(h, defs) for h in get_args(hint)]
        simple = [o["type"] for o in options if set(o) == {"type"} and isinstance(o["type"], str)]
        if len(simple) == len(options):
            return {"type": simple}
        return {"anyOf": options}
    origin, args = get_origin(hint), get_args(hint)
    if origin is Literal:
        return {"const": args[0]} if len(args) == 1 else {"enum": list(args)}
    if origin in (tuple, list):
        return {"type": "array", "items": _schema(args[0], defs)}
    if origin is dict:
        return {"type": "object", "additionalProperties": _schema(args[1], defs)}
    simple_types = {int: "integer", float: "number", str: "string", bool: "boolean", type(None): "null"}
    if hint in simple_types:
        return {"type": simple_types[hint]}
    if hint is Any:
        return {}
    raise TypeError(f"no JSON Schema for {hint!r}")
