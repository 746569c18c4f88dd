"""L1 load/store unit cycles (wavefronts) of warps, from explicit lane addresses.

Per memory instruction and warp, the LSU serves groups of ``bytes_per_cycle // element_bytes`` lanes
(16 lanes of 8 B, 32 lanes of 4 B; ``bytes_per_cycle`` may be lower for 8 B accesses, see
:meth:`~warpspeed.device.Device.lsu_bytes_per_cycle`). Two rules, chosen by the device data:

- **Pairing rule** (Ernst et al., measured on the A100; the default). Inside a group the distinct 8 B
  words are sorted and split into runs: a run starts at the first word ``l1_pairing_distance`` bytes or
  more past the current run's first word (addresses that far apart never share a wavefront). A run costs
  the largest number of its words that fall into one bank (``word mod banks``); a group costs the sum
  over its runs.
- **Line rule** (devices that give ``l1_load_lines_per_wavefront``: Hopper, fitted to ncu counts of an
  H100 and an H200). A group costs the largest number of its distinct words in one bank, with no
  distance limit; summed over the warp's groups that is the bank cost B. The warp's distinct 128 B
  lines L beyond B cost ``1 / lines_per_wavefront`` each (loads and stores have their own value): a
  wavefront fetches one line per bank slot, and further lines share wavefronts up to that many. Each
  warp also costs ``l1_wavefronts_per_warp`` once, whatever it accesses.

Inactive lanes cost nothing.
"""

from __future__ import annotations

import numpy as np

from ..device import Device
from .footprint import SENTINEL, Instruction, WarpPatterns, count_distinct, warp_view


def group_cycles(words: np.ndarray, active: np.ndarray, banks: int, run_words: int) -> np.ndarray:
    """Cycles of each lane group (rows of ``words``: bank words of the group's lanes)."""
    v = np.where(active, words, SENTINEL)
    v.sort(axis=1)
    R, G = v.shape
    valid = v != SENTINEL
    distinct = valid.copy()
    distinct[:, 1:] &= v[:, 1:] != v[:, :-1]
    # greedy run split along the sorted words of each row (none where no row spans run_words: the line rule)
    run = np.zeros((R, G), dtype=np.int64)
    if valid.any() and (np.where(valid, v, v[:, :1]) - v[:, :1]).max() >= run_words:
        start = v[:, 0].copy()
        current = np.zeros(R, dtype=np.int64)
        for j in range(1, G):
            new = valid[:, j] & (v[:, j] - start >= run_words)
            current = current + new
            start = np.where(new, v[:, j], start)
            run[:, j] = current
    # count distinct words per (row, run, bank); the max over banks per (row, run) is that run's cost
    rows = np.broadcast_to(np.arange(R, dtype=np.int64)[:, None], (R, G))
    bank = np.where(valid, v % banks, 0)
    key = (rows * G + run) * banks + bank
    key = np.sort(key[distinct])
    if key.size == 0:
        return np.zeros(R, dtype=np.int64)
    bounds = np.flatnonzero(np.diff(key)) + 1
    starts = np.concatenate(([0], bounds))
    counts = np.diff(np.concatenate((starts, [key.size])))
    group = key[starts] // banks  # (row, run) id of each (row, run, bank) count
    gstarts = np.concatenate(([0], np.flatnonzero(np.diff(group)) + 1))
    run_cost = np.maximum.reduceat(counts, gstarts)
    out = np.zeros(R, dtype=np.int64)
    np.add.at(out, group[gstarts] // G, run_cost)
    return out


NO_SPLIT = np.iinfo(np.int64).max // 4  # a run length no word distance reaches: one run per group


def line_rule(device: Device) -> bool:
    """Whether the device's L1 follows the line rule (module docstring) instead of the pairing rule."""
    return device.l1_load_lines_per_wavefront is not None


def wavefronts(patterns: WarpPatterns, instructions: tuple[Instruction, ...], device: Device) -> np.ndarray:
    """L1 cycles per (block, instruction) summed over the block's warps, (k, n_instr): each distinct warp
    pattern is costed once (``patterns``' modulus a multiple of the bank period and the line).

    The per-warp constant of the line rule is not included (:func:`warp_cycles`)."""
    lines_rule = line_rule(device)
    offsets, active = patterns.offsets, patterns.offsets >= 0
    words = offsets // device.l1_bank_bytes
    run_words = NO_SPLIT if lines_rule else device.l1_pairing_distance_bytes // device.l1_bank_bytes
    cost = np.zeros(offsets.shape[0], dtype=np.float64 if lines_rule else np.int64)
    eb = [instructions[i].element_bytes for i in patterns.kinds.tolist()]
    lanes_of = np.array([max(1, min(device.warp_size, device.lsu_bytes_per_cycle(b) // b)) for b in eb], dtype=np.int64)
    for lanes in np.unique(lanes_of).tolist():
        sel = lanes_of == lanes
        w, a = words[sel], active[sel]
        groups = -(-device.warp_size // lanes)
        pad = groups * lanes - device.warp_size
        if pad:
            w = np.pad(w, [(0, 0), (0, pad)])
            a = np.pad(a, [(0, 0), (0, pad)], constant_values=False)
        bank = group_cycles(w.reshape(-1, lanes), a.reshape(-1, lanes), device.l1_banks,
                            run_words).reshape(-1, groups).sum(axis=1)
        cost[sel] = bank
    if lines_rule:
        assert device.l1_load_lines_per_wavefront is not None and device.l1_store_lines_per_wavefront is not None
        lines = count_distinct(offsets // device.l1_line_bytes, active)
        store = np.array([instructions[i].store for i in patterns.kinds.tolist()], dtype=bool)
        per_line = np.where(store, 1.0 / device.l1_store_lines_per_wavefront, 1.0 / device.l1_load_lines_per_wavefront)
        cost = cost + np.maximum(lines - cost, 0) * per_line
    return patterns.gather(cost).sum(axis=2)


def busy_warps(active: np.ndarray, warp_size: int) -> np.ndarray:
    """Warps with an active lane in each block (k,); ``active`` is (k, n_instr, T)."""
    return warp_view(np.any(active, axis=1), warp_size, False).any(axis=-1).sum(axis=1)


def warp_cycles(busy: np.ndarray, device: Device) -> np.ndarray:
    """The line rule's fixed cost per block: ``l1_wavefronts_per_warp`` x the block's warps with an active
    lane (``busy``, (k,)); 0 for the pairing rule."""
    per_warp = (device.l1_wavefronts_per_warp or 0) if line_rule(device) else 0
    if not per_warp:
        return np.zeros(busy.shape[0])
    return per_warp * busy.astype(np.float64)


def cycles_per_warp_lup(busy: np.ndarray, patterns: WarpPatterns, instructions: tuple[Instruction, ...],
                        weights: np.ndarray, device: Device, valid_lups: int) -> float:
    """L1 cycles per warp-lup of the wave (per ``device.warp_size`` lups: 32 on NVIDIA, 64 on CDNA): every
    representative block's wavefronts (plus the line rule's fixed cost per warp, ``busy``: warps with an active
    lane per block), weighted by its class size, over the wave's ``valid_lups``. The L1 limit multiplies by the
    same lanes per warp (:data:`warpspeed.model.levels.LEVELS`), so the limit does not depend on the unit."""
    per_block = wavefronts(patterns, instructions, device).sum(axis=1) + warp_cycles(busy, device)
    cycles = (per_block * weights).sum()
    cycles = int(cycles) if float(cycles).is_integer() else float(cycles)
    return cycles * device.warp_size / valid_lups
