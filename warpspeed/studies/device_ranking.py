"""Which GPU for a kernel: its best configuration on each of several devices, the devices sorted fastest first.

Each device gets the kernel's best configuration from the screened ranking of its own space, as a comparison
gives each candidate (:func:`warpspeed.studies.comparison.best_ranking`: ``screen=1``, so the best and its
confidence are the full ranking's; without ``threads``, blocks of 1024 threads halved until one launches).
The devices are sorted by that configuration's time per update of the domain, fastest first (equal times keep
the order given), each with its factor to the fastest.

A device that cannot run the kernel stays in the list, after the others, with the reason: its memory cannot
hold the kernel's arrays (``dram_size``), or no block can launch (registers, shared memory, threads).

Two kinds of trust are told apart per device: the ranking's confidence (contenders, access patterns outside
what the model was validated on; :mod:`warpspeed.studies.confidence`) and the device's validation, the status
of its family's model data (:mod:`warpspeed.device.families`: measured here, published, or assumed from
another family).

The devices' rankings are independent: with more than one worker they run in a local process pool, one task
per group of devices whose waves agree (SM count and per-SM limits: they share their block and wave counts).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, as_completed
from dataclasses import dataclass, replace

from .._version import __version__
from ..device import Device
from ..device.families import Family, device_family
from ..errors import InputError
from ..kernel import Kernel
from ..model.inputs import device_given, kernel_for
from ..model.performance import performance_model
from ..schemas import SCHEMA_VERSION
from .comparison import best_ranking
from .confidence import Confidence
from .ranking import RankedResult, Ranking
from .space import block_shapes, configurations, thread_counts
from .workers import pool_size, run_tasks


@dataclass(frozen=True)
class DeviceResult:
    """One device: the kernel's screened ranking there and its best configuration, or why it cannot run the
    kernel (``reason``; then ``ranking`` is None where the kernel was not ranked, or holds the error rows)."""

    device: Device
    family: Family
    ranking: Ranking | None
    threads: tuple[int, ...]  # the thread counts ranked (fewer than 1024 where 1024 cannot launch)
    reason: str | None = None
    factor: float | None = None  # time per update / the fastest device's; None where it cannot run

    @property
    def runs(self) -> bool:
        return self.reason is None

    @property
    def best(self) -> RankedResult | None:
        """The best configuration; None where the device cannot run the kernel."""
        return self.ranking.best if self.runs and self.ranking is not None else None

    @property
    def performance_GLup_s(self) -> float:
        return 0.0 if self.best is None else self.best.performance_GLup_s

    @property
    def time_s(self) -> float | None:
        """The best configuration's time of one update of the domain (one launch; s)."""
        best = self.best
        return None if best is None or best.estimate is None else best.estimate.time_s

    @property
    def limiter(self) -> str | None:
        return None if self.best is None else self.best.limiter

    @property
    def confidence(self) -> Confidence | None:
        return None if self.best is None or self.ranking is None else self.ranking.confidence

    @property
    def unvalidated(self) -> tuple[str, ...]:
        """The best configuration's access patterns outside what the model was validated on."""
        best = self.best
        return () if best is None or best.estimate is None else tuple(best.estimate.unvalidated)

    def to_dict(self, rank: int | None) -> dict:
        best, conf = self.best, self.confidence
        return {"rank": rank, "device": self.device.id, "name": self.device.name,
                "architecture": self.device.architecture, "validation": self.family.validation,
                "measured": self.family.measured, "family": self.family.to_dict(), "runs": self.runs,
                "reason": self.reason, "threads": list(self.threads),
                "configurations": 0 if self.ranking is None else len(self.ranking.results),
                "performance_GLup_s": self.performance_GLup_s if self.runs else None,
                "time_s": self.time_s, "limiter": self.limiter, "factor": self.factor,
                "unvalidated": list(self.unvalidated),
                "best": None if best is None else best.data,
                "confidence": None if conf is None else conf.to_dict()}


@dataclass(frozen=True)
class DeviceRanking:
    """The devices sorted fastest first for one kernel and domain, those that cannot run it last."""

    kernel: str
    domain: tuple[int, int, int]
    model: str
    devices: tuple[DeviceResult, ...]

    @property
    def running(self) -> tuple[DeviceResult, ...]:
        return tuple(d for d in self.devices if d.runs)

    @property
    def refused(self) -> tuple[DeviceResult, ...]:
        return tuple(d for d in self.devices if not d.runs)

    @property
    def best(self) -> DeviceResult | None:
        """The fastest device; None when no device can run the kernel."""
        return self.running[0] if self.running else None

    def to_dict(self) -> dict:
        ranks = {id(d): i + 1 for i, d in enumerate(self.running)}
        best = self.best
        return {"kernel": self.kernel, "domain": list(self.domain), "cells": math.prod(self.domain),
                "model": self.model, "best": None if best is None else best.device.id,
                "devices": [d.to_dict(ranks.get(id(d))) for d in self.devices],
                "warpspeed_version": __version__, "schema_version": SCHEMA_VERSION}


