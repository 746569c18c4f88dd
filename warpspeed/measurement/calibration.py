"""Fit the capacity model's hit-rate curves and the DRAM bandwidth to measured runs (Ernst et al., sec. 5.6).

A measured volume minus what the model counts as certain gives the misses of one cause; divided by the
volume that cause could reuse it is that cause's miss rate, at the oversubscription O the model computes
for that configuration. The curves are fitted in two stages, each from the observable that isolates it:

1. ``l1``: measured L2 load = compulsory L2 load + (1 - hit) x the L1's redundant requests;
   ``l2_store``: measured DRAM store = unique stored sectors + partial-store misses (a partially written
   sector that leaves the L2 early is written once more), so the stores alone give its miss rate; a sector
   that waits ``w`` times (``CacheReuse.waits``) keeps ``hit^w``, so its point is the measured hit to the
   ``1/w``;
2. ``l2_y`` / ``l2_z``: measured DRAM load = wave footprint - hit_y x y-overlap - hit_z x z-overlap
   + partial-store misses, with the partial-store misses of the stage-1 curve and the other layer at its
   current curve; a row serves a curve only when that overlap is at least 10 % of the footprint.

A curve whose points do not span its drop (all hits high, e.g. every partial store of a sweep stayed in
the cache) gets only its level fitted (:func:`level_curve`); one with fewer than :data:`MIN_POINTS`
points is kept.

The ``l1`` and ``l2_store`` curves are anchored at hit(0) = 1 (:data:`ANCHORED_CURVES`): where the resident
blocks' lines fit the L1, it keeps every redundant load (the measured L2 load is the blocks' footprint), and a
wave that stores nothing pushes no partially written sector out, so only the shape of the fall,
``exp(-b (exp(c O) - 1))`` (``a = e^b`` in the shared form), is fitted. A free level (``a <= 1``) loses its
``1 - a exp(-b)`` of the redundant loads at every O; kernels that re-read their footprint many times (a 27-point
box re-reads it 2-13 times) turn that into an L2 load 3-19 % high where the L1 holds everything.

Hit rates are clipped to [0, 1] and fitted with ``a exp(-b exp(c O))`` by ``scipy.optimize.curve_fit``
(optional extra ``warpspeed[calibrate]``), each point weighted by its reusable volume's share of the
measured volume (:func:`observed_points`), residuals beyond :data:`ROBUST_SCALE` counted linearly (soft
L1): the fit minimises the relative errors of the volumes that validation compares, not of hit rates,
which are noise where the reusable volume is a sliver of the traffic, and a few rows the curve form
cannot follow do not pull it off the rest. Rows of the streaming kernel ``copy`` whose domain is large
enough to stream from DRAM (moving at least :data:`MIN_STREAM_L2` times the L2 capacity) give the DRAM
bandwidth: the best configuration's measured (read + write) bytes per second.

Several devices of one architecture (an H100 and an H200) can be calibrated together: their rows are pooled
into one fit per curve (O already scales with each device's caches), the bandwidth stays per device.

The latency model's parallelism values (``sectors_in_flight_per_warp``, ``dram_run_time``,
``dram_run_exponent``, ``l2_request_rate``) are fitted to the measured GLup/s (:func:`fit_parallelism`): the
latency model is run on every timed row with the measured volumes and L1 cycles in place of the model's, so that the fit
sees the performance model alone, and the mean squared log of predicted / measured GLup/s, averaged per
sweep, is minimised.
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ..device import HIT_RATE_CURVES, Device, HitRateCurve, device_ids
from ..errors import InputError, install_hint
from ..model.capacity import CacheReuse
from ..model.estimate import SHORT_KERNEL_S
from ..model.latency import LatencyModel, run_overhead_bytes
from ..model.performance import Workload
from ..progress import Progress
from .measurements import VOLUME_COLUMNS, Measurement
from .validation import Pair, estimate_measurements

MIN_POINTS = 4
MIN_HIT_RANGE = 0.2  # the observed hit rates must span the curve's drop by this much to determine it
MIN_SHARE = 0.10  # a row serves a curve when that cause's reusable volume is this share of the base volume
ROBUST_SCALE = 0.05  # residuals (relative volume errors) beyond this count linearly, not squared (soft L1)
FIT_STEEPNESSES = (2.0, 4.0, 8.0, 16.0)  # further starts of a curve fit: steepness c ...
FIT_DROPS = (1.0, 1.5)  # ... and the O where the start's hit rate is one half (b = ln 2 e^(-c O))
LAYER_PASSES = 8  # at most this many refits of the two layer curves, each with the other's last curve
SETTLED = 2e-3  # layer curves whose hit rates moved less than this between passes are settled
ANCHORED_CURVES = ("l1", "l2_store")  # fitted with hit(0) = 1: nothing is lost at O = 0 (module docstring)
MAX_ANCHORED_B = 20.0  # b of an anchored fit stays below this (a = e^b < 5e8, a number a device file holds); a
# fit that runs into it found a fall close to exp(-b c O) (c -> 0), which the bound still represents well


@dataclass(frozen=True)
class CurveFit:
    curve: str
    points: tuple[tuple[float, float], ...]  # (oversubscription, observed hit rate)
    fitted: HitRateCurve | None  # None: too few points, the old curve stays
    old: HitRateCurve
    rms: float | None  # of the fit residuals
    anchored: bool = False  # fitted with hit(0) = 1 (:data:`ANCHORED_CURVES`): its shape, never a level alone

    @property
    def kept_because(self) -> str | None:
        """Why the old curve stays (None where a curve was fitted)."""
        if self.fitted is not None:
            return None
        return f"not enough to fit (need {MIN_POINTS})" if len(self.points) < MIN_POINTS else "the fit did not converge"

    @property
    def level_only(self) -> bool:
        """A fitted curve whose points do not reach past the drop: only its level was fitted."""
        return self.fitted is not None and not self.anchored and not _spans_drop(self.points)

    def to_dict(self) -> dict:
        return {"curve": self.curve, "points": len(self.points), "rms": self.rms, "anchored": self.anchored,
                "fitted": None if self.fitted is None else self.fitted.to_dict(), "old": self.old.to_dict()}


def _hit(measured_excess: float, potential: float) -> float:
    return min(1.0, max(0.0, 1.0 - measured_excess / potential))


def _miss(cause: CacheReuse, curve: HitRateCurve | None) -> float:
    """The cause's misses in B/lup under ``curve`` (None: as estimated)."""
    if curve is None:
        return cause.miss_B_per_lup
    pot = cause.potential_B_per_lup
    return pot * (1.0 - curve(cause.oversubscription) ** cause.waits) if pot > 0 else 0.0


