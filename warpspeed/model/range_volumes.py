"""Footprints as granule ranges: the DRAM-stage counts of ``isl_volumes`` for accesses contiguous along x.

A box of cells is a stack of rows along x. Where an access's address moves by at most one granule per x
step (``|dx| * element_bytes <= granularity``: a stencil's or an LBM population's row in a
structure-of-arrays layout, or an access that does not move with x at all), the cells of one row of a
box touch one contiguous range of granules: from the granule of the first element's first byte to that
of the last element's last byte (the gaps between elements are shorter than a granule). So the
footprint of a cell set is the union of one range per (box row, access), and its size is the length of
that union. The cost grows with the rows of the cell set times the accesses, not with the cells: a wave
of a 640 x 512 x 512 domain is a few hundred rows.

Footprints are kept as sorted, disjoint ranges of keys ``field << FIELD_SHIFT | granule`` (the encoding of
``enumerated_volumes``), so intersection, difference and counts are exact. ``exact=False`` counts a
granule that two rows share once per row, as ``isl_volumes.Footprints(exact=False)`` does: the keys
are then ``row * per_row + granule in the row``, with ``per_row`` more than any row holds, so that no two
rows share a key. Accesses that do not qualify (array-of-structures rows, quasi-affine indices) are left
to the other counters (:func:`applies`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING

import numpy as np

from ..expressions import affine_form
from ..kernel import Field, Kernel
from .budgeted_memo import BudgetedMemo
from .cell_rows import RowAccess, count_if_cheaper, row_accesses, separated_row_counts
from .cells import CellSet, as_cell_set
from .field_encoding import FIELD_SHIFT, FieldEncoding, field_encodings, field_slice_accesses

if TYPE_CHECKING:
    import islpy as isl

_COVER_A, _COVER_B = 1, 2  # coverage weights of the two operands of a set operation


@dataclass(frozen=True)
class GranuleRanges:
    """Distinct keys as sorted, disjoint, non-adjacent half-open ranges [starts, stops)."""

    starts: np.ndarray
    stops: np.ndarray

    def intersect(self, other: GranuleRanges) -> GranuleRanges:
        return _combine(self, other, _COVER_A + _COVER_B)

    def subtract(self, other: GranuleRanges) -> GranuleRanges:
        return _combine(self, other, _COVER_A)

    def size(self) -> int:
        return int((self.stops - self.starts).sum())


def _empty() -> GranuleRanges:
    return GranuleRanges(np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64))


def _combine(a: GranuleRanges, b: GranuleRanges, coverage: int) -> GranuleRanges:
    """The keys whose coverage (1 for ``a``, 2 for ``b``, summed) equals ``coverage``: 3 is a ∩ b, 1 is a \\ b."""
    if a.starts.size == 0 or (b.starts.size == 0 and coverage != _COVER_A):
        return _empty()
    if b.starts.size == 0:
        return a
    pos = np.concatenate((a.starts, a.stops, b.starts, b.stops))
    step = np.concatenate((np.full(a.starts.size, _COVER_A), np.full(a.stops.size, -_COVER_A),
                           np.full(b.starts.size, _COVER_B), np.full(b.stops.size, -_COVER_B)))
    order = np.argsort(pos, kind="stable")
    pos, cover = pos[order], np.cumsum(step[order])
    last = np.ones(pos.size, dtype=bool)  # the coverage after the last event at each position holds until the next
    last[:-1] = pos[1:] != pos[:-1]
    pos, cover = pos[last], cover[last]
    inside = cover[:-1] == coverage  # segment [pos[i], pos[i + 1])
    if not inside.any():
        return _empty()
    before = np.concatenate(([False], inside[:-1]))
    after = np.concatenate((inside[1:], [False]))
    return GranuleRanges(pos[:-1][inside & ~before], pos[1:][inside & ~after])


def _union(starts: np.ndarray, stops: np.ndarray) -> GranuleRanges:
    """Sorted, disjoint, non-adjacent ranges covering the half-open ranges [starts, stops)."""
    if starts.size == 0:
        return _empty()
    order = np.argsort(starts, kind="stable")
    return _union_sorted(starts[order], stops[order])


def _union_sorted(starts: np.ndarray, stops: np.ndarray) -> GranuleRanges:
    """:func:`_union` of ranges already sorted by their starts."""
    if starts.size == 0:
        return _empty()
    reach = np.maximum.accumulate(stops)
    new = np.ones(starts.size, dtype=bool)
    new[1:] = starts[1:] > reach[:-1]
    first = np.flatnonzero(new)
    ends = np.concatenate((first[1:], [starts.size])) - 1
    return GranuleRanges(starts[first], reach[ends])


Affine = tuple[int, int, int, int]  # element index cx x + cy y + cz z + const (the field's offset included)


def _accesses(fld: Field, stores: bool) -> list[Affine] | None:
    out = []
    for acc in fld.stores if stores else fld.loads:
        form = affine_form(acc.linear)
        if form is None:
            return None
        (cx, cy, cz), c = form
        out.append((cx, cy, cz, c + fld.offset))
    return out


def _affine_accesses(fld: Field, stores: bool) -> list[Affine]:
    """:func:`_accesses` of a field whose accesses are all affine (as every field is where :func:`applies`)."""
    accesses = _accesses(fld, stores)
    assert accesses is not None, f"field {fld.name!r} has a quasi-affine access"
    return accesses


def _nearest(c: int, stride: int) -> int:
    """The multiple count of ``stride`` nearest to ``c`` (0 for a stride of 0)."""
    return (2 * c + abs(stride)) // (2 * stride) if stride else 0


@dataclass(frozen=True)
class _RowShifts:
    """Accesses with one slope (cx, cy, cz), as row shifts: the constant ``dz cz + dy cy + dx`` of an access
    is the row of cell (y + dy, z + dz) and ``dx`` elements along it. ``shifts`` maps (dy, dz) to the
    sorted dx of the accesses with that row shift. Any such split gives the same addresses; the nearest
    multiples make the rows of different accesses coincide, which is what saves work."""

    cx: int
    cy: int
    cz: int
    shifts: tuple[tuple[tuple[int, int], tuple[int, ...]], ...]


def _row_shifts(accesses: list[Affine]) -> tuple[_RowShifts, ...]:
    slopes: dict[tuple[int, int, int], dict[tuple[int, int], set[int]]] = {}
    for cx, cy, cz, c in accesses:
        dz = _nearest(c, cz)
        dy = _nearest(c - dz * cz, cy)
        dx = c - dz * cz - dy * cy
        slopes.setdefault((cx, cy, cz), {}).setdefault((dy, dz), set()).add(dx)
    return tuple(_RowShifts(*slope, tuple((k, tuple(sorted(v))) for k, v in sorted(shifts.items())))
                 for slope, shifts in sorted(slopes.items()))


ELEMENTS = 0
"""The granularity of distinct elements: each field's granule is its own element (exact counts only)."""


