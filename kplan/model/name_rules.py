"""apimachinery's name and label rules (k8s.io/apimachinery/pkg/util/validation, v1.34): the
messages IsDNS1123Label, IsDNS1123Subdomain, IsDNS1035Label, IsQualifiedName and IsValidLabelValue
give for a string, empty when it is valid. Lengths are Go's: bytes. The API server's validation
(kplan.validation), label selectors written as text (selector_syntax) and the named formats of
DRA's CEL (kplan/cel/formats.py) all use these."""

from __future__ import annotations

import re

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + r"(\." + DNS1123_LABEL_FMT + ")*"
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
LABEL_VALUE_FMT = f"({QUALIFIED_NAME_FMT})?"

_LABEL_RE = re.compile(DNS1123_LABEL_FMT, re.ASCII)
_SUBDOMAIN_RE = re.compile(DNS1123_SUBDOMAIN_FMT, re.ASCII)
_DNS1035_RE = re.compile(DNS1035_LABEL_FMT, re.ASCII)
_QUALIFIED_NAME_RE = re.compile(QUALIFIED_NAME_FMT, re.ASCII)
_LABEL_VALUE_RE = re.compile(LABEL_VALUE_FMT, re.ASCII)

_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must "
              "start and end with an alphanumeric character")
_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                  "and must start and end with an alphanumeric character")
_DNS1035_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                "alphabetic character, and end with an alphanumeric character")
_QUALIFIED_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                       "alphanumeric character")
_LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                    "and must start and end with an alphanumeric character")


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError, its double spaces between examples included."""
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    return msg + " (e.g. " + " or ".join(f"'{e}', " for e in examples) + f"regex used for validation is '{fmt}')"


def max_len_error(n: int) -> str:
    return f"must be no more than {n} characters"


def _size(value: str) -> int:
    """Go's len: bytes."""
    return len(value.encode())


def dns1123_label(value: str) -> list[str]:
    errs = [max_len_error(63)] if _size(value) > 63 else []
    if not _LABEL_RE.fullmatch(value):
        if _SUBDOMAIN_RE.fullmatch(value):
            # a valid subdomain but no label: the length is checked above, so it is the dots
            errs.append("must not contain dots")
        else:
            errs.append(regex_error(_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errs


def dns1123_subdomain(value: str) -> list[str]:
    errs = [max_len_error(253)] if _size(value) > 253 else []
    if not _SUBDOMAIN_RE.fullmatch(value):
        errs.append(regex_error(_SUBDOMAIN_MSG, DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def dns1035_label(value: str) -> list[str]:
    errs = [max_len_error(63)] if _size(value) > 63 else []
    if not _DNS1035_RE.fullmatch(value):
        errs.append(regex_error(_DNS1035_MSG, DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errs


def qualified_name(value: str) -> list[str]:
    """IsQualifiedName: ``[dns-subdomain/]name`` with a name of at most 63 bytes (label keys,
    annotation keys, topology keys, resource names)."""
    errs: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in dns1123_subdomain(prefix))
    else:
        return ["a qualified name " + regex_error(_QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name",
                                                  "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errs.append("name part must be non-empty")
    elif _size(name) > 63:
        errs.append("name part " + max_len_error(63))
    if not _QUALIFIED_NAME_RE.fullmatch(name):
        errs.append("name part " + regex_error(_QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name",
                                               "123-abc"))
    return errs


def label_value(value: str) -> list[str]:
    """IsValidLabelValue."""
    errs = [max_len_error(63)] if _size(value) > 63 else []
    if not _LABEL_VALUE_RE.fullmatch(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs
