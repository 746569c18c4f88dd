"""One estimate: a kernel, a device and a launch configuration -> volumes, limiters, performance.

``_estimate`` is a straight chain of the stages, each in its own module with its own typed result:
launch (occupancy, the wave; ``launch``) -> the wave's blocks, enumerated per class (``footprint``)
-> L1 cycles (``l1``) -> L2<->L1 volumes, the block traffic (``l2``) -> DRAM<->L2 volumes, the wave
traffic (``dram``, counting sectors through a ``counters.FootprintCounter``) -> a performance model
(``performance``: roofline or latency). Hit rates of every cache come from ``capacity``. The result is
one frozen, picklable ``Estimate`` whose ``to_dict`` is the JSON of docs/outputs.md.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property, lru_cache, partial

import numpy as np

from .._version import __version__
from ..device import Device, FrozenMap
from ..errors import InputError
from ..kernel import Kernel
from ..schemas import SCHEMA_VERSION
from .capacity import CacheReuse
from .counters import DEFAULT_COUNTER, FootprintCounter, check_counter, choose_counter, footprint_counter
from .dram import WaveCounts, WaveSectors, traffic_of_counts, wave_counts, wave_sectors
from .footprint import (
    BlockCounts,
    Instruction,
    WarpPatterns,
    affine_warp_patterns,
    block_addresses,
    block_classes,
    block_counts,
    block_full_store_sectors,
    elements_fit,
    folded_instructions,
    warp_patterns,
)
from .inputs import device_given, kernel_for
from .l1 import busy_warps, cycles_per_warp_lup
from .l2 import BlockTraffic, block_traffic
from .launch import Launch, Occupancy, make_launch
from .levels import VOLUME_KEYS
from .patterns import strided_fields
from .performance import Performance, PerformanceModel, Workload, models, performance_model
from .range_volumes import ELEMENTS, RangeFootprints, applies
from .roofline import LIMITERS
from .tlb import pages_per_lup


@dataclass(frozen=True)
class FieldVolumes:
    """One field's share of the wave's volumes in B/lup (loads by cause, stores)."""

    name: str
    l2_load_compulsory: float
    dram_load_compulsory: float
    dram_layer_y_hit: float
    dram_layer_z_hit: float
    dram_store: float  # the field's unique stored sectors; the partial-store misses are in the total only

    def to_dict(self) -> dict:
        return {"l2_load_compulsory": self.l2_load_compulsory,
                "dram_load_compulsory": self.dram_load_compulsory,
                "dram_layer_y_hit": self.dram_layer_y_hit, "dram_layer_z_hit": self.dram_layer_z_hit,
                "dram_store": self.dram_store}

    @classmethod
    def from_dict(cls, name: str, d: Mapping) -> FieldVolumes:
        return cls(name, d["l2_load_compulsory"], d["dram_load_compulsory"], d["dram_layer_y_hit"],
                   d["dram_layer_z_hit"], d["dram_store"])


@dataclass(frozen=True)
class Estimate:
    """Inputs, occupancy, volumes by level / field / cause, the four roofline limiters and the prediction.

    ``workload`` is what the stages measured and every performance model reads (L1 cycles, volumes,
    resident warps, load runs, requests), so :func:`with_model` re-predicts without the stages;
    ``performance`` is the model's prediction (GLup/s, limiter, its limits and reasons).
    ``limiters_GLup_s`` are always the four roofline limits. ``wave_valid_lups`` are the valid cells of the
    wave whose volumes the DRAM stage counts (the volumes are per one of them).
    """

    kernel: str
    device: str
    block: tuple[int, int, int]
    folding: tuple[int, int, int]
    domain: tuple[int, int, int]
    grid: tuple[int, int, int]
    occupancy: Occupancy
    wave_blocks: int
    wave_valid_lups: int
    workload: Workload
    fields: tuple[FieldVolumes, ...]
    l1_capacity: CacheReuse  # L1 redundant loads -> L2 load capacity misses
    layer_y: CacheReuse  # L2 reuse from the y-layer thread set
    layer_z: CacheReuse  # L2 reuse from the z-layer thread set
    partial_stores: CacheReuse  # partially written sectors whose misses are read from DRAM (and written twice)
    limiters_GLup_s: Mapping[str, float]
    performance: Performance
    notes: tuple[str, ...] = field(default=())
    unvalidated: tuple[str, ...] = ()  # why the access pattern lies outside the validated ones (confidence.py)

    @property
    def l1_cycles_per_warp_lup(self) -> float:
        return self.workload.l1_cycles_per_warp_lup

    @property
    def volumes_B_per_lup(self) -> Mapping[str, float]:
        """Each level's volumes (:data:`warpspeed.model.levels.VOLUME_KEYS`) in bytes per lup of the wave."""
        return self.workload.volumes_B_per_lup

    @property
    def performance_GLup_s(self) -> float:
        return self.performance.GLup_s

    @property
    def limiter(self) -> str:
        return self.performance.limiter

    @property
    def model(self) -> str:
        """The name of the performance model that predicted ``performance``."""
        return self.performance.model

    @property
    def time_s(self) -> float:
        """Seconds of one sweep over the domain at the predicted rate (0 for an infinite one)."""
        return _time_s(math.prod(self.domain), self.performance_GLup_s)

    @property
    def limits_GLup_s(self) -> Mapping[str, float]:
        """The performance model's limits in GLup/s (inf: no load)."""
        return self.performance.limits_GLup_s

    @property
    def margin(self) -> tuple[str, float] | None:
        """The next limiter and how much faster it would allow (ratio >= 1), None if all others are inf."""
        limits = self.limits_GLup_s
        others = [(k, v) for k, v in limits.items() if k != self.limiter and math.isfinite(v)]
        if not others or self.performance_GLup_s <= 0:
            return None
        k, v = min(others, key=lambda kv: kv[1])
        return k, v / self.performance_GLup_s

    def to_dict(self) -> dict:
        """The estimate's JSON: the main keys first (infinite limiters are null), then further detail keys.

        docs/outputs.md describes every key; ``warpspeed.schemas.load("estimate")`` is its JSON Schema."""
        return {
            "kernel": self.kernel, "device": self.device, "block": list(self.block),
            "folding": list(self.folding), "domain": list(self.domain),
            "occupancy": {"blocks_per_sm": self.occupancy.blocks_per_sm, "wave_blocks": self.wave_blocks,
                          "limited_by": self.occupancy.limited_by},
            "l1_cycles_per_warp_lup": self.l1_cycles_per_warp_lup,
            "volumes_B_per_lup": dict(self.volumes_B_per_lup),
            "limiters_GLup_s": {k: _finite(v) for k, v in self.limiters_GLup_s.items()},
            "performance_GLup_s": self.performance_GLup_s, "limiter": self.limiter, "time_s": self.time_s,
            "grid": list(self.grid),
            "registers": self.occupancy.registers, "registers_source": self.occupancy.registers_source,
            "occupancy_limits": dict(self.occupancy.limits),
            "fields": {f.name: f.to_dict() for f in self.fields},
            "causes": {"l1_capacity": self.l1_capacity.to_dict(), "layer_y": self.layer_y.to_dict(),
                       "layer_z": self.layer_z.to_dict(), "partial_stores": self.partial_stores.to_dict()},
            "notes": list(self.notes), "unvalidated": list(self.unvalidated), "warpspeed_version": __version__,
            "model": self.model,
            "performance_model": self.performance.to_dict(),
            "wave_valid_lups": self.wave_valid_lups, "workload": self.workload.to_dict(),
            "schema_version": SCHEMA_VERSION,  # last: the keys above keep their places
        }

    @classmethod
    def from_dict(cls, d: Mapping) -> Estimate:
        """The estimate back from its JSON (``to_dict``), e.g. from a rank cache: equal to the estimate that
        wrote it, and ``to_dict`` of the result is the same document (but for ``warpspeed_version``, which is
        always this version's). A document that is not an estimate's JSON (or one of an older layout) raises
        :class:`InputError` naming the missing key."""
        try:
            occ = Occupancy(d["occupancy"]["blocks_per_sm"], d["occupancy"]["limited_by"],
                            tuple(d["occupancy_limits"].items()), d["registers"], d["registers_source"])
            causes = {k: CacheReuse.from_dict(d["causes"][k])
                      for k in ("l1_capacity", "layer_y", "layer_z", "partial_stores")}
            volumes = FrozenMap(d["volumes_B_per_lup"])
            return cls(
                kernel=d["kernel"], device=d["device"], block=tuple(d["block"]), folding=tuple(d["folding"]),
                domain=tuple(d["domain"]), grid=tuple(d["grid"]), occupancy=occ,
                wave_blocks=d["occupancy"]["wave_blocks"], wave_valid_lups=d["wave_valid_lups"],
                workload=Workload.from_dict(d["workload"], d["l1_cycles_per_warp_lup"], volumes),
                fields=tuple(FieldVolumes.from_dict(n, f) for n, f in d["fields"].items()),
                limiters_GLup_s=FrozenMap({k: math.inf if v is None else v for k, v in d["limiters_GLup_s"].items()}),
                performance=Performance.from_dict(d["performance_model"], d["performance_GLup_s"], d["limiter"]),
                notes=tuple(d["notes"]), unvalidated=tuple(d["unvalidated"]), **causes)
        except (KeyError, TypeError, AttributeError) as e:
            raise InputError(f"not an estimate document (docs/outputs.md): {type(e).__name__} {e}") from None


