"""Launch configuration: block, folding, grid, occupancy and the representative wave.

Occupancy follows the CUDA occupancy calculator: blocks per SM is the minimum over warps (threads),
resident blocks, registers (allocated per warp in units of ``register_alloc_unit``, the register file
split into ``register_subpartitions``) and shared memory (with the per-block reservation).
The wave is ``blocks_per_sm * sm_count`` consecutive linear block ids placed where a typical wave runs
(:func:`wave_start`): inside one row or one plane of blocks when it fits in one, never straddling a
plane boundary that most waves do not cross.

The configurations the model takes (the measurement CSV reader applies the same limits): block, folding
and domain extents in 1..2^31-1, a folding of at most 64 cells per thread, a domain of at most 2^40
cells, and a grid (domain / (block x folding), rounded up) that CUDA launches: at most 2^31-1 x 65535 x
65535 blocks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..device import Device
from ..errors import InputError
from ..kernel import LINEAR_INDEXING, Kernel

DEFAULT_REGISTERS = 32
"""Registers per thread assumed when neither the kernel nor the caller gives a count (a lean stencil)."""

Triple = tuple[int, int, int]

MAX_EXTENT = 2**31 - 1
"""Block, folding and domain extents (CUDA's grid limit in x)."""
MAX_GRID: Triple = (2**31 - 1, 65535, 65535)
"""Blocks per grid in x, y, z that CUDA launches."""
MAX_CELLS = 2**40
"""Domain cells: more than any GPU's memory holds (and int64-safe in the estimator)."""
MAX_FOLDING = 64
"""Cells per thread (x*y*z): the estimator's time and memory grow with block x folding."""


class LaunchError(InputError):
    """A configuration that cannot launch on the device (too many threads, registers, shared memory)."""


@dataclass(frozen=True)
class Occupancy:
    blocks_per_sm: int
    limited_by: str  # "threads" | "blocks" | "registers" | "shared_memory"
    limits: tuple[tuple[str, int], ...]  # blocks per SM allowed by each resource
    registers: int
    registers_source: str  # "kernel" | "argument" | "default"

    def to_dict(self) -> dict:
        return {"blocks_per_sm": self.blocks_per_sm, "limited_by": self.limited_by,
                "limits": dict(self.limits), "registers": self.registers,
                "registers_source": self.registers_source}


@dataclass(frozen=True)
class Launch:
    """Everything about how the kernel is mapped onto the GPU for one configuration."""

    block: Triple
    folding: Triple
    domain: Triple
    grid: Triple
    occupancy: Occupancy
    wave_start: int  # first linear block id of the representative wave
    wave_blocks: int  # blocks in the representative wave (the whole grid when it is smaller)
    indexing: str = "linear3d"  # the kernel's thread->cell mapping (warpspeed.kernel.INDEXING)
    iterations: int = 1  # gridstrided_linear1d: the loop's iterations per thread (the configuration's folding in x)

    @property
    def cells_per_block(self) -> Triple:
        """Cells a block covers in each dimension: block x folding."""
        return tuple(b * f for b, f in zip(self.block, self.folding, strict=True))  # type: ignore[return-value]

    @property
    def threads_per_block(self) -> int:
        return math.prod(self.block)

    @property
    def grid_blocks(self) -> int:
        return math.prod(self.grid)

    @property
    def linear(self) -> bool:
        """Whether the threads take the cells of the linearised iteration space in turn (``linear1d`` and
        ``gridstrided_linear1d``). Their block ids are then those of the blocks of N consecutive cells (for a
        grid-strided launch: block b in the loop's iteration i holds the cells of block i x grid + b)."""
        return self.indexing in LINEAR_INDEXING

    @property
    def grid_strided(self) -> bool:
        """Whether each thread loops over the cells a grid apart (``gridstrided_linear1d``: ``iterations`` per
        thread, one cell each; the launch's ``folding`` is then (1, 1, 1))."""
        return self.indexing == "gridstrided_linear1d"

    @property
    def configured_folding(self) -> Triple:
        """The folding the configuration gave: a grid-strided launch's iterations per thread in x."""
        return (self.iterations, 1, 1) if self.grid_strided else self.folding

    @property
    def linear_blocks(self) -> int:
        """Blocks of N consecutive cells that cover the iteration space (a linear launch's block ids)."""
        return -(-self.cells // self.threads_per_block)

    @property
    def cells(self) -> int:
        """Cells of the iteration space."""
        return math.prod(self.domain)

    def active_warps_per_block(self, warp_size: int) -> float:
        """Mean warps per block of the grid with at least one cell in the domain. A warp without a cell
        exits at once and keeps nothing in flight, though its block holds the SM's resources: a block wider
        than the domain, or the last block of a row that the domain ends inside."""
        if self.linear:  # every thread has a cell but those past the last cell, in the last block
            n, g = self.threads_per_block, self.linear_blocks
            last = self.cells - (g - 1) * n
            return ((g - 1) * -(-n // warp_size) + -(-last // warp_size)) / g
        per_axis = []  # per axis: thread masks (kinds, threads) and blocks of each kind; x, y, z
        for n, b, f, g in zip(self.domain, self.block, self.folding, self.grid, strict=True):
            last = n - (g - 1) * b * f  # cells of the last block along this axis (1 .. b x f)
            kinds = [(cells, count) for cells, count in ((b * f, g - 1), (last, 1)) if count]
            per_axis.append((np.arange(b)[None, :] * f < np.array([c for c, _ in kinds])[:, None],
                             np.array([count for _, count in kinds], dtype=np.int64)))
        (mx, cx), (my, cy), (mz, cz) = per_axis
        # every kind of block at once: (kx, ky, kz, bz, by, bx), the threads of a block x fastest
        mask = (mz[None, None, :, :, None, None] & my[None, :, None, None, :, None]
                & mx[:, None, None, None, None, :])
        mask = mask.reshape(mask.shape[0] * mask.shape[1] * mask.shape[2], -1)
        mask = np.pad(mask, ((0, 0), (0, -mask.shape[1] % warp_size)))
        warps = mask.reshape(mask.shape[0], -1, warp_size).any(axis=2).sum(axis=1)  # per kind (kx, ky, kz)
        blocks = (cx[:, None, None] * cy[None, :, None] * cz[None, None, :]).ravel()
        return int((warps * blocks).sum()) / self.grid_blocks

    def wave_block_coords(self, start: int | None = None, stop: int | None = None) -> np.ndarray:
        """Block coordinates (n, 3) of linear block ids [start, stop) (default: the wave), x fastest."""
        a = self.wave_start if start is None else start
        b = self.wave_start + self.wave_blocks if stop is None else stop
        ids = np.arange(a, b, dtype=np.int64)
        if self.linear:  # the blocks of consecutive cells (see ``linear``)
            return np.stack([ids, np.zeros_like(ids), np.zeros_like(ids)], axis=1)
        gx, gy, _ = self.grid
        return np.stack([ids % gx, (ids // gx) % gy, ids // (gx * gy)], axis=1)


def triple(value: Sequence[int] | None, what: str, default: Triple | None = None) -> Triple:
    """Validate a block/folding/domain triple: 1 to 3 positive integers, padded with 1.

    Extents are at most :data:`MAX_EXTENT`; a ``"folding"`` has at most :data:`MAX_FOLDING` cells per
    thread and a ``"domain"`` at most :data:`MAX_CELLS` cells.
    """
    if value is None:
        if default is None:
            raise InputError(f"{what} is required (three positive integers X,Y,Z).")
        return default
    if isinstance(value, str) or not isinstance(value, Sequence) or not 1 <= len(value) <= 3:
        raise InputError(f"{what} must be 1 to 3 positive integers (X,Y,Z), got {value!r}.")
    out = []
    for v in value:
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
            raise InputError(f"{what} must be positive integers (X,Y,Z), got {list(value)!r}.")
        out.append(int(v))
    t: Triple = tuple(out + [1] * (3 - len(out)))  # type: ignore[assignment]
    for axis, n in zip("xyz", t, strict=True):
        if n > MAX_EXTENT:
            raise InputError(f"{what} {list(t)}: the {axis} extent {n} is too large; give extents in "
                             f"1..{MAX_EXTENT} (2^31-1).")
    n = math.prod(t)
    if what == "folding" and n > MAX_FOLDING:
        raise InputError(f"folding {list(t)} has {n} cells per thread; give a folding of 1 to {MAX_FOLDING} "
                         "cells per thread (x*y*z), such as 1,1,1, 1,2,1 or 1,1,2.")
    if what == "domain" and n > MAX_CELLS:
        raise InputError(f"domain {list(t)} has {n:.3g} cells; give a domain of 1 to 2^40 = {MAX_CELLS} cells "
                         "(more than a GPU's memory holds).")
    return t


def grid_of(domain: Triple, block: Triple, folding: Triple) -> Triple:
    """Blocks per grid: domain / (block x folding), rounded up."""
    return tuple(-(-n // (b * f)) for n, b, f in zip(domain, block, folding, strict=True))  # type: ignore[return-value]


def grid_excess(grid: Triple) -> tuple[str, int, int] | None:
    """The first axis where ``grid`` has more blocks than CUDA launches: (axis, blocks, limit); None if none."""
    return next(((a, g, m) for a, g, m in zip("xyz", grid, MAX_GRID, strict=True) if g > m), None)


def occupancy(device: Device, threads_per_block: int, registers: int, shared_bytes: int = 0,
              registers_source: str = "kernel") -> Occupancy:
    """Resident blocks per SM and the resource that limits them; LaunchError if none fit."""
    d = device
    warps = -(-threads_per_block // d.warp_size)
    limits: dict[str, int] = {
        "threads": (d.max_threads_per_sm // d.warp_size) // warps,
        "blocks": d.max_blocks_per_sm,
    }
    regs_per_warp = -(-registers * d.warp_size // d.register_alloc_unit) * d.register_alloc_unit
    warps_per_partition = (d.registers_per_sm // d.register_subpartitions) // regs_per_warp
    limits["registers"] = warps_per_partition * d.register_subpartitions // warps
    if shared_bytes > 0 or d.shared_reserved_per_block_bytes > 0:
        unit = d.shared_alloc_unit_bytes
        per_block = -(-shared_bytes // unit) * unit + d.shared_reserved_per_block_bytes
        limits["shared_memory"] = d.shared_per_sm_bytes // per_block
    limited_by = min(limits, key=lambda k: limits[k])
    blocks = limits[limited_by]
    if blocks < 1:
        why = {"threads": f"{threads_per_block} threads exceed the {d.max_threads_per_sm} per SM",
               "registers": f"{registers} registers x {threads_per_block} threads need more than the "
                            f"{d.registers_per_sm} registers of an SM",
               "shared_memory": f"{shared_bytes} B of shared memory exceed the {d.shared_per_sm_bytes} B "
                                "of an SM",
               "blocks": "the device allows no resident block"}[limited_by]
        raise LaunchError(f"configuration cannot launch on {d.id}: {why}.")
    return Occupancy(blocks, limited_by, tuple(limits.items()), registers, registers_source)


def registers_used(kernel: Kernel, registers: int | None = None) -> tuple[int, str]:
    """The registers per thread a launch assumes and where they come from: ``registers`` given ("argument"),
    else the kernel's own count ("kernel"), else :data:`DEFAULT_REGISTERS` ("default"). Not yet checked."""
    if registers is not None:
        return registers, "argument"
    if kernel.registers is not None:
        return kernel.registers, "kernel"
    return DEFAULT_REGISTERS, "default"


def make_launch(kernel: Kernel, device: Device, block: Sequence[int], folding: Sequence[int] | None = None,
                registers: int | None = None) -> Launch:
    """Validate a configuration against the device and derive grid, occupancy and the wave."""
    blk = triple(block, "block")
    fold = triple(folding, "folding", (1, 1, 1))
    dom = triple(kernel.domain, "domain")  # a Kernel built directly may hold any domain
    d = device
    threads = math.prod(blk)
    if threads > d.max_threads_per_block:
        raise LaunchError(f"block {list(blk)} has {threads} threads; {d.id} allows at most "
                          f"{d.max_threads_per_block} per block.")
    for axis, n, m in zip("xyz", blk, d.max_block_dims, strict=True):
        if n > m:
            raise LaunchError(f"block {list(blk)}: {axis} extent {n} exceeds the {d.id} limit of {m} "
                              f"(max block {list(d.max_block_dims)}).")
    linear = kernel.indexing in LINEAR_INDEXING
    if linear:
        check_linear(blk, fold, kernel.indexing)
        grid: Triple = (-(-math.prod(dom) // (threads * fold[0])), 1, 1)
    else:
        grid = grid_of(dom, blk, fold)
    if over := grid_excess(grid):
        axis, g, most = over
        raise LaunchError(f"grid {list(grid)} (domain {list(dom)} / (block {list(blk)} x folding "
                          f"{list(fold)}), rounded up) has {g} blocks in {axis}; CUDA launches at most "
                          f"{most} (grid up to {list(MAX_GRID)}): use a larger block or folding in {axis}.")
    regs, source = registers_used(kernel, registers)
    if isinstance(regs, bool) or not isinstance(regs, int) or regs < 1:
        raise InputError(f"registers must be a positive integer, got {regs!r}.")
    if regs > d.max_registers_per_thread:
        raise LaunchError(f"{regs} registers per thread exceed the {d.id} limit of "
                          f"{d.max_registers_per_thread}.")
    if kernel.shared_bytes_per_block > d.shared_per_block_bytes:
        raise LaunchError(f"{kernel.shared_bytes_per_block} B shared memory per block exceed the {d.id} "
                          f"limit of {d.shared_per_block_bytes} B.")
    occ = occupancy(d, threads, regs, kernel.shared_bytes_per_block, source)
    total = math.prod(grid)
    wave = occ.blocks_per_sm * d.sm_count
    iterations = 1
    if linear:  # a grid-strided launch's wave: its resident blocks in one iteration of the loop
        blocks = -(-math.prod(dom) // threads)
        wave = min(wave, total)
        total = blocks
        iterations, fold = fold[0], (1, 1, 1)  # one cell per iteration of the loop
    if total <= wave:
        start, count = 0, total
    else:
        start, count = (linear_wave_start(dom, threads, total, wave) if linear else wave_start(grid, wave)), wave
    return Launch(blk, fold, dom, grid, occ, start, count, kernel.indexing, iterations)


def check_linear(block: Triple, folding: Triple, indexing: str) -> None:
    """A ``linear1d`` kernel launches one-dimensional blocks and updates one cell per thread; a
    ``gridstrided_linear1d`` one updates a cell per iteration of its loop, their number the folding in x."""
    if block[1] != 1 or block[2] != 1:
        raise LaunchError(f"block {list(block)}: a kernel of {indexing} indexing launches one-dimensional blocks; "
                          f"give its threads per block as (N, 1, 1), such as ({math.prod(block)}, 1, 1).")
    if indexing == "linear1d" and folding != (1, 1, 1):
        raise InputError(f"folding {list(folding)}: a kernel of linear1d indexing updates one cell per thread; "
                         "give the folding 1,1,1.")
    if folding[1:] != (1, 1):
        raise InputError(f"folding {list(folding)}: a kernel of gridstrided_linear1d indexing takes the loop's "
                         "iterations per thread as the folding in x; give K,1,1 (the grid: cells / (N x K) blocks).")


def linear_wave_start(domain: Triple, block_threads: int, blocks: int, wave_blocks: int) -> int:
    """First block id of the representative wave of a ``linear1d`` launch: :func:`wave_start`'s rule applied to
    the wave's cells (centred in the middle row of cells when they fit in a row, in the middle plane when they
    fit in a plane, else in the iteration space), rounded down to a block. Where the blocks tile the domain in
    rows (``block_threads`` dividing nx), it is the block :func:`wave_start` gives for the same blocks."""
    nx, ny, nz = domain
    cells = wave_blocks * block_threads
    if cells <= nx:
        first, size = ((nz // 2) * ny + ny // 2) * nx, nx
    elif cells <= nx * ny:
        first, size = (nz // 2) * nx * ny, nx * ny
    else:
        first, size = 0, nx * ny * nz
    return min(max(0, (first + (size - cells) // 2) // block_threads), blocks - wave_blocks)


def wave_start(grid: Triple, wave_blocks: int) -> int:
    """First block id of the representative wave of ``wave_blocks`` blocks (fewer than the grid holds).

    The blocks run in x-y-z order, so a wave is a run of consecutive ids. A wave that fits in one row of
    blocks (or one plane) crosses a row (plane) boundary in only a small share of the waves of a run; the
    middle of the grid, though, is a plane boundary whenever the grid has an even number of planes, and
    there the wave's footprint would carry a second plane's halo and lose the z-reuse that interior waves
    have (measured on an H100: star3d-r4 with 16-deep blocks loads the 12 B/lup of an interior wave, not
    the 17 B/lup of one cut by a plane boundary). So the wave is centred in the middle row when it fits
    in a row, in the middle plane when it fits in a plane, and in the grid otherwise.
    """
    gx, gy, gz = grid
    total = gx * gy * gz
    if wave_blocks <= gx:
        first, size = ((gz // 2) * gy + gy // 2) * gx, gx
    elif wave_blocks <= gx * gy:
        first, size = (gz // 2) * gx * gy, gx * gy
    else:
        first, size = 0, total
    return first + (size - wave_blocks) // 2


def id_range_boxes(start: int, stop: int, grid: Triple) -> list[tuple[Triple, Triple]]:
    """Split the linear block ids [start, stop) into at most five boxes [lo, hi) of block coordinates."""
    gx, gy, _ = grid
    boxes: list[tuple[Triple, Triple]] = []
    a = start
    while a < stop:
        bx, r = a % gx, a // gx
        by, bz = r % gy, r // gy
        if bx != 0 or stop - a < gx:  # a partial row
            n = min(stop - a, gx - bx)
            boxes.append(((bx, by, bz), (bx + n, by + 1, bz + 1)))
            a += n
        elif by != 0 or stop - a < gx * gy:  # whole rows inside one plane
            rows = min((stop - a) // gx, gy - by)
            boxes.append(((0, by, bz), (gx, by + rows, bz + 1)))
            a += rows * gx
        else:  # whole planes
            planes = (stop - a) // (gx * gy)
            boxes.append(((0, 0, bz), (gx, gy, bz + planes)))
            a += planes * gx * gy
    return boxes
