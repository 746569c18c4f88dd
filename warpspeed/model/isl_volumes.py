"""Implicit (ISL) sector footprints of thread sets: the wave, its y- and z-layer sets, reuse ranges.

Thread sets are contiguous ranges of linear block ids, turned into at most five boxes of cells (clipped
to the domain: the ``if (tid >= N) return`` guard). Each access maps cells to addresses; an address is
encoded as ``[f, u, a1, .., a3]``: field index, the sector (or line) inside the field's row ``a1..`` of
its allocated shape, counted from the row's first element with the row's true alignment. A sector that
straddles two rows is canonicalized to the next row's first sector, so the encoding is a bijection onto
the linear sectors and counts, intersections and differences are exact. Only when an access cannot be
written per dimension is the field's linear index used (``[f, sector]``, exact but slower to count).
A row's byte phase is a ``mod`` of its indices. When it changes from one cell to the next along x and mixes
several row indices (array-of-structures layouts: a row is one cell's values), ISL counts take seconds to
minutes; :func:`counts_are_dear` sends such kernels to ``enumerated_volumes`` instead.
The accesses are split into groups whose address ranges over the whole domain are disjoint (checked with
ISL once per kernel); footprints are kept, intersected and counted group by group (:class:`Footprint`).

Nothing here enumerates threads or blocks: the cost is independent of the domain size.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from ..expressions import Expr, affine_form, to_isl
from ..kernel import Access, Field, Kernel
from .cells import CellSet, as_isl
from .field_encoding import CELL_VARS, MAX_ROW_DIMS, FieldEncoding, field_encodings, row_moduli
from .lazy_isl import isl


def _isl(e: Expr) -> str:
    return "(" + to_isl(e, CELL_VARS) + ")"


def _rho(e: FieldEncoding, rows: Sequence[str]) -> str:
    """Byte phase of a row's first element inside a granule (0 when rows are granule aligned)."""
    f, g = e.field, e.granularity
    terms = [f"{s * f.element_bytes}*({a})" for s, a in zip(f.strides[1:], rows, strict=False)
             if (s * f.element_bytes) % g]
    return f"(({' + '.join(terms)}) mod {g})" if terms else "0"

def _u(e: FieldEncoding, rows: Sequence[str], x_bytes: str) -> str:
    f, g = e.field, e.granularity
    return f"floor(({f.offset * f.element_bytes} + {_rho(e, rows)} + {x_bytes})/{g})"

def access_maps(e: FieldEncoding, stores: bool) -> list[isl.Map]:
    """Cell -> encoded address maps of the field's loads (or stores)."""
    f, g = e.field, e.granularity
    first = len(f.loads) if stores else 0
    out = []
    for pos, acc in enumerate(f.stores if stores else f.loads, start=first):
        if e.per_dim is None:
            addr = f"floor(({f.offset} + {_isl(acc.linear)})*{f.element_bytes}/{g})"
            tgt = [str(e.index), addr] + ["0"] * MAX_ROW_DIMS
        else:
            idx = e.per_dim[pos]
            rows = [_isl(e) for e in idx[1:]]
            u = _u(e, rows, f"{_isl(idx[0])}*{f.element_bytes}")
            tgt = [str(e.index), u] + rows + ["0"] * (MAX_ROW_DIMS - len(rows))
        names = [f"o{i}" for i in range(len(tgt))]
        cons = " and ".join(f"{n} = {t}" for n, t in zip(names, tgt, strict=True))
        out.append(isl.Map(f"{{ [x, y, z] -> [{', '.join(names)}] : {cons} }}"))
    return out

def canonical_map(e: FieldEncoding) -> isl.Map | None:
    """Map that sends a row's last granule, when it is shared with the next row, to that row's first.

    Rows are at least one granule long (see ``field_encodings``), so a granule spans at most two rows.
    """
    f, g = e.field, e.granularity
    nd = len(f.shape)
    if e.per_dim is None or nd == 1:
        return None
    rows = [f"a{d}" for d in range(1, nd)]
    pad = ["0"] * (MAX_ROW_DIMS - len(rows))
    src = ["f", "u"] + rows + [f"p{i}" for i in range(len(pad))]
    eb = f.element_bytes
    u_last = _u(e, rows, f"{(f.shape[0] - 1) * eb}")
    shared = f"(({(f.offset + f.shape[0]) * eb} + {_rho(e, rows)}) mod {g}) >= 1"
    domain = " and ".join([f"f = {e.index}"] + [f"0 <= {a} < {n}" for a, n in zip(rows, f.shape[1:],
                                                                                     strict=True)]
                          + [f"{p} = 0" for p in src[2 + len(rows):]])
    last_row = " and ".join(f"{a} = {n - 1}" for a, n in zip(rows, f.shape[1:], strict=True))
    pieces = [f"[{', '.join(src)}] -> [{', '.join(src)}] : {domain} and "
              f"(u < {u_last} or not ({shared}) or ({last_row}))"]
    # next row: increment a1, carrying into a2, a3 when a row index is at its last value
    for k in range(len(rows)):
        nxt = ["0"] * k + [f"{rows[k]} + 1"] + rows[k + 1:]
        cond = [f"{rows[j]} = {f.shape[j + 1] - 1}" for j in range(k)] + [
            f"{rows[k]} < {f.shape[k + 1] - 1}"]
        u_first = _u(e, nxt, "0")
        pieces.append(f"[{', '.join(src)}] -> [f, {u_first}, {', '.join(nxt)}{''.join(', ' + p for p in pad)}]"
                      f" : {domain} and u = {u_last} and {shared} and {' and '.join(cond)}")
    return coalesced(isl.Map("{ " + "; ".join(pieces) + " }"))


