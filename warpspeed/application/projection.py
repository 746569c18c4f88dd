"""Cross-GPU projection, the kernel and both devices given by name, file or object: resolved, then projected by
:func:`warpspeed.studies.projection.project`."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ..device import Device
from ..kernel import Kernel
from ..studies import projection as _projection
from ..studies.projection import Projection
from .resolve import resolve_device, resolve_kernel


def project(kernel: Kernel | str | Path, source: Device | str | Path, target: Device | str | Path, *,
            domain: Sequence[int] | None = None, **options) -> Projection:
    """:func:`warpspeed.studies.projection.project` (its options: threads, folding, blocks, registers, jobs,
    executor, model, progress) of a kernel and devices given by name, file or object."""
    k = resolve_kernel(kernel, domain)
    return _projection.project(k, resolve_device(source), resolve_device(target), domain=domain, **options)
