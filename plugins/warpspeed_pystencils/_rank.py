"""Block sizes ranked for a described kernel: ``rank_block_sizes`` (``describe`` + ``warpspeed.rank``), the
thread counts a kernel can launch, the ranking's cache file, and the counts made ahead while nvcc counts the
registers."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from . import _cache
from ._arguments import registers_argument, thread_counts
from ._describe import DESCRIBE_KEYS, arch_for, describe_kernel

#: Thread counts create_kernel ranks when none are given.
CREATE_KERNEL_THREADS = (256, 512, 1024)


def rank_block_sizes(kernel_or_assignments: Any, shape: Sequence[int], *, device: Any,
                     threads: Iterable[int] = CREATE_KERNEL_THREADS, folding: Iterable[Sequence[int]] = ((1, 1, 1),),
                     layout: str | None = None, registers: int | None = None, **opts: Any) -> Any:
    """``describe`` + ``warpspeed.rank``: a ``warpspeed.Ranking`` of block shapes (and foldings), best first;
    by default the blocks of 256, 512 and 1024 threads, as ``create_kernel`` ranks them.

    ``shape`` and ``layout`` as in ``describe`` (``layout=None``: each field in its declared layout).
    ``threads``: thread counts per block (one int: that count alone).
    ``opts``: ``name``, ``index_layout``, ``arch`` (default: the device's compute capability) and ``config``
    go to ``describe``; everything else (``blocks``, ``jobs`` (default 1), ``executor``, ``cache``, ...) to
    ``warpspeed.rank``. A ``warpspeed.Kernel`` is ranked as it is (``shape`` is then ignored). A pystencils
    kernel generated with launch bounds (``gpu.generate_launch_bounds``) gets no thread count above them.
    """
    import warpspeed

    dkw = {k: opts.pop(k) for k in DESCRIBE_KEYS if k in opts}
    fallback = opts.pop("fallback_registers", None)
    threads = thread_counts(threads)
    if isinstance(kernel_or_assignments, warpspeed.Kernel):
        kernel = kernel_or_assignments.with_registers(registers_argument(registers))
    else:
        from pystencils.codegen import GpuKernel

        if isinstance(kernel_or_assignments, GpuKernel):  # generated with launch bounds: no block above them
            threads = within_launch_bounds(tuple(threads), kernel_or_assignments.get_c_code())
        from ._hip import is_hip

        hip = is_hip(kernel_or_assignments) or (dkw.get("config") is not None and is_hip(dkw["config"]))
        dkw.setdefault("arch", arch_for(device, hip=hip))  # a HIP kernel: an AMD device, its gfx target
        kernel = describe_kernel(kernel_or_assignments, shape, layout=layout, registers=registers,
                                 fallback_registers=fallback, **dkw)
    opts.setdefault("jobs", 1)
    return warpspeed.rank(kernel, device, threads=threads, folding=folding, **opts)


def ranking_cache(kernel: Any, device: Any) -> Any:
    """The default ranking cache file of ``create_kernel`` (None where the cache folder is not writable): one
    per kernel (its description less prose), domain, device and warpspeed's code and data."""
    import os

    import warpspeed
    from warpspeed.plugin_api import kernel_content

    dev = device if isinstance(device, warpspeed.Device) else warpspeed.device(device)
    key = _cache.content_key(kernel_content(kernel), kernel.domain, dev.to_dict(), _cache.model_version())
    path = _cache.path_for("rankings", key, ".jsonl")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return None
    return path if os.access(path.parent, os.W_OK) else None


SPACE_OPTIONS = ("threads", "folding", "domain", "blocks", "domains", "configs", "model", "screen")


def rank_ahead(device: Any, rank_options: dict, kernel: Any, running: Callable[[], bool]) -> None:
    """While nvcc counts the registers: the screened ranking's counts for ``kernel`` (registers guessed), which
    the ranking with the real registers reuses where the guess gives the same blocks per SM."""
    from warpspeed.plugin_api import precount

    if rank_options.get("screen") is None:  # a full ranking may run in worker processes: nothing to share
        return
    try:
        precount(kernel, device, until=lambda: not running(),
                 **{k: rank_options[k] for k in SPACE_OPTIONS if k in rank_options})
    except Exception:  # noqa: BLE001 - only time is at stake: the ranking itself reports what is wrong
        return


_LAUNCH_BOUNDS = re.compile(r"__launch_bounds__\s*\(\s*(\d+)")


def within_launch_bounds(threads: tuple[int, ...], code: str) -> tuple[int, ...]:
    """The thread counts a kernel can launch with: those up to its ``__launch_bounds__`` (pystencils writes it
    from the config's default block where ``gpu.generate_launch_bounds`` is set; CUDA refuses a launch of
    more threads), else the largest power of two below the bound."""
    found = _LAUNCH_BOUNDS.search(code)
    if found is None:
        return threads
    bound = int(found.group(1))
    return tuple(t for t in threads if t <= bound) or (1 << (bound.bit_length() - 1),)
