"""Measured-source projection (Van Lanker et al., Euro-Par 2024): carry a measured run to another GPU.

Each memory level gives one projection ``P_t = P_s / roofline_s(OI_s) x roofline_t(OI_t)``, where a
level's roofline is ``min(FP ceiling, OI x bandwidth ceiling)``:

- FP ceiling: the instruction-mix peak (FMA at full peak, ADD/MUL at half, weighted by their counts)
  times the warp usage (active threads per instruction / warp size);
- bandwidth ceilings: harmonic means weighted by the bytes that hit each level at and below it
  (L1: L1 + L2 + DRAM hits, L2: L2 + DRAM hits, DRAM: DRAM).

The three projections give an interval and its midpoint. *measured* keeps the source's operational
intensities on the target; *hybrid* takes the target's from warpspeed's estimated volumes there (cache
sizes change the volumes, which the measured-only projection cannot see).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from ..device import Device
from ..errors import InputError
from ..model.levels import MEASURED_LEVELS, bandwidths_GB_s, traffic_B_per_lup

# the levels Nsight Compute measures (a memory-side cache has no counter there: measured runs leave it out)
LEVELS = MEASURED_LEVELS
LEVEL_NAMES = tuple(lv.name for lv in LEVELS)


def _field(level_name: str) -> str:
    return f"{level_name.lower()}_bytes"


@dataclass(frozen=True)
class Traffic:
    """Bytes moved at each level by one kernel run: L1 requests, L2 -> L1, DRAM -> L2 (loads + stores)."""

    l1_bytes: float
    l2_bytes: float
    dram_bytes: float

    def __post_init__(self) -> None:
        for name in ("l1_bytes", "l2_bytes", "dram_bytes"):
            v = getattr(self, name)
            if not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
                raise InputError(f"measured {name} must be a non-negative number, got {v!r}.")

    @classmethod
    def of_levels(cls, by_level: dict[str, float]) -> Traffic:
        """From bytes keyed by level name (warpspeed.model.levels)."""
        return cls(**{_field(name): by_level[name] for name in LEVEL_NAMES})

    def level(self, name: str) -> float:
        return getattr(self, _field(name))

    def hits(self) -> dict[str, float]:
        """Bytes served by each level: what it moved minus what the level below delivered to it."""
        moved = [self.level(name) for name in LEVEL_NAMES]
        return {name: max(m - below, 0.0) for name, m, below in zip(LEVEL_NAMES, moved, [*moved[1:], 0.0],
                                                                     strict=True)}


@dataclass(frozen=True)
class MeasuredRun:
    """A kernel run measured on the source GPU (e.g. from Nsight Compute)."""

    time_s: float
    traffic: Traffic
    work: float  # FLOPs, or lattice updates for kernels without flops (the formula is unit-free)
    fma: float = 0.0  # FP instruction counts for the mix ceiling (0, 0, 0: FMA peak)
    add: float = 0.0
    mul: float = 0.0
    warp_usage: float = 1.0  # mean active threads per warp instruction / warp size
    work_is_flops: bool = True
    lups: float | None = None  # lattice updates of the run, for GLup/s figures

    def __post_init__(self) -> None:
        if not self.time_s > 0 or not self.work > 0:
            raise InputError("a measured run needs a positive time and a positive amount of work (flops or lups).")
        if not 0 < self.warp_usage <= 1:
            raise InputError(f"warp usage must be in (0, 1], got {self.warp_usage}.")
        if min(self.fma, self.add, self.mul) < 0:
            raise InputError("FP instruction counts must be non-negative.")

    @property
    def performance(self) -> float:
        """Work per second."""
        return self.work / self.time_s


def fp_ceiling(d: Device, precision: str, run: MeasuredRun) -> float:
    """FLOP/s the instruction mix and the warp usage allow (inf when the work is not counted in flops)."""
    if not run.work_is_flops:
        return math.inf
    peak = d.peak_GFLOP_s(precision) * 1e9
    n = run.fma + run.add + run.mul
    mix = peak if n == 0 else peak * run.fma / n + 0.5 * peak * (run.add + run.mul) / n
    return run.warp_usage * mix


def bandwidth_ceilings(d: Device, traffic: Traffic) -> dict[str, float]:
    """Weighted harmonic bandwidths (bytes/s) of each level over the bytes that hit it and the levels below."""
    bw = {k: v * 1e9 for k, v in bandwidths_GB_s(d).items()}
    hits = traffic.hits()
    out = {}
    for i, level in enumerate(LEVEL_NAMES):
        below = LEVEL_NAMES[i:]
        n = sum(hits[b] for b in below)
        t = sum(hits[b] / bw[b] for b in below)
        out[level] = n / t if t > 0 else bw[level]
    return out


def roofline(oi: float, fp: float, bandwidth: float) -> float:
    return min(fp, oi * bandwidth)


@dataclass(frozen=True)
class LevelProjection:
    level: str
    oi_source: float  # work per byte at this level on the source
    oi_target: float
    roofline_source: float  # work/s
    roofline_target: float
    performance: float  # projected work/s on the target

    def to_dict(self) -> dict:
        return {"oi_source": self.oi_source, "oi_target": self.oi_target, "roofline_source": self.roofline_source,
                "roofline_target": self.roofline_target, "performance": self.performance}


@dataclass(frozen=True)
class MeasuredProjection:
    mode: str  # "measured" | "hybrid"
    source: str
    target: str
    run: MeasuredRun
    levels: tuple[LevelProjection, ...]

    @property
    def interval(self) -> tuple[float, float]:
        perf = [lp.performance for lp in self.levels if math.isfinite(lp.performance)]
        return min(perf), max(perf)

    @property
    def midpoint(self) -> float:
        lo, hi = self.interval
        return (lo + hi) / 2

    @property
    def speedup_interval(self) -> tuple[float, float]:
        lo, hi = self.interval
        return lo / self.run.performance, hi / self.run.performance

    @property
    def time_interval_s(self) -> tuple[float, float]:
        lo, hi = self.interval
        return self.run.work / hi, self.run.work / lo

    def to_dict(self) -> dict:
        lo, hi = self.interval
        d = {"mode": self.mode, "from": self.source, "to": self.target,
             "measured_performance": self.run.performance, "interval": [lo, hi], "midpoint": self.midpoint,
             "speedup": self.midpoint / self.run.performance, "speedup_interval": list(self.speedup_interval),
             "time_interval_s": list(self.time_interval_s),
             "work_unit": "FLOP" if self.run.work_is_flops else "lup",
             "levels": {lp.level: lp.to_dict() for lp in self.levels}}
        if self.run.lups:
            per = self.run.lups / self.run.work / 1e9  # GLup per unit of work
            d.update({"measured_GLup_s": self.run.performance * per, "interval_GLup_s": [lo * per, hi * per],
                      "midpoint_GLup_s": self.midpoint * per})
        return d


#: a measured run this many times faster or slower than the estimate is probably mistyped (unit, domain)
IMPLAUSIBLE_FACTOR = 10.0


def implausible_run(measured_GLup_s: float, estimated_GLup_s: float, device: str) -> str | None:
    """A warning when a measured run is more than :data:`IMPLAUSIBLE_FACTOR` away from the estimate of the
    source's best configuration (the model is rarely off by 2x: such a gap is usually a wrong time unit, a
    different domain or a different kernel); None otherwise."""
    if not (measured_GLup_s > 0 and 0 < estimated_GLup_s < math.inf):
        return None
    ratio = estimated_GLup_s / measured_GLup_s
    if 1 / IMPLAUSIBLE_FACTOR <= ratio <= IMPLAUSIBLE_FACTOR:
        return None
    how = f"{ratio:.3g}x slower" if ratio > 1 else f"{1 / ratio:.3g}x faster"
    return (f"the measured run ({measured_GLup_s:.3g} GLup/s) is {how} than warpspeed's estimate on {device} "
            f"({estimated_GLup_s:.3g} GLup/s at its best configuration); check the time's unit, the domain "
            "(--domain: the run's cells) and that the measured kernel is this one.")


def project_measured(run: MeasuredRun, source: Device, target: Device, precision: str = "fp64",
                     target_traffic: Traffic | None = None) -> MeasuredProjection:
    """Project a measured run; ``target_traffic`` (estimated bytes on the target) makes it *hybrid*."""
    t_traffic = target_traffic or run.traffic
    fp_s, fp_t = fp_ceiling(source, precision, run), fp_ceiling(target, precision, run)
    bw_s, bw_t = bandwidth_ceilings(source, run.traffic), bandwidth_ceilings(target, t_traffic)
    levels = []
    for level in LEVEL_NAMES:
        bs, bt = run.traffic.level(level), t_traffic.level(level)
        if bs <= 0 or bt <= 0:
            continue  # no traffic at this level: it cannot bound anything
        oi_s, oi_t = run.work / bs, run.work / bt
        rs, rt = roofline(oi_s, fp_s, bw_s[level]), roofline(oi_t, fp_t, bw_t[level])
        levels.append(LevelProjection(level, oi_s, oi_t, rs, rt, run.performance / rs * rt if rs > 0 else math.nan))
    if not levels:
        raise InputError("the measured run moves no bytes at any level: nothing to project.")
    if not any(math.isfinite(lp.performance) for lp in levels):  # overflow: times, bytes or counts out of scale
        raise InputError(f"the measured run ({run.time_s:g} s, {run.traffic.l1_bytes:g} / {run.traffic.l2_bytes:g} / "
                         f"{run.traffic.dram_bytes:g} B at L1 / L2 / DRAM) projects to no finite performance at any "
                         "level: check the measured time and bytes.")
    return MeasuredProjection("hybrid" if target_traffic else "measured", source.id, target.id, run, tuple(levels))


def measured_run(lups: float, *, time_s: float | None = None, traffic: Traffic | None = None,
                 fp: tuple[float, float, float] | None = None, warp_usage: float | None = None,
                 ncu_rows: list[dict] | None = None, precision: str = "fp64", warp_size: int = 32) -> MeasuredRun:
    """A :class:`MeasuredRun` from ncu rows (see :mod:`warpspeed.measurement.ncu`) and/or explicit values.

    Explicit values win over ncu's. The work is counted in FLOPs (2 per FMA) when FP instruction counts
    are known and non-zero, else in lattice updates (then the FP ceiling does not apply).
    """
    from .ncu import FP_METRICS, METRICS, metric

    def ncu(name: str) -> float | None:
        return None if not ncu_rows else metric(ncu_rows, name)

    if time_s is None:
        time_s = ncu(METRICS["time"])
    if traffic is None:
        parts = {}
        for lv in LEVELS:
            counts = [(ncu(METRICS[name]), unit_bytes) for name, unit_bytes in lv.ncu_traffic]
            parts[lv.name] = None if any(x is None for x, _ in counts) else sum(x * u for x, u in counts)
        missing = [k for k, v in parts.items() if v is None]
        if missing:
            names = [METRICS[name] for lv in LEVELS if lv.name in missing for name, _ in lv.ncu_traffic]
            raise InputError(f"the measured bytes at {', '.join(missing)} are missing: give --measured-bytes "
                             f"{','.join(LEVEL_NAMES)} or an ncu CSV with the metrics {', '.join(names)}.")
        traffic = Traffic.of_levels(parts)
    if time_s is None:
        raise InputError(f"the measured time is missing: give --measured-time or an ncu CSV with {METRICS['time']}.")
    if fp is None and ncu_rows:
        counts = [ncu(m) for m in FP_METRICS[precision]]
        fp = None if None in counts else tuple(counts)
    if warp_usage is None:
        threads = ncu(METRICS["warp_usage_threads"])
        warp_usage = 1.0 if threads is None else min(threads / warp_size, 1.0)
    fma, add, mul = fp or (0.0, 0.0, 0.0)
    flops = 2 * fma + add + mul
    work, is_flops = (flops, True) if flops > 0 else (float(lups), False)
    return MeasuredRun(time_s, traffic, work, fma, add, mul, warp_usage, is_flops, float(lups))


def estimated_traffic(volumes_B_per_lup: Mapping[str, float], lups: float) -> Traffic:
    """Bytes per level of ``lups`` updates from an estimate's volumes (L1: requests incl. write-through stores)."""
    per_lup = traffic_B_per_lup(volumes_B_per_lup)
    return Traffic.of_levels({name: b * lups for name, b in per_lup.items()})
