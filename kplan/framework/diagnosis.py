"""What a failed scheduling attempt knows about every node (framework.Diagnosis, FitError).

Statuses are kept as per-node arrays (code, reason id, plugin) because a cycle may reject
thousands of nodes; ``statuses`` materialises the NodeToStatus map only when asked.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from kplan.framework.status import REASONS, Code, Status

#: rejected rows up to which record_outcome collects their plugins in a set rather than counting
_FEW = 256


class Diagnosis:
    """NodeToStatus of one cycle: explicit statuses of rejected nodes, and one status for the rest."""

    def __init__(self, num_all_nodes: int, statuses: dict[int, Status] | None = None,
                 absent: Status | None = None) -> None:
        self.num_all_nodes = num_all_nodes
        self.absent = absent if absent is not None else Status(Code.UNRESOLVABLE)
        self.pre_filter_msg = ""
        self.post_filter_msg = ""
        self.unschedulable_plugins: set[str] = set()
        self.recorded = np.zeros(num_all_nodes, dtype=bool)
        self.codes = np.zeros(num_all_nodes, dtype=np.int8)
        self.reasons = np.zeros(num_all_nodes, dtype=np.int32)
        self.plugins = np.full(num_all_nodes, -1, dtype=np.int16)
        self.plugin_names: list[str] = []
        self._names_source: Sequence[str] | None = None
        for row, st in (statuses or {}).items():
            self.record(row, st)

    def _plugin_index(self, name: str) -> int:
        try:
            return self.plugin_names.index(name)
        except ValueError:
            self.plugin_names.append(name)
            return len(self.plugin_names) - 1

    def record(self, rows: int | np.ndarray, status: Status) -> None:
        """NodeToStatus.Set for one node or many (a later status for a node replaces the earlier)."""
        if isinstance(rows, np.ndarray) and len(rows) == 0:
            return
        self.recorded[rows] = True
        self.codes[rows] = int(status.code)
        self.reasons[rows] = REASONS.id(status.reasons)
        self.plugins[rows] = self._plugin_index(status.plugin) if status.plugin else -1
        if status.plugin:
            self.unschedulable_plugins.add(status.plugin)

    def record_outcome(self, rows: np.ndarray, codes: np.ndarray, reasons: np.ndarray, plugins: np.ndarray,
                       names: Sequence[str]) -> None:
        """Record the rejected rows of one filtering pass (plugins index into ``names``)."""
        bad = codes.nonzero()[0]
        if len(bad) == 0:
            return
        rows, codes, reasons, plugins = rows.take(bad), codes.take(bad), reasons.take(bad), plugins.take(bad)
        if not self.plugin_names:
            # the common case: this pass's plugin indexes are this diagnosis's own
            self.plugin_names = list(names)
            self._names_source = names
        self.recorded[rows] = True
        self.codes[rows] = codes
        self.reasons[rows] = reasons
        if names is self._names_source:
            self.plugins[rows] = plugins
        else:
            mapping = np.array([self._plugin_index(n) for n in names] + [-1], dtype=np.int16)
            self.plugins[rows] = mapping[plugins]
        # which plugins rejected something: a set of a few indexes, a count per index of many
        # (-1, no plugin, shifted to 0)
        if len(plugins) <= _FEW:
            found = sorted(set(plugins.tolist()) - {-1})
        else:
            found = np.bincount(plugins.astype(np.intp) + 1)[1:].nonzero()[0].tolist()
        for p in found:
            self.unschedulable_plugins.add(names[p])

    @property
    def num_recorded(self) -> int:
        return int(np.count_nonzero(self.recorded))

    def get(self, row: int) -> Status:
        if not self.recorded[row]:
            return self.absent
        p = int(self.plugins[row])
        return Status(Code(int(self.codes[row])), REASONS[int(self.reasons[row])],
                      self.plugin_names[p] if p >= 0 else "")

    @property
    def statuses(self) -> dict[int, Status]:
        """The explicit NodeToStatus entries, row → status."""
        return {int(r): self.get(int(r)) for r in np.flatnonzero(self.recorded)}

    def rows_with_code(self, code: Code) -> np.ndarray:
        """NodesForStatusCode: rows whose status (explicit, else absent) has ``code``."""
        if self.absent.code == code:
            return np.flatnonzero(~self.recorded | (self.codes == code))
        return np.flatnonzero(self.recorded & (self.codes == code))

    def histogram(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        ids = self.reasons[self.recorded]
        if len(ids):
            per_id = np.bincount(ids)
            for rid in np.flatnonzero(per_id):
                for r in REASONS[int(rid)]:
                    counts[r] = counts.get(r, 0) + int(per_id[rid])
        missing = self.num_all_nodes - self.num_recorded
        if missing > 0:
            for r in self.absent.reasons:
                counts[r] = counts.get(r, 0) + missing
        return counts

    def fit_error(self) -> str:
        """FitError.Error() (reference 5.6)."""
        msg = f"0/{self.num_all_nodes} nodes are available:"
        if self.pre_filter_msg:
            msg += f" {self.pre_filter_msg}."
        else:
            items = sorted(f"{v} {k}" for k, v in self.histogram().items())
            if items:
                msg += " " + ", ".join(items) + "."
        if self.post_filter_msg:
            msg += " " + self.post_filter_msg
        return msg
