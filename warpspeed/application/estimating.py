"""One estimate, the kernel and device given by name, file or object: resolved, then estimated by the model
(:func:`warpspeed.model.estimate.estimate`). This is ``warpspeed.estimate``."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ..device import Device
from ..kernel import Kernel
from ..model import estimate as _model
from ..model.estimate import Estimate, KernelAnalysis
from ..model.performance import PerformanceModel
from .resolve import resolve_device, resolve_kernel


def estimate(kernel: Kernel | str | Path, device: Device | str | Path, block: Sequence[int],
             folding: Sequence[int] | None = None, domain: Sequence[int] | None = None, *,
             registers: int | None = None, overrides: Mapping[str, object] | None = None,
             analysis: KernelAnalysis | None = None, model: str | PerformanceModel | None = None,
             counter: str | None = None) -> Estimate:
    """Estimate one launch configuration of a kernel (a Kernel, catalog name or TOML path) on a device (a Device,
    id or device TOML, with ``overrides``). ``model`` names the performance model (``"latency"``, the default,
    or ``"roofline"``); ``counter`` the footprint counter (``"auto"``, ``"ranges"``, ``"isl"``,
    ``"enumerated"``, ``"lines"``: the same numbers at different costs). See
    :func:`warpspeed.model.estimate.estimate`."""
    return _model.estimate(resolve_kernel(kernel, domain), resolve_device(device, overrides), block, folding,
                           registers=registers, analysis=analysis, model=model, counter=counter)


def with_model(e: Estimate, device: Device | str | Path, model: str | PerformanceModel | None) -> Estimate:
    """The same estimate under another performance model (``device``: the one ``e`` was made on)."""
    return _model.with_model(e, resolve_device(device), model)


def performance_bound(kernel: Kernel | str | Path, device: Device | str | Path, block: Sequence[int],
                      folding: Sequence[int] | None = None, domain: Sequence[int] | None = None,
                      **options) -> float:
    """:func:`warpspeed.model.estimate.performance_bound` of a kernel and device given by name, file or object."""
    return _model.performance_bound(resolve_kernel(kernel, domain), resolve_device(device), block, folding,
                                    **options)

