"""One estimate: a kernel, a device and a launch configuration -> volumes, limiters, performance.

``_estimate`` is a straight chain of the stages, each in its own module with its own typed result:
launch (occupancy, the wave; ``launch``) -> the wave's blocks, enumerated per class (``footprint``)
-> L1 cycles (``l1``) -> L2<->L1 volumes, the block traffic (``l2``) -> DRAM<->L2 volumes, the wave
traffic (``dram``, counting sectors through a ``counters.FootprintCounter``) -> a performance model
(``performance``: roofline or latency). Hit rates of every cache come from ``capacity``. The counts that
repeat across configurations are kept by the kernel's ``analysis``; the result is one frozen, picklable
``Estimate`` (``results``) with its ``notes``. This module keeps those names importable from here.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from typing import NamedTuple

from ..device import Device, FrozenMap
from ..errors import InputError
from ..kernel import Kernel
from .analysis import BlockStage, KernelAnalysis, shared_analysis
from .counters import DEFAULT_COUNTER
from .device_validation import device_validation
from .dram import traffic_of_counts
from .footprint import Instruction
from .inputs import device_given, kernel_for
from .l1 import LineCosts, line_costs
from .l2 import BlockTraffic, block_traffic
from .launch import Launch, make_launch
from .levels import VOLUME_KEYS, volume_keys
from .notes import DOES_NOT_FIT, REGISTERS_UNKNOWN, SHORT_KERNEL_S, launch_notes
from .patterns import strided_fields
from .performance import PerformanceModel, Workload, models, performance_model
from .results import Estimate, FieldVolumes
from .roofline import LIMITERS
from .tlb import pages_per_lup


def estimate(kernel: Kernel, device: Device, block: Sequence[int],
             folding: Sequence[int] | None = None, domain: Sequence[int] | None = None, *,
             registers: int | None = None, analysis: KernelAnalysis | None = None,
             model: str | PerformanceModel | None = None, counter: str | None = None) -> Estimate:
    """Estimate one launch configuration of a kernel on a device (semantics: docs/kernel-format.md, docs/model.md).

    ``kernel`` and ``device`` are objects (names and files are resolved by :mod:`warpspeed.application`, which
    ``warpspeed.estimate`` calls); ``domain``: the kernel's own unless given.

    ``model`` names the performance model (``"latency"``, the default, or ``"roofline"``; see
    :mod:`warpspeed.model.performance`). ``counter`` names the footprint counter of the DRAM volumes
    (``"auto"``, the default, or one of ``counters.COUNTERS``; see :mod:`warpspeed.model.counters`): all give
    the same numbers, at different costs."""
    pm = performance_model(model)
    k = kernel_for(kernel, domain)
    dev = device_given(device)
    if analysis is None or not analysis.serves(k) or (counter is not None and analysis.counter != counter):
        analysis = shared_analysis(k, counter or DEFAULT_COUNTER)
    launch = make_launch(k, dev, block, folding, registers)
    return _estimate(k, dev, launch, analysis, pm)


def with_model(e: Estimate, device: Device, model: str | PerformanceModel | None) -> Estimate:
    """The same estimate under another performance model (``device``: the one ``e`` was made on)."""
    pm = performance_model(model)
    dev = device_given(device)
    if dev.id != e.device:
        raise InputError(f"with_model needs the device the estimate was made on ({e.device}), got {dev.id}.")
    perf = pm.predict(e.workload, dev)
    return replace(e, performance=perf)


def performance_bound(kernel: Kernel, device: Device, block: Sequence[int],
                      folding: Sequence[int] | None = None, domain: Sequence[int] | None = None, *,
                      registers: int | None = None, model: str | None = None,
                      analysis: KernelAnalysis | None = None, least_dram: bool = True) -> float:
    """An upper bound of :func:`estimate`'s ``performance_GLup_s`` for the same arguments, from the block stage
    (the L1 cycles, L2 volumes and load runs, exact) and the wave's sector counts, with the DRAM volumes at
    their least (:meth:`~warpspeed.model.dram.WaveSectors.least_dram_B_per_lup`: every layer hit, no
    partial-store miss, the stored sectors no cell completes read, as always; the line counts behind the hit
    rates, the dearest counts, are left out) and no TLB walks: the shipped models' prediction never rises with
    the DRAM volumes (more time at the DRAM, and more of the sectors in flight wait for the DRAM, whose latency
    is the longer). ``least_dram=False``: a looser,
    cheaper bound from the block stage alone (no DRAM traffic at all). ``inf`` where no bound is known
    (another model, a device whose DRAM latency is below its L2's). A ranking screens with both
    (:func:`warpspeed.studies.ranking.rank`, ``screen``)."""
    pm = performance_model(model)
    k = kernel_for(kernel, domain)
    dev = device_given(device)
    if analysis is None or not analysis.serves(k):
        analysis = shared_analysis(k)
    launch = make_launch(k, dev, block, folding, registers)
    if type(pm) not in {type(m) for m in models().values()}:
        return math.inf
    if dev.dram_latency_s is not None and dev.l2_latency_s is not None and dev.dram_latency_s < dev.l2_latency_s:
        return math.inf
    blocks, l1_cycles, bt = _block_part(k, dev, launch, analysis)
    dram_load = dram_store = 0.0
    if least_dram:
        counted = analysis.wave_sectors(launch, dev.l2_sector_bytes)
        dram_load, dram_store = counted.least_dram_B_per_lup(dev.l2_sector_bytes, blocks.counts.valid_lups,
                                                             analysis.unfinished_B_per_lup(dev.l2_sector_bytes))
    # a memory-side cache moves at least what the DRAM does (the L2's misses): the least of both
    least = _LeastDram(dram_load_compulsory=dram_load, dram_load=dram_load, dram_store=dram_store,
                       msc_load=dram_load, msc_store=dram_store)
    return pm.predict(_workload(k, dev, launch, blocks, l1_cycles, bt, stage_volumes(bt, least, keys=volume_keys(dev)),
                                blocks.counts.load_run_bytes, 0.0), dev).GLup_s


class _LeastDram(NamedTuple):
    """The DRAM (and memory-side cache) volumes of a bound (B/lup): named as the wave traffic's
    (warpspeed.model.dram.WaveTraffic)."""

    dram_load_compulsory: float
    dram_load: float
    dram_store: float
    msc_load: float
    msc_store: float


def stage_volumes(*stages: object, keys: Sequence[str] = VOLUME_KEYS) -> dict[str, float]:
    """Every level's volumes (``keys``: :data:`warpspeed.model.levels.VOLUME_KEYS`, less the levels a device
    lacks: :func:`~warpspeed.model.levels.volume_keys`, in that order) in B/lup, each read from the first stage
    result with an attribute of its name: the block traffic has the L1's and the L2's, the wave traffic the
    memory-side cache's and the DRAM's. The keys are declared once, in the levels; a volume no stage gives is
    an error naming it."""
    volumes = {}
    for key in keys:
        given = [getattr(s, key) for s in stages if hasattr(s, key)]
        if not given:
            raise TypeError(f"no stage result gives the volume {key!r} (warpspeed.model.levels): "
                            f"{', '.join(type(s).__name__ for s in stages)}")
        volumes[key] = given[0]
    return volumes


def _block_part(k: Kernel, dev: Device, launch: Launch, an: KernelAnalysis) -> tuple[BlockStage, float, BlockTraffic]:
    """The block stage, the L1 cycles per warp-lup and the block traffic (L2 volumes) of a launch: the line
    rule prices the further load lines at the wave's miss share of its load sectors (L2 load / L1 load)."""
    blocks = an.block_stage(launch, dev)
    costs = _kept_line_costs(blocks, an.instructions(launch.folding), dev, an)
    bt = block_traffic(k, dev, launch, blocks.counts)
    return blocks, costs.cycles(dev, bt.l2_load / bt.l1_load if bt.l1_load else 0.0), bt


