"""The expression tree: integer constants, thread coordinates, sums, constant multiples, floor and mod."""

from __future__ import annotations

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
        from .render import _render  # render imports the tree: bind at call time

        return _render(self, isl=False, names={})


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
        raise InputError(f"expression node: {node}.divisor must be positive, got {_fmt_int(divisor)}")


def _fmt_int(value: object) -> str:
    """Print an int, abbreviating huge ones (Python refuses to print ints over 4300 digits)."""
    if isinstance(value, int) and abs(value).bit_length() > 200:
        return "a number too large to show"
    return str(value)