def _finite(v: float) -> float | None:
    return v if math.isfinite(v) else None


class KernelAnalysis:
    """What repeats across configurations of one (domain-resolved) kernel: folded instructions, footprint
    counters, and the counts of each configuration that do not depend on the device's cache sizes or
    bandwidths (its block stage and wave counts, kept for the next configuration or device that shares them,
    at most :data:`MEMO_ENTRIES` of each). ``counter`` names the footprint counter (:mod:`warpspeed.model.counters`;
    ``auto`` by default).

    The analysis is of the kernel's accesses: registers per thread enter an estimate only through its launch
    (the blocks per SM, hence the wave), which keys every kept count. So one analysis serves the kernel with
    any register count (``kernel`` is kept without them; :meth:`serves`), and counts made with guessed
    registers while the compiler runs are reused by the real ones wherever the wave is the same."""

    def __init__(self, kernel: Kernel, *, counter: str = DEFAULT_COUNTER):
        self.kernel = kernel.without_registers()
        self.counter = check_counter(counter)
        self._instructions: dict[tuple[int, int, int], tuple[Instruction, ...]] = {}
        self._footprints: dict[tuple[int, bool, str], FootprintCounter] = {}  # (granularity, exact, counter)
        self._block_stages: dict[tuple, BlockStage] = {}
        self._wave_counts: dict[tuple, WaveCounts] = {}
        self._wave_sectors: dict[tuple, WaveSectors] = {}

    def serves(self, kernel: Kernel) -> bool:
        """Whether this is an analysis of ``kernel`` (whatever its registers)."""
        return self.kernel == kernel.without_registers()

    def instructions(self, folding: tuple[int, int, int]) -> tuple[Instruction, ...]:
        if folding not in self._instructions:
            self._instructions[folding] = folded_instructions(self.kernel, folding)
        return self._instructions[folding]

    def footprints(self, granularity: int, exact: bool = True) -> FootprintCounter:
        """The footprint counter at ``granularity`` bytes (``exact``: see ``isl_volumes.Footprints``; ``auto``:
        see ``counters.choose_counter``)."""
        name = choose_counter(self.counter, self.kernel, granularity, exact)
        key = (granularity, exact, name)
        if key not in self._footprints:
            self._footprints[key] = footprint_counter(self.kernel, granularity, exact=exact, name=name)
        return self._footprints[key]

    @cached_property
    def element_ranges(self) -> RangeFootprints | None:
        """The range counter of the kernel's elements, which counts the blocks' own footprints from their rows
        (None where it does not apply, or the counter is forced to ``isl`` or ``enumerated``: the lanes are
        then counted one by one, as the reference does)."""
        if self.counter not in (DEFAULT_COUNTER, "ranges") or not applies(self.kernel, ELEMENTS):
            return None
        return RangeFootprints(self.kernel, ELEMENTS)

    def forget_counts(self) -> None:
        """Drop the kept block stages and wave counts (a benchmark's repeated estimate then counts again)."""
        self._block_stages.clear()
        self._wave_counts.clear()

    def block_stage(self, launch: Launch, dev: Device) -> BlockStage:
        """The wave's blocks on ``dev`` (kept for the next configuration or device with the same blocks)."""
        modulus = math.lcm(dev.l1_line_bytes, dev.l1_banks * dev.l1_bank_bytes, dev.l1_sector_bytes,
                           dev.l2_sector_bytes)
        key = (launch.block, launch.folding, launch.grid, launch.wave_start, launch.wave_blocks, modulus,
               dev.l1_sector_bytes, dev.l1_line_bytes, dev.l2_sector_bytes, dev.l2_line_bytes, dev.warp_size)
        stage = self._block_stages.get(key)
        if stage is None:
            stage = _block_stage(self, launch, dev, modulus)
            _remember(self._block_stages, key, stage)
        return stage

    def wave_sectors(self, launch: Launch, sector_bytes: int) -> WaveSectors:
        """The wave's sector counts (kept: a ranking's bound counts them, its full estimate then adds the lines)."""
        key = (launch.cells_per_block, launch.grid, launch.wave_start, launch.wave_blocks, sector_bytes)
        counted = self._wave_sectors.get(key)
        if counted is None:
            counted = wave_sectors(self.kernel, launch, self.footprints(sector_bytes))
            _remember(self._wave_sectors, key, counted)
        return counted

    def wave_counts(self, launch: Launch, sector_bytes: int, line_bytes: int) -> WaveCounts:
        """The wave's sector and line counts (kept for the next configuration or device with the same wave)."""
        key = (launch.cells_per_block, launch.grid, launch.wave_start, launch.wave_blocks, sector_bytes, line_bytes)
        counts = self._wave_counts.get(key)
        if counts is None:
            counts = wave_counts(self.kernel, launch, self.footprints(sector_bytes),
                                 self.footprints(line_bytes, exact=False),
                                 self.wave_sectors(launch, sector_bytes))
            _remember(self._wave_counts, key, counts)
        return counts


