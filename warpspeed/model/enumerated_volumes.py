"""Footprints by enumeration: the DRAM-stage counts of ``isl_volumes`` for kernels ISL counts slowly.

A field whose rows start at byte phases that cycle with x and another index (array-of-structures
layouts: a row is one cell's values) needs a ``mod`` of several indices in the ISL encoding, and one ISL
count can take seconds to minutes (a 953-address set: 83 s), while listing the addresses takes
milliseconds (``isl_volumes.counts_are_dear`` decides). The footprint is the sorted distinct keys
``field << FIELD_SHIFT | granule`` of every access of every valid cell, with the linear granule
``floor((offset + index) * element_bytes / granularity)``. Two ways to list them, with the same result:

- **slices** (fields whose every access indexes each dimension by one cell coordinate plus a constant,
  or by a constant: lbmpy's kernels in both layouts): per box of cells and access, one slice of a bitmap
  over the field's elements is set, chunk by chunk along the slowest dimension that moves with a cell;
  the bitmap is then reduced to granules. The cost grows with the elements spanned, not per access and cell;
- **points** (anything else): every cell's address of every access, evaluated with numpy.

The counts are exact; ``exact=False`` counts a granule that two rows share once per row, as the cheap ISL
count does, so that the two counters never disagree. The cost grows with the cells counted (a wave and a
block plane), not with the domain.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from ..expressions import evaluate
from ..kernel import Access, Field, Kernel
from . import cell_rows
from .cell_rows import RowAccess, row_accesses
from .cells import Box, CellSet, as_cell_set
from .field_encoding import FIELD_SHIFT, SliceAccess, field_encodings, field_slice_accesses

if TYPE_CHECKING:
    import islpy as isl

CLOSED_FORM_OVERLAY_SHARE = 0.05
"""Rows are counted in closed form (:mod:`warpspeed.model.cell_rows`) where the overlay's work is at most this
share of the (cell, access) pairs the bitmap marks (profiled on the array-of-structures catalog kernels over
the blocks of ``benchmarks/bench_catalog.py``: the closed form takes 1-2 ms plus 0.05-0.1 us per overlay unit,
the bitmap 1.5-3 ns per marked pair; at a share of 0.027, the largest seen, the closed form was 1.5-4x
faster). Speed only, never a count."""

MEMBER_SPAN_PER_KEY = 32
"""Membership tests by bitmap up to this span per key (bytes of bitmap per key of both arrays), else by binary
search: a bitmap costs about 0.2 ns per spanned granule, a binary search about 20 ns per key (profiled on
array-of-structures waves 1x8x64 blocks deep, a span of 26 per key: 4.2 against 8.6 ms). Speed only."""
GRANULE_MASK = (1 << FIELD_SHIFT) - 1
SMALL_CHUNK_ROWS = 64  # chunks of at most this many rows read their row boundaries in one pass (profiled)
CHUNK_ELEMENTS = 1 << 22  # the slice bitmap is built in chunks of at most this many elements (bytes)


@dataclass(frozen=True)
class AddressSet:
    """Distinct encoded granules (``field << FIELD_SHIFT | granule``), sorted; the enumerated Footprint."""

    keys: np.ndarray

    def intersect(self, other: AddressSet) -> AddressSet:
        return AddressSet(self.keys[_members(self.keys, other.keys)])

    def subtract(self, other: AddressSet) -> AddressSet:
        return AddressSet(self.keys[~_members(self.keys, other.keys)])

    def size(self) -> int:
        return int(self.keys.size)


def _members(keys: np.ndarray, of: np.ndarray) -> np.ndarray:
    """Which of the sorted distinct ``keys`` are in the sorted distinct ``of``: by marking ``of`` in a bitmap
    over the keys' common span where it is at most :data:`MEMBER_SPAN_PER_KEY` times the arrays (a footprint's
    granules lie close together), else by a binary search each."""
    if keys.size == 0 or of.size == 0:
        return np.zeros(keys.size, dtype=bool)
    lo, hi = max(int(keys[0]), int(of[0])), min(int(keys[-1]), int(of[-1]))
    if hi < lo:
        return np.zeros(keys.size, dtype=bool)
    if hi - lo <= MEMBER_SPAN_PER_KEY * (keys.size + of.size):
        mark = np.zeros(hi - lo + 1, dtype=bool)
        inner = of[np.searchsorted(of, lo):np.searchsorted(of, hi, side="right")]
        mark[inner - lo] = True
        out = np.zeros(keys.size, dtype=bool)
        first, stop = np.searchsorted(keys, lo), np.searchsorted(keys, hi, side="right")
        out[first:stop] = mark[keys[first:stop] - lo]
        return out
    at = np.searchsorted(of, keys)
    return of[np.minimum(at, of.size - 1)] == keys


def distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values of a non-negative int64 array: by marking a bitmap over their range when it is
    not much larger than the array (the addresses of a cell set lie close together), else by sorting."""
    if values.size == 0:
        return values
    lo, hi = int(values.min()), int(values.max())
    if hi - lo > 8 * values.size:
        return _sorted_distinct(values)
    mark = np.zeros(hi - lo + 1, dtype=bool)
    mark[values - lo] = True
    return np.flatnonzero(mark) + lo


