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

from kplan.plugins.dra.cellib import LibraryError, Optional
from kplan.plugins.dra.celnet import check_request_uri


def _max_len(n: int) -> str:
    return f"must be no more than {n} characters"


def _regex_error(msg: str, fmt: str, *examples: str) -> str:
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{msg} (e.g. {shown}regex used for validation is '{fmt}')"


_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
              "start and end with an alphanumeric character")
_SUBDOMAIN_FMT = _LABEL_FMT + "(\\." + _LABEL_FMT + ")*"
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character")
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character")
_QNAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QNAME_MSG = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
_LABEL_VALUE_FMT = "(" + _QNAME_FMT + ")?"
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                    "and must start and end with an alphanumeric character")


def _matches(fmt: str, value: str) -> bool:
    return re.fullmatch(fmt, value, flags=re.ASCII) is not None


def _size(value: str) -> int:
    """Go's len: bytes."""
    return len(value.encode())


def dns1123_label(value: str) -> list[str]:
    errs = [_max_len(63)] if _size(value) > 63 else []
    if not _matches(_LABEL_FMT, value):
        if _matches(_SUBDOMAIN_FMT, value):
            errs.append("must not contain dots")
        else:
            errs.append(_regex_error(_LABEL_MSG, _LABEL_FMT, "my-name", "123-abc"))
    return errs


def dns1123_subdomain(value: str) -> list[str]:
    errs = [_max_len(253)] if _size(value) > 253 else []
    if not _matches(_SUBDOMAIN_FMT, value):
        errs.append(_regex_error(_SUBDOMAIN_MSG, _SUBDOMAIN_FMT, "example.com"))
    return errs


def dns1035_label(value: str) -> list[str]:
    errs = [_max_len(63)] if _size(value) > 63 else []
    if not _matches(_DNS1035_FMT, value):
        errs.append(_regex_error(_DNS1035_MSG, _DNS1035_FMT, "my-name", "abc-123"))
    return errs


def qualified_name(value: str) -> list[str]:
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if prefix == "":
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain(prefix))
    else:
        return ["a qualified name " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if name == "":
        errs.append("name part must be non-empty")
    elif _size(name) > 63:
        errs.append("name part " + _max_len(63))
    if not _matches(_QNAME_FMT, name):
        errs.append("name part " + _regex_error(_QNAME_MSG, _QNAME_FMT, "MyName", "my.name", "123-abc"))
    return errs


def label_value(value: str) -> list[str]:
    errs = [_max_len(63)] if _size(value) > 63 else []
    if not _matches(_LABEL_VALUE_FMT, value):
        errs.append(_regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


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


class Format:
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
