"""LabelPreference: an example third-party kplan plugin (Filter + Score on one node label).

Args (``LabelPreferenceArgs``)::

    key:    the node label to look at (required)
    avoid:  values of that label a pod must not land on (Filter: UnschedulableAndUnresolvable)
    prefer: values that score 100 (every other node scores 0)

Enable it like any plugin once the package is installed::

    profiles:
    - plugins:
        multiPoint: {enabled: [{name: LabelPreference, weight: 3}]}
      pluginConfig:
      - name: LabelPreference
        args: {key: node.kubernetes.io/lifecycle, avoid: [spot], prefer: [on-demand]}

kplan builds it as ``LabelPreference(args, handle)``; its extension points are the methods it has
(here ``filter`` and ``score``). ``decode_args`` / ``validate_args`` are optional: without them the
plugin would receive its raw ``args`` mapping.

The class names its roles by subclassing kplan's extension-point protocols
(kplan.framework.interfaces): ``mypy --strict`` then checks each method against the signature
the framework calls it with, e.g. ``Argument 4 of "score" is incompatible with supertype
"ScorePlugin"; supertype defines the argument type as "NodeTable"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from kplan.cluster.node_table import NodeTable
from kplan.framework.cycle_state import CycleState
from kplan.framework.events import NODE_ADD, NODE_UPDATE_LABEL
from kplan.framework.interfaces import (
    EnqueueExtensions,
    FilterPlugin,
    Handle,
    QueueingHint,
    ScoreExplainer,
    ScorePlugin,
)
from kplan.framework.registry import ArgsError
from kplan.framework.status import Code, Verdicts, reason_id
from kplan.model.objects import Pod

__all__ = ["LabelPreference", "LabelPreferenceArgs"]


@dataclass(frozen=True)
class LabelPreferenceArgs:
    key: str = ""
    avoid: tuple[str, ...] = ()
    prefer: tuple[str, ...] = ()


def _strings(v: Any, path: str) -> tuple[str, ...]:
    if v is None:
        return ()
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ArgsError(f"{path}: expected a list of strings, got {v!r}")
    return tuple(v)


class LabelPreference(FilterPlugin, ScorePlugin, EnqueueExtensions, ScoreExplainer):
    name = "LabelPreference"
    args_kind = "LabelPreferenceArgs"

    def __init__(self, args: LabelPreferenceArgs, handle: Handle) -> None:
        self.args = args
        self.handle = handle
        # interned once: the reason kplan prints in the FitError for a rejected node
        self._reason = reason_id(f"node(s) had an avoided {args.key} label")

    @staticmethod
    def decode_args(raw: Mapping[str, Any] | None) -> LabelPreferenceArgs:
        raw = raw or {}
        for k in raw:
            if k not in ("key", "avoid", "prefer"):
                raise ArgsError(f'unknown field "{k}"')
        key = raw.get("key", "")
        if not isinstance(key, str):
            raise ArgsError(f"key: expected a string, got {key!r}")
        return LabelPreferenceArgs(key, _strings(raw.get("avoid"), "avoid"), _strings(raw.get("prefer"), "prefer"))

    @staticmethod
    def validate_args(args: LabelPreferenceArgs) -> list[str]:
        errs = []
        if not args.key:
            errs.append("key: Required value")
        for v in set(args.avoid) & set(args.prefer):
            errs.append(f'prefer: Invalid value: "{v}": also in avoid')
        return errs

    def filter(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> Verdicts:
        avoided = table.labels(self.args.key).isin(self.args.avoid)[rows]
        return Verdicts.where(avoided, Code.UNRESOLVABLE, self._reason)

    def score(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> np.ndarray:
        preferred = table.labels(self.args.key).isin(self.args.prefer)[rows]
        return np.where(preferred, 100, 0).astype(np.int64)

    def events_to_register(self) -> list[tuple[str, QueueingHint | None]]:
        """A pod this plugin rejected can only fit after a node appears or its labels change.

        Each entry is (event kind, hint): the hint ``hint(pod, event) -> bool`` may say the event
        cannot help; None means "always retry". Without this method kplan retries the pod after
        any cluster event, as kube-scheduler does for plugins without EnqueueExtensions.
        """
        return [(NODE_ADD, None), (NODE_UPDATE_LABEL, None)]

    def explain(self, state: CycleState, pod: Pod, table: NodeTable, rows: np.ndarray) -> list[str]:
        col = table.labels(self.args.key)
        out = []
        for row, s in zip(rows, self.score(state, pod, table, rows), strict=True):
            code = int(col.codes[row])
            value = col.values[code] if code >= 0 else None
            what = f"{self.args.key}={value}" if value is not None else f"no {self.args.key} label"
            out.append(f"{s}: {what}" + (" (preferred)" if s else ""))
        return out
