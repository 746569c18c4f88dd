"""Linear combinations of atoms (``Lin``): the simplifier's working form, with floor and mod folding."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from warpspeed.errors import InputError

from .tree import Add, Const, Expr, FloorDiv, Mod, Mul, Var


@dataclass
class Lin:
    """``sum(coeff * atom) + const``; atoms are Var or canonical FloorDiv/Mod, coefficients non-zero."""

    terms: dict[Expr, int] = field(default_factory=dict)
    const: int = 0

    def is_const(self) -> bool:
        return not self.terms


def _lin_add(a: Lin, b: Lin, sign: int = 1) -> Lin:
    """``a + sign * b``."""
    terms = dict(a.terms)
    for atom, coeff in b.terms.items():
        new = terms.get(atom, 0) + sign * coeff
        if new:
            terms[atom] = new
        else:
            terms.pop(atom, None)
    return Lin(terms, a.const + sign * b.const)


def lin_scale(a: Lin, factor: int) -> Lin:
    if factor == 0:
        return Lin()
    return Lin({atom: coeff * factor for atom, coeff in a.terms.items()}, a.const * factor)


def _sort_key(e: Expr) -> tuple:
    """Deterministic structural order: variables by name first, then FloorDiv, Mod, the rest."""
    if isinstance(e, Const):
        return (0, e.value)
    if isinstance(e, Var):
        return (1, e.name)
    if isinstance(e, FloorDiv):
        return (2, _sort_key(e.expr), e.divisor)
    if isinstance(e, Mod):
        return (3, _sort_key(e.expr), e.divisor)
    if isinstance(e, Mul):
        return (4, e.factor, _sort_key(e.expr))
    if isinstance(e, Add):
        return (5, tuple(_sort_key(t) for t in e.terms))
    raise InputError(f"expression node: unknown node type {type(e).__name__}")


def lin_to_expr(a: Lin) -> Expr:
    """Canonical tree of a linear combination (see the module docstring)."""
    terms: list[Expr] = []
    for atom in sorted(a.terms, key=_sort_key):
        coeff = a.terms[atom]
        terms.append(atom if coeff == 1 else Mul(coeff, atom))
    if a.const or not terms:
        terms.append(Const(a.const))
    return terms[0] if len(terms) == 1 else Add(tuple(terms))


def to_lin(e: Expr, subst: Mapping[str, Lin] | None = None) -> Lin:
    """Canonical linear combination of ``e``, with variables optionally replaced."""
    if isinstance(e, Const):
        return Lin({}, e.value)
    if isinstance(e, Var):
        if subst is not None and e.name in subst:
            return subst[e.name]
        return Lin({e: 1}, 0)
    if isinstance(e, Add):
        acc = Lin()
        for term in e.terms:
            acc = _lin_add(acc, to_lin(term, subst))
        return acc
    if isinstance(e, Mul):
        return lin_scale(to_lin(e.expr, subst), e.factor)
    if isinstance(e, FloorDiv):
        return lin_floordiv(to_lin(e.expr, subst), e.divisor)
    if isinstance(e, Mod):
        return lin_mod(to_lin(e.expr, subst), e.divisor)
    raise InputError(f"expression node: unknown node type {type(e).__name__}")


def _mod_atom_range(a: Lin) -> tuple[int, int] | None:
    """Range of ``a`` when all its atoms are Mod nodes (each in [0, divisor)), else None."""
    lo = hi = a.const
    for atom, coeff in a.terms.items():
        if not isinstance(atom, Mod):
            return None
        span = coeff * (atom.divisor - 1)
        lo += min(0, span)
        hi += max(0, span)
    return lo, hi


def lin_floordiv(a: Lin, d: int) -> Lin:
    """Canonical ``floor(a / d)`` for ``d > 0``.

    Uses exact identities only: whole multiples of ``d`` move outside, a common factor of the
    coefficients and ``d`` cancels, ``floor(floor(e/m)/d) = floor(e/(m*d))``, and a Mod-only
    numerator whose range stays within one multiple of ``d`` folds to a constant.
    """
    if d == 1:
        return a
    if a.is_const():
        return Lin({}, a.const // d)
    outside = Lin({atom: c // d for atom, c in a.terms.items() if c % d == 0}, a.const // d)
    rest = Lin({atom: c for atom, c in a.terms.items() if c % d}, a.const % d)
    if rest.is_const():
        return outside  # rest.const lies in [0, d): its floor is 0
    g = math.gcd(d, *rest.terms.values())
    if g > 1:
        rest = Lin({atom: c // g for atom, c in rest.terms.items()}, rest.const // g)
        d //= g
    if len(rest.terms) == 1:
        ((atom, coeff),) = rest.terms.items()
        if coeff == 1 and isinstance(atom, FloorDiv):
            inner = _lin_add(to_lin(atom.expr), Lin({}, atom.divisor * rest.const))
            return _lin_add(outside, lin_floordiv(inner, atom.divisor * d))
    span = _mod_atom_range(rest)
    if span is not None and span[0] // d == span[1] // d:
        return _lin_add(outside, Lin({}, span[0] // d))
    return _lin_add(outside, Lin({FloorDiv(lin_to_expr(rest), d): 1}, 0))


def lin_mod(a: Lin, d: int) -> Lin:
    """Canonical ``a mod d`` for ``d > 0``.

    Exact identities only: coefficients and constant reduce modulo ``d``, ``(e mod m) mod d``
    with ``d | m`` drops the inner mod, a common factor ``g`` of the coefficients and ``d`` gives
    ``g * (a/g mod d/g) + const mod g``, and a Mod-only argument already inside ``[0, d)`` stays.
    """
    if d == 1:
        return Lin()
    while True:
        nested = [atom for atom in a.terms if isinstance(atom, Mod) and atom.divisor % d == 0]
        if not nested:
            break
        for atom in nested:
            coeff = a.terms[atom]
            a = _lin_add(a, Lin({atom: coeff}, 0), -1)
            a = _lin_add(a, lin_scale(to_lin(atom.expr), coeff))
    a = Lin({atom: c % d for atom, c in a.terms.items() if c % d}, a.const % d)
    if a.is_const():
        return a
    g = math.gcd(d, *a.terms.values())
    if g > 1:
        reduced = Lin({atom: c // g for atom, c in a.terms.items()}, a.const // g)
        return _lin_add(lin_scale(lin_mod(reduced, d // g), g), Lin({}, a.const % g))
    span = _mod_atom_range(a)
    if span is not None and span[1] < d:
        return a  # coefficients are positive and the constant non-negative, so span[0] >= 0
    return Lin({Mod(lin_to_expr(a), d): 1}, 0)
