"""Footprint counters: the interface behind the wave's sector counts, and the choice between its two kinds.

The DRAM stage (:mod:`warpspeed.dram`) needs four operations on the sectors (or lines) a set of cells
touches: the footprint of a cell set, the empty footprint, intersection and difference of footprints,
and their sizes per field. Two counters provide them with the same numbers:

- ``isl`` (:class:`~warpspeed.isl_volumes.Footprints`): integer sets; the cost does not grow with the
  number of cells, but it is high where a field's rows are single cells whose offset inside a sector
  cycles with x and another index (array-of-structures layouts);
- ``enumerated`` (:class:`~warpspeed.enumerated_volumes.EnumeratedFootprints`): lists the sector of every
  access of every cell; exact, the cost grows with the cells of the wave.

``auto`` (the default) takes the enumeration exactly where ISL counts are dear
(:func:`~warpspeed.isl_volumes.counts_are_dear`). The brute-force twin in the tests is a third,
independent reference for the same counts.
"""

from __future__ import annotations

from typing import Protocol

import islpy as isl

from .enumerated_volumes import EnumeratedFootprints
from .errors import InputError
from .isl_volumes import Footprints, counts_are_dear
from .kernel import Kernel

COUNTERS = {"isl": Footprints, "enumerated": EnumeratedFootprints}
DEFAULT_COUNTER = "auto"


class FootprintSet(Protocol):
    """The distinct granules (sectors or lines) of some cells' accesses, tagged by field."""

    def intersect(self, other: FootprintSet) -> FootprintSet: ...

    def subtract(self, other: FootprintSet) -> FootprintSet: ...

    def size(self) -> int: ...


class FootprintCounter(Protocol):
    """Counts the granules that sets of cells touch, for one kernel at one granularity (bytes)."""

    def empty(self) -> FootprintSet: ...

    def footprint(self, cells: isl.Set, *, loads: bool = True, stores: bool = False) -> FootprintSet: ...

    def footprint_size(self, cells: isl.Set, *, loads: bool = True, stores: bool = False) -> int: ...

    def count_by_field(self, fp: FootprintSet) -> tuple[int, ...]: ...


def counter_names() -> list[str]:
    return [DEFAULT_COUNTER, *COUNTERS]


def check_counter(name: str) -> str:
    """``name`` if it names a counter (or ``auto``), else a clear error listing the valid names."""
    if name != DEFAULT_COUNTER and name not in COUNTERS:
        raise InputError(f"unknown footprint counter {name!r}: valid are {', '.join(counter_names())}")
    return name


def footprint_counter(kernel: Kernel, granularity: int, *, exact: bool = True,
                      name: str = DEFAULT_COUNTER) -> FootprintCounter:
    """The counter ``name`` for ``kernel`` at ``granularity`` bytes (``exact``: see ``Footprints``)."""
    if check_counter(name) == DEFAULT_COUNTER:
        name = "enumerated" if counts_are_dear(kernel, granularity) else "isl"
    return COUNTERS[name](kernel, granularity, exact=exact)


__all__ = ["COUNTERS", "DEFAULT_COUNTER", "FootprintCounter", "FootprintSet", "check_counter", "counter_names",
           "footprint_counter"]
