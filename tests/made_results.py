"""Ranked results with chosen numbers, made from a real estimate (the tests of orders, tables and confidence)."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from warpspeed import Estimate
from warpspeed.studies.ranking import Failure, RankedResult
from warpspeed.studies.space import Configuration


def ranked(base: Estimate, block, perf: float, folding=(1, 1, 1), *, limiter: str | None = None,
           volumes: Mapping[str, float] | None = None, l1_cycles: float | None = None,
           limits: Mapping[str, float] | None = None, unvalidated=()) -> RankedResult:
    """``base`` at another block and folding, predicted at ``perf`` GLup/s (and the given limiter, volumes, L1
    cycles, limits); its other numbers stay the base's."""
    performance = dataclasses.replace(base.performance, GLup_s=perf, limiter=limiter or base.limiter,
                                      limits_GLup_s=limits if limits is not None else base.limits_GLup_s)
    workload = dataclasses.replace(
        base.workload, volumes_B_per_lup=volumes if volumes is not None else base.volumes_B_per_lup,
        l1_cycles_per_warp_lup=l1_cycles if l1_cycles is not None else base.l1_cycles_per_warp_lup)
    e = dataclasses.replace(base, block=tuple(block), folding=tuple(folding), performance=performance,
                            workload=workload, unvalidated=tuple(unvalidated))
    return RankedResult(Configuration(tuple(block), tuple(folding)), e)


def failed(base: Estimate, block, message: str, folding=(1, 1, 1)) -> RankedResult:
    """A configuration of ``base``'s kernel that cannot launch, for ``message``."""
    return RankedResult(Configuration(tuple(block), tuple(folding)),
                        failure=Failure(base.kernel, base.device, base.domain, message))
