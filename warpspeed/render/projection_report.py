"""A cross-GPU projection as text lines (``warpspeed project``): the analytic projection, and the one from a
measured run where given."""

from __future__ import annotations

from ..measurement.measured import MeasuredProjection
from ..model.levels import levels_in
from ..studies.projection import Projection
from .report import validation_line


def projection_lines(p: Projection) -> list[str]:
    """The headline (speedup at the best configurations), a line for each GPU whose model data was never
    measured, each GPU's best with its limiter and volumes, the reasons."""
    s, t = p.source_best, p.target_best
    lines = [f"{p.kernel}: {p.target.id} is {p.speedup:.2f}x {p.source.id} "
             f"({t.performance_GLup_s:.3g} vs {s.performance_GLup_s:.3g} GLup/s at their best configurations)"]
    lines += [line for line in (validation_line(dev.id, v) for dev, v in ((p.source, p.source_validation),
                                                                        (p.target, p.target_validation))) if line]
    for r, dev in ((s, p.source), (t, p.target)):
        v = r.estimate.volumes_B_per_lup
        lines.append(f"  {dev.id:<18} block {tuple(r.configuration.block)} folding {tuple(r.configuration.folding)}: "
                     f"{r.limiter}-bound; "
                     + ", ".join(f"{lv.name} {lv.traffic_B_per_lup(v):.3g} B/lup" for lv in reversed(levels_in(v))
                                 if not lv.cycles_bound))
    return lines + [f"  - {reason}" for reason in p.reasons()]


def measured_projection_lines(m: MeasuredProjection) -> list[str]:
    """The interval projected from a measured run and, per level, the operational intensities carried over."""
    d = m.to_dict()
    lo, hi = d["interval_GLup_s"]
    lines = [f"  {m.mode} projection from the run measured on {m.source} ({d['measured_GLup_s']:.3g} GLup/s): "
             f"{lo:.3g} to {hi:.3g} GLup/s on {m.target}, midpoint {d['midpoint_GLup_s']:.3g} "
             f"({d['speedup']:.2f}x)"]
    per = d["midpoint_GLup_s"] / d["midpoint"]
    for lp in m.levels:
        lines.append(f"    {lp.level:<5} operational intensity {lp.oi_source:.3g} -> {lp.oi_target:.3g} "
                     f"{d['work_unit']}/B: {lp.performance * per:.3g} GLup/s")
    return lines
