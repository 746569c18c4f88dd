"""The expression tree: integer constants, thread coordinates, sums, constant multiples, floor and mod; and its
text, which the parser reads back (``str()``), or ISL's quasi-affine syntax (:func:`render`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from warpspeed.errors import InputError

THREAD_VARS = ("tidx", "tidy", "tidz")


def _require_int(value: object, what: str) -> None:
    """Reject non-integers (and bools) in node fields: the tree is integer arithmetic only."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InputError(f"expression node: {what} must be an int, got {type(value).__name__}")


@dataclass(frozen=True)
class Expr:
    """Base class of all expression nodes; ``str()`` gives text that :func:`parse` reads back."""

    def __str__(self) -> str:
        return render(self, isl=False, names={})


@dataclass(frozen=True)
class Const(Expr):
    """Integer constant."""

    value: int

    def __post_init__(self) -> None:
        _require_int(self.value, "Const.value")


@dataclass(frozen=True)
class Var(Expr):
    """Variable; after parsing only one of ``THREAD_VARS``."""

    name: str

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise InputError("expression node: Var.name must be a non-empty str")


@dataclass(frozen=True)
class Add(Expr):
    """Sum of terms."""

    terms: tuple[Expr, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.terms, tuple) or not all(isinstance(t, Expr) for t in self.terms):
            raise InputError("expression node: Add.terms must be a tuple of Expr")


@dataclass(frozen=True)
class Mul(Expr):
    """Constant factor times an expression (products of two non-constants are not quasi-affine)."""

    factor: int
    expr: Expr

    def __post_init__(self) -> None:
        _require_int(self.factor, "Mul.factor")
        if not isinstance(self.expr, Expr):
            raise InputError("expression node: Mul.expr must be an Expr")


@dataclass(frozen=True)
class FloorDiv(Expr):
    """``floor(expr / divisor)`` with a positive constant divisor."""

    expr: Expr
    divisor: int

    def __post_init__(self) -> None:
        _check_divisor(self.expr, self.divisor, "FloorDiv")


@dataclass(frozen=True)
class Mod(Expr):
    """``expr mod divisor`` with a positive constant divisor; the result lies in ``[0, divisor)``."""

    expr: Expr
    divisor: int

    def __post_init__(self) -> None:
        _check_divisor(self.expr, self.divisor, "Mod")


def _check_divisor(expr: object, divisor: object, node: str) -> None:
    if not isinstance(expr, Expr):
        raise InputError(f"expression node: {node}.expr must be an Expr")
    _require_int(divisor, f"{node}.divisor")
    if divisor <= 0:  # type: ignore[operator]
        raise InputError(f"expression node: {node}.divisor must be positive, got {fmt_int(divisor)}")


def fmt_int(value: object) -> str:
    """Print an int, abbreviating huge ones (Python refuses to print ints over 4300 digits)."""
    if isinstance(value, int) and abs(value).bit_length() > 200:
        return "a number too large to show"
    return str(value)


# --- text: str() (which the parser reads back) and ISL quasi-affine syntax

def render(e: Expr, *, isl: bool, names: Mapping[str, str]) -> str:
    """The expression as text: the syntax the parser reads back, or ISL's quasi-affine syntax (``isl``), with
    variables renamed by ``names``."""
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
            return f"-{render(e.expr, isl=isl, names=names)}"
        return f"{e.factor}*{_operand(e.expr, isl=isl, names=names)}"
    if isinstance(e, FloorDiv):
        if isl:
            return f"floor(({render(e.expr, isl=isl, names=names)})/{e.divisor})"
        return f"{_operand(e.expr, isl=isl, names=names)} // {e.divisor}"
    if isinstance(e, Mod):
        if isl:
            return f"({render(e.expr, isl=isl, names=names)}) mod {e.divisor}"
        return f"{_operand(e.expr, isl=isl, names=names)} % {e.divisor}"
    raise InputError(f"expression node: unknown node type {type(e).__name__}")


def _operand(e: Expr, *, isl: bool, names: Mapping[str, str]) -> str:
    """Render ``e`` as an operand of ``*``, ``//`` or ``%``: parenthesized unless atomic."""
    text = render(e, isl=isl, names=names)
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
        return True, render(Mul(-term.factor, term.expr), isl=isl, names=names)
    if isinstance(term, Add) or (isl and isinstance(term, Mod)):
        return False, f"({render(term, isl=isl, names=names)})"
    return False, render(term, isl=isl, names=names)