def observed_points(pairs: Sequence[Pair], curves: dict[str, HitRateCurve] | None = None
                    ) -> dict[str, list[tuple[float, float, float]]]:
    """(O, hit, weight) per curve from the measured volumes of each row (rows without the volume are skipped).

    The weight is the cause's reusable volume as a share of the measured volume that shows it (the L2 load
    for ``l1``, the DRAM store for ``l2_store``, the DRAM load for the layers): a hit-rate error times the
    weight is the relative error it makes in that volume, so a fit weighted by it fits the volumes that
    are validated, and a row whose reuse is a sliver of its traffic (a noisy hit rate) counts little.
    ``curves`` replaces the estimate's curves where the misses of the other causes are subtracted.
    """
    curves = curves or {}
    out: dict[str, list[tuple[float, float, float]]] = {c: [] for c in HIT_RATE_CURVES}
    for p in pairs:
        e, m = p.estimate, p.measured
        v, l1 = e.volumes_B_per_lup, e.l1_capacity
        l2_load = m.volume("l2_load")
        # an L1 that shared memory fills completely (O infinite) keeps nothing: no point on its curve
        if (l2_load is not None and math.isfinite(l1.oversubscription)
                and l1.potential_B_per_lup > MIN_SHARE * v["l2_load_compulsory"]):
            out["l1"].append((l1.oversubscription, _hit(l2_load - v["l2_load_compulsory"], l1.potential_B_per_lup),
                              _weight(l1.potential_B_per_lup, l2_load)))
        ps = e.partial_stores
        unique_stores = v["dram_store"] - ps.miss_B_per_lup
        dram_store = m.volume("dram_store")
        if dram_store is not None and ps.potential_B_per_lup > MIN_SHARE * unique_stores:
            hit = _hit(dram_store - unique_stores, ps.potential_B_per_lup) ** (1.0 / ps.waits)  # per wait
            out["l2_store"].append((ps.oversubscription, hit, _weight(ps.potential_B_per_lup, dram_store)))
        dram = m.volume("dram_load")
        if dram is None:
            continue
        base = v["dram_load_compulsory"]
        y, z = e.layer_y, e.layer_z
        certain = base - y.potential_B_per_lup - z.potential_B_per_lup  # every overlap hits, no misses
        miss = {k: _miss(cause, curves.get(k)) for k, cause in (("l2_y", y), ("l2_z", z), ("l2_store", ps))}
        for curve, cause in (("l2_y", y), ("l2_z", z)):
            if cause.potential_B_per_lup <= MIN_SHARE * base:
                continue
            others = sum(x for k, x in miss.items() if k != curve)
            excess = dram - certain - others
            out[curve].append((cause.oversubscription, _hit(excess, cause.potential_B_per_lup),
                               _weight(cause.potential_B_per_lup, dram)))
    return out


def _weight(potential: float, measured: float) -> float:
    return potential / measured if measured > 0 else 1.0


