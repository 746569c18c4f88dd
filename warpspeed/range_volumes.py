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

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache

import islpy as isl
import numpy as np

from .cells import CellSet, as_cell_set
from .enumerated_volumes import FIELD_SHIFT
from .expressions import affine_form
from .isl_volumes import FieldEncoding, field_encodings
from .kernel import Field, Kernel

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
    starts, stops = starts[order], stops[order]
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
    """Whether every access of the field is affine and moves by at most ``granule_bytes`` per x step."""
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


def _rows(shifts: list[tuple[int, int]], y0: int, y1: int, z0: int, z1: int, cy: int, cz: int) -> np.ndarray:
    """``cy y' + cz z'`` of the distinct rows (y', z') = (y + dy, z + dz), (y, z) in the box's rows, over
    the (dy, dz) of ``shifts``: a bitmap over the rows they span, one slice per shift."""
    dys, dzs = [s[0] for s in shifts], [s[1] for s in shifts]
    ylo, zlo = y0 + min(dys), z0 + min(dzs)
    mark = np.zeros((z1 + max(dzs) - zlo + 1, y1 + max(dys) - ylo + 1), dtype=bool)
    for dy, dz in shifts:
        mark[z0 + dz - zlo:z1 + dz - zlo + 1, y0 + dy - ylo:y1 + dy - ylo + 1] = True
    zs, ys = np.nonzero(mark)
    return cz * (zs.astype(np.int64) + zlo) + cy * (ys.astype(np.int64) + ylo)


class RangeFootprints:
    """``isl_volumes.Footprints`` by granule ranges (same methods; footprints are :class:`GranuleRanges`).
    Only for kernels where :func:`applies`; others raise ``ValueError``. At ``granularity`` :data:`ELEMENTS`
    the granules are each field's elements (``footprint`` then gives a block's distinct elements, and
    :func:`full_granules` the sectors it writes completely)."""

    def __init__(self, kernel: Kernel, granularity: int, *, exact: bool = True):
        if not applies(kernel, granularity, exact):
            raise ValueError(f"granule ranges do not count kernel {kernel.name!r} at {granularity} B")
        self.kernel = kernel
        self.granularity = granularity
        self.nfields = len(kernel.fields)
        self._per_row = (_per_row_fields(kernel, granularity, exact) if granularity != ELEMENTS
                         else (False,) * len(kernel.fields))
        self._shifts = {(i, loads, stores): _row_shifts((_accesses(f, False) if loads else [])
                                                        + (_accesses(f, True) if stores else []))
                        for i, f in enumerate(kernel.fields) for loads in (False, True) for stores in (False, True)}

    def empty(self) -> GranuleRanges:
        return _empty()

    def footprint(self, cells: CellSet | isl.Set, *, loads: bool = True, stores: bool = False) -> GranuleRanges:
        """Distinct granules the valid cells touch through the loads (and/or stores)."""
        c = as_cell_set(cells)
        boxes = list(c.boxes) + [((x, y, z), (x, y, z)) for p in c.points for x, y, z in p.T.tolist()]
        starts, stops = [np.empty(0, dtype=np.int64)], [np.empty(0, dtype=np.int64)]
        for i, f in enumerate(self.kernel.fields):
            key = np.int64(i) << FIELD_SHIFT
            for slope in self._shifts[i, loads, stores]:
                for box in boxes:
                    for first, stop in self._ranges(f, slope, box, self._per_row[i]):
                        starts.append(first + key)
                        stops.append(stop + key)
        return _union(np.concatenate(starts), np.concatenate(stops))

    def _ranges(self, f: Field, slope: _RowShifts, box, per_row: bool) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """[first, stop) keys of the box's rows through the accesses of one slope: each distinct row once
        per distinct stretch of elements along it."""
        (x0, y0, z0), (x1, y1, z1) = box
        if not slope.cy:
            y0 = y1 = 0
        if not slope.cz:
            z0 = z1 = 0
        lo, hi = min(slope.cx * x0, slope.cx * x1), max(slope.cx * x0, slope.cx * x1)
        # per row shift: the element stretches along the row (stretches that touch merge unless rows count apart)
        by_stretches: dict[tuple[tuple[int, int], ...], list[tuple[int, int]]] = {}
        for shift, dxs in slope.shifts:
            stretches = [(lo + dxs[0], hi + dxs[0])]
            for dx in dxs[1:]:
                if not per_row and lo + dx <= stretches[-1][1] + 1:
                    stretches[-1] = (stretches[-1][0], hi + dx)
                else:
                    stretches.append((lo + dx, hi + dx))
            by_stretches.setdefault(tuple(stretches), []).append(shift)
        eb = f.element_bytes
        g = self.granularity or eb
        for stretches, shifts in by_stretches.items():
            v = _rows(shifts, y0, y1, z0, z1, slope.cy, slope.cz)
            for a, b in stretches:
                first = (v + a) * eb // g
                last = ((v + b) * eb + eb - 1) // g
                if per_row:  # the granule inside its row, and a key space where rows never meet
                    row = (v + a - f.offset) // f.shape[0]
                    shift = row * f.shape[0] * eb // g
                    per = (f.offset * eb + g + f.shape[0] * eb) // g + 2
                    first, last = row * per + first - shift, row * per + last - shift
                yield first, last + 1

    def footprint_size(self, cells: CellSet | isl.Set, *, loads: bool = True, stores: bool = False) -> int:
        return self.footprint(cells, loads=loads, stores=stores).size()

    def footprint_size_by_field(self, cells: CellSet | isl.Set, *, loads: bool = True,
                                stores: bool = False) -> tuple[int, ...]:
        """Granules per field of ``footprint(...)``."""
        return self.count_by_field(self.footprint(cells, loads=loads, stores=stores))

    def runs_by_field(self, fp: GranuleRanges) -> tuple[int, ...]:
        """Ranges of a footprint per field: runs of granules without an untouched one in between."""
        return tuple(int(n) for n in np.bincount(fp.starts >> FIELD_SHIFT, minlength=self.nfields))

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


__all__ = ["ELEMENTS", "GranuleRanges", "RangeFootprints", "applies", "field_applies", "full_granules"]
