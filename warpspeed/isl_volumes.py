"""Implicit (ISL) sector footprints of thread sets: the wave, its y- and z-layer sets, reuse ranges.

Thread sets are contiguous ranges of linear block ids, turned into at most five boxes of cells (clipped
to the domain: the ``if (tid >= N) return`` guard). Each access maps cells to addresses; an address is
encoded as ``[f, u, a1, .., a3]``: field index, the sector (or line) inside the field's row ``a1..`` of
its allocated shape, counted from the row's first element with the row's true alignment. A sector that
straddles two rows is canonicalized to the next row's first sector, so the encoding is a bijection onto
the linear sectors and counts, intersections and differences are exact. Only when an access cannot be
written per dimension is the field's linear index used (``[f, sector]``, exact but slower to count).
A row's byte phase is a ``mod`` of its indices, which ISL counts slowly when it mixes several of them
(array-of-structures layouts: rows of one cell's 152 B). Where a few residue classes of the cells fix every
row's phase, cells are written as ``x = Mx*xq + xr`` (and y, z) and every access is split by class: each
row index becomes a quotient and a residue ``a = m*q + r``, the phase a constant, and a box of cells maps
to boxes of addresses (:class:`CellResidues`). The encoding is ``[f, u, q1, r1, .., q3, r3]`` throughout.
The accesses are split into groups whose address ranges over the whole domain are disjoint (checked with
ISL once per kernel); footprints are kept, intersected and counted group by group (:class:`Footprint`).

Nothing here enumerates threads or blocks: the cost is independent of the domain size.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property
from itertools import product

import islpy as isl

from .expressions import Add, Const, Expr, Mul, Var, affine_form, bounds, simplify, to_isl
from .kernel import Access, Field, Kernel
from .launch import Launch, id_range_boxes

CELL_VARS = {"tidx": "x", "tidy": "y", "tidz": "z"}
MAX_ROW_DIMS = 3  # a1..a3: up to 4-dimensional fields (x, y, z and an index dimension)
MAX_RESIDUE_CLASSES = 16  # more cell classes than this: keep the row phase as a mod (fewer, harder pieces)
TARGET_DIMS = 2 + 2 * MAX_ROW_DIMS  # [f, u, q1, r1, q2, r2, q3, r3]


def _isl(e: Expr) -> str:
    return "(" + to_isl(e, CELL_VARS) + ")"


def per_dimension_index(acc: Access, fld: Field, domain: tuple[int, int, int]) -> tuple[Expr, ...] | None:
    """The access as one index per dimension of the field, or None if that is not possible.

    Tuple accesses are used as they are. A linear affine index is split by matching each coefficient
    to the field's strides (mixed radix for the constant); the split is kept only if every component
    provably stays inside its extent over the domain, which makes it the same address.
    """
    if len(acc.index) == len(fld.shape):
        return acc.index
    form = affine_form(acc.linear)
    if form is None:
        return None
    coeffs, const = form
    strides = fld.strides
    comps: list[dict[str, int]] = [{} for _ in fld.shape]
    for var, c in zip(CELL_VARS, coeffs, strict=True):
        if c == 0:
            continue
        d = max((d for d, s in enumerate(strides) if c % s == 0), default=0)
        comps[d][var] = c // strides[d]
    consts = []
    rest = const
    for d in range(len(fld.shape) - 1, -1, -1):
        q, rest = divmod(rest, strides[d])
        consts.append(q)
    consts.reverse()
    consts[0] += rest
    out = []
    box = {v: (0, n - 1) for v, n in zip(CELL_VARS, domain, strict=True)}
    for d, n in enumerate(fld.shape):
        e = simplify(Add(tuple(Mul(c, Var(v)) for v, c in comps[d].items()) + (Const(consts[d]),)))
        lo, hi = bounds(e, box)
        if lo < 0 or hi >= n:
            return None
        out.append(e)
    return tuple(out)


@dataclass(frozen=True)
class CellResidues:
    """Cells as quotient and residue, ``x = Mx*xq + xr`` (and y, z), so that row phases become constants.

    ``moduli`` (1, 1, 1) leaves cells as ``[x, y, z]``. Otherwise the cell space is
    ``[xq, xr, yq, yr, zq, zr]``; a box of cells stays a box (one per residue class), and an access whose
    row indices are affine maps each class to rows of one residue class each.
    """

    moduli: tuple[int, int, int]

    @property
    def active(self) -> bool:
        return self.moduli != (1, 1, 1)

    def space(self) -> str:
        return "[xq, xr, yq, yr, zq, zr]" if self.active else "[x, y, z]"

    def classes(self) -> list[tuple[int, int, int]]:
        return list(product(*(range(m) for m in self.moduli)))

    def names(self, cls: tuple[int, int, int] | None = None) -> dict[str, str]:
        """Thread variables in this cell space: the class's residues (or the residue variables)."""
        if not self.active:
            return CELL_VARS
        out = {}
        for (var, v), m, r in zip(CELL_VARS.items(), self.moduli, cls or ("xr", "yr", "zr"), strict=True):
            if cls is not None and m == 1:
                out[var] = f"{v}q"
            else:
                out[var] = f"({m}*{v}q + {r if cls is not None else v + 'r'})"
        return out

    @cached_property
    def transform(self) -> isl.Map | None:
        """``[x, y, z] -> [xq, xr, ..]``, or None when inactive."""
        if not self.active:
            return None
        cons = " and ".join(f"{v} = {m}*{v}q + {v}r and 0 <= {v}r < {m}" for v, m in zip("xyz", self.moduli,
                                                                                        strict=True))
        return isl.Map(f"{{ [x, y, z] -> {self.space()} : {cons} }}")

    def cells(self, cells: isl.Set) -> isl.Set:
        """A cell set of ``[x, y, z]`` in this cell space."""
        return cells if self.transform is None else cells.apply(self.transform)


