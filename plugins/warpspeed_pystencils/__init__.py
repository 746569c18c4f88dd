"""warpspeed plugin for pystencils 2.x / lbmpy 2.x: thread-block sizes chosen without a GPU.

    import warpspeed_pystencils as wp
    k = wp.describe(assignments, shape=(648, 520, 520))              # a warpspeed.Kernel
    r = wp.rank_block_sizes(assignments, (648, 520, 520), device="A100-SXM4-40GB", threads=(256, 512, 1024))
    kernel = wp.create_kernel(assignments, config, shape=(648, 520, 520), device="A100-SXM4-40GB")
    # == ps.create_kernel(assignments, config) with config.gpu.default_block_size = the best block;
    #    kernel.metadata["warpspeed"] holds the winning estimate

``shape`` is the allocated array extent of the spatial dimensions including ghost layers, the fastest in
memory first (for a numpy array in C order: ``arr.shape[::-1]``); fields with an index dimension (LBM
populations) get their index extent from the field. Each field is described in the memory layout it was
declared with (``ps.fields("u: double[3D]")``: numpy's C order, the last coordinate contiguous, which
pystencils puts ``threadIdx.x`` on; ``layout="fzyx"``: x contiguous). The declaration orders the spatial
coordinates only: the index of a field declared in numpy order is contiguous (an array of shape
``(..., Q)``), that of one declared x fastest (``fzyx``, lbmpy's default) the slowest. ``layout=`` (``"c"``,
``"fzyx"``, ``"zyxf"``, ...) overrides the declaration for every field, with a warning where it contradicts
it; ``index_layout=`` for the fields with an index dimension only (``"zyxf"``: the populations of a cell
side by side, x next).

Importing this module is cheap: pystencils, lbmpy and sympy are imported on first use. Registered as the
entry point ``pystencils`` of the group ``warpspeed.plugins``; ``catalog_entries()`` adds the LBM kernels
(``d3q19-srt``, ``d3q15-allen-cahn``, ``lbm``) to ``warpspeed kernels``. Tested with pystencils 2.0 and
lbmpy 2.0 (only the API that survives 2.1 is used).
"""

from __future__ import annotations

import json
import numbers
import warnings
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import partial
from typing import Any

from . import _cache
from ._choice import BlockChoice

__all__ = ["PLUGIN", "BlockChoice", "allen_cahn_d3q15", "catalog_entries", "choice_of", "create_kernel",
           "cuda_program", "describe", "launch_time_jit", "lbm_d3q19_srt", "lbm_update_rule",
           "pystencils_default_block", "rank_block_sizes", "ranking_summary", "star_stencil"]

DEFAULT_ARCH = "sm_80"
#: Thread counts create_kernel ranks when none are given.
CREATE_KERNEL_THREADS = (256, 512, 1024)
_DESCRIBE_KEYS = ("name", "index_layout", "arch", "config")


def _input_error(msg: str) -> Exception:
    from warpspeed import InputError

    return InputError(msg)


def _as_kernel(obj: Any, config: Any = None) -> tuple[Any, list | None]:
    """(GpuKernel, assignments or None): create a CUDA kernel (no JIT) when given assignments."""
    import pystencils as ps
    from pystencils.codegen import GpuKernel, Kernel

    if isinstance(obj, GpuKernel):
        return obj, None
    if isinstance(obj, Kernel):
        raise _input_error(f"pystencils kernel '{obj.name}' targets {obj.target}, not a GPU: create it with "
                           "target=ps.Target.CUDA (jit=ps.no_jit works without a GPU), or pass the assignments.")
    _refuse_reductions(obj)
    if isinstance(obj, ps.AssignmentCollection):
        assignments = list(obj.all_assignments)
    elif isinstance(obj, ps.Assignment):
        assignments = [obj]
    elif isinstance(obj, list | tuple) and obj and all(isinstance(a, ps.Assignment) for a in obj):
        assignments = list(obj)
    else:
        raise _input_error("pystencils plugin: expected a pystencils GpuKernel, an AssignmentCollection (e.g. an "
                           f"lbmpy update rule) or a list of Assignments, got {_what_is(obj)}.")
    cfg = config.copy() if config is not None else ps.CreateKernelConfig()
    cfg.target = ps.Target.CUDA
    cfg.jit = ps.no_jit
    return _created(obj if isinstance(obj, ps.AssignmentCollection) else assignments, cfg), assignments


def _created(assignments: Any, cfg: Any) -> Any:
    """``pystencils.create_kernel``, its errors on bad assignments (of many kinds) as an ``InputError``."""
    import pystencils as ps

    try:
        return ps.create_kernel(assignments, cfg)
    except Exception as e:
        raise _input_error(f"pystencils could not create a CUDA kernel from the assignments: "
                           f"{type(e).__name__}: {e}") from None


