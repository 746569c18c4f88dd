"""The roofline's limiters as data: each is a device rate over the workload's use of it per lup, in GLup/s.

The four of the paper (FP, L1, L2, DRAM) are always on; the memory levels' limits come from
:data:`warpspeed.model.levels.LEVELS`. A further limiter is one more :class:`Limit` in
:data:`LIMITS` plus the stage that counts its cost: the TLB-page limiter (``warpspeed.model.tlb``) is the example,
on only for a device that gives its rate (``tlb_*`` keys); every consumer (performance models, reports,
rankings, plots) takes the names from the results.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ..device import Device
from .levels import LEVELS


@dataclass(frozen=True)
class Limit:
    """One limiter: ``rate(device, precision)`` (G units per second; None: the device lacks the resource, the
    limiter is off) divided by the workload's ``cost`` (units per lup, keyed by ``name``)."""

    name: str
    rate: Callable[[Device, str], float | None]
    meaning: str


LIMITS: tuple[Limit, ...] = (
    Limit("FP", lambda d, precision: d.lanes_per_sm(precision) * d.sm_count * d.clock_GHz,
          "FMA lanes x SMs x clock / FP instructions per lup (an FMA is one instruction for two flops)"),
    *(Limit(lv.name, lv.rate, lv.meaning) for lv in LEVELS),  # one per memory level (warpspeed.model.levels)
    Limit("TLB", lambda d, precision: d.tlb_walks_per_ns if d.tlb_page_bytes is not None else None,
          "page walks per ns / pages walked per lup (off unless the device gives tlb_page, tlb_reach, "
          "tlb_walk_rate)"),
)
LIMITERS = ("FP", "L1", "L2", "DRAM")
"""The limiters every device has (the paper's four roofline limits)."""


def _limit(rate: float, cost: float) -> float:
    return rate / cost if cost > 0 else math.inf


def roofline_limits(device: Device, precision: str, costs: Mapping[str, float]) -> dict[str, float]:
    """Every limiter the device has, in :data:`LIMITS` order: its GLup/s (``inf`` where the kernel puts no
    load on that resource). ``costs`` maps a limiter's name to the workload's units per lup."""
    out = {}
    for lim in LIMITS:
        rate = lim.rate(device, precision)
        if rate is not None:
            out[lim.name] = _limit(rate, costs.get(lim.name, 0.0))
    return out


def limiter_names(names: Iterable[str | None]) -> tuple[str, ...]:
    """The roofline's limiters (the paper's four and the memory levels of ``names``, such as a memory-side
    cache's, in :data:`LIMITS` order), then every other limit name in ``names`` (the performance models' own,
    such as ``latency``) in order of first appearance: the columns, counts and bars of a set of results."""
    given: tuple[str, ...] = tuple(dict.fromkeys(n for n in names if n is not None))
    # the paper's four, and a memory level only some devices have (the MSC) among them in the hierarchy's order
    levels = {lv.name for lv in LEVELS}
    roof = tuple(lim.name for lim in LIMITS if lim.name in LIMITERS or (lim.name in levels and lim.name in given))
    return roof + tuple(n for n in given if n not in roof)


def bottleneck(limits: dict[str, float]) -> tuple[str, float]:
    """The binding limiter (the first in :data:`LIMITS` order on ties) and its GLup/s."""
    name = min(limits, key=lambda k: limits[k])
    return name, limits[name]


__all__ = ["LIMITERS", "LIMITS", "Limit", "bottleneck", "limiter_names", "roofline_limits"]
