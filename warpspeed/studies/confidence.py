"""How far a ranking can be trusted: the configurations the model cannot tell apart, and access patterns
outside what the model was validated on.

**The model's resolution.** On the committed H100/H200 sweeps (tests/data/hopper), the predicted / measured
GLup/s of the configurations of one sweep scatter around the sweep's median ratio by 5 % (the median of
|log(ratio) - median log(ratio)| over every configuration of every sweep of x-contiguous kernels).
Configurations predicted within :data:`RELATIVE_ERROR` of the best are therefore *contenders*: the model
cannot order them. Launching every contender reached >= 98 % of the measured best in each of those sweeps
(tests/measurement/test_hopper_accuracy.py recomputes both figures from the data).

**Validated access patterns.** Every measured kernel reads and writes its fields x-contiguously: threads
adjacent in x touch elements side by side. A field whose threads adjacent in x lie a whole sector or more
apart (an array-of-structures layout, a field indexed with x in a slower dimension, or folding in x) puts
every thread of a warp on its own sector. On the one such kernel measured (D3Q19 with its 19 populations
side by side, on an H100) every block ran at about the same speed while the model spread them 2.4x apart and
ranked the measured best last. Such estimates and rankings are marked *unvalidated*, and the configurations
worth measuring then include the best-predicted block of every x-extent, since the x-extent sets how the
warps meet memory.

**Devices whose model data was never measured.** The 5 % and the 98 % hold where the model's data was fitted
on the GPU ranked: the Hopper family (:mod:`warpspeed.device.families`; every estimate carries its device's
validation, :mod:`warpspeed.model.device_validation`). On any other family the curves, the L1 rule and the
latency values come from elsewhere, and the resolution is :data:`UNMEASURED`: contenders within 20 % of the
best, up to 24 of them listed. The figures: the committed H100/H200 sweeps estimated with data *not* fitted
on them (the A100 curves and pairing L1 rule, Hopper's or the A100's latencies, the fitted sectors in flight
per warp or half or twice that: 108 validated sweeps) needed up to 23 best-predicted launches to reach 98 % of
the measured best (the fitted data: 3), the one that reached it predicted up to 15 % behind the best; the
contenders within 20 %, at most 24, reached it in every sweep, those within 5 %, at most 8, missed it in 26
(tests/measurement/test_unmeasured_resolution.py). The level keeps its meaning with the wider share.

:func:`assess` turns a ranking's results into a :class:`Confidence`: ``confident`` (the next best is
predicted more than the resolution behind), ``close`` (contenders) or ``unvalidated``, and ``measure``, the
configurations to launch when a GPU is at hand (what the pystencils plugin and the kernel_tuner strategy do).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..model.device_validation import DeviceValidation
from .space import Configuration


class Ranked(Protocol):
    """What the assessment reads of a ranked configuration (a ranking's ``RankedResult``)."""

    @property
    def configuration(self) -> Configuration: ...

    @property
    def error(self) -> str | None: ...

    @property
    def performance_GLup_s(self) -> float: ...

    @property
    def estimate(self) -> Any: ...  # its ``unvalidated`` reasons


RELATIVE_ERROR = 0.05
"""Configurations predicted within this share of the best are contenders (the module docstring)."""
MEASURE_AT_MOST = 8
"""Contenders worth measuring, at most (the best-predicted ones); more are counted, not listed."""
UNMEASURED_RELATIVE_ERROR = 0.20
"""The contenders' share on a device whose family's model data was not measured (the module docstring)."""
UNMEASURED_MEASURE_AT_MOST = 24
"""Contenders worth measuring, at most, on a device whose family's model data was not measured."""
LEVELS = ("confident", "close", "unvalidated")


@dataclass(frozen=True)
class Resolution:
    """How far apart the model can order configurations on a device: those predicted within ``relative_error``
    of the best are contenders, the ``measure_at_most`` best-predicted of them are listed to measure."""

    relative_error: float
    measure_at_most: int


MEASURED = Resolution(RELATIVE_ERROR, MEASURE_AT_MOST)
UNMEASURED = Resolution(UNMEASURED_RELATIVE_ERROR, UNMEASURED_MEASURE_AT_MOST)


def resolution(validation: DeviceValidation | None) -> Resolution:
    """The resolution on a device of this validation: :data:`MEASURED` where its family's model data was
    measured (or nothing says otherwise), :data:`UNMEASURED` on any other."""
    return MEASURED if validation is None or validation.measured else UNMEASURED


@dataclass(frozen=True)
class Confidence:
    """How far a ranking can be trusted (module docstring). ``contenders`` are the configurations predicted
    within ``relative_error`` of the best, best first, at most :data:`MEASURE_AT_MOST` (on an unmeasured device
    :data:`UNMEASURED_MEASURE_AT_MOST`) of ``contenders_total``;
    ``measure`` what to launch to choose among them (the contenders, plus for an unvalidated ranking the
    best-predicted configuration of every x-extent of the block); ``reasons`` say why in words."""

    level: str
    relative_error: float
    contenders: tuple[Configuration, ...]
    contenders_total: int
    measure: tuple[Configuration, ...]
    reasons: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"level": self.level, "relative_error": self.relative_error,
                "contenders": [c.to_dict() for c in self.contenders], "contenders_total": self.contenders_total,
                "measure": [c.to_dict() for c in self.measure], "reasons": list(self.reasons)}


