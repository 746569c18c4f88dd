"""``create_kernel``: pystencils' kernel with warpspeed's thread block, chosen now for arrays of a shape (the
choice cached across runs), or at each launch by a ``LaunchTimeJit`` for the arrays passed."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from functools import partial
from typing import Any

from ._arguments import thread_counts
from ._choice_cache import cached_choice, choice_key, choice_parts, inputs_key, keep_inputs, known_choice, store_choice
from ._describe import DESCRIBE_KEYS, arch_for, describe_kernel
from ._errors import input_error
from ._generate import as_kernel, check_gpu_target, created, refuse_reductions, with_block
from ._layouts import check_layout_matches
from ._rank import CREATE_KERNEL_THREADS, rank_ahead, rank_block_sizes, ranking_cache
from ._summary import pystencils_default_block, ranking_summary


def create_kernel(assignments: Any, config: Any = None, *, shape: Sequence[int] | None = None,
                  device: Any = "auto", layout: str | None = None, registers: int | None = None,
                  **rank_options: Any) -> Any:
    """``pystencils.create_kernel`` with the thread-block size chosen by warpspeed.

    Without ``shape`` the block is chosen when the kernel runs: ``create_kernel(assignments, config)``
    returns pystencils' kernel with a :class:`LaunchTimeJit` as its JIT; ``kernel.compile()`` gives a
    callable that, at the first call with arrays of a new shape or layout, ranks the block shapes for those
    arrays on the GPU they are on (``device="auto"``: the shipped device matching the name cupy reports; or
    a device id, path or ``Device``), remembers the choice (in memory and on disk) and leaves everything
    else of the launch to pystencils. Where the model cannot tell the best blocks apart (the ranking's
    ``confidence``), the next calls time them, one call each, and keep the fastest. Options then:
    ``threads``, ``model``, ``registers`` (default: those of the compiled kernel), ``cache=None`` (nothing on
    disk) and ``measure=False`` (launch the best-predicted block, time nothing).

    With ``shape`` (allocated extent, the fastest in memory first, as in ``describe``) the block is chosen now:
    the block shapes (``threads``: a thread count or several, default ``CREATE_KERNEL_THREADS``) are ranked for
    ``device`` and arrays of ``shape`` in the fields' declared layouts (``layout=``/``index_layout=``
    override them, as in ``describe``), and
    the kernel is created from a copy of ``config`` with ``config.gpu.default_block_size`` = the best block.
    ``config=None`` means ``Target.CUDA`` with ``jit=ps.no_jit`` (no cupy needed), ``Target.HIP`` for an AMD
    device; a given config keeps its target. A HIP kernel is estimated on an AMD device only (64-lane
    wavefronts; ``device="auto"`` takes the GPU cupy on ROCm reports, a named NVIDIA device is refused naming
    the AMD ones), its registers counted by ROCm's hipcc. The winning estimate (the JSON of ``warpspeed
    estimate``) is ``kernel.metadata["warpspeed"]``, with a ``"ranking"`` summary (best block, folding,
    performance, limiter, the ranking's ``confidence``, the estimate for pystencils' default block).

    The ranking is screened (``screen=1``: configurations whose upper bound is below the best found are not
    estimated in full; ``screen=None`` ranks all) and cached across runs (``$WARPSPEED_CACHE_DIR``, default
    ``~/.cache/warpspeed``, keyed on the kernel's description, the domain, the device and warpspeed's code and
    device data), and so is the choice (keyed on the generated code, and found from the inputs):
    creating the same kernel again costs one code generation by pystencils. ``cache=None`` turns this off,
    ``cache=PATH`` chooses the ranking's file.
    On a terminal a progress bar shows the ranking.

    pystencils has no thread folding: only folding (1,1,1) is ranked unless ``folding=`` is given, and then a
    chosen folding is only reported (``"folding_applied": false``), not applied to the kernel.
    """
    import pystencils as ps
    from pystencils.codegen import Kernel

    from . import _hip, _registers

    if isinstance(assignments, Kernel):
        raise input_error("create_kernel needs the assignments (the kernel is created with the chosen block "
                          "size); use rank_block_sizes or describe for an existing kernel.")
    if config is not None and not isinstance(config, ps.CreateKernelConfig):
        raise input_error(f"config must be a pystencils CreateKernelConfig or None, got {type(config).__name__}.")
    if shape is None:
        return launch_time_kernel(assignments, config, device, layout, registers, rank_options)
    if isinstance(shape, Iterator):  # read once: the key and the description both need it
        shape = tuple(shape)
    if isinstance(device, str) and device == "auto":
        device = _hip.detected(_hip.is_hip(config))
    base = config.copy() if config is not None else ps.CreateKernelConfig(target=_hip.default_target(device),
                                                                          jit=ps.no_jit)
    check_gpu_target(base)
    hip = _hip.is_hip(base)
    if hip:  # a HIP kernel is estimated on an AMD device, with the config's warp size (if set) the device's
        _hip.check_warp_size(base, _hip.check_device(device))
    folding_given = "folding" in rank_options
    model = rank_options.get("model")
    rank_options.setdefault("folding", ((1, 1, 1),))
    rank_options["threads"] = thread_counts(rank_options.get("threads", CREATE_KERNEL_THREADS))
    rank_options.setdefault("screen", 1)  # only the best block is used: the others need only be bounded
    dkw = {k: rank_options.pop(k) for k in DESCRIBE_KEYS if k in rank_options and k != "config"}
    fallback = rank_options.pop("fallback_registers", None)
    parts = choice_parts(shape, device, layout, registers, fallback, dkw, rank_options, folding_given,
                         base.gpu.get_option("default_block_size"), hip=hip) \
        if "cache" not in rank_options else None  # None: no choice is cached (cache=, or options not plain data)
    inputs = inputs_key(assignments, base, parts) if parts is not None else None
    if inputs is not None:  # a second run: one code generation, with the block chosen before
        kernel = known_choice(assignments, base, (layout, dkw.get("index_layout")), inputs, parts)
        if kernel is not None:
            return kernel
    made = as_kernel(assignments, base)
    code = made[0].get_c_code()  # printed once (20-40 ms): the choice's key and nvcc's input
    choice = choice_key(made[0], code, parts) if parts is not None else None
    if choice is not None:  # the same kernel from other inputs (or a choice made before the inputs were kept)
        cached = cached_choice(choice)
        if cached is not None:
            check_layout_matches(made[0], layout, stacklevel=3, index_layout=dkw.get("index_layout"))
            return keep_inputs(with_block(assignments, base, *cached), code, inputs, choice)
    dkw.setdefault("arch", arch_for(device, hip=hip))
    # nvcc now (from its cache where it counted this code before): everything up to the ranking runs beside it
    count = _registers.RegisterCount(code, dkw["arch"]) if registers is None else None
    try:
        wkernel = describe_kernel(assignments, shape, layout=layout, registers=registers, config=base,
                                  fallback_registers=fallback, made=made,
                                  meanwhile=partial(rank_ahead, device, rank_options), count=count, **dkw)
    finally:
        if count is not None:
            count.cancel()  # where nvcc still runs: describing failed
    spatial = max(f.spatial_dimensions for f in made[0].get_fields())
    threads_rank = spatial if wkernel.indexing == "linear3d" else 1  # Linear1D schemes: one-dimensional blocks
    block, meta = _best_block(wkernel, device, rank_options, model=model, folding_given=folding_given,
                              default_block=pystencils_default_block(threads_rank, base), spatial_dims=spatial)
    kernel = with_block(assignments, base, block, meta)
    if choice is not None and wkernel.registers is not None:  # unknown registers: warn again next time
        store_choice(choice, block, meta)
        keep_inputs(kernel, code, inputs, choice)
    return kernel


def _best_block(wkernel: Any, device: Any, rank_options: dict, *, model: str | None, folding_given: bool,
                default_block: tuple[int, int, int], spatial_dims: int) -> tuple[tuple[int, ...], dict]:
    """The best block of ``wkernel`` on ``device`` and the winning estimate with the ranking's summary, as JSON
    (the choice cache) gives it back; the ranking cached on disk unless ``rank_options`` say otherwise."""
    from warpspeed.plugin_api import progress_bar

    if "cache" not in rank_options:  # a second run of the same kernel reads its ranking back
        rank_options["cache"] = ranking_cache(wkernel, device)
    with progress_bar(f"warpspeed: block size of {wkernel.name}") as bar:
        rank_options.setdefault("progress", bar)
        ranking = rank_block_sizes(wkernel, wkernel.domain, device=device, **rank_options)
    best = ranking.best
    if best.error:
        raise input_error(f"no block shape can launch on {ranking.device}: {best.error}")
    meta = dict(best.data)
    meta["ranking"] = ranking_summary(ranking, wkernel, spatial_dims, model=model, folding_ranked=folding_given,
                                      default_block=default_block)
    return tuple(int(b) for b in best.configuration.block), json.loads(json.dumps(meta))


LAUNCH_TIME_SCHEMES = ("Linear3D", "Linear1D", "GridstridedLinear3D", "GridstridedLinear1D")
"""The indexing schemes (``gpu.indexing_scheme``) whose kernels warpspeed describes and gives a block at launch."""


def launch_time_kernel(assignments: Any, config: Any, device: Any, layout: str, registers: int | None,
                       options: dict[str, Any]) -> Any:
    """``create_kernel`` without a shape: pystencils' kernel with a ``LaunchTimeJit``."""
    import pystencils as ps

    if layout is not None or "index_layout" in options:
        raise input_error("create_kernel without shape takes the layout from the arrays of each launch; drop "
                          "layout=/index_layout= (or give shape= to choose for one layout now).")
    from . import _hip

    cfg = config.copy() if config is not None else ps.CreateKernelConfig(target=_hip.default_target(device))
    check_gpu_target(cfg)
    if _hip.is_hip(cfg) and not (isinstance(device, str) and device == "auto"):
        _hip.check_warp_size(cfg, _hip.check_device(device))
    scheme = getattr(cfg.gpu.get_option("indexing_scheme"), "name", "Linear3D")
    if scheme not in LAUNCH_TIME_SCHEMES:
        schemes = ", ".join(LAUNCH_TIME_SCHEMES)
        raise input_error(f"launch-time block choice describes kernels of pystencils' {schemes} indexing schemes; "
                          f"the config asks for {scheme}: use one of those for gpu.indexing_scheme.")
    refuse_reductions(assignments)
    if registers is not None:
        options["registers"] = registers
    cfg.jit = launch_time_jit(device, inner=cfg.get_option("jit"), **options)
    kernel = created(assignments, cfg)
    kernel.metadata["warpspeed"] = {"block": "chosen at each launch, per array layout",
                                    "device": device if isinstance(device, str) else cfg.jit.device.id}
    return kernel


def launch_time_jit(device: Any = "auto", inner: Any = None, **options: Any) -> Any:
    """A pystencils JIT (``CreateKernelConfig(jit=...)``) whose kernels choose their block at launch, per
    array layout, on ``device`` (``"auto"``: the GPU the arrays are on); ``inner``: the JIT that compiles
    (default cupy's). See ``_launch.LaunchTimeJit``."""
    from ._launch import LaunchTimeJit

    return LaunchTimeJit(device, inner, **options)
