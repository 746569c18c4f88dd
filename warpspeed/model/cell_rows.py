"""Per-row granule counts in closed form for fields whose rows are single cells (array-of-structures layouts).

A field laid out ``(q, x, y, z)`` with ``q`` fastest (lbmpy's ``zyxf``: a cell's populations side by side)
has rows of one cell each: row ``R`` holds elements ``S0 R .. S0 R + S0 - 1``. Where the granules two rows
share count once per row (``exact=False``, the cheap ISL count the L2 line counts use), the count of a set
of cells is the sum over the rows they touch of the distinct granules of the row's touched elements. Each
access reads one constant element ``q`` of the row of the cell shifted by a constant, so:

- the touched ``q`` of a row depend only on which shifted copies of the cell boxes hold the row: constant
  on the pieces of the overlay of those copies (coordinate compression);
- the granules that a set of ``q`` spans in a row depend only on where the row starts inside a granule,
  ``(offset + S0 R) eb mod g``, which repeats every ``p = g / gcd(S0 eb, g)`` rows; ``R`` modulo ``p`` is
  ``u1 + S1 u2 + S1 S2 u3`` modulo ``p`` in the row's field indices, so a piece's rows per residue are a
  cyclic convolution of three per-dimension histograms.

The count costs the pieces times ``p``, not the cells: exact, and the same number the enumeration lists
(``enumerated_volumes.row_granule_count``, the reference the tests compare it with).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..kernel import Field
from .cells import Box

MAX_POPULATIONS = 63  # the touched elements of a row are a bit mask in one int64


@dataclass(frozen=True)
class CellRowAccess:
    """An access that reads element ``q`` of the row of the cell shifted by ``shift`` (per field dimension
    after the first: the cell axis it follows and the constant added)."""

    q: int
    shift: tuple[tuple[int, int], ...]


def cell_row_accesses(fld: Field, slices: Sequence[tuple[tuple[int, int], ...]]) -> list[CellRowAccess] | None:
    """The field's accesses (slice accesses: per dimension (cell axis or -1, constant)) as cell-row accesses,
    or None where the field's rows are not single cells: the first dimension must be a constant inside it,
    every further dimension a cell coordinate plus a constant, the same axes in every access."""
    if len(fld.shape) < 2 or fld.shape[0] > MAX_POPULATIONS:
        return None
    out, axes = [], None
    for acc in slices:
        (a0, q), rest = acc[0], acc[1:]
        if a0 != -1 or not 0 <= q < fld.shape[0] or any(a < 0 for a, _ in rest):
            return None
        these = tuple(a for a, _ in rest)
        if axes is None:
            axes = these
        if these != axes or len(set(these)) != len(these):
            return None
        out.append(CellRowAccess(q, tuple(rest)))
    return out


def _residue_histograms(lo: np.ndarray, hi: np.ndarray, p: int, factor: int) -> np.ndarray:
    """Per interval [lo, hi] (inclusive): how many of its values v have ``factor v mod p`` = each residue."""
    n = hi - lo + 1
    out = np.repeat((n // p)[:, None], p, axis=1)
    rest = n % p
    steps = np.arange(p)
    extra = (steps[None, :] < rest[:, None])  # the first n mod p values after the whole periods
    residues = (lo[:, None] + steps[None, :]) % p
    np.add.at(out, (np.repeat(np.arange(lo.size), p), residues.ravel()), extra.ravel().astype(np.int64))
    if factor % p != 1:
        mapped = (np.arange(p) * factor) % p
        moved = np.zeros_like(out)
        for r in range(p):
            moved[:, mapped[r]] += out[:, r]
        out = moved
    return out


def _cyclic(a: np.ndarray, b: np.ndarray, p: int) -> np.ndarray:
    """Cyclic convolutions of every row of ``a`` (n, p) with every row of ``b`` (m, p): (n, m, p)."""
    shifted = b[:, (np.arange(p)[:, None] - np.arange(p)[None, :]) % p]  # [j, k, s] = b[j, (k - s) mod p]
    return np.einsum("is,jks->ijk", a, shifted)


def row_granule_count(fld: Field, accesses: Sequence[CellRowAccess], boxes: Sequence[Box], granularity: int) -> int:
    """Σ over the rows the boxes' cells touch through ``accesses`` of the distinct granules of ``granularity``
    bytes among the row's touched elements (granules two rows share count once per row)."""
    if not accesses or not boxes:
        return 0
    eb, s0 = fld.element_bytes, fld.shape[0]
    dims = len(fld.shape) - 1
    axes = [a for a, _ in accesses[0].shift]
    # unmapped cell axes: one value in every box, else several cells would share a row
    unmapped = [a for a in range(3) if a not in axes]
    if any(len({b[0][a] for b in boxes} | {b[1][a] for b in boxes}) > 1 for a in unmapped):
        raise ValueError("cells that share a row")
    row_bytes = s0 * eb
    p = granularity // math.gcd(row_bytes, granularity)
    strides = [math.prod(fld.shape[1:1 + d]) for d in range(dims)]  # rows per step of each field dimension
    # the overlay of the boxes shifted by every access, per field dimension
    edges = []
    for d in range(dims):
        ax = axes[d]
        shifts = {acc.shift[d][1] for acc in accesses}
        e = {b[0][ax] + c for b in boxes for c in shifts} | {b[1][ax] + c + 1 for b in boxes for c in shifts}
        edges.append(np.array(sorted(e), dtype=np.int64))
    lows = [e[:-1] for e in edges]
    highs = [e[1:] - 1 for e in edges]
    # the touched q of every piece: bit q set where some access's shifted box holds the piece
    shape = tuple(lo.size for lo in lows)
    touched = np.zeros(shape, dtype=np.int64)
    for acc in accesses:
        inside = np.zeros(shape, dtype=bool)
        for b in boxes:
            held = None
            for d in range(dims):
                ax, c = acc.shift[d]
                along = (lows[d] >= b[0][ax] + c) & (highs[d] <= b[1][ax] + c)
                view = along.reshape([-1 if k == d else 1 for k in range(dims)])
                held = view if held is None else held & view
            inside |= held
        touched[inside] |= np.int64(1) << acc.q
    # rows per residue of R mod p in every piece: the cyclic convolution of the dimensions' histograms
    hist = [_residue_histograms(lows[d], highs[d], p, strides[d] % p) for d in range(dims)]
    per_residue = hist[0]
    for d in range(1, dims):
        per_residue = _cyclic(per_residue.reshape(-1, p), hist[d], p).reshape(-1, p)
    per_residue = per_residue.reshape(*shape, p)
    # the rows of each set of touched q, per residue; then the granules such a set spans in a row
    masks = touched.ravel()
    kept = masks != 0
    sets, which = np.unique(masks[kept], return_inverse=True)
    rows = np.zeros((sets.size, p), dtype=np.int64)
    np.add.at(rows, which, per_residue.reshape(-1, p)[kept])
    start = (fld.offset * eb + row_bytes * np.arange(p)) % granularity  # where a row starts in its granule
    bits = ((sets[:, None] >> np.arange(s0)[None, :]) & 1).astype(bool)  # (sets, q)
    granule = (start[:, None] + np.arange(s0)[None, :] * eb) // granularity  # (p, q): ascending in q
    total = 0
    for i in range(sets.size):
        g = granule[:, bits[i]]  # the touched q's granules, ascending: a new granule where it steps
        spanned = 1 + np.count_nonzero(g[:, 1:] != g[:, :-1], axis=1)
        total += int(rows[i] @ spanned)
    return total


__all__ = ["CellRowAccess", "MAX_POPULATIONS", "cell_row_accesses", "row_granule_count"]