def assess(results: Sequence[Ranked], relative_error: float | None = None) -> Confidence:
    """The confidence of a ranking's ``results`` (best first, as :class:`warpspeed.studies.ranking.Ranking` holds them;
    configurations that cannot launch are ignored). The contenders' share and how many are listed follow the
    device's validation (:func:`resolution`; the estimates carry it); ``relative_error`` replaces the share."""
    ok = [r for r in results if not r.error]
    if not ok:
        return Confidence("confident", RELATIVE_ERROR if relative_error is None else relative_error, (), 0, (),
                          ("no configuration can launch",))
    validation = ok[0].estimate.device_validation
    rule = resolution(validation)
    relative_error = rule.relative_error if relative_error is None else relative_error
    at_most = rule.measure_at_most
    best = ok[0].performance_GLup_s
    floor = (1 - relative_error) * best
    within = [r for r in ok if r.performance_GLup_s >= floor]
    shown = tuple(r.configuration for r in within[:at_most])
    unvalidated = list(dict.fromkeys(reason for r in within for reason in r.estimate.unvalidated))
    reasons = []
    if len(within) > 1:
        more = f" (the {at_most} best listed)" if len(within) > at_most else ""
        reasons.append(f"{len(within)} configurations are predicted within the model's {100 * relative_error:.0f} % "
                       f"of the best{more}: {', '.join(c.label for c in shown)}; measure them to choose")
    elif len(ok) > 1:
        gap = 1 - ok[1].performance_GLup_s / best
        reasons.append(f"the next best is predicted {100 * gap:.1f} % behind, beyond the model's "
                       f"{100 * relative_error:.0f} %")
    else:  # one configuration estimated (the only one, or a screened ranking's others bounded below)
        reasons.append(f"no other configuration is predicted within the model's {100 * relative_error:.0f} % of "
                       "the best")
    measure = list(shown)
    if unvalidated:
        level = "unvalidated"
        reasons += unvalidated
        seen = {c.block[0] * c.folding[0] for c in measure}
        for r in ok:  # the best-predicted configuration of every x-extent
            x = r.configuration.block[0] * r.configuration.folding[0]
            if x not in seen:
                seen.add(x)
                measure.append(r.configuration)
    else:
        level = "close" if len(within) > 1 else "confident"
    if validation is not None and not validation.measured:  # before the last line of an unvalidated one
        reasons.append(f"model data never measured on {validation.family}: contenders are those within "
                       f"{100 * rule.relative_error:.0f} % ({100 * RELATIVE_ERROR:.0f} % where measured), up to "
                       f"{at_most} listed")
    if unvalidated:
        reasons.append(f"measure {len(measure)} configurations: the contenders and the best-predicted one of "
                       f"every x-extent")
    return Confidence(level, relative_error, shown, len(within), tuple(measure), tuple(reasons))


__all__ = ["Confidence", "LEVELS", "MEASURED", "MEASURE_AT_MOST", "RELATIVE_ERROR", "UNMEASURED",
           "UNMEASURED_MEASURE_AT_MOST", "UNMEASURED_RELATIVE_ERROR", "Resolution", "assess", "resolution"]
