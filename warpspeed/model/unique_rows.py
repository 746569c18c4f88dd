"""The distinct rows of an integer matrix, fast for the small matrices of one block or one row set.

``np.unique(matrix, axis=0)`` sorts the rows as structured elements and is 5-10x slower on the few-hundred-row
matrices the model groups (a block's warp layouts and warp patterns, a row set's distinct sets of pairs).
Here each row is hashed to one int64 (a wrapping dot product with fixed odd multipliers), the hashes are
grouped, the grouping is checked against the rows themselves, and only where two distinct rows share a hash
numpy's exact grouping is used. The result is numpy's: distinct rows in lexicographic order.
"""

from __future__ import annotations

import numpy as np

_MULTIPLIERS = np.random.default_rng(27).integers(1, 2**62, size=1 << 12, dtype=np.int64) | 1


def unique_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(rows, axis=0, return_index=True, return_inverse=True)[1:]`` of a 2-D int64 matrix: the
    first occurrence of each distinct row, distinct rows in lexicographic order (column 0 first, signed), and
    for each row the index of its distinct row."""
    rows = np.ascontiguousarray(rows)
    if rows.shape[1] > _MULTIPLIERS.size:
        return _exact(rows)
    h = (rows * _MULTIPLIERS[:rows.shape[1]]).sum(axis=1)  # wraps around: a hash, checked below
    _, first, inverse = np.unique(h, return_index=True, return_inverse=True)
    if not np.array_equal(rows[first][inverse], rows):  # two distinct rows with one hash
        return _exact(rows)
    order = np.lexsort(rows[first].T[::-1])
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return first[order], rank[inverse]


def _exact(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
    return first, inverse.reshape(-1)
