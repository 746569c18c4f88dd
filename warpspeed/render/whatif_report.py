"""The what-if sweep as a text table: per value of the swept device key, the best configuration, its GLup/s and
limiter, its DRAM volume and z-layer hit rate (and a memory-side cache's, where the device has one: ``warpspeed
whatif``)."""

from __future__ import annotations

from collections.abc import Sequence

from ..device import override_kind
from ..model.levels import level
from ..studies.whatif import WhatIfPoint
from ..units import format_quantity


def whatif_table(key: str, points: Sequence[WhatIfPoint]) -> str:
    """One row per swept value of ``key`` (a value where nothing can launch says why)."""
    kind = override_kind(key)
    # a device with a memory-side cache: its z-layer hit rate too (the DRAM's; the L2's gives the MSC traffic)
    msc = any(p.best.estimate is not None and p.best.estimate.memory_side is not None for p in points)
    rows = [f"{key:>14}  {'best block':<12}{'fold':<7}{'GLup/s':>8}  {'limiter':<8}{'DRAM B/lup':>11}"
            f"{'z-layer hit':>12}" + (f"{'MSC z hit':>11}" if msc else "")]
    for p in points:
        e = p.best.estimate
        if e is None:
            rows.append(f"{format_quantity(p.value, kind):>14}  cannot launch: {p.best.error}")
            continue
        rows.append(f"{format_quantity(p.value, kind):>14}  {'x'.join(map(str, e.block)):<12}"
                    f"{'x'.join(map(str, e.folding)):<7}{e.performance_GLup_s:>8.3g}  {e.limiter:<8}"
                    f"{level('DRAM').traffic_B_per_lup(e.volumes_B_per_lup):>11.3g}{e.layer_z.hit_rate:>12.2f}"
                    + (f"{e.memory_side.layer_z.hit_rate:>11.2f}" if e.memory_side is not None else ""))
    return "\n".join(rows)