def cell_points(cells: CellSet | isl.Set) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x, y and z of every point of a cell set (a point in two pieces is listed twice)."""
    return as_cell_set(cells).coordinates


Ranges = tuple[tuple[int, int], ...]  # index range [lo, hi] per field dimension


def _ranges(boxes: Sequence[Box], accesses: list[SliceAccess], top: int) -> list[Ranges]:
    """The index ranges of every (box, access), merged where two differ in one dimension up to ``top`` only
    and their ranges there overlap or touch (a store of every population of a cell, neighbours along x):
    fewer slices. Dimensions above ``top`` keep one index per range (a slab each)."""
    out = list({tuple((lo[a] + c, hi[a] + c) if a >= 0 else (c, c) for a, c in acc)
                for lo, hi in boxes for acc in accesses})
    for d in range(top + 1 if out else 0):
        groups: dict[tuple, list[tuple[int, int]]] = {}
        for r in out:
            groups.setdefault(r[:d] + r[d + 1:], []).append(r[d])
        out = []
        for rest, spans in groups.items():
            if len(spans) == 1:  # most groups: nothing to merge
                out.append(rest[:d] + (spans[0],) + rest[d:])
            else:
                out.extend(rest[:d] + ((lo, hi),) + rest[d:] for lo, hi in _merge_spans(spans))
    return out


def _merge_spans(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Inclusive index ranges merged where they overlap or touch, in ascending order."""
    spans = sorted(spans)
    merged = [list(spans[0])]
    for lo, hi in spans[1:]:
        if lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return [(lo, hi) for lo, hi in merged]


@dataclass(frozen=True)
class _Chunk:
    """A bitmap over the elements [start, start + n) of a field, ``pad`` elements into a granule-aligned
    array; ``top``: the slowest dimension that moves with a cell (a chunk of ``top > 0`` holds whole rows)."""

    bits: np.ndarray
    pad: int
    n: int
    start: int
    top: int


class _Scratch:
    """One reused zeroed bitmap: a chunk's bitmap is only read before the next chunk is marked, and zeroing
    memory already in use costs far less than the page faults of a fresh array for every chunk."""

    def __init__(self):
        self._buffer = np.zeros(0, dtype=bool)

    def zeros(self, size: int) -> np.ndarray:
        if self._buffer.size < size:
            self._buffer = np.zeros(size, dtype=bool)
        out = self._buffer[:size]
        out[:] = False
        return out


def _marked_chunks(fld: Field, accesses: list[SliceAccess], boxes: Sequence[Box],
                   granularity: int) -> Iterator[_Chunk] | None:
    """The field's elements that the boxes' cells touch through the accesses, as bitmaps in chunks of whole
    indices of the top dimension, per slab, in address order; None where slices do not apply (an index range
    outside the allocated shape, elements that do not tile a granule). The chunks come one at a time and
    share their memory: read each before asking for the next."""
    plans = _chunk_plans(fld, accesses, boxes, granularity)
    if plans is None:
        return None
    per, scratch = granularity // fld.element_bytes, _Scratch()
    return (_marked_chunk(fld, p, per, scratch) for p in plans)


def _slice_ranges(fld: Field, accesses: list[SliceAccess], boxes: Sequence[Box],
                  granularity: int) -> tuple[int, list[Ranges]] | None:
    """The top moving dimension and the index ranges (:func:`_ranges`) of the boxes' accesses; None where slices
    do not apply (an index range outside the allocated shape, elements that do not tile a granule)."""
    if granularity % fld.element_bytes:
        return None
    moving = [d for d in range(len(fld.shape)) if any(acc[d][0] >= 0 for acc in accesses)]
    top = max(moving, default=0)  # dimensions above are one constant per access: a slab each
    ranges = _ranges(boxes, accesses, top)
    if any(lo < 0 or hi >= n for r in ranges for (lo, hi), n in zip(r, fld.shape, strict=True)):
        return None
    return top, ranges