MEMO_ENTRIES = 1024
"""Configurations whose block stage and wave counts a KernelAnalysis keeps: a screened ranking's space (its
bounds, then its full estimates) and the devices of a what-if, which follow each other per configuration.
A block stage of a star stencil or an LBM kernel holds 20-120 KB."""


def _remember(memo: dict, key, value) -> None:
    if len(memo) >= MEMO_ENTRIES:
        memo.clear()
    memo[key] = value


@dataclass(frozen=True)
class BlockStage:
    """What the wave's blocks give, the same on every device with the same granularities and wave: the
    representative blocks' weights, their warp patterns and busy warps (for the L1 cycles), their counts
    (for the L2 volumes) and the sectors they write completely (for the partial stores)."""

    weights: np.ndarray
    patterns: WarpPatterns
    busy_warps: np.ndarray
    counts: BlockCounts
    count_full_store_sectors: Callable[[], int]
    active_warps_per_block: float  # Launch.active_warps_per_block
    kept: dict = field(default_factory=dict, compare=False)  # the full stores; L1 cycles by the L1's numbers

    @property
    def full_store_sectors(self) -> int:
        """Σ over the wave's blocks of the sectors a block writes completely (counted when first asked)."""
        if "full_store_sectors" not in self.kept:
            self.kept["full_store_sectors"] = self.count_full_store_sectors()
        return self.kept["full_store_sectors"]