def _is_reduction(a: Any) -> bool:
    """A pystencils reduction (``AddReductionAssignment``, ...: an atomic update of one value), which warpspeed
    does not describe."""
    return any(c.__name__ == "ReductionAssignment" for c in type(a).__mro__)


def _what_is(obj: Any) -> str:
    """What a wrong argument is, for a message: its type (a reduction says it is one), and for a list the types
    in it that are not Assignments."""
    import pystencils as ps

    if not isinstance(obj, list | tuple) or not obj:
        return type(obj).__name__ + ("; reductions are not described by warpspeed" if _is_reduction(obj) else "")
    others = sorted({type(a).__name__ for a in obj if not isinstance(a, ps.Assignment)})
    return f"a {type(obj).__name__} holding {', '.join(others)}"


def _refuse_reductions(assignments: Any) -> None:
    """An ``InputError`` where assignments (a list or an AssignmentCollection) hold a reduction."""
    import pystencils as ps

    items = assignments.all_assignments if isinstance(assignments, ps.AssignmentCollection) else assignments
    if isinstance(items, list | tuple) and any(_is_reduction(a) for a in items):
        raise _input_error("pystencils plugin: the assignments hold a reduction "
                           f"({next(type(a).__name__ for a in items if _is_reduction(a))}); reductions are not "
                           "described by warpspeed.")


def _registers_argument(registers: Any) -> int | None:
    if registers is None:
        return None
    if isinstance(registers, bool) or not isinstance(registers, int) or not 1 <= registers <= 255:
        raise _input_error(f"registers must be an integer from 1 to 255 (per thread), got {registers!r}.")
    return registers


def _thread_counts(threads: Any) -> Any:
    """``threads=`` as ``warpspeed.rank`` takes it: one int is that thread count alone (``threads=256``), anything
    else is passed on as given (``warpspeed.rank`` checks it)."""
    if isinstance(threads, numbers.Integral) and not isinstance(threads, bool):
        return (int(threads),)
    return threads


def _check_layout_matches(kernel: Any, layout: str | None = None, arrays: Any = None, stacklevel: int = 4,
                          index_layout: str | None = None) -> None:
    """Warn when a field was declared with another spatial layout than the one estimated (``layout`` or
    ``index_layout`` where given, or the strides of the ``arrays`` a launch passes): the threads follow the
    declared layout (pystencils puts ``threadIdx.x`` on the coordinate that is contiguous in it). The warning
    says how to fix it. ``stacklevel``: as :func:`warnings.warn`'s, from this function."""
    from warpspeed import InputError

    from ._extract import estimated_order, layout_name

    if arrays is None and layout is None and index_layout is None:
        return  # every field is estimated in its declared layout
    for f in kernel.get_fields():
        if f.has_fixed_shape:
            continue
        dims = f.spatial_dimensions
        have = tuple(c for c in f.layout if c < dims)
        if arrays is not None:
            strides = arrays[f.name].strides[:dims]
            want = tuple(sorted(range(dims), key=lambda c: (-strides[c], c)))
            what = f"the arrays launched have {want}"
            fix = ("allocate the arrays in the declared layout, or declare the field with the arrays' layout "
                   + (f"(ps.fields(..., layout={layout_name(want)!r}))" if layout_name(want) else "")).rstrip()
        else:
            try:
                full = estimated_order(f, layout, index_layout)
            except InputError:
                return  # the description reports the bad name
            want = tuple(c for c in full if c < dims)
            given = f"index_layout={index_layout!r}" if f.index_dimensions and index_layout else f"layout={layout!r}"
            what = f"is estimated with {given}, {want}"
            name = layout_name(have)
            fix = (f"pass layout={name!r}, the layout of the declaration, " if name else "") + \
                "or leave layout= (and index_layout=) out: each field is then estimated in its declared layout"
        if have and have != want:
            warnings.warn(f"warpspeed_pystencils: field '{f.name}' was declared with the spatial layout {have} "
                          f"(coordinates slowest first) but {what}; the threads of the kernel follow the declared "
                          f"layout (threadIdx.x on coordinate {have[-1]}). To fix: {fix}.", stacklevel=stacklevel)
            return


def _describe(kernel_or_assignments: Any, shape: Sequence[int], *, layout: str | None = None,
              registers: int | None = None, name: str | None = None, index_layout: str | None = None,
              arch: str = DEFAULT_ARCH, config: Any = None, fallback_registers: int | None = None,
              made: tuple[Any, list | None] | None = None,
              meanwhile: Callable[[Any, Callable[[], bool]], None] | None = None, count: Any = None) -> Any:
    """``describe``; ``meanwhile(kernel, running)``: called with the warpspeed kernel, its registers guessed
    (``fallback_registers``, else :func:`guessed_registers`), while nvcc counts the real ones; ``count``: the
    ``_registers.RegisterCount`` of the kernel where the caller started it already."""
    spec = _describe_spec(kernel_or_assignments, shape, layout=layout, registers=registers, name=name,
                          index_layout=index_layout, arch=arch, config=config, fallback_registers=fallback_registers,
                          made=made, meanwhile=None if meanwhile is None else partial(
                              _with_guessed_registers, meanwhile, fallback_registers), count=count)
    return _as_warpspeed_kernel(spec)


