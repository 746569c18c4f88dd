"""Explicit (numpy) enumeration of thread blocks: instructions after folding, block classes, addresses.

A thread block's per-warp and per-block counts (L1 wavefronts, sectors per warp, the block's unique
sectors and lines) only depend on the block's addresses up to a common shift by a multiple of 128 B and
on which of its cells are valid. Blocks of the wave are therefore grouped into classes with equal
(shift mod 128 B per distinct address slope, valid extent) and only one block per class is enumerated,
weighted by the class size. Quasi-affine accesses (floor/mod) are not shift invariant: with them every
block of the wave is its own class.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

import numpy as np

from ..expressions import THREAD_VARS, Add, Const, Expr, Mul, Var, affine_form, evaluate, substitute
from ..kernel import Kernel
from .counters import BoxCounter
from .launch import Launch
from .unique_rows import unique_rows


class ShiftedCounts(Protocol):
    """The blocks' lanes as shifted offsets, as the block counts read them (what
    :class:`warpspeed.model.shifted_lanes.ShiftedLanes` gives; declared here so that this module does not
    import the one that builds on it)."""

    def counts(self, sel: np.ndarray, element_bytes: int, sector_bytes: int,
               line_bytes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]: ...

    def full_sectors(self, sel: np.ndarray, element_bytes: int, sector_bytes: int) -> np.ndarray: ...

SENTINEL = np.iinfo(np.int64).max


@dataclass(frozen=True)
class Instruction:
    """One memory instruction of a (folded) thread: a distinct address expression of one field.

    ``cell_expr`` is the linear element index as a function of the cell coordinates; ``thread_expr`` the
    same after folding, as a function of the thread coordinates. ``origins`` are the folding offsets
    (a, b, c) whose cells need this address: a lane is active when any of those cells is valid.
    """

    field: int
    store: bool
    thread_expr: Expr
    origins: tuple[tuple[int, int, int], ...]
    element_bytes: int
    offset: int
    affine: tuple[tuple[int, int, int], int] | None = None  # ``affine_form(thread_expr)``: None if quasi-affine


def folded_instructions(kernel: Kernel, folding: tuple[int, int, int]) -> tuple[Instruction, ...]:
    """Expand folding on the address expressions; identical addresses of one thread count once."""
    merged: dict[tuple, list] = {}
    for origin in itertools.product(*(range(f) for f in folding)):
        subst = {v: Add((Mul(f, Var(v)), Const(o))) for v, f, o in zip(THREAD_VARS, folding, origin,
                                                                         strict=True)}
        for fi, fld in enumerate(kernel.fields):
            for store, accesses in ((False, fld.loads), (True, fld.stores)):
                for acc in accesses:
                    e = substitute(acc.linear, subst)
                    key = (fi, store, e)
                    if key not in merged:
                        merged[key] = [fi, store, e, [], fld.element_bytes, fld.offset]
                    if origin not in merged[key][3]:
                        merged[key][3].append(origin)
    return tuple(Instruction(fi, st, e, tuple(o), eb, off, affine_form(e)) for fi, st, e, o, eb, off in merged.values())


@dataclass(frozen=True)
class BlockClasses:
    """Representative blocks of the wave: coordinates (k, 3), weights (k,) summing to the wave size."""

    coords: np.ndarray
    weights: np.ndarray


def block_classes(kernel: Kernel, launch: Launch, instructions: tuple[Instruction, ...],
                  modulus_bytes: int = 128, coords: np.ndarray | None = None) -> BlockClasses:
    """Group blocks (default: the wave) by address shift modulo ``modulus_bytes`` and valid extent."""
    b = launch.wave_block_coords() if coords is None else coords
    if launch.linear:
        return _linear_block_classes(launch, instructions, b, modulus_bytes)
    cells = np.asarray(launch.cells_per_block, dtype=np.int64)
    origin = b * cells  # first cell of each block
    valid = np.minimum(cells, np.asarray(launch.domain, dtype=np.int64) - origin)
    # thread coords of a block start at block * blockDim
    return _classes(b, [valid], instructions, b * np.asarray(launch.block, dtype=np.int64), modulus_bytes)


def _classes(b: np.ndarray, columns: list[np.ndarray], instructions: tuple[Instruction, ...],
             first_threads: np.ndarray, modulus_bytes: int) -> BlockClasses:
    """The blocks ``b`` grouped by the rows of ``columns`` (what their cells are: valid extents) and the shift of
    their addresses in bytes modulo ``modulus_bytes`` per address slope, from the coordinates their first threads
    give the affine forms, ``first_threads`` (k, 3); a quasi-affine access enumerates every block."""
    columns = list(columns)
    slopes = set()
    for ins in instructions:
        form = ins.affine
        if form is None:  # quasi-affine: enumerate every block
            columns.append(np.arange(len(b), dtype=np.int64)[:, None])
            break
        slopes.add((form[0], ins.element_bytes))
    for coeff, eb in sorted(slopes):
        shift = (first_threads * np.asarray(coeff, dtype=np.int64)).sum(axis=1) * eb
        columns.append((shift % modulus_bytes)[:, None])
    packed = _packed_rows(np.concatenate(columns, axis=1))
    _, first, counts = np.unique(packed, axis=None if packed.ndim == 1 else 0, return_index=True, return_counts=True)
    order = np.argsort(first)
    return BlockClasses(b[first[order]], counts[order].astype(np.int64))


def linear_cells(launch: Launch, first: np.ndarray, threads: np.ndarray) -> np.ndarray:
    """Cell coordinates (k, 3, T) of the threads ``threads`` (T,) of ``linear1d`` blocks whose first thread is
    ``first`` (k,): the t-th thread updates the t-th cell of the domain linearised x fastest (a thread past the
    last cell gets a z beyond the domain)."""
    nx, ny, _ = launch.domain
    t = first[:, None] + threads[None, :]
    return np.stack([t % nx, (t // nx) % ny, t // (nx * ny)], axis=1)


def _linear_block_classes(launch: Launch, instructions: tuple[Instruction, ...], b: np.ndarray,
                          modulus_bytes: int) -> BlockClasses:
    """:func:`block_classes` of a ``linear1d`` launch. Two blocks whose first cells have the same x, whose
    first plane boundary falls on the same thread and whose threads all have cells (or the same count) hold cells
    that differ by one shift in y and z: their addresses differ by one shift per address slope."""
    n = launch.threads_per_block
    nx, ny, _ = launch.domain
    first = b[:, 0] * n
    cell = linear_cells(launch, first, np.zeros(1, dtype=np.int64))[:, :, 0]  # (k, 3)
    columns = [cell[:, :1], np.minimum(n, nx * ny - first % (nx * ny))[:, None],
               np.minimum(n, launch.cells - first)[:, None]]
    return _classes(b, columns, instructions, cell, modulus_bytes)


def _packed_rows(keys: np.ndarray) -> np.ndarray:
    """The rows of a small non-negative integer matrix as one int64 each (mixed radix, the same order and
    equality as the rows), or the matrix itself where the radices do not fit in 62 bits."""
    lo, hi = keys.min(axis=0), keys.max(axis=0)
    radix = hi - lo + 1
    if math.prod(int(r) for r in radix.tolist()) >= 1 << 62:
        return keys
    weights = np.ones(keys.shape[1], dtype=np.int64)
    for j in range(keys.shape[1] - 2, -1, -1):
        weights[j] = weights[j + 1] * radix[j + 1]
    return ((keys - lo) * weights).sum(axis=1)


@dataclass(frozen=True)
class BlockAddresses:
    """Byte addresses (k, n_instr, T) and activity of every lane of the representative blocks.

    Threads of a block are in x-y-z order (x fastest), so warps are consecutive runs of the device's
    ``warp_size`` lanes (32 on NVIDIA, 64 on CDNA).
    ``valid_cells`` (k,) counts the valid lups of each representative block. ``addresses`` is None where
    only the activity was asked for.
    """

    addresses: np.ndarray | None
    active: np.ndarray
    valid_cells: np.ndarray


def local_threads(launch: Launch) -> np.ndarray:
    """Thread coordinates (3, T) inside a block, x fastest (warps are consecutive runs); read-only."""
    return _threads_of_block(launch.block)


@lru_cache(maxsize=64)
def _threads_of_block(block: tuple[int, int, int]) -> np.ndarray:
    bx, by, bz = block
    tz, ty, tx = np.meshgrid(np.arange(bz), np.arange(by), np.arange(bx), indexing="ij")
    out = np.stack([tx.ravel(), ty.ravel(), tz.ravel()], axis=0).astype(np.int64)
    out.setflags(write=False)
    return out


def block_addresses(launch: Launch, instructions: tuple[Instruction, ...], coords: np.ndarray,
                    addresses: bool = True) -> BlockAddresses:
    """Enumerate every lane of the given blocks for every instruction (vectorized). ``addresses=False``
    gives the lanes' activity and the valid cells only (``addresses`` is then None)."""
    fx, fy, fz = launch.folding
    local = local_threads(launch)
    if launch.linear:  # (k, 3, T): the cells of the blocks' threads
        tid = linear_cells(launch, coords[:, 0] * launch.threads_per_block, local[0])
    else:
        tid = coords[:, :, None] * np.asarray(launch.block, dtype=np.int64)[None, :, None] + local[None]  # (k,3,T)
    dom = np.asarray(launch.domain, dtype=np.int64)
    fold = np.asarray(launch.folding, dtype=np.int64)
    k, T = coords.shape[0], local.shape[1]
    addrs = np.empty((k, len(instructions), T), dtype=np.int64) if addresses else None
    active = np.zeros((k, len(instructions), T), dtype=bool)
    forms = {i: ins.affine for i, ins in enumerate(instructions) if ins.affine is not None}
    affine = list(forms)
    if affine and addresses:  # one product for every affine instruction: (coefficients . thread + constant) x bytes
        assert addrs is not None
        coeffs = np.array([forms[i][0] for i in affine], dtype=np.int64)  # (m, 3)
        consts = np.array([(instructions[i].offset + forms[i][1]) for i in affine], dtype=np.int64)
        eb = np.array([instructions[i].element_bytes for i in affine], dtype=np.int64)
        addrs[:, affine, :] = (np.einsum("md,kdt->kmt", coeffs, tid) + consts[None, :, None]) * eb[None, :, None]
    env = {v: tid[:, d, :] for d, v in enumerate(THREAD_VARS)}
    inside: dict[tuple[int, ...], np.ndarray] = {}  # per folding origin: which threads' cell is in the domain

    def inside_of(o: tuple[int, ...]) -> np.ndarray:
        if o not in inside:
            cell = tid * fold[None, :, None] + np.asarray(o, dtype=np.int64)[None, :, None]
            inside[o] = np.all(cell < dom[None, :, None], axis=1)
        return inside[o]

    by_origins: dict[tuple, list[int]] = {}  # the instructions of each set of folding origins: one activity
    for i, ins in enumerate(instructions):
        if ins.affine is None and addresses:
            assert addrs is not None
            addrs[:, i, :] = (ins.offset + evaluate(ins.thread_expr, env)) * ins.element_bytes
        by_origins.setdefault(ins.origins, []).append(i)
    for key, members in by_origins.items():
        act = inside_of(tuple(key[0])).copy()
        for o in key[1:]:
            act |= inside_of(tuple(o))
        active[:, members, :] = act[:, None, :]
    # valid lups per block: every (thread, folding origin) cell inside the domain
    valid = np.zeros(k, dtype=np.int64)
    for o in itertools.product(range(fx), range(fy), range(fz)):
        valid += inside_of(o).sum(axis=1)
    return BlockAddresses(addrs, active, valid)


