"""Which GPU for a kernel, the kernel and devices given by name, file or object (every shipped device when
none is given): resolved, then ranked by :func:`warpspeed.studies.device_ranking.rank_devices`.
``rank_devices`` is ``warpspeed.rank_devices``."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor
from pathlib import Path

from ..device import Device, device_ids
from ..kernel import Kernel
from ..model.performance import performance_model
from ..studies import device_ranking as _device_ranking
from ..studies.device_ranking import DeviceRanking
from ..studies.space import thread_counts
from .resolve import resolve_device, resolve_kernel

DeviceSpec = Device | str | Path


def resolve_devices(devices: DeviceSpec | Iterable[DeviceSpec] | None = None) -> list[Device]:
    """The devices asked for (ids, device TOML paths or Devices; one alone is a list of one); ``None`` or an empty
    list: every shipped device, in the order ``warpspeed devices`` lists them. An unknown id is an InputError
    naming it and the shipped ids."""
    if isinstance(devices, Device | str | Path):
        devices = [devices]
    chosen = list(devices or ())
    return [resolve_device(d) for d in chosen] if chosen else [resolve_device(i) for i in device_ids()]


def rank_devices(kernel: Kernel | str | Path, devices: DeviceSpec | Iterable[DeviceSpec] | None = None,
                 threads: int | Iterable[int] | None = None, folding: Iterable[Sequence[int]] = ((1, 1, 1),),
                 domain: Sequence[int] | None = None, *, registers: int | None = None, model: str | None = None,
                 executor: Executor | None = None, jobs: int | None = None,
                 progress: Callable[[int, int], None] | None = None) -> DeviceRanking:
    """Which GPU for ``kernel`` (a Kernel, catalog name or kernel TOML path): its best configuration on each of
    ``devices`` (default: every shipped device), fastest first, each with its validation status; devices that
    cannot run it last, with the reason (:func:`warpspeed.studies.device_ranking.rank_devices`, whose options
    these are). The inputs are checked before any ranking: the model, the threads, the devices, the kernel."""
    performance_model(model)
    if threads is not None:
        thread_counts(threads)
    devs = resolve_devices(devices)
    return _device_ranking.rank_devices(resolve_kernel(kernel, domain), devs, threads, folding, domain,
                                        registers=registers, model=model, executor=executor, jobs=jobs,
                                        progress=progress)
