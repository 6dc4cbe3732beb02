"""A Kubernetes object as read, before its one typed parse step: its dict and where it came from."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class RawObject:
    doc: dict[str, Any]
    #: "path: document N", for error messages
    source: str