def _block_stage(an: KernelAnalysis, launch: Launch, dev: Device, modulus: int) -> BlockStage:
    # the wave's blocks, one per class of blocks whose addresses agree modulo every granularity used below
    k, instrs = an.kernel, an.instructions(launch.folding)
    classes = block_classes(k, launch, instrs, modulus)
    w = classes.weights
    elements = an.element_ranges
    # affine kernels that the range counter counts need no lane's address: patterns and footprints by rows
    lanes_free = (elements is not None and all(ins.affine is not None for ins in instrs)
                  and elements_fit(k, dev.l1_sector_bytes, dev.l1_line_bytes, dev.l2_sector_bytes))
    ba = block_addresses(launch, instrs, classes.coords, addresses=not lanes_free)
    patterns = affine_warp_patterns(launch, instrs, classes.coords, ba.active, dev.warp_size, modulus) \
        if lanes_free else None
    if patterns is None:
        if ba.addresses is None:
            ba = block_addresses(launch, instrs, classes.coords)
        patterns = warp_patterns(ba, instrs, dev.warp_size, modulus)
    counts = block_counts(k, launch, instrs, ba, w, dev.l1_sector_bytes, dev.l1_line_bytes, dev.warp_size,
                          classes.coords, elements, patterns)
    # the fully written sectors: from the blocks' rows when an estimate asks (a screening bound does not), or
    # from the lanes now, since the stage does not keep them
    full = partial(block_full_store_sectors, k, instrs, weights=w, sector_bytes=dev.l2_sector_bytes, launch=launch,
                   coords=classes.coords, elements=elements)
    kept = {} if lanes_free else {"full_store_sectors": full(ba)}
    return BlockStage(w, patterns, busy_warps(ba.active, dev.warp_size), counts, partial(full, None),
                      launch.active_warps_per_block(dev.warp_size), kept)


