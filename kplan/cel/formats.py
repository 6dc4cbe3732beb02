"""The Kubernetes named-formats CEL library (apiserver/pkg/cel/library/format.go) for DRA selectors:
``format.<name>()`` gives a format, ``format.named(name)`` an optional one, and
``<format>.validate(string)`` ``optional.none()`` for a valid string or an optional list of the
validator's messages, worded as apimachinery's validation and kube-openapi's strfmt word them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from celpy import celtypes

from kplan.cel.net import check_request_uri
from kplan.cel.values import LibraryError, Opaque, Optional
from kplan.model.name_rules import (
    dns1035_label,
    dns1123_label,
    dns1123_subdomain,
    label_value,
    qualified_name,
)


def _prefixed(check: Callable[[str], list[str]]) -> Callable[[str], list[str]]:
    """A name generated from a prefix may end in '-': apimachinery's maskTrailingDash replaces the
    last two bytes by an 'a' before checking."""
    def validate(value: str) -> list[str]:
        if value.endswith("-"):
            raw = value.encode()
            if len(raw) < 2:
                # Go panics here; cel-go turns the panic into an evaluation error
                raise LibraryError("internal error: runtime error: slice bounds out of range [:-1]")
            value = raw[:-2].decode(errors="surrogateescape") + "a"
        return check(value)
    return validate


def _uri(value: str) -> list[str]:
    try:
        check_request_uri(value)
    except LibraryError as e:
        return [str(e)]
    return []


_UUID = re.compile(r"[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}", re.IGNORECASE | re.ASCII)
_BASE64 = re.compile(r"(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})")
_DATE = re.compile(r"([0-9]{4})-([0-9]{2})-([0-9]{2})")
_TIME = re.compile(r"([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))")


def _is_date(value: str) -> bool:
    """Go's time.Parse with the layout 2006-01-02: four-digit year, month 1-12, a day the month has."""
    m = _DATE.fullmatch(value)
    if m is None:
        return False
    year, month, day = (int(g) for g in m.groups())
    if not 1 <= month <= 12:
        return False
    leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
    days = [31, 29 if leap else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
    return 1 <= day <= days


def _is_datetime(value: str) -> bool:
    """kube-openapi strfmt's IsDateTime: a date, a 't' (any case), a time of day no field of which
    exceeds 23:59:59, and 'z' or an offset."""
    if len(value.encode()) < 4:
        return False
    parts = value.lower().split("t")
    if len(parts) < 2 or not _is_date(parts[0]):
        return False
    m = _TIME.fullmatch(parts[1])
    return m is not None and m.group(1) <= "23" and m.group(2) <= "59" and m.group(3) <= "59"


def _check(ok: Callable[[str], bool], message: str) -> Callable[[str], list[str]]:
    return lambda value: [] if ok(value) else [message]


class Format(Opaque):
    """A named format: its validator, giving the messages for an invalid string."""

    __slots__ = ("name", "validator")

    def __init__(self, name: str, validator: Callable[[str], list[str]]) -> None:
        self.name, self.validator = name, validator

    def __repr__(self) -> str:
        return f"format.{self.name}"


FORMATS: dict[str, Format] = {f.name: f for f in (
    Format("dns1123Label", dns1123_label),
    Format("dns1123Subdomain", dns1123_subdomain),
    Format("dns1035Label", dns1035_label),
    Format("qualifiedName", qualified_name),
    Format("dns1123LabelPrefix", _prefixed(dns1123_label)),
    Format("dns1123SubdomainPrefix", _prefixed(dns1123_subdomain)),
    Format("dns1035LabelPrefix", _prefixed(dns1035_label)),
    Format("labelValue", label_value),
    Format("uri", _uri),
    Format("uuid", _check(lambda v: _UUID.fullmatch(v) is not None, "does not match the UUID format")),
    Format("byte", _check(lambda v: _BASE64.fullmatch(v) is not None, "invalid base64")),
    Format("date", _check(_is_date, "invalid date")),
    Format("datetime", _check(_is_datetime, "invalid datetime")),
)}


def validate(fmt: Any, text: Any) -> Optional:
    if not isinstance(fmt, Format) or not isinstance(text, celtypes.StringType):
        raise LibraryError("no such overload")
    found = fmt.validator(str(text))
    if not found:
        return Optional()
    return Optional(celtypes.ListType([celtypes.StringType(m) for m in found]))


def named(name: Any) -> Optional:
    if not isinstance(name, celtypes.StringType):
        raise LibraryError("no such overload")
    fmt = FORMATS.get(str(name))
    return Optional(fmt) if fmt is not None else Optional()


def _constant(fmt: Format) -> Callable[[], Format]:
    return lambda: fmt


FUNCTIONS: dict[str, Any] = {"validate": validate}
QUALIFIED: dict[tuple[str, str], Any] = {
    ("format", "named"): named, **{("format", name): _constant(f) for name, f in FORMATS.items()},
}
