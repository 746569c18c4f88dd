"""Stored sectors that no cell of the domain completes: they also hold elements the kernel never writes (ghost
layers, padding), so the L2 keeps them partially written until they leave it, and then reads each once to merge
(the DRAM stage counts them with the compulsory load, ``dram.traffic_of_counts``).

They lie where a row of stored elements ends inside a sector, so how many there are depends on where each row
starts within a sector, and that repeats: shifting the cells by ``P`` planes shifts every stored element by a
multiple of a sector, where ``P = per / gcd(plane stride mod per, per)`` (``per`` elements per sector). Along the
dimension that is the outermost of every stored field, the count over ``n`` planes is the count over a few
planes near each end plus one period's count per ``P`` planes in between; it is taken from the exact counts
(by the element ranges) over two domains cut short along it, so the cost and memory do not grow with it.
"""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np

from ..expressions import affine_form
from ..kernel import Kernel
from .footprint import elements_fit
from .range_volumes import ELEMENTS, RangeFootprints, applies

DIRECT_ROWS = 16  # a dimension of at most this many cells beyond its end margins is counted whole


def unfinished_store_sectors(kernel: Kernel, sector_bytes: int) -> tuple[int, ...]:
    """Per field, the sectors the kernel stores to that no cell of its domain completes. Counted where the element
    range counter applies and elements divide a sector; none elsewhere (an array of structures: at most two
    sectors per line of ``Q x X`` elements, which it keeps among its partial stores)."""
    if not applies(kernel, ELEMENTS) or not elements_fit(kernel, sector_bytes):
        return (0,) * len(kernel.fields)
    step = _outer_step(kernel, sector_bytes)
    if step is None:  # no dimension is the outermost of every stored field, or not affine: counted whole
        return _count(kernel, kernel.domain, sector_bytes)
    d, period, margin = step
    n = kernel.domain[d]
    if n <= 2 * margin + DIRECT_ROWS:
        return _count(kernel, kernel.domain, sector_bytes)
    base = 2 * margin + (n - 2 * margin) % period
    short, longer = ([*kernel.domain[:d], m, *kernel.domain[d + 1:]] for m in (base, base + period))
    f0 = np.array(_count(kernel, tuple(short), sector_bytes), dtype=np.int64)
    f1 = np.array(_count(kernel, tuple(longer), sector_bytes), dtype=np.int64)
    return tuple(int(v) for v in f0 + (n - base) // period * (f1 - f0))


def _outer_step(kernel: Kernel, sector_bytes: int) -> tuple[int, int, int] | None:
    """The cell dimension (1: y, 2: z) that is the outermost of every stored field (its stride exceeds the span
    of a plane's stored elements along the other two, so cutting it short cuts each field's stored elements at
    one place), the period along it
    (the cells after which every stored row starts at the same place in its sector) and its margin (the cells
    near each end whose sectors are not like the middle ones': the accesses' reach and the cells one sector
    spans); None where no dimension is, or an index is not affine."""
    forms = []
    for f in kernel.fields:
        for acc in f.stores:
            form = affine_form(acc.linear)
            if form is None:
                return None
            reach = [0, 0, 0]
            for expr in acc.index:  # the offset of the index along each dimension (not of a population's)
                shift = affine_form(expr)
                if shift is None:
                    return None
                reach = [max(r, abs(shift[1])) if shift[0][i] else r for i, r in enumerate(reach)]
            forms.append((sector_bytes // f.element_bytes, form[0], reach))
    if not forms:
        return None
    for d in (2, 1):
        inner = [i for i in range(3) if i != d]
        if all(abs(c[d]) > sum(abs(c[i]) * (kernel.domain[i] - 1 + 2 * r[i]) for i in inner)
               for _, c, r in forms):
            period = math.lcm(*(per // math.gcd(abs(c[d]) % per, per) for per, c, _ in forms))
            span = max(-(-per // abs(c[d])) for per, c, _ in forms)
            return d, period, 2 * max(r[d] for _, _, r in forms) + span + period + 2
    return None


def _count(kernel: Kernel, domain: tuple[int, ...], sector_bytes: int) -> tuple[int, ...]:
    """The unfinished stored sectors of each field over ``domain`` (the kernel's fields, shapes unchanged)."""
    x, y, z = domain
    k = kernel if (x, y, z) == kernel.domain else replace(kernel, domain=(x, y, z))
    box = np.array([[[0, 0, 0], [n - 1 for n in domain]]], dtype=np.int64)
    per = [sector_bytes // f.element_bytes for f in k.fields]
    counts = RangeFootprints(k, ELEMENTS).box_counts(box, loads=False, stores=True, per=per,
                                                     coarser=(sector_bytes,))
    touched = counts.coarser[sector_bytes][0][0]
    return tuple(int(touched[i] - counts.full[0, i]) if f.stores else 0 for i, f in enumerate(k.fields))


__all__ = ["unfinished_store_sectors"]
