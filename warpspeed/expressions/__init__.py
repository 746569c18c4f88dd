"""Quasi-affine integer expressions of the global thread coordinates.

Kernels describe every memory access by an integer address expression of ``tidx, tidy, tidz``.
This package holds the expression tree, a safe parser for user text (own tokenizer and
recursive-descent parser, nothing is ever evaluated by Python), a canonical simplifier, and the
operations the estimator needs: substitution, affine coefficients, vectorized evaluation,
conversion to ISL syntax and interval bounds over a box.

Canonical form (what :func:`simplify` and :func:`parse` return): an expression is a linear
combination of *atoms* plus a constant.  Atoms are ``Var`` and canonical ``FloorDiv``/``Mod``
nodes.  The combination is written as ``Add`` of its terms, each term being the bare atom
(coefficient 1) or ``Mul(c, atom)``; variables come first sorted by name, then the other atoms in
a fixed structural order, then at most one non-zero ``Const``.  A single term is returned without
the ``Add``, an empty combination is ``Const(value)``.

The package splits by concept: ``tree`` (the nodes), ``linear`` (the simplifier's linear
combinations), ``operations`` (what the estimator calls), ``render`` (text and ISL syntax) and
``parser`` (user text). Import from here.
"""

from .operations import affine_form, bounds, evaluate, is_affine, simplify, substitute, to_isl, variables
from .parser import MAX_CONSTANT, MAX_FLOOR_MOD_NESTING, MAX_NESTING, MAX_TEXT_LENGTH, parse
from .tree import THREAD_VARS, Add, Const, Expr, FloorDiv, Mod, Mul, Var

__all__ = ["MAX_CONSTANT", "MAX_FLOOR_MOD_NESTING", "MAX_NESTING", "MAX_TEXT_LENGTH", "THREAD_VARS", "Add", "Const",
           "Expr", "FloorDiv", "Mod", "Mul", "Var", "affine_form", "bounds", "evaluate", "is_affine", "parse",
           "simplify", "substitute", "to_isl", "variables"]