def _cached_analysis(kernel: Kernel, counter: str) -> KernelAnalysis:
    """Repeated estimates of one kernel (a sweep, a benchmark), with any registers, share their analysis."""
    return _analysis_of(kernel.without_registers(), counter)


@lru_cache(maxsize=16)
def _analysis_of(kernel: Kernel, counter: str) -> KernelAnalysis:
    return KernelAnalysis(kernel, counter=counter)


def estimate(kernel: Kernel, device: Device, block: Sequence[int],
             folding: Sequence[int] | None = None, domain: Sequence[int] | None = None, *,
             registers: int | None = None, analysis: KernelAnalysis | None = None,
             model: str | PerformanceModel | None = None, counter: str | None = None) -> Estimate:
    """Estimate one launch configuration of a kernel on a device (semantics: docs/kernel-format.md, docs/model.md).

    ``kernel`` and ``device`` are objects (names and files are resolved by :mod:`warpspeed.application`, which
    ``warpspeed.estimate`` calls); ``domain``: the kernel's own unless given.

    ``model`` names the performance model (``"latency"``, the default, or ``"roofline"``; see
    :mod:`warpspeed.model.performance`). ``counter`` names the footprint counter of the DRAM volumes
    (``"auto"``, the default, ``"isl"`` or ``"enumerated"``; see :mod:`warpspeed.model.counters`): all give
    the same numbers, at different costs."""
    pm = performance_model(model)
    k = kernel_for(kernel, domain)
    dev = device_given(device)
    if analysis is None or not analysis.serves(k) or (counter is not None and analysis.counter != counter):
        analysis = _cached_analysis(k, counter or DEFAULT_COUNTER)
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


SHORT_KERNEL_S = 50e-6
"""Launches whose work takes less than this at the roofline are dominated by their launch: the host's call
and the first wave's start, which the model leaves out (the measured 1M-cell copy: about 10 us against 6 us
of work)."""


