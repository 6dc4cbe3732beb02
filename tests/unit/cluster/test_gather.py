"""resources.gather: the (columns × rows) block the resource plugins read, by slice or by index."""

from __future__ import annotations

import numpy as np
import pytest

from kplan.cluster.resources import gather

MATRIX = np.arange(5 * 7, dtype=np.int64).reshape(5, 7)  # 5 resources × 7 nodes


@pytest.mark.parametrize("cols", [
    pytest.param([0], id="one column"),
    pytest.param([0, 1], id="cpu and memory, a run"),
    pytest.param([1, 2, 3], id="a longer run"),
    pytest.param([0, 3], id="columns apart"),
    pytest.param([3, 0], id="columns out of order"),
    pytest.param([2, 2], id="one column twice"),
    pytest.param([4, 1, 2], id="a run after another column"),
])
@pytest.mark.parametrize("rows", [
    pytest.param(np.arange(7), id="all rows"),
    pytest.param(np.array([6, 0, 3]), id="some rows, any order"),
    pytest.param(np.array([], dtype=np.int64), id="no rows"),
])
def test_gather_is_the_block_of_those_columns_and_rows(cols: list[int], rows: np.ndarray) -> None:
    got = gather(MATRIX, cols, rows)
    assert got.shape == (len(cols), len(rows))
    assert np.array_equal(got, MATRIX[cols][:, rows])


def test_gather_returns_a_copy() -> None:
    matrix = MATRIX.copy()
    gather(matrix, [0, 1], np.arange(7))[0, 0] = -1
    assert matrix[0, 0] == 0