def _as_warpspeed_kernel(spec: dict) -> Any:
    import warpspeed

    return warpspeed.kernel_from_dict(spec, source=f"pystencils:{spec['name']}")


def _with_guessed_registers(meanwhile: Callable[[Any, Callable[[], bool]], None], guess: int | None, spec: dict,
                            running: Callable[[], bool]) -> None:
    from warpspeed import InputError

    try:
        kernel = _as_warpspeed_kernel(dict(spec, registers=guess or guessed_registers(spec)))
    except InputError:  # a guess that describes no kernel (a bad fallback): nothing to count ahead
        return
    meanwhile(kernel, running)


GUESS_ADDRESS_REGISTERS = 12
"""Registers a guess adds for indices and addresses (see :func:`guessed_registers`)."""


def guessed_registers(spec: dict) -> int:
    """Registers per thread guessed from a kernel description, for counting ahead while nvcc counts the real
    ones (only the speed of ``create_kernel`` depends on it: counts made with a guess that gives other blocks
    per SM are made again). A kernel that writes several values (an LBM update: every population) needs all
    it loaded at once, so it holds every loaded and stored value, in 4-byte registers, plus a dozen for
    indices and addresses; a kernel that writes one or two (a stencil) sums its loads as they come, and
    warpspeed's default is the guess. Checked with nvcc (sm_90): D3Q19 SRT 92 registers (guess 88), D3Q15 72
    (72), D2Q9 48 (48), D3Q27 122 (120), Allen-Cahn 82 (110, the same blocks per SM); stencils 28-54 (32)."""
    from warpspeed.plugin_api import DEFAULT_REGISTERS

    fields = spec.get("field", [])
    stored = sum(len(f.get("stores", [])) for f in fields)
    if stored <= 2:
        return DEFAULT_REGISTERS
    words = sum((len(f.get("loads", [])) + len(f.get("stores", []))) * -(-int(f.get("element_bytes", 8)) // 4)
                for f in fields)
    return min(255, max(DEFAULT_REGISTERS, words + GUESS_ADDRESS_REGISTERS))


def _describe_spec(kernel_or_assignments: Any, shape: Sequence[int] | None, *, layout: str | None = None,
                   registers: int | None = None, name: str | None = None, index_layout: str | None = None,
                   arch: str = DEFAULT_ARCH, config: Any = None, fallback_registers: int | None = None,
                   arrays: Any = None, registers_source: str = "the registers argument",
                   made: tuple[Any, list | None] | None = None,
                   meanwhile: Callable[[dict, Callable[[], bool]], None] | None = None, count: Any = None) -> dict:
    """The warpspeed kernel description (the dict of a kernel TOML) of ``describe``; ``arrays`` (field name ->
    ``_extract.ArrayLayout``) replace ``shape`` and the layouts by the arrays of a launch; ``made``: what
    ``_as_kernel`` already gave for ``kernel_or_assignments`` and ``config``; ``meanwhile(spec, running)``
    is called where nvcc still counts the registers once the rest is described (``spec`` without
    ``registers``; ``running()`` says whether nvcc still runs), to use the wait; ``count``: the kernel's
    ``_registers.RegisterCount``, where the caller started it (else it starts here)."""
    from . import _extract, _registers

    registers = _registers_argument(registers)
    if any(v is not None and not isinstance(v, str) for v in (layout, index_layout)):
        raise _input_error(f"layout and index_layout must be layout names such as 'c' or 'fzyx' (or None: the "
                           f"fields' declared layouts), got {layout!r}, {index_layout!r}.")
    kernel, assignments = made if made is not None else _as_kernel(kernel_or_assignments, config)
    name = name or kernel.name
    if registers is not None and count is not None:
        count.cancel()  # the registers are given: nvcc's count is not needed
        count = None
    elif count is None and registers is None:
        count = _registers.RegisterCount(kernel.get_c_code(), arch)  # nvcc starts now
    try:
        if arrays is None:
            _check_layout_matches(kernel, layout, stacklevel=5, index_layout=index_layout)  # at the caller
        flops = _extract.flops_from_assignments(assignments) if assignments is not None else None
        spec = _extract.kernel_dict(kernel, shape, layout=layout, index_layout=index_layout, name=name,
                                    flops=flops, arrays=arrays)
    except BaseException:
        if count is not None:
            count.cancel()
        raise
    if count is None:
        spec["registers"], source = registers, registers_source
    else:
        if meanwhile is not None and count.running():
            meanwhile(dict(spec), count.running)
        n, source = count.result()  # described meanwhile: the compiler ran beside the description
        if n is None and fallback_registers is not None:
            n, source = fallback_registers, f"measured with nvcc {DEFAULT_ARCH} (recorded; {source})"
        if n is not None:
            spec["registers"] = n
        else:
            from warpspeed.plugin_api import DEFAULT_REGISTERS

            warnings.warn(f"warpspeed_pystencils: registers per thread of kernel '{name}' unknown ({source}); "
                          f"warpspeed assumes {DEFAULT_REGISTERS}. Pass registers=N or put nvcc on PATH.",
                          stacklevel=3)
            source = f"unknown ({source}): warpspeed's default {DEFAULT_REGISTERS}"
    spec["description"] += f"; registers from {source}"
    return spec


def describe(kernel_or_assignments: Any, shape: Sequence[int], *, layout: str | None = None,
             registers: int | None = None, name: str | None = None, index_layout: str | None = None,
             arch: str | None = None, config: Any = None, device: Any = None) -> Any:
    """A ``warpspeed.Kernel`` for a pystencils GPU kernel (or the assignments it is created from).

    ``kernel_or_assignments``: a pystencils ``GpuKernel``, an ``AssignmentCollection`` (e.g. an lbmpy update
    rule) or a list of ``Assignment`` s; assignments are turned into a kernel with
    ``ps.create_kernel(..., CreateKernelConfig(target=Target.CUDA, jit=ps.no_jit))`` (``config``: a
    ``CreateKernelConfig`` to start from, e.g. with ``ghost_layers`` or ``iteration_slice``).
    ``shape``: allocated extent per spatial dimension incl. ghost layers, the fastest in memory first (a numpy
    array in C order: ``arr.shape[::-1]``).
    ``layout``: None (the default) describes each field in the layout it was declared with (its
    ``Field.layout``; see the module's docstring for the index dimension); a name (``"c"``/``"numpy"``,
    ``"fzyx"``/``"f"``, ``"zyxf"``) describes every field so, with a warning where that contradicts a
    declaration (pystencils' threads follow the declaration). ``index_layout``: the same for the fields with
    an index dimension only (default: ``layout``).
    ``registers``: per thread; when None they come from ``nvcc -arch=<arch> --resource-usage`` (cached), else
    warpspeed's default is assumed with a warning; ``arch`` defaults to the compute capability of ``device``
    (a warpspeed device id or ``Device``) where one is given, else ``sm_80``. Every load and store becomes a
    warpspeed access in
    ``tidx, tidy, tidz`` (deduplicated), the iteration space comes from the kernel's guard, flops from
    ``count_operations`` on the assignments (else from the AST). Bad input raises ``warpspeed.InputError``.
    """
    if arch is None:
        arch = arch_for(device) if device is not None else DEFAULT_ARCH
    return _describe(kernel_or_assignments, shape, layout=layout, registers=registers, name=name,
                     index_layout=index_layout, arch=arch, config=config)


def arch_for(device: Any) -> str:
    """nvcc ``-arch`` for a warpspeed device (id or Device): compute capability 8.0 -> ``sm_80``."""
    import warpspeed

    dev = warpspeed.device(device) if not isinstance(device, warpspeed.Device) else device
    cc = str(getattr(dev, "compute_capability", "") or "")
    digits = cc.replace(".", "")
    return f"sm_{digits}" if digits.isdigit() else DEFAULT_ARCH


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

    dkw = {k: opts.pop(k) for k in _DESCRIBE_KEYS if k in opts}
    fallback = opts.pop("fallback_registers", None)
    threads = _thread_counts(threads)
    if isinstance(kernel_or_assignments, warpspeed.Kernel):
        kernel = kernel_or_assignments.with_registers(_registers_argument(registers))
    else:
        from pystencils.codegen import GpuKernel

        if isinstance(kernel_or_assignments, GpuKernel):  # generated with launch bounds: no block above them
            from ._launch import within_launch_bounds

            threads = within_launch_bounds(tuple(threads), kernel_or_assignments.get_c_code())
        dkw.setdefault("arch", arch_for(device))
        kernel = _describe(kernel_or_assignments, shape, layout=layout, registers=registers,
                           fallback_registers=fallback, **dkw)
    opts.setdefault("jobs", 1)
    return warpspeed.rank(kernel, device, threads=threads, folding=folding, **opts)


def _ranking_cache(kernel: Any, device: Any) -> Any:
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


_SPACE_OPTIONS = ("threads", "folding", "domain", "blocks", "domains", "configs", "model", "screen")


def _rank_ahead(device: Any, rank_options: dict, kernel: Any, running: Callable[[], bool]) -> None:
    """While nvcc counts the registers: the screened ranking's counts for ``kernel`` (registers guessed), which
    the ranking with the real registers reuses where the guess gives the same blocks per SM."""
    from warpspeed.plugin_api import precount

    if rank_options.get("screen") is None:  # a full ranking may run in worker processes: nothing to share
        return
    try:
        precount(kernel, device, until=lambda: not running(),
                 **{k: rank_options[k] for k in _SPACE_OPTIONS if k in rank_options})
    except Exception:  # noqa: BLE001 - only time is at stake: the ranking itself reports what is wrong
        return


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
    ``config=None`` means ``Target.CUDA`` with ``jit=ps.no_jit`` (no cupy needed); a given config keeps its
    target. The winning estimate (the JSON of ``warpspeed estimate``) is ``kernel.metadata["warpspeed"]``,
    with a ``"ranking"`` summary (best block, folding, performance, limiter, the ranking's ``confidence``, the
    estimate for pystencils' default block).

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

    from . import _registers

    if isinstance(assignments, Kernel):
        raise _input_error("create_kernel needs the assignments (the kernel is created with the chosen block "
                           "size); use rank_block_sizes or describe for an existing kernel.")
    if config is not None and not isinstance(config, ps.CreateKernelConfig):
        raise _input_error(f"config must be a pystencils CreateKernelConfig or None, got {type(config).__name__}.")
    if shape is None:
        return _launch_time_kernel(assignments, config, device, layout, registers, rank_options)
    if isinstance(shape, Iterator):  # read once: the key and the description both need it
        shape = tuple(shape)
    base = config.copy() if config is not None else ps.CreateKernelConfig(target=ps.Target.CUDA, jit=ps.no_jit)
    _check_gpu_target(base)
    if isinstance(device, str) and device == "auto":
        from warpspeed import detected_device

        device = detected_device()
    folding_given = "folding" in rank_options
    model = rank_options.get("model")
    rank_options.setdefault("folding", ((1, 1, 1),))
    rank_options["threads"] = _thread_counts(rank_options.get("threads", CREATE_KERNEL_THREADS))
    rank_options.setdefault("screen", 1)  # only the best block is used: the others need only be bounded
    dkw = {k: rank_options.pop(k) for k in _DESCRIBE_KEYS if k in rank_options and k != "config"}
    fallback = rank_options.pop("fallback_registers", None)
    parts = _choice_parts(shape, device, layout, registers, fallback, dkw, rank_options, folding_given,
                          base.gpu.get_option("default_block_size")) \
        if "cache" not in rank_options else None  # None: no choice is cached (cache=, or options not plain data)
    inputs = _inputs_key(assignments, base, parts) if parts is not None else None
    if inputs is not None:  # a second run: one code generation, with the block chosen before
        kernel = _known_choice(assignments, base, (layout, dkw.get("index_layout")), inputs, parts)
        if kernel is not None:
            return kernel
    made = _as_kernel(assignments, base)
    code = made[0].get_c_code()  # printed once (20-40 ms): the choice's key and nvcc's input
    choice = _choice_key(made[0], code, parts) if parts is not None else None
    if choice is not None:  # the same kernel from other inputs (or a choice made before the inputs were kept)
        cached = _cached_choice(choice)
        if cached is not None:
            _check_layout_matches(made[0], layout, stacklevel=3, index_layout=dkw.get("index_layout"))
            return _keep_inputs(_with_block(assignments, base, *cached), code, inputs, choice)
    dkw.setdefault("arch", arch_for(device))
    # nvcc now (from its cache where it counted this code before): everything up to the ranking runs beside it
    count = _registers.RegisterCount(code, dkw["arch"]) if registers is None else None
    try:
        from warpspeed.plugin_api import progress_bar

        wkernel = _describe(assignments, shape, layout=layout, registers=registers, config=base,
                            fallback_registers=fallback, made=made,
                            meanwhile=partial(_rank_ahead, device, rank_options), count=count, **dkw)
    finally:
        if count is not None:
            count.cancel()  # where nvcc still runs: describing failed
    if "cache" not in rank_options:  # a second run of the same kernel reads its ranking back
        rank_options["cache"] = _ranking_cache(wkernel, device)
    with progress_bar(f"warpspeed: block size of {wkernel.name}") as bar:
        rank_options.setdefault("progress", bar)
        ranking = rank_block_sizes(wkernel, shape, device=device, **rank_options)
    best = ranking.best
    if best.error:
        raise _input_error(f"no block shape can launch on {ranking.device}: {best.error}")
    block = tuple(int(b) for b in best.configuration.block)
    spatial = max(f.spatial_dimensions for f in made[0].get_fields())
    meta = dict(best.data)
    meta["ranking"] = ranking_summary(ranking, wkernel, spatial, model=model, folding_ranked=folding_given,
                                      default_block=pystencils_default_block(spatial, base))
    meta = json.loads(json.dumps(meta))  # as the choice cache gives it back
    kernel = _with_block(assignments, base, block, meta)
    if choice is not None and wkernel.registers is not None:  # unknown registers: warn again next time
        _cache.write_json("choices", choice, {"block": list(block), "metadata": meta})
        _keep_inputs(kernel, code, inputs, choice)
    return kernel


def _with_block(assignments: Any, base: Any, block: tuple[int, ...], meta: dict) -> Any:
    """pystencils' kernel of ``assignments`` with ``block`` as its default block size and warpspeed's estimate
    (``meta``) in its metadata."""
    import pystencils as ps

    cfg = base.copy()
    cfg.gpu.default_block_size = block
    kernel = ps.create_kernel(assignments, cfg)
    kernel.metadata["warpspeed"] = meta
    return kernel


_NOT_IN_THE_CHOICE = ("jobs", "executor", "progress")  # options that change how a ranking runs, not its result


def _choice_parts(shape: Sequence[int], device: Any, layout: str, registers: int | None, fallback: int | None,
                  describe_options: dict, rank_options: dict, folding_given: bool,
                  default_block: Sequence[int] | None = None) -> list | None:
    """Everything but the kernel that keys ``create_kernel``'s choice: the shape and layout, the device's full
    description, every option that can change the ranking or its summary (whether ``folding`` was given, the
    config's own default block: the summary compares with it),
    whether nvcc can count the registers, and the versions of this plugin, pystencils, lbmpy and warpspeed's
    code and data. None where an option is not plain data (the choice is not cached)."""
    import warpspeed

    from . import _registers

    if isinstance(device, str) and device in warpspeed.device_ids():
        dev = device  # a shipped device: its file is in the model version
    else:
        dev = (device if isinstance(device, warpspeed.Device) else warpspeed.device(device)).to_dict()
    try:  # plain data only: no object's repr (an address) in a key; a bad shape is described's to report
        options = json.loads(json.dumps({k: v for k, v in rank_options.items() if k not in _NOT_IN_THE_CHOICE}))
        described = json.loads(json.dumps(describe_options))
        extent = [int(n) if isinstance(n, numbers.Integral) and not isinstance(n, bool) else n for n in shape]
    except (TypeError, ValueError):
        return None
    default = None if default_block is None else [int(b) for b in default_block]
    return [extent, layout, registers, fallback, described, options, folding_given, dev, default,
            registers is None and _registers.find_nvcc() is not None, _cache.code_version(), _cache.model_version()]


def _choice_key(kernel: Any, code: str, parts: list) -> str:
    """The key of ``create_kernel``'s choice: the kernel's generated code, its fields' declared layouts and
    :func:`_choice_parts`."""
    return _cache.content_key("choice", code, _declared_layouts(kernel), *parts)


def _declared_layouts(kernel: Any) -> list[tuple[str, list[int]]]:
    """Each field of a pystencils kernel with the spatial layout it was declared with (``Field.layout``,
    coordinates slowest first): what the layouts default to, so a part of the keys of cached choices."""
    return [(f.name, [int(c) for c in f.layout]) for f in sorted(kernel.get_fields(), key=lambda f: f.name)]


def _inputs_key(assignments: Any, config: Any, parts: list) -> str | None:
    """A key of ``create_kernel``'s inputs: the pickled assignments (:func:`_value_digest`: pystencils' fields
    with their types and layouts included), the config's options (its ``repr``, the JIT left out: it changes no
    code) and :func:`_choice_parts`. It finds a choice made before without generating the code first; the code
    is still checked against the choice's key (:func:`_known_choice`), so a key that misses costs time only.
    None where the assignments do not pickle."""
    cfg = config.copy()
    cfg.jit = None
    digest = _value_digest(assignments)
    return _cache.content_key("choice-inputs", digest, repr(cfg), *parts) if digest is not None else None


def _value_digest(obj: Any) -> str | None:
    """A hash of ``obj`` pickled with pystencils' data types by name: they fill caches of their own as kernels
    are generated, which would change the plain pickle of the same assignments within a process. What the
    pickle still tells apart is which parts are one shared object: an lbmpy update rule derived in one run
    and read from pystencils' disk cache in the next hash differently (that next run generates its code twice
    once more). None where ``obj`` does not pickle."""
    import hashlib
    import io
    import pickle

    from pystencils.types import PsType

    class ByName(pickle.Pickler):
        def reducer_override(self, o: Any) -> Any:
            return (str, (f"{type(o).__name__}:{o!r}",)) if isinstance(o, PsType) else NotImplemented

    out = io.BytesIO()
    try:
        ByName(out, protocol=4).dump(obj)
    except Exception:  # unpicklable objects: no shortcut
        return None
    return hashlib.sha256(out.getvalue()).hexdigest()


def _known_choice(assignments: Any, base: Any, layouts: tuple[str | None, str | None], inputs: str,
                  parts: list) -> Any | None:
    """The kernel of a choice cached for these inputs, generated once with its block; None where there is none
    or where the code generated now is not the code the choice was made for (then the caller starts over).
    ``layouts``: ``layout`` and ``index_layout`` as given, to warn where they differ from the declaration."""
    entry = _cache.read_json("choice-inputs", inputs)
    choice = entry.get("choice") if isinstance(entry, dict) else None
    cached = _cached_choice(choice) if isinstance(choice, str) else None
    if cached is None:
        return None
    try:
        kernel = _with_block(assignments, base, *cached)
    except Exception:  # the full path reports what pystencils makes of the assignments
        return None
    if _choice_key(kernel, kernel.get_c_code(), parts) != choice:
        return None
    _check_layout_matches(kernel, layouts[0], index_layout=layouts[1])
    return kernel


def _cached_choice(choice: str) -> tuple[tuple[int, ...], dict] | None:
    """(block, metadata) of a cached choice; None where there is none or its file does not hold them."""
    cached = _cache.read_json("choices", choice)
    if not isinstance(cached, dict) or not isinstance(cached.get("metadata"), dict):
        return None
    block = cached.get("block")
    if not isinstance(block, list) or len(block) != 3 or cached["metadata"].get("block") != block or \
            not all(isinstance(b, int) and not isinstance(b, bool) and b > 0 for b in block):
        return None  # a choice stores the best estimate, whose block it is
    return tuple(block), cached["metadata"]


def _keep_inputs(kernel: Any, code: str, inputs: str | None, choice: str) -> Any:
    """Remember that ``inputs`` lead to ``choice``, where the kernel's code does not depend on its block (a
    later run then generates the code once); returns ``kernel``."""
    if inputs is not None and kernel.get_c_code() == code:
        _cache.write_json("choice-inputs", inputs, {"choice": choice})
    return kernel


def _check_gpu_target(config: Any) -> None:
    target = config.get_target()
    if not target.is_gpu():
        raise _input_error(f"create_kernel chooses GPU block sizes, but the config targets {target}; use "
                           "target=ps.Target.CUDA (or HIP).")


def _launch_time_kernel(assignments: Any, config: Any, device: Any, layout: str, registers: int | None,
                        options: dict[str, Any]) -> Any:
    """``create_kernel`` without a shape: pystencils' kernel with a ``LaunchTimeJit``."""
    import pystencils as ps

    if layout is not None or "index_layout" in options:
        raise _input_error("create_kernel without shape takes the layout from the arrays of each launch; drop "
                           "layout=/index_layout= (or give shape= to choose for one layout now).")
    cfg = config.copy() if config is not None else ps.CreateKernelConfig(target=ps.Target.CUDA)
    _check_gpu_target(cfg)
    scheme = getattr(cfg.gpu.get_option("indexing_scheme"), "name", "Linear3D")
    if scheme != "Linear3D":
        raise _input_error(f"launch-time block choice describes kernels of pystencils' Linear3D indexing scheme; "
                           f"the config asks for {scheme}: leave gpu.indexing_scheme at its default.")
    _refuse_reductions(assignments)
    if registers is not None:
        options["registers"] = registers
    cfg.jit = launch_time_jit(device, inner=cfg.get_option("jit"), **options)
    kernel = _created(assignments, cfg)
    kernel.metadata["warpspeed"] = {"block": "chosen at each launch, per array layout",
                                    "device": device if isinstance(device, str) else cfg.jit.device.id}
    return kernel


def launch_time_jit(device: Any = "auto", inner: Any = None, **options: Any) -> Any:
    """A pystencils JIT (``CreateKernelConfig(jit=...)``) whose kernels choose their block at launch, per
    array layout, on ``device`` (``"auto"``: the GPU the arrays are on); ``inner``: the JIT that compiles
    (default cupy's). See ``_launch.LaunchTimeJit``."""
    from ._launch import LaunchTimeJit

    return LaunchTimeJit(device, inner, **options)


def pystencils_default_block(spatial_dims: int, config: Any = None) -> tuple[int, int, int]:
    """The block pystencils launches a kernel of ``spatial_dims`` dimensions with when nobody chooses one: the
    config's ``gpu.default_block_size`` where it sets one, else pystencils' default for the dimensionality."""
    from pystencils.codegen.config import GpuOptions

    given = config.gpu.get_option("default_block_size") if config is not None else None
    block = given if given is not None else GpuOptions.get_default_block_size(spatial_dims)
    return tuple(int(b) for b in block)  # type: ignore[return-value]


#: Rows of the ranking table (and ``contenders``) a choice keeps for its report.
REPORT_ROWS = 10


def ranking_summary(ranking: Any, wkernel: Any, spatial_dims: int, *, model: str | None,
                    folding_ranked: bool, default_block: Sequence[int] | None = None) -> dict[str, Any]:
    """What ``kernel.metadata["warpspeed"]["ranking"]`` says: the kernel, the best block, its performance and
    limiter, the configurations ranked, how sure the ranking is (``confidence``, as in the rank JSON), and
    pystencils' default block (``default_block``, else pystencils' default for ``spatial_dims``) with its
    estimate and the speedup over it; the best ``REPORT_ROWS`` configurations (``contenders``), and the
    ranking in words as ``warpspeed rank`` prints it (``headline``, ``table``). :func:`choice_of` reads it."""
    from warpspeed.plugin_api import ranking_headline, ranking_table, reference_estimate

    best = ranking.best
    block = [int(b) for b in best.configuration.block]
    default_block = (tuple(int(b) for b in default_block) if default_block is not None
                     else pystencils_default_block(spatial_dims))
    summary: dict[str, Any] = {
        "kernel": ranking.kernel,
        "device": ranking.device, "block": block, "folding": list(best.configuration.folding),
        "folding_applied": tuple(best.configuration.folding) == (1, 1, 1),
        "performance_GLup_s": best.performance_GLup_s, "limiter": best.limiter,
        "configurations": len(ranking.results) + len(ranking.bounded),
        "configurations_estimated": len(ranking.results), "folding_ranked": folding_ranked,
        "pystencils_default_block": list(default_block), "confidence": ranking.confidence.to_dict(),
    }
    try:
        ref = reference_estimate(ranking, wkernel, ranking.device, block=default_block, model=model)
    except Exception:  # the default block may not launch (registers); the summary then omits it
        ref = None
    if ref is not None and not ref.error and ref.performance_GLup_s > 0:
        summary["pystencils_default_GLup_s"] = ref.performance_GLup_s
        summary["speedup_vs_default"] = best.performance_GLup_s / ref.performance_GLup_s
    summary["contenders"] = [{"block": list(r.configuration.block), "folding": list(r.configuration.folding),
                              "performance_GLup_s": r.performance_GLup_s, "limiter": r.limiter}
                             for r in ranking.results[:REPORT_ROWS] if not r.error]
    summary["headline"] = ranking_headline(ranking, ref)
    summary["table"] = ranking_table(ranking, REPORT_ROWS)
    return summary


def choice_of(kernel_or_choice: Any, kernel: Any = None) -> BlockChoice:
    """warpspeed's choice of a block for a pystencils kernel, readable: a :class:`BlockChoice` (``print`` it
    for the block chosen against pystencils' default, the ranking's headline with its confidence and the
    table of the contenders, as ``warpspeed rank`` prints them).

    ``kernel_or_choice``: a kernel of ``create_kernel(..., shape=...)`` (or its ``metadata["warpspeed"]``);
    for a launch-time kernel, a choice (a value of ``run.choices``, or ``run.choice_for(**arrays)``), or the
    compiled kernel ``run`` itself once it has been called with arrays of one layout; or a
    ``warpspeed.Ranking`` (of ``rank_block_sizes``, say), with ``kernel`` the ``warpspeed.Kernel`` it ranks to
    estimate pystencils' default block where the ranking does not hold it. Anything else is an
    ``InputError``."""
    from ._choice import choice_of as f

    return f(kernel_or_choice, kernel)


def cuda_program(kernel_or_assignments: Any, shape: Sequence[int], *, layout: str | None = None,
                 index_layout: str | None = None, name: str | None = None, config: Any = None,
                 scalars: Any = None, fill: float | None = None) -> Any:
    """pystencils' own CUDA code of a kernel as a ``warpspeed.plugin_api.CudaProgram`` (what
    ``warpspeed measure`` launches for pystencils kernels); arguments as in ``describe``, ``scalars`` = values
    of scalar parameters such as ``omega`` (default 1.0), ``fill`` = initial value of every array (default 0.1)."""
    from ._program import DEFAULT_FILL
    from ._program import cuda_program as f

    return f(kernel_or_assignments, shape, layout=layout, index_layout=index_layout, name=name, config=config,
             scalars=scalars, fill=DEFAULT_FILL if fill is None else fill)


def star_stencil(range_: int = 4, dims: int = 3, dtype: str = "float64", **kw: Any) -> list:
    from .catalog import star_stencil as f

    return f(range_, dims, dtype, **kw)


def lbm_d3q19_srt(layout: str = "fzyx", streaming: str = "pull") -> Any:
    from .catalog import lbm_d3q19_srt as f

    return f(layout, streaming)


def lbm_update_rule(stencil: str = "D3Q19", method: str = "srt", **kw: Any) -> Any:
    from .catalog import lbm_update_rule as f

    return f(stencil, method, **kw)


def allen_cahn_d3q15(layout: str = "fzyx", **kw: Any) -> Any:
    from .catalog import allen_cahn_d3q15 as f

    return f(layout, **kw)


def catalog_entries() -> list:
    from .catalog import catalog_entries as f

    return f()


PLUGIN = {
    "name": "pystencils",
    "describe": describe,
    "rank_block_sizes": rank_block_sizes,
    "create_kernel": create_kernel,
    "cuda_program": cuda_program,
    "catalog_entries": catalog_entries,
}