def _time_s(valid_lups: int, perf: float) -> float:
    return valid_lups / (perf * 1e9) if 0 < perf < math.inf else (0.0 if perf == math.inf else math.inf)


REGISTERS_UNKNOWN = "registers per thread unknown"
"""How the note of a launch whose registers per thread were assumed begins. The model's words are neutral: the
front ends add how their users give the registers (warpspeed.render.advice)."""

DOES_NOT_FIT = "this domain does not fit on one GPU"
"""How the note of a domain larger than the GPU's memory begins (the first note; a report's headline says it)."""


def _percent(share: float) -> str:
    """A share as a percentage of at most three digits, never rounded up to 100 % or down to 0 %."""
    p = 100 * share
    if p >= 99.95:
        return "over 99.9 %"
    if 0 < p < 0.1:
        return "under 0.1 %"
    return f"{p:.3g} %"


def _notes(k: Kernel, dev: Device, launch: Launch, roofline_GLup_s: float) -> list[str]:
    """What the user should know about this launch: assumed inputs, idle threads, memory, a partial wave, a
    launch too short for the model (``roofline_GLup_s``: the lowest roofline limit)."""
    notes = []
    if launch.occupancy.registers_source == "default":
        notes.append(f"{REGISTERS_UNKNOWN}: assumed {launch.occupancy.registers}")
    blocks, full_wave = math.prod(launch.grid), launch.occupancy.blocks_per_sm * dev.sm_count
    small = [f"{v} {n} < {c}" for v, n, c in zip("xyz", k.domain, launch.cells_per_block, strict=True) if n < c]
    if small:
        idle = 1 - k.valid_lups / (blocks * math.prod(launch.cells_per_block))
        notes.append(f"the domain is smaller than one block's cells ({', '.join(small)}): {_percent(idle)} of the "
                     "launched threads have no cell; choose a smaller block in that direction")
    if dev.dram_size_bytes is not None and k.footprint_bytes > dev.dram_size_bytes:
        notes.insert(0, f"{DOES_NOT_FIT}: the arrays need {k.footprint_bytes / 1e9:.4g} GB, more than the "
                        f"{dev.dram_size_bytes / 1e9:.4g} GB of {dev.id}'s memory (dram_size); the estimate is for a "
                        "GPU that could hold them")
    if blocks < full_wave:
        notes.append(f"the grid has {blocks} blocks, fewer than the {full_wave} that fill {dev.id} at once: the "
                     "GPU is not filled, and launch time and the wave's start-up, which the model leaves out, "
                     "weigh more")
    work_s = _time_s(k.valid_lups, roofline_GLup_s)
    if work_s < SHORT_KERNEL_S:
        notes.append(f"this launch has {work_s * 1e6:.3g} us of work at the roofline: launches shorter than "
                     f"{SHORT_KERNEL_S * 1e6:.0f} us are dominated by the launch itself (the host's call, the first "
                     "wave's start), which the model leaves out; a single timed launch measures slower")
    return notes


