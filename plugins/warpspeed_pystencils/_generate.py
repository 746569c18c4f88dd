"""pystencils' code generation as the plugin calls it: a CUDA (or HIP) kernel from assignments, without a JIT (no cupy
needed) or with a chosen block, pystencils' errors and what warpspeed does not describe (reductions, a CPU
target) reported as an ``InputError``."""

from __future__ import annotations

from typing import Any

from ._errors import input_error


def as_kernel(obj: Any, config: Any = None) -> tuple[Any, list | None]:
    """(GpuKernel, assignments or None): create a CUDA kernel (no JIT) when given assignments; a HIP one where
    ``config`` targets HIP."""
    import pystencils as ps
    from pystencils.codegen import GpuKernel, Kernel

    if isinstance(obj, GpuKernel):
        return obj, None
    if isinstance(obj, Kernel):
        raise input_error(f"pystencils kernel '{obj.name}' targets {obj.target}, not a GPU: create it with "
                          "target=ps.Target.CUDA (jit=ps.no_jit works without a GPU), or pass the assignments.")
    refuse_reductions(obj)
    if isinstance(obj, ps.AssignmentCollection):
        assignments = list(obj.all_assignments)
    elif isinstance(obj, ps.Assignment):
        assignments = [obj]
    elif isinstance(obj, list | tuple) and obj and all(isinstance(a, ps.Assignment) for a in obj):
        assignments = list(obj)
    else:
        raise input_error("pystencils plugin: expected a pystencils GpuKernel, an AssignmentCollection (e.g. an "
                          f"lbmpy update rule) or a list of Assignments, got {_what_is(obj)}.")
    cfg = config.copy() if config is not None else ps.CreateKernelConfig()
    cfg.target = ps.Target.HIP if cfg.get_option("target") == ps.Target.HIP else ps.Target.CUDA
    cfg.jit = ps.no_jit
    return created(obj if isinstance(obj, ps.AssignmentCollection) else assignments, cfg), assignments


def created(assignments: Any, cfg: Any) -> Any:
    """``pystencils.create_kernel``, its errors on bad assignments (of many kinds) as an ``InputError``."""
    import pystencils as ps

    try:
        return ps.create_kernel(assignments, cfg)
    except Exception as e:
        raise input_error(f"pystencils could not create a {cfg.get_option('target').name} kernel from the assignments: "
                          f"{type(e).__name__}: {e}") from None


def with_block(assignments: Any, base: Any, block: tuple[int, ...], meta: dict) -> Any:
    """pystencils' kernel of ``assignments`` with ``block`` as its default block size and warpspeed's estimate
    (``meta``) in its metadata."""
    import pystencils as ps

    cfg = base.copy()
    cfg.gpu.default_block_size = block
    kernel = ps.create_kernel(assignments, cfg)
    kernel.metadata["warpspeed"] = meta
    return kernel


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


def refuse_reductions(assignments: Any) -> None:
    """An ``InputError`` where assignments (a list or an AssignmentCollection) hold a reduction."""
    import pystencils as ps

    items = assignments.all_assignments if isinstance(assignments, ps.AssignmentCollection) else assignments
    if isinstance(items, list | tuple) and any(_is_reduction(a) for a in items):
        raise input_error("pystencils plugin: the assignments hold a reduction "
                          f"({next(type(a).__name__ for a in items if _is_reduction(a))}); reductions are not "
                          "described by warpspeed.")


def check_gpu_target(config: Any) -> None:
    """An ``InputError`` where a ``CreateKernelConfig`` targets no GPU."""
    target = config.get_target()
    if not target.is_gpu():
        raise input_error(f"create_kernel chooses GPU block sizes, but the config targets {target}; use "
                          "target=ps.Target.CUDA (or HIP).")