def observed_hit_rates(pairs: Sequence[Pair], curves: dict[str, HitRateCurve] | None = None
                       ) -> dict[str, list[tuple[float, float]]]:
    """(O, hit) per curve (:func:`observed_points` without the weights)."""
    return {c: [(o, h) for o, h, _ in pts] for c, pts in observed_points(pairs, curves).items()}


def fit_curve(points: Sequence[tuple[float, float]], start: HitRateCurve, source: str,
              weights: Sequence[float] | None = None, anchored: bool = False) -> tuple[HitRateCurve, float]:
    """Least-squares fit of ``a exp(-b exp(c O))`` with 0 <= a <= 1, b, c > 0; each residual times its weight
    (default 1). The rms returned is of the unweighted hit-rate residuals. ``anchored``: hit(0) = 1, i.e.
    ``exp(-b (exp(c O) - 1))`` with b, c > 0 fitted and ``a = e^b``."""
    try:
        import scipy.optimize  # noqa: F401
    except ImportError:
        raise InputError(f"calibration needs scipy; {install_hint('calibrate')}.") from None
    if anchored:
        return _fit_anchored(points, start, source, weights)

    def f(x, a, b, c):
        return a * np.exp(-b * np.exp(np.minimum(c * x, 50.0)))

    # b and c trade against each other (b e^(cO) = e^(cO + ln b)), so a fit from one start can stop on a
    # shoulder of the objective: start from the given curve and from a few steepnesses, keep the best
    starts = [(min(max(start.a, 1e-3), 1.0), max(start.b, 1e-6), max(start.c, 1e-3))]
    starts += [(1.0, math.log(2.0) * math.exp(-c * half), c) for c in FIT_STEEPNESSES for half in FIT_DROPS]
    (a, b, c), rms = _best_fit(f, points, weights, starts, ([0.0, 1e-12, 1e-6], [1.0, 1e6, 100.0]))
    return HitRateCurve(a, b, c, source), rms


def _fit_anchored(points: Sequence[tuple[float, float]], start: HitRateCurve, source: str,
                  weights: Sequence[float] | None) -> tuple[HitRateCurve, float]:
    """:func:`fit_curve` with hit(0) = 1: ``exp(-b (exp(c O) - 1))``, returned as ``a = e^b, b, c``."""

    def f(x, b, c):
        return np.exp(-b * np.expm1(np.minimum(c * x, 50.0)))

    # starts: the given curve's b and c, and each steepness with its hit rate one half at each drop (as fit_curve;
    # shallower steepnesses too: an anchored fall can be nearly linear over the observed O)
    starts = [(min(max(start.b, 1e-6), MAX_ANCHORED_B / 2), max(start.c, 1e-3))]
    starts += [(math.log(2.0) / math.expm1(c * half), c) for c in (0.25, 0.5, 1.0, *FIT_STEEPNESSES)
               for half in (*FIT_DROPS, 4.0)]
    starts = [(min(max(b, 1e-12), MAX_ANCHORED_B), c) for b, c in starts]
    (b, c), rms = _best_fit(f, points, weights, starts, ([1e-12, 1e-6], [MAX_ANCHORED_B, 100.0]))
    a = math.exp(b)
    while a * math.exp(-b) < 1.0:  # rounding: the curve's own hit(0) = a e^-b must come out 1 (an ulp or two)
        a = math.nextafter(a, math.inf)
    return HitRateCurve(a, b, c, source), rms


def _best_fit(f: Callable, points: Sequence[tuple[float, float]], weights: Sequence[float] | None,
              starts: Sequence[tuple[float, ...]], bounds: tuple[list[float], list[float]]
              ) -> tuple[tuple[float, ...], float]:
    """The parameters of ``f`` (and the rms of its unweighted residuals) that ``curve_fit`` finds from each of
    ``starts`` within ``bounds`` with the lowest robust cost (soft L1 of the weighted residuals, as curve_fit
    minimises it); an :class:`InputError` where no start converges."""
    from scipy.optimize import curve_fit
    o = np.array([p[0] for p in points], dtype=float)
    h = np.array([p[1] for p in points], dtype=float)
    w = np.ones_like(o) if weights is None else np.maximum(np.asarray(weights, dtype=float), 1e-9)

    def cost(params) -> float:
        z = ((f(o, *params) - h) * w / ROBUST_SCALE) ** 2
        return float(np.sum(2.0 * (np.sqrt(1.0 + z) - 1.0)))

    best, best_cost, error = None, math.inf, None
    for p0 in starts:
        try:
            params, _ = curve_fit(f, o, h, p0=p0, sigma=1.0 / w, bounds=bounds, loss="soft_l1",
                                  f_scale=ROBUST_SCALE, maxfev=20000)
        except (RuntimeError, ValueError) as e:
            error = e
            continue
        if best is None or cost(params) < best_cost:
            best, best_cost = params, cost(params)
    if best is None:
        raise InputError(f"the hit-rate fit did not converge on {len(points)} points: {error}") from None
    fitted = tuple(float(x) for x in best)
    return fitted, float(np.sqrt(np.mean((f(o, *fitted) - h) ** 2)))


