"""Thread blocks chosen when a kernel is launched: for the arrays it is called with, on the GPU it runs on.

pystencils kernels do not know their array shapes until they are called. ``LaunchTimeJit`` is a pystencils
JIT compiler (``pystencils.jit.JitBase``, the public hook ``CreateKernelConfig(jit=...)`` offers) that
wraps another one (cupy's by default). The kernel it compiles looks, at each call, at the shapes and
strides of the arrays passed; the first call with a new array layout describes the kernel for those
arrays, ranks its block shapes for the GPU and sets the best one through the launch configuration's
``trim_block_size``; pystencils computes the grid as always. Where the model cannot tell the best blocks
apart (the ranking's ``confidence`` is not ``confident``: contenders within its resolution, or an access
pattern it was not validated on), the next calls time the blocks the confidence lists, one call each
(CUDA events around the launch), and keep the fastest: every call still does the program's work once.
Choices are kept per array layout in memory and on disk (``$WARPSPEED_CACHE_DIR``), keyed by the kernel's
code, the fields' declared layouts, the arrays' layout, the device, the registers of the compiled kernel and
warpspeed's model, so a second run of the same program ranks and times nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from pystencils.jit import JitBase, KernelWrapper

from warpspeed import InputError

from . import _cache
from ._arguments import MAX_REGISTERS, register_limit, registers_argument, thread_counts
from ._describe import arch_for, describe_spec
from ._extract import ArrayLayout
from ._hip import check_device, is_hip
from ._layouts import check_layout_matches, declared_layouts
from ._rank import CREATE_KERNEL_THREADS, ranking_cache, within_launch_bounds
from ._summary import ranking_summary

#: What a launch-time kernel takes besides the device: the thread counts ranked, the performance model,
#: the registers per thread (default: the compiled kernel's), ``cache=None`` to keep nothing on disk, and
#: ``measure=False`` to launch the best-predicted block without timing the contenders.
LAUNCH_OPTIONS = ("threads", "model", "registers", "cache", "measure")


@dataclass(frozen=True)
class LaunchChoice:
    """The block chosen for one array layout, and why (the summary ``create_kernel`` puts in metadata).

    ``candidates``: the blocks still to time before the choice is final (the ranking's ``confidence.measure``;
    empty when the model is confident or the choice was measured); ``cache_key``: where the disk cache keeps
    it (None: not kept)."""

    block: tuple[int, int, int]
    device: str
    summary: Mapping[str, Any] = field(default_factory=dict)
    candidates: tuple[tuple[int, int, int], ...] = ()
    cache_key: str | None = field(default=None, compare=False)


class _Trial:
    """Timing the candidate blocks of one array layout over the next calls: the first call is a warm-up (it
    may compile and load the module), then one timed call per candidate."""

    def __init__(self, candidates: tuple[tuple[int, int, int], ...]) -> None:
        self.schedule = [candidates[0], *candidates]
        self.warm_up = True
        self.times_ms: dict[tuple[int, int, int], float] = {}

    @property
    def done(self) -> bool:
        return not self.schedule

    def fastest(self) -> tuple[int, int, int]:
        """The block of the shortest time (the first timed of equal ones)."""
        return min(self.times_ms, key=self.times_ms.__getitem__)


@dataclass(frozen=True)
class FieldArgument:
    """What a call must pass for one field: an array of ``spatial`` extents and then the ``index`` extents
    (None: symbolic, not checked), of ``fixed_shape`` where the field was declared with one, holding
    ``numpy_dtype`` (None: not known)."""

    name: str
    spatial: int
    index_dims: int
    index: tuple[int, ...] | None
    fixed_shape: tuple[int, ...] | None
    fixed_strides: tuple[int, ...] | None
    numpy_dtype: Any
    element: str
    dense: bool  # a field over the iteration space (generic, staggered): its array's dimensions are checked
    generic: bool  # a generic field: its spatial shape must equal the other generic fields' (as pystencils asks)


@dataclass(frozen=True)
class CallSignature:
    """The arguments of a pystencils kernel, read once per kernel (``Kernel.get_fields`` hashes every field at
    each call): its fields, and the names of its other parameters (``omega``)."""

    kernel_name: str
    fields: tuple[FieldArgument, ...]
    values: tuple[str, ...]

    @classmethod
    def of(cls, kernel: Any) -> CallSignature:
        from pystencils import FieldType

        from ._extract import field_element_types

        elements = field_element_types(kernel)
        fields = []
        for f in sorted(kernel.get_fields(), key=lambda f: f.name):
            index = tuple(f.index_shape)
            fixed_index = all(isinstance(n, int) or getattr(n, "is_Integer", False) for n in index)
            element = elements.get(f.name)
            numpy_dtype = getattr(element, "numpy_dtype", None)
            struct = numpy_dtype is not None and numpy_dtype.names is not None  # pystencils drops its last axis
            fields.append(FieldArgument(
                f.name, f.spatial_dimensions, len(index), tuple(int(n) for n in index) if fixed_index else None,
                tuple(int(n) for n in f.shape) if f.has_fixed_shape and not struct else None,
                tuple(int(n) for n in f.strides) if f.has_fixed_shape and not struct else None, numpy_dtype,
                str(element), f.field_type in (FieldType.GENERIC, FieldType.STAGGERED, FieldType.STAGGERED_FLUX),
                f.field_type == FieldType.GENERIC))
        values = tuple(p.name for p in kernel.parameters if not p.is_field_parameter)
        return cls(kernel.name, tuple(fields), values)


class UndescribableArrays(InputError):
    """Arrays right for the kernel that warpspeed cannot describe (a view with negative strides, or strides that
    are not whole elements): the launch is left to pystencils."""


def read_call(signature: CallSignature, arguments: Mapping[str, Any]) -> dict[str, ArrayLayout]:
    """Shape and strides (elements) of the array passed for each field, read once per call.

    A call that is wrong for the kernel is an :class:`InputError` naming the argument: a missing array or
    parameter value, an argument that is not an array, an array of another number of dimensions, other index
    extents (an LBM field's populations), another element type, fixed shape or fixed layout than the code was
    generated for, or generic fields of different spatial shapes. pystencils checks some of these at the launch
    and not others (index extents: the kernel would read past the array). A right call with arrays warpspeed
    cannot describe is an :class:`UndescribableArrays`."""
    names = [f.name for f in signature.fields]
    missing = [n for n in (*names, *signature.values) if arguments.get(n) is None]
    if missing:
        unexpected = sorted(set(arguments) - set(names) - set(signature.values))
        what = f"an array for its field '{missing[0]}'" if missing[0] in names else \
            f"a value for its parameter '{missing[0]}'"
        raise InputError(f"kernel '{signature.kernel_name}' was called without {what}; it takes "
                         f"{', '.join(sorted([*names, *signature.values]))}"
                         + (f" (unexpected: {', '.join(unexpected)})." if unexpected else "."))
    spatial_shapes = {}
    layouts: dict[str, ArrayLayout] = {}
    undescribable = None  # said once the call is known to be right
    for f in signature.fields:
        arr = arguments[f.name]
        where = f"kernel '{signature.kernel_name}': the argument for field '{f.name}'"
        try:
            shape = tuple(int(n) for n in arr.shape)
            dtype = arr.dtype
            itemsize = int(dtype.itemsize)
            byte_strides = tuple(int(s) for s in arr.strides)
            strides = tuple(s // itemsize for s in byte_strides)
        except (AttributeError, TypeError, ValueError, ZeroDivisionError):
            raise InputError(f"{where} is not an array ({type(arr).__name__}); pass a cupy array.") from None
        if f.dense and (len(shape) != f.spatial + f.index_dims
                        or (f.index is not None and shape[f.spatial:] != f.index)):
            needs = f"{f.spatial} spatial extents" + (f" and the index extents {list(f.index)}" if f.index else "")
            raise InputError(f"{where} has the shape {list(shape)}; the field needs {needs}.")
        if f.fixed_shape is not None and shape != f.fixed_shape:
            raise InputError(f"{where} has the shape {list(shape)}; the field was declared with the fixed shape "
                             f"{list(f.fixed_shape)}.")
        if f.numpy_dtype is not None and dtype != f.numpy_dtype:
            raise InputError(f"{where} holds {dtype}; the kernel was generated for {f.numpy_dtype} ({f.element}).")
        if f.fixed_strides is not None and strides != f.fixed_strides:
            raise InputError(f"{where} has the strides {list(strides)} (elements); the field was declared with the "
                             f"fixed strides {list(f.fixed_strides)} (its layout).")
        if f.generic and f.fixed_shape is None:
            spatial_shapes[f.name] = shape[:f.spatial]
        if undescribable is None and any(s <= 0 or s % itemsize for s in byte_strides) and any(n > 1 for n in shape):
            undescribable = (f"kernel '{signature.kernel_name}': the array for field '{f.name}' has the byte "
                             f"strides {list(byte_strides)}; warpspeed needs positive strides, whole elements apart.")
        layouts[f.name] = ArrayLayout(shape, tuple(max(s, 1) for s in strides))
    if len(set(spatial_shapes.values())) > 1:
        raise InputError(f"kernel '{signature.kernel_name}': the arrays have different spatial shapes "
                         f"({', '.join(f'{n}: {list(v)}' for n, v in spatial_shapes.items())}); pystencils launches "
                         "a kernel on arrays of one spatial shape.")
    if undescribable is not None:
        raise UndescribableArrays(undescribable)
    return layouts


def _compiled_registers(inner: Any, limit: int = MAX_REGISTERS) -> int | None:
    """Registers per thread of the compiled kernel (cupy's ``RawKernel.num_regs``; on ROCm the kernel's VGPRs,
    which HIP reports as ``numRegs``, up to ``limit`` = 512 there), None if unknown."""
    try:
        n = inner.raw_kernel.num_regs
    except Exception:  # no cupy kernel behind this wrapper, or the compiler failed: pystencils says why
        return None
    return n if isinstance(n, int) and not isinstance(n, bool) and 0 < n <= limit else None


def _checked_options(options: dict[str, Any]) -> dict[str, Any]:
    """``threads``, ``model`` and ``registers`` checked when the kernel is created: a bad one is the caller's
    mistake, not a launch the model cannot describe (which runs with pystencils' block)."""
    out = dict(options)  # the model is imported only where an option needs it: creating a kernel stays cheap
    if out.get("threads") is not None:
        import warpspeed

        threads = thread_counts(out["threads"])  # one int: that thread count alone
        if isinstance(threads, str | bytes) or not isinstance(threads, Sequence) or not threads or not all(
                isinstance(t, int) and not isinstance(t, bool) for t in threads):
            raise InputError(f"threads= of a launch-time kernel is a thread count per block or a list of them "
                             f"(e.g. 256 or (256, 512, 1024)), got {out['threads']!r}.")
        warpspeed.block_shapes(threads)  # counts that are not powers of two are refused, with the nearest ones
        out["threads"] = tuple(threads)
    if out.get("model") is not None:
        from warpspeed.plugin_api import performance_model

        performance_model(out["model"])
    registers_argument(out.get("registers"))
    return out


def _gpu_index(arrays: Mapping[str, Any]) -> int | None:
    """The CUDA device the arrays live on (cupy arrays say), None when they do not say."""
    for arr in arrays.values():
        index = getattr(getattr(arr, "device", None), "id", None)
        if isinstance(index, int):
            return index
    return None


class LaunchTimeJit(JitBase):
    """A pystencils JIT whose kernels choose their thread block at launch (see the module docstring).

    ``device``: a warpspeed device (id, path or ``Device``), or ``"auto"``: the shipped device matching the
    name cupy reports for the GPU the arrays are on. ``inner``: the JIT that compiles and launches
    (default ``pystencils.jit.CupyJit()``). ``options``: see :data:`LAUNCH_OPTIONS`.
    """

    def __init__(self, device: Any = "auto", inner: JitBase | None = None, **options: Any) -> None:
        unknown = sorted(set(options) - set(LAUNCH_OPTIONS))
        if unknown:
            raise InputError(f"launch-time block choice takes the options {', '.join(LAUNCH_OPTIONS)}; got "
                             f"{', '.join(unknown)}.")
        if options.get("cache", True) not in (True, None):
            raise InputError(f"cache= of a launch-time kernel is None (nothing on disk) or left out (the cache "
                             f"folder, $WARPSPEED_CACHE_DIR), got {options['cache']!r}.")
        if not isinstance(options.get("measure", True), bool):
            raise InputError(f"measure= of a launch-time kernel is True (time the blocks the model cannot tell "
                             f"apart at the first calls; the default) or False, got {options['measure']!r}.")
        options = _checked_options(options)
        if not (isinstance(device, str) and device == "auto"):
            import warpspeed

            device = warpspeed.device(device)  # a bad id fails here, not at the first launch
        self.device = device
        self.inner = inner
        self.options = dict(options)

    def compile(self, kernel: Any) -> LaunchTimeKernel:
        from pystencils import FieldType
        from pystencils.jit import CupyJit

        from ._extract import SCHEMES_DESCRIBED, linear_indexing, thread_axes

        fields = kernel.get_fields()
        spatial = max((f.spatial_dimensions for f in fields), default=0)
        sparse = any(f.field_type == FieldType.INDEXED for f in fields)  # one thread per index entry (boundaries)
        if not sparse and len(thread_axes(kernel.body)) < min(spatial, 3) and not linear_indexing(kernel):
            raise InputError(f"kernel '{kernel.name}': its {spatial} spatial coordinates are not on {spatial} thread "
                             f"axes; launch-time block choice: {SCHEMES_DESCRIBED}")
        if is_hip(kernel) and not isinstance(self.device, str):  # "auto": checked at the launch
            check_device(self.device, kernel.name)
        compiled = (self.inner or CupyJit()).compile(kernel)
        config = getattr(compiled, "launch_config", None)
        if not callable(getattr(config, "trim_block_size", None)):
            raise InputError(f"kernel '{kernel.name}': pystencils gave it a launch configuration "
                             f"({type(config).__name__}) that takes no block size; launch-time block choice needs "
                             "pystencils' dynamic one, which kernels of the Linear3D indexing scheme get unless a "
                             "manual launch grid is asked for or the kernel is a reduction.")
        return LaunchTimeKernel(kernel, compiled, self)

    def resolve_device(self, gpu_index: int | None) -> Any:
        """The warpspeed device for a launch on CUDA device ``gpu_index``."""
        if isinstance(self.device, str):
            from warpspeed import detected_device

            return detected_device(gpu_index)
        return self.device


class LaunchTimeKernel(KernelWrapper):
    """A compiled pystencils kernel that sets its block per GPU and array layout before each launch.

    ``choices`` maps each (CUDA device number, array layout) seen to its :class:`LaunchChoice`; an array
    layout is a tuple of (field, ``ArrayLayout``). ``choice_for(**arrays)`` tells the block a call would use
    without launching. Arrays warpspeed cannot describe (a strided view, say) run with pystencils' own
    block and a warning: the kernel runs wherever pystencils runs it.
    """

    def __init__(self, kernel: Any, compiled: KernelWrapper, jit: LaunchTimeJit) -> None:
        super().__init__(kernel, compiled)
        self.compiled = compiled
        self.jit = jit
        self.choices: dict[tuple[int | None, tuple[tuple[str, ArrayLayout], ...]], LaunchChoice] = {}
        self._devices: dict[int | None, Any] = {}
        self._trials: dict[tuple, _Trial] = {}
        self._block: tuple[int, int, int] | None = None  # the block of the last launch (None: pystencils' own)
        self.signature = CallSignature.of(kernel)
        self.hip = is_hip(kernel)
        from ._internals import launch_state

        self._pystencils_state = launch_state(compiled.launch_config)  # the launch as pystencils would make it

    @property
    def launch_config(self) -> Any:
        return self.compiled.launch_config

    def __call__(self, **kwargs: Any) -> None:
        key, choice = self._choice(kwargs)
        if "fallback" in choice.summary:  # arrays warpspeed cannot describe: pystencils' launch, untouched
            self._launch_as_pystencils()
            self.compiled(**kwargs)
            return
        if not choice.candidates:  # confident, measured, or measure=False (choose_block then lists none)
            self._set_block(choice.block)
            self.compiled(**kwargs)
            return
        trial = self._trials.setdefault(key, _Trial(choice.candidates))
        block = trial.schedule.pop(0)
        self._set_block(block)
        if trial.warm_up:
            trial.warm_up = False
            self.compiled(**kwargs)
        else:
            trial.times_ms[block] = _timed_ms(lambda: self.compiled(**kwargs))
        if trial.done:
            self.choices[key] = _measured_choice(choice, trial)
            del self._trials[key]

    def _set_block(self, block: tuple[int, int, int]) -> None:
        """Launch the next call with ``block``; pystencils would reuse the grid of arrays launched before with
        another block (``_internals.forget_launch_grids``)."""
        if block != self._block:
            from ._internals import forget_launch_grids

            forget_launch_grids(self.compiled)
            self._block = block
        self.compiled.launch_config.trim_block_size(block)

    def _launch_as_pystencils(self) -> None:
        """Launch the next call as pystencils would: its default block, untrimmed (``_internals`` says why this
        needs its launch configuration's state)."""
        from ._internals import forget_launch_grids, restore_launch_state

        if self._block is None:
            return
        forget_launch_grids(self.compiled)
        self._block = None
        if not restore_launch_state(self.compiled.launch_config, self._pystencils_state):
            self.compiled.launch_config.trim_block_size(self.compiled.launch_config.default_block_size)

    def choice_for(self, **arrays: Any) -> LaunchChoice:
        """The choice a call with these arrays uses (ranked at the first call per GPU and array layout); while
        its candidates are being timed, the best-predicted block with the candidates still listed."""
        return self._choice(arrays)[1]

    def _choice(self, arrays: Mapping[str, Any]) -> tuple[tuple, LaunchChoice]:
        index = _gpu_index(arrays)
        try:  # a wrong call (an InputError) is the caller's to mend, not a launch to fall back on
            layouts = read_call(self.signature, arrays)
        except UndescribableArrays as e:
            key = (index, ("unreadable", str(e)))
            return key, self._pystencils_default(key, e)
        key = (index, tuple(sorted(layouts.items())))
        if key not in self.choices:
            check_layout_matches(self.kernel, arrays=layouts)
            if index not in self._devices:
                self._devices[index] = self.jit.resolve_device(index)  # an unknown GPU is refused here
                if self.hip:  # a HIP kernel on an AMD GPU only (cupy on ROCm runs no other)
                    check_device(self._devices[index], self.kernel.name)
            try:
                self.choices[key] = choose_block(self.kernel, layouts, self._devices[index],
                                                 compiled_registers=_compiled_registers(
                                                     self.compiled, register_limit(self.hip)),
                                                 default_block=self._default_block(), **self.jit.options)
            except InputError as e:  # arrays or a kernel the description does not cover
                return key, self._pystencils_default(key, e)
        return key, self.choices[key]

    def _default_block(self) -> tuple[int, int, int]:
        return tuple(int(b) for b in self.compiled.launch_config.default_block_size)  # type: ignore[return-value]

    def _pystencils_default(self, key: tuple, why: InputError) -> LaunchChoice:
        """pystencils' own launch (its default block) for arrays warpspeed cannot describe, with a warning
        (once per array layout)."""
        import warnings

        if key not in self.choices:
            block = self._default_block()
            warnings.warn(f"warpspeed_pystencils: kernel '{self.kernel.name}' runs with pystencils' default block "
                          f"{block}: {why}", stacklevel=4)
            self.choices[key] = LaunchChoice(block, "", {"fallback": str(why)})
        return self.choices[key]


def _timed_ms(launch: Any) -> float:
    """Milliseconds one launch takes on the GPU, between two CUDA events on the current stream."""
    import cupy

    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    launch()
    end.record()
    end.synchronize()
    return float(cupy.cuda.get_elapsed_time(start, end))


def _measured_choice(choice: LaunchChoice, trial: _Trial) -> LaunchChoice:
    """The choice once its candidates are timed: the fastest, with the times in its summary (and on disk)."""
    block = trial.fastest()
    summary = {**choice.summary, "block": list(block), "chosen_by": "measurement",
               "measured_ms": [{"block": list(b), "time_ms": t} for b, t in trial.times_ms.items()]}
    measured = replace(choice, block=block, summary=summary, candidates=())
    if choice.cache_key is not None:
        _cache.write_json("launch-choices", choice.cache_key, _record(measured))
    return measured


def _record(choice: LaunchChoice) -> dict:
    return {"block": list(choice.block), "summary": dict(choice.summary),
            "candidates": [list(b) for b in choice.candidates]}


def choose_block(kernel: Any, layouts: Mapping[str, ArrayLayout], device: Any, *,
                 compiled_registers: int | None = None, threads: Sequence[int] | None = None,
                 model: str | None = None, registers: int | None = None, cache: Any = True,
                 measure: bool = True, default_block: Sequence[int] | None = None) -> LaunchChoice:
    """Rank the block shapes of a pystencils kernel for the given arrays on ``device`` (or read the choice
    back from the disk cache) and return the best-predicted one, with the blocks to time (``candidates``,
    the ranking's ``confidence.measure``) where the model cannot tell them apart and ``measure`` is on.
    ``default_block``: the block pystencils would launch (its launch configuration's), which the summary
    compares with (default: pystencils' default for the kernel's dimensionality)."""
    import warpspeed

    dev = device if isinstance(device, warpspeed.Device) else warpspeed.device(device)
    code = kernel.get_c_code()
    threads = within_launch_bounds(tuple(CREATE_KERNEL_THREADS if threads is None else threads), code)
    registers = registers_argument(registers, register_limit(is_hip(kernel)))
    regs, regs_source = ((registers, "the registers argument") if registers is not None else
                         (compiled_registers, "the compiled kernel (cupy RawKernel.num_regs)"))
    key = _cache.content_key("launch-choice", code, declared_layouts(kernel),
                             [(n, list(a.shape), list(a.strides)) for n, a in sorted(layouts.items())],
                             dev.to_dict(), regs, list(threads), model,
                             None if default_block is None else [int(b) for b in default_block],
                             _cache.model_version(), _cache.code_version())
    if cache is not None:
        found = _cache.read_json("launch-choices", key)
        if _valid_choice(found):
            candidates = tuple(tuple(b) for b in found["candidates"]) if measure else ()
            return LaunchChoice(tuple(found["block"]), dev.id, found["summary"], candidates, key)
    spec = describe_spec(kernel, None, arrays=layouts, registers=regs, registers_source=regs_source,
                         arch=arch_for(dev, hip=is_hip(kernel)))
    wkernel = warpspeed.kernel_from_dict(spec, source=f"pystencils:{spec['name']}")
    # pystencils trims each block extent to the iteration space: rank the blocks it launches, as it launches them;
    # a linear1d kernel's are one-dimensional blocks over the cells (None: warpspeed.rank's linear1d space)
    launched = None if wkernel.indexing == "linear1d" else \
        sorted({tuple(min(n, d) for n, d in zip(b, wkernel.domain, strict=True))
                for b in warpspeed.block_shapes(threads, max_dims=dev.max_block_dims)})
    options: dict[str, Any] = {"blocks": launched, "threads": threads, "screen": 1, "jobs": 1, "model": model,
                               "cache": ranking_cache(wkernel, dev) if cache is not None else None}
    ranking = warpspeed.rank(wkernel, dev, **options)
    best = ranking.best
    if best.error:
        raise InputError(f"kernel '{kernel.name}': no block shape can launch on {dev.id}: {best.error}")
    spatial = max(f.spatial_dimensions for f in kernel.get_fields())
    summary = ranking_summary(ranking, wkernel, spatial, model=model, folding_ranked=False,
                              default_block=default_block)
    summary["arrays"] = {n: {"shape": list(a.shape), "strides": list(a.strides)} for n, a in sorted(layouts.items())}
    summary["chosen_by"] = "model"
    conf = ranking.confidence
    candidates = tuple(tuple(int(b) for b in c.block) for c in conf.measure) if len(conf.measure) > 1 else ()
    choice = LaunchChoice(tuple(int(b) for b in best.configuration.block), dev.id, summary, candidates,
                          key if cache is not None else None)
    if cache is not None:
        _cache.write_json("launch-choices", key, _record(choice))
    return choice if measure else replace(choice, candidates=())


def _block(b: Any) -> bool:
    return (isinstance(b, list) and len(b) == 3
            and all(isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in b))


def _valid_choice(found: Any) -> bool:
    return (isinstance(found, dict) and isinstance(found.get("summary"), dict) and _block(found.get("block"))
            and isinstance(found.get("candidates"), list) and all(_block(b) for b in found["candidates"]))