def count_distinct(values: np.ndarray, active: np.ndarray) -> np.ndarray:
    """Number of distinct active values along the last axis."""
    v = np.where(active, values, SENTINEL)
    v.sort(axis=-1)
    new = np.ones(v.shape, dtype=bool)
    new[..., 1:] = v[..., 1:] != v[..., :-1]
    return (new & (v != SENTINEL)).sum(axis=-1)


def lane_counts(addresses: np.ndarray, active: np.ndarray, element_bytes: int, sector_bytes: int,
                line_bytes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Along the last axis of the active byte addresses of ``element_bytes``-byte elements: the distinct
    sectors, lines and addresses, and the runs (:func:`count_runs`), from one sort of the addresses (the
    sectors and lines of ascending addresses ascend too)."""
    v = np.where(active, addresses, SENTINEL)
    v.sort(axis=-1)
    valid = v != SENTINEL

    def distinct(x: np.ndarray) -> np.ndarray:
        new = valid.copy()
        new[..., 1:] &= x[..., 1:] != x[..., :-1]
        return new.sum(axis=-1)

    sectors = v // sector_bytes
    start = valid.copy()
    start[..., 1:] &= sectors[..., 1:] - (v[..., :-1] + element_bytes - 1) // sector_bytes > 1  # as count_runs
    return distinct(sectors), distinct(v // line_bytes), distinct(v), start.sum(axis=-1)


def count_runs(values: np.ndarray, active: np.ndarray, step: int, sector_bytes: int) -> np.ndarray:
    """Number of runs of the active byte addresses of ``step``-byte elements along the last axis.

    A run is what the DRAM streams without a hole: an element in the same or the next sector as the
    previous element's last byte continues it (an array-of-structures block that loads a few fields of
    every cell reads whole rows of sectors, though its bytes are not contiguous)."""
    v = np.where(active, values, SENTINEL)
    v.sort(axis=-1)
    start = v != SENTINEL
    start[..., 1:] &= v[..., 1:] // sector_bytes - (v[..., :-1] + step - 1) // sector_bytes > 1  # an untouched sector
    return start.sum(axis=-1)


def count_full_sectors(values: np.ndarray, active: np.ndarray, element_bytes: int, sector_bytes: int) -> np.ndarray:
    """Sectors whose every element the active byte addresses along the last axis cover (elements aligned)."""
    per = max(1, sector_bytes // element_bytes)
    v = np.where(active, values, SENTINEL)
    v.sort(axis=-1)
    distinct = v != SENTINEL
    distinct[..., 1:] &= v[..., 1:] != v[..., :-1]
    sec = np.where(distinct, v // sector_bytes, SENTINEL)
    sec.sort(axis=-1)  # the distinct addresses' sectors, a sector's entries side by side (at most ``per``)
    if sec.shape[-1] < per:
        return np.zeros(sec.shape[:-1], dtype=np.int64)
    head, tail = sec[..., :sec.shape[-1] - per + 1], sec[..., per - 1:]
    start = np.ones(head.shape, dtype=bool)
    start[..., 1:] = head[..., 1:] != sec[..., :head.shape[-1] - 1]
    return (start & (head == tail) & (head != SENTINEL)).sum(axis=-1)


def block_boxes(launch: Launch, coords: np.ndarray) -> np.ndarray:
    """The valid cells of each block (coords (k, 3)) as a box (k, 2, 3): first and last cell, clipped to the
    domain."""
    cells = np.asarray(launch.cells_per_block, dtype=np.int64)
    first = coords * cells
    last = np.minimum(first + cells, np.asarray(launch.domain, dtype=np.int64)) - 1
    return np.stack([first, last], axis=1)


def elements_fit(kernel: Kernel, *granule_bytes: int) -> bool:
    """Whether every field's element size divides every granularity, so that an element lies in one granule
    (the lanes count an element in the granule of its first byte; the rows count every granule it reaches)."""
    return all(g % f.element_bytes == 0 for f in kernel.fields for g in granule_bytes)


@dataclass(frozen=True)
class StoreSectors:
    """Σ over the wave's blocks of the sectors each block stores, per block and field once: ``full`` those a
    block writes completely by itself, ``written`` every one it writes (a sector that n blocks write counts
    n times: the writers of the partially written sectors)."""

    full: int
    written: int


def block_store_sectors(kernel: Kernel, instructions: tuple[Instruction, ...], ba: BlockAddresses | None,
                        weights: np.ndarray, sector_bytes: int, launch: Launch | None = None,
                        coords: np.ndarray | None = None, elements: BoxCounter | None = None,
                        shifted: ShiftedCounts | None = None) -> StoreSectors:
    """The sectors the wave's blocks write completely by themselves and at all (their stores, per field).

    With ``elements`` (the range counter of the kernel's elements; and the blocks' ``launch`` and ``coords``)
    and elements that divide a sector, counted from the rows of each block's cells instead of its lanes; with
    ``shifted`` (the blocks' lanes as shifted offsets, ``shifted_lanes``), from those offsets' gaps."""
    stored = [fi for fi, f in enumerate(kernel.fields) if f.stores]
    w = weights.astype(np.int64)
    if elements is not None and elements_fit(kernel, sector_bytes):
        assert launch is not None and coords is not None, "counting by rows needs the blocks' launch and coords"
        per = [sector_bytes // f.element_bytes for f in kernel.fields]
        counts = elements.box_counts(block_boxes(launch, coords), loads=False, stores=True, per=per,
                                     coarser=(sector_bytes,))
        written = counts.coarser[sector_bytes][0]
        return StoreSectors(int((counts.full[:, stored].sum(axis=1) * w).sum()),
                            int((written[:, stored].sum(axis=1) * w).sum()))
    full_total = written_total = 0
    for fi, fld in enumerate(kernel.fields):
        sel = np.array([ins.field == fi and ins.store for ins in instructions])
        if not sel.any():
            continue
        if shifted is not None:
            full = shifted.full_sectors(sel, fld.element_bytes, sector_bytes)
            written = shifted.counts(sel, fld.element_bytes, sector_bytes, sector_bytes)[0]
        else:
            assert ba is not None and ba.addresses is not None, "counting by lanes needs the lanes' addresses"
            k = ba.active.shape[0]
            addresses, active = ba.addresses[:, sel, :].reshape(k, -1), ba.active[:, sel, :].reshape(k, -1)
            full = count_full_sectors(addresses, active, fld.element_bytes, sector_bytes)
            written = count_distinct(addresses // sector_bytes, active)
        full_total += int((full * w).sum())
        written_total += int((written * w).sum())
    return StoreSectors(full_total, written_total)


def warp_view(x: np.ndarray, warp_size: int, fill) -> np.ndarray:
    """Reshape the lane axis (last) into (warps, warp_size), padding a partial last warp with ``fill``."""
    T = x.shape[-1]
    n = -(-T // warp_size)
    if n * warp_size != T:
        pad = [(0, 0)] * (x.ndim - 1) + [(0, n * warp_size - T)]
        x = np.pad(x, pad, constant_values=fill)
    return x.reshape(x.shape[:-1] + (n, warp_size))


@dataclass(frozen=True)
class WarpPatterns:
    """The distinct warp accesses of the representative blocks. Every count per warp instruction (sectors,
    lines, L1 wavefronts) is the same for two warp instructions whose lanes' addresses differ by one
    multiple of ``modulus`` bytes (a multiple of the sector, line and bank period) and which have the same
    kind (element size, load or store): those share one pattern. Most warps of a block, and the warps of
    accesses a few cells apart, are such translations of each other.

    ``offsets`` (u, warp_size): each pattern's lane addresses less a multiple of ``modulus``, -1 for an
    inactive lane; ``kinds`` (u,): the index into ``instructions`` of an instruction of that pattern;
    ``inverse`` (k, n_instr, warps): the pattern of every warp instruction."""

    offsets: np.ndarray
    kinds: np.ndarray
    inverse: np.ndarray

    def gather(self, per_pattern: np.ndarray) -> np.ndarray:
        """Per-pattern values spread onto (k, n_instr, warps)."""
        return per_pattern[self.inverse]


def _kinds(instructions: tuple[Instruction, ...]) -> np.ndarray:
    """Per instruction: the first instruction with its element size and direction."""
    first: dict[tuple[int, bool], int] = {}
    return np.array([first.setdefault((ins.element_bytes, ins.store), i) for i, ins in enumerate(instructions)],
                    dtype=np.int64)


def _lane_masks(active: np.ndarray) -> np.ndarray:
    """The active lanes of every warp (last axis) as one int64 bit mask, lane ``i`` as bit ``i``."""
    if active.all():  # every lane (most blocks' warps): one mask
        return np.full(active.shape[:-1], (1 << active.shape[-1]) - 1, dtype=np.int64)
    packed = np.packbits(active, axis=-1, bitorder="little")  # (..., ceil(lanes / 8)) bytes, lane 0 lowest
    width = packed.shape[-1]
    padded = np.zeros(packed.shape[:-1] + (8,), dtype=np.uint8)
    padded[..., :width] = packed
    return padded.view("<i8")[..., 0]


def affine_warp_patterns(launch: Launch, instructions: tuple[Instruction, ...], coords: np.ndarray,
                         active: np.ndarray, warp_size: int, modulus: int) -> WarpPatterns | None:
    """:func:`warp_patterns` without listing the lanes' addresses, for affine instructions (None otherwise).

    A lane's address is ``(c . t) eb + S``: ``t`` the thread inside the block, ``S`` the instruction's
    address of the block's first thread. Less a multiple of ``modulus``, a warp instruction's lanes are
    therefore fixed by the layout of its lanes relative to its first (the slope ``c`` and size ``eb``, and
    the threads the warp holds: the same for most warps), its first lane's address mod ``modulus``, its
    kind and which lanes are active; those keys are grouped first, and one row is built per key."""
    forms = [ins.affine for ins in instructions if ins.affine is not None]
    if len(forms) < len(instructions) or warp_size > 62 or launch.linear:  # linear1d: lanes wrap rows
        return None
    k, n, T = active.shape
    slope_of: dict[tuple, int] = {}
    slope = np.array([slope_of.setdefault((form[0], ins.element_bytes), len(slope_of))
                      for form, ins in zip(forms, instructions, strict=True)], dtype=np.int64)
    local = local_threads(launch)
    rel = np.array([[c * eb for c in cs] for cs, eb in slope_of], dtype=np.int64) @ local  # (slopes, T)
    rel = warp_view(rel, warp_size, 0)  # (slopes, warps, warp_size)
    c = np.array([form[0] for form in forms], dtype=np.int64)  # (n, 3)
    const = np.array([(ins.offset + form[1]) * ins.element_bytes
                      for form, ins in zip(forms, instructions, strict=True)], dtype=np.int64)
    eb = np.array([ins.element_bytes for ins in instructions], dtype=np.int64)
    first = coords * np.asarray(launch.block, dtype=np.int64)  # (k, 3): each block's first thread
    phase = ((first @ c.T) * eb[None, :] + const[None, :]) % modulus  # (k, n)
    act = warp_view(active, warp_size, False)  # (k, n, warps, warp_size)
    mask = _lane_masks(act)  # (k, n, warps)
    # a warp's lanes relative to its first lane: one layout for most warps of a block
    shape = (rel - rel[:, :, :1]).reshape(-1, warp_size)
    first_row, layout = unique_rows(shape)
    layouts, layout = shape[first_row], layout.reshape(rel.shape[:2])  # layout: (slopes, warps)
    phase = (phase[:, :, None] + rel[slope, :, 0][None, :, :]) % modulus  # (k, n, warps): the first lane's
    kinds = _kinds(instructions)
    if math.prod([len(layouts), n, modulus]) >= 1 << (62 - warp_size):
        return None
    code = (layout[slope][None, :, :] * n + kinds[None, :, None]) * modulus + phase  # (k, n, warps)
    codes = len(layouts) * n * modulus
    if codes <= 4 * code.size + 4096 and (mask == mask.flat[0]).all():  # one set of lanes: the codes are the keys
        inverse = _dense_ranks(code.ravel(), codes)
    else:
        _, inverse = np.unique(((code << warp_size) | mask).ravel(), return_inverse=True)  # sorted keys
    some_index = np.empty(inverse.max() + 1, dtype=np.intp)  # a warp instruction of each key: one key, one row
    some_index[inverse] = np.arange(inverse.size)
    j, i, w = np.unravel_index(some_index, code.shape)
    lanes = layouts[layout[slope[i], w]] + phase[j, i, w][:, None]  # (u, warp_size), less a multiple of modulus
    on = act[j, i, w]
    base = np.where(on, lanes, SENTINEL).min(axis=1, keepdims=True)
    base = np.where(base == SENTINEL, 0, base // modulus * modulus)
    return WarpPatterns(np.where(on, lanes - base, -1), kinds[i], inverse.reshape(code.shape))


def _dense_ranks(values: np.ndarray, bound: int) -> np.ndarray:
    """Each value's rank among the distinct ``values`` (non-negative, below ``bound``), as ``np.unique``'s
    ``inverse``: by marking the values present, without a sort."""
    present = np.zeros(bound, dtype=bool)
    present[values] = True
    return (np.cumsum(present) - 1)[values]


def warp_patterns(ba: BlockAddresses, instructions: tuple[Instruction, ...], warp_size: int,
                  modulus: int) -> WarpPatterns:
    """Group the warp instructions of the representative blocks into :class:`WarpPatterns`."""
    assert ba.addresses is not None, "warp patterns need the lanes' addresses"
    addr = warp_view(ba.addresses, warp_size, 0)  # (k, n, warps, warp_size)
    act = warp_view(ba.active, warp_size, False)
    k, n, warps, _ = addr.shape
    base = np.where(act, addr, SENTINEL).min(axis=-1, keepdims=True)
    base = np.where(base == SENTINEL, 0, base // modulus * modulus)
    offsets = np.where(act, addr - base, -1)
    kind = _kinds(instructions)
    rows = np.concatenate((offsets, np.broadcast_to(kind[None, :, None, None], (k, n, warps, 1))), axis=-1)
    rows = rows.reshape(-1, warp_size + 1)
    first, inverse = unique_rows(rows)
    uniq = rows[first]
    return WarpPatterns(uniq[:, :warp_size], uniq[:, warp_size], inverse.reshape(k, n, warps))


@dataclass(frozen=True)
class BlockCounts:
    """Weighted sums over the wave's blocks of the explicit (per block / per warp) counts."""

    valid_lups: int
    warp_load_sectors: int  # Σ warps, load instructions: distinct sectors (what L1 requests from L2)
    warp_store_sectors: int  # Σ warps, store instructions: distinct sectors (write-through to L2)
    block_load_sectors: tuple[int, ...]  # per field: Σ blocks of the block's distinct load sectors
    block_load_lines: tuple[int, ...]  # per field: Σ blocks of distinct allocated lines (loads)
    wave_blocks: int
    block_load_bytes: tuple[int, ...] = ()  # per field: Σ blocks of the distinct bytes the block loads
    block_load_runs: tuple[int, ...] = ()  # per field: Σ blocks of the contiguous runs of those bytes
    warp_load_lines: int = 0  # Σ warps, load instructions: distinct lines (the L2 requests of those sectors)
    warp_store_lines: int = 0  # Σ warps, store instructions: distinct lines

    @property
    def load_run_bytes(self) -> float:
        """Mean length of the runs the blocks load, in bytes loaded (0 without loads): elements whose sectors
        follow without an untouched sector in between form one run (:func:`count_runs`)."""
        runs = sum(self.block_load_runs)
        return sum(self.block_load_bytes) / runs if runs else 0.0


def block_counts(kernel: Kernel, launch: Launch, instructions: tuple[Instruction, ...], ba: BlockAddresses,
                 weights: np.ndarray, sector_bytes: int, line_bytes: int, warp_size: int,
                 coords: np.ndarray | None = None, elements: BoxCounter | None = None,
                 patterns: WarpPatterns | None = None, shifted: ShiftedCounts | None = None) -> BlockCounts:
    """Sector and line counts of the representative blocks, weighted by their class sizes. With ``elements``
    (the range counter of the kernel's elements; and the blocks' ``coords``) and elements that divide a
    sector and a line, each block's per-field footprint is counted from its rows instead of its lanes (the
    same numbers, without sorting every lane's address); otherwise with ``shifted`` (the blocks' lanes as
    shifted offsets, ``shifted_lanes``), from those offsets' gaps; with ``patterns`` (modulus a multiple of
    the line), each distinct warp pattern is counted once."""
    w = weights.astype(np.int64)
    loads = np.array([not ins.store for ins in instructions])
    active = warp_view(ba.active, warp_size, False) if patterns is None else None

    def per_warp_sums(granule_bytes: int) -> tuple[int, int]:
        """Σ over warps and load (store) instructions of the distinct granules each warp instruction touches."""
        if patterns is not None:
            per_pattern = count_distinct(patterns.offsets // granule_bytes, patterns.offsets >= 0)
            per_instr = patterns.gather(per_pattern).sum(axis=-1)  # (k, n_instr)
        else:
            assert ba.addresses is not None and active is not None
            per_instr = count_distinct(warp_view(ba.addresses // granule_bytes, warp_size, 0), active).sum(axis=-1)
        return int((per_instr[:, loads].sum(axis=1) * w).sum()), int((per_instr[:, ~loads].sum(axis=1) * w).sum())

    warp_load, warp_store = per_warp_sums(sector_bytes)
    warp_load_lines, warp_store_lines = per_warp_sums(line_bytes)
    nf = len(kernel.fields)
    blk_sec, blk_lines, blk_bytes, blk_runs = [0] * nf, [0] * nf, [0] * nf, [0] * nf
    k = ba.active.shape[0]
    by_rows = elements is not None and elements_fit(kernel, sector_bytes, line_bytes)
    if by_rows:
        assert elements is not None and coords is not None
        c = elements.box_counts(block_boxes(launch, coords), coarser=(sector_bytes, line_bytes))
        eb = np.array([f.element_bytes for f in kernel.fields], dtype=np.int64)

        def wave_sum(per_box: np.ndarray) -> list[int]:
            return [int(v) for v in (per_box * w[:, None]).sum(axis=0)]

        (sectors, runs), (lines, _) = c.coarser[sector_bytes], c.coarser[line_bytes]
        blk_sec, blk_runs, blk_lines = wave_sum(sectors), wave_sum(runs), wave_sum(lines)
        blk_bytes = [n * int(b) for n, b in zip(wave_sum(c.granules), eb, strict=True)]
    for fi in range(0 if by_rows else nf):
        sel = np.array([ins.field == fi and not ins.store for ins in instructions])
        if not sel.any():
            continue
        field_bytes = kernel.fields[fi].element_bytes
        if shifted is not None:
            per_block = shifted.counts(sel, field_bytes, sector_bytes, line_bytes)
        else:
            assert ba.addresses is not None, "counting by lanes needs the lanes' addresses"
            per_block = lane_counts(ba.addresses[:, sel, :].reshape(k, -1), ba.active[:, sel, :].reshape(k, -1),
                                    field_bytes, sector_bytes, line_bytes)
        blk_sec[fi], blk_lines[fi], n_bytes, blk_runs[fi] = (int((n * w).sum()) for n in per_block)
        blk_bytes[fi] = n_bytes * field_bytes
    return BlockCounts(int((ba.valid_cells * w).sum()), warp_load, warp_store, tuple(blk_sec), tuple(blk_lines),
                       int(w.sum()), tuple(blk_bytes), tuple(blk_runs), warp_load_lines, warp_store_lines)

