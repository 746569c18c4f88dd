"""The four-limiter roofline: FP, L1, L2 and DRAM throughput limits in GLup/s."""

from __future__ import annotations

import math
from collections.abc import Iterable

from .device import Device
from .kernel import Flops

LIMITERS = ("FP", "L1", "L2", "DRAM")


def _limit(rate: float, cost: float) -> float:
    return rate / cost if cost > 0 else math.inf


def limiters(device: Device, precision: str, flops: Flops, l1_cycles_per_warp_lup: float,
             l2_B_per_lup: float, dram_B_per_lup: float) -> dict[str, float]:
    """Each limiter's maximal GLup/s; ``inf`` where the kernel puts no load on that resource.

    FP: FMA lanes x SMs x clock / FP instructions per lup (an FMA is one instruction for two flops).
    L1: SMs x clock x 32 lups per warp / L1 cycles per warp-lup.
    L2, DRAM: bandwidth in GB/s / (load + store) B/lup.
    """
    d = device
    return {
        "FP": _limit(d.lanes_per_sm(precision) * d.sm_count * d.clock_GHz, flops.instructions),
        "L1": _limit(d.sm_count * d.clock_GHz * 32, l1_cycles_per_warp_lup),
        "L2": _limit(d.l2_bw_GB_s, l2_B_per_lup),
        "DRAM": _limit(d.dram_bw_GB_s, dram_B_per_lup),
    }


def limiter_names(names: Iterable[str | None]) -> tuple[str, ...]:
    """The roofline's limiters, then every other limit name in ``names`` (the performance models' own, such
    as ``latency``) in order of first appearance: the columns, counts and bars of a set of results."""
    return LIMITERS + tuple(dict.fromkeys(n for n in names if n is not None and n not in LIMITERS))


def bottleneck(limits: dict[str, float]) -> tuple[str, float]:
    """The binding limiter (first in FP, L1, L2, DRAM order on ties) and its GLup/s."""
    name = min(LIMITERS, key=lambda k: limits[k])
    return name, limits[name]