def _steps_within(fld: Field, granule_bytes: int) -> bool:
    """Whether every access of the field is affine and moves by at most ``granule_bytes`` per x step, and
    an element lies in one granule (the other counters count an element in the granule of its first byte)."""
    if granule_bytes % fld.element_bytes:
        return False
    for stores in (False, True):
        accs = _accesses(fld, stores)
        if accs is None or any(abs(a[0]) * fld.element_bytes > granule_bytes for a in accs):
            return False
    return fld.offset >= 0


def field_applies(enc: FieldEncoding, per_row: bool) -> bool:
    """Whether every access of the field moves by at most a granule per x step (and, ``per_row``, moves
    only the index of the field's first dimension along x, so that a row of cells stays in one row)."""
    if not _steps_within(enc.field, enc.granularity):
        return False
    if per_row:
        for index in enc.per_dim or ():
            forms = [affine_form(e) for e in index[1:]]
            if any(form is None or form[0][0] for form in forms):
                return False
    return True


@lru_cache(maxsize=256)
def applies(kernel: Kernel, granularity: int, exact: bool = True) -> bool:
    """Whether this counter counts every field of the kernel at ``granularity`` (or :data:`ELEMENTS`)."""
    if granularity == ELEMENTS:
        return exact and all(_steps_within(f, f.element_bytes) for f in kernel.fields)
    encodings = field_encodings(kernel, granularity)
    return all(field_applies(e, per_row)
               for e, per_row in zip(encodings, _per_row_fields(kernel, granularity, exact), strict=True))


def _per_row_fields(kernel: Kernel, granularity: int, exact: bool) -> tuple[bool, ...]:
    """Per field: whether a granule two rows share counts once per row (``exact=False``, fields that ISL
    encodes by rows; see ``isl_volumes.Footprints``)."""
    return tuple(not exact and e.per_dim is not None and len(e.field.shape) > 1
                 for e in field_encodings(kernel, granularity))


