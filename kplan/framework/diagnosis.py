"""What a failed scheduling attempt knows about every node (framework.Diagnosis, FitError)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from kplan.framework.status import REASONS, Code, Status


@dataclass
class Diagnosis:
    """NodeToStatus of one cycle: explicit statuses of rejected nodes, and one status for the rest."""

    num_all_nodes: int
    #: table row → status, for every node a filter rejected (insertion order = order examined)
    statuses: dict[int, Status] = field(default_factory=dict)
    absent: Status = field(default_factory=lambda: Status(Code.UNRESOLVABLE))
    pre_filter_msg: str = ""
    post_filter_msg: str = ""
    unschedulable_plugins: set[str] = field(default_factory=set)

    def get(self, row: int) -> Status:
        return self.statuses.get(row, self.absent)

    def record(self, row: int, status: Status) -> None:
        self.statuses[row] = status
        if status.plugin:
            self.unschedulable_plugins.add(status.plugin)

    def record_outcome(self, rows: np.ndarray, codes: np.ndarray, reasons: np.ndarray, plugins: np.ndarray,
                       names: list[str]) -> None:
        for k in np.flatnonzero(codes != 0):
            p = int(plugins[k])
            self.record(int(rows[k]), Status(Code(int(codes[k])), REASONS[int(reasons[k])], names[p] if p >= 0 else ""))

    def histogram(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for s in self.statuses.values():
            for r in s.reasons:
                counts[r] = counts.get(r, 0) + 1
        missing = self.num_all_nodes - len(self.statuses)
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
