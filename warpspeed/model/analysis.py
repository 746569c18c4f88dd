"""What estimates of one kernel share: its :class:`KernelAnalysis` (folded instructions, footprint counters)
and the memo caches of the counts that do not depend on the device's cache sizes or bandwidths (a
configuration's :class:`BlockStage` and its wave counts), kept for the next configuration or device that
shares them. :func:`shared_analysis` keeps one analysis per kernel across estimates."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache, partial

import numpy as np

from ..device import Device
from ..kernel import Kernel
from .counters import DEFAULT_COUNTER, FootprintCounter, check_counter, choose_counter, footprint_counter
from .dram import WaveCounts, WaveSectors, wave_counts, wave_sectors
from .footprint import (
    BlockCounts,
    Instruction,
    StoreSectors,
    WarpPatterns,
    affine_warp_patterns,
    block_addresses,
    block_classes,
    block_counts,
    block_store_sectors,
    elements_fit,
    folded_instructions,
    warp_patterns,
)
from .l1 import busy_warps
from .launch import Launch
from .range_volumes import ELEMENTS, RangeFootprints, applies
from .shifted_lanes import ShiftedLanes, shifted_lanes
from .unfinished import unfinished_store_sectors


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
        self._pattern_costs: dict[tuple, dict] = {}
        self._unfinished: dict[int, tuple[float, ...]] = {}

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

    def unfinished_B_per_lup(self, sector_bytes: int) -> tuple[float, ...]:
        """Per field, the stored sectors no cell of the domain completes, in B per lup of the domain (the
        same for every launch: a property of the kernel's fields; counted by the element ranges whatever the
        counter, so that every counter gives the same numbers)."""
        if sector_bytes not in self._unfinished:
            counts = unfinished_store_sectors(self.kernel, sector_bytes)
            lups = math.prod(self.kernel.domain)
            self._unfinished[sector_bytes] = tuple(n * sector_bytes / lups for n in counts)
        return self._unfinished[sector_bytes]

    def pattern_costs(self, l1_parameters: tuple) -> dict:
        """The L1 costs of the warp patterns met so far on an L1 of these numbers (``l1.line_costs``' ``known``):
        a ranking's configurations share most of their patterns."""
        return self._pattern_costs.setdefault(l1_parameters, {})

    def forget_counts(self) -> None:
        """Drop the kept block stages, wave sector and line counts, warp patterns' L1 costs and never-completed
        stored sectors (a benchmark's repeated estimate then counts again)."""
        self._block_stages.clear()
        self._wave_counts.clear()
        self._wave_sectors.clear()
        self._pattern_costs.clear()
        self._unfinished.clear()

    def block_stage(self, launch: Launch, dev: Device) -> BlockStage:
        """The wave's blocks on ``dev`` (kept for the next configuration or device with the same blocks)."""
        modulus = math.lcm(dev.l1_line_bytes, dev.l1_banks * dev.l1_bank_bytes, dev.l1_sector_bytes,
                           dev.l2_sector_bytes)
        grid = None if launch.linear else launch.grid  # a linear launch's blocks hold the same cells at any grid
        key = (launch.block, launch.folding, grid, launch.wave_start, launch.wave_blocks, modulus,
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
    count_store_sectors: Callable[[], StoreSectors]
    active_warps_per_block: float  # Launch.active_warps_per_block
    kept: dict = field(default_factory=dict, compare=False)  # the full stores; L1 cycles by the L1's numbers

    @property
    def store_sectors(self) -> StoreSectors:
        """Σ over the wave's blocks of the sectors a block writes completely and at all (counted when first
        asked)."""
        if "store_sectors" not in self.kept:
            self.kept["store_sectors"] = self.count_store_sectors()
        return self.kept["store_sectors"]


def _block_stage(an: KernelAnalysis, launch: Launch, dev: Device, modulus: int) -> BlockStage:
    # the wave's blocks, one per class of blocks whose addresses agree modulo every granularity used below
    k, instrs = an.kernel, an.instructions(launch.folding)
    classes = block_classes(k, launch, instrs, modulus)
    w = classes.weights
    elements = None if launch.linear else an.element_ranges  # linear1d blocks are no boxes of cells
    # affine kernels need no lane's address (unless the counter is forced: the lanes one by one, the reference):
    # warp patterns from the lanes' layouts, and footprints from the rows of the range counter where it counts
    # the kernel's elements, else (arrays of structures) from the offsets of one block, shifted
    affine = (an.counter in (DEFAULT_COUNTER, "ranges") and not launch.linear
              and all(ins.affine is not None for ins in instrs))
    lanes_free = (elements is not None and affine
                  and elements_fit(k, dev.l1_sector_bytes, dev.l1_line_bytes, dev.l2_sector_bytes))
    ba = block_addresses(launch, instrs, classes.coords, addresses=not affine)
    shifted = None if lanes_free or not affine else _shifted_lanes(k, launch, instrs, classes.coords, ba.active,
                                                                   modulus)
    patterns = affine_warp_patterns(launch, instrs, classes.coords, ba.active, dev.warp_size, modulus) \
        if affine else None
    if patterns is None or not (lanes_free or shifted is not None):
        if ba.addresses is None:
            ba = block_addresses(launch, instrs, classes.coords)
        if patterns is None:
            patterns = warp_patterns(ba, instrs, dev.warp_size, modulus)
    counts = block_counts(k, launch, instrs, ba, w, dev.l1_sector_bytes, dev.l1_line_bytes, dev.warp_size,
                          classes.coords, elements, patterns, shifted)
    # the fully written sectors when an estimate asks (a screening bound does not): from the blocks' rows, or
    # from their shifted lanes listed again; from the lanes one by one now, since the stage does not keep them
    full = partial(block_store_sectors, k, instrs, weights=w, sector_bytes=dev.l2_sector_bytes, launch=launch,
                   coords=classes.coords, elements=elements)
    count_full: Callable[[], StoreSectors] = partial(full, None)
    kept = {}
    if shifted is not None:
        count_full = partial(_full_from_shifted_lanes, full, k, launch, instrs, classes.coords, modulus)
    elif not lanes_free:
        kept = {"store_sectors": full(ba)}
    return BlockStage(w, patterns, busy_warps(ba.active, dev.warp_size), counts, count_full,
                      launch.active_warps_per_block(dev.warp_size), kept)


def _full_from_shifted_lanes(full: Callable[..., StoreSectors], k: Kernel, launch: Launch,
                             instrs: tuple[Instruction, ...], coords: np.ndarray, modulus: int) -> StoreSectors:
    """``full`` (the stage's block_store_sectors) from the blocks' shifted lanes, listed again."""
    active = block_addresses(launch, instrs, coords, addresses=False).active
    return full(None, shifted=_shifted_lanes(k, launch, instrs, coords, active, modulus))


def _shifted_lanes(k: Kernel, launch: Launch, instrs: tuple[Instruction, ...], coords: np.ndarray,
                   active: np.ndarray, modulus: int) -> ShiftedLanes | None:
    """The blocks' lanes as shifted offsets where each field's loads and its stores have one slope (else None)."""
    shifted = shifted_lanes(launch, instrs, coords, active, modulus)
    selections = [np.array([ins.field == fi and ins.store == store for ins in instrs])
                  for fi in range(len(k.fields)) for store in (False, True)]
    return shifted if shifted is not None and shifted.serves(selections) else None


def shared_analysis(kernel: Kernel, counter: str = DEFAULT_COUNTER) -> KernelAnalysis:
    """Repeated estimates of one kernel (a sweep, a benchmark), with any registers, share their analysis (the
    last 16 kernels' analyses are kept)."""
    return _analysis_of(kernel.without_registers(), counter)


def forget_shared_analyses() -> None:
    """Drop every kept analysis (the next estimate of any kernel counts afresh: a benchmark's cold run)."""
    _analysis_of.cache_clear()


@lru_cache(maxsize=16)
def _analysis_of(kernel: Kernel, counter: str) -> KernelAnalysis:
    return KernelAnalysis(kernel, counter=counter)


__all__ = ["BlockStage", "KernelAnalysis", "MEMO_ENTRIES", "forget_shared_analyses", "shared_analysis"]
