"""Field errors worded as k8s.io/apimachinery/pkg/util/validation/field (errors.go) words them,
and the name, label and number rules of apimachinery pkg/util/validation (validation.go) and
pkg/api/validation (objectmeta.go), v1.34.

``Invalid value: "x": detail`` quotes strings and prints numbers bare, as ``field.Error``
does; a whole object or map as a value is printed as JSON.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kplan.model.name_rules import label_value, qualified_name

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


@dataclass(frozen=True, slots=True)
class FieldError:
    path: str
    detail: str

    def __str__(self) -> str:
        return f"{self.path}: {self.detail}"


class Printed(str):
    """A value already printed as Go prints it (a map[string]string, say): shown as is."""


def shown(value: Any) -> str:
    """A value as ``field.Error`` prints it: %q for strings, %v for numbers and booleans."""
    if isinstance(value, Printed):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return str(value)
    if value is None:
        return "null"
    try:
        return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return type(value).__name__


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, f"Invalid value: {shown(value)}" + (f": {detail}" if detail else ""))


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, "Required value" + (f": {detail}" if detail else ""))


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, f"Forbidden: {detail}")


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(path, f"Duplicate value: {shown(value)}")


def not_supported(path: str, value: Any, supported: Iterable[str]) -> FieldError:
    return FieldError(path, f"Unsupported value: {shown(value)}: supported values: "
                      + ", ".join(f'"{s}"' for s in supported))


def wrong_type(path: str, value: Any, expected: str) -> FieldError:
    """What the API server's decoder refuses before validation (``cannot unmarshal string into
    ... of type int32``), as a field error."""
    return invalid(path, value, f"must be {expected}")


# ------------------------------------------------------------------------------ names and labels

def check(path: str, value: str, rule: Any) -> list[FieldError]:
    """The rule's complaints about ``value`` as one field error (joined as the API server joins them)."""
    msgs = rule(value)
    return [invalid(path, value, "; ".join(msgs))] if msgs else []


def validate_labels(v: Any, path: str) -> list[FieldError]:
    """ValidateLabels: keys are qualified names, values label values."""
    if v is None:
        return []
    if not isinstance(v, Mapping):
        return [wrong_type(path, v, "an object of strings")]
    errs: list[FieldError] = []
    for k, val in v.items():
        errs += check(path, str(k), qualified_name)
        if not isinstance(val, str):
            errs.append(wrong_type(f"{path}[{k}]", val, "a string"))
        else:
            errs += check(f"{path}[{k}]", val, label_value)
    return errs


def validate_annotations(v: Any, path: str) -> list[FieldError]:
    """ValidateAnnotations: keys are qualified names (lower-cased), values strings, 256 KiB in all."""
    if v is None:
        return []
    if not isinstance(v, Mapping):
        return [wrong_type(path, v, "an object of strings")]
    errs: list[FieldError] = []
    total = 0
    for k, val in v.items():
        errs += check(path, str(k).lower(), qualified_name)
        if not isinstance(val, str):
            errs.append(wrong_type(f"{path}[{k}]", val, "a string"))
        else:
            total += len(str(k)) + len(val)
    if total > 256 * 1024:
        errs.append(FieldError(path, f"Too long: may not be more than {256 * 1024} bytes"))
    return errs


# ------------------------------------------------------------------------------ numbers

def integer(v: Any, path: str, *, bits: int = 32) -> tuple[int | None, list[FieldError]]:
    """A JSON integer field (int32 or int64), as the API server's decoder reads it: a string, a
    fraction or a number beyond the type is refused (``cannot unmarshal ... of type int32``)."""
    if v is None:
        return None, []
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        return None, [wrong_type(path, v, f"an integer (int{bits})")]
    n = int(v)
    top = INT32_MAX if bits == 32 else INT64_MAX
    if not -top - 1 <= n <= top:
        return None, [invalid(path, v, f"must be an int{bits} (between {-top - 1} and {top})")]
    return n, []


def nonnegative(v: Any, path: str, *, bits: int = 32) -> list[FieldError]:
    n, errs = integer(v, path, bits=bits)
    if n is not None and n < 0:
        errs.append(invalid(path, n, "must be greater than or equal to 0"))
    return errs


def string(v: Any, path: str) -> tuple[str | None, list[FieldError]]:
    if v is None:
        return None, []
    if not isinstance(v, str):
        return None, [wrong_type(path, v, "a string")]
    return v, []
