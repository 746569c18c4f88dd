"""The operations the estimator needs: simplify, substitute, affine coefficients, numpy evaluation,
interval bounds over a box, ISL text."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from warpspeed.errors import InputError

from .linear import Lin, lin_to_expr, to_lin
from .tree import THREAD_VARS, Add, Const, Expr, FloorDiv, Mod, Mul, Var, render


def simplify(e: Expr) -> Expr:
    """Canonical form of ``e``: equal affine functions (and many quasi-affine ones) compare equal."""
    return lin_to_expr(to_lin(e))


def substitute(e: Expr, mapping: Mapping[str, Expr]) -> Expr:
    """Replace variables by expressions (e.g. ``tidy -> 2*tidy + 1`` for thread folding); simplified."""
    subst = {name: to_lin(value) for name, value in mapping.items()}
    return lin_to_expr(to_lin(e, subst))


def variables(e: Expr) -> frozenset[str]:
    """Names of the variables that occur in the tree ``e`` (as written, not after simplification)."""
    if isinstance(e, Var):
        return frozenset((e.name,))
    if isinstance(e, Const):
        return frozenset()
    if isinstance(e, Add):
        return frozenset().union(*(variables(t) for t in e.terms))
    if isinstance(e, Mul | FloorDiv | Mod):
        return variables(e.expr)
    raise InputError(f"expression node: unknown node type {type(e).__name__}")


def is_affine(e: Expr) -> bool:
    """Whether ``e`` simplifies to a plain affine function of its variables (no floor/mod left)."""
    return all(isinstance(atom, Var) for atom in to_lin(e).terms)


def affine_form(e: Expr) -> tuple[tuple[int, int, int], int] | None:
    """Coefficients of ``(tidx, tidy, tidz)`` and the constant if ``e`` is affine, else None.

    A variable other than the thread coordinates is an error, since it has no coefficient slot.
    """
    lin = to_lin(e)
    coeffs = dict.fromkeys(THREAD_VARS, 0)
    for atom, coeff in lin.terms.items():
        if not isinstance(atom, Var):
            return None
        if atom.name not in coeffs:
            raise InputError(f"affine_form: variable {atom.name!r} is not one of {', '.join(THREAD_VARS)}")
        coeffs[atom.name] = coeff
    return (coeffs["tidx"], coeffs["tidy"], coeffs["tidz"]), lin.const


def evaluate(e: Expr, env: Mapping[str, np.ndarray | int]) -> np.ndarray | int:
    """Value of ``e`` with floor semantics for ``//`` and ``%``, vectorized over int64 arrays.

    Returns an int when every value in ``env`` is a scalar, otherwise an int64 array with the
    broadcast shape of all array values in ``env`` (so a constant expression still covers the grid).
    """
    values: dict[str, np.ndarray | int] = {}
    shapes: list[tuple[int, ...]] = []
    for name, value in env.items():
        if isinstance(value, int | np.integer) and not isinstance(value, bool):
            values[name] = int(value)
        else:
            arr = np.asarray(value)
            if arr.dtype.kind not in "iu":
                raise InputError(f"evaluate: value of {name!r} must be integers, got dtype {arr.dtype}")
            values[name] = arr.astype(np.int64, copy=False)
            shapes.append(arr.shape)
    result = _eval(e, values)
    if not shapes:
        return int(result)
    try:
        shape = np.broadcast_shapes(*shapes)
        out = np.broadcast_to(np.asarray(result, dtype=np.int64), shape)
    except ValueError as exc:
        raise InputError(f"evaluate: variable arrays do not broadcast together: {exc}") from None
    return np.array(out)


def _eval(e: Expr, env: Mapping[str, np.ndarray | int]) -> np.ndarray | int:
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Var):
        if e.name not in env:
            raise InputError(f"evaluate: no value for variable {e.name!r}")
        return env[e.name]
    if isinstance(e, Add):
        total: np.ndarray | int = 0
        for term in e.terms:
            total = total + _eval(term, env)
        return total
    if isinstance(e, Mul):
        return e.factor * _eval(e.expr, env)
    if isinstance(e, FloorDiv):
        value = _eval(e.expr, env)
        return value // e.divisor if isinstance(value, int) else np.floor_divide(value, e.divisor)
    if isinstance(e, Mod):
        value = _eval(e.expr, env)
        return value % e.divisor if isinstance(value, int) else np.mod(value, e.divisor)
    raise InputError(f"expression node: unknown node type {type(e).__name__}")


def bounds(e: Expr, box: Mapping[str, tuple[int, int]]) -> tuple[int, int]:
    """Inclusive ``(min, max)`` of ``e`` over the integer points of ``box`` (``var -> (lo, hi)``).

    Exact for affine expressions; floor and mod terms use interval arithmetic, which is
    conservative (never tighter than the truth) because atoms are treated as independent.
    """
    for name, span in box.items():
        if (
            not isinstance(span, tuple | list)
            or len(span) != 2
            or not all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in span)
        ):
            raise InputError(f"bounds: box entry for {name!r} must be a pair of ints (lo, hi), got {span!r}")
        if span[0] > span[1]:
            raise InputError(f"bounds: box entry for {name!r} is empty: lo {span[0]} > hi {span[1]}")
    clean = {name: (int(lo), int(hi)) for name, (lo, hi) in box.items()}
    return _lin_bounds(to_lin(e), clean)


def _lin_bounds(a: Lin, box: Mapping[str, tuple[int, int]]) -> tuple[int, int]:
    lo = hi = a.const
    for atom, coeff in a.terms.items():
        alo, ahi = _atom_bounds(atom, box)
        if coeff > 0:
            lo, hi = lo + coeff * alo, hi + coeff * ahi
        else:
            lo, hi = lo + coeff * ahi, hi + coeff * alo
    return lo, hi


def _atom_bounds(atom: Expr, box: Mapping[str, tuple[int, int]]) -> tuple[int, int]:
    if isinstance(atom, Var):
        if atom.name not in box:
            raise InputError(f"bounds: the box gives no range for variable {atom.name!r}")
        return box[atom.name]
    assert isinstance(atom, FloorDiv | Mod)
    lo, hi = _lin_bounds(to_lin(atom.expr), box)
    d = atom.divisor
    if isinstance(atom, FloorDiv):
        return lo // d, hi // d
    if hi - lo + 1 < d and lo % d <= hi % d:
        return lo % d, hi % d
    return 0, d - 1


def to_isl(e: Expr, var_names: Mapping[str, str] | None = None) -> str:
    """``e`` in ISL quasi-affine syntax (``floor((x + 3)/4)``, ``(x) mod 4``); variables renamed."""
    return render(e, isl=True, names=var_names or {})
