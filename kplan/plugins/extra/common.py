"""Args decoding shared by kplan's own plugins: strict, in the style of the in-tree args kinds.

Unknown fields raise ``ArgsError('unknown field "<path>"')``, which the configuration loader wraps
exactly as it wraps upstream's strict-decoding errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kplan.framework.registry import ArgsError


def check_fields(raw: Mapping[str, Any], known: set[str], prefix: str = "") -> None:
    for k in raw:
        if k not in known:
            raise ArgsError(f'unknown field "{prefix}{k}"')


def as_mapping(v: Any, path: str) -> Mapping[str, Any]:
    if v is None:
        return {}
    if not isinstance(v, Mapping):
        raise ArgsError(f"{path}: expected an object, got {type(v).__name__}")
    return v


def as_int(v: Any, path: str) -> int:
    """A whole number (YAML may give ``2.0``); booleans and fractions are rejected."""
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise ArgsError(f"{path}: expected an integer, got {v!r}")
    return int(v)


def as_str(v: Any, path: str) -> str:
    if not isinstance(v, str):
        raise ArgsError(f"{path}: expected a string, got {v!r}")
    return v
