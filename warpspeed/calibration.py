"""Fit the hit-rate curves of the capacity model to measured volumes (Ernst et al., sec. 5.6).

A measured volume minus what the model counts as certain gives the misses of one cause; divided by the
volume that cause could reuse it is that cause's miss rate, at the oversubscription O the model computes
for that configuration. Per curve:

- ``l1``: measured L2 load = compulsory L2 load + (1 - hit) x the L1's redundant requests;
- ``l2_y`` / ``l2_z``: measured DRAM load = wave footprint - hit_y x y-overlap - hit_z x z-overlap
  + partial-store misses; the other causes are taken at their current curves, and a row only serves
  the curve whose overlap is at least 10 % of the footprint;
- ``l2_store``: the same with the redundant (partial) stores as the unknown.

Hit rates are clipped to [0, 1] and fitted with ``a exp(-b exp(c O))`` by ``scipy.optimize.curve_fit``
(optional extra ``warpspeed[calibrate]``).
"""

from __future__ import annotations

import datetime
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .device import HIT_RATE_CURVES, Device, HitRateCurve
from .errors import InputError
from .measurements import Measurement
from .validation import Pair, estimate_measurements

MIN_POINTS = 4
MIN_HIT_RANGE = 0.2  # the observed hit rates must span the curve's drop by this much to determine it
MIN_SHARE = 0.10  # a row serves a curve when that cause's reusable volume is this share of the base volume


@dataclass(frozen=True)
class CurveFit:
    curve: str
    points: tuple[tuple[float, float], ...]  # (oversubscription, observed hit rate)
    fitted: HitRateCurve | None  # None: too few points, the old curve stays
    old: HitRateCurve
    rms: float | None  # of the fit residuals

    def to_dict(self) -> dict:
        return {"curve": self.curve, "points": len(self.points), "rms": self.rms,
                "fitted": None if self.fitted is None else self.fitted.to_dict(), "old": self.old.to_dict()}


def _hit(measured_excess: float, potential: float) -> float:
    return min(1.0, max(0.0, 1.0 - measured_excess / potential))


def observed_hit_rates(pairs: Sequence[Pair]) -> dict[str, list[tuple[float, float]]]:
    """(O, hit) per curve from the measured volumes of each row (rows without the volume are skipped)."""
    out: dict[str, list[tuple[float, float]]] = {c: [] for c in HIT_RATE_CURVES}
    for p in pairs:
        v, c, m = p.predicted["volumes_B_per_lup"], p.predicted["causes"], p.measured
        l1 = c["l1_capacity"]
        l2_load = m.volume("l2_load")
        if l2_load is not None and l1["potential_B_per_lup"] > MIN_SHARE * v["l2_load_compulsory"]:
            out["l1"].append((l1["oversubscription"],
                              _hit(l2_load - v["l2_load_compulsory"], l1["potential_B_per_lup"])))
        dram = m.volume("dram_load")
        if dram is None:
            continue
        base = v["dram_load_compulsory"]
        y, z, ps = c["layer_y"], c["layer_z"], c["partial_stores"]
        certain = base - y["potential_B_per_lup"] - z["potential_B_per_lup"]  # every overlap hits, no misses
        miss = {"l2_y": y["miss_B_per_lup"], "l2_z": z["miss_B_per_lup"], "l2_store": ps["miss_B_per_lup"]}
        for curve, cause in (("l2_y", y), ("l2_z", z), ("l2_store", ps)):
            if cause["potential_B_per_lup"] <= MIN_SHARE * base:
                continue
            others = sum(x for k, x in miss.items() if k != curve)
            excess = dram - certain - others
            out[curve].append((cause["oversubscription"], _hit(excess, cause["potential_B_per_lup"])))
    return out


def fit_curve(points: Sequence[tuple[float, float]], start: HitRateCurve, source: str) -> tuple[HitRateCurve, float]:
    """Least-squares fit of ``a exp(-b exp(c O))`` with 0 <= a <= 1, b, c > 0."""
    try:
        from scipy.optimize import curve_fit
    except ImportError:
        raise InputError("calibration needs scipy: pip install 'warpspeed[calibrate]'.") from None
    o = np.array([p[0] for p in points], dtype=float)
    h = np.array([p[1] for p in points], dtype=float)

    def f(x, a, b, c):
        return a * np.exp(-b * np.exp(np.minimum(c * x, 50.0)))

    p0 = (min(max(start.a, 1e-3), 1.0), max(start.b, 1e-6), max(start.c, 1e-3))
    try:
        (a, b, c), _ = curve_fit(f, o, h, p0=p0, bounds=([0.0, 1e-12, 1e-6], [1.0, 1e6, 100.0]), maxfev=20000)
    except (RuntimeError, ValueError) as e:
        raise InputError(f"the hit-rate fit did not converge on {len(points)} points: {e}") from None
    rms = float(np.sqrt(np.mean((f(o, a, b, c) - h) ** 2)))
    return HitRateCurve(float(a), float(b), float(c), source), rms