@dataclass(frozen=True)
class Bandwidth:
    """The DRAM bandwidth a streaming kernel reached: the best measured configuration."""

    GB_s: float
    kernel: str
    configuration: str
    rows: int
    source: str

    def to_dict(self) -> dict:
        return {"dram_bw_GB_s": self.GB_s, "kernel": self.kernel, "configuration": self.configuration,
                "rows": self.rows, "source": self.source}


@dataclass(frozen=True)
class ParallelismFit:
    """The latency model's fitted values and how well they explain the measured GLup/s."""

    sectors_in_flight_per_warp: int
    dram_run_time_s: float  # DRAM time lost per contiguous run (bytes lost = this x the device's dram_bw)
    dram_run_exponent: float
    rows: int
    sweeps: int
    rms_log_ratio: float  # sqrt of the per-sweep mean squared log(predicted / measured), averaged
    source: str
    dram_run_overhead_bytes: float = 0.0  # the run time as bytes of streaming at the first row's device
    l2_requests_per_ns: float | None = None  # L1 -> L2 requests per ns (None: no row makes requests)

    def to_dict(self) -> dict:
        return {"sectors_in_flight_per_warp": self.sectors_in_flight_per_warp,
                "dram_run_time_ns": float(f"{self.dram_run_time_s * 1e9:.6g}"),
                "dram_run_exponent": self.dram_run_exponent,
                "dram_run_overhead_bytes": self.dram_run_overhead_bytes,
                "l2_requests_per_ns": self.l2_requests_per_ns,
                "rows": self.rows, "sweeps": self.sweeps,
                "rms_log_ratio": self.rms_log_ratio, "source": self.source}


MIN_PARALLELISM_ROWS = 20
MAX_REQUEST_RATE_GHZ = 10_000.0  # L2 requests per ns: far beyond any GPU (a fit that runs here found no limit)


def _measured_workload(p: Pair) -> Workload | None:
    """The estimate's workload with the measured volumes and L1 cycles where the row has them."""
    w = p.estimate.workload if p.estimate is not None else None
    if w is None:
        return None
    m = p.measured
    vol = dict(w.volumes_B_per_lup)
    vol.update({k: m.volume(k) for k in VOLUME_COLUMNS if m.volume(k) is not None})
    cycles = m.volume("l1_cycles_per_warp_lup")
    return replace(w, volumes_B_per_lup=vol, l1_cycles_per_warp_lup=cycles if cycles else w.l1_cycles_per_warp_lup)


@dataclass(frozen=True)
class L1RuleFit:
    """The L1 line rule's device numbers fitted to ncu's wavefronts (:func:`fit_l1_line_rule`): wavefronts per
    further load line that hits and that misses, per further store line and per busy warp; ``rows`` used,
    ``rms`` of the relative errors."""

    load_line: float
    missed_line: float
    store_line: float
    per_warp: float
    rows: int
    rms: float

    def device_values(self) -> dict[str, float]:
        """The fit as a device file holds it: whole lines per wavefront (1-1024; a line that costs nothing is
        1024 per wavefront), whole wavefronts per warp, the price of a missed line to 3 digits."""
        def per_wavefront(cost: float) -> int:
            return 1024 if cost <= 1 / 1024 else min(1024, max(1, round(1 / cost)))

        return {"l1_load_lines_per_wavefront": per_wavefront(self.load_line),
                "l1_store_lines_per_wavefront": per_wavefront(self.store_line),
                "l1_wavefronts_per_warp": round(self.per_warp),
                "l1_wavefronts_per_missed_line": float(f"{max(self.missed_line, 0.01):.3g}")}

    def to_dict(self) -> dict:
        return {"load_line": self.load_line, "missed_line": self.missed_line, "store_line": self.store_line,
                "per_warp": self.per_warp, "rows": self.rows, "rms": self.rms, "device_values": self.device_values()}


