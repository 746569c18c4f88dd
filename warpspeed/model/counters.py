"""Footprint counters: the interface behind the wave's sector counts, and the choice between its three kinds.

The DRAM stage (:mod:`warpspeed.model.dram`) needs four operations on the sectors (or lines) a set of cells
(a :class:`~warpspeed.model.cells.CellSet`) touches: the footprint of a cell set, the empty footprint,
intersection and difference of footprints, and their sizes per field. Three counters provide them, with
the same numbers (``exact=False`` included; the golden test checks it byte for byte):

- ``ranges`` (:class:`~warpspeed.model.range_volumes.RangeFootprints`): one range of granules per row of cells
  and access; the cost grows with the rows of the cell set, not its cells, but it applies only where
  every access moves by at most a granule per x step (structure-of-arrays layouts: stencils, LBM
  populations in ``fzyx``; :func:`~warpspeed.model.range_volumes.applies`);
- ``isl`` (:class:`~warpspeed.model.isl_volumes.Footprints`): integer sets; the cost grows with the number of
  access groups (one per population of an LBM field), not with the domain, but it is high where a field's
  rows are single cells whose offset inside a sector cycles with x and another index (array-of-structures
  layouts);
- ``enumerated`` (:class:`~warpspeed.model.enumerated_volumes.EnumeratedFootprints`): lists the granules of the
  cells (bitmap slices where every index is a cell coordinate plus a constant); the cost grows with the
  cells of the largest set counted (a wave and a block plane) times the accesses.

``auto`` (the default) is a choice of speed only: the ranges wherever they apply (every kernel of the
catalog but the array-of-structures layouts: a thousand times fewer items than the cells, and no ISL
count), else the enumeration where ISL counts are dear (:func:`~warpspeed.model.isl_volumes.counts_are_dear`),
else whichever of ISL and the enumeration costs less for the launch by :func:`choose_counter`'s estimate.
The brute-force twin in the tests is an independent reference.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

from ..errors import InputError
from ..kernel import Kernel
from .cells import CellSet
from .enumerated_volumes import EnumeratedFootprints, field_slice_accesses
from .isl_volumes import Footprints, counts_are_dear
from .launch import Launch
from .range_volumes import RangeFootprints, applies

if TYPE_CHECKING:
    import islpy as isl

COUNTERS = {"isl": Footprints, "enumerated": EnumeratedFootprints, "ranges": RangeFootprints}
DEFAULT_COUNTER = "auto"
# break-even of the two counters, in (cell x access) pairs of the largest set per ISL access group: measured
# on lbmpy's D3Q19, D3Q15 and D3Q27 at 256^3 and 512^3 and star3d-r1/-r4 at their catalog domains over the
# blocks of benchmarks/bench_catalog.py (once the enumeration marks only the row bands a thin wave touches
# and reuses its bitmaps): one ISL group costs 9-18 ms per estimate for an LBM population, 10-40 ms for a
# stencil field; one cell access of a bitmap slice 0.1-1.4 ns. The enumeration wins every LBM block up to
# 17 M pairs per group, ISL the stencil blocks above about 70 M
CELL_ACCESSES_PER_ISL_GROUP = 30_000_000


class FootprintSet(Protocol):
    """The distinct granules (sectors or lines) of some cells' accesses, tagged by field."""

    def intersect(self, other: FootprintSet) -> FootprintSet: ...

    def subtract(self, other: FootprintSet) -> FootprintSet: ...

    def size(self) -> int: ...


class FootprintCounter(Protocol):
    """Counts the granules that sets of cells touch, for one kernel at one granularity (bytes)."""

    def empty(self) -> FootprintSet: ...

    def footprint(self, cells: CellSet | isl.Set, *, loads: bool = True, stores: bool = False) -> FootprintSet: ...

    def footprint_size(self, cells: CellSet | isl.Set, *, loads: bool = True, stores: bool = False) -> int: ...

    def count_by_field(self, fp: FootprintSet) -> tuple[int, ...]: ...


def counter_names() -> list[str]:
    return [DEFAULT_COUNTER, *COUNTERS]


@lru_cache(maxsize=64)
def _slices_and_groups(kernel: Kernel) -> tuple[bool, int, int]:
    """Whether every access of every field can be marked by slices; the accesses; the ISL access groups to
    expect (one per population of a field with an index dimension, else one per field)."""
    sliceable = all(field_slice_accesses(f, kernel.domain) is not None for f in kernel.fields)
    accesses = sum(len(f.loads) + len(f.stores) for f in kernel.fields)
    groups = sum(len({a.index[-1] for a in f.loads + f.stores}) if len(f.shape) == 4 and all(
        len(a.index) == 4 for a in f.loads + f.stores) else 1 for f in kernel.fields)
    return sliceable, accesses, groups


@lru_cache(maxsize=256)
def _dear(kernel: Kernel, granularity: int) -> bool:
    return counts_are_dear(kernel, granularity)


def choose_counter(name: str, kernel: Kernel, granularity: int, launch: Launch, exact: bool = True) -> str:
    """The counter ``auto`` stands for at this granularity and launch (any other name: itself)."""
    if name != DEFAULT_COUNTER:
        return name
    if applies(kernel, granularity, exact):
        return "ranges"
    if _dear(kernel, granularity):
        return "enumerated"
    sliceable, accesses, groups = _slices_and_groups(kernel)
    if not sliceable:
        return "isl"
    gx, gy, _ = launch.grid
    cells = min(launch.wave_blocks + gx * gy, math.prod(launch.grid)) * math.prod(launch.cells_per_block)
    return "enumerated" if cells * accesses <= groups * CELL_ACCESSES_PER_ISL_GROUP else "isl"


def check_counter(name: str) -> str:
    """``name`` if it names a counter (or ``auto``), else a clear error listing the valid names."""
    if name != DEFAULT_COUNTER and name not in COUNTERS:
        raise InputError(f"unknown footprint counter {name!r}: valid are {', '.join(counter_names())}")
    return name


def footprint_counter(kernel: Kernel, granularity: int, *, exact: bool = True,
                      name: str = DEFAULT_COUNTER) -> FootprintCounter:
    """The counter ``name`` for ``kernel`` at ``granularity`` bytes (``exact``: see ``Footprints``); ``auto``
    without a launch: the ranges where they apply, else the enumeration where ISL counts are dear, else ISL.
    ``ranges`` named for a kernel they do not count is an :class:`InputError`."""
    if check_counter(name) == DEFAULT_COUNTER:
        name = ("ranges" if applies(kernel, granularity, exact)
                else "enumerated" if _dear(kernel, granularity) else "isl")
    if name == "ranges" and not applies(kernel, granularity, exact):
        raise InputError(f"the 'ranges' footprint counter does not count kernel {kernel.name!r}: some access moves "
                         f"by more than {granularity} B per x step (an array-of-structures layout) or is not affine; "
                         "use auto, isl or enumerated")
    return COUNTERS[name](kernel, granularity, exact=exact)


__all__ = ["CELL_ACCESSES_PER_ISL_GROUP", "COUNTERS", "DEFAULT_COUNTER", "FootprintCounter", "FootprintSet",
           "check_counter", "choose_counter", "counter_names", "footprint_counter"]