def counts_are_dear(kernel: Kernel, granularity: int) -> bool:
    """Whether ISL would count this kernel's footprints slowly, so that they are enumerated instead
    (``enumerated_volumes``): some field's row phase changes from one cell to the next along x (a row index
    moves with x: array-of-structures layouts, where a row is one cell) and depends on two or more row
    indices. The footprint then falls apart into one piece per cell, each with its own phase. Rows along x
    (structure of arrays) keep one phase for many cells, and a phase of one index is a single ``mod``: both
    stay with ISL (measured: D3Q19 in zyxf, 10 CPU-s with ISL, 2 by enumeration; in fzyx the reverse)."""
    return any(_phase_moves_with_x(e) for e in field_encodings(kernel, granularity))


def _phase_moves_with_x(e: FieldEncoding) -> bool:
    if e.per_dim is None:
        return any(_linear_phase_moves_with_x(acc, e.field, e.granularity) for acc in e.field.loads + e.field.stores)
    moduli = row_moduli(e.field, e.granularity)
    if sum(m > 1 for m in moduli) < 2:
        return False
    for idx in e.per_dim:
        for row, m in zip(idx[1:], moduli, strict=True):
            form = affine_form(row)
            if m > 1 and (form is None or form[0][0] % m):
                return True
    return False


def _linear_phase_moves_with_x(acc: Access, fld: Field, granularity: int) -> bool:
    """For a field counted by linear addresses (rows shorter than a granule, e.g. one cell of an array of
    structures): whether an x step is not contiguous and moves the phase inside a granule, and y or z moves
    it too (the same mixing as rows of one cell; measured: lbmpy D3Q15 in zyxf, 120 B per cell, 9 CPU-s per
    estimate with ISL at 128 B)."""
    form = affine_form(acc.linear)
    if form is None:
        return False
    (cx, cy, cz), _ = form
    moves = [(c * fld.element_bytes) % granularity != 0 for c in (cx, cy, cz)]
    return abs(cx) > 1 and moves[0] and (moves[1] or moves[2])


@dataclass(frozen=True)
class Footprint:
    """Encoded addresses of a cell set, one ISL set per access group of its :class:`Footprints`.

    The groups' address ranges are disjoint, so sizes add up and set operations work group by group.
    """

    parts: tuple[isl.Set, ...]  # in the order of Footprints.groups

    def intersect(self, other: Footprint) -> Footprint:
        return Footprint(tuple(a.intersect(b) for a, b in zip(self.parts, other.parts, strict=True)))

    def subtract(self, other: Footprint) -> Footprint:
        return Footprint(tuple(a.subtract(b) for a, b in zip(self.parts, other.parts, strict=True)))

    def size(self) -> int:
        """Number of distinct encoded addresses."""
        return sum(count(p) for p in self.parts)


@dataclass(frozen=True)
class AccessGroup:
    """Accesses of one field whose addresses may coincide; other groups' addresses never meet them."""

    field: int
    loads: isl.Map | None  # cells -> encoded addresses, union over the group's loads (None: no loads)
    stores: isl.Map | None
    accesses: tuple[int, int]  # number of loads and of stores in the group


def _no_addresses() -> isl.Set:
    return isl.Set("{ [f, u, a1, a2, a3] : 1 = 0 }")


def coalesced(s: isl.Set | isl.Map) -> isl.Set | isl.Map:
    """``s`` with its pieces merged where ISL can (fewer pieces: cheaper counts), or ``s`` unchanged where
    ISL's coalescing fails: the isl of islpy 2026.2 stops on some unions of footprints ("original
    tableau does not correspond to original basic map"); the set is the same either way."""
    try:
        return s.coalesce()
    except isl.Error:
        return s


def _union(maps: Sequence[isl.Map]) -> isl.Map | None:
    out = None
    for m in maps:
        out = m if out is None else out.union(m)
    return None if out is None else coalesced(out)


def connected_groups(items: Sequence, linked) -> list[list[int]]:
    """Indices of ``items`` in the connected components of the symmetric relation ``linked(a, b)``, each in
    increasing order, ordered by their smallest member; ``linked`` is not asked about pairs already joined."""
    n = len(items)
    parent = list(range(n))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i in range(n):
        for j in range(i + 1, n):
            if root(i) != root(j) and linked(items[i], items[j]):
                parent[root(j)] = root(i)
    members: dict[int, list[int]] = {}
    for i in range(n):
        members.setdefault(root(i), []).append(i)
    return list(members.values())


