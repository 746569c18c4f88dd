"""Quasi-affine integer expressions of the global thread coordinates.

Kernels describe every memory access by an integer address expression of ``tidx, tidy, tidz``.
This module holds the expression tree, a safe parser for user text (own tokenizer and
recursive-descent parser, nothing is ever evaluated by Python), a canonical simplifier, and the
operations the estimator needs: substitution, affine coefficients, vectorized evaluation,
conversion to ISL syntax and interval bounds over a box.

Canonical form (what :func:`simplify` and :func:`parse` return): an expression is a linear
combination of *atoms* plus a constant.  Atoms are ``Var`` and canonical ``FloorDiv``/``Mod``
nodes.  The combination is written as ``Add`` of its terms, each term being the bare atom
(coefficient 1) or ``Mul(c, atom)``; variables come first sorted by name, then the other atoms in
a fixed structural order, then at most one non-zero ``Const``.  A single term is returned without
the ``Add``, an empty combination is ``Const(value)``.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np

from warpspeed.errors import InputError

THREAD_VARS = ("tidx", "tidy", "tidz")

MAX_TEXT_LENGTH = 10_000
"""Longest expression text :func:`parse` accepts."""

MAX_NESTING = 100
"""Deepest parenthesis nesting :func:`parse` accepts."""

MAX_FLOOR_MOD_NESTING = 50
"""Deepest nesting of ``//``/``%`` in a parsed result; keeps later recursive walks (and dataclass
equality, which costs several frames per level) far from Python's recursion limit."""

MAX_CONSTANT = 2**62
"""Largest magnitude of any constant, factor or divisor in a parsed expression (fits int64)."""

_MAX_LITERAL_DIGITS = 30
_SNIPPET_CHARS = 60


# --------------------------------------------------------------------------------------------
# Expression tree
# --------------------------------------------------------------------------------------------


def _require_int(value: object, what: str) -> None:
    """Reject non-integers (and bools) in node fields: the tree is integer arithmetic only."""
    if not isinstance(value, int) or isinstance(value, bool):
        raise InputError(f"expression node: {what} must be an int, got {type(value).__name__}")


@dataclass(frozen=True)
class Expr:
    """Base class of all expression nodes; ``str()`` gives text that :func:`parse` reads back."""

    def __str__(self) -> str:
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


# --------------------------------------------------------------------------------------------
# Linear combinations of atoms: the working representation of the simplifier
# --------------------------------------------------------------------------------------------


@dataclass
class _Lin:
    """``sum(coeff * atom) + const``; atoms are Var or canonical FloorDiv/Mod, coefficients non-zero."""

    terms: dict[Expr, int] = field(default_factory=dict)
    const: int = 0

    def is_const(self) -> bool:
        return not self.terms


def _lin_add(a: _Lin, b: _Lin, sign: int = 1) -> _Lin:
    """``a + sign * b``."""
    terms = dict(a.terms)
    for atom, coeff in b.terms.items():
        new = terms.get(atom, 0) + sign * coeff
        if new:
            terms[atom] = new
        else:
            terms.pop(atom, None)
    return _Lin(terms, a.const + sign * b.const)


def _lin_scale(a: _Lin, factor: int) -> _Lin:
    if factor == 0:
        return _Lin()
    return _Lin({atom: coeff * factor for atom, coeff in a.terms.items()}, a.const * factor)


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


def _lin_to_expr(a: _Lin) -> Expr:
    """Canonical tree of a linear combination (see the module docstring)."""
    terms: list[Expr] = []
    for atom in sorted(a.terms, key=_sort_key):
        coeff = a.terms[atom]
        terms.append(atom if coeff == 1 else Mul(coeff, atom))
    if a.const or not terms:
        terms.append(Const(a.const))
    return terms[0] if len(terms) == 1 else Add(tuple(terms))


def _to_lin(e: Expr, subst: Mapping[str, _Lin] | None = None) -> _Lin:
    """Canonical linear combination of ``e``, with variables optionally replaced."""
    if isinstance(e, Const):
        return _Lin({}, e.value)
    if isinstance(e, Var):
        if subst is not None and e.name in subst:
            return subst[e.name]
        return _Lin({e: 1}, 0)
    if isinstance(e, Add):
        acc = _Lin()
        for term in e.terms:
            acc = _lin_add(acc, _to_lin(term, subst))
        return acc
    if isinstance(e, Mul):
        return _lin_scale(_to_lin(e.expr, subst), e.factor)
    if isinstance(e, FloorDiv):
        return _floordiv(_to_lin(e.expr, subst), e.divisor)
    if isinstance(e, Mod):
        return _mod(_to_lin(e.expr, subst), e.divisor)
    raise InputError(f"expression node: unknown node type {type(e).__name__}")


