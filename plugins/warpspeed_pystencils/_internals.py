"""Every pystencils name the plugin uses that pystencils does not offer as public API, and why.

Everything else comes from pystencils' documented modules: ``pystencils`` itself, ``pystencils.codegen``
(``Kernel``, ``GpuKernel``, ``Parameter``, ``GpuKernel.get_launch_configuration``), ``pystencils.codegen.config``
(``GpuOptions``), ``pystencils.types``, ``pystencils.jit`` (``JitBase``, ``KernelWrapper``, ``CupyJit``) and
``pystencils.sympyextensions``. The field layouts are parsed by the plugin itself (``_extract.layout_orders``).

What remains, checked against pystencils 2.0 (Python 3.11) and 2.1 (Python 3.12) by the plugin's tests in CI:

- The kernel's AST node classes. pystencils 2.x offers no public reading of what a generated kernel does:
  ``Kernel.body`` is documented, but it returns the backend's AST (``pystencils.backend.ast``: developer API).
  The memory accesses, their offsets and the iteration-space guard are read from these nodes, so the
  description follows the code that runs, not the assignments it came from.
- The roles of kernel parameters (``FieldBasePtr``, ``FieldShape``, ``FieldStride`` of
  ``pystencils.codegen.properties``): which parameter is which field's pointer, extent or stride. pystencils'
  deprecation notes point to them (``param.get_properties(FieldBasePtr)``), but the module is not on its API
  pages and has no ``__all__``.
- ``get_pystencils_include_path``: the headers pystencils' generated code includes, needed to compile that
  code for ``warpspeed measure`` exactly as pystencils' cupy JIT does.
- The cupy kernel wrapper's argument cache (``_args_cache``). It keys the launch grid on the launch
  configuration's ``jit_cache_key()`` and the arrays' ids, and the dynamic launch configuration's key is
  ``()`` in 2.0 and 2.1: after ``trim_block_size`` the same arrays launch with the block computed before.
  A launch-time kernel that changes the block for arrays it has launched (timing candidate blocks) clears
  it (:func:`forget_launch_grids`).
- The dynamic launch configuration's block state (``_init_block_size``, ``_compute_block_size``). Its public
  ``trim_block_size`` sets a block, but nothing public returns the configuration to pystencils' own default
  (the untrimmed ``default_block_size``): a launch-time kernel that cannot describe a call's arrays
  launches it exactly as pystencils would (:func:`launch_state`, :func:`restore_launch_state`).
"""

from typing import Any

from pystencils.backend.ast import expressions, structural
from pystencils.codegen.properties import FieldBasePtr, FieldShape, FieldStride
from pystencils.include import get_pystencils_include_path

#: The node classes the plugin reads (checked in the tests against both pystencils releases).
AST_NODES = tuple(getattr(module, name) for module, names in (
    (expressions, ("PsAdd", "PsAnd", "PsBufferAcc", "PsCall", "PsCast", "PsConstantExpr", "PsDiv", "PsExpression",
                   "PsGe", "PsGt", "PsIntDiv", "PsLe", "PsLiteralExpr", "PsLt", "PsMemAcc", "PsMul", "PsNeg", "PsRem",
                   "PsSub", "PsSymbolExpr", "PsTernary")),
    (structural, ("PsAssignment", "PsBlock", "PsConditional", "PsDeclaration", "PsLoop"))) for name in names)


def forget_launch_grids(wrapper: object) -> None:
    """Make pystencils' cupy kernel wrapper compute its launch grid afresh at the next call (the module
    docstring says why); a wrapper without the cache is left alone."""
    cache = getattr(wrapper, "_args_cache", None)
    if isinstance(cache, dict):
        cache.clear()


_BLOCK_STATE = ("_init_block_size", "_compute_block_size")


def launch_state(config: object) -> dict[str, Any] | None:
    """The block state of a dynamic launch configuration as pystencils made it (None: not the known form)."""
    if not all(hasattr(config, name) for name in _BLOCK_STATE):
        return None
    return {name: getattr(config, name) for name in _BLOCK_STATE}


def restore_launch_state(config: object, state: dict[str, Any] | None) -> bool:
    """Put back the block state :func:`launch_state` read; False where there is none to put back."""
    if state is None:
        return False
    for name, value in state.items():
        setattr(config, name, value)
    return True


__all__ = ["AST_NODES", "FieldBasePtr", "FieldShape", "FieldStride", "expressions", "forget_launch_grids",
           "get_pystencils_include_path", "launch_state", "restore_launch_state", "structural"]
