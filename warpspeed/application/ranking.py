"""Rankings of a configuration space, the kernel and devices given by name, file or object: resolved, then
ranked by :mod:`warpspeed.studies.ranking`. ``rank`` is ``warpspeed.rank``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

from ..device import Device
from ..file_frontend import kernel_files
from ..frontends import FrontEnd, by_kernel_source
from ..kernel import Kernel
from ..studies import ranking as _ranking
from ..studies.ranking import RankedResult, Ranking, reference_block
from .resolve import resolve_device, resolve_kernel

KernelSpec = Kernel | str | Path
DeviceSpec = Device | str | Path


def rank(kernel: KernelSpec, device: DeviceSpec, threads: Iterable[int] = (1024,),
         folding: Iterable[Sequence[int]] = ((1, 1, 1),), domain: Sequence[int] | None = None,
         **options) -> Ranking:
    """:func:`warpspeed.studies.ranking.rank` (its options: blocks, domains, configs, registers, executor, jobs,
    cache, progress, model, screen) of a kernel and device given by name, file or object."""
    return _ranking.rank(resolve_kernel(kernel, domain), resolve_device(device), threads, folding, domain,
                         **options)


def precount(kernel: KernelSpec, device: DeviceSpec, threads: Iterable[int] = (1024,),
             folding: Iterable[Sequence[int]] = ((1, 1, 1),), domain: Sequence[int] | None = None,
             **options) -> None:
    """:func:`warpspeed.studies.ranking.precount` of a kernel and device given by name, file or object."""
    _ranking.precount(resolve_kernel(kernel, domain), resolve_device(device), threads, folding, domain, **options)


def rank_on_devices(kernel: KernelSpec, devices: Sequence[DeviceSpec], threads: Iterable[int] = (1024,),
                    folding: Iterable[Sequence[int]] = ((1, 1, 1),), domain: Sequence[int] | None = None,
                    **options) -> list[Ranking]:
    """:func:`warpspeed.studies.ranking.rank_on_devices` of a kernel and devices given by name, file or object."""
    k = resolve_kernel(kernel, domain)
    return _ranking.rank_on_devices(k, [resolve_device(d) for d in devices], threads, folding, domain, **options)


def front_end_of(kernel: KernelSpec) -> FrontEnd:
    """The front end a kernel comes from: a catalog name's entry says; a Kernel object its ``source`` (a
    plugin's kernels are marked ``"<front end>:..."``); files and other kernels are the kernel-file front
    end's."""
    if isinstance(kernel, Kernel):
        return by_kernel_source(kernel.source) or kernel_files()
    from ..kernels import find_front_end  # plugins behind the catalog may import warpspeed: import lazily

    return find_front_end(str(kernel))


def reference_label(kernel: KernelSpec) -> str:
    """How reports and plots name the reference block of the kernel's front end ("<label> 8x8x4 ...")."""
    return front_end_of(kernel).reference.label


def reference_estimate(ranking: Ranking, kernel: KernelSpec, device: DeviceSpec,
                       block: Sequence[int] | None = None, domain: Sequence[int] | None = None,
                       registers: int | None = None, model: str | None = None) -> RankedResult:
    """:func:`warpspeed.studies.ranking.reference_estimate` of a kernel and device given by name, file or
    object; ``block=None``: the reference block of the kernel's front end (:func:`reference_label` names it;
    a one-dimensional launch's: :func:`warpspeed.studies.ranking.reference_block`)."""
    k = resolve_kernel(kernel, domain)
    if block is None:
        block = reference_block(k, front_end_of(kernel).reference, domain)
    return _ranking.reference_estimate(ranking, k, resolve_device(device), block,
                                       domain, registers, model)
