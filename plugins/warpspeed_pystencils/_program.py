"""pystencils' own CUDA code as a ``warpspeed.plugin_api.CudaProgram``: what ``warpspeed measure`` launches.

The source is the one pystencils' cupy JIT compiles (its headers, ``RESTRICT``, ``extern "C"``); the arrays
are the fields at the allocated shape and layout the model was given, and the argument list follows
``kernel.parameters``: field pointers, the concrete sizes and strides (from the same ``Extractor`` that
``describe`` uses, so the model and the run see one memory layout) and the scalar parameters.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ._errors import input_error
from ._generate import as_kernel

if TYPE_CHECKING:
    from warpspeed.plugin_api import CudaProgram

#: Every array starts at this value: a finite, non-zero state (an LBM cell of density 0.1 * Q at rest).
DEFAULT_FILL = 0.1
#: Value of a floating-point scalar parameter that is not given (a valid LBM relaxation rate).
DEFAULT_SCALAR = 1.0


def _renamed(code: str, name: str) -> str:
    """The kernel source with its function called ``warpspeed.plugin_api.NAME_TOKEN``."""
    from warpspeed.plugin_api import NAME_TOKEN

    pattern = re.compile(rf"(\bvoid\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?){re.escape(name)}(\s*\()")
    out, n = pattern.subn(rf"\g<1>{NAME_TOKEN}\g<2>", code, count=1)
    if n != 1:
        raise input_error(f"pystencils kernel '{name}': its function definition was not found in the generated code.")
    return out


def _source(kernel: Any) -> tuple[str, tuple[str, ...]]:
    """Translation unit and NVRTC options, as pystencils' cupy JIT builds them."""
    from ._internals import get_pystencils_include_path

    headers = {"<cuda/std/cstdint>"} | set(kernel.required_headers)
    headers.discard('"pystencils_runtime/half.h"')
    prelude = "\n".join(f"#include {h}" for h in sorted(headers))
    code = f'{prelude}\n\n#define RESTRICT __restrict__\n\nextern "C" {_renamed(kernel.get_c_code(), kernel.name)}'
    return code, ("-w", "-std=c++17", f"-I{get_pystencils_include_path()}")


def _kind(param: Any) -> str:
    """The argument type of a scalar parameter (``warpspeed.plugin_api.ARG_TYPES`` less ``array``)."""
    from warpspeed.plugin_api import ARG_TYPES

    numpy_kinds = set(ARG_TYPES) - {"array"}
    np_dtype = getattr(param.dtype, "numpy_dtype", None)
    kind = getattr(np_dtype, "name", None)
    if kind not in numpy_kinds:
        raise input_error(f"pystencils kernel parameter '{param.name}' has the type {param.dtype}; warpspeed measure "
                         f"passes {', '.join(sorted(numpy_kinds))} and field pointers.")
    return kind


def program_of(kernel: Any, shape: Sequence[int], *, layout: str | None, index_layout: str | None, name: str,
               scalars: Mapping[str, float] | None = None, fill: float = DEFAULT_FILL) -> CudaProgram:
    """The ``pystencils`` CudaProgram of a pystencils GpuKernel on arrays of ``shape`` (allocated, x first)."""
    from warpspeed.plugin_api import ArraySpec, CudaProgram

    from ._extract import Extractor
    from ._internals import FieldBasePtr, FieldShape, FieldStride  # parameter roles: see _internals for why

    scalars = dict(scalars or {})
    ex = Extractor(kernel, shape, layout, index_layout, name)
    arrays = tuple(ArraySpec(f.name, f.element_bytes, math.prod(f.shape), 0, float(fill)) for f in ex.fields.values())
    index = {a.name: i for i, a in enumerate(arrays)}
    args: list[tuple[str, int | float]] = []
    for p in kernel.parameters:
        props = list(p.properties)
        ptr = [q for q in props if isinstance(q, FieldBasePtr)]
        if ptr:
            args.append(("array", index[ptr[0].field.name]))
        elif any(isinstance(q, FieldShape | FieldStride) for q in props):
            if p.name not in ex.values:
                raise input_error(f"pystencils kernel '{name}': no value for the size/stride parameter '{p.name}'.")
            args.append((_kind(p), int(ex.values[p.name])))
        else:
            kind = _kind(p)
            if p.name not in scalars and not kind.startswith("float"):
                raise input_error(f"pystencils kernel '{name}': give a value for the integer parameter '{p.name}' "
                                 "(scalars={...}).")
            args.append((kind, scalars.pop(p.name, DEFAULT_SCALAR)))
    if scalars:
        raise input_error(f"pystencils kernel '{name}': unknown scalar parameter(s) {sorted(scalars)}; the kernel "
                         f"takes {[p.name for p in kernel.parameters if not p.properties] or 'none'}.")
    source, options = _source(kernel)
    return CudaProgram("pystencils", source, arrays, tuple(args), options)


def cuda_program(kernel_or_assignments: Any, shape: Sequence[int], *, layout: str | None = None,
                 index_layout: str | None = None, name: str | None = None, config: Any = None,
                 scalars: Mapping[str, float] | None = None, fill: float | None = None) -> CudaProgram:
    """pystencils' CUDA code of a kernel (or of assignments) for ``warpspeed measure``.

    ``shape``, ``layout``, ``index_layout`` and ``config`` as in ``describe`` (use the same values, so that
    the run and the model share the memory layout). Floating-point scalar parameters (``omega``) default to
    ``DEFAULT_SCALAR``; every array starts at ``fill`` (None: ``DEFAULT_FILL``).
    """
    from ._hip import is_hip

    if is_hip(config):  # a CUDA program of the assignments, as with any config
        import pystencils as ps

        config = config.copy()
        config.target = ps.Target.CUDA
    kernel, _ = as_kernel(kernel_or_assignments, config)
    return program_of(kernel, shape, layout=layout, index_layout=index_layout, name=name or kernel.name,
                      scalars=scalars, fill=DEFAULT_FILL if fill is None else fill)
