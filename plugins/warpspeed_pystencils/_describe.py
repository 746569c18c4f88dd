"""A pystencils kernel described for warpspeed: the kernel description (the dict of a kernel TOML, then a
``warpspeed.Kernel``) for arrays of a shape or the arrays of a launch, with the registers per thread counted by
nvcc beside the description (or guessed, to use the wait)."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from ._arguments import register_limit, registers_argument
from ._errors import input_error
from ._generate import as_kernel
from ._layouts import check_layout_matches

DEFAULT_ARCH = "sm_80"
#: The options of ``rank_block_sizes`` and ``create_kernel`` that go to the description.
DESCRIBE_KEYS = ("name", "index_layout", "arch", "config")


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
    ``registers``: per thread; when None they come from ``nvcc -arch=<arch> --resource-usage`` (cached; for a
    HIP kernel from ROCm's ``hipcc --offload-arch=<arch>``), else warpspeed's default is assumed with a warning;
    ``arch`` defaults to the compute capability of ``device`` (a warpspeed device id or ``Device``; for a HIP
    kernel an AMD one, its ``gfx942``) where one is given, else ``sm_80`` (a HIP kernel needs ``device``,
    ``arch`` or ``registers``). Every load and store becomes a
    warpspeed access in
    ``tidx, tidy, tidz`` (deduplicated), the iteration space comes from the kernel's guard, flops from
    ``count_operations`` on the assignments (else from the AST). Bad input raises ``warpspeed.InputError``.
    """
    if arch is None:
        arch = _arch_of(kernel_or_assignments, config, device, registers)
    return describe_kernel(kernel_or_assignments, shape, layout=layout, registers=registers, name=name,
                           index_layout=index_layout, arch=arch, config=config)


def _arch_of(kernel_or_assignments: Any, config: Any, device: Any, registers: int | None) -> str:
    """``describe``'s default ``arch``: the device's, else ``sm_80`` for CUDA; a HIP kernel (or assignments with
    a HIP config) without a device is refused where its registers are to be counted: an AMD device has no
    default, and an NVIDIA one would count them for another compiler."""
    from ._hip import amd_device_ids, is_hip

    hip = is_hip(kernel_or_assignments) or is_hip(config)
    if device is not None:
        return arch_for(device, hip=hip)
    if hip and registers is None:
        raise input_error(f"describing a HIP kernel counts its registers with ROCm's compiler for an AMD GPU: pass "
                          f"device= (an AMD device: {', '.join(amd_device_ids())}), arch='gfx942' or registers=N.")
    return DEFAULT_ARCH


def arch_for(device: Any, *, hip: bool = False) -> str:
    """The compiler's architecture for a warpspeed device (id or Device): for nvcc ``-arch``, compute capability
    8.0 -> ``sm_80``; for a HIP kernel (``hip``) the AMD device's ``gfx942`` (a device of another vendor refused,
    see ``_hip.check_device``)."""
    import warpspeed

    dev = warpspeed.device(device) if not isinstance(device, warpspeed.Device) else device
    if hip:
        from ._hip import check_device, hip_arch

        return hip_arch(check_device(dev))
    cc = str(getattr(dev, "compute_capability", "") or "")
    digits = cc.replace(".", "")
    return f"sm_{digits}" if digits.isdigit() else DEFAULT_ARCH


def describe_kernel(kernel_or_assignments: Any, shape: Sequence[int], *, layout: str | None = None,
                    registers: int | None = None, name: str | None = None, index_layout: str | None = None,
                    arch: str = DEFAULT_ARCH, config: Any = None, fallback_registers: int | None = None,
                    made: tuple[Any, list | None] | None = None,
                    meanwhile: Callable[[Any, Callable[[], bool]], None] | None = None, count: Any = None) -> Any:
    """``describe``; ``meanwhile(kernel, running)``: called with the warpspeed kernel, its registers guessed
    (``fallback_registers``, else :func:`guessed_registers`), while nvcc counts the real ones; ``count``: the
    ``_registers.RegisterCount`` of the kernel where the caller started it already."""
    spec = describe_spec(kernel_or_assignments, shape, layout=layout, registers=registers, name=name,
                         index_layout=index_layout, arch=arch, config=config, fallback_registers=fallback_registers,
                         made=made, meanwhile=None if meanwhile is None else partial(
                             _with_guessed_registers, meanwhile, fallback_registers), count=count)
    return as_warpspeed_kernel(spec)


def as_warpspeed_kernel(spec: dict) -> Any:
    """The ``warpspeed.Kernel`` of a description, its source named after the pystencils kernel."""
    import warpspeed

    return warpspeed.kernel_from_dict(spec, source=f"pystencils:{spec['name']}")


def _with_guessed_registers(meanwhile: Callable[[Any, Callable[[], bool]], None], guess: int | None, spec: dict,
                            running: Callable[[], bool]) -> None:
    """``meanwhile`` called with the kernel of ``spec`` and its registers guessed (``guess``, else
    :func:`guessed_registers`), where that guess describes a kernel."""
    from warpspeed import InputError

    try:
        kernel = as_warpspeed_kernel(dict(spec, registers=guess or guessed_registers(spec)))
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


def describe_spec(kernel_or_assignments: Any, shape: Sequence[int] | None, *, layout: str | None = None,
                  registers: int | None = None, name: str | None = None, index_layout: str | None = None,
                  arch: str = DEFAULT_ARCH, config: Any = None, fallback_registers: int | None = None,
                  arrays: Any = None, registers_source: str = "the registers argument",
                  made: tuple[Any, list | None] | None = None,
                  meanwhile: Callable[[dict, Callable[[], bool]], None] | None = None, count: Any = None) -> dict:
    """The warpspeed kernel description (the dict of a kernel TOML) of ``describe``; ``arrays`` (field name ->
    ``_extract.ArrayLayout``) replace ``shape`` and the layouts by the arrays of a launch; ``made``: what
    ``as_kernel`` already gave for ``kernel_or_assignments`` and ``config``; ``meanwhile(spec, running)``
    is called where nvcc still counts the registers once the rest is described (``spec`` without
    ``registers``; ``running()`` says whether nvcc still runs), to use the wait; ``count``: the kernel's
    ``_registers.RegisterCount``, where the caller started it (else it starts here)."""
    from . import _extract, _registers

    registers = registers_argument(registers, register_limit(_registers.is_hip_arch(arch)))
    if any(v is not None and not isinstance(v, str) for v in (layout, index_layout)):
        raise input_error(f"layout and index_layout must be layout names such as 'c' or 'fzyx' (or None: the "
                          f"fields' declared layouts), got {layout!r}, {index_layout!r}.")
    kernel, assignments = made if made is not None else as_kernel(kernel_or_assignments, config)
    name = name or kernel.name
    if registers is not None and count is not None:
        count.cancel()  # the registers are given: nvcc's count is not needed
        count = None
    elif count is None and registers is None:
        count = _registers.RegisterCount(kernel.get_c_code(), arch)  # nvcc starts now
    try:
        if arrays is None:
            check_layout_matches(kernel, layout, stacklevel=5, index_layout=index_layout)  # at the caller
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

            tool = "hipcc (ROCm)" if _registers.is_hip_arch(arch) else "nvcc"
            warnings.warn(f"warpspeed_pystencils: registers per thread of kernel '{name}' unknown ({source}); "
                          f"warpspeed assumes {DEFAULT_REGISTERS}. Pass registers=N or put {tool} on PATH.",
                          stacklevel=3)
            source = f"unknown ({source}): warpspeed's default {DEFAULT_REGISTERS}"
    spec["description"] += f"; registers from {source}"
    return spec