def performance_bound(kernel: Kernel, device: Device, block: Sequence[int],
                      folding: Sequence[int] | None = None, domain: Sequence[int] | None = None, *,
                      registers: int | None = None, model: str | None = None,
                      analysis: KernelAnalysis | None = None, least_dram: bool = True) -> float:
    """An upper bound of :func:`estimate`'s ``performance_GLup_s`` for the same arguments, from the block stage
    (the L1 cycles, L2 volumes and load runs, exact) and the wave's sector counts, with the DRAM volumes at
    their least (:meth:`~warpspeed.model.dram.WaveSectors.least_dram_B_per_lup`: every layer hit, no
    partial-store miss; the line counts behind the hit rates, the dearest counts, are left out) and no TLB
    walks: the shipped models' prediction never rises with the DRAM volumes (more time at the DRAM, and more
    of the sectors in flight wait for the DRAM, whose latency is the longer). ``least_dram=False``: a looser,
    cheaper bound from the block stage alone (no DRAM traffic at all). ``inf`` where no bound is known
    (another model, a device whose DRAM latency is below its L2's). A ranking screens with both
    (:func:`warpspeed.studies.ranking.rank`, ``screen``)."""
    pm = performance_model(model)
    k = kernel_for(kernel, domain)
    dev = device_given(device)
    if analysis is None or not analysis.serves(k):
        analysis = _cached_analysis(k, DEFAULT_COUNTER)
    launch = make_launch(k, dev, block, folding, registers)
    if type(pm) not in {type(m) for m in models().values()}:
        return math.inf
    if dev.dram_latency_s is not None and dev.l2_latency_s is not None and dev.dram_latency_s < dev.l2_latency_s:
        return math.inf
    blocks, l1_cycles, bt = _block_part(k, dev, launch, analysis)
    dram_load = dram_store = 0.0
    if least_dram:
        counted = analysis.wave_sectors(launch, dev.l2_sector_bytes)
        dram_load, dram_store = counted.least_dram_B_per_lup(dev.l2_sector_bytes, blocks.counts.valid_lups)
    volumes = {"l1_load": bt.l1_load, "l2_load_compulsory": bt.l2_load_compulsory, "l2_load": bt.l2_load,
               "l2_store": bt.l2_store, "dram_load_compulsory": dram_load, "dram_load": dram_load,
               "dram_store": dram_store}
    return pm.predict(_workload(k, dev, launch, blocks, l1_cycles, bt, {v: volumes[v] for v in VOLUME_KEYS},
                                blocks.counts.load_run_bytes, 0.0), dev).GLup_s


def _block_part(k: Kernel, dev: Device, launch: Launch, an: KernelAnalysis) -> tuple[BlockStage, float, BlockTraffic]:
    """The block stage, the L1 cycles per warp-lup and the block traffic (L2 volumes) of a launch."""
    blocks = an.block_stage(launch, dev)
    instrs = an.instructions(launch.folding)
    key = ("l1_cycles", _l1_parameters(dev, instrs))
    l1_cycles = blocks.kept.get(key)
    if l1_cycles is None:  # the same on every device with the same L1 (a what-if of the L2 or the DRAM)
        l1_cycles = cycles_per_warp_lup(blocks.busy_warps, blocks.patterns, instrs, blocks.weights, dev,
                                        blocks.counts.valid_lups)
        blocks.kept[key] = l1_cycles
    return blocks, l1_cycles, block_traffic(k, dev, launch, blocks.counts)


def _l1_parameters(dev: Device, instrs: tuple[Instruction, ...]) -> tuple:
    """Every device number the L1 cycles depend on (warpspeed.model.l1)."""
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
                           blocks.full_store_sectors, counts.valid_lups)
    stages = {"l1_load": bt.l1_load, "l2_load_compulsory": bt.l2_load_compulsory, "l2_load": bt.l2_load,
              "l2_store": bt.l2_store, "dram_load_compulsory": wt.dram_load_compulsory, "dram_load": wt.dram_load,
              "dram_store": wt.dram_store}
    volumes = {k: stages[k] for k in VOLUME_KEYS}  # every level's volumes (warpspeed.model.levels), in its order
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
        kernel=k.name, device=dev.id, block=launch.block, folding=launch.folding, domain=k.domain,
        grid=launch.grid, occupancy=launch.occupancy, wave_blocks=launch.wave_blocks,
        wave_valid_lups=counts.valid_lups, workload=work, fields=fields, l1_capacity=bt.l1_capacity,
        layer_y=wt.layer_y, layer_z=wt.layer_z, partial_stores=wt.partial_stores, limiters_GLup_s=FrozenMap(roof),
        performance=performance, notes=tuple(_notes(k, dev, launch, min(roof.values()))),
        unvalidated=strided_fields(k, an.instructions(launch.folding), dev.l1_sector_bytes))


__all__ = ["Estimate", "FieldVolumes", "KernelAnalysis", "LIMITERS", "SHORT_KERNEL_S", "estimate",
           "performance_bound", "with_model"]