def _relative_rows(shifts: tuple[tuple[int, int], ...], ny: int, nz: int, cy: int, cz: int) -> np.ndarray:
    """``cy (y' - y0) + cz (z' - z0)`` of the distinct rows (y', z') = (y + dy, z + dz), (y, z) in the rows of a
    box of ``ny`` x ``nz`` rows from (y0, z0), over the (dy, dz) of ``shifts``: a bitmap over the rows that
    each cluster of overlapping shifts spans, one slice per shift (shifts far apart, such as the populations
    of an LBM field, get bitmaps of their own rather than one over the gaps between them)."""
    parts = []
    for cluster in _clusters(sorted(shifts, key=lambda s: (s[1], s[0])), 1, nz):
        for group in _clusters(sorted(cluster), 0, ny):
            dys, dzs = [s[0] for s in group], [s[1] for s in group]
            ylo, zlo = min(dys), min(dzs)
            mark = np.zeros((nz + max(dzs) - zlo, ny + max(dys) - ylo), dtype=bool)
            for dy, dz in group:
                mark[dz - zlo:dz - zlo + nz, dy - ylo:dy - ylo + ny] = True
            zs, ys = np.nonzero(mark)
            parts.append(cz * (zs.astype(np.int64) + zlo) + cy * (ys.astype(np.int64) + ylo))
    return parts[0] if len(parts) == 1 else np.concatenate(parts)


def _clusters(shifts: list[tuple[int, int]], axis: int, extent: int) -> list[list[tuple[int, int]]]:
    """``shifts`` (sorted along ``axis``) cut where the next shift's rows along ``axis`` do not meet the
    previous ones' (a gap of more than ``extent``)."""
    out = [[shifts[0]]]
    for s in shifts[1:]:
        if s[axis] - out[-1][-1][axis] > extent:
            out.append([s])
        else:
            out[-1].append(s)
    return out


@dataclass(frozen=True)
class _RowGroup:
    """Row shifts of one slope whose rows carry the same element stretches: ``stretches`` (s, 2) are the first
    and last element of each stretch less the box row's first element ``min(cx x0, cx x1)``."""

    shifts: tuple[tuple[int, int], ...]
    stretches: np.ndarray


CLOSED_FORM_MIN_RANGES = 10_000
CLOSED_FORM_OVERLAY_SHARE = 0.05
"""A field whose rows differ in a constant index (an LBM field's populations, one q-plane each) is counted per
row in closed form (:mod:`warpspeed.model.cell_rows`) where listing it would take at least
``CLOSED_FORM_MIN_RANGES`` ranges (rows times accesses) and the overlay's work is at most this share of them
(an LBM wave's layer sets list 300 k ranges over an overlay of 9 k). Profiled per field on the population fields
of ``benchmarks/bench_catalog.py``'s blocks (302 counts): the closed form takes 0.3-1 ms; listing 5-20 k ranges
0.2-1.4 ms (the closed form won 107 of 140), 20-50 k 1.7-6 ms (won all 12), above that 4-50 ms; below 5 k listing
won 101 of 127. The largest share seen was 0.028. Speed only, never a count."""
STENCIL_MIN_RANGES = 200_000
STENCIL_OVERLAY_SHARE = 0.12
"""The same for any other field (a stencil's, whose accesses overlap in the same rows): a listed range costs
0.005-0.1 us there, fewer where neighbouring rows repeat, so only large listings pay. Profiled per field on the
catalog's stencils and Allen-Cahn's phase field over the blocks of ``benchmarks/bench_catalog.py`` (536 counts):
the closed form takes 0.2-0.9 ms; below 50 k ranges listing won 482 of 508 (0.07-3.8 ms), at 50-150 k the
closed form won 12 of 20, above 200 k every case (0.5-0.8 against 1.6-8.6 ms), up to a share of 0.43. Lower
thresholds would save under 10 ms over those blocks. Speed only, never a count."""

MAX_CACHED_ROWS = 1 << 23  # relative rows kept for reuse (8 M int64: 64 MiB)


