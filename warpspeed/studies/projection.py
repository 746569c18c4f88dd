"""Cross-GPU projection (analytic): the best configuration on each device, the speedup, and why.

Both devices are ranked over the same configuration space; the report compares the winners level by
level (volumes, limiters) and also evaluates the source's best configuration on the target, since a
configuration tuned for one GPU is what users carry over first. Each device's validation (how far its family's
model data was checked; :mod:`warpspeed.model.device_validation`) comes with it: a projection to or from a
device whose data was never measured is a first estimate.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..device import Device
from ..errors import InputError
from ..kernel import Kernel
from ..model.device_validation import DeviceValidation, device_validation
from ..model.inputs import device_given, kernel_for
from ..model.levels import LEVELS, level
from ..model.roofline import LIMITERS
from ..progress import Progress, scaled
from ..schemas import SCHEMA_VERSION
from . import ranking
from .ranking import RankedResult, rank
from .space import thread_counts


@dataclass(frozen=True)
class Projection:
    kernel: str
    source: Device
    target: Device
    source_best: RankedResult
    target_best: RankedResult
    carried_over: RankedResult  # the source's best configuration evaluated on the target

    @property
    def source_validation(self) -> DeviceValidation:
        return device_validation(self.source)

    @property
    def target_validation(self) -> DeviceValidation:
        return device_validation(self.target)

    @property
    def speedup(self) -> float:
        s = self.source_best.performance_GLup_s
        return self.target_best.performance_GLup_s / s if s > 0 else float("inf")

    def reasons(self) -> list[str]:
        """Plain-language reasons: limiter shift, bandwidth ratios, volume changes."""
        s, t = self.source_best.estimate, self.target_best.estimate
        assert s is not None and t is not None  # project() refuses a device where nothing launches
        out = []
        if s.limiter == t.limiter:
            out.append(f"both are {s.limiter}-bound")
        else:
            out.append(f"the limiter shifts from {s.limiter} on {self.source.id} to {t.limiter} "
                       f"on {self.target.id}")
        ratios = {lv.name: lv.rate(self.target, "fp64") / lv.rate(self.source, "fp64")  # type: ignore[operator]
                  for lv in LEVELS if lv.present(self.target) and lv.present(self.source)}
        ratios["FP"] = self.target.peak_GFLOP_s("fp64") / self.source.peak_GFLOP_s("fp64")
        lim = t.limiter
        if lim in ratios:
            out.append(f"{lim} throughput of the target is {ratios[lim]:.2f}x the source's")
        else:  # a limit of the performance model (latency: memory parallelism), not of one device number
            vs, vt = s.limits_GLup_s.get(lim, math.inf), t.limits_GLup_s.get(lim, math.inf)
            if 0 < vs < math.inf and 0 < vt < math.inf:
                out.append(f"the {lim} limit of the target is {vt / vs:.2f}x the source's ({vt:.3g} vs "
                           f"{vs:.3g} GLup/s at their best configurations)")
        for lv in LEVELS:
            if lv.cycles_bound or not (lv.present_in(s.volumes_B_per_lup) and lv.present_in(t.volumes_B_per_lup)):
                continue
            vs, vt = lv.traffic_B_per_lup(s.volumes_B_per_lup), lv.traffic_B_per_lup(t.volumes_B_per_lup)
            if vs > 0 and abs(vt / vs - 1) > 0.02:
                out.append(f"{lv.name} volume changes {vs:.1f} -> {vt:.1f} B/lup (block {s.block} -> "
                           f"{t.block}, L2 {self.source.l2_effective_size_bytes / 2**20:.0f} -> "
                           f"{self.target.l2_effective_size_bytes / 2**20:.0f} MiB effective)")
        msc, dram = level("MSC"), level("DRAM")
        for role, dev, e in (("source", self.source, s), ("target", self.target, t)):
            if e.memory_side is not None and dev.msc_size_bytes is not None:  # the other may have none
                v = e.volumes_B_per_lup
                out.append(f"the {role}'s memory-side cache ({dev.msc_size_bytes / 2**20:.0f} MiB) takes its L2's "
                           f"misses ({msc.traffic_B_per_lup(v):.1f} B/lup) and lets {dram.traffic_B_per_lup(v):.1f} "
                           "B/lup through to DRAM")
        if self.carried_over.configuration != self.target_best.configuration and not self.carried_over.error:
            gain = self.target_best.performance_GLup_s / self.carried_over.performance_GLup_s
            out.append(f"re-tuning for the target gains {100 * (gain - 1):.1f} % over the source's best configuration")
        return out

    def to_dict(self) -> dict:
        s, t = self.source_best.estimate, self.target_best.estimate
        assert s is not None and t is not None  # project() refuses a device where nothing launches
        return {"kernel": self.kernel, "from": self.source.id, "to": self.target.id, "speedup": self.speedup,
                "from_best": self.source_best.data, "to_best": self.target_best.data,
                "from_best_on_target": self.carried_over.data,
                "levels": {lvl: {"from_GLup_s": _finite(s.limiters_GLup_s[lvl]),
                                 "to_GLup_s": _finite(t.limiters_GLup_s[lvl])}
                           for lvl in LIMITERS},
                "reasons": self.reasons(), "from_validation": self.source_validation.to_dict(),
                "to_validation": self.target_validation.to_dict(), "schema_version": SCHEMA_VERSION}


def _finite(v: float) -> float | None:
    """JSON has no infinity: an unloaded limit is null."""
    return v if math.isfinite(v) else None


def project(kernel: Kernel, source: Device, target: Device, *,
            threads: Iterable[int] = (1024,), folding: Iterable[Sequence[int]] = ((1, 1, 1),),
            domain: Sequence[int] | None = None, blocks=None, registers: int | None = None,
            jobs: int | None = None, executor=None, model: str | None = None,
            progress: Progress | None = None) -> Projection:
    """Analytic projection of a kernel from one GPU to another (each at its own best configuration).

    ``model`` names the performance model (default: the latency model, so a GPU with more bandwidth but
    the same latencies gains less than the bandwidth ratio)."""
    k = kernel_for(kernel, domain)
    src = device_given(source)
    tgt = device_given(target)
    threads, folding = thread_counts(threads), tuple(folding)
    rs = rank(k, src, threads, folding, blocks=blocks, registers=registers, jobs=jobs, executor=executor,
              model=model, progress=scaled(progress, 0, 2))
    rt = rank(k, tgt, threads, folding, blocks=blocks, registers=registers, jobs=jobs, executor=executor,
              model=model, progress=scaled(progress, 1, 2))
    if rs.best.error or rt.best.error:
        bad = src.id if rs.best.error else tgt.id
        raise InputError(f"no configuration of {k.name} can launch on {bad}: {(rs.best.error or rt.best.error)}")
    carried_over, = ranking.evaluate(k, tgt, [rs.best.configuration], registers, model=model)
    return Projection(k.name, src, tgt, rs.best, rt.best, carried_over)
