"""What an estimate tells its user in words (``Estimate.notes``): assumed registers, idle threads, a domain
larger than the GPU's memory, a grid that does not fill the GPU, a launch too short for the model. The words
are neutral: the front ends add how their users change an input (warpspeed.render.advice), and a report's
headline finds a note by how it begins (:data:`DOES_NOT_FIT`, :data:`REGISTERS_UNKNOWN`)."""

from __future__ import annotations

import math

from ..device import Device
from ..kernel import Kernel
from .launch import Launch
from .results import sweep_time_s

SHORT_KERNEL_S = 50e-6
"""Launches whose work takes less than this at the roofline are dominated by their launch: the host's call
and the first wave's start, which the model leaves out (the measured 1M-cell copy: about 10 us against 6 us
of work)."""


REGISTERS_UNKNOWN = "registers per thread unknown"
"""How the note of a launch whose registers per thread were assumed begins. The model's words are neutral: the
front ends add how their users give the registers (warpspeed.render.advice)."""

DOES_NOT_FIT = "this domain does not fit on one GPU"
"""How the note of a domain larger than the GPU's memory begins (the first note; a report's headline says it)."""


def percent(share: float) -> str:
    """A share as a percentage of at most three digits, never rounded up to 100 % or down to 0 %."""
    p = 100 * share
    if p >= 99.95:
        return "over 99.9 %"
    if 0 < p < 0.1:
        return "under 0.1 %"
    return f"{p:.3g} %"


def launch_notes(k: Kernel, dev: Device, launch: Launch, roofline_GLup_s: float) -> list[str]:
    """What the user should know about this launch: assumed inputs, idle threads, memory, a partial wave, a
    launch too short for the model (``roofline_GLup_s``: the lowest roofline limit)."""
    notes = []
    if launch.occupancy.registers_source == "default":
        notes.append(f"{REGISTERS_UNKNOWN}: assumed {launch.occupancy.registers}")
    blocks, full_wave = math.prod(launch.grid), launch.occupancy.blocks_per_sm * dev.sm_count
    small = [f"{v} {n} < {c}" for v, n, c in zip("xyz", k.domain, launch.cells_per_block, strict=True) if n < c]
    if launch.linear:  # the threads take the cells in turn: only the last block can have idle threads
        small = [f"{k.valid_lups} cells < {launch.threads_per_block} threads"] if blocks == 1 and small else []
    if small:
        idle = 1 - k.valid_lups / (blocks * math.prod(launch.cells_per_block))
        notes.append(f"the domain is smaller than one block's cells ({', '.join(small)}): {percent(idle)} of the "
                     "launched threads have no cell; choose a smaller block in that direction")
    if dev.dram_size_bytes is not None and k.footprint_bytes > dev.dram_size_bytes:
        notes.insert(0, f"{DOES_NOT_FIT}: the arrays need {k.footprint_bytes / 1e9:.4g} GB, more than the "
                        f"{dev.dram_size_bytes / 1e9:.4g} GB of {dev.id}'s memory (dram_size); the estimate is for a "
                        "GPU that could hold them")
    if blocks < full_wave:
        notes.append(f"the grid has {blocks} blocks, fewer than the {full_wave} that fill {dev.id} at once: the "
                     "GPU is not filled, and launch time and the wave's start-up, which the model leaves out, "
                     "weigh more")
    work_s = sweep_time_s(k.valid_lups, roofline_GLup_s)
    if work_s < SHORT_KERNEL_S:
        notes.append(f"this launch has {work_s * 1e6:.3g} us of work at the roofline: launches shorter than "
                     f"{SHORT_KERNEL_S * 1e6:.0f} us are dominated by the launch itself (the host's call, the first "
                     "wave's start), which the model leaves out; a single timed launch measures slower")
    return notes


__all__ = ["DOES_NOT_FIT", "REGISTERS_UNKNOWN", "SHORT_KERNEL_S", "launch_notes", "percent"]
