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

:func:`assess` turns a ranking's results into a :class:`Confidence`: ``confident`` (the next best is
predicted more than the resolution behind), ``close`` (contenders) or ``unvalidated``, and ``measure``, the
configurations to launch when a GPU is at hand (what the pystencils plugin and the kernel_tuner strategy do).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

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
LEVELS = ("confident", "close", "unvalidated")


@dataclass(frozen=True)
class Confidence:
    """How far a ranking can be trusted (module docstring). ``contenders`` are the configurations predicted
    within ``relative_error`` of the best, best first, at most :data:`MEASURE_AT_MOST` of ``contenders_total``;
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


def assess(results: Sequence[Ranked], relative_error: float = RELATIVE_ERROR) -> Confidence:
    """The confidence of a ranking's ``results`` (best first, as :class:`warpspeed.studies.ranking.Ranking` holds them;
    configurations that cannot launch are ignored)."""
    ok = [r for r in results if not r.error]
    if not ok:
        return Confidence("confident", relative_error, (), 0, (), ("no configuration can launch",))
    best = ok[0].performance_GLup_s
    floor = (1 - relative_error) * best
    within = [r for r in ok if r.performance_GLup_s >= floor]
    shown = tuple(r.configuration for r in within[:MEASURE_AT_MOST])
    unvalidated = list(dict.fromkeys(reason for r in within for reason in r.estimate.unvalidated))
    reasons = []
    if len(within) > 1:
        more = f" (the {MEASURE_AT_MOST} best listed)" if len(within) > MEASURE_AT_MOST else ""
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
        reasons.append(f"measure {len(measure)} configurations: the contenders and the best-predicted one of "
                       f"every x-extent")
    else:
        level = "close" if len(within) > 1 else "confident"
    return Confidence(level, relative_error, shown, len(within), tuple(measure), tuple(reasons))


__all__ = ["Confidence", "LEVELS", "MEASURE_AT_MOST", "RELATIVE_ERROR", "assess"]
