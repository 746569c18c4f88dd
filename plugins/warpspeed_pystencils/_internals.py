"""Every pystencils name the plugin uses that pystencils does not offer as public API, and why.

Everything else comes from pystencils' public modules: ``pystencils`` itself, ``pystencils.codegen``
(``Kernel``, ``GpuKernel``, ``Parameter``), ``pystencils.codegen.properties`` (``FieldBasePtr``, ``FieldShape``,
``FieldStride``: what pystencils' own deprecation notes point to for parameter roles), ``pystencils.types``,
``pystencils.jit`` (``JitBase``, ``KernelWrapper``, ``CupyJit``) and ``pystencils.sympyextensions``. The field
layouts are parsed by the plugin itself (``_extract.layout_orders``).

What remains, checked against pystencils 2.0 (Python 3.11) and 2.1 (Python 3.12) by the plugin's tests in CI:

- The kernel's AST node classes. pystencils 2.x offers no public reading of what a generated kernel does:
  ``Kernel.body`` is documented, but it returns the backend's AST (``pystencils.backend.ast``: developer API).
  The memory accesses, their offsets and the iteration-space guard are read from these nodes, so the
  description follows the code that runs, not the assignments it came from.
- ``GpuOptions.get_default_block_size``: pystencils' own default block for a dimensionality (what a kernel
  runs with when nobody chooses), reported beside warpspeed's choice. ``GpuOptions`` is reachable only
  through ``pystencils.codegen.config``.
- ``get_pystencils_include_path``: the headers pystencils' generated code includes, needed to compile that
  code for ``warpspeed measure`` exactly as pystencils' cupy JIT does.
- The cupy kernel wrapper's argument cache (``_args_cache``). It keys the launch grid on the launch
  configuration's ``jit_cache_key()`` and the arrays' ids, and the dynamic launch configuration's key is
  ``()`` in 2.0 and 2.1: after ``trim_block_size`` the same arrays launch with the block computed before.
  A launch-time kernel that changes the block for arrays it has launched (timing candidate blocks) clears
  it (:func:`forget_launch_grids`).
"""

from pystencils.backend.ast import expressions, structural
from pystencils.codegen.config import GpuOptions
from pystencils.include import get_pystencils_include_path

#: The node classes the plugin reads (checked in the tests against both pystencils releases).
AST_NODES = tuple(getattr(module, name) for module, names in (
    (expressions, ("PsAdd", "PsAnd", "PsBufferAcc", "PsCall", "PsCast", "PsConstantExpr", "PsDiv", "PsExpression",
                   "PsGe", "PsGt", "PsIntDiv", "PsLe", "PsLiteralExpr", "PsLt", "PsMemAcc", "PsMul", "PsNeg", "PsRem",
                   "PsSub", "PsSymbolExpr", "PsTernary")),
    (structural, ("PsAssignment", "PsBlock", "PsConditional", "PsDeclaration"))) for name in names)


def default_block_size(spatial_dims: int) -> tuple[int, int, int]:
    """The block pystencils launches a kernel of ``spatial_dims`` dimensions with when none is chosen."""
    return tuple(int(b) for b in GpuOptions.get_default_block_size(spatial_dims))  # type: ignore[return-value]


def forget_launch_grids(wrapper: object) -> None:
    """Make pystencils' cupy kernel wrapper compute its launch grid afresh at the next call (the module
    docstring says why); a wrapper without the cache is left alone."""
    cache = getattr(wrapper, "_args_cache", None)
    if isinstance(cache, dict):
        cache.clear()


__all__ = ["AST_NODES", "default_block_size", "expressions", "forget_launch_grids", "get_pystencils_include_path",
           "structural"]