NO_RESIDUES = CellResidues((1, 1, 1))


def row_moduli(fld: Field, granularity: int) -> tuple[int, ...]:
    """For each row dimension d (a1..): the row phase depends on a_d only through a_d mod m_d."""
    g = granularity
    return tuple(g // math.gcd(g, c) if (c := (s * fld.element_bytes) % g) else 1 for s in fld.strides[1:])


@dataclass(frozen=True)
class FieldEncoding:
    """How one field's accesses map cells to encoded addresses at a granularity (32 B or 128 B)."""

    index: int
    field: Field
    granularity: int
    per_dim: tuple[tuple[Expr, ...], ...] | None  # per-dimension index of every access, or None: linear

    @property
    def moduli(self) -> tuple[int, ...]:
        """Row moduli m_d (all 1: rows start at the same phase; () for linear addresses)."""
        return row_moduli(self.field, self.granularity) if self.per_dim is not None else ()

    def needs_residues(self) -> bool:
        return any(m > 1 for m in self.moduli)

    def _rho(self, rows: Sequence[str]) -> str:
        """Byte phase of a row's first element inside a granule (0 when rows are granule aligned)."""
        f, g = self.field, self.granularity
        terms = [f"{s * f.element_bytes}*({a})" for s, a in zip(f.strides[1:], rows, strict=False)
                 if (s * f.element_bytes) % g]
        return f"(({' + '.join(terms)}) mod {g})" if terms else "0"

    def _rho_of_residues(self, residues: Sequence[int]) -> int:
        """Byte phase of a row whose indices have the residues ``residues`` (mod their row moduli)."""
        f = self.field
        return sum(s * f.element_bytes * r for s, r in zip(f.strides[1:], residues, strict=False)) % self.granularity

    def _u(self, rows: Sequence[str], x_bytes: str, rho: str | None = None) -> str:
        f, g = self.field, self.granularity
        return f"floor(({f.offset * f.element_bytes} + {self._rho(rows) if rho is None else rho} + {x_bytes})/{g})"

    def access_maps(self, stores: bool, cells: CellResidues = NO_RESIDUES, canonical: bool = False
                    ) -> list[isl.Map]:
        """Cell -> encoded address maps of the field's loads (or stores), one per access.

        Addresses are ``[f, u, a1, a2, a3]`` for cells ``[x, y, z]``, and ``[f, u, q1, r1, .., q3, r3]`` for
        cells written by residue class (``cells`` active), split into one piece per class where the field's
        row phase needs it.
        """
        f, g = self.field, self.granularity
        first = len(f.loads) if stores else 0
        accesses = f.stores if stores else f.loads
        if not cells.active:
            out = []
            for pos, acc in enumerate(accesses, start=first):
                if self.per_dim is None:
                    addr = f"floor(({f.offset} + {_isl(acc.linear)})*{f.element_bytes}/{g})"
                    tgt = [str(self.index), addr] + ["0"] * MAX_ROW_DIMS
                else:
                    idx = self.per_dim[pos]
                    rows = [_isl(e) for e in idx[1:]]
                    u = self._u(rows, f"{_isl(idx[0])}*{f.element_bytes}")
                    tgt = [str(self.index), u] + rows + ["0"] * (MAX_ROW_DIMS - len(rows))
                names = [f"o{i}" for i in range(len(tgt))]
                cons = " and ".join(f"{n} = {t}" for n, t in zip(names, tgt, strict=True))
                out.append(isl.Map(f"{{ [x, y, z] -> [{', '.join(names)}] : {cons} }}"))
            return out
        split = self.needs_residues()
        n_rows = len(f.shape) - 1
        compose = canonical and self.per_dim is not None and n_rows > 0
        out = []
        for pos, acc in enumerate(accesses, start=first):
            pieces = []
            for cls in cells.classes() if split else [None]:
                names = cells.names(cls)
                residues: tuple[int, ...] = (0,) * n_rows
                if self.per_dim is None:
                    linear = to_isl(acc.linear, names)
                    tgt = [str(self.index), f"floor(({f.offset} + ({linear}))*{f.element_bytes}/{g})"]
                else:
                    idx = self.per_dim[pos]
                    x_bytes = f"({to_isl(idx[0], names)})*{f.element_bytes}"
                    if cls is None:
                        rows = ["(" + to_isl(e, names) + ")" for e in idx[1:]]
                        tgt = [str(self.index), self._u(rows, x_bytes)] + [t for a in rows for t in (a, "0")]
                    else:
                        pairs, residues = self._row_pairs(idx[1:], cls, cells.moduli)
                        tgt = [str(self.index), self._u([], x_bytes, rho=str(self._rho_of_residues(residues)))]
                        tgt += [t for p in pairs for t in p]
                tgt += ["0"] * (TARGET_DIMS - len(tgt))
                names_out = [f"o{i}" for i in range(len(tgt))]
                cons = [f"{n} = {t}" for n, t in zip(names_out, tgt, strict=True)]
                cons += [] if cls is None else [f"{v}r = {r}" for v, r in zip("xyz", cls, strict=True)]
                piece = isl.Map(f"{{ {cells.space()} -> [{', '.join(names_out)}] : {' and '.join(cons)} }}")
                pieces.append(piece.apply_range(self._canonical_class(residues)) if compose else piece)
            out.append(_union(pieces, coalesce=False))
        return out

    def _row_pairs(self, rows: Sequence[Expr], cls: tuple[int, int, int],
                   moduli: tuple[int, int, int]) -> tuple[list[tuple[str, str]], tuple[int, ...]]:
        """(quotient, residue) of every row index for the cells of residue class ``cls``, and the residues."""
        pairs, residues = [], []
        for e, m in zip(rows, self.moduli, strict=True):
            coeffs, const = affine_form(e)  # type: ignore[misc]  # cell_residues checked it is affine
            base = const + sum(c * r for c, r in zip(coeffs, cls, strict=True))
            r = base % m
            terms = [f"{c * mv // m}*{v}q" for c, mv, v in zip(coeffs, moduli, "xyz", strict=True) if c]
            pairs.append((" + ".join(terms + [str((base - r) // m)]), str(r)))
            residues.append(r)
        return pairs, tuple(residues)

    @cached_property
    def canonical(self) -> isl.Map | None:
        """Map that sends a row's last granule, when it is shared with the next row, to that row's first.

        Rows are at least one granule long (see ``field_encodings``), so a granule spans at most two rows.
        """
        f, g = self.field, self.granularity
        nd = len(f.shape)
        if self.per_dim is None or nd == 1:
            return None
        rows = [f"a{d}" for d in range(1, nd)]
        pad = ["0"] * (MAX_ROW_DIMS - len(rows))
        src = ["f", "u"] + rows + [f"p{i}" for i in range(len(pad))]
        eb = f.element_bytes
        u_last = self._u(rows, f"{(f.shape[0] - 1) * eb}")
        shared = f"(({(f.offset + f.shape[0]) * eb} + {self._rho(rows)}) mod {g}) >= 1"
        domain = " and ".join([f"f = {self.index}"] + [f"0 <= {a} < {n}" for a, n in zip(rows, f.shape[1:],
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
            u_first = self._u(nxt, "0")
            pieces.append(f"[{', '.join(src)}] -> [f, {u_first}, {', '.join(nxt)}{''.join(', ' + p for p in pad)}]"
                          f" : {domain} and u = {u_last} and {shared} and {' and '.join(cond)}")
        return isl.Map("{ " + "; ".join(pieces) + " }").coalesce()

    @cached_property
    def _canonical_classes(self) -> dict[tuple[int, ...], isl.Map]:
        return {}

    def _canonical_class(self, residues: tuple[int, ...]) -> isl.Map:
        """:attr:`canonical` on the rows whose indices have the residues ``residues`` mod the row moduli,
        in addresses ``[f, u, q1, r1, ..]`` (row index ``a = m*q + r``); the row phase is a constant here."""
        if residues not in self._canonical_classes:
            self._canonical_classes[residues] = self._build_canonical_class(residues)
        return self._canonical_classes[residues]

    def _build_canonical_class(self, residues: tuple[int, ...]) -> isl.Map:
        f, g = self.field, self.granularity
        nd = len(f.shape)
        n_rows = nd - 1
        eb = f.element_bytes
        ms = self.moduli
        qs, rs = [f"q{d}" for d in range(1, nd)], [f"r{d}" for d in range(1, nd)]
        src = ["f", "u"] + [t for q, r in zip(qs, rs, strict=True) for t in (q, r)]
        src += [f"p{i}" for i in range(TARGET_DIMS - len(src))]
        a = [f"({m}*{q} + {r})" for m, q, r in zip(ms, qs, rs, strict=True)]
        domain = " and ".join([f"f = {self.index}"] + [f"0 <= {x} < {n}" for x, n in zip(a, f.shape[1:],
                                                                                        strict=True)]
                              + [f"{r} = {c}" for r, c in zip(rs, residues, strict=True)]
                              + [f"{p} = 0" for p in src[2 + 2 * n_rows:]])
        rho = self._rho_of_residues(residues)
        if ((f.offset + f.shape[0]) * eb + rho) % g == 0:  # the row's last granule is its own
            return isl.Map(f"{{ [{', '.join(src)}] -> [{', '.join(src)}] : {domain} }}")
        u_last = (f.offset * eb + rho + (f.shape[0] - 1) * eb) // g
        last_row = " and ".join(f"{x} = {n - 1}" for x, n in zip(a, f.shape[1:], strict=True))
        pieces = [f"[{', '.join(src)}] -> [{', '.join(src)}] : {domain} and (u < {u_last} or ({last_row}))"]
        # next row: increment a1, carrying into a2, a3 when a row index is at its last value
        for k in range(n_rows):
            cond = [f"{a[j]} = {f.shape[j + 1] - 1}" for j in range(k)] + [f"{a[k]} < {f.shape[k + 1] - 1}"]
            nxt_q, nxt_r = ["0"] * k + qs[k:], ["0"] * k + rs[k:]
            res = [0] * k + list(residues[k:])
            if residues[k] + 1 < ms[k]:
                nxt_r[k], res[k] = str(residues[k] + 1), residues[k] + 1
            else:
                nxt_q[k], nxt_r[k], res[k] = f"{qs[k]} + 1", "0", 0
            u_first = (f.offset * eb + self._rho_of_residues(res)) // g
            tgt = ["f", str(u_first)] + [t for q, r in zip(nxt_q, nxt_r, strict=True) for t in (q, r)]
            tgt += src[len(tgt):]
            pieces.append(f"[{', '.join(src)}] -> [{', '.join(tgt)}] : {domain} and u = {u_last}"
                          f" and {' and '.join(cond)}")
        return isl.Map("{ " + "; ".join(pieces) + " }").coalesce()


def field_encodings(kernel: Kernel, granularity: int) -> tuple[FieldEncoding, ...]:
    """Encodings for every field; per-dimension when every access of the field allows it."""
    out = []
    for i, f in enumerate(kernel.fields):
        idx = [per_dimension_index(a, f, kernel.domain) for a in f.loads + f.stores]
        # rows shorter than a granule would let one granule span more than two rows: use linear addresses
        rows_ok = len(f.shape) == 1 or (f.shape[0] * f.element_bytes >= granularity
                                        and len(f.shape) - 1 <= MAX_ROW_DIMS)
        per_dim = tuple(idx) if rows_ok and all(x is not None for x in idx) else None
        out.append(FieldEncoding(i, f, granularity, per_dim))  # type: ignore[arg-type]
    return tuple(out)


def cell_residues(encodings: Sequence[FieldEncoding], limit: int = MAX_RESIDUE_CLASSES) -> CellResidues:
    """The cell moduli that make every row phase a constant per residue class, or none.

    A row index ``a = cx*x + cy*y + cz*z + k`` with row modulus m is fixed mod m by x mod m/gcd(m, cx) (and
    y, z). None when a phase-carrying row index is not affine or the classes would exceed ``limit``, and
    when no field's phase mixes two row indices: a phase of one index is a single ``mod``, which ISL counts
    faster than the classes (measured: the LBM kernels in their default layout, 3-D stencils at 128 B).
    """
    if not any(sum(m > 1 for m in e.moduli) >= 2 for e in encodings):
        return NO_RESIDUES
    moduli = [1, 1, 1]
    for e in encodings:
        ms = e.moduli
        if not e.needs_residues():
            continue
        for idx in e.per_dim or ():
            for row, m in zip(idx[1:], ms, strict=True):
                if m == 1:
                    continue
                form = affine_form(row)
                if form is None:
                    return NO_RESIDUES
                for v, c in enumerate(form[0]):
                    moduli[v] = math.lcm(moduli[v], m // math.gcd(m, c % m))
    if math.prod(moduli) > limit:
        return NO_RESIDUES
    return CellResidues(tuple(moduli))  # type: ignore[arg-type]


def cell_set(launch: Launch, start: int, stop: int) -> isl.Set:
    """Valid cells of the blocks with linear ids [start, stop), as a union of boxes."""
    bf = launch.cells_per_block
    parts = []
    for lo, hi in id_range_boxes(start, stop, launch.grid):
        c = []
        for v, a, b, s, n in zip("xyz", lo, hi, bf, launch.domain, strict=True):
            c.append(f"{a * s} <= {v} < {min(b * s, n)}")
        parts.append("(" + " and ".join(c) + ")")
    if not parts:
        return isl.Set("{ [x, y, z] : 1 = 0 }")
    return isl.Set("{ [x, y, z] : " + " or ".join(parts) + " }")


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


def _no_addresses(residues: CellResidues) -> isl.Set:
    if residues.active:
        return isl.Set("{ [f, u, q1, r1, q2, r2, q3, r3] : 1 = 0 }")
    return isl.Set("{ [f, u, a1, a2, a3] : 1 = 0 }")


def _union(maps: Sequence[isl.Map], coalesce: bool = True) -> isl.Map | None:
    out = None
    for m in maps:
        out = m if out is None else out.union(m)
    return out.coalesce() if out is not None and coalesce else out


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
                  canonical: bool, residues: CellResidues = NO_RESIDUES) -> tuple[AccessGroup, ...]:
    """Split every field's accesses into groups whose address ranges over the whole domain are disjoint.

    Two accesses are in one group when their images of the domain's cells intersect (transitively). Any
    cell set lies in the domain, so the footprint of a group never meets another group's: the footprint
    of the kernel is the disjoint union of the groups' footprints. Counting and intersecting small groups
    is much cheaper than the whole union for kernels whose accesses touch separate rows (the populations
    of an LBM field); a stencil whose accesses all overlap is one group per field, as before.
    """
    cells = residues.cells(isl.Set("{ [x, y, z] : " + " and ".join(
        f"0 <= {v} < {n}" for v, n in zip("xyz", domain, strict=True)) + " }"))
    out = []
    for e in encodings:
        maps = [(st, m) for st in (False, True) for m in e.access_maps(stores=st, cells=residues,
                                                                        canonical=canonical)]
        if canonical and not residues.active and e.canonical is not None:
            maps = [(st, m.apply_range(e.canonical)) for st, m in maps]
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
        self.residues = cell_residues(self.encodings)
        self.nfields = len(kernel.fields)
        self.groups = access_groups(self.encodings, kernel.domain, canonical=exact, residues=self.residues)

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
        return Footprint(tuple(_no_addresses(self.residues) for _ in self.groups))

    def footprint_size(self, cells: isl.Set, *, loads: bool = True, stores: bool = False) -> int:
        """Number of distinct encoded addresses, ``footprint(...).size()``, computed the cheaper way."""
        return self.footprint(cells, loads=loads, stores=stores, coalesce=self._coalesce_before_count).size()

    def footprint(self, cells: isl.Set, *, loads: bool = True, stores: bool = False,
                  coalesce: bool = True) -> Footprint:
        """Distinct encoded addresses the valid cells (``[x, y, z]``) touch through the loads (and/or stores)."""
        cells = self.residues.cells(cells)
        parts = []
        for g in self.groups:
            out = _no_addresses(self.residues)
            n = 0
            for m, wanted, k in ((g.loads, loads, g.accesses[0]), (g.stores, stores, g.accesses[1])):
                if wanted and m is not None:
                    out = out.union(cells.apply(m))
                    n += k
            parts.append(out.coalesce() if coalesce and n > 1 else out)
        return Footprint(tuple(parts))

    def count_by_field(self, fp: Footprint) -> tuple[int, ...]:
        """Elements of a footprint (of these Footprints) per field."""
        out = [0] * self.nfields
        for g, part in zip(self.groups, fp.parts, strict=True):
            out[g.field] += count(part)
        return tuple(out)


def count(s: isl.Set) -> int:
    """Cardinality of a bounded ISL set."""
    return int(s.count_val().to_python())
