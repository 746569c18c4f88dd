"""Expressions as text: ``str()`` (which the parser reads back) and ISL quasi-affine syntax."""

from __future__ import annotations

from collections.abc import Mapping

from warpspeed.errors import InputError

from .tree import Add, Const, Expr, FloorDiv, Mod, Mul, Var


def _render(e: Expr, *, isl: bool, names: Mapping[str, str]) -> str:
    if isinstance(e, Const):
        return str(e.value)
    if isinstance(e, Var):
        return names.get(e.name, e.name)
    if isinstance(e, Add):
        if not e.terms:
            return "0"
        parts: list[str] = []
        for i, term in enumerate(e.terms):
            negative, text = _signed_term(term, isl=isl, names=names)
            if i == 0:
                parts.append(f"-{text}" if negative else text)
            else:
                parts.append(f" - {text}" if negative else f" + {text}")
        return "".join(parts)
    if isinstance(e, Mul):
        if e.factor == -1 and isinstance(e.expr, Var):
            return f"-{_render(e.expr, isl=isl, names=names)}"
        return f"{e.factor}*{_operand(e.expr, isl=isl, names=names)}"
    if isinstance(e, FloorDiv):
        if isl:
            return f"floor(({_render(e.expr, isl=isl, names=names)})/{e.divisor})"
        return f"{_operand(e.expr, isl=isl, names=names)} // {e.divisor}"
    if isinstance(e, Mod):
        if isl:
            return f"({_render(e.expr, isl=isl, names=names)}) mod {e.divisor}"
        return f"{_operand(e.expr, isl=isl, names=names)} % {e.divisor}"
    raise InputError(f"expression node: unknown node type {type(e).__name__}")


def _operand(e: Expr, *, isl: bool, names: Mapping[str, str]) -> str:
    """Render ``e`` as an operand of ``*``, ``//`` or ``%``: parenthesized unless atomic."""
    text = _render(e, isl=isl, names=names)
    if isinstance(e, Var) or (isinstance(e, Const) and e.value >= 0) or (isl and isinstance(e, FloorDiv)):
        return text
    return f"({text})"


def _signed_term(term: Expr, *, isl: bool, names: Mapping[str, str]) -> tuple[bool, str]:
    """A summand as (is_negative, text of its magnitude), so sums read ``a - 2*b`` not ``a + -2*b``."""
    if isinstance(term, Const) and term.value < 0:
        return True, str(-term.value)
    if isinstance(term, Mul) and term.factor < 0:
        if term.factor == -1:
            return True, _operand(term.expr, isl=isl, names=names)
        return True, _render(Mul(-term.factor, term.expr), isl=isl, names=names)
    if isinstance(term, Add) or (isl and isinstance(term, Mod)):
        return False, f"({_render(term, isl=isl, names=names)})"
    return False, _render(term, isl=isl, names=names)