def rank_devices(kernel: Kernel, devices: Sequence[Device], threads: int | Iterable[int] | None = None,
                 folding: Iterable[Sequence[int]] = ((1, 1, 1),), domain: Sequence[int] | None = None, *,
                 registers: int | None = None, model: str | None = None, executor: Executor | None = None,
                 jobs: int | None = None, progress: Callable[[int, int], None] | None = None) -> DeviceRanking:
    """The kernel's best configuration on each device, the devices sorted fastest first (module docstring).

    ``threads``, ``folding``, ``registers`` and ``model`` are those of :func:`~warpspeed.studies.ranking.rank`,
    for every device; ``threads=None`` ranks blocks of 1024 threads, or where they cannot launch the largest
    power of two that can. ``domain`` resolves the kernel for it. ``executor``: any Executor; by default a local
    process pool of ``jobs`` workers (all cores), or this process for ``jobs=1``. ``progress(done, total)``
    counts devices (a pool's workers report a group of devices at a time)."""
    model = performance_model(model).name
    k = kernel_for(kernel, domain)
    devs = [device_given(d) for d in devices]
    if not devs:
        raise InputError("rank_devices needs at least one device.")
    ids = [d.id for d in devs]
    if len(set(ids)) < len(ids):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise InputError(f"devices {', '.join(twice)} given more than once; give each device once.")
    counts = None if threads is None else tuple(thread_counts(threads))
    foldings = [tuple(f) for f in folding]
    configurations(block_shapes(counts or (1024,)), foldings)  # what no device can rank is refused here, once
    fit = [_fits(k, d) for d in devs]
    todo = [i for i, why in enumerate(fit) if why is None]
    tasks = [(k, devs[i], counts, foldings, registers, model) for i in todo]
    done: dict[int, tuple[Ranking, tuple[int, ...]] | str] = {}
    total = len(devs)

    def report() -> None:
        if progress is not None:
            progress(len(done) + len(devs) - len(todo), total)

    report()
    groups = len({_wave_key(devs[i]) for i in todo})
    if executor is None and pool_size(jobs, groups) <= 1:
        for i, task in zip(todo, tasks, strict=True):
            done[i] = _device_best(*task)
            report()
    else:
        _in_pool(todo, tasks, done, executor, jobs, report)
    results = [_result(devs[i], fit[i], done.get(i), counts) for i in range(len(devs))]
    running = sorted((r for r in results if r.runs), key=_running_time_s)  # stable: equal times keep the order
    if running:
        fastest = _running_time_s(running[0])
        running = [replace(r, factor=_running_time_s(r) / fastest) for r in running]
    return DeviceRanking(k.name, k.domain, model, (*running, *(r for r in results if not r.runs)))


def _running_time_s(r: DeviceResult) -> float:
    """The time per update of a device that runs the kernel (its best configuration has an estimate)."""
    t = r.time_s
    assert t is not None, f"{r.device.id} runs the kernel but its best configuration has no time"
    return t


def _wave_key(dev: Device) -> tuple:
    """What decides a configuration's wave and its block and wave counts on a device: devices that agree on it
    share those counts (the kernel's analysis keeps them), so a worker ranks them one after the other."""
    return (dev.sm_count, dev.warp_size, dev.max_threads_per_sm, dev.max_blocks_per_sm, dev.registers_per_sm,
            dev.register_alloc_unit, dev.shared_per_sm_bytes, dev.l1_line_bytes, dev.l1_sector_bytes,
            dev.l2_line_bytes, dev.l2_sector_bytes)


def _devices_best(tasks: list[tuple]) -> list[tuple[Ranking, tuple[int, ...]] | str]:
    """:func:`_device_best` of devices that share their counts, in turn (one worker's task)."""
    return [_device_best(*task) for task in tasks]


def _in_pool(todo: list[int], tasks: list[tuple], done: dict, executor: Executor | None, jobs: int | None,
             report: Callable[[], None]) -> None:
    """The devices' best rankings as tasks of ``executor`` or of a local pool of ``jobs`` workers, one task per
    group of devices that share their counts (:func:`_wave_key`)."""
    groups: dict[tuple, list[int]] = {}
    for n, task in enumerate(tasks):
        groups.setdefault(_wave_key(task[1]), []).append(n)
    batches = [([todo[n] for n in members], [tasks[n] for n in members])  # the largest groups first
               for members in sorted(groups.values(), key=len, reverse=True)]

    def collect(futures: list) -> None:
        ids = {fut: device_ids for fut, (device_ids, _) in zip(futures, batches, strict=True)}
        for fut in as_completed(futures):
            for i, result in zip(ids[fut], fut.result(), strict=True):
                done[i] = result
            report()

    run_tasks(_devices_best, [(batch,) for _, batch in batches], executor, pool_size(jobs, len(batches)), collect)


def _device_best(k: Kernel, dev: Device, counts: tuple[int, ...] | None, foldings, registers: int | None,
                 model: str) -> tuple[Ranking, tuple[int, ...]] | str:
    """One device's best ranking (a worker's task), or why the ranking refused the device (its message)."""
    try:
        return best_ranking(k, dev, counts, foldings, registers, model)
    except InputError as e:
        return f"cannot be ranked: {e}"


def _fits(k: Kernel, dev: Device) -> str | None:
    """Why the kernel's arrays cannot be held in the device's memory; None if they can (or no capacity is
    recorded)."""
    if dev.dram_size_bytes is not None and k.footprint_bytes > dev.dram_size_bytes:
        return (f"the arrays need {k.footprint_bytes / 1e9:.4g} GB, more than the {dev.dram_size_bytes / 1e9:.4g} GB "
                f"of its memory (dram_size)")
    return None


def _result(dev: Device, too_large: str | None, ranked: tuple[Ranking, tuple[int, ...]] | str | None,
            counts: tuple[int, ...] | None) -> DeviceResult:
    family = device_family(dev)
    if too_large is not None or ranked is None or isinstance(ranked, str):
        why = too_large or (ranked if isinstance(ranked, str) else "not ranked")
        return DeviceResult(dev, family, None, () if counts is None else counts, why)
    ranking, used = ranked
    if ranking.best.error:
        return DeviceResult(dev, family, ranking, used, f"no block can launch: {ranking.best.error}")
    return DeviceResult(dev, family, ranking, used)


__all__ = ["DeviceRanking", "DeviceResult", "rank_devices"]
