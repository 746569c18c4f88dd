"""Footprint counters: the interface behind the wave's sector counts, and the choice between its kinds.

The DRAM stage (:mod:`warpspeed.model.dram`) needs four operations on the sectors (or lines) a set of cells
(a :class:`~warpspeed.model.cells.CellSet`) touches: the footprint of a cell set, the empty footprint,
intersection and difference of footprints, and their sizes per field. Three counters provide them, with
the same numbers (``exact=False`` included; the golden test checks it byte for byte), and a fourth for exact
counts of array-of-structures fields:

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
  cells of the largest set counted (a wave and a block plane) times the accesses;
- ``lines`` (:class:`~warpspeed.model.line_volumes.LineFootprints`): one packed granule bitmap per x-line of a
  field the cells touch (a field's ``Q X`` elements of one y and z in ``zyxf``); the cost grows with the lines
  of the cell set, and it applies where every index is a cell coordinate plus a constant, the components below
  x's (:func:`~warpspeed.model.line_volumes.applies`).

``auto`` (the default) is a choice of speed only: the ranges wherever they apply (every kernel of the
catalog but the array-of-structures layouts: a thousand times fewer items than the cells, and no ISL
count), else the lines (the array-of-structures layouts: on lbmpy's D3Q19 in ``zyxf`` at 256^3 a wave's sectors 3-15x
and its line counts about 2x faster than enumerated; a line's bitmap spans the whole x extent, but sizes are
counted per distinct set of a line's bitmaps, not per line, so on domains thousands of cells wide with blocks
one cell wide one estimate costs what the enumeration's does, within the noise: 0.16-0.17 CPU-s and 105-106
MiB with either at 4096x1024x256 with 1x8x64 blocks, 0.15-0.20 against 0.14-0.18 CPU-s at 8192x256x256),
else the enumeration where ISL counts are dear (:func:`~warpspeed.model.isl_volumes.counts_are_dear`) or every
access marks bitmap slices (measured faster than ISL in every such case, :func:`choose_counter`), else ISL
(quasi-affine indices). The brute-force twin in the tests is an independent reference.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING, Protocol

import numpy as np

from ..errors import InputError
from ..kernel import Kernel
from .cells import CellSet
from .enumerated_volumes import EnumeratedFootprints
from .field_encoding import field_slice_accesses
from .isl_volumes import Footprints, counts_are_dear
from .line_volumes import LineFootprints
from .line_volumes import applies as lines_apply
from .range_volumes import BoxCounts, RangeFootprints, applies

if TYPE_CHECKING:
    import islpy as isl

COUNTERS = {"isl": Footprints, "enumerated": EnumeratedFootprints, "ranges": RangeFootprints,
            "lines": LineFootprints}
DEFAULT_COUNTER = "auto"
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

    def meet(self, cells: CellSet | isl.Set, other: FootprintSet) -> FootprintSet:
        """``footprint(cells).intersect(other)`` (loads), possibly without listing what cannot meet ``other``."""
        ...

    def count_by_field(self, fp: FootprintSet) -> tuple[int, ...]: ...

    def sizes_by_field(self, cells: CellSet | isl.Set, *, loads: bool = True, stores: bool = False) -> tuple[int, ...]:
        """``count_by_field(footprint(...))``, possibly without listing the footprint (a count only)."""
        ...


class BoxCounter(Protocol):
    """Counts of many boxes' own footprints at once: what the block stage asks of the range counter at element
    granularity (:meth:`~warpspeed.model.range_volumes.RangeFootprints.box_counts`)."""

    def box_counts(self, boxes: np.ndarray, *, loads: bool = True, stores: bool = False,
                   per: Sequence[int] | None = None, coarser: Sequence[int] = ()) -> BoxCounts: ...


def counter_names() -> list[str]:
    return [DEFAULT_COUNTER, *COUNTERS]


@lru_cache(maxsize=64)
def _sliceable(kernel: Kernel) -> bool:
    """Whether every access of every field can be marked by slices (each index a cell coordinate plus a
    constant, or a constant)."""
    return all(field_slice_accesses(f, kernel.domain) is not None for f in kernel.fields)


@lru_cache(maxsize=256)
def _dear(kernel: Kernel, granularity: int) -> bool:
    return counts_are_dear(kernel, granularity)


def choose_counter(name: str, kernel: Kernel, granularity: int, exact: bool = True) -> str:
    """The counter ``auto`` stands for at this granularity (any other name: itself): the ranges where they
    apply, else the lines where they apply, else the enumeration where ISL counts are dear or the accesses
    mark slices, else ISL.

    The slices win wherever they apply, also where ISL's counts are not dear (measured per estimate over
    blocks 1-512 cells wide: D3Q19 in ``zyxf`` whose rows of cells start on a sector, 250^3 to 1018x1024x1024,
    26-134 ms against 0.96-95 s with ISL; star3d-r4 with x and y swapped in the array, 22-76 ms against
    47-111 ms): the bitmap marks only the row bands a thin wave touches, so its cost does not grow with the
    domain, and the choice does not depend on the launch."""
    if name != DEFAULT_COUNTER:
        return name
    if applies(kernel, granularity, exact):
        return "ranges"
    if lines_apply(kernel, granularity, exact):
        return "lines"
    return "enumerated" if _dear(kernel, granularity) or _sliceable(kernel) else "isl"


def check_counter(name: str) -> str:
    """``name`` if it names a counter (or ``auto``), else a clear error listing the valid names."""
    if name != DEFAULT_COUNTER and name not in COUNTERS:
        raise InputError(f"unknown footprint counter {name!r}: valid are {', '.join(counter_names())}")
    return name


def footprint_counter(kernel: Kernel, granularity: int, *, exact: bool = True,
                      name: str = DEFAULT_COUNTER) -> FootprintCounter:
    """The counter ``name`` for ``kernel`` at ``granularity`` bytes (``exact``: see ``Footprints``); ``auto``:
    the one :func:`choose_counter` takes. ``ranges`` named for a kernel they do not count is an
    :class:`InputError`."""
    name = choose_counter(check_counter(name), kernel, granularity, exact)
    if name == "ranges" and not applies(kernel, granularity, exact):
        raise InputError(f"the 'ranges' footprint counter does not count kernel {kernel.name!r}: some access moves "
                         f"by more than {granularity} B per x step (an array-of-structures layout) or is not affine; "
                         "use auto, isl or enumerated")
    if name == "lines" and not lines_apply(kernel, granularity, exact):
        raise InputError(f"the 'lines' footprint counter does not count kernel {kernel.name!r} at {granularity} B: "
                         "it needs accesses that each index a dimension by a cell coordinate plus a constant or by "
                         "a constant, x the same dimension in each with constants below it; use auto, isl or "
                         "enumerated")
    return COUNTERS[name](kernel, granularity, exact=exact)


__all__ = ["COUNTERS", "DEFAULT_COUNTER", "BoxCounter", "FootprintCounter", "FootprintSet",
           "check_counter", "choose_counter", "counter_names", "footprint_counter"]
