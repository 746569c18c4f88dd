"""Capacity misses: the part of a redundant (or potentially reused) volume that a cache fails to keep.

The hit rate of the redundant volume is a fitted, smooth function of the oversubscription
O = allocated volume / cache capacity: the device's :class:`~warpspeed.device.hitrates.HitRateCurve`
(``devices/hit_rates.toml`` per architecture family, or the device file); :func:`reuse` applies it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from ..device.hitrates import HitRateCurve


@dataclass(frozen=True)
class CacheReuse:
    """Reuse at one cache for one cause: what could hit, how full the cache is, what does hit."""

    potential_B_per_lup: float  # redundant or overlapping volume that could hit
    allocated_bytes: float  # the volume competing for the cache meanwhile
    capacity_bytes: float
    oversubscription: float
    hit_rate: float
    # how many times the volume must survive the cache's pressure: the hit rate is the curve's to that power
    # (a partially written sector waits once for each writer that comes at its own time)
    waits: float = 1.0

    @property
    def hit_B_per_lup(self) -> float:
        return self.hit_rate * self.potential_B_per_lup

    @property
    def miss_B_per_lup(self) -> float:
        return self.potential_B_per_lup - self.hit_B_per_lup

    def to_dict(self) -> dict:
        return {"potential_B_per_lup": self.potential_B_per_lup, "allocated_bytes": self.allocated_bytes,
                "capacity_bytes": self.capacity_bytes,
                # an empty cache (capacity 0) is infinitely oversubscribed: null, as JSON has no infinity
                "oversubscription": self.oversubscription if math.isfinite(self.oversubscription) else None,
                "hit_rate": self.hit_rate, "hit_B_per_lup": self.hit_B_per_lup,
                "miss_B_per_lup": self.miss_B_per_lup, "waits": self.waits}

    @classmethod
    def from_dict(cls, d: Mapping) -> CacheReuse:
        """Back from ``to_dict`` (a null oversubscription is an empty cache's infinite one)."""
        o = d["oversubscription"]
        return cls(d["potential_B_per_lup"], d["allocated_bytes"], d["capacity_bytes"],
                   math.inf if o is None else o, d["hit_rate"], d.get("waits", 1.0))


def reuse(potential_B_per_lup: float, allocated_bytes: float, capacity_bytes: float,
          curve: HitRateCurve, waits: float = 1.0) -> CacheReuse:
    """Apply a hit-rate curve, ``waits`` times over (the volume survives each wait at the curve's rate);
    nothing to reuse means nothing hits (and O is still reported)."""
    o = allocated_bytes / capacity_bytes if capacity_bytes > 0 else float("inf")
    rate = curve(o) ** waits if potential_B_per_lup > 0 else 0.0
    return CacheReuse(potential_B_per_lup, allocated_bytes, capacity_bytes, o, rate, waits)
