"""``-o jsonpath=TEMPLATE``: kubectl's JSONPath templates over a result document's JSON.

The syntax and the output are kubectl's (``kubectl get -o jsonpath=…``, k8s.io/client-go
util/jsonpath, with kubectl's ``--allow-missing-template-keys`` default: a missing key prints
nothing). Written here from its documentation and behaviour; kplan needs no dependency for it.

- Text outside braces is printed as it is; ``{…}`` is an action: a path from the current value
  (the document, or the item of the enclosing ``range``). ``$`` and ``@`` name the current value.
- Path steps: ``.field`` (``\\.`` for a dot inside a key), ``['key']`` (its dots are steps, as
  kubectl reads it), ``.*`` every value of an object or list, ``..field`` recursive descent,
  ``[n]`` (negative from the end), ``[start:end:step]``, ``[*]``, unions ``[0,2]``, and filters
  ``[?(@.status=="Unschedulable")]`` with ``==``, ``!=``, ``<``, ``>``, ``<=``, ``>=`` or an
  existence test ``[?(@.node)]``.
- ``"text"`` (Go escapes: ``"\\n"``, ``"\\t"``, …), numbers and ``true``/``false`` are literals.
- ``{range PATH}…{end}`` repeats the template between them for every value of PATH.
- Output: the values of one action separated by a space; strings as they are, objects and lists
  as compact JSON (keys sorted, as Go writes maps), ``null`` for null; nothing is added at the
  end (put ``{"\\n"}`` in the template, as with kubectl).

Deviations, all on inputs kubectl rejects: numbers of either kind compare with each other, and
``==``/``!=`` between values of different types are false/true rather than an error; ``null``
where a list is filtered filters nothing.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeAlias

from kplan.errors import InputError


class JSONPathError(InputError):
    """A template that cannot be parsed, or that fails on the document (an index out of bounds)."""


# ------------------------------------------------------------------------------ the parsed template

@dataclass(frozen=True)
class Field:
    name: str


@dataclass(frozen=True)
class Wildcard:
    pass


@dataclass(frozen=True)
class Recursive:
    pass


@dataclass(frozen=True)
class Slice:
    """``[n]`` (``single``) or ``[start:end:step]``; None where the text leaves one out."""

    start: int | None
    end: int | None
    step: int | None
    single: bool = False


@dataclass(frozen=True)
class Union:
    paths: tuple[Path, ...]


@dataclass(frozen=True)
class Filter:
    left: Path
    op: str  # "exists" or a comparison
    right: Path


@dataclass(frozen=True)
class Literal:
    value: str | int | float | bool
    #: text replaces the values by itself once; numbers and booleans stand for each value
    text: bool


Step: TypeAlias = "Field | Wildcard | Recursive | Slice | Union | Filter | Literal"
Path: TypeAlias = "tuple[Step, ...]"


@dataclass(frozen=True)
class Action:
    path: Path


@dataclass(frozen=True)
class Range:
    path: Path
    body: tuple[Piece, ...]


Piece: TypeAlias = "str | Action | Range"


@dataclass(frozen=True)
class Template:
    pieces: tuple[Piece, ...]


# ------------------------------------------------------------------------------ parsing

_TERMINATORS = frozenset(" \t\r\n.,[]$@{}")
_SLICE = re.compile(r"^(-?\d*)(:-?\d*)?(:-?\d*)?$")
_KEY = re.compile(r"^'([^']*)'$")
_COMPARISON = re.compile(r"^([^!<>=]+)([!<>=~]+)(.+?)$", re.DOTALL)
_OPERATORS = frozenset({"==", "!=", "<", ">", "<=", ">="})
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", "\\": "\\",
            "'": "'", '"': '"'}


def parse(text: str) -> Template:
    """The template, or a JSONPathError saying what is wrong with it."""
    pieces: list[Piece] = []
    stack: list[tuple[list[Piece], Path]] = []  # the pieces around each open range, and its path
    pos = 0
    while pos < len(text):
        brace = text.find("{", pos)
        if brace < 0:
            pieces.append(text[pos:])
            break
        if brace > pos:
            pieces.append(text[pos:brace])
        close = _action_end(text, brace + 1)
        words = text[brace + 1:close].strip()
        first = re.match(r"[A-Za-z_]\w*", words)
        keyword = first.group(0) if first and first.group(0) in ("range", "end") else None
        if keyword == "range":
            stack.append((pieces, _path(words[len("range"):])))
            pieces = []
        elif keyword == "end":
            if words != "end":
                raise JSONPathError(f"unexpected text after 'end': {words[3:].strip()!r}")
            if not stack:
                raise JSONPathError("{end} without a {range} to end")
            outer, path = stack.pop()
            outer.append(Range(path, tuple(pieces)))
            pieces = outer
        else:
            pieces.append(Action(_path(words)))
        pos = close + 1
    while stack:  # kubectl runs a range without {end} to the end of the template
        outer, path = stack.pop()
        outer.append(Range(path, tuple(pieces)))
        pieces = outer
    return Template(tuple(pieces))


def _unquoted(text: str, pos: int, close: str, stops: str = "") -> int:
    """The index of the first ``close`` at or after ``pos`` outside quotes (a backslash escapes the
    next character inside them); the index of a ``stops`` character, or len(text), when none comes first."""
    quote = ""
    i = pos
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == close or c in stops:
            return i
        i += 1
    return i


def _action_end(text: str, pos: int) -> int:
    """The index of the ``}`` that closes the action starting at ``pos`` (braces inside quotes
    do not count)."""
    i = _unquoted(text, pos, "}", stops="\r\n")
    if i < len(text) and text[i] == "}":
        return i
    raise JSONPathError(f"unclosed action: {{{text[pos:i]}")


def _path(text: str) -> Path:
    steps: list[Step] = []
    pos = 0
    n = len(text)
    while pos < n:
        c = text[pos]
        if c in " \t$@":
            pos += 1
        elif text.startswith("..", pos):
            if steps and isinstance(steps[-1], Recursive):
                raise JSONPathError("invalid multiple recursive descent")
            steps.append(Recursive())
            pos += 2
            if pos < n and (text[pos].isalnum() or text[pos] == "_"):
                pos = _field(text, pos, steps)
        elif c == ".":
            pos = _field(text, pos + 1, steps)
        elif text.startswith("[?(", pos):
            pos = _filter(text, pos + 3, steps)
        elif c == "[":
            end = text.find("]", pos)
            if end < 0:
                raise JSONPathError(f"unterminated array: {text[pos:]}")
            steps.extend(_bracket(text[pos + 1:end]))
            pos = end + 1
        elif c in "\"'":
            pos = _quoted(text, pos, steps)
        elif c in "+-" or c.isdigit():
            m = re.compile(r"[+-]?[\d.]*").match(text, pos)
            assert m is not None
            steps.append(Literal(_number(m.group(0)), text=False))
            pos = m.end()
        elif c.isalnum() or c == "_":
            m = re.compile(r"[^ \t\r\n.,\[\]$@{}]*").match(text, pos)
            assert m is not None
            word = m.group(0)
            if word not in ("true", "false"):
                raise JSONPathError(f"unrecognized identifier {word!r} (a field is written .{word})")
            steps.append(Literal(word == "true", text=False))
            pos = m.end()
        else:
            raise JSONPathError(f"unrecognized character in action: {c!r}")
    return tuple(steps)


def _field(text: str, pos: int, steps: list[Step]) -> int:
    name: list[str] = []
    while pos < len(text) and text[pos] not in _TERMINATORS:
        if text[pos] == "\\" and pos + 1 < len(text):
            pos += 1
        name.append(text[pos])
        pos += 1
    word = "".join(name)
    steps.append(Wildcard() if word == "*" else Field(word))
    return pos


def _number(word: str) -> int | float:
    try:
        return int(word)
    except ValueError:
        pass
    try:
        return float(word)
    except ValueError:
        raise JSONPathError(f"cannot parse number {word}") from None


def _bracket(inner: str) -> list[Step]:
    text = ":" if inner == "*" else inner
    parts = text.split(",")
    if len(parts) > 1:
        return [Union(tuple(tuple(_bracket(p.strip())) for p in parts))]
    key = _KEY.match(text)
    if key is not None:
        return list(_path("." + key.group(1)))
    m = _SLICE.match(text)
    if m is None or text == "":
        raise JSONPathError(f"invalid array index {inner!r}")
    start = int(m.group(1)) if m.group(1) not in ("", "-") else None
    if m.group(1) == "-":
        raise JSONPathError(f"invalid array index {inner!r}")
    if m.group(2) is None:
        return [Slice(start, None, None, single=True)]

    def bound(group: str | None) -> int | None:
        if group is None or group[1:] == "":
            return None
        if group[1:] == "-":
            raise JSONPathError(f"invalid array index {inner!r}")
        return int(group[1:])

    return [Slice(start, bound(m.group(2)), bound(m.group(3)))]


def _filter(text: str, pos: int, steps: list[Step]) -> int:
    i = _unquoted(text, pos, ")")
    if i >= len(text):
        raise JSONPathError(f"unterminated filter: [?({text[pos:]}")
    if text[i + 1:i + 2] != "]":
        raise JSONPathError(f"unclosed filter, expected ] after [?({text[pos:i + 1]}")
    inner = text[pos:i]
    m = _COMPARISON.match(inner)
    if m is None:
        steps.append(Filter(_path(inner), "exists", ()))
    else:
        op = m.group(2)
        if op not in _OPERATORS:
            raise JSONPathError(f"unrecognized filter operator {op}")
        steps.append(Filter(_path(m.group(1)), op, _path(m.group(3))))
    return i + 2


def _quoted(text: str, pos: int, steps: list[Step]) -> int:
    quote = text[pos]
    out: list[str] = []
    i = pos + 1
    while i < len(text):
        c = text[i]
        if c == quote:
            steps.append(Literal("".join(out), text=True))
            return i + 1
        if c in "\r\n":
            break
        if c != "\\":
            out.append(c)
            i += 1
            continue
        esc = text[i + 1:i + 2]
        if esc in _ESCAPES:
            out.append(_ESCAPES[esc])
            i += 2
        elif esc in ("x", "u", "U"):
            width = {"x": 2, "u": 4, "U": 8}[esc]
            digits = text[i + 2:i + 2 + width]
            if len(digits) != width or not all(d in "0123456789abcdefABCDEF" for d in digits):
                raise JSONPathError(f"invalid escape \\{esc}{digits} in {text[pos:]}")
            out.append(chr(int(digits, 16)))
            i += 2 + width
        else:
            raise JSONPathError(f"invalid escape \\{esc} in {text[pos:]}")
    raise JSONPathError(f"unterminated quoted string: {text[pos:]}")


# ------------------------------------------------------------------------------ evaluation

def _walk(values: list[Any], path: Path) -> list[Any]:
    for step in path:
        values = _step(values, step)
    return values


def _step(values: list[Any], step: Step) -> list[Any]:
    out: list[Any] = []
    if isinstance(step, Literal):
        return [step.value] if step.text else [step.value for _ in values]
    if isinstance(step, Union):
        for path in step.paths:
            out += _walk(values, path)
        return out
    for v in values:
        if v is None:
            continue
        if isinstance(step, Field):
            if step.name == "":
                out.append(v)
            elif isinstance(v, dict) and step.name in v:
                out.append(v[step.name])
        elif isinstance(step, Wildcard):
            out += _children(v)
        elif isinstance(step, Recursive):
            out += _descend(v)
        elif isinstance(step, Slice):
            out += _slice(v, step)
        else:
            out += _filtered(v, step)
    return out


def _children(v: Any) -> list[Any]:
    return list(v.values()) if isinstance(v, dict) else list(v) if isinstance(v, list) else []


def _descend(v: Any) -> list[Any]:
    """The value and every object or list below it that has something in it."""
    kids = _children(v)
    if not kids:
        return []
    out = [v]
    for k in kids:
        out += _descend(k)
    return out


def _type(v: Any) -> str:
    return ("object" if isinstance(v, dict) else "array" if isinstance(v, list) else "string" if isinstance(v, str)
            else "boolean" if isinstance(v, bool) else "number" if isinstance(v, (int, float)) else "null")


def _slice(v: Any, s: Slice) -> list[Any]:
    if not isinstance(v, list):
        raise JSONPathError(f"{_type(v)} is not an array: {_text(v)[:60]}")
    n = len(v)
    start = s.start or 0
    end = (start + 1 if s.single else n) if s.end is None else s.end
    start += n if start < 0 else 0
    if end < 0 or (s.single and end == 0):
        end += n
    if start == end:
        return []
    if not 0 <= start < n:
        raise JSONPathError(f"array index out of bounds: index {start}, length {n}")
    if not 0 <= end <= n:
        raise JSONPathError(f"array index out of bounds: index {end - 1}, length {n}")
    if start > end:
        raise JSONPathError(f"starting index {start} is greater than ending index {end}")
    if s.step is not None and s.step <= 0:
        raise JSONPathError("step must be > 0")
    return v[start:end:s.step or 1]


def _filtered(v: Any, f: Filter) -> list[Any]:
    if not isinstance(v, list):
        raise JSONPathError(f"{_type(v)} is not an array and cannot be filtered: {_text(v)[:60]}")
    out = []
    for item in v:
        lefts = _walk([item], f.left)
        if f.op == "exists":
            if lefts:
                out.append(item)
            continue
        rights = _walk([item], f.right)
        if not lefts or not rights:
            continue
        if len(lefts) > 1 or len(rights) > 1:
            raise JSONPathError("a filter compares one value at a time")
        if _compare(lefts[0], f.op, rights[0]):
            out.append(item)
    return out


def _number_like(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _compare(a: Any, op: str, b: Any) -> bool:
    if op in ("==", "!="):
        same = a == b and (_number_like(a) and _number_like(b) or type(a) is type(b))
        return same if op == "==" else not same
    if not (_number_like(a) and _number_like(b) or isinstance(a, str) and isinstance(b, str)):
        raise JSONPathError(f"incompatible types for comparison: {_type(a)} {op} {_type(b)}")
    return bool({"<": a < b, ">": a > b, "<=": a <= b, ">=": a >= b}[op])


# ------------------------------------------------------------------------------ printing

def _text(v: Any) -> str:
    """One value as kubectl prints it."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, float):
        return str(int(v)) if v.is_integer() and abs(v) < 1e21 else repr(v)
    if isinstance(v, int):
        return str(v)
    return json.dumps(v, separators=(",", ":"), sort_keys=True, ensure_ascii=False)


def _render(pieces: Sequence[Piece], current: Any, out: list[str]) -> None:
    for p in pieces:
        if isinstance(p, str):
            out.append(p)
        elif isinstance(p, Action):
            out.append(" ".join(_text(v) for v in _walk([current], p.path)))
        else:
            for item in _walk([current], p.path):
                _render(p.body, item, out)


def execute(template: Template, document: Any) -> str:
    """The text the template makes of the document (its JSON form: dicts, lists, scalars)."""
    out: list[str] = []
    _render(template.pieces, document, out)
    return "".join(out)
