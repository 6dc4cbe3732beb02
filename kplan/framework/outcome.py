"""A filtering pass's verdicts per node, and the two rules that combine verdicts into them
(pkg/scheduler/framework/runtime/framework.go, v1.34.1):

* RunFilterPlugins stops at the first plugin that rejects a node: among several filters, the
  first rejection in filter order is the node's verdict (``FilterOutcome.add``; ``reject``
  where the filters come in filter order; ``first_rejections``);
* RunFilterPluginsWithNominatedPods filters a node with its nominated pods added first, and
  without them only if that passed: a rejection of the pass with them overrules the pass
  without them (``FilterOutcome.overrule``).

Everything that builds or merges filter verdicts goes through these, so each rule is written
once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from kplan.framework.status import REASONS, Code, Status, Verdicts


@dataclass
class FilterOutcome:
    """Verdicts of the filters for ``rows`` (table rows, in the order examined)."""

    rows: np.ndarray
    codes: np.ndarray      # int8 Code per row; 0 = feasible
    reasons: np.ndarray    # int32 reason ids
    plugins: np.ndarray    # int16 index into Framework.filter_plugins; -1 = feasible

    @classmethod
    def all_pass(cls, rows: np.ndarray) -> FilterOutcome:
        """Every row passing: the verdicts before any filter has rejected a node."""
        n = len(rows)
        return cls(rows, np.zeros(n, dtype=np.int8), np.zeros(n, dtype=np.int32), np.full(n, -1, dtype=np.int16))

    @classmethod
    def empty(cls) -> FilterOutcome:
        return cls.all_pass(np.zeros(0, dtype=np.int64))

    @classmethod
    def first_rejections(cls, rows: np.ndarray, verdicts: Iterable[tuple[int, Verdicts]]) -> FilterOutcome:
        """The verdicts of several filters, each given for every row with its index in filter
        order (in any order here): per row, the first rejection in filter order."""
        out = cls.all_pass(rows)
        pending = np.arange(len(rows))
        for plugin, v in sorted(verdicts, key=lambda kv: kv[0]):
            if not v.any_rejected or not len(pending):
                continue
            if len(pending) < len(rows):
                v = Verdicts(v.codes.take(pending), v.reasons.take(pending))
            pending = out.reject(pending, v, plugin)
        return out

    def add(self, at: np.ndarray, v: Verdicts, plugin: int) -> None:
        """Filter ``plugin``'s verdicts ``v`` on the positions ``at``, in any order of filters:
        where it rejects and no earlier filter in filter order did, its rejection is the
        position's verdict (the first rejection in filter order wins)."""
        if not v.any_rejected:
            return
        current = self.plugins.take(at)
        wins = (v.codes != 0) & ((current < 0) | (current > plugin))
        where = at[wins]
        self.codes[where] = v.codes[wins]
        self.reasons[where] = v.reasons[wins]
        self.plugins[where] = plugin

    def reject(self, pending: np.ndarray, v: Verdicts, plugin: int) -> np.ndarray:
        """``add`` for filters taken in filter order: ``v`` is filter ``plugin``'s verdicts on
        the positions ``pending``, which every earlier filter passed and no later one has
        judged, so each of its rejections is the position's verdict. Returns the positions it
        passed, for the filters after it (RunFilterPlugins stops at a node's first rejection)."""
        if not v.any_rejected:
            return pending
        bad = v.codes != 0
        at = pending[bad]
        if not len(at):
            return pending
        self.codes[at] = v.codes[bad]
        self.reasons[at] = v.reasons[bad]
        self.plugins[at] = plugin
        passed: np.ndarray = pending[~bad]
        return passed

    def overrule(self, at: np.ndarray, first: FilterOutcome) -> None:
        """RunFilterPluginsWithNominatedPods' two passes merged: ``first`` is the pass with the
        nominated pods added on the positions ``at``, this the pass without them; where ``first``
        rejects, its verdict is the node's."""
        bad = first.codes != 0
        where = at[bad]
        self.codes[where] = first.codes[bad]
        self.reasons[where] = first.reasons[bad]
        self.plugins[where] = first.plugins[bad]

    def status(self, k: int, names: Sequence[str]) -> Status:
        p = int(self.plugins[k])
        return Status(Code(int(self.codes[k])), REASONS[int(self.reasons[k])], names[p] if p >= 0 else "")

    def take(self, which: np.ndarray) -> FilterOutcome:
        """The verdicts at ``which`` (positions or a mask)."""
        return FilterOutcome(self.rows[which], self.codes[which], self.reasons[which], self.plugins[which])

    @classmethod
    def join(cls, parts: Sequence[FilterOutcome]) -> FilterOutcome:
        """The verdicts of ``parts`` one after the other."""
        return cls(np.concatenate([p.rows for p in parts]), np.concatenate([p.codes for p in parts]),
                   np.concatenate([p.reasons for p in parts]), np.concatenate([p.plugins for p in parts]))
