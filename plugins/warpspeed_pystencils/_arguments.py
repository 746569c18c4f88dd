"""Checks of the arguments that ``describe``, ``rank_block_sizes``, ``create_kernel`` and the launch-time JIT
share: the registers per thread and the thread counts."""

from __future__ import annotations

import numbers
from typing import Any

from ._errors import input_error

#: The most registers per thread a kernel can have: 255 on NVIDIA GPUs; on AMD's CDNA2/CDNA3 512 per lane
#: (256 VGPRs and 256 accumulation VGPRs, one file), the limit for a HIP kernel.
MAX_REGISTERS, MAX_HIP_REGISTERS = 255, 512


def register_limit(hip: bool) -> int:
    """The most registers per thread of a kernel for that target (HIP: AMD's, else NVIDIA's)."""
    return MAX_HIP_REGISTERS if hip else MAX_REGISTERS


def registers_argument(registers: Any, limit: int = MAX_REGISTERS) -> int | None:
    """``registers=`` checked: None (counted or assumed) or 1 to ``limit`` per thread."""
    if registers is None:
        return None
    if isinstance(registers, bool) or not isinstance(registers, int) or not 1 <= registers <= limit:
        raise input_error(f"registers must be an integer from 1 to {limit} (per thread), got {registers!r}.")
    return registers


def thread_counts(threads: Any) -> Any:
    """``threads=`` as ``warpspeed.rank`` takes it: one int is that thread count alone (``threads=256``), anything
    else is passed on as given (``warpspeed.rank`` checks it)."""
    if isinstance(threads, numbers.Integral) and not isinstance(threads, bool):
        return (int(threads),)
    return threads