def fit_l1_line_rule(pairs: Sequence[Pair]) -> L1RuleFit | None:
    """Fit the line rule's prices (warpspeed.model.l1.LineCosts) to the measured L1 wavefronts of the rows on
    line-rule devices: each row's further lines are priced at its measured share of missed load sectors (L2
    load / L1 load), so that the fit sees the L1 rule alone, as :func:`fit_parallelism` sees the latency model;
    relative errors, soft-L1 beyond :data:`ROBUST_SCALE`, every sweep weighted alike. None with fewer than
    :data:`MIN_PARALLELISM_ROWS` usable rows."""
    from scipy.optimize import least_squares

    from ..application.resolve import resolve_kernel
    from ..model.estimate import l1_line_costs
    from ..model.l1 import line_rule

    rows, sweeps, kernels = [], [], {}  # kernels: resolved once per (name, domain), as estimate_measurements does
    for p in pairs:
        m = p.measured
        cycles, l1, l2 = (m.volume(k) for k in ("l1_cycles_per_warp_lup", "l1_load", "l2_load"))
        if p.device is None or not line_rule(p.device) or not cycles or not l1 or l2 is None:
            continue
        if (m.kernel, m.domain) not in kernels:
            kernels[m.kernel, m.domain] = resolve_kernel(m.kernel, m.domain)
        c = l1_line_costs(kernels[m.kernel, m.domain], p.device, m.block, m.folding, registers=m.registers)
        rows.append((c.bank, c.warps, c.store_lines, c.load_lines, min(l2 / l1, 1.0), cycles))
        sweeps.append((m.kernel, m.device, m.domain))
    if len(rows) < MIN_PARALLELISM_ROWS:
        return None
    bank, warps, store, load, f, measured = np.array(rows).T
    _, index, counts = np.unique(np.array([repr(k) for k in sweeps]), return_inverse=True, return_counts=True)
    weight = np.sqrt(len(counts) / counts[index] / len(counts))

    def relative(x) -> np.ndarray:
        hit, miss, st, warp = x
        return (bank + warp * warps + st * store + load * ((1 - f) * hit + f * miss)) / measured - 1

    fit = least_squares(lambda x: relative(x) * weight, [1 / 3, 1 / 3, 1 / 2, 4.0], bounds=(0, [4, 4, 4, 64]),
                        loss="soft_l1", f_scale=ROBUST_SCALE)
    hit, miss, st, warp = (float(v) for v in fit.x)
    return L1RuleFit(hit, miss, st, warp, len(rows), float(np.sqrt(np.mean(relative(fit.x) ** 2))))


def fit_parallelism(pairs: Sequence[Pair], provenance: str) -> ParallelismFit | None:
    """Fit ``sectors_in_flight_per_warp`` (a whole number), ``dram_run_time``, ``dram_run_exponent`` and
    ``l2_request_rate`` to the timed rows (module docstring); None with fewer than
    :data:`MIN_PARALLELISM_ROWS` usable rows."""
    from scipy.optimize import minimize

    rows = []
    for p in pairs:
        m = p.measured
        w = _measured_workload(p)
        if w is None or p.device is None or m.GLup_s <= 0 or math.prod(m.domain) / (m.GLup_s * 1e9) < SHORT_KERNEL_S:
            continue
        rows.append(((m.kernel, m.device, m.domain), w, p.device, m.GLup_s))
    if len(rows) < MIN_PARALLELISM_ROWS:
        return None
    sweeps: dict[tuple, list[int]] = {}
    for i, (key, *_rest) in enumerate(rows):
        sweeps.setdefault(key, []).append(i)
    model = LatencyModel()
    requests = any(w.l2_requests_per_lup > 0 for _, w, _, _ in rows)

    def loss(in_flight: float, run_time_ns: float, exponent: float, rate_GHz: float | None) -> float:
        logs = np.empty(len(rows))
        for i, (_, w, dev, measured) in enumerate(rows):
            overhead = run_time_ns * dev.dram_bw_GB_s  # ns x GB/s = B
            perf = model.predict_with(w, dev, in_flight, overhead, exponent, rate_GHz).GLup_s
            logs[i] = math.log(perf / measured)
        return float(np.mean([np.mean(logs[idx] ** 2) for idx in sweeps.values()]))

    def clipped(x) -> tuple[float, float, float, float | None]:
        rate = min(max(x[3], 1.0), MAX_REQUEST_RATE_GHZ) if requests else None
        return max(x[0], 1.0), max(x[1], 0.0), min(max(x[2], 0.05), 4.0), rate

    start = rows[0][2]
    overhead0 = run_overhead_bytes(start)
    x0 = [float(start.sectors_in_flight_per_warp or 12),
          (overhead0 / start.dram_bw_GB_s) if overhead0 else 15.0, float(start.dram_run_exponent or 1.0),
          float(start.l2_requests_per_ns or 150.0)]
    coarse = minimize(lambda x: loss(*clipped(x)), x0, method="Nelder-Mead",
                      options={"xatol": 0.01, "fatol": 1e-7, "maxiter": 800})
    in_flight = max(1, round(float(coarse.x[0])))
    fine = minimize(lambda x: loss(in_flight, *clipped((1.0, *x))[1:]), coarse.x[1:], method="Nelder-Mead",
                    options={"xatol": 0.001, "fatol": 1e-8, "maxiter": 600})
    _, run_time_ns, exponent, rate = clipped((1.0, *fine.x))
    run_time_ns, exponent = float(f"{run_time_ns:.3g}"), round(float(exponent), 3)
    rate = None if rate is None else float(f"{rate:.3g}")
    rms = math.sqrt(loss(in_flight, run_time_ns, exponent, rate))
    source = (f"measured: fitted with the latency model to {len(rows)} timed rows of {len(sweeps)} sweeps (measured "
              f"volumes; rms log(predicted/measured) {rms:.3f}); {provenance}")
    return ParallelismFit(in_flight, run_time_ns * 1e-9, exponent, len(rows), len(sweeps), rms, source,
                          run_time_ns * start.dram_bw_GB_s, rate)


