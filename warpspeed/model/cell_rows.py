"""Per-row granule counts in closed form: the counts where a granule two rows share counts once per row.

A field's row is its first dimension: row ``R`` holds elements ``S0 R .. S0 R + S0 - 1``. Where granules count
once per row (``exact=False``, the cheap ISL count the L2 line counts use), the count of a set of cells is
the sum over the rows they touch of the distinct granules among the row's touched elements. Here every
index of every access is a cell coordinate plus a constant, or a constant, the same axes in every access:

- an array-of-structures field (``q`` fastest) reads a constant element of the row of a shifted cell;
- a structure-of-arrays field (``x`` fastest) reads a stretch of a row, the boxes' x-range shifted.

A row's touched elements then depend only on which shifted copies of the cell boxes hold the row, which is
constant on the pieces of the overlay of those copies in the row dimensions (coordinate compression), and
the granules they span depend only on where the row starts inside a granule, ``(offset + S0 R) eb mod g``,
which repeats every ``p = g / gcd(S0 eb, g)`` rows. ``R`` modulo ``p`` is ``u1 + S1 u2 + S1 S2 u3`` modulo
``p`` in the row's indices, so a piece's rows per residue are a cyclic convolution of per-dimension
histograms. The cost grows with the pieces times ``p``, not with the cells or the rows: exact, and the same
numbers as the listed rows (``enumerated_volumes``, ``range_volumes``: the references the tests compare).

Accesses that differ in a constant row index (an LBM field's populations, one q-plane each) never share a
row, so each such group counts by itself; where the groups are translates of one another (one access per
plane always is) one group's overlay is counted and moved to the others: a translate's rows are ``Σ strides
t`` rows further (their residues modulo ``p`` move) and its elements ``t0`` further along the row. The
overlay of all accesses together would grow with the product of every plane's edges instead.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

import numpy as np

from ..kernel import Field
from .cells import Box
from .unique_rows import unique_rows

SliceIndex = tuple[int, int]  # (cell axis 0-2, or -1 for a constant; the constant added)


@dataclass(frozen=True)
class RowAccess:
    """One access: the element of the row (``first``) and the row's indices (``rest``), each a cell axis plus a
    constant or a constant."""

    first: SliceIndex
    rest: tuple[SliceIndex, ...]


def row_accesses(fld: Field, slices: Sequence[tuple[SliceIndex, ...]]) -> list[RowAccess] | None:
    """The field's accesses (slice accesses: per dimension (cell axis or -1, constant)) as row accesses, or
    None where the closed form does not count them: every access must follow the same cell axes in the same
    dimensions, each axis once."""
    if len(fld.shape) < 2 or not slices:
        return None
    pattern = tuple(a for a, _ in slices[0])
    used = [a for a in pattern if a >= 0]
    if len(set(used)) != len(used):
        return None
    out = []
    for acc in slices:
        if tuple(a for a, _ in acc) != pattern:
            return None
        out.append(RowAccess(acc[0], tuple(acc[1:])))
    return out


def _residue_histograms(lo: np.ndarray, hi: np.ndarray, p: int, factor: int) -> np.ndarray:
    """Per interval [lo, hi] (inclusive): how many of its values v have ``factor v mod p`` = each residue."""
    n = hi - lo + 1
    out = np.repeat((n // p)[:, None], p, axis=1)
    steps = np.arange(p)
    extra = steps[None, :] < (n % p)[:, None]  # the first n mod p values after the whole periods
    residues = (lo[:, None] + steps[None, :]) % p
    np.add.at(out, (np.repeat(np.arange(lo.size), p), residues.ravel()), extra.ravel().astype(np.int64))
    if factor % p != 1:
        moved = np.zeros_like(out)
        np.add.at(moved.T, (np.arange(p) * factor) % p, out.T)
        out = moved
    return out


def _cyclic(a: np.ndarray, b: np.ndarray, p: int) -> np.ndarray:
    """Cyclic convolutions of every row of ``a`` (n, p) with every row of ``b`` (m, p) of non-negative integers:
    (n, m, p). One matrix product; in floating point where every sum stays below 2^53, where it is exact (a
    fifth of the integer product's time)."""
    shifted = b[:, (np.arange(p)[:, None] - np.arange(p)[None, :]) % p]  # [j, k, s] = b[j, (k - s) mod p]
    right = shifted.reshape(-1, p).T  # (p, m p)
    if a.size and b.size and int(a.sum(axis=1).max()) * int(b.max()) < 1 << 53:  # bounds every sum
        out = (a.astype(np.float64) @ right.astype(np.float64)).astype(np.int64)
    else:
        out = a @ right
    return out.reshape(a.shape[0], b.shape[0], p)


def _granules_of(held: np.ndarray, lo: np.ndarray, hi: np.ndarray, start: np.ndarray, eb: int,
                 g: int) -> np.ndarray:
    """For each set of element intervals (row ``i`` of ``held`` (sets, n) picks some of the intervals
    ``[lo, hi]`` (n,)) in a row and each row start in ``start`` (bytes into its granule): the distinct granules
    of the intervals' union; (sets, starts). By :func:`_touching` where its matrix is small, else
    :func:`_granules_by_reach`."""
    touching = _touching(held, lo, hi, start, eb, g)
    return touching if touching is not None else _granules_by_reach(held, lo, hi, start, eb, g)


def _granules_by_reach(held: np.ndarray, lo: np.ndarray, hi: np.ndarray, start: np.ndarray, eb: int,
                       g: int) -> np.ndarray:
    """:func:`_granules_of`, all sets at once: in order of first element, an interval adds the granules past the
    last one its predecessors reach (those from its own first granule up to there are covered already: a
    predecessor starts no later and runs on to that reach). The intervals are ordered once for every set; one a
    set does not pick becomes empty (it starts after every other and reaches nowhere), which adds nothing."""
    order = np.argsort(lo, kind="stable")
    held, lo, hi = held[:, order], lo[order], hi[order]
    far = np.int64(1) << 40
    los = np.where(held, lo[None, :], far)[:, None, :]  # (sets, 1, intervals)
    his = np.where(held, hi[None, :], -far)[:, None, :]
    first = (start[None, :, None] + los * eb) // g  # (sets, starts, intervals)
    last = (start[None, :, None] + his * eb + eb - 1) // g
    reached = np.maximum.accumulate(last, axis=2)
    before = np.concatenate((np.full(reached.shape[:2] + (1,), np.iinfo(np.int64).min // 2), reached[:, :, :-1]),
                            axis=2)
    return np.maximum(last - np.maximum(first - 1, before), 0).sum(axis=2)


TOUCH_MATRIX_MAX = 1 << 14
"""Entries (intervals x row starts x granules) up to which :func:`_granules_of` counts by the matrix of the
granules each interval touches (speed only, never a count)."""


def _touching(held: np.ndarray, lo: np.ndarray, hi: np.ndarray, start: np.ndarray, eb: int,
              g: int) -> np.ndarray | None:
    """:func:`_granules_of` as one matrix product: a set touches a granule if one of its intervals does, and
    a count only depends on where a row starts modulo ``g``. The granules each interval touches from each
    distinct such start (``touches`` (intervals, starts x granules)) times the sets' choice of intervals, then
    the granules touched; None where that matrix would exceed :data:`TOUCH_MATRIX_MAX`."""
    phases, which = np.unique(start % g, return_inverse=True)
    first = (phases[None, :] + lo[:, None] * eb) // g  # (intervals, phases)
    last = (phases[None, :] + hi[:, None] * eb + eb - 1) // g
    span = int(last.max()) + 1 if last.size else 1
    if lo.size * phases.size * span > TOUCH_MATRIX_MAX or (lo < 0).any():
        return None
    granule = np.arange(span)
    touches = (first[:, :, None] <= granule) & (granule <= last[:, :, None])  # (intervals, phases, granules)
    hits = held.astype(np.float64) @ touches.reshape(lo.size, -1).astype(np.float64)  # intervals per granule
    counts = (hits > 0).reshape(held.shape[0], phases.size, span).sum(axis=2)
    return counts[:, which.reshape(-1)]


def _whole_granules_of(held: np.ndarray, lo: np.ndarray, hi: np.ndarray, start: np.ndarray, eb: int,
                       g: int) -> np.ndarray:
    """:func:`_granules_of`'s shape, counting the granules that lie wholly inside a set's interval, for sets of
    one interval each (a row that one access reads or writes alone): from the first granule boundary at or
    after its first byte to the last at or before the byte after its last."""
    if not (held.sum(axis=1) == 1).all():
        raise ValueError("whole granules are counted for rows of one stretch")
    which = held.argmax(axis=1)
    first = -(-(start[None, :] + lo[which][:, None] * eb) // g)  # (sets, starts)
    stop = (start[None, :] + (hi[which][:, None] + 1) * eb) // g
    return np.maximum(stop - first, 0)


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a boolean matrix and, per row, the index of its distinct row: ``np.unique(rows,
    axis=0, return_inverse=True)`` with the rows packed into 64-bit words and ordered by them (a tenth of the
    time: ``np.unique`` compares rows as raw bytes, one boolean each; :func:`unique_rows`)."""
    packed = np.packbits(rows, axis=1)
    packed = np.pad(packed, ((0, 0), (0, -packed.shape[1] % 8))).view(np.int64)
    first, which = unique_rows(packed)
    return rows[first], which


def _along(accesses: Sequence[RowAccess], cells: np.ndarray) -> np.ndarray:
    """The cell coordinates (k, 3) each field dimension of the accesses follows (0 for a constant): (k, dims)."""
    return np.stack([cells[:, a] if a >= 0 else np.zeros(cells.shape[0], dtype=np.int64)
                     for a, _ in (accesses[0].first, *accesses[0].rest)], axis=1)


def _index_ranges(accesses: Sequence[RowAccess], first: np.ndarray, last: np.ndarray) -> np.ndarray:
    """Every (access, box) pair's index range per field dimension, boxes from their ``first`` and ``last``
    cells (k, 3) each: (accesses, boxes, dimensions, 2), a constant dimension one value."""
    consts = np.array([_constants(a) for a in accesses], dtype=np.int64)[:, None, :]
    return np.stack((_along(accesses, first)[None] + consts, _along(accesses, last)[None] + consts), axis=-1)


def _inside(fld: Field, ranges: np.ndarray) -> bool:
    """Whether every index range of :func:`_index_ranges` lies inside its dimension's extent."""
    return bool((ranges[..., 0] >= 0).all() and (ranges[..., 1] < np.array(fld.shape, dtype=np.int64)).all())


def _pair_spans(accesses: Sequence[RowAccess], boxes: Sequence[Box]) -> np.ndarray:
    """Every (access, box) pair's index range per field dimension: (pairs, dimensions, 2), access-major; read
    only (kept: a count asks for the same pairs to size, to check and to count them)."""
    return _kept_pair_spans(tuple(accesses), tuple(boxes))


@lru_cache(maxsize=32)
def _kept_pair_spans(accesses: tuple[RowAccess, ...], boxes: tuple[Box, ...]) -> np.ndarray:
    first, last = (np.array([b[i] for b in boxes], dtype=np.int64) for i in (0, 1))
    ranges = _index_ranges(accesses, first, last)
    out = ranges.reshape(-1, *ranges.shape[2:])
    out.setflags(write=False)
    return out


def _overlay_edges(spans: np.ndarray) -> list[np.ndarray]:
    """Per row dimension, the sorted edges of the overlay of the pairs' ranges (first and one past last)."""
    return [np.unique(np.concatenate((spans[:, d, 0], spans[:, d, 1] + 1))) for d in range(1, spans.shape[1])]


def _apart(accesses: Sequence[RowAccess]) -> list[list[RowAccess]]:
    """The accesses grouped by the constants of their constant row indices (an LBM field's population): rows
    of different groups differ in such an index, so no row is touched from two groups and each group counts
    by itself (its overlay holds only its own pairs, not every access's: far fewer pieces)."""
    groups: dict[tuple[int, ...], list[RowAccess]] = {}
    for acc in accesses:
        groups.setdefault(tuple(c for a, c in acc.rest if a < 0), []).append(acc)
    return list(groups.values())


def _constants(acc: RowAccess) -> tuple[int, ...]:
    return tuple(c for _, c in (acc.first, *acc.rest))


def _translates(groups: list[list[RowAccess]]) -> np.ndarray | None:
    """Per group, the translation (one constant per field dimension) that makes the first group into it, or
    None where the groups are not translates of one another (an LBM field's populations, one access each,
    always are)."""
    base = np.array(sorted(_constants(a) for a in groups[0]), dtype=np.int64)
    out = []
    for group in groups:
        consts = np.array(sorted(_constants(a) for a in group), dtype=np.int64)
        if consts.shape != base.shape or not np.array_equal(consts - consts[0], base - base[0]):
            return None
        out.append(consts[0] - base[0])
    return np.array(out, dtype=np.int64)


def _plan(accesses: Sequence[RowAccess]) -> tuple[tuple[tuple[RowAccess, ...], np.ndarray], ...]:
    """The groups to count, each with the translations it stands for: one group and every group's translation
    where all are translates, else each group by itself (kept per list of accesses: every box and granularity
    of a field asks again)."""
    return _kept_plan(tuple(accesses))


@lru_cache(maxsize=256)
def _kept_plan(accesses: tuple[RowAccess, ...]) -> tuple[tuple[tuple[RowAccess, ...], np.ndarray], ...]:
    groups = _apart(accesses)
    moves = _translates(groups)
    plan = [(groups[0], moves)] if moves is not None else \
        [(group, np.zeros((1, 1 + len(accesses[0].rest)), dtype=np.int64)) for group in groups]
    for _, m in plan:
        m.setflags(write=False)  # kept and shared: read only
    return tuple((tuple(group), m) for group, m in plan)


def overlay_size(accesses: Sequence[RowAccess], boxes: Sequence[Box]) -> int:
    """Pieces of the overlays times (access, box) pairs, plus the translations: what :func:`row_granule_count`
    works through."""
    if not accesses or not boxes:
        return 0
    total = 0
    for group, moves in _plan(accesses):
        spans = _pair_spans(group, boxes)
        total += math.prod(max(1, e.size - 1) for e in _overlay_edges(spans)) * spans.shape[0] + moves.shape[0]
    return total


def count_if_cheaper(fld: Field, accesses: Sequence[RowAccess] | None, boxes: Sequence[Box], granularity: int,
                     budget: float) -> int | None:
    """:func:`row_granule_count` where it applies and its work (:func:`overlay_size`) is within ``budget`` (the
    caller's cost of listing the rows, in overlay units); None where the caller should list them: no row
    accesses, rows shorter than a granule (the listed counts tell rows apart by parity only), a dearer
    overlay, or cells outside the closed form."""
    if accesses is None or fld.shape[0] * fld.element_bytes < granularity or overlay_size(accesses, boxes) > budget:
        return None
    try:
        return row_granule_count(fld, accesses, boxes, granularity)
    except ValueError:  # cells that share a row, or an index outside its extent
        return None


def row_granule_count(fld: Field, accesses: Sequence[RowAccess], boxes: Sequence[Box], granularity: int) -> int:
    """Σ over the rows the boxes' cells touch through ``accesses`` of the distinct granules of ``granularity``
    bytes among the row's touched elements. ``ValueError`` where the closed form does not hold for these cells:
    several cells share a row (an axis no dimension follows spans several values), or an access leaves its
    dimension's extent (it would read a neighbouring row)."""
    if not accesses or not boxes:
        return 0
    followed = {a for a, _ in (accesses[0].first, *accesses[0].rest) if a >= 0}
    for axis in set(range(3)) - followed:
        if len({b[0][axis] for b in boxes} | {b[1][axis] for b in boxes}) > 1:
            raise ValueError("cells that share a row")
    if not _inside(fld, _pair_spans(accesses, boxes)):
        raise ValueError("an access outside its dimension")
    return sum(int(_group_granule_counts(fld, group, boxes, granularity, moves).sum())
               for group, moves in _plan(accesses))


def separated_row_counts(fld: Field, accesses: Sequence[RowAccess] | None, origins: np.ndarray,
                         extent: tuple[int, int, int], granularities: Sequence[int],
                         whole: bool = False) -> dict[int, np.ndarray] | None:
    """Per box (``origins`` (k, 3), each box ``extent`` cells) and byte granularity: the distinct granules its
    cells touch through ``accesses`` (``whole``: the granules they cover completely, e.g. the sectors a block
    writes by itself), where every access is alone in its rows (one per q-plane, as an LBM field's populations
    in ``fzyx``), reads a stretch along its row, stays inside every dimension, and no two touched rows come
    within two granules of each other (blocks narrower than a row less two lines). Then a granule is never
    shared by two rows, the per-row count of the closed form is the exact count, and every row is a run of its
    own. None where this does not hold (the caller lists the rows; rows that several accesses share, a
    stencil's, also list faster than their overlay counts)."""
    if accesses is None or origins.shape[0] == 0 or accesses[0].first[0] < 0:
        return None
    plan = _plan(accesses)
    if any(len(group) > 1 for group, _ in plan):
        return None
    axes = [a for a, _ in (accesses[0].first, *accesses[0].rest)]
    if any(extent[a] > 1 for a in set(range(3)) - set(axes)):  # cells of a box would share a row
        return None
    shifts = [a.first[1] for a in accesses]  # along the row
    spread = max(shifts) - min(shifts)
    gap_bytes = (fld.shape[0] - extent[axes[0]] - spread) * fld.element_bytes  # between neighbouring rows
    if gap_bytes < 2 * max((*granularities, fld.element_bytes)):
        return None
    last = origins + np.asarray(extent, dtype=np.int64) - 1
    if not _inside(fld, _index_ranges(accesses, origins, last)):  # a stretch would run into the next row
        return None
    (x0, y0, z0), (x1, y1, z1) = origins[0].tolist(), last[0].tolist()
    box = ((x0, y0, z0), (x1, y1, z1))
    group, group_moves = plan[0]
    at = _along(accesses, origins)
    moves = ((at - at[0])[:, None, :] + group_moves[None, :, :]).reshape(-1, len(axes))  # each box the first moved
    k = origins.shape[0]
    return {g: _group_granule_counts(fld, group, [box], g, moves, whole).reshape(k, -1).sum(axis=1)
            for g in granularities}


def _group_granule_counts(fld: Field, accesses: Sequence[RowAccess], boxes: Sequence[Box], granularity: int,
                          moves: np.ndarray, whole: bool = False) -> np.ndarray:
    """:func:`row_granule_count` of accesses that may share rows (one group of :func:`_apart`, checked), and of
    its translates by each row of ``moves`` (constants per field dimension), one count per translate: a
    translate's rows are the group's, ``Σ strides t`` rows on (which moves their residues modulo ``p``), and
    its elements ``t0`` on. ``whole``: the granules a row's one stretch covers completely instead."""
    eb, s0 = fld.element_bytes, fld.shape[0]
    dims = len(fld.shape) - 1
    row_bytes = s0 * eb
    p = granularity // math.gcd(row_bytes, granularity)
    strides = [math.prod(fld.shape[1:1 + d]) for d in range(dims)]  # rows per step of each row index
    # the overlay of every (access, box) in the row dimensions
    spans = _pair_spans(accesses, boxes)  # (pairs, 1 + dims, 2)
    npairs = spans.shape[0]
    if npairs == 1:  # one piece: the pair's own ranges
        lows, highs = [spans[0, 1 + d, :1] for d in range(dims)], [spans[0, 1 + d, 1:] for d in range(dims)]
        holds = np.ones((1, 1), dtype=bool)
    else:
        edges = _overlay_edges(spans)
        lows, highs = [e[:-1] for e in edges], [e[1:] - 1 for e in edges]
        shape = tuple(lo.size for lo in lows)
        holds = np.ones((npairs, *shape), dtype=bool)  # which (access, box) pairs hold each piece
        for d in range(dims):
            along = (lows[d][None, :] >= spans[:, 1 + d, 0, None]) & (highs[d][None, :] <= spans[:, 1 + d, 1, None])
            holds &= along.reshape([npairs] + [-1 if k == d else 1 for k in range(dims)])
        holds = holds.reshape(npairs, -1).T  # (pieces, pairs)
    # rows per residue of R mod p in every piece: the cyclic convolution of the dimensions' histograms
    hist = [_residue_histograms(lows[d], highs[d], p, strides[d] % p) for d in range(dims)]
    per_residue = hist[0]
    for d in range(1, dims):
        per_residue = _cyclic(per_residue.reshape(-1, p), hist[d], p)
    per_residue = per_residue.reshape(-1, p)
    # a row's touched elements are the union of its pairs' stretches along it: pairs with the same stretch
    # (one access over several boxes; an array-of-structures cell's element) hold it as one
    first, of_pair = unique_rows(spans[:, 0, :])
    stretches = spans[first, 0, :]
    if stretches.shape[0] < npairs:  # (pieces, stretches): whether a pair of the stretch holds the piece
        order = np.argsort(of_pair.ravel(), kind="stable")
        bounds = np.searchsorted(of_pair.ravel()[order], np.arange(stretches.shape[0]))
        holds = np.logical_or.reduceat(holds[:, order], bounds, axis=1)
    else:  # every pair's stretch its own, in the pairs' order
        stretches = spans[:, 0, :]
    if npairs == 1:  # one piece, held by the one pair
        sets, rows = holds, per_residue
    else:
        touched = holds.any(axis=1)
        sets, which = _distinct_rows(holds[touched])
        rows = np.zeros((sets.shape[0], p), dtype=np.int64)
        np.add.at(rows, which.ravel(), per_residue[touched])
    start = (fld.offset * eb + row_bytes * np.arange(p)) % granularity  # where a row starts in its granule
    # per translate (n) and residue r of the group's rows: where the translated row starts, from the row
    # r + Σ strides t lands on and the elements t0 it moves along
    rows_on = (moves[:, 1:] * np.array(strides, dtype=np.int64)[None, :]).sum(axis=1)
    starts = start[(np.arange(p)[None, :] + rows_on[:, None]) % p] + moves[:, :1] * eb  # (n, p)
    granules = (_whole_granules_of if whole else _granules_of)(sets, stretches[:, 0], stretches[:, 1], starts.ravel(),
                                                              eb, granularity)
    return (granules.reshape(len(sets), *starts.shape) * rows[:, None, :]).sum(axis=(0, 2))  # (sets, moves, p)


__all__ = ["RowAccess", "count_if_cheaper", "overlay_size", "row_accesses", "row_granule_count",
           "separated_row_counts"]