def _kept_line_costs(blocks: BlockStage, instrs: tuple[Instruction, ...], dev: Device,
                     an: KernelAnalysis) -> LineCosts:
    """The wave's :class:`~warpspeed.model.l1.LineCosts`, kept in the block stage: the same on every device with
    the same L1 (a what-if of the L2 or the DRAM); its warp patterns' costs are kept in the kernel's analysis."""
    parameters = _l1_parameters(dev, instrs)
    key = ("l1_cycles", parameters)
    costs = blocks.kept.get(key)
    if costs is None:
        costs = line_costs(blocks.busy_warps, blocks.patterns, instrs, blocks.weights, dev, blocks.counts.valid_lups,
                           an.pattern_costs(parameters))
        blocks.kept[key] = costs
    return costs


def l1_line_costs(kernel: Kernel, device: Device, block: Sequence[int], folding: Sequence[int] | None = None, *,
                  registers: int | None = None) -> LineCosts:
    """What a launch's L1 cycles are made of, before the line rule prices them (warpspeed.model.l1.LineCosts):
    what a fit of the rule's device numbers needs (warpspeed.measurement.calibration.fit_l1_line_rule)."""
    dev = device_given(device)
    k = kernel_for(kernel, None)
    an = shared_analysis(k)
    launch = make_launch(k, dev, block, folding, registers)
    return _kept_line_costs(an.block_stage(launch, dev), an.instructions(launch.folding), dev, an)