@dataclass(frozen=True)
class Calibration:
    device: Device
    fits: tuple[CurveFit, ...]
    data_file: str
    gpu_name: str
    driver: str
    date: str

    def device_toml(self, new_id: str | None = None) -> str:
        """A device file (``base`` = the calibrated device) with the fitted curves and their provenance."""
        dev_id = new_id or f"{self.device.id}-calibrated"
        lines = ["# written by `warpspeed calibrate`: the base device with hit-rate curves fitted to measurements",
                 "schema_version = 1", f'base = "{self.device.file or self.device.id}"', f'id = "{dev_id}"',
                 f'name = "{self.device.name} (calibrated {self.date})"', ""]
        for fit in self.fits:
            if fit.fitted is None:
                continue
            c = fit.fitted
            lines += [f"[hit_rates.{fit.curve}]", f"a = {c.a!r}", f"b = {c.b!r}", f"c = {c.c!r}",
                      f'source = "{_toml_text(c.source)}"', ""]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"device": self.device.id, "data_file": self.data_file, "gpu_name": self.gpu_name,
                "driver": self.driver, "date": self.date, "curves": [f.to_dict() for f in self.fits]}


def _toml_text(s: str) -> str:
    return s.replace("\\", "\\\\").replace('"', '\\"')


def calibrate(measurements: Sequence[Measurement], device: Device, data_file: str | Path = "<measurements>",
              date: str | None = None) -> Calibration:
    """Fit every curve that has at least :data:`MIN_POINTS` observations on ``device``'s measurements."""
    rows = [m for m in measurements if m.device in (device.id, device.file)]
    if not rows:
        found = sorted({m.device for m in measurements})
        raise InputError(f"no measurement of device {device.id} in {data_file}; it holds {', '.join(found)}.")
    pairs = estimate_measurements(rows, {m.device: device for m in rows})
    observed = observed_hit_rates(pairs)
    gpu = next((str(m.values.get("gpu_name")) for m in rows if m.values.get("gpu_name")), device.name)
    driver = next((str(m.values.get("driver")) for m in rows if m.values.get("driver")), "unknown")
    day = date or datetime.date.today().isoformat()
    fits = []
    for curve in HIT_RATE_CURVES:
        pts = tuple(observed[curve])
        old = getattr(device.hit_rates, curve)
        spread = len({round(o, 2) for o, _ in pts})
        hits = [h for _, h in pts]
        if len(pts) < MIN_POINTS or spread < 3 or max(hits) - min(hits) < MIN_HIT_RANGE:
            fits.append(CurveFit(curve, pts, None, old, None))
            continue
        source = (f"measured: warpspeed calibrate {day}, {gpu}, driver {driver}, data {Path(str(data_file)).name} "
                  f"({len(pts)} points)")
        fitted, rms = fit_curve(pts, old, source)
        fits.append(CurveFit(curve, pts, fitted, old, rms))
    return Calibration(device, tuple(fits), str(data_file), gpu, driver, day)


def calibration_text(cal: Calibration) -> str:
    lines = [f"calibrating {cal.device.id} from {cal.data_file} ({cal.gpu_name}, driver {cal.driver})"]
    for f in cal.fits:
        if f.fitted is None:
            lines.append(f"  {f.curve:<9} {len(f.points)} points: not enough to fit (need {MIN_POINTS} at 3 or "
                         f"more oversubscriptions, with hit rates spanning {MIN_HIT_RANGE}); kept a={f.old.a:.4g} "
                         f"b={f.old.b:.4g} c={f.old.c:.4g}")
        else:
            c = f.fitted
            lines.append(f"  {f.curve:<9} {len(f.points)} points: a={c.a:.4g} b={c.b:.4g} c={c.c:.4g} "
                         f"(was a={f.old.a:.4g} b={f.old.b:.4g} c={f.old.c:.4g}), rms {f.rms:.3f}")
    return "\n".join(lines)


def calibration_plot(cal: Calibration):
    """Observed hit rates over O per curve with the old and the fitted curve."""
    from .plots import _figure

    fig = _figure(11, 3.4)
    axes = fig.subplots(1, len(cal.fits), squeeze=False).ravel()
    for ax, f in zip(axes, cal.fits, strict=True):
        pts = np.array(f.points) if f.points else np.zeros((0, 2))
        top = max([3.0] + ([float(pts[:, 0].max()) * 1.1] if len(pts) else []))
        xs = np.linspace(0, top, 200)
        if len(pts):
            ax.scatter(pts[:, 0], pts[:, 1], s=12, color="tab:blue", label="observed")
        ax.plot(xs, [f.old(x) for x in xs], color="0.5", ls="--", label="before")
        if f.fitted is not None:
            ax.plot(xs, [f.fitted(x) for x in xs], color="tab:red", label="fitted")
        ax.set_title(f"{f.curve} ({len(f.points)} points)", fontsize=10)
        ax.set_xlabel("oversubscription O")
        ax.set_ylabel("hit rate of the reusable volume")
        ax.set_ylim(-0.05, 1.05)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7)
    return fig


__all__ = ["Calibration", "CurveFit", "calibrate", "calibration_plot", "calibration_text", "fit_curve",
           "observed_hit_rates"]
