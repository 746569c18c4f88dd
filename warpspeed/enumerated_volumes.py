"""Footprints by enumeration: the DRAM-stage counts of ``isl_volumes`` for kernels ISL counts slowly.

A field whose rows start at byte phases that cycle with two or more row indices (array-of-structures
layouts: a row is one cell's values) needs a ``mod`` of several indices in the ISL encoding, unless a few
residue classes fix the phases (``isl_volumes.cell_residues``). With more classes than that, one ISL count
can take seconds to minutes (a 953-address set: 83 s), while listing the addresses takes milliseconds. For
those kernels the footprints are enumerated: every valid cell of the set, every access, the linear granule
``floor((offset + index) * element_bytes / granularity)``, kept as sorted distinct keys
``field << FIELD_SHIFT | granule``. The counts are exact (``exact=False`` changes nothing: no granule is
counted once per row); the cost grows with the cells counted (a wave and a block plane), not the domain.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl
import numpy as np

from .expressions import evaluate
from .kernel import Kernel

FIELD_SHIFT = 40  # granule indices below 2**40: arrays up to 32 TiB at 32 B granules


@dataclass(frozen=True)
class AddressSet:
    """Distinct encoded granules (``field << FIELD_SHIFT | granule``), sorted; the enumerated Footprint."""

    keys: np.ndarray

    def intersect(self, other: AddressSet) -> AddressSet:
        return AddressSet(np.intersect1d(self.keys, other.keys, assume_unique=True))

    def subtract(self, other: AddressSet) -> AddressSet:
        return AddressSet(np.setdiff1d(self.keys, other.keys, assume_unique=True))

    def size(self) -> int:
        return int(self.keys.size)


def distinct(values: np.ndarray) -> np.ndarray:
    """Sorted distinct values of a non-negative int64 array: by marking a bitmap over their range when it is
    not much larger than the array (the addresses of a cell set lie close together), else by sorting."""
    if values.size == 0:
        return values
    lo, hi = int(values.min()), int(values.max())
    if hi - lo > 8 * values.size:
        return np.unique(values)
    mark = np.zeros(hi - lo + 1, dtype=bool)
    mark[values - lo] = True
    return np.flatnonzero(mark) + lo


def cell_points(cells: isl.Set) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """x, y and z of every point of a cell set: a union of boxes (what ``isl_volumes.cell_set`` builds), read
    from their bounds; any other piece point by point. A point in two pieces is listed twice."""
    parts = []
    for bs in cells.get_basic_sets():
        box = isl.Set.from_basic_set(bs)
        lo = [box.dim_min_val(d).to_python() for d in range(3)]
        hi = [box.dim_max_val(d).to_python() for d in range(3)]
        n = int(np.prod([h - low + 1 for low, h in zip(lo, hi, strict=True)]))
        if box.count_val().to_python() == n:
            grids = np.meshgrid(*(np.arange(low, h + 1, dtype=np.int64) for low, h in zip(lo, hi, strict=True)),
                                indexing="ij")
            parts.append(np.stack([g.ravel() for g in grids]))
        else:  # not a box (not built by cell_set): point by point, slow but exact
            points: list[isl.Point] = []
            box.foreach_point(points.append)
            coords = [[p.get_coordinate_val(isl.dim_type.set, d).to_python() for d in range(3)] for p in points]
            parts.append(np.array(coords, dtype=np.int64).reshape(-1, 3).T)
    if not parts:
        return tuple(np.empty(0, dtype=np.int64) for _ in range(3))  # type: ignore[return-value]
    x, y, z = np.concatenate(parts, axis=1)
    return x, y, z


class EnumeratedFootprints:
    """``isl_volumes.Footprints`` by enumeration (same methods; footprints are :class:`AddressSet`)."""

    def __init__(self, kernel: Kernel, granularity: int, *, exact: bool = True):
        """``exact`` is accepted for the interface: enumerated counts are always exact."""
        self.kernel = kernel
        self.granularity = granularity
        self.nfields = len(kernel.fields)

    def empty(self) -> AddressSet:
        return AddressSet(np.empty(0, dtype=np.int64))

    def footprint(self, cells: isl.Set, *, loads: bool = True, stores: bool = False,
                  coalesce: bool = True) -> AddressSet:
        """Distinct granules the valid cells touch through the loads (and/or stores)."""
        x, y, z = cell_points(cells)
        env = {"tidx": x, "tidy": y, "tidz": z}
        keys = [np.empty(0, dtype=np.int64)]
        for i, f in enumerate(self.kernel.fields):
            accesses = (list(f.loads) if loads else []) + (list(f.stores) if stores else [])
            granules = [(f.offset + np.broadcast_to(evaluate(acc.linear, env), x.shape)) * f.element_bytes
                        // self.granularity for acc in accesses]
            if granules:
                keys.append((np.int64(i) << FIELD_SHIFT) | distinct(np.concatenate(granules)))
        return AddressSet(np.concatenate(keys))

    def footprint_size(self, cells: isl.Set, *, loads: bool = True, stores: bool = False) -> int:
        return self.footprint(cells, loads=loads, stores=stores).size()

    def count_by_field(self, fp: AddressSet) -> tuple[int, ...]:
        """Granules of a footprint per field."""
        return tuple(int(n) for n in np.bincount(fp.keys >> FIELD_SHIFT, minlength=self.nfields))