def _overlap(a: isl.Set, b: isl.Set) -> bool:
    return not a.intersect(b).is_empty()


def access_groups(encodings: Sequence[FieldEncoding], domain: tuple[int, int, int],
                  canonical: bool) -> tuple[AccessGroup, ...]:
    """Split every field's accesses into groups whose address ranges over the whole domain are disjoint.

    Two accesses are in one group when their images of the domain's cells intersect (transitively). Any
    cell set lies in the domain, so the footprint of a group never meets another group's: the footprint
    of the kernel is the disjoint union of the groups' footprints. Counting and intersecting small groups
    is much cheaper than the whole union for kernels whose accesses touch separate rows (the populations
    of an LBM field); a stencil whose accesses all overlap is one group per field, as before.
    """
    cells = isl.Set("{ [x, y, z] : " + " and ".join(f"0 <= {v} < {n}" for v, n in zip("xyz", domain, strict=True))
                    + " }")
    out = []
    for e in encodings:
        maps = [(False, m) for m in access_maps(e, stores=False)] + [(True, m) for m in access_maps(e, stores=True)]
        to_first = canonical_map(e) if canonical else None
        if to_first is not None:
            maps = [(st, m.apply_range(to_first)) for st, m in maps]
        images = [cells.apply(m) for _, m in maps]
        for idx in connected_groups(images, _overlap):
            loads = [maps[i][1] for i in idx if not maps[i][0]]
            stores = [maps[i][1] for i in idx if maps[i][0]]
            out.append(AccessGroup(e.index, _union(loads), _union(stores), (len(loads), len(stores))))
    return tuple(out)


class Footprints:
    """Encoded-address footprints of cell sets for one kernel at one granularity (maps built once)."""

    def __init__(self, kernel: Kernel, granularity: int, *, exact: bool = True):
        """``exact=False`` skips the canonicalization of granules shared by two rows: such a granule then
        counts once per row (at most one extra granule per row touched; exact for granule-aligned rows).
        Four times cheaper; good enough for allocation volumes, which only feed the hit-rate curves."""
        self.granularity = granularity
        self.encodings = field_encodings(kernel, granularity)
        self.nfields = len(kernel.fields)
        self.groups = access_groups(self.encodings, kernel.domain, canonical=exact)

    @cached_property
    def _coalesce_before_count(self) -> bool:
        """Whether coalescing a footprint's groups pays off before counting them. Measured (profiled, per
        access group, 128 B allocation footprints): for fields with an index dimension (LBM populations)
        whose rows start at varying offsets inside a granule, counting the raw sets is about a third faster
        (D3Q19, Allen-Cahn); for 3-D stencil fields coalescing first is up to twice as fast."""
        return not any(e.per_dim is not None and len(e.field.shape) == 4
                       and any((s * e.field.element_bytes) % self.granularity for s in e.field.strides[1:])
                       for e in self.encodings)

    def empty(self) -> Footprint:
        return Footprint(tuple(_no_addresses() for _ in self.groups))

    def footprint_size(self, cells: CellSet | isl.Set, *, loads: bool = True, stores: bool = False) -> int:
        """Number of distinct encoded addresses, ``footprint(...).size()``, computed the cheaper way."""
        return self.footprint(cells, loads=loads, stores=stores, coalesce=self._coalesce_before_count).size()

    def footprint(self, cells: CellSet | isl.Set, *, loads: bool = True, stores: bool = False,
                  coalesce: bool = True) -> Footprint:
        """Distinct encoded addresses the valid cells touch through the loads (and/or stores)."""
        cells = as_isl(cells)
        parts = []
        for g in self.groups:
            out = _no_addresses()
            n = 0
            for m, wanted, k in ((g.loads, loads, g.accesses[0]), (g.stores, stores, g.accesses[1])):
                if wanted and m is not None:
                    out = out.union(cells.apply(m))
                    n += k
            parts.append(coalesced(out) if coalesce and n > 1 else out)
        return Footprint(tuple(parts))

    def meet(self, cells: CellSet | isl.Set, other: Footprint) -> Footprint:
        """The cells' load footprint intersected with ``other``."""
        return self.footprint(cells).intersect(other)

    def sizes_by_field(self, cells: CellSet | isl.Set, *, loads: bool = True, stores: bool = False) -> tuple[int, ...]:
        """``count_by_field(footprint(...))``."""
        return self.count_by_field(self.footprint(cells, loads=loads, stores=stores))

    def count_by_field(self, fp: Footprint) -> tuple[int, ...]:
        """Elements of a footprint (of these Footprints) per field."""
        out = [0] * self.nfields
        for g, part in zip(self.groups, fp.parts, strict=True):
            out[g.field] += count(part)
        return tuple(out)


def count(s: isl.Set) -> int:
    """Cardinality of a bounded ISL set."""
    return int(s.count_val().to_python())