@dataclass(frozen=True)
class BoxCounts:
    """Per box (rows) and field (columns): granules, runs of granules, and granules of ``per`` elements that
    the box's footprint covers completely (0 where ``per`` was not given); ``coarser``: granules and runs at
    further byte granularities."""

    granules: np.ndarray
    runs: np.ndarray
    full: np.ndarray
    coarser: dict[int, tuple[np.ndarray, np.ndarray]]


def _per_box(box: np.ndarray, values: np.ndarray, k: int) -> np.ndarray:
    return np.bincount(box, weights=values.astype(np.float64), minlength=k).astype(np.int64)


class RangeFootprints:
    """``isl_volumes.Footprints`` by granule ranges (same methods; footprints are :class:`GranuleRanges`).
    Only for kernels where :func:`applies`; others raise ``ValueError``. At ``granularity`` :data:`ELEMENTS`
    the granules are each field's elements (``footprint`` then gives a block's distinct elements, and
    :func:`full_granules` the sectors it writes completely). :meth:`box_counts` counts many boxes at once
    (the blocks of a wave). Rows and stretches are kept for reuse: the boxes of a ranking repeat."""

    def __init__(self, kernel: Kernel, granularity: int, *, exact: bool = True):
        if not applies(kernel, granularity, exact):
            raise ValueError(f"granule ranges do not count kernel {kernel.name!r} at {granularity} B")
        self.kernel = kernel
        self.granularity = granularity
        self.nfields = len(kernel.fields)
        self._per_row = (_per_row_fields(kernel, granularity, exact) if granularity != ELEMENTS
                         else (False,) * len(kernel.fields))
        self._shifts = {(i, loads, stores): _row_shifts((_affine_accesses(f, False) if loads else [])
                                                        + (_affine_accesses(f, True) if stores else []))
                        for i, f in enumerate(kernel.fields) for loads in (False, True) for stores in (False, True)}
        self._slices = [field_slice_accesses(f, kernel.domain) for f in kernel.fields]  # for cell_rows
        self._row_accesses: dict[tuple[int, bool, bool], list | None] = {}
        self._groups: dict[tuple, tuple[_RowGroup, ...]] = {}
        self._rows: BudgetedMemo[np.ndarray] = BudgetedMemo(MAX_CACHED_ROWS)

    def empty(self) -> GranuleRanges:
        return _empty()

    def footprint(self, cells: CellSet | isl.Set, *, loads: bool = True, stores: bool = False) -> GranuleRanges:
        """Distinct granules the valid cells touch through the loads (and/or stores)."""
        return self._footprint(cells, loads, stores, range(self.nfields))

    def meet(self, cells: CellSet | isl.Set, other: GranuleRanges) -> GranuleRanges:
        """The cells' load footprint intersected with ``other``."""
        return self.footprint(cells).intersect(other)

    def _footprint(self, cells: CellSet | isl.Set, loads: bool, stores: bool, fields: Sequence[int]) -> GranuleRanges:
        """:meth:`footprint` of the given fields only."""
        c = as_cell_set(cells)
        boxes = list(c.boxes) + [((x, y, z), (x, y, z)) for p in c.points for x, y, z in p.T.tolist()]
        origins: dict[tuple[int, int, int], list] = {}  # boxes of one extent: one set of stretches for all
        for lo, hi in boxes:
            origins.setdefault(tuple(b - a + 1 for a, b in zip(lo, hi, strict=True)), []).append(lo)
        starts, stops = [np.empty(0, dtype=np.int64)], [np.empty(0, dtype=np.int64)]
        for i in fields:
            if not self._shifts[i, loads, stores]:
                continue
            pieces = [self._element_ranges(i, loads, stores, np.array(firsts, dtype=np.int64), extent)
                      for extent, firsts in origins.items()]
            if not pieces:
                continue
            first, stop = self._granule_ranges(i, np.concatenate([p[0].ravel() for p in pieces]),
                                               np.concatenate([p[1].ravel() for p in pieces]))
            key = np.int64(i) << FIELD_SHIFT
            starts.append(first + key)
            stops.append(stop + key)
        return _union(np.concatenate(starts), np.concatenate(stops))

    def box_counts(self, boxes: np.ndarray, *, loads: bool = True, stores: bool = False,
                   per: Sequence[int] | None = None, coarser: Sequence[int] = ()) -> BoxCounts:
        """Counts of each box's own footprint, for many boxes at once; ``boxes`` (k, 2, 3): first and last
        cell. ``per`` (elements per sector, per field) also counts the sectors each box covers completely
        (at granularity :data:`ELEMENTS`); ``coarser`` byte granularities (at :data:`ELEMENTS`) also count the
        same footprint's granules and runs of those sizes, from its merged element ranges."""
        k = boxes.shape[0]
        out = BoxCounts(np.zeros((k, self.nfields), dtype=np.int64), np.zeros((k, self.nfields), dtype=np.int64),
                        np.zeros((k, self.nfields), dtype=np.int64),
                        {g: (np.zeros((k, self.nfields), dtype=np.int64), np.zeros((k, self.nfields), dtype=np.int64))
                         for g in coarser})
        extents = boxes[:, 1, :] - boxes[:, 0, :] + 1
        classes: dict[tuple[int, int, int], list[int]] = {}
        for j, (ex, ey, ez) in enumerate(extents.tolist()):
            classes.setdefault((ex, ey, ez), []).append(j)
        for i in range(self.nfields):
            if not self._shifts[i, loads, stores]:
                continue
            if self._separated_counts(i, loads, stores, boxes, classes, out, None if per is None else per[i]):
                continue
            step = per[i] if per is not None else 1
            firsts, stops, owner = [], [], []
            base_of = np.zeros(k, dtype=np.int64)
            for extent, members in classes.items():
                lo, hi = self._element_ranges(i, loads, stores, boxes[members, 0, :], extent)
                first, stop = self._granule_ranges(i, lo, hi)
                # each box's keys from the start of its span (aligned to ``step``), boxes one span apart
                base = first.min(axis=1, keepdims=True) // step * step
                base_of[members] = base[:, 0]
                firsts.append(first - base)
                stops.append(stop - base)
                owner.append(np.broadcast_to(np.array(members, dtype=np.int64)[:, None], first.shape))
            first, stop, box = (np.concatenate([a.ravel() for a in arrays]) for arrays in (firsts, stops, owner))
            span = -(-(int(stop.max()) + 1) // step) * step
            ranges = _union(first + box * span, stop + box * span)
            which = ranges.starts // span
            out.granules[:, i] = _per_box(which, ranges.stops - ranges.starts, k)
            out.runs[:, i] = np.bincount(which, minlength=k)
            if per is not None:
                whole = np.maximum(ranges.stops // step - -(-ranges.starts // step), 0)
                out.full[:, i] = _per_box(which, whole, k)
            if coarser:
                eb = self.kernel.fields[i].element_bytes
                start = ranges.starts - which * span + base_of[which]  # absolute elements
                stop = ranges.stops - which * span + base_of[which]
                for g, (granules, runs) in out.coarser.items():
                    first_g, stop_g = start * eb // g, (stop * eb - 1) // g + 1
                    apart = which * (int(stop_g.max()) + 1)  # boxes apart, in ascending order as the ranges
                    merged = _union_sorted(first_g + apart, stop_g + apart)
                    box_g = merged.starts // (int(stop_g.max()) + 1)
                    granules[:, i] = _per_box(box_g, merged.stops - merged.starts, k)
                    runs[:, i] = np.bincount(box_g, minlength=k)
        return out

    def _separated_counts(self, i: int, loads: bool, stores: bool, boxes: np.ndarray,
                          classes: dict[tuple[int, int, int], list[int]], out: BoxCounts, per: int | None) -> bool:
        """Field ``i``'s column of ``out`` in closed form where its rows are apart
        (:func:`~warpspeed.model.cell_rows.separated_row_counts`: one access per q-plane, rows never within two
        granules of each other, so each touched row is a run of its own and no granule is shared; ``per``: also
        the granules of ``per`` elements each box covers completely); False (nothing written) where that does
        not hold for every class of boxes."""
        accesses = self._row_access_list(i, loads, stores)
        if self.granularity != ELEMENTS or accesses is None:
            return False
        fld = self.kernel.fields[i]
        counted = []
        for extent, members in classes.items():
            origins = boxes[members, 0, :]
            coarse = separated_row_counts(fld, accesses, origins, extent, tuple(out.coarser))
            whole = None if per is None else separated_row_counts(fld, accesses, origins, extent,
                                                                  (per * fld.element_bytes,), whole=True)
            if coarse is None or (per is not None and whole is None):
                return False
            counted.append((extent, members, coarse, whole))
        first_axis = accesses[0].first[0]
        followed = [a for a, _ in accesses[0].rest if a >= 0]
        for extent, members, coarse, whole in counted:
            if whole is not None:
                assert per is not None  # ``whole`` is only counted with ``per``
                out.full[members, i] = whole[per * fld.element_bytes]
            runs = math.prod(extent[a] for a in followed) * len(accesses)  # rows touched, each a run
            out.granules[members, i] = runs * extent[first_axis]
            out.runs[members, i] = runs
            for g, (granules, g_runs) in out.coarser.items():
                granules[members, i] = coarse[g]
                g_runs[members, i] = runs
        return True

    def _row_access_list(self, i: int, loads: bool, stores: bool) -> list[RowAccess] | None:
        """Field ``i``'s loads and/or stores as row accesses (:mod:`warpspeed.model.cell_rows`), or None."""
        key = (i, loads, stores)
        if key not in self._row_accesses:
            slices = self._slices[i]
            wanted = [] if slices is None else (slices[0] if loads else []) + (slices[1] if stores else [])
            self._row_accesses[key] = row_accesses(self.kernel.fields[i], wanted) if wanted else None
        return self._row_accesses[key]

    def _element_ranges(self, i: int, loads: bool, stores: bool, origins: np.ndarray,
                        extent: tuple[int, int, int]) -> tuple[np.ndarray, np.ndarray]:
        """First and last element (m, r) of every stretch of the rows of the boxes of ``extent`` cells from
        ``origins`` (m, 3) through field ``i``'s loads and/or stores (each distinct row once per distinct
        stretch along it); the field's offset included. Where rows count apart, a stretch merged from
        accesses in two rows of the field would count wrong: those are then kept apart."""
        lo, hi = self._stretches(i, loads, stores, origins, extent, merge=True)
        if self._per_row[i]:
            s0, off = self.kernel.fields[i].shape[0], self.kernel.fields[i].offset
            if not np.array_equal((lo - off) // s0, (hi - off) // s0):
                lo, hi = self._stretches(i, loads, stores, origins, extent, merge=False)
        return lo, hi

    def _stretches(self, i: int, loads: bool, stores: bool, origins: np.ndarray, extent: tuple[int, int, int],
                   merge: bool) -> tuple[np.ndarray, np.ndarray]:
        nx, ny, nz = extent
        x0, y0, z0 = origins[:, 0], origins[:, 1], origins[:, 2]
        los, his = [], []
        for s, slope in enumerate(self._shifts[i, loads, stores]):
            lo = np.minimum(slope.cx * x0, slope.cx * (x0 + nx - 1))
            base = (lo + slope.cy * y0 + slope.cz * z0)[:, None]
            for group in self._row_groups(i, loads, stores, s, abs(slope.cx) * (nx - 1), merge):
                v = base + self._relative_rows(group.shifts, ny if slope.cy else 1, nz if slope.cz else 1,
                                               slope.cy, slope.cz)[None, :]
                los.append((v[:, :, None] + group.stretches[:, 0]).reshape(v.shape[0], -1))
                his.append((v[:, :, None] + group.stretches[:, 1]).reshape(v.shape[0], -1))
        return np.concatenate(los, axis=1), np.concatenate(his, axis=1)

    def _granule_ranges(self, i: int, lo: np.ndarray, hi: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """[first, stop) keys of the element stretches [lo, hi] of field ``i``."""
        f = self.kernel.fields[i]
        eb = f.element_bytes
        g = self.granularity or eb
        if g == eb:
            first, last = lo, hi
        elif g % eb == 0 and (g // eb) & (g // eb - 1) == 0:  # elements per granule a power of two: a shift
            first, last = lo >> (g // eb).bit_length() - 1, hi >> (g // eb).bit_length() - 1
        else:
            first, last = lo * eb // g, (hi * eb + eb - 1) // g
        if self._per_row[i]:  # the granule inside its row, and a key space where rows never meet
            row = (lo - f.offset) // f.shape[0]
            shift = row * f.shape[0] * eb // g - row * ((f.offset * eb + g + f.shape[0] * eb) // g + 2)
            first, last = first - shift, last - shift
        return first, last + 1

    def _row_groups(self, i: int, loads: bool, stores: bool, s: int, width: int,
                    merge: bool) -> tuple[_RowGroup, ...]:
        """The row shifts of slope ``s`` grouped by their stretches, for box rows ``width`` elements long:
        stretches that touch merge if ``merge``."""
        key = (i, loads, stores, s, width, merge)
        if key not in self._groups:
            by_stretches: dict[tuple[tuple[int, int], ...], list[tuple[int, int]]] = {}
            for shift, dxs in self._shifts[i, loads, stores][s].shifts:
                stretches = [(dxs[0], width + dxs[0])]
                for dx in dxs[1:]:
                    if merge and dx <= stretches[-1][1] + 1:
                        stretches[-1] = (stretches[-1][0], width + dx)
                    else:
                        stretches.append((dx, width + dx))
                by_stretches.setdefault(tuple(stretches), []).append(shift)
            self._groups[key] = tuple(_RowGroup(tuple(sh), np.array(st, dtype=np.int64).reshape(-1, 2))
                                      for st, sh in by_stretches.items())
        return self._groups[key]

    def _relative_rows(self, shifts: tuple[tuple[int, int], ...], ny: int, nz: int, cy: int, cz: int) -> np.ndarray:
        key = (shifts, ny, nz, cy, cz)
        rows = self._rows.get(key)
        if rows is None:
            rows = _relative_rows(shifts, ny, nz, cy, cz)
            self._rows.put(key, rows, rows.size)
        return rows

    def footprint_size(self, cells: CellSet | isl.Set, *, loads: bool = True, stores: bool = False) -> int:
        """``footprint(...).size()``; the fields counted per row in closed form where it applies
        (:mod:`warpspeed.model.cell_rows`: no range per row and access listed)."""
        if not any(self._per_row):
            return self.footprint(cells, loads=loads, stores=stores).size()
        c = as_cell_set(cells)
        total, listed = 0, []
        for i, f in enumerate(self.kernel.fields):
            n = self._closed_form_count(i, f, c, loads, stores) if self._per_row[i] else None
            if n is None:
                listed.append(i)
            else:
                total += n
        if listed:  # only these: the others' keys would be listed for nothing
            total += self._footprint(c, loads, stores, listed).size()
        return total

    def _closed_form_count(self, i: int, f: Field, cells: CellSet, loads: bool, stores: bool) -> int | None:
        """Field ``i``'s per-row count in closed form where it pays (:data:`CLOSED_FORM_MIN_RANGES`,
        :data:`STENCIL_MIN_RANGES`), else None."""
        slices = self._slices[i]
        if cells.points or slices is None:
            return None
        wanted = (slices[0] if loads else []) + (slices[1] if stores else [])
        if not wanted:
            return 0
        accesses = self._row_access_list(i, loads, stores)
        if accesses is None:
            return None
        populations = any(a < 0 for a, _ in accesses[0].rest)
        least, share = ((CLOSED_FORM_MIN_RANGES, CLOSED_FORM_OVERLAY_SHARE) if populations
                        else (STENCIL_MIN_RANGES, STENCIL_OVERLAY_SHARE))
        listed = sum((hi[1] - lo[1] + 1) * (hi[2] - lo[2] + 1) for lo, hi in cells.boxes) * len(wanted)
        if listed < least:
            return None
        return count_if_cheaper(f, accesses, cells.boxes, self.granularity, share * listed)

    def sizes_by_field(self, cells: CellSet | isl.Set, *, loads: bool = True, stores: bool = False) -> tuple[int, ...]:
        """``count_by_field(footprint(...))``."""
        return self.count_by_field(self.footprint(cells, loads=loads, stores=stores))

    def count_by_field(self, fp: GranuleRanges) -> tuple[int, ...]:
        """Granules of a footprint per field."""
        n = np.bincount(fp.starts >> FIELD_SHIFT, weights=(fp.stops - fp.starts).astype(np.float64),
                        minlength=self.nfields)
        return tuple(int(v) for v in n)


def full_granules(fp: GranuleRanges, field: int, per: int) -> int:
    """Granules of ``per`` consecutive keys (aligned to multiples of ``per``) that a footprint of one field's
    elements covers completely: the sectors of ``per`` elements a block writes by itself."""
    sel = (fp.starts >> FIELD_SHIFT) == field
    key = np.int64(field) << FIELD_SHIFT
    first = -((key - fp.starts[sel]) // per)  # ceil((start - key) / per)
    stop = (fp.stops[sel] - key) // per
    return int(np.maximum(stop - first, 0).sum())


__all__ = ["ELEMENTS", "BoxCounts", "GranuleRanges", "RangeFootprints", "applies", "field_applies", "full_granules"]