@dataclass(frozen=True)
class Calibration:
    """Fitted curves (shared by every calibrated device) and, per device, the measured DRAM bandwidth."""

    devices: tuple[Device, ...]
    fits: tuple[CurveFit, ...]
    data_file: str
    gpu_name: str
    driver: str
    date: str
    bandwidths: tuple[Bandwidth | None, ...]  # one per device, from its streaming rows (None: none measured)
    parallelism: ParallelismFit | None = None  # the latency model's fit, shared by the devices (None: too few rows)
    # the L1 line rule's prices (fit_l1_line_rule; None: no line-rule device or too few rows with L1 counts):
    # reported, not written to the device file (device_toml), see that method
    l1_rule: L1RuleFit | None = None

    @property
    def device(self) -> Device:
        return self.devices[0]

    @property
    def bandwidth(self) -> Bandwidth | None:
        return self.bandwidths[0]

    def device_toml(self, new_id: str | None = None, device: Device | None = None) -> str:
        """A device file (``base`` = the calibrated ``device``, default the first) with the fitted values and
        their provenance.

        ``base`` is the device id for a shipped device (a file that works on every machine), else the
        path of the device file that was calibrated.

        The L1 line rule's fit (``l1_rule``) is reported, not written: fitted to the pooled star3d-r4 and LBM
        rows of an H100 and an H200 its prices, rounded to the keys, lose 8-12 points of d3q19-srt's share of
        L1 cycles within 10 % (docs/model.md, "Diagonal neighbours"), so no device takes them yet.
        """
        dev = device or self.device
        bw = self.bandwidths[self.devices.index(dev)]
        dev_id = new_id or f"{dev.id}-calibrated"
        base = dev.id if dev.id in device_ids() else (dev.file or dev.id)
        lines = ["# written by `warpspeed calibrate`: the base device with values fitted to measurements",
                 "schema_version = 1", f'base = "{_toml_text(base)}"', f'id = "{dev_id}"',
                 f'name = "{_toml_text(dev.name)} (calibrated {self.date})"', ""]
        if bw is not None:
            lines += [f'dram_bw.value = "{bw.GB_s:.0f}GB/s"', f'dram_bw.source = "{_toml_text(bw.source)}"', ""]
        if self.parallelism is not None:
            pf = self.parallelism
            lines += [f"sectors_in_flight_per_warp.value = {pf.sectors_in_flight_per_warp}",
                      f'sectors_in_flight_per_warp.source = "{_toml_text(pf.source)}"',
                      f'dram_run_time.value = "{pf.dram_run_time_s * 1e9:g}ns"',
                      f'dram_run_time.source = "{_toml_text(pf.source)}"',
                      f"dram_run_exponent.value = {pf.dram_run_exponent!r}",
                      f'dram_run_exponent.source = "{_toml_text(pf.source)}"']
            if pf.l2_requests_per_ns is not None:
                lines += [f'l2_request_rate.value = "{pf.l2_requests_per_ns:g}G/s"',
                          f'l2_request_rate.source = "{_toml_text(pf.source)}"']
            lines.append("")
        for fit in self.fits:
            if fit.fitted is None:
                continue
            c = fit.fitted
            lines += [f"[hit_rates.{fit.curve}]", f"a = {c.a!r}", f"b = {c.b!r}", f"c = {c.c!r}",
                      f'source = "{_toml_text(c.source)}"', ""]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"device": self.device.id, "devices": [d.id for d in self.devices], "data_file": self.data_file,
                "gpu_name": self.gpu_name, "driver": self.driver, "date": self.date,
                "curves": [f.to_dict() for f in self.fits],
                "bandwidth": None if self.bandwidth is None else self.bandwidth.to_dict(),
                "bandwidths": {d.id: None if b is None else b.to_dict()
                               for d, b in zip(self.devices, self.bandwidths, strict=True)},
                "parallelism": None if self.parallelism is None else self.parallelism.to_dict(),
                "l1_rule": None if self.l1_rule is None else self.l1_rule.to_dict()}