def _mod_atom_range(a: _Lin) -> tuple[int, int] | None:
    """Range of ``a`` when all its atoms are Mod nodes (each in [0, divisor)), else None."""
    lo = hi = a.const
    for atom, coeff in a.terms.items():
        if not isinstance(atom, Mod):
            return None
        span = coeff * (atom.divisor - 1)
        lo += min(0, span)
        hi += max(0, span)
    return lo, hi


def _floordiv(a: _Lin, d: int) -> _Lin:
    """Canonical ``floor(a / d)`` for ``d > 0``.

    Uses exact identities only: whole multiples of ``d`` move outside, a common factor of the
    coefficients and ``d`` cancels, ``floor(floor(e/m)/d) = floor(e/(m*d))``, and a Mod-only
    numerator whose range stays within one multiple of ``d`` folds to a constant.
    """
    if d == 1:
        return a
    if a.is_const():
        return _Lin({}, a.const // d)
    outside = _Lin({atom: c // d for atom, c in a.terms.items() if c % d == 0}, a.const // d)
    rest = _Lin({atom: c for atom, c in a.terms.items() if c % d}, a.const % d)
    if rest.is_const():
        return outside  # rest.const lies in [0, d): its floor is 0
    g = math.gcd(d, *rest.terms.values())
    if g > 1:
        rest = _Lin({atom: c // g for atom, c in rest.terms.items()}, rest.const // g)
        d //= g
    if len(rest.terms) == 1:
        ((atom, coeff),) = rest.terms.items()
        if coeff == 1 and isinstance(atom, FloorDiv):
            inner = _lin_add(_to_lin(atom.expr), _Lin({}, atom.divisor * rest.const))
            return _lin_add(outside, _floordiv(inner, atom.divisor * d))
    span = _mod_atom_range(rest)
    if span is not None and span[0] // d == span[1] // d:
        return _lin_add(outside, _Lin({}, span[0] // d))
    return _lin_add(outside, _Lin({FloorDiv(_lin_to_expr(rest), d): 1}, 0))


def _mod(a: _Lin, d: int) -> _Lin:
    """Canonical ``a mod d`` for ``d > 0``.

    Exact identities only: coefficients and constant reduce modulo ``d``, ``(e mod m) mod d``
    with ``d | m`` drops the inner mod, a common factor ``g`` of the coefficients and ``d`` gives
    ``g * (a/g mod d/g) + const mod g``, and a Mod-only argument already inside ``[0, d)`` stays.
    """
    if d == 1:
        return _Lin()
    while True:
        nested = [atom for atom in a.terms if isinstance(atom, Mod) and atom.divisor % d == 0]
        if not nested:
            break
        for atom in nested:
            coeff = a.terms[atom]
            a = _lin_add(a, _Lin({atom: coeff}, 0), -1)
            a = _lin_add(a, _lin_scale(_to_lin(atom.expr), coeff))
    a = _Lin({atom: c % d for atom, c in a.terms.items() if c % d}, a.const % d)
    if a.is_const():
        return a
    g = math.gcd(d, *a.terms.values())
    if g > 1:
        reduced = _Lin({atom: c // g for atom, c in a.terms.items()}, a.const // g)
        return _lin_add(_lin_scale(_mod(reduced, d // g), g), _Lin({}, a.const % g))
    span = _mod_atom_range(a)
    if span is not None and span[1] < d:
        return a  # coefficients are positive and the constant non-negative, so span[0] >= 0
    return _Lin({Mod(_lin_to_expr(a), d): 1}, 0)


# --------------------------------------------------------------------------------------------
# Public operations
# --------------------------------------------------------------------------------------------


def simplify(e: Expr) -> Expr:
    """Canonical form of ``e``: equal affine functions (and many quasi-affine ones) compare equal."""
    return _lin_to_expr(_to_lin(e))


def substitute(e: Expr, mapping: Mapping[str, Expr]) -> Expr:
    """Replace variables by expressions (e.g. ``tidy -> 2*tidy + 1`` for thread folding); simplified."""
    subst = {name: _to_lin(value) for name, value in mapping.items()}
    return _lin_to_expr(_to_lin(e, subst))


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
    return all(isinstance(atom, Var) for atom in _to_lin(e).terms)


def affine_form(e: Expr) -> tuple[tuple[int, int, int], int] | None:
    """Coefficients of ``(tidx, tidy, tidz)`` and the constant if ``e`` is affine, else None.

    A variable other than the thread coordinates is an error, since it has no coefficient slot.
    """
    lin = _to_lin(e)
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
    return _lin_bounds(_to_lin(e), clean)


def _lin_bounds(a: _Lin, box: Mapping[str, tuple[int, int]]) -> tuple[int, int]:
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
    lo, hi = _lin_bounds(_to_lin(atom.expr), box)
    d = atom.divisor
    if isinstance(atom, FloorDiv):
        return lo // d, hi // d
    if hi - lo + 1 < d and lo % d <= hi % d:
        return lo % d, hi % d
    return 0, d - 1


def to_isl(e: Expr, var_names: Mapping[str, str] | None = None) -> str:
    """``e`` in ISL quasi-affine syntax (``floor((x + 3)/4)``, ``(x) mod 4``); variables renamed."""
    return _render(e, isl=True, names=var_names or {})


# --------------------------------------------------------------------------------------------
# Rendering (str and ISL)
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# Parser
# --------------------------------------------------------------------------------------------

_DIGITS = frozenset("0123456789")
_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_")
_NAME_CHARS = _NAME_START | _DIGITS
_SPACE = frozenset(" \t\r\n\f\v")


def _fmt_int(value: object) -> str:
    """Print an int, abbreviating huge ones (Python refuses to print ints over 4300 digits)."""
    if isinstance(value, int) and abs(value).bit_length() > 200:
        return "a number too large to show"
    return str(value)


def _snippet(text: str) -> str:
    """Quoted, one-line, length-limited excerpt of user text for error messages."""
    if len(text) > _SNIPPET_CHARS:
        text = text[: _SNIPPET_CHARS - 3] + "..."
    return repr(text)


@dataclass(frozen=True)
class _Token:
    kind: str  # "int", "name", "op", "end"
    text: str
    pos: int  # 0-based offset in the text


class _Parser:
    """Tokenizer and recursive-descent parser producing canonical linear combinations.

    Values are kept as ``_Lin`` while parsing, so every intermediate result is already simplified
    and long chains (``1+1+...``, ``x*2*2*...``) stay flat and cheap.
    """

    def __init__(self, text: str, names: Mapping[str, int], where: str) -> None:
        self.text = text
        self.names = names
        self.where = where
        self._tokens = self._tokenize()  # lazy: errors surface in reading order
        self.tok = next(self._tokens)
        self.depth = 0

    # -- errors -------------------------------------------------------------------------------

    def error(self, message: str, pos: int) -> InputError:
        return InputError(f"{self.where}: {message} (at column {pos + 1})")

    # -- tokenizer ----------------------------------------------------------------------------

    def _tokenize(self) -> Iterator[_Token]:
        text, n, i = self.text, len(self.text), 0
        while i < n:
            c = text[i]
            if c in _SPACE:
                i += 1
            elif c in _DIGITS or (c == "." and i + 1 < n and text[i + 1] in _DIGITS):
                j = self._number_end(i)
                yield _Token("int", text[i:j], i)
                i = j
            elif c in _NAME_START:
                j = i
                while j < n and text[j] in _NAME_CHARS:
                    j += 1
                yield _Token("name", text[i:j], i)
                i = j
            elif text.startswith("//", i):
                yield _Token("op", "//", i)
                i += 2
            elif c == "/":
                raise self.error("'/' (true division) is not allowed; use '//' for floor division", i)
            elif text.startswith("**", i):
                raise self.error("'**' (power) is not allowed", i)
            elif c in "+-*%()":
                yield _Token("op", c, i)
                i += 1
            elif c in "<>=!":
                op = text[i : i + 2] if text[i + 1 : i + 2] == "=" else c
                raise self.error(f"comparison or assignment {op!r} is not allowed", i)
            elif c in "[]{}":
                raise self.error(f"bracket {c!r} is not allowed; only parentheses group", i)
            elif c in "'\"":
                raise self.error(f"string literals are not allowed (found {c!r})", i)
            elif c == ",":
                raise self.error("',' is not allowed (there are no function calls or tuples)", i)
            else:
                raise self.error(f"unexpected character {c!r}", i)
        while True:
            yield _Token("end", "", n)

    def _number_end(self, i: int) -> int:
        """End offset of the integer literal at ``i``; floats and malformed literals are errors."""
        text, n = self.text, len(self.text)
        j = i
        while j < n and text[j] in _DIGITS:
            j += 1
        if j < n and (text[j] in _NAME_CHARS or text[j] == "."):
            k = j
            while k < n and (text[k] in _NAME_CHARS or text[k] == "."):
                k += 1
            literal = text[i:k]
            lowered = literal.lower()
            is_float = "." in literal or ("e" in lowered and lowered.replace("e", "", 1).isdigit())
            if is_float:
                raise self.error(f"float literal {_snippet(literal)} is not allowed; only integers", i)
            raise self.error(f"invalid integer literal {_snippet(literal)}", i)
        if j - i > _MAX_LITERAL_DIGITS:
            raise self.error(f"integer literal {_snippet(text[i:j])} is too long", i)
        return j

    # -- grammar ------------------------------------------------------------------------------
    # expr    := term (("+" | "-") term)*
    # term    := unary (("*" | "//" | "%") unary)*
    # unary   := ("+" | "-")* primary
    # primary := INT | NAME | "(" expr ")"

    def advance(self) -> None:
        self.tok = next(self._tokens)

    def parse(self) -> _Lin:
        if self.tok.kind == "end":
            raise InputError(f"{self.where}: empty expression")
        value, _ = self.expr()
        tok = self.tok
        if tok.kind != "end":
            if tok.text == ")":
                raise self.error("unmatched ')'", tok.pos)
            raise self.error(f"unexpected {_describe(tok)} after a complete expression", tok.pos)
        return value

    def expr(self) -> tuple[_Lin, int]:
        """Returns the value and the start offset of its text."""
        acc, start = self.term()
        acc = _Lin(dict(acc.terms), acc.const)
        while (tok := self.tok).text in ("+", "-") and tok.kind == "op":
            self.advance()
            right, _ = self.term()
            sign = 1 if tok.text == "+" else -1
            for atom, coeff in right.terms.items():  # in-place merge keeps long sums linear-time
                new = acc.terms.get(atom, 0) + sign * coeff
                if new:
                    acc.terms[atom] = new
                else:
                    del acc.terms[atom]
            acc.const += sign * right.const
        return acc, start

    def term(self) -> tuple[_Lin, int]:
        left, start = self.unary()
        while (tok := self.tok).kind == "op" and tok.text in ("*", "//", "%"):
            self.advance()
            right, right_start = self.unary()
            end = self.tok.pos
            shown = _snippet(self.text[start:end].strip())
            if tok.text == "*":
                if left.is_const():
                    left = _lin_scale(right, left.const)
                elif right.is_const():
                    left = _lin_scale(left, right.const)
                else:
                    raise self.error(
                        f"{shown} is not quasi-affine: a product needs a constant factor", tok.pos
                    )
                continue
            divisor_text = _snippet(self.text[right_start:end].strip())
            if not right.is_const():
                raise self.error(
                    f"in {shown} the divisor {divisor_text} of {tok.text!r} must be a positive constant",
                    tok.pos,
                )
            if right.const <= 0:
                raise self.error(
                    f"in {shown} the divisor {divisor_text} of {tok.text!r} must be a positive constant, "
                    f"it is {_fmt_int(right.const)}",
                    tok.pos,
                )
            left = _floordiv(left, right.const) if tok.text == "//" else _mod(left, right.const)
            depth = max((_atom_depth(atom) for atom in left.terms), default=0)
            if depth > MAX_FLOOR_MOD_NESTING:
                raise self.error(
                    f"{shown} nests '//' and '%' more than {MAX_FLOOR_MOD_NESTING} levels deep", tok.pos
                )
        return left, start

    def unary(self) -> tuple[_Lin, int]:
        sign = 1
        start = self.tok.pos
        while (tok := self.tok).kind == "op" and tok.text in ("+", "-"):
            self.advance()
            if tok.text == "-":
                sign = -sign
        value = self.primary()
        return (value if sign == 1 else _lin_scale(value, -1)), start

    def primary(self) -> _Lin:
        tok = self.tok
        if tok.kind == "int":
            self.advance()
            return _Lin({}, int(tok.text))
        if tok.kind == "name":
            self.advance()
            after = self.tok
            if after.kind == "op" and after.text == "(":
                raise self.error(f"function calls are not allowed: {_snippet(tok.text + '(')}", tok.pos)
            if tok.text in THREAD_VARS:
                return _Lin({Var(tok.text): 1}, 0)
            if tok.text in self.names:
                return _Lin({}, self.names[tok.text])
            valid = ", ".join([*THREAD_VARS, *sorted(self.names)])
            raise self.error(f"unknown name {_snippet(tok.text)}; valid names are: {valid}", tok.pos)
        if tok.kind == "op" and tok.text == "(":
            self.depth += 1
            if self.depth > MAX_NESTING:
                raise self.error(f"parentheses nest more than {MAX_NESTING} levels deep", tok.pos)
            self.advance()
            value, _ = self.expr()
            close = self.tok
            if close.kind != "op" or close.text != ")":
                raise self.error(
                    f"missing ')' for the '(' at column {tok.pos + 1}, found {_describe(close)}", close.pos
                )
            self.advance()
            self.depth -= 1
            return value
        raise self.error(f"expected a number, a name or '(' but found {_describe(tok)}", tok.pos)


def _describe(tok: _Token) -> str:
    if tok.kind == "end":
        return "the end of the expression"
    if tok.kind == "name":
        return f"name {_snippet(tok.text)}"
    if tok.kind == "int":
        return f"number {_snippet(tok.text)}"
    return repr(tok.text)


def _atom_depth(e: Expr) -> int:
    """Nesting depth of FloorDiv/Mod nodes in ``e``."""
    if isinstance(e, FloorDiv | Mod):
        return 1 + _atom_depth(e.expr)
    if isinstance(e, Add):
        return max((_atom_depth(t) for t in e.terms), default=0)
    if isinstance(e, Mul):
        return _atom_depth(e.expr)
    return 0


def _too_large(e: Expr) -> bool:
    """Whether any constant, factor or divisor in ``e`` exceeds ``MAX_CONSTANT`` in magnitude."""
    if isinstance(e, Const):
        return abs(e.value) > MAX_CONSTANT
    if isinstance(e, Add):
        return any(_too_large(t) for t in e.terms)
    if isinstance(e, Mul):
        return abs(e.factor) > MAX_CONSTANT or _too_large(e.expr)
    if isinstance(e, FloorDiv | Mod):
        return e.divisor > MAX_CONSTANT or _too_large(e.expr)
    return False


def parse(text: str, *, names: Mapping[str, int] | None = None, where: str = "expression") -> Expr:
    """Parse a quasi-affine integer expression of ``tidx, tidy, tidz``; result is simplified.

    ``names`` binds further identifiers (``nx``, user parameters) to integer constants.  Nothing
    in ``text`` is ever executed; any invalid input raises :class:`InputError` whose one-line
    message starts with ``where`` and names the offending part and its column.
    """
    where = str(where)
    if not isinstance(text, str):
        raise InputError(f"{where}: expected the expression as a string, got {type(text).__name__}")
    names = dict(names or {})
    for name, value in names.items():
        if name in THREAD_VARS:
            raise InputError(f"{where}: the name {name!r} is a thread coordinate and cannot be bound")
        if not isinstance(value, int | np.integer) or isinstance(value, bool):
            kind = type(value).__name__
            raise InputError(f"{where}: the value of name {name!r} must be an int, got {kind}")
        names[name] = int(value)
    if len(text) > MAX_TEXT_LENGTH:
        raise InputError(
            f"{where}: expression is too long ({len(text)} characters, at most {MAX_TEXT_LENGTH})"
        )
    result = _lin_to_expr(_Parser(text, names, where).parse())
    if _too_large(result):
        raise InputError(
            f"{where}: {_snippet(text.strip())} has a constant larger than {MAX_CONSTANT} in magnitude"
        )
    return result
