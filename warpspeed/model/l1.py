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
  warp also costs ``l1_wavefronts_per_warp`` once, whatever it accesses. Where the device also gives
  ``l1_wavefronts_per_missed_line`` (Hopper), a further load line that misses the L1 costs that many
  wavefronts instead of ``1 / l1_load_lines_per_wavefront``: which lines miss is not known line by line,
  so the share of the further lines that miss is the wave's miss share of its load sectors (the L2 load
  over the L1 load, from the L1 capacity stage), and the rule follows any change of those misses.

Inactive lanes cost nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

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


def _costs(patterns: WarpPatterns, instructions: tuple[Instruction, ...], device: Device,
           known: dict | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per (block, instruction), summed over the block's warps: the bank cost (the whole cost under the
    pairing rule), and for the line rule the further store and load lines (lines beyond the bank slots).
    ``known``: each pattern's costs by its offsets and element size, kept across calls on the same L1 numbers
    (:data:`KNOWN_PATTERNS` at most): only the patterns it lacks are counted."""
    kinds = patterns.kinds.tolist()
    eb = [instructions[i].element_bytes for i in kinds]
    if known is None:
        cost, beyond = _pattern_costs(patterns.offsets, eb, device)
    else:
        keys = [(row.tobytes(), b) for row, b in zip(patterns.offsets, eb, strict=True)]
        missing = [u for u, key in enumerate(keys) if key not in known]
        if missing:
            if len(known) + len(missing) > KNOWN_PATTERNS:
                known.clear()
            counted = _pattern_costs(patterns.offsets[missing], [eb[u] for u in missing], device)
            for u, c, b in zip(missing, *(x.tolist() for x in counted), strict=True):
                known[keys[u]] = (c, b)
        cost = np.array([known[key][0] for key in keys], dtype=np.int64)
        beyond = np.array([known[key][1] for key in keys], dtype=np.int64)
    store = np.zeros(len(kinds), dtype=bool)
    if line_rule(device):
        store = np.array([instructions[i].store for i in kinds], dtype=bool)
    per = (patterns.gather(x).sum(axis=2) for x in (cost, np.where(store, beyond, 0), np.where(store, 0, beyond)))
    return tuple(per)


KNOWN_PATTERNS = 1 << 16
"""Warp patterns whose L1 costs a kernel's analysis keeps per set of L1 numbers (a ranking's configurations share
most of their patterns: the same warp layouts at the same phases)."""


def _pattern_costs(offsets: np.ndarray, eb: list[int], device: Device) -> tuple[np.ndarray, np.ndarray]:
    """Per pattern (``offsets`` (u, warp_size), its lanes' element sizes ``eb``): the bank cost, and for the line
    rule the lines beyond the bank slots (else 0)."""
    lines_rule = line_rule(device)
    active = offsets >= 0
    words = offsets // device.l1_bank_bytes
    run_words = NO_SPLIT if lines_rule else device.l1_pairing_distance_bytes // device.l1_bank_bytes
    cost = np.zeros(offsets.shape[0], dtype=np.int64)
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
    beyond = np.zeros(offsets.shape[0], dtype=np.int64)
    if lines_rule:
        beyond = np.maximum(count_distinct(offsets // device.l1_line_bytes, active) - cost, 0)
    return cost, beyond


def busy_warps(active: np.ndarray, warp_size: int) -> np.ndarray:
    """Warps with an active lane in each block (k,); ``active`` is (k, n_instr, T)."""
    return warp_view(np.any(active, axis=1), warp_size, False).any(axis=-1).sum(axis=1)


@dataclass(frozen=True)
class LineCosts:
    """What the L1 cycles of a wave are made of, per warp-lup (per ``device.warp_size`` lups: 32 on NVIDIA,
    64 on CDNA): the bank cost (the whole cost under the pairing rule), and for the line rule the busy warps
    and the further store and load lines (lines beyond the bank slots), not yet priced. The same on every
    device with the same L1 numbers; :meth:`cycles` prices them."""

    bank: float
    warps: float
    store_lines: float
    load_lines: float

    def cycles(self, device: Device, miss_share: float) -> float:
        """L1 cycles per warp-lup: the bank cost, ``l1_wavefronts_per_warp`` per busy warp, a further store line
        ``1 / l1_store_lines_per_wavefront``, a further load line ``1 / l1_load_lines_per_wavefront``, or where
        the device gives ``l1_wavefronts_per_missed_line`` that much for the ``miss_share`` (clipped to 0-1)
        of those lines that miss the L1."""
        if not line_rule(device):
            return self.bank
        assert device.l1_load_lines_per_wavefront is not None and device.l1_store_lines_per_wavefront is not None
        per_line = 1.0 / device.l1_load_lines_per_wavefront
        if device.l1_wavefronts_per_missed_line is not None:
            f = min(max(miss_share, 0.0), 1.0)
            per_line = (1.0 - f) * per_line + f * device.l1_wavefronts_per_missed_line
        return (self.bank + (device.l1_wavefronts_per_warp or 0) * self.warps
                + self.store_lines / device.l1_store_lines_per_wavefront + self.load_lines * per_line)


def line_costs(busy: np.ndarray, patterns: WarpPatterns, instructions: tuple[Instruction, ...],
               weights: np.ndarray, device: Device, valid_lups: int, known: dict | None = None) -> LineCosts:
    """The wave's :class:`LineCosts`: every representative block's (``busy``: its warps with an active lane),
    weighted by its class size, per ``device.warp_size`` of the wave's ``valid_lups``. The L1 limit multiplies
    by the same lanes per warp (:data:`warpspeed.model.levels.LEVELS`), so the limit does not depend on the unit."""
    parts = [(per.sum(axis=1) * weights).sum() for per in _costs(patterns, instructions, device, known)]
    warps = (busy * weights).sum() if line_rule(device) else 0
    lanes = device.warp_size
    bank, store_lines, load_lines = (float(x) * lanes / valid_lups for x in parts)
    return LineCosts(bank, float(warps) * lanes / valid_lups, store_lines, load_lines)