def _chunk_plans(fld: Field, accesses: list[SliceAccess], boxes: Sequence[Box], granularity: int,
                 near: np.ndarray | None = None, tag: int = 0) -> Iterator[_Plan] | None:
    """The chunks of :func:`_marked_chunks`, not yet marked; ``near`` (sorted keys ``tag | granule``): a chunk
    keeps only the indices of its dimension whose elements share a granule with one of them, and one that keeps
    none is left out."""
    found = _slice_ranges(fld, accesses, boxes, granularity)
    if found is None:
        return None
    return _plans_of_ranges(fld, *found, granularity // fld.element_bytes, near, tag)


def _plans_of_ranges(fld: Field, top: int, ranges: list[Ranges], per: int, near: np.ndarray | None = None,
                     tag: int = 0) -> Iterator[_Plan]:
    """The chunks of :func:`_chunk_plans` from the top moving dimension and ranges of :func:`_slice_ranges`
    (granules of ``per`` elements)."""
    slabs: dict[tuple[int, ...], list] = {}
    for r in ranges:
        slabs.setdefault(tuple(lo for lo, _ in r[top + 1:]), []).append(r)
    return _chunk_stream(fld, slabs, top, per, near, tag)


@dataclass(frozen=True)
class _Plan:
    """A chunk to mark: the indices ``lo..hi`` of dimension ``dim`` (whole in the faster dimensions) from
    element ``start``, with the elements of the ranges ``rs`` there; ``top``: the chunk's top moving
    dimension."""

    rs: list
    dim: int
    top: int
    lo: int
    hi: int
    start: int
    ranges_key: bytes | None = None  # the ranges' part of the pattern, where the planner worked it out

    def pattern(self, per: int) -> tuple:
        """What the chunk's bitmap depends on, less where it starts (for one field and granule of ``per``
        elements): two chunks of one pattern have the same bits, and the same granules less a shift."""
        lo, hi, dim = self.lo, self.hi, self.dim
        if self.ranges_key is not None:
            return dim, hi - lo, self.start % per, self.ranges_key
        clipped = {(max(r[dim][0], lo) - lo, min(r[dim][1], hi) - lo) + r[:dim] for r in self.rs
                   if max(r[dim][0], lo) <= min(r[dim][1], hi)}
        return dim, hi - lo, self.start % per, frozenset(clipped)


def _near_indices(near: np.ndarray | None, lo: int, hi: int, start: int, stride: int,
                  per: int, tag: int = 0) -> tuple[int, int] | None:
    """The indices ``lo..hi`` of a dimension of ``stride`` elements (index ``lo`` from element ``start``)
    narrowed to those whose elements share a granule with one of the sorted ``near`` (None: all of them),
    as (first, last); None where no such index is left. Granules are ``per`` elements; ``near`` holds them as
    keys ``tag | granule`` (a field's keys of a footprint, :data:`FIELD_SHIFT`)."""
    if near is None:
        return lo, hi
    end = start + (hi - lo + 1) * stride  # one past the last element
    i = int(np.searchsorted(near, tag + start // per))
    j = int(np.searchsorted(near, tag + (end - 1) // per, side="right"))
    if i >= j:
        return None
    first = max(start, (int(near[i]) - tag) * per)  # the first and last element of those granules inside
    last = min(end - 1, (int(near[j - 1]) - tag + 1) * per - 1)
    return lo + (first - start) // stride, lo + (last - start) // stride


def _chunk_stream(fld: Field, slabs: dict[tuple[int, ...], list], top: int, per: int,
                  near: np.ndarray | None = None, tag: int = 0) -> Iterator[_Plan]:
    plane = fld.strides[top]  # elements per index of the top dimension
    step = max(1, CHUNK_ELEMENTS // plane)
    # slabs in address order: by the slowest dimension's index first (the key lists the faster ones first)
    for key, rs in sorted(slabs.items(), key=lambda kv: kv[0][::-1]):
        base = fld.offset + sum(k * s for k, s in zip(key, fld.strides[top + 1:], strict=True))
        first, last = min(r[top][0] for r in rs), max(r[top][1] for r in rs)
        bands = _bands(rs, top, fld.shape)
        if bands is not None:  # a thin wave in a wide plane: mark only the bands of rows it touches
            yield from _band_chunks(fld, rs, top, bands, base, first, last, per, near, tag)
            continue
        for c0 in range(first, last + 1, step):
            kept = _near_indices(near, c0, min(c0 + step, last + 1) - 1, base + c0 * plane, plane, per, tag)
            if kept is not None:
                yield _Plan(rs, top, top, kept[0], kept[1], base + kept[0] * plane)


def _bands(rs: list, top: int, shape: tuple[int, ...]) -> list[tuple[int, int]] | None:
    """The merged index ranges of the second-slowest moving dimension that the ranges touch, where they
    cover at most half of it (else None: whole planes are marked). Only above two dimensions: a band of
    indices of dimension ``top - 1 >= 1`` is a run of whole rows, so the counts per row stay exact."""
    if top < 2:
        return None
    merged = _merge_spans([r[top - 1] for r in rs])
    return merged if 2 * sum(hi - lo + 1 for lo, hi in merged) <= shape[top - 1] else None


def _band_chunks(fld: Field, rs: list, top: int, bands: list[tuple[int, int]], base: int, first: int,
                 last: int, per: int, near: np.ndarray | None = None, tag: int = 0) -> Iterator[_Plan]:
    """Bitmap chunks of whole rows, one per (index of the top dimension, band of the next one) and at most
    :data:`CHUNK_ELEMENTS` elements, in address order; bands a plane's ranges miss get none."""
    second = top - 1
    plane, row = fld.strides[top], fld.strides[second]
    rows_per_chunk = max(1, CHUNK_ELEMENTS // row)
    table = np.array([[v for pair in r[:top + 1] for v in pair] for r in rs], dtype=np.int64)  # (lo, hi) per dim
    y0, y1 = 2 * second, 2 * second + 1  # the columns of the second dimension's range
    for c in range(first, last + 1):
        here = np.flatnonzero((table[:, 2 * top] <= c) & (table[:, 2 * top + 1] >= c))
        for blo, bhi in bands:
            for lo0 in range(blo, bhi + 1, rows_per_chunk):
                hi0 = min(bhi, lo0 + rows_per_chunk - 1)
                kept = _near_indices(near, lo0, hi0, base + c * plane + lo0 * row, row, per, tag)
                if kept is None:
                    continue
                lo1, hi1 = kept
                sel = here[(table[here, y0] <= hi1) & (table[here, y1] >= lo1)]
                if sel.size:
                    yield _Plan([rs[i] for i in sel], second, top, lo1, hi1, base + c * plane + lo1 * row,
                                _ranges_key(table[sel, :y1 + 1], lo1, hi1))


def _ranges_key(table: np.ndarray, lo: int, hi: int) -> bytes:
    """The ranges of a band chunk (rows of (lo, hi) per dimension up to the chunk's, a fresh array) with the
    last clipped to ``lo..hi`` and counted from ``lo``, as distinct rows in a fixed order: the part of
    :meth:`_Plan.pattern` the ranges make (the same set of ranges gives the same bytes)."""
    table[:, -2] = np.maximum(table[:, -2], lo) - lo
    table[:, -1] = np.minimum(table[:, -1], hi) - lo
    rows = np.ascontiguousarray(table).view(np.dtype((np.void, table.shape[1] * table.itemsize))).ravel()
    return np.unique(rows).tobytes()


def _marked_chunk(fld: Field, plan: _Plan, per: int, scratch: _Scratch) -> _Chunk:
    """The bitmap of a planned chunk, with each range's elements there marked."""
    dim, lo0, hi0 = plan.dim, plan.lo, plan.hi
    inner = tuple(reversed(fld.shape[:dim]))
    n = (hi0 - lo0 + 1) * fld.strides[dim]
    pad = plan.start % per
    bits = scratch.zeros(-(-(pad + n) // per) * per)
    view = bits[pad:pad + n].reshape((hi0 - lo0 + 1,) + inner)
    for r in plan.rs:
        lo, hi = max(r[dim][0], lo0), min(r[dim][1], hi0)
        if lo <= hi:
            view[(slice(lo - lo0, hi - lo0 + 1),) + tuple(slice(a, b + 1) for a, b in reversed(r[:dim]))] = True
    return _Chunk(bits, pad, n, plan.start, plan.top)


PATTERN_BYTES_KEPT = 16 << 20
"""Bytes of chunk patterns kept across counts (their touched granules, one byte each, and where a count lists
them the indices of those touched): the planes of a wave, band by band, repeat a few patterns, and so do the
waves of blocks that differ only in depth or width, whose planes hold the same rows of cells
(:func:`_touched_chunks`). Speed only."""

_kept_patterns: dict[tuple, _Touched] = {}
_kept_bytes = [0]


class _Touched:
    """Which granules of a chunk its cells touch (``touched``, one flag per granule from the chunk's first),
    shared by the chunks of one pattern; read only. What the counts read of it is worked out once."""

    def __init__(self, touched: np.ndarray):
        touched.setflags(write=False)
        self.touched = touched
        self._where: np.ndarray | None = None
        self._span: tuple[int, int, int] | None = None

    def where(self) -> np.ndarray:
        """The indices of the touched granules, ascending (read only)."""
        if self._where is None:
            self._where = np.flatnonzero(self.touched)
            _kept_bytes[0] += self._where.nbytes  # kept with the pattern: counted against its budget
            self._where.setflags(write=False)
        return self._where

    def span(self) -> tuple[int, int, int]:
        """(how many are touched, the index of the first, of the last); (0, 0, 0) where none is."""
        if self._span is None:
            n = int(np.count_nonzero(self.touched))
            self._span = (n, int(np.argmax(self.touched)),
                          self.touched.size - 1 - int(np.argmax(self.touched[::-1]))) if n else (0, 0, 0)
        return self._span


def _touched_chunks(fld: Field, accesses: list[SliceAccess], boxes: Sequence[Box], granularity: int,
                    near: np.ndarray | None = None, tag: int = 0) -> Iterator[tuple[int, _Touched]] | None:
    """The chunks of :func:`_marked_chunks` as (the granule of the chunk's first element, its touched
    granules); None where slices do not apply. A chunk of a pattern seen before (the planes of a wave inside
    one block plane: the same rows and cells, a plane further; see :data:`PATTERN_BYTES_KEPT`) is not marked
    again: its touched granules are the earlier chunk's, from its own first granule."""
    plans = _chunk_plans(fld, accesses, boxes, granularity, near, tag)
    if plans is None:
        return None
    return _touched_stream(fld, plans, granularity // fld.element_bytes)


def _touched_stream(fld: Field, plans: Iterator[_Plan], per: int) -> Iterator[tuple[int, _Touched]]:
    scratch, geometry = _Scratch(), (fld.shape, fld.strides, per)
    for plan in plans:
        key = (geometry, plan.pattern(per))
        touched = _kept_patterns.get(key)
        if touched is None:
            touched = _Touched(_any_per_group(_marked_chunk(fld, plan, per, scratch).bits, per))
            if _kept_bytes[0] + touched.touched.size > PATTERN_BYTES_KEPT:
                _kept_patterns.clear()
                _kept_bytes[0] = 0
            _kept_patterns[key] = touched
            _kept_bytes[0] += touched.touched.size
        yield plan.start // per, touched


def _drop_repeats(ascending: np.ndarray) -> np.ndarray:
    """An ascending array without its repeated values."""
    keep = np.ones(ascending.size, dtype=bool)
    keep[1:] = ascending[1:] != ascending[:-1]
    return ascending[keep]


def _sorted_distinct(values: np.ndarray) -> np.ndarray:
    """Distinct values of an array made of ascending runs (timsort merges the runs in linear time)."""
    return _drop_repeats(np.sort(values, kind="stable"))


def granules_by_slices(fld: Field, accesses: list[SliceAccess], boxes: Sequence[Box], granularity: int,
                       per_row: bool = False, near: np.ndarray | None = None) -> np.ndarray | None:
    """Sorted distinct granules of the field that the boxes' cells touch through the accesses, by marking
    slices of a bitmap over its elements (None where that does not apply). ``per_row``: keys
    ``2 g + row parity`` instead, so that a granule two rows share counts once per row (see :func:`row_keys`).
    ``near`` (sorted granules, not with ``per_row``): only those of them are needed; the rows or planes of
    the bitmap that share no granule with them are not marked (the result then lacks granules, but none of
    ``near``)."""
    if per_row:  # ascending per chunk; a granule shared by the rows at a chunk boundary breaks the order
        chunks = _marked_chunks(fld, accesses, boxes, granularity)
        if chunks is None:
            return None
        per = granularity // fld.element_bytes
        keys = [_row_keys_of_chunk(c, fld, per) for c in chunks]
        return _sorted_distinct(np.concatenate(keys)) if keys else np.empty(0, dtype=np.int64)
    touched = _touched_chunks(fld, accesses, boxes, granularity, near)
    if touched is None:
        return None
    # ascending per chunk and from chunk to chunk; a granule two chunks share is the last of the one and the
    # first of the next: dropped there, not searched for in the whole list
    granules: list[np.ndarray] = []
    for first, t in touched:
        _append_chunk(granules, t.where() + first)  # a fresh array, as large as the chunk's granules
    return _joined(granules)


def _append_chunk(parts: list[np.ndarray], granules: np.ndarray) -> None:
    """Append a chunk's ascending granules to those of the chunks before, less the one granule it may share with
    the chunk before (the last of that one and the first of this)."""
    if parts and granules.size and granules[0] == parts[-1][-1]:
        granules = granules[1:]
    if granules.size:
        parts.append(granules)


def _joined(parts: list[np.ndarray]) -> np.ndarray:
    """The chunks' granules as one ascending array (one chunk's array as it is)."""
    if len(parts) == 1:
        return parts[0]
    return np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)


def granules_meeting(fld: Field, accesses: list[SliceAccess], boxes: Sequence[Box], granularity: int,
                     near: np.ndarray, tag: int = 0) -> np.ndarray | None:
    """``granules_by_slices(...)`` intersected with the sorted distinct granules ``near`` (None where slices do
    not apply): each chunk's granules are looked up for those of ``near`` in its span, instead of listed and
    intersected (the chunks that share no granule with ``near`` are not marked). ``near`` may hold the granules
    as keys ``tag | granule`` (a field's part of a footprint, read in place); the result then does too."""
    chunks = _touched_chunks(fld, accesses, boxes, granularity, near, tag)
    if chunks is None:
        return None
    out: list[np.ndarray] = []
    for lo, t in chunks:  # lo: the granule of the chunk's first group
        i, j = np.searchsorted(near, (tag + lo, tag + lo + t.touched.size))
        _append_chunk(out, near[i:j][t.touched[near[i:j] - (tag + lo)]])
    return _joined(out)


def granule_count_by_slices(fld: Field, accesses: list[SliceAccess], boxes: Sequence[Box],
                            granularity: int) -> int | None:
    """``granules_by_slices(...).size`` without listing the granules (None where slices do not apply): each
    chunk's granules counted, less the one it shares with the chunk before (its first, their last). Where the
    ranges are runs of whole rows (a store of every population of a cell), the runs' granules are counted
    instead (:func:`_run_granule_count`)."""
    found = _slice_ranges(fld, accesses, boxes, granularity)
    if found is None:
        return None
    per = granularity // fld.element_bytes
    by_runs = _run_granule_count(fld, found[1], per)
    if by_runs is not None:
        return by_runs
    chunks = _touched_stream(fld, _plans_of_ranges(fld, *found, per), per)
    count, last = 0, -1  # last: the highest granule counted so far
    for lo, t in chunks:
        n, a, b = t.span()
        if n:
            count += n - (lo + a == last)
            last = lo + b
    return count


RUN_ELEMENTS_AT_LEAST = 16
"""Ranges are counted as runs of elements (:func:`_run_granule_count`) where the runs average at least this many
elements: a run costs about as much as marking 10-20 elements of the bitmap. Speed only."""


def _run_granule_count(fld: Field, ranges: list[Ranges], per: int) -> int | None:
    """The distinct granules (``per`` elements) of the ranges' elements, from the runs of consecutive elements
    they are made of (None where those runs are too short to pay, :data:`RUN_ELEMENTS_AT_LEAST`). A range whose
    fastest dimensions are whole up to one, ``d``, is one run per index of the dimensions above ``d``:
    ``lo_d .. hi_d`` times the stride of ``d``. The runs' granule spans are merged in order of their first."""
    starts, lengths, elements = [], [], 0
    for r in ranges:
        d = next((i for i, ((lo, hi), n) in enumerate(zip(r, fld.shape, strict=True)) if (lo, hi) != (0, n - 1)),
                 len(r) - 1)
        above = [np.arange(lo, hi + 1, dtype=np.int64) * s for (lo, hi), s in zip(r[d + 1:], fld.strides[d + 1:],
                                                                                   strict=True)]
        first = np.zeros(1, dtype=np.int64) + fld.offset + r[d][0] * fld.strides[d]
        for a in above:
            first = (first[:, None] + a[None, :]).ravel()
        starts.append(first)
        lengths.append(np.full(first.size, (r[d][1] - r[d][0] + 1) * fld.strides[d], dtype=np.int64))
        elements += first.size * int(lengths[-1][0]) if first.size else 0
    runs = sum(x.size for x in starts)
    if runs == 0:
        return 0
    if elements < RUN_ELEMENTS_AT_LEAST * runs:
        return None
    start = np.concatenate(starts)
    order = np.argsort(start, kind="stable")
    start, end = start[order], start[order] + np.concatenate(lengths)[order] - 1
    first, last = start // per, end // per
    reached = np.maximum.accumulate(last)  # the last granule counted by the runs so far
    before = np.concatenate(([np.int64(-1)], reached[:-1]))
    return int(np.maximum(last - np.maximum(first - 1, before), 0).sum())


def row_granule_count(fld: Field, accesses: list[SliceAccess], boxes: Sequence[Box], granularity: int) -> int | None:
    """``granules_by_slices(..., per_row=True).size`` without the keys: a chunk of whole rows is counted
    row parity by row parity (two rows of one parity share no granule: rows are a granule long at least)."""
    chunks = _marked_chunks(fld, accesses, boxes, granularity)
    if chunks is None:
        return None
    per = granularity // fld.element_bytes
    count, split = 0, []  # split: the keys of chunks inside one row
    for c in chunks:
        if c.top > 0:
            count += int(np.count_nonzero(_any_per_group(c.bits, per))) + _shared_by_two_rows(c, fld, per)
        else:
            split.append(_row_keys_of_chunk(c, fld, per))
    return count + (_sorted_distinct(np.concatenate(split)).size if split else 0)


def _shared_by_two_rows(c: _Chunk, fld: Field, per: int) -> int:
    """Granules of a chunk of whole rows that straddle a row boundary and are touched on both sides (they
    count once per row). The boundary before row j lies ``(pad + j X) mod per`` elements into its granule, a
    value that repeats every ``per / gcd(X, per)`` rows, whose granules are ``X / gcd(X, per)`` apart: each
    such class is read at once, a granule as one or two machine words, its two sides through byte masks."""
    X = fld.shape[0]
    rows = c.n // X
    # per is a power of two: granule and element sizes are (an element size that does not divide the
    # granule never reaches here, see _marked_chunks)
    if per <= 8:
        words, word_bytes = c.bits.view(f"u{per}").reshape(-1, 1), per
    else:
        words, word_bytes = c.bits.view("u8").reshape(-1, per // 8), 8
    g = math.gcd(X, per)
    if rows <= SMALL_CHUNK_ROWS:  # few rows (a band of a thin wave): every boundary in one pass
        bounds = c.pad + X * np.arange(1, rows, dtype=np.int64)
        sides = words[bounds // per]  # (boundaries, words): the granule each boundary splits
        masks = _before_masks(per, word_bytes, words.shape[1], words.dtype.str)[bounds % per]
        return int(np.count_nonzero((sides & masks).any(axis=1) & (sides & ~masks).any(axis=1)))
    full = (1 << 8 * word_bytes) - 1
    shared = 0
    for phase in range(1, min(per // g, rows - 1) + 1):
        pos = c.pad + phase * X  # the boundary before row ``phase`` of the chunk
        m = pos % per
        if m == 0:
            continue
        sel = words[pos // per::X // g][:(rows - 1 - phase) // (per // g) + 1]
        left, right = np.zeros(len(sel), dtype=bool), np.zeros(len(sel), dtype=bool)
        for w in range(words.shape[1]):
            below = (1 << 8 * min(max(m - w * word_bytes, 0), word_bytes)) - 1  # the bytes before the boundary
            if below:
                left |= (sel[:, w] & words.dtype.type(below)) != 0
            if full - below:
                right |= (sel[:, w] & words.dtype.type(full - below)) != 0
        shared += int(np.count_nonzero(left & right))
    return shared


@lru_cache(maxsize=32)
def _before_masks(per: int, word_bytes: int, nwords: int, dtype: str) -> np.ndarray:
    """``masks[m, w]``: the bytes of word ``w`` of a granule that lie before its element ``m`` (bitmap bytes
    in address order, read as little-endian words as above); ``m = 0`` (no split) gives no bytes, so a
    boundary on a granule boundary never counts."""
    out = np.zeros((per, nwords), dtype=dtype)
    for m in range(per):
        for w in range(nwords):
            out[m, w] = (1 << 8 * min(max(m - w * word_bytes, 0), word_bytes)) - 1
    out.setflags(write=False)
    return out


def _by_row_parity(c: _Chunk, fld: Field) -> tuple[np.ndarray, np.ndarray]:
    """The bitmap of a chunk of whole rows split into the field's even rows (a copy) and odd rows (``c.bits``
    itself, changed)."""
    X = fld.shape[0]
    first = ((c.start - fld.offset) // X) % 2  # the parity of the chunk's first row in the field
    even = c.bits.copy()
    even[c.pad:c.pad + c.n].reshape(-1, X)[1 - first::2] = False
    c.bits[c.pad:c.pad + c.n].reshape(-1, X)[first::2] = False
    return even, c.bits


def _row_keys_of_chunk(c: _Chunk, fld: Field, per: int) -> np.ndarray:
    """Ascending keys ``2 g + parity`` of the granules ``g`` each row of a chunk touches (a row: the
    ``shape[0]`` elements of one x run; a chunk with ``top == 0`` lies inside one row)."""
    if c.top == 0:
        parity = ((c.start - fld.offset) // fld.shape[0]) % 2
        return 2 * (c.start // per + np.flatnonzero(_any_per_group(c.bits, per))) + parity
    even, odd = (c.start // per + np.flatnonzero(_any_per_group(b, per)) for b in _by_row_parity(c, fld))
    return np.sort(np.concatenate([2 * even, 2 * odd + 1]), kind="stable")


def row_keys(granules: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """``2 g + (row mod 2)``: one key per (row, granule) pair, as ``isl_volumes.Footprints(exact=False)``
    counts them (a granule lies in at most two rows, which the parity tells apart)."""
    return 2 * granules + rows % 2


def _any_per_group(bits: np.ndarray, per: int) -> np.ndarray:
    """Whether any of each ``per`` consecutive booleans is set (``bits.size`` a multiple of ``per``), read
    as unsigned words where ``per`` is a whole number of bytes of them (far faster than ``any(axis=1)``)."""
    if per in (1, 2, 4, 8):
        return bits.view(f"u{per}") != 0
    if per % 8 == 0:
        words = bits.view("u8").reshape(-1, per // 8)
        acc = words[:, 0].copy()
        for j in range(1, per // 8):
            acc |= words[:, j]
        return acc != 0
    return np.asarray(bits.reshape(-1, per).any(axis=1))  # an array (numpy's stubs also allow a scalar)


def _joined_fields(keys: list[np.ndarray]) -> np.ndarray:
    """The fields' keys as one array, in field order (the one field's array as it is where the others are empty)."""
    kept = [k for k in keys if k.size]
    if len(kept) == 1:
        return kept[0]
    return np.concatenate(kept) if kept else np.empty(0, dtype=np.int64)


def _tagged(field: int, granules: np.ndarray) -> np.ndarray:
    """The keys ``field << FIELD_SHIFT | granule`` of a field's granules (a fresh array of them, which this
    changes: one pass over a footprint's keys the less)."""
    if field:
        granules |= np.int64(field) << FIELD_SHIFT
    return granules


class EnumeratedFootprints:
    """``isl_volumes.Footprints`` by enumeration (same methods; footprints are :class:`AddressSet`)."""

    def __init__(self, kernel: Kernel, granularity: int, *, exact: bool = True, slices: bool = True,
                 closed_form: bool = True):
        """``exact=False`` counts as ``isl_volumes.Footprints(exact=False)`` does, so that both counters
        always agree: a granule that two rows of a field share counts once per row, for the fields ISL
        encodes by rows. ``slices=False`` lists every point (the reference for the slice bitmaps);
        ``closed_form=False`` counts every row from the bitmap (the reference for
        :mod:`warpspeed.model.cell_rows`)."""
        self.kernel = kernel
        self.closed_form = closed_form
        self.granularity = granularity
        self.nfields = len(kernel.fields)
        self._slices = [field_slice_accesses(f, kernel.domain) if slices else None for f in kernel.fields]
        self._per_row = [not exact and e.per_dim is not None and len(e.field.shape) > 1
                         for e in field_encodings(kernel, granularity)]
        self._row_accesses: dict[tuple[int, bool, bool], list[RowAccess] | None] = {}

    def empty(self) -> AddressSet:
        return AddressSet(np.empty(0, dtype=np.int64))

    def footprint(self, cells: isl.Set, *, loads: bool = True, stores: bool = False) -> AddressSet:
        """Distinct granules the valid cells touch through the loads (and/or stores)."""
        pieces = as_cell_set(cells)
        keys = [_tagged(i, self._field_footprint(i, f, pieces, loads, stores))
                for i, f in enumerate(self.kernel.fields)]
        return AddressSet(_joined_fields(keys))

    def meet(self, cells: isl.Set, other: AddressSet) -> AddressSet:
        """The cells' load footprint intersected with ``other``: the rows and planes of the slice bitmaps that
        share no granule with ``other`` are not marked (a layer's rows and planes away from the wave)."""
        pieces = as_cell_set(cells)
        bounds = self._field_bounds(other)
        keys = [np.empty(0, dtype=np.int64)]
        for i, f in enumerate(self.kernel.fields):
            near = other.keys[bounds[i]:bounds[i + 1]]  # the field's keys, in place
            if near.size and f.loads:
                keys.append(self._field_meet(i, f, pieces, near))
        return AddressSet(_joined_fields(keys))

    def _field_meet(self, i: int, f: Field, cells: CellSet, near: np.ndarray) -> np.ndarray:
        """One field's load keys of the cells that are among the sorted distinct keys ``near`` (the field's)."""
        slices = self._slices[i]
        tag = i << FIELD_SHIFT
        if slices is not None and not cells.points and not self._per_row[i]:
            met = granules_meeting(f, slices[0], cells.boxes, self.granularity, near, tag)
            if met is not None:
                return met
        granules = near & GRANULE_MASK
        own = self._field_footprint(i, f, cells, True, False, granules)
        return _tagged(i, own[_members(own, granules)])

    def _field_footprint(self, i: int, f: Field, cells: CellSet, loads: bool, stores: bool,
                         near: np.ndarray | None = None) -> np.ndarray:
        """One field's sorted distinct granules (or per-row keys) of the cells, by slices where they apply
        (``near``: see :func:`granules_by_slices`)."""
        accesses = (f.loads if loads else ()) + (f.stores if stores else ())
        if not accesses:
            return np.empty(0, dtype=np.int64)
        slices = self._slices[i]
        if slices is not None and not cells.points:
            ld, st = slices
            granules = granules_by_slices(f, (ld if loads else []) + (st if stores else []), cells.boxes,
                                          self.granularity, self._per_row[i], near)
            if granules is not None:
                return granules
        return self._granules_by_points(f, accesses, cells.coordinates, self._per_row[i])

    def _granules_by_points(self, f: Field, accesses: tuple[Access, ...],
                            points: tuple[np.ndarray, np.ndarray, np.ndarray], per_row: bool) -> np.ndarray:
        x, y, z = points
        env = {"tidx": x, "tidy": y, "tidz": z}
        out = []
        for acc in accesses:
            index = np.broadcast_to(evaluate(acc.linear, env), x.shape)
            granules = (f.offset + index) * f.element_bytes // self.granularity
            out.append(row_keys(granules, index // f.shape[0]) if per_row else granules)
        return distinct(np.concatenate(out))

    def sizes_by_field(self, cells: isl.Set, *, loads: bool = True, stores: bool = False) -> tuple[int, ...]:
        """``count_by_field(footprint(...))``; fields marked by slices are counted without listing their keys."""
        pieces = as_cell_set(cells)
        return tuple(self._field_size(i, f, pieces, loads, stores) for i, f in enumerate(self.kernel.fields))

    def _field_size(self, i: int, f: Field, cells: CellSet, loads: bool, stores: bool) -> int:
        """``_field_footprint(...).size``, by counting the slice bitmaps' granules where they apply."""
        slices = self._slices[i]
        if slices is not None and not cells.points and not self._per_row[i] and (loads and f.loads or
                                                                                 stores and f.stores):
            ld, st = slices
            n = granule_count_by_slices(f, (ld if loads else []) + (st if stores else []), cells.boxes,
                                        self.granularity)
            if n is not None:
                return n
        return int(self._field_footprint(i, f, cells, loads, stores).size)

    def footprint_size(self, cells: isl.Set, *, loads: bool = True, stores: bool = False) -> int:
        """``footprint(...).size()``; fields counted per row are counted without listing their keys."""
        if not any(self._per_row):
            return sum(self.sizes_by_field(cells, loads=loads, stores=stores))
        pieces = as_cell_set(cells)
        total = 0
        for i, f in enumerate(self.kernel.fields):
            n = None
            slices = self._slices[i]
            if self._per_row[i] and slices is not None and not pieces.points:
                ld, st = slices
                wanted = (ld if loads else []) + (st if stores else [])
                n = self._cell_rows_count(f, wanted, pieces, (i, loads, stores)) if wanted else 0
                if n is None:
                    n = row_granule_count(f, wanted, pieces.boxes, self.granularity)
            if n is None:
                n = self._field_size(i, f, pieces, loads, stores)
            total += n
        return total

    def _cell_rows_count(self, f: Field, wanted: list[SliceAccess], cells: CellSet,
                         key: tuple[int, bool, bool]) -> int | None:
        """The per-row count in closed form (:mod:`warpspeed.model.cell_rows`) where it applies and pays (see
        :data:`CLOSED_FORM_OVERLAY_SHARE`); None elsewhere (then the rows are counted from the bitmap). ``key``:
        (field, loads, stores), under which the accesses as rows are kept."""
        if not self.closed_form:
            return None
        if key not in self._row_accesses:
            self._row_accesses[key] = row_accesses(f, wanted)
        marked = sum(math.prod(hi[a] - lo[a] + 1 for a in range(3)) for lo, hi in cells.boxes) * len(wanted)
        return cell_rows.count_if_cheaper(f, self._row_accesses[key], cells.boxes, self.granularity,
                                          CLOSED_FORM_OVERLAY_SHARE * marked)

    def count_by_field(self, fp: AddressSet) -> tuple[int, ...]:
        """Granules of a footprint per field."""
        return tuple(int(n) for n in np.diff(self._field_bounds(fp)))

    def _field_bounds(self, fp: AddressSet) -> np.ndarray:
        """Where each field's keys begin in a footprint, and its end (the keys are sorted by field)."""
        return np.searchsorted(fp.keys, np.arange(self.nfields + 1, dtype=np.int64) << FIELD_SHIFT)
