"""Footprints line by line: the exact DRAM-stage counts of array-of-structures fields.

In an array-of-structures field (lbmpy's ``zyxf``: shape ``(Q, X, Y, Z)``, the component fastest) an access
moves ``Q`` elements per x step, more than a granule, so the ranges of ``range_volumes`` (one per row and
access) do not apply, and the enumeration marks every element the cells span. But the components a cell's
accesses reach lie next to each other. Take the field's **x-line** (the elements of one index of every
dimension above the one x follows: ``Q X`` elements) as one long row. For a box of cells, which accesses
reach a line depends only on the line's indices (an access reaches the lines of the box's rows shifted by its
constants), and it is the same on each piece of the overlay of those shifted boxes (coordinate compression,
as in ``cell_rows``). On a piece, the union of the present accesses' elements ``Q (x + dx) + q`` (x over the
box's x-range) is one pattern that depends only on the box's width and the accesses present; its granules
depend besides only on where the pattern starts in the line and where the line starts in a granule (which
repeats every few lines). So a box's footprint is one granule bitmap per line it touches, each one of a few
bitmaps worked out once, and a footprint is the union over its boxes: per field, the sorted lines touched and
one packed bitmap of the line's granules each (:class:`LineSet`).

A granule that two neighbouring lines share (one line ends inside it) is kept in the lower line only, so
every granule is one bit of one line: the sizes are bit counts, and intersections and differences are bitwise
on the lines two footprints share. Exact, and the cost grows with the lines a cell set touches, not with its
cells or elements: a wave of lbmpy's D3Q19 in ``zyxf`` touches a few hundred lines of 19 x 258 elements.

A bitmap spans the line's whole x extent, so two things keep domains thousands of cells wide cheap (a layer of
the wave there is a whole plane: tens of thousands of lines, each 19 x 4096 elements or more). A size is counted
without a bitmap per line: lines with the same set of bitmaps hold the same granules, so each distinct set is
OR-ed and counted once, times its lines. And a box's bitmaps (one per class of its overlay: the accesses
present, where the line starts in a granule) are ORs of each access's own bitmap, listed once per box shape;
an element's bit comes in closed form and repeats along x (:meth:`FieldLines.bits_along`), so no per-line
table of bits is kept. On D3Q19 ``zyxf`` with 1x8x64 blocks one estimate then costs what the enumeration's
does (``benchmarks/bench_wide_domain.py``).

Where a granule counts once per row of the field it is touched from (``exact=False``: the cheap ISL count the
L2 line counts use; a row is the field's first dimension, a cell's ``Q`` components), a line's bits are its
pieces of a row and a granule instead: rows never reach over a line, so no bit is shared.

It applies (:func:`applies`) at a byte granularity where every access of every field is a slice (each index a
cell coordinate plus a constant, or a constant), the dimension x follows is the same in every access of a
field and every dimension below it is a constant (the component), every index stays inside its extent over
the domain, the elements tile a granule, a line is a granule long at least and the offset is not negative.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

import numpy as np

from ..kernel import Field, Kernel
from .budgeted_memo import BudgetedMemo
from .cells import Box, CellSet, as_cell_set
from .field_encoding import SliceAccess, field_encodings, field_slice_accesses

if TYPE_CHECKING:
    import islpy as isl

_POPCOUNT = np.array([bin(i).count("1") for i in range(256)], dtype=np.int64)  # set bits per byte
KEPT_BOX_LINES = 1 << 18
"""Lines of boxes kept per field and kind of access (with their bitmaps' indices: 4 MiB): the boxes of a
ranking's waves and layers repeat a few shapes at a few places. Speed only."""
KEPT_ACCESS_BITMAP_BYTES = 4 << 20
"""Bytes of the accesses' own bitmaps kept per field and kind of access, by box shape (width, start in the line,
line start in a granule; D3Q19 at 256^3: 19 bitmaps of 160 B a shape, at 4096 cells in x 2.4 KiB; bench_compare's
8-candidate comparison of blocks of 256-1024 threads lists 1800 shapes, 2240 where 64 are kept). Speed only."""
KEPT_BITMAPS = 1 << 14
"""Line bitmaps kept per field and kind of access (2.5 MiB for lbmpy's D3Q19 at 256^3 and 32 B sectors; a
ranking of its 49 blocks keeps about 900). A bitmap spans a whole x-line, so the most kept grows with the
domain's x extent: about 40 MB per field and kind at 4096 cells in x, though a ranking there keeps fewer (D3Q19
at 4096x1024x256, blocks of 256-1024 threads: at most 2800 in one table, 7.4 MiB in all). Speed only."""


def _set_bits(bits: np.ndarray) -> int:
    """Set bits of an array of unsigned integers."""
    if hasattr(np, "bitwise_count"):  # numpy 2
        return int(np.bitwise_count(bits).sum(dtype=np.int64))
    return int(_POPCOUNT[bits.view(np.uint8)].sum())


def _set_bits_per_row(words: np.ndarray) -> np.ndarray:
    """Set bits of each row of a (rows, words) array of 64-bit words."""
    if hasattr(np, "bitwise_count"):  # numpy 2
        return np.bitwise_count(words).sum(axis=1, dtype=np.int64)
    return _POPCOUNT[np.ascontiguousarray(words).view(np.uint8)].sum(axis=1)


@dataclass(frozen=True)
class FieldLines:
    """A field's accesses along its x-lines at a granularity of ``per`` elements. Line ``R`` starts at element
    ``offset + line R``; an access reaches element ``step x + along`` of the lines ``Σ line_steps[d] index_d``,
    where ``rows`` gives per dimension above x's (cell axis or -1 for a constant, constant)."""

    step: int  # elements per x step: the stride of the dimension x follows
    line: int  # elements per line
    line_steps: tuple[int, ...]  # lines per index of each dimension above x's
    offset: int
    per: int  # elements per granule
    along: tuple[int, ...]
    rows: tuple[tuple[tuple[int, int], ...], ...]
    row: int = 0  # elements per row where a granule counts once per row it is touched from (0: once)

    @property
    def width_bits(self) -> int:
        """Bits per line: the granules a line reaches, from the one of its first element, at any start (and
        where granules count per row, one more per row)."""
        return (self.per - 1 + self.line - 1) // self.per + 1 + (self.line // self.row if self.row else 0)

    def subset(self, which: range) -> FieldLines:
        return FieldLines(self.step, self.line, self.line_steps, self.offset, self.per,
                          tuple(self.along[i] for i in which), tuple(self.rows[i] for i in which), self.row)

    def bit_of(self, phase: int) -> np.ndarray:
        """The bit of every element of a line that starts ``phase`` elements into a granule: its granule, from
        the line's first, or where granules count per row, its (row, granule) piece (:meth:`bits_at` for some
        elements; this lists the line)."""
        at = np.arange(self.line, dtype=np.int64)
        if not self.row:
            return (at + phase) // self.per
        starts = (at % self.row == 0) | ((at + phase) % self.per == 0)
        return np.cumsum(starts) - 1

    def bits_at(self, phase: int, at: np.ndarray) -> np.ndarray:
        """``bit_of(phase)[at]`` without listing the line: where granules count per row, a piece starts at each
        row's start and each granule's, so an element's piece is the starts up to it, counted per kind, less
        the places both start (one residue class modulo the rows' and granules' common multiple), less one."""
        if not self.row:
            return (at + phase) // self.per
        granule_start = -phase % self.per  # the granules start at the elements of this residue
        n = at // self.row + (at - granule_start + self.per) // self.per
        both = _first_common(self.row, self.per, granule_start)
        if both is not None:
            common = self.row * self.per // math.gcd(self.row, self.per)
            n -= (at - both + common) // common
        return n

    def bits_along(self, phase: int, first: np.ndarray, width: int) -> np.ndarray:
        """``bits_at`` of the elements ``first + step x`` for x below ``width`` (a row per entry of ``first``),
        without a division per element: the bits repeat, moved along, every ``period`` x steps (the elements
        then move by a whole number of the granules' period, or where granules count per row, of the rows' and
        granules' common multiple)."""
        span = self.row * self.per // math.gcd(self.row, self.per) if self.row else self.per  # elements
        period = span // math.gcd(span, self.step)  # x steps
        bits_per_span = 1  # the starts in a span: of rows and of granules, less one where both start
        if self.row:
            both = _first_common(self.row, self.per, -phase % self.per) is not None
            bits_per_span = span // self.row + span // self.per - both
        moved = self.step * period // span * bits_per_span  # bits per period
        times = -(-64 // period)  # a period of at least 64 x steps: numpy adds long rows faster than short ones
        period, moved = period * times, moved * times
        head = self.bits_at(phase, first[:, None] + self.step * np.arange(min(period, width), dtype=np.int64))
        if width <= period:
            return head
        repeats = -(-width // period)
        every = head[:, None, :] + moved * np.arange(repeats, dtype=np.int64)[None, :, None]
        return every.reshape(first.size, repeats * period)[:, :width]


@lru_cache(maxsize=256)
def _first_common(row: int, per: int, residue: int) -> int | None:
    """The least multiple of ``row`` that is ``residue`` modulo ``per``, or None (the multiples of ``row``
    take ``per / gcd(row, per)`` residues, then repeat)."""
    return next((a for a in range(0, row * per // math.gcd(row, per), row) if a % per == residue), None)


def field_lines(fld: Field, accesses: list[SliceAccess], domain: tuple[int, int, int],
                granularity: int, per_row: bool = False) -> FieldLines | None:
    """The slice accesses along the field's x-lines, or None where they are not all of that form (see the
    module docstring); ``per_row``: a granule counts once per row of the field (its first dimension) it is
    touched from."""
    if fld.offset < 0 or granularity <= 0 or granularity % fld.element_bytes:
        return None
    dims = [next((d for d, (a, _) in enumerate(acc) if a == 0), -1) for acc in accesses]  # the one x follows
    if len(set(dims)) > 1 or -1 in dims:
        return None
    dx_dim = dims[0] if dims else 0
    along, rows = [], []
    for acc in accesses:
        if any(a >= 0 for a, _ in acc[:dx_dim]):
            return None
        for d, (a, c) in enumerate(acc):
            if c < 0 or c + (domain[a] - 1 if a >= 0 else 0) >= fld.shape[d]:
                return None
        inner = sum(s * c for s, (_, c) in zip(fld.strides, acc[:dx_dim], strict=False))
        along.append(fld.strides[dx_dim] * acc[dx_dim][1] + inner)
        rows.append(tuple(acc[dx_dim + 1:]))
    line = fld.strides[dx_dim] * fld.shape[dx_dim]
    per = granularity // fld.element_bytes
    if line < per:  # a granule would reach over three lines
        return None
    return FieldLines(fld.strides[dx_dim], line, tuple(s // line for s in fld.strides[dx_dim + 1:]), fld.offset, per,
                      tuple(along), tuple(rows), fld.shape[0] if per_row else 0)


@lru_cache(maxsize=256)
def _kernel_lines(kernel: Kernel, granularity: int,
                  exact: bool) -> tuple[tuple[FieldLines, FieldLines, FieldLines], ...] | None:
    """Per field, its loads', its stores' and both's :class:`FieldLines`; None where some field does not
    qualify. Not ``exact``: the fields that ISL encodes by rows count a granule once per row (as
    ``isl_volumes.Footprints(exact=False)`` and the other counters do)."""
    out = []
    for f, enc in zip(kernel.fields, field_encodings(kernel, granularity), strict=True):
        slices = field_slice_accesses(f, kernel.domain)
        per_row = not exact and enc.per_dim is not None and len(f.shape) > 1
        both = None if slices is None else field_lines(f, slices[0] + slices[1], kernel.domain, granularity, per_row)
        if slices is None or both is None:
            return None
        n = len(slices[0])
        out.append((both.subset(range(n)), both.subset(range(n, len(both.along))), both))
    return tuple(out)


def applies(kernel: Kernel, granularity: int, exact: bool = True) -> bool:
    """Whether this counter counts every field of the kernel at ``granularity`` bytes."""
    return _kernel_lines(kernel, granularity, exact) is not None


@dataclass(frozen=True)
class LineSet:
    """Distinct granules per field: the sorted lines holding some (``lines``) and each line's granules as
    packed bits (``bits``, (lines, bytes); bit ``b`` is the ``b``-th granule from the one of the line's first
    element; one a line shares with the line before is kept there only)."""

    lines: tuple[np.ndarray, ...]
    bits: tuple[np.ndarray, ...]

    def intersect(self, other: LineSet) -> LineSet:
        lines, bits = [], []
        for la, ba, lb, bb in zip(self.lines, self.bits, other.lines, other.bits, strict=True):
            common, ia, ib = np.intersect1d(la, lb, assume_unique=True, return_indices=True)
            lines.append(common)
            bits.append(ba[ia] & bb[ib])
        return LineSet(tuple(lines), tuple(bits))

    def subtract(self, other: LineSet) -> LineSet:
        bits = []
        for la, ba, lb, bb in zip(self.lines, self.bits, other.lines, other.bits, strict=True):
            at = np.minimum(np.searchsorted(lb, la), max(lb.size - 1, 0))
            found = np.flatnonzero(lb[at] == la) if lb.size else np.empty(0, dtype=np.int64)
            kept = ba.copy()
            kept[found] &= ~bb[at[found]]
            bits.append(kept)
        return LineSet(self.lines, tuple(bits))

    def size(self) -> int:
        return sum(self.sizes())

    def sizes(self) -> tuple[int, ...]:
        """Granules per field."""
        return tuple(_set_bits(b) for b in self.bits)


class _Bitmaps:
    """The packed granule bitmaps of one field's lines, kept: a piece's accesses and width, where its pattern
    starts in the line and where the line starts in a granule give one bitmap (and whether the line's first
    granule, shared with the line before, is touched: that bit belongs to the line before)."""

    def __init__(self, lines: FieldLines):
        self.lines = lines
        self._index: dict[tuple, int] = {}
        self._table = np.zeros((16, -(-lines.width_bits // 64)), dtype=np.uint64)  # the first ``_count`` rows kept
        self._shared = np.zeros(16, dtype=bool)
        self._count = 0
        # _access_bits by box width, start and phase
        self._accesses: BudgetedMemo[np.ndarray] = BudgetedMemo(KEPT_ACCESS_BITMAP_BYTES)
        # accesses with the same indices above x's reach the same lines from any box: one group each
        groups = sorted(set(lines.rows))
        rows = np.array(groups, dtype=np.int64).reshape(len(groups), len(lines.line_steps), 2)
        self._axes = np.maximum(rows[:, :, 0], 0)  # (groups, dimensions): the cell axis each index follows
        self._follows = rows[:, :, 0] >= 0
        self._constants = rows[:, :, 1]
        self.members = np.array([[r == g for r in lines.rows] for g in groups], dtype=bool).reshape(
            len(groups), len(lines.rows))
        self.overlays: dict[tuple, _Overlay] = {}  # by the shape of the lines' index ranges
        self.boxes: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}  # _box_lines' lines and rows, by box shape
        self._kept_lines = 0

    def trim(self) -> None:
        """Forget every kept bitmap, overlay and box where :data:`KEPT_BITMAPS` bitmaps are kept (between two
        footprints: the boxes' kept lines name bitmaps by their place in the table)."""
        if self._count >= KEPT_BITMAPS:
            self._index.clear()
            self._count = 0
            self.overlays.clear()
            self.boxes.clear()
            self._kept_lines = 0

    def keep(self, kept: dict, key: tuple, value, lines: int) -> None:
        """Keep an overlay or a box's lines (at most :data:`KEPT_BOX_LINES` lines of both in all)."""
        if self._kept_lines + lines > KEPT_BOX_LINES:
            self.overlays.clear()
            self.boxes.clear()
            self._kept_lines = 0
        kept[key] = value
        self._kept_lines += lines

    def spans(self, box: Box) -> np.ndarray:
        """The index range per dimension above x's of every group's shifted box: (groups, dimensions, 2)."""
        first, last = (np.where(self._follows, np.array(corner, dtype=np.int64)[self._axes], 0) + self._constants
                       for corner in box)
        return np.stack((first, last), axis=-1)

    def table(self) -> tuple[np.ndarray, np.ndarray]:
        """The kept bitmaps (rows, 64-bit words) and, per row, whether it touches the line's shared first
        granule."""
        return self._table[:self._count], self._shared[:self._count]

    def _add(self, key: tuple, words: np.ndarray, shared: bool) -> int:
        """Keep a packed bitmap (64-bit words, a table row's) under ``key``; its row."""
        n = self._count
        if n == self._shared.size:  # full: twice the room
            self._table = np.concatenate((self._table, np.zeros_like(self._table)))
            self._shared = np.concatenate((self._shared, np.zeros_like(self._shared)))
        self._table[n] = words
        self._shared[n] = shared
        self._index[key] = n
        self._count += 1
        return n

    def row(self, width: int, present: np.ndarray, named: bytes, start: int, phase: int) -> int:
        """The bitmap of the present accesses (bool per access; ``named``: its bytes) of a box ``width`` cells
        wide whose first cell's x is ``start`` elements into a line that starts ``phase`` elements into a
        granule: the OR of the accesses' own bitmaps (:meth:`_access_bits`)."""
        key = (width, named, start, phase)
        found = self._index.get(key)
        if found is not None:
            return found
        words = np.bitwise_or.reduce(self._access_bits(width, start, phase)[present], axis=0)
        granules = words.view(np.uint8)
        shared = bool(phase and not self.lines.row and granules[0] & 0x80)  # rows never share a granule
        if shared:  # the line's first granule (the first byte's high bit) belongs to the line before
            words = words.copy()
            words.view(np.uint8)[0] &= 0x7F
        return self._add(key, words, shared)

    def _access_bits(self, width: int, start: int, phase: int) -> np.ndarray:
        """Each access's own packed bitmap (accesses, 64-bit words) of a box ``width`` cells wide from ``start``
        elements into a line that starts ``phase`` elements into a granule: a box's classes differ only in the
        accesses present, so each access's elements are listed once per box shape, not once per class."""
        key = (width, start, phase)
        found = self._accesses.get(key)
        if found is not None:
            return found
        ls = self.lines
        bits = ls.bits_along(phase, start + np.array(ls.along, dtype=np.int64), width)
        row_bits = self._table.shape[1] * 64
        granules = np.zeros((len(ls.along), row_bits), dtype=bool)
        granules.reshape(-1)[(bits + row_bits * np.arange(len(ls.along), dtype=np.int64)[:, None]).ravel()] = True
        packed = np.ascontiguousarray(np.packbits(granules, axis=1)).view(np.uint64)
        return self._accesses.put(key, packed, packed.nbytes)

    def last_granule(self, phase: int) -> int:
        """The bitmap of only the last granule of a line that starts ``phase`` elements into a granule."""
        key = ("last", phase)
        found = self._index.get(key)
        if found is not None:
            return found
        granules = np.zeros(self._table.shape[1] * 64, dtype=bool)
        granules[self.lines.bits_at(phase, np.array([self.lines.line - 1]))] = True
        return self._add(key, np.packbits(granules).view(np.uint64), False)


def _box_lines(bitmaps: _Bitmaps, box: Box) -> tuple[np.ndarray, np.ndarray]:
    """The lines the box's cells touch and the index of each one's kept bitmap (a line may come twice)."""
    ls = bitmaps.lines
    (x0, _, _), (x1, _, _) = box
    spans = bitmaps.spans(box)
    least = spans[:, :, 0].min(axis=0)
    first = int(np.dot(least, ls.line_steps))  # the line of the overlay's first corner
    phases = ls.per // math.gcd(ls.line, ls.per)  # lines start at the same place in a granule this many lines apart
    shape = ((spans - least[None, :, None]).tobytes(), first % phases)
    found = bitmaps.boxes.get((x0, x1, shape))
    if found is None:
        overlay = bitmaps.overlays.get(shape)
        if overlay is None:
            overlay = _overlay(ls, bitmaps.members, spans - least[None, :, None], first % phases)
            bitmaps.keep(bitmaps.overlays, shape, overlay, overlay.line.size)
        rows = np.array([bitmaps.row(x1 - x0 + 1, present, named, ls.step * x0, phase) for present, named, phase
                         in zip(overlay.present, overlay.named, overlay.phase, strict=True)], dtype=np.int64)
        found = (overlay.line, rows[overlay.which])
        bitmaps.keep(bitmaps.boxes, (x0, x1, shape), found, found[0].size)
    return found[0] + first, found[1]


@dataclass(frozen=True)
class _Overlay:
    """The lines of the overlay of some index ranges (``line``, from its first corner) and each one's class
    (``which``): classes are (accesses present, where the line starts in a granule) pairs, ``present`` (classes,
    accesses) and ``phase`` (classes,)."""

    line: np.ndarray
    which: np.ndarray
    present: np.ndarray
    phase: tuple[int, ...]

    @cached_property
    def named(self) -> tuple[bytes, ...]:
        """Each class's accesses present as bytes (what names its bitmap)."""
        return tuple(p.tobytes() for p in self.present)


def _overlay(ls: FieldLines, members: np.ndarray, spans: np.ndarray, first: int) -> _Overlay:
    """The overlay of the index ranges ``spans`` (groups of accesses, dimensions, 2; from 0 in each dimension;
    ``members`` (groups, accesses)) of lines from line ``first`` (its lines counted from there): coordinate
    compression per dimension, the groups present on each piece, and every line of the pieces some group
    reaches."""
    groups = spans.shape[0]
    holds = np.ones((groups, 1), dtype=bool)  # (groups, pieces)
    line, piece = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    for d, step in enumerate(ls.line_steps):
        lo, hi = spans[:, d, 0], spans[:, d, 1] + 1
        if groups == 1:  # one piece
            index = np.arange(lo[0], hi[0], dtype=np.int64)
        else:
            e = np.unique(np.concatenate((lo, hi)))
            inside = (e[None, :-1] >= lo[:, None]) & (e[None, 1:] <= hi[:, None])
            holds = (holds[:, :, None] & inside[:, None, :]).reshape(groups, -1)
            index = np.arange(e[0], e[-1], dtype=np.int64)
            piece = (piece[:, None] * (e.size - 1) + np.repeat(np.arange(e.size - 1), np.diff(e))[None, :]).ravel()
        line = (line[:, None] + step * index[None, :]).ravel()
    phase = (ls.offset + ls.line * (line + first)) % ls.per
    if groups > 1:
        reached = np.asarray(holds.any(axis=0))
        kept = reached[piece]
        line, piece, phase = line[kept], piece[kept], phase[kept]
    code = piece * ls.per + phase if groups > 1 else phase
    used = np.zeros(holds.shape[1] * ls.per, dtype=bool)
    used[code] = True
    classes = np.flatnonzero(used)
    present = (holds[:, classes // ls.per].T.astype(np.uint8) @ members.astype(np.uint8)) > 0
    line.setflags(write=False)
    return _Overlay(line, (np.cumsum(used) - 1)[code], present, tuple((classes % ls.per).tolist()))


class LineFootprints:
    """``isl_volumes.Footprints`` (exact) line by line (same methods; footprints are :class:`LineSet`). Only for
    kernels where :func:`applies`; others raise ``ValueError``. The lines' bitmaps are kept for reuse."""

    def __init__(self, kernel: Kernel, granularity: int, *, exact: bool = True):
        """``exact=False`` counts as ``isl_volumes.Footprints(exact=False)`` does: a granule that two rows of a
        field share counts once per row, for the fields ISL encodes by rows."""
        lines = _kernel_lines(kernel, granularity, exact)
        if lines is None:
            raise ValueError(f"x-lines do not count kernel {kernel.name!r} at {granularity} B")
        self.kernel = kernel
        self.granularity = granularity
        self.nfields = len(kernel.fields)
        self._bitmaps = {(i, loads, stores): _Bitmaps(f[0 if not stores else 1 if not loads else 2])
                         for i, f in enumerate(lines) for loads in (False, True) for stores in (False, True)
                         if loads or stores}

    def empty(self) -> LineSet:
        lines = [self._bitmaps[i, True, False].lines for i in range(self.nfields)]
        return LineSet(tuple(_none() for _ in lines), tuple(_no_bits(ls) for ls in lines))

    def footprint(self, cells: CellSet | isl.Set, *, loads: bool = True, stores: bool = False) -> LineSet:
        """Distinct granules the cells touch through the loads (and/or stores)."""
        if not (loads or stores):
            return self.empty()
        return self._footprint(cells, loads, stores)

    def _footprint(self, cells: CellSet | isl.Set, loads: bool, stores: bool,
                   within: LineSet | None = None) -> LineSet:
        """:meth:`footprint`; ``within``: only the lines it holds (those of its lines the cells touch)."""
        lines, bits = [], []
        for i, found in enumerate(self._found(cells, loads, stores)):
            line, row = _field_lines_of(self._bitmaps[i, loads, stores], found,
                                        None if within is None else within.lines[i])
            lines.append(line)
            bits.append(row)
        return LineSet(tuple(lines), tuple(bits))

    def _found(self, cells: CellSet | isl.Set, loads: bool, stores: bool) -> list[list[tuple[np.ndarray, np.ndarray]]]:
        """Per field, each box's lines and their kept bitmaps (:func:`_box_lines`)."""
        c = as_cell_set(cells)
        boxes = list(c.boxes) + [((x, y, z), (x, y, z)) for p in c.points for x, y, z in p.T.tolist()]
        out = []
        for i in range(self.nfields):
            bitmaps = self._bitmaps[i, loads, stores]
            bitmaps.trim()
            out.append([_box_lines(bitmaps, box) for box in boxes] if bitmaps.lines.along else [])
        return out

    def meet(self, cells: CellSet | isl.Set, other: LineSet) -> LineSet:
        """The cells' load footprint intersected with ``other`` (its lines that ``other`` lacks are not merged)."""
        return self._footprint(cells, True, False, within=other).intersect(other)

    def footprint_size(self, cells: CellSet | isl.Set, *, loads: bool = True, stores: bool = False) -> int:
        return sum(self.sizes_by_field(cells, loads=loads, stores=stores))

    def sizes_by_field(self, cells: CellSet | isl.Set, *, loads: bool = True, stores: bool = False) -> tuple[int, ...]:
        """``count_by_field(footprint(...))``, without listing a bitmap per line (:func:`_field_count`)."""
        if not (loads or stores):
            return (0,) * self.nfields
        return tuple(_field_count(self._bitmaps[i, loads, stores], found)
                     for i, found in enumerate(self._found(cells, loads, stores)))

    def count_by_field(self, fp: LineSet) -> tuple[int, ...]:
        """Granules of a footprint per field."""
        return fp.sizes()


def _none() -> np.ndarray:
    return np.empty(0, dtype=np.int64)


def _no_bits(lines: FieldLines) -> np.ndarray:
    return np.empty((0, -(-lines.width_bits // 64)), dtype=np.uint64)


def _moved_pairs(bitmaps: _Bitmaps, found: list[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    """The boxes' (line, bitmap) pairs (a line may come several times), with the first granule a line shares
    with the line before moved there: the line before gets the bitmap of its last granule."""
    if not found or not sum(f[0].size for f in found):
        return _none(), _none()
    line = np.concatenate([f[0] for f in found])
    row = np.concatenate([f[1] for f in found])
    _, shared = bitmaps.table()
    moved = shared[row]
    if moved.any():
        before = line[moved] - 1
        ls = bitmaps.lines
        phases = (ls.offset + ls.line * before) % ls.per
        last = np.zeros(ls.per, dtype=np.int64)  # the bitmap of the last granule, per line start in a granule
        for p in np.unique(phases).tolist():
            last[p] = bitmaps.last_granule(p)
        line = np.concatenate((line, before))
        row = np.concatenate((row, last[phases]))
    return line, row


def _field_lines_of(bitmaps: _Bitmaps, found: list[tuple[np.ndarray, np.ndarray]],
                    within: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """The sorted distinct lines of the boxes' (line, bitmap) pairs and each one's bitmap, OR-ed, with the first
    granule a line shares with the line before moved there; ``within`` (sorted distinct lines): only those."""
    line, row = _moved_pairs(bitmaps, found)
    if within is not None and line.size:
        at = np.minimum(np.searchsorted(within, line), max(within.size - 1, 0))
        kept = np.flatnonzero(within[at] == line) if within.size else np.empty(0, dtype=np.int64)
        line, row = line[kept], row[kept]
    if not line.size:
        return _none(), _no_bits(bitmaps.lines)
    table, _ = bitmaps.table()
    order = np.argsort(line, kind="stable")
    line, row = line[order], row[order]
    first = np.flatnonzero(np.concatenate(([True], line[1:] != line[:-1])))
    if first.size == line.size:
        return line, table[row]
    return line[first], np.bitwise_or.reduceat(table[row], first, axis=0)


def _field_count(bitmaps: _Bitmaps, found: list[tuple[np.ndarray, np.ndarray]]) -> int:
    """The granules of the boxes' (line, bitmap) pairs, without listing a bitmap per line: lines with the same
    set of bitmaps have the same granules, so each distinct set is OR-ed and counted once, times its lines (a
    footprint of a whole plane of a wide domain is thousands of lines of a few such sets)."""
    line, row = _moved_pairs(bitmaps, found)
    if not line.size:
        return 0
    table, _ = bitmaps.table()
    order = np.argsort(line, kind="stable")
    line, row = line[order], row[order]
    first = np.flatnonzero(np.concatenate(([True], line[1:] != line[:-1])))
    pairs = np.diff(np.append(first, line.size))  # per line
    uses = np.bincount(row[first[pairs == 1]], minlength=table.shape[0])  # lines of one bitmap, per bitmap
    used = np.flatnonzero(uses)
    total = int(np.dot(_set_bits_per_row(table[used]), uses[used]))
    several = np.repeat(pairs > 1, pairs)
    if several.any():  # the lines of several pairs: their distinct sets of bitmaps
        line, row = line[several], row[several]
        order = np.lexsort((row, line))
        line, row = line[order], row[order]
        distinct = np.concatenate(([True], (line[1:] != line[:-1]) | (row[1:] != row[:-1])))
        line, row = line[distinct], row[distinct]
        first = np.flatnonzero(np.concatenate(([True], line[1:] != line[:-1])))
        rows_per_line = np.diff(np.append(first, line.size))
        for k in np.flatnonzero(np.bincount(rows_per_line)).tolist():  # the lines of k bitmaps: k rows each
            kinds, lines = _distinct_rows(row[first[rows_per_line == k][:, None] + np.arange(k)[None, :]])
            total += int(np.dot(_set_bits_per_row(np.bitwise_or.reduce(table[kinds], axis=1)), lines))
    return total


def _distinct_rows(sets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a 2-d array and how often each comes (``np.unique(axis=0)``, without its copy
    of every row into one structured value)."""
    sets = sets[np.lexsort(sets.T[::-1])]
    starts = np.flatnonzero(np.concatenate(([True], (sets[1:] != sets[:-1]).any(axis=1))))
    return sets[starts], np.diff(np.append(starts, len(sets)))


__all__ = ["FieldLines", "LineFootprints", "LineSet", "applies", "field_lines"]
