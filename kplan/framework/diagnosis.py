"""What a failed scheduling attempt knows about every node (framework.Diagnosis, FitError).

Statuses are kept as per-node arrays (code, reason id, plugin) because a cycle may reject
thousands of nodes; ``statuses`` materialises the NodeToStatus map only when asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from kplan.framework.outcome import FilterOutcome
from kplan.framework.status import REASONS, Code, Status

#: the status of the nodes without one of their own, unless told otherwise (Status is frozen: shared)
_UNRESOLVABLE = Status(Code.UNRESOLVABLE)
#: rejected rows up to which record_outcome collects their plugins in a set rather than counting
_FEW = 256


def fit_error_message(num_all_nodes: int, pre_filter_msg: str, reasons: Sequence[tuple[str, int]],
                      post_filter_msg: str) -> str:
    """FitError.Error() (reference 5.6) from its parts: ``reasons`` are (reason, node count) in
    the order the message lists them (``FitError.reasons``)."""
    msg = f"0/{num_all_nodes} nodes are available:"
    if pre_filter_msg:
        msg += f" {pre_filter_msg}."
    elif reasons:
        msg += " " + ", ".join(f"{count} {reason}" for reason, count in reasons) + "."
    if post_filter_msg:
        msg += " " + post_filter_msg
    return msg


@dataclass(frozen=True)
class FitError:
    """framework.FitError: a pod no node fits, with what its message is made of."""

    num_all_nodes: int
    #: PreFilter's rejection of every node ("" when the nodes were filtered)
    pre_filter_msg: str
    #: how many nodes gave each reason, in the order the message lists them ("COUNT reason"
    #: sorted as strings, as upstream sorts them)
    reasons: tuple[tuple[str, int], ...]
    #: PostFilter's answer (preemption's, DynamicResources'), "" when none
    post_filter_msg: str

    @property
    def message(self) -> str:
        return fit_error_message(self.num_all_nodes, self.pre_filter_msg, self.reasons, self.post_filter_msg)

    @property
    def short(self) -> str:
        """The message without PostFilter's answer: why no node fits."""
        return fit_error_message(self.num_all_nodes, self.pre_filter_msg, self.reasons, "")


class Diagnosis:
    """NodeToStatus of one cycle: explicit statuses of rejected nodes, and one status for the rest."""

    # every cycle makes one: slots make that and the reads cheaper
    __slots__ = ("num_all_nodes", "absent", "pre_filter_msg", "post_filter_msg", "_unschedulable_plugins",
                 "_arrays", "_outcomes", "plugin_names", "_names_source")

    def __init__(self, num_all_nodes: int, statuses: dict[int, Status] | None = None,
                 absent: Status | None = None) -> None:
        self.num_all_nodes = num_all_nodes
        self.absent = absent if absent is not None else _UNRESOLVABLE
        self.pre_filter_msg = ""
        self.post_filter_msg = ""
        self._unschedulable_plugins: set[str] = set()
        # the per-node arrays are made, and the filtering passes written into them, when first
        # read: a cycle that schedules its pod reads only how many nodes were rejected
        self._arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None = None
        #: record_outcome's passes not yet written, in order
        self._outcomes: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, Sequence[str]]] = []
        self.plugin_names: list[str] = []
        self._names_source: Sequence[str] | None = None
        if statuses:
            for row, st in statuses.items():
                self.record(row, st)

    def _written(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(recorded, codes, reasons, plugins) per node, with every pass recorded so far."""
        arrays = self._arrays
        if arrays is None:
            blank = FilterOutcome.all_pass(np.arange(self.num_all_nodes))
            arrays = self._arrays = (np.zeros(self.num_all_nodes, dtype=bool), blank.codes, blank.reasons, blank.plugins)
        if self._outcomes:
            outcomes, self._outcomes = self._outcomes, []
            for outcome in outcomes:
                self._write_outcome(arrays, *outcome)
        return arrays

    @property
    def recorded(self) -> np.ndarray:
        return self._written()[0]

    @property
    def codes(self) -> np.ndarray:
        return self._written()[1]

    @property
    def reasons(self) -> np.ndarray:
        return self._written()[2]

    @property
    def plugins(self) -> np.ndarray:
        return self._written()[3]

    @property
    def unschedulable_plugins(self) -> set[str]:
        """The plugins that rejected some node (UnschedulablePlugins)."""
        if self._outcomes:
            self._written()
        return self._unschedulable_plugins

    @unschedulable_plugins.setter
    def unschedulable_plugins(self, plugins: set[str]) -> None:
        if self._outcomes:
            self._written()
        self._unschedulable_plugins = plugins

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
        recorded, codes, reasons, plugins = self._written()
        recorded[rows] = True
        codes[rows] = int(status.code)
        reasons[rows] = REASONS.id(status.reasons)
        plugins[rows] = self._plugin_index(status.plugin) if status.plugin else -1
        if status.plugin:
            self._unschedulable_plugins.add(status.plugin)

    def record_outcome(self, rows: np.ndarray, codes: np.ndarray, reasons: np.ndarray, plugins: np.ndarray,
                       names: Sequence[str]) -> None:
        """Record the rejected rows of one filtering pass (plugins index into ``names``). The
        arrays are the caller's to give away: they are read when the diagnosis is."""
        self._outcomes.append((rows, codes, reasons, plugins, names))

    def _write_outcome(self, arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray], rows: np.ndarray,
                       codes: np.ndarray, reasons: np.ndarray, plugins: np.ndarray, names: Sequence[str]) -> None:
        bad = codes.nonzero()[0]
        if len(bad) == 0:
            return
        rows, codes, reasons, plugins = rows.take(bad), codes.take(bad), reasons.take(bad), plugins.take(bad)
        if not self.plugin_names:
            # the common case: this pass's plugin indexes are this diagnosis's own
            self.plugin_names = list(names)
            self._names_source = names
        all_recorded, all_codes, all_reasons, all_plugins = arrays
        all_recorded[rows] = True
        all_codes[rows] = codes
        all_reasons[rows] = reasons
        if names is self._names_source:
            all_plugins[rows] = plugins
        else:
            mapping = np.array([self._plugin_index(n) for n in names] + [-1], dtype=np.int16)
            all_plugins[rows] = mapping[plugins]
        # which plugins rejected something: a set of a few indexes, a count per index of many
        # (-1, no plugin, shifted to 0)
        if len(plugins) <= _FEW:
            found = sorted(set(plugins.tolist()) - {-1})
        else:
            found = np.bincount(plugins.astype(np.intp) + 1)[1:].nonzero()[0].tolist()
        for p in found:
            self._unschedulable_plugins.add(names[p])

    @property
    def num_recorded(self) -> int:
        """How many nodes have a status of their own. One filtering pass's rows are distinct, so
        with nothing else recorded they are its rejected rows, counted without writing them."""
        if self._arrays is None and len(self._outcomes) == 1:
            return int(np.count_nonzero(self._outcomes[0][1]))
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

    def fit_error(self) -> FitError:
        """The FitError of this diagnosis (its message: ``fit_error().message``)."""
        listed = sorted((f"{v} {k}", k, v) for k, v in self.histogram().items())
        return FitError(self.num_all_nodes, self.pre_filter_msg, tuple((k, v) for _, k, v in listed),
                        self.post_filter_msg)
