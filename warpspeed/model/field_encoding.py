"""How a field's accesses are written as indices per dimension, shared by the three footprint counters.

An access given as one linear index is split into one index per dimension of the field where that gives the
same address (:func:`per_dimension_index`); a field whose every access splits is encoded per dimension at a
granularity (:class:`FieldEncoding`: rows of the allocated shape, each counted from its first element), else
by its linear addresses. Where every index is a cell coordinate plus a constant, an access is a slice
(:func:`slice_access`: what the enumerating and range counters mark). Footprint keys carry the field in their
high bits (:data:`FIELD_SHIFT`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..expressions import Add, Const, Expr, Mul, Var, affine_form, bounds, simplify
from ..kernel import Access, Field, Kernel

FIELD_SHIFT = 40  # granule indices below 2**40: arrays up to 32 TiB at 32 B granules
CELL_VARS = {"tidx": "x", "tidy": "y", "tidz": "z"}
MAX_ROW_DIMS = 3  # a1..a3: up to 4-dimensional fields (x, y, z and an index dimension)


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


def row_moduli(fld: Field, granularity: int) -> tuple[int, ...]:
    """For each row dimension d (a1..): the row phase depends on a_d only through a_d mod m_d (1: not at all)."""
    g = granularity
    return tuple(g // math.gcd(g, c) if (c := (s * fld.element_bytes) % g) else 1 for s in fld.strides[1:])


@dataclass(frozen=True)
class FieldEncoding:
    """How one field's accesses map cells to encoded addresses at a granularity (32 B or 128 B)."""

    index: int
    field: Field
    granularity: int
    per_dim: tuple[tuple[Expr, ...], ...] | None  # per-dimension index of every access, or None: linear


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


SliceAccess = tuple[tuple[int, int], ...]  # per field dimension: (cell axis 0-2, or -1 for none; constant)


def slice_access(acc: Access, fld: Field, domain: tuple[int, int, int]) -> SliceAccess | None:
    """The access as (cell axis, constant) per dimension of the field, where every index is one cell
    coordinate plus a constant or a constant, and no coordinate indexes two dimensions; else None."""
    idx = per_dimension_index(acc, fld, domain)
    if idx is None:
        return None
    out, used = [], set()
    for e in idx:
        form = affine_form(e)
        if form is None:
            return None
        coeffs, const = form
        axes = [a for a, c in enumerate(coeffs) if c]
        if not axes:
            out.append((-1, const))
            continue
        if len(axes) > 1 or coeffs[axes[0]] != 1 or axes[0] in used:
            return None
        used.add(axes[0])
        out.append((axes[0], const))
    return tuple(out)


def field_slice_accesses(fld: Field, domain: tuple[int, int, int]
                         ) -> tuple[list[SliceAccess], list[SliceAccess]] | None:
    """The field's loads and stores as slice accesses, or None if any of them is not one."""
    loads = [slice_access(a, fld, domain) for a in fld.loads]
    stores = [slice_access(a, fld, domain) for a in fld.stores]
    if any(a is None for a in loads + stores):
        return None
    return loads, stores  # type: ignore[return-value]
