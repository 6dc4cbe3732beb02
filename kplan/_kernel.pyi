"""Types of kplan._kernel, the compiled scheduling cycle (kernel/src/lib.rs; kplan/scheduler/compiled.py
calls it)."""

from collections.abc import Sequence

import numpy as np

from kplan.framework.compiled import BalancedScore, FitScore

#: score(): the scores were computed and a host chosen
OK: int
#: score(): a case left to the Python path
NOT_COVERED: int

class _FixedScore:
    raw: np.ndarray
    normalization: int
    weight: int

class _ReadyScore:
    scores: np.ndarray
    weight: int

def find_feasible(n: int, fixed: np.ndarray | None, pod_count: np.ndarray, allowed_pods: np.ndarray,
                  alloc_t: np.ndarray, requested_t: np.ndarray, cols: Sequence[int], wanted: Sequence[int],
                  check_fit: bool, start: int, k: int, out: np.ndarray) -> tuple[int, int]: ...

def score(n: int, feasible: np.ndarray, m: int, alloc_t: np.ndarray, requested_t: np.ndarray,
          nonzero_t: np.ndarray, fit: FitScore | None, balanced: BalancedScore | None,
          fixed: Sequence[_FixedScore], ready: Sequence[_ReadyScore], totals: np.ndarray, name_rank: np.ndarray | None) -> tuple[int, int, int]: ...