def _l1_parameters(dev: Device, instrs: tuple[Instruction, ...]) -> tuple:
    """Every device number the L1 costs depend on (warpspeed.model.l1; the per-line price of a further load
    line, with its miss share, is applied per launch)."""
    sizes = sorted({ins.element_bytes for ins in instrs})
    return (dev.l1_bank_bytes, dev.l1_banks, dev.l1_pairing_distance_bytes, dev.l1_load_lines_per_wavefront,
            dev.l1_store_lines_per_wavefront, dev.l1_line_bytes, dev.l1_wavefronts_per_warp, dev.warp_size,
            tuple(dev.lsu_bytes_per_cycle(b) for b in sizes))


def _workload(k: Kernel, dev: Device, launch: Launch, blocks: BlockStage, l1_cycles: float, bt: BlockTraffic,
              volumes: dict[str, float], load_run_bytes: float, tlb: float) -> Workload:
    bps = launch.occupancy.blocks_per_sm
    return Workload(k.precision, k.flops, l1_cycles, FrozenMap(volumes),
                    warps_per_sm=bps * -(-launch.threads_per_block // dev.warp_size),
                    lups_per_thread=math.prod(launch.folding), load_run_bytes=load_run_bytes, tlb_pages_per_lup=tlb,
                    l2_load_requests_per_byte=bt.load_requests_per_byte,
                    l2_store_requests_per_byte=bt.store_requests_per_byte,
                    active_warps_per_sm=bps * blocks.active_warps_per_block)


def _estimate(k: Kernel, dev: Device, launch: Launch, an: KernelAnalysis, pm: PerformanceModel) -> Estimate:
    blocks, l1_cycles, bt = _block_part(k, dev, launch, an)
    counts = blocks.counts
    wt = traffic_of_counts(k, dev, an.wave_counts(launch, dev.l2_sector_bytes, dev.l2_line_bytes),
                           blocks.store_sectors, counts.valid_lups, launch.occupancy.blocks_per_sm,
                           an.unfinished_B_per_lup(dev.l2_sector_bytes))
    volumes = stage_volumes(bt, wt, keys=volume_keys(dev))  # the device's levels' volumes, in their order
    fields = tuple(FieldVolumes(f.name, l2, fw.dram_load_compulsory, fw.dram_layer_y_hit, fw.dram_layer_z_hit,
                                fw.dram_store)
                   for f, l2, fw in zip(k.fields, bt.field_l2_load_compulsory, wt.fields, strict=True))
    tlb = 0.0
    if dev.tlb_page_bytes is not None:  # the TLB-page limiter (off unless the device gives it)
        tlb = pages_per_lup(dev, launch, an.footprints(dev.tlb_page_bytes), counts.valid_lups)
    work = _workload(k, dev, launch, blocks, l1_cycles, bt, volumes, counts.load_run_bytes, tlb)
    performance = pm.predict(work, dev)
    roof = work.roofline_GLup_s(dev)
    return Estimate(
        kernel=k.name, device=dev.id, block=launch.block, folding=launch.configured_folding, domain=k.domain,
        grid=launch.grid, occupancy=launch.occupancy, wave_blocks=launch.wave_blocks,
        wave_valid_lups=counts.valid_lups, workload=work, fields=fields, l1_capacity=bt.l1_capacity,
        layer_y=wt.layer_y, layer_z=wt.layer_z, partial_stores=wt.partial_stores, memory_side=wt.memory_side,
        limiters_GLup_s=FrozenMap(roof),
        performance=performance, notes=tuple(launch_notes(k, dev, launch, min(roof.values()))),
        unvalidated=strided_fields(k, an.instructions(launch.folding), dev.l1_sector_bytes),
        device_validation=device_validation(dev))


__all__ = ["DOES_NOT_FIT", "Estimate", "FieldVolumes", "KernelAnalysis", "LIMITERS", "REGISTERS_UNKNOWN",
           "SHORT_KERNEL_S", "VOLUME_KEYS", "estimate", "l1_line_costs", "performance_bound", "stage_volumes",
           "with_model"]