def _toml_text(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


STREAM_KERNELS = ("copy",)  # catalog kernels that only stream: one load and one store per cell
MIN_STREAM_L2 = 8  # a streaming row counts when it moves at least this many times the L2 capacity


def stream_bandwidth(pairs: Sequence[Pair], device: Device, provenance: str) -> Bandwidth | None:
    """DRAM bandwidth from the streaming rows (``copy`` over a domain far larger than the L2): the best
    measured configuration's DRAM bytes (read + write; ncu's where measured, else the model's) per second."""
    best: tuple[float, Pair] | None = None
    n = 0
    for p in pairs:
        m = p.measured
        if m.kernel not in STREAM_KERNELS:
            continue
        v = p.estimate.volumes_B_per_lup
        per_lup = sum(m.volume(k) if m.volume(k) is not None else v[k] for k in ("dram_load", "dram_store"))
        lups = math.prod(m.domain)
        if per_lup * lups < MIN_STREAM_L2 * device.l2_size_bytes:
            continue
        n += 1
        gb_s = per_lup * m.GLup_s
        if best is None or gb_s > best[0]:
            best = (gb_s, p)
    if best is None:
        return None
    gb_s, p = best
    label = f"block {p.label}"
    source = (f"measured: {p.measured.kernel} (DRAM read + write, ncu bytes) reached {gb_s:.0f} GB/s, the best of "
              f"{n} streaming rows ({label}, {'x'.join(map(str, p.measured.domain))} cells); {provenance}")
    return Bandwidth(gb_s, p.measured.kernel, label, n, source)


def level_curve(points: Sequence[tuple[float, float]], start: HitRateCurve, source: str,
                weights: Sequence[float] | None = None) -> tuple[HitRateCurve, float]:
    """The curve for points that do not span a drop: the drop (``start``'s steepness ``c``) lies beyond the
    largest observed O, where the curve is still 0.95 a, and the level ``a`` is the least-squares scale of
    that shape to the points (weighted by the squared weights, as :func:`fit_curve` weighs residuals): points
    that lie on a curve of that shape give its level back, not their mean, which the shape's slope pulls
    below it."""
    o = np.array([p[0] for p in points], dtype=float)
    h = np.array([p[1] for p in points], dtype=float)
    w2 = np.ones_like(h) if weights is None else np.asarray(weights, dtype=float) ** 2
    c = max(start.c, 1e-3)
    b = float(min(start.b, -math.log(0.95) * math.exp(-min(c * o.max(), 700.0))))
    shape = HitRateCurve(1.0, b, c, source)(o)
    scale = float((w2 * shape**2).sum())
    if scale > 0 and math.isfinite(scale):
        level = float((w2 * h * shape).sum()) / scale
    else:  # no weight, or every point beyond the drop: the points' mean
        level = float((h * w2).sum() / w2.sum()) if w2.sum() > 0 else float(h.mean())
    a = float(min(1.0, max(1e-6, level)))
    curve = HitRateCurve(a, b, c, source)
    rms = float(np.sqrt(np.mean((curve(o) - h) ** 2)))
    return curve, rms


def _spans_drop(pts: Sequence[tuple[float, float]]) -> bool:
    hits = [h for _, h in pts]
    return (len(pts) >= MIN_POINTS and len({round(o, 2) for o, _ in pts}) >= 3
            and max(hits) - min(hits) >= MIN_HIT_RANGE)


def _fit_or_keep(curve: str, weighted: Sequence[tuple[float, float, float]], old: HitRateCurve,
                 source: str) -> CurveFit:
    """Fit the (O, hit, weight) points; a level curve (:func:`level_curve`) when they do not span a drop; the
    old curve when there are fewer than :data:`MIN_POINTS`."""
    pts = [(o, h) for o, h, _ in weighted]
    weights = [w for _, _, w in weighted]
    if len(pts) < MIN_POINTS:
        return CurveFit(curve, tuple(pts), None, old, None)
    if curve in ANCHORED_CURVES:  # no level to fit: its points give the shape of the fall alone
        try:
            fitted, rms = fit_curve(pts, old, f"{source} ({len(pts)} points, weighted by their share of the measured "
                                              f"volume; hit(0) = 1: a = e^b)", weights, anchored=True)
        except InputError:
            return CurveFit(curve, tuple(pts), None, old, None, anchored=True)
        return CurveFit(curve, tuple(pts), fitted, old, rms, anchored=True)
    if not _spans_drop(pts):
        fitted, rms = level_curve(pts, old, f"{source} ({len(pts)} points up to O = {max(o for o, _ in pts):.2f}, "
                                            f"none past the drop: level fitted, steepness kept)", weights)
    else:
        try:
            fitted, rms = fit_curve(pts, old, f"{source} ({len(pts)} points, weighted by their share of the "
                                              f"measured volume)", weights)
        except InputError:  # the points do not pin a curve down: keep the old one (the text says so)
            return CurveFit(curve, tuple(pts), None, old, None)
    return CurveFit(curve, tuple(pts), fitted, old, rms)


def fit_layers(pairs: Sequence[Pair], store: HitRateCurve, olds: dict[str, HitRateCurve],
               source: str) -> dict[str, CurveFit]:
    """The y- and z-layer curves: each layer's observed hit rates subtract the other layer's misses, so the
    two are refitted, each with the other's last curve, until neither moves (at most :data:`LAYER_PASSES`
    times). ``store``: the partial-store curve whose misses both subtract; ``olds``: the device's curves (the
    first pass's, kept where too few points, and reported as the previous ones)."""
    layers = {c: olds[c] for c in ("l2_y", "l2_z")}
    fits: dict[str, CurveFit] = {}
    settled = False
    for _ in range(LAYER_PASSES):
        points = observed_points(pairs, {"l2_store": store, **layers})
        for c in layers:
            fit = replace(_fit_or_keep(c, points[c], layers[c], source), old=olds[c])
            if fit.fitted is not None or c not in fits or fits[c].fitted is None:
                fits[c] = fit  # a pass whose fit fails keeps the last pass's fit
        moved = {c: fits[c].fitted or layers[c] for c in layers}
        settled = all(_same_curve(moved[c], layers[c]) for c in layers)
        layers = moved
        if settled:
            break
    if not settled:  # say so where the curves are shipped: each was fitted against the other's previous curve
        for c, fit in fits.items():
            if fit.fitted is not None:
                fits[c] = replace(fit, fitted=replace(fit.fitted, source=f"{fit.fitted.source}; the layer curves "
                                                      f"had not settled after {LAYER_PASSES} passes"))
    return fits


def _same_curve(a: HitRateCurve, b: HitRateCurve) -> bool:
    """Whether two curves give the same hit rate to within :data:`SETTLED` over O in [0, 8]."""
    grid = np.linspace(0.0, 8.0, 161)
    return float(np.max(np.abs(a(grid) - b(grid)))) < SETTLED


def _reported(rows: Sequence[Measurement], column: str) -> list[str]:
    """The distinct non-empty values of a text column (gpu_name, driver), in order of appearance."""
    return list(dict.fromkeys(str(m.values[column]) for m in rows if m.values.get(column)))


def calibrate(measurements: Sequence[Measurement], device: Device | Sequence[Device],
              data_file: str | Path = "<measurements>", date: str | None = None,
              progress: Progress | None = None) -> Calibration:
    """Fit every curve that the rows of ``device`` determine (module docstring), and its DRAM bandwidth.

    With several devices (GPUs of one architecture, e.g. an H100 and an H200), their rows are pooled into
    one fit per curve: the oversubscription already scales with each device's cache sizes, so one curve
    serves them all; the DRAM bandwidth stays per device.
    """
    devices = (device,) if isinstance(device, Device) else tuple(device)
    if not devices:
        raise InputError("calibrate needs at least one device.")
    by_device = {m: [r for r in measurements if r.device in (m.id, m.file)] for m in devices}
    missing = [d.id for d, rows in by_device.items() if not rows]
    if missing:
        found = sorted({m.device for m in measurements})
        raise InputError(f"no measurement of device {', '.join(missing)} in {data_file}; it holds "
                         f"{', '.join(found) or 'no rows'}.")
    rows = [r for d in devices for r in by_device[d]]
    pairs = estimate_measurements(rows, {r.device: d for d in devices for r in by_device[d]}, progress=progress)
    gpu = ", ".join(_reported(rows, "gpu_name")) or ", ".join(d.name for d in devices)
    driver = ", ".join(_reported(rows, "driver")) or "unknown"
    day = date or datetime.date.today().isoformat()
    provenance = f"warpspeed calibrate {day}, {gpu}, driver {driver}, data {Path(str(data_file)).name}"
    source = f"measured: {provenance}"
    olds = {c: getattr(devices[0].hit_rates, c) for c in HIT_RATE_CURVES}
    # stage 1: the curves whose observable isolates them
    first = observed_points(pairs)
    fits = {c: _fit_or_keep(c, first[c], olds[c], source) for c in ("l1", "l2_store")}
    # stage 2: the layers, with the stage-1 partial-store curve
    fits.update(fit_layers(pairs, fits["l2_store"].fitted or olds["l2_store"], olds, source))
    bandwidths = []
    for d in devices:
        own = [p for p in pairs if p.measured.device in (d.id, d.file)]
        gpu_d = (_reported(by_device[d], "gpu_name") or [d.name])[0]
        bandwidths.append(stream_bandwidth(own, d, f"warpspeed calibrate {day}, {gpu_d}, data "
                                                   f"{Path(str(data_file)).name}"))
    parallelism = fit_parallelism(pairs, provenance)
    return Calibration(devices, tuple(fits[c] for c in HIT_RATE_CURVES), str(data_file), gpu, driver, day,
                       tuple(bandwidths), parallelism, fit_l1_line_rule(pairs))


__all__ = ["ANCHORED_CURVES", "Calibration", "CurveFit", "L1RuleFit", "calibrate", "fit_curve", "fit_l1_line_rule",
           "fit_layers", "observed_hit_rates", "observed_points"]
