"""Integer polynomials in named symbols: how the description reads a kernel's index expressions quickly.

A pystencils index expression is a sum of products of integers, loop counters, thread indices and the
fields' shape and stride parameters. Read into SymPy and expanded, the D3Q19 update's 38 accesses took a
sixth of a second on the first kernel of a process (SymPy's caches start cold). Here an expression is a
dict from monomials (sorted tuples of symbol names, repeated by power) to integer coefficients: adding,
multiplying and substituting are dict operations. Expressions with integer division or remainder are not
polynomials; the description reads those through SymPy (``_extract``), and the tests check that both ways
give the same description.
"""

from __future__ import annotations

from collections.abc import Mapping

Monomial = tuple[str, ...]
Polynomial = dict[Monomial, int]

ONE: Monomial = ()


def constant(value: int) -> Polynomial:
    return {ONE: value} if value else {}


def symbol(name: str) -> Polynomial:
    return {(name,): 1}


def _accumulate(out: Polynomial, m: Monomial, c: int) -> None:
    """Add ``c`` to the coefficient of ``m`` in ``out``, dropping it where the sum is zero."""
    v = out.get(m, 0) + c
    if v:
        out[m] = v
    else:
        out.pop(m, None)


def add(a: Polynomial, b: Polynomial, sign: int = 1) -> Polynomial:
    """``a + sign * b``."""
    out = dict(a)
    for m, c in b.items():
        _accumulate(out, m, sign * c)
    return out


def multiply(a: Polynomial, b: Polynomial) -> Polynomial:
    out: Polynomial = {}
    for ma, ca in a.items():
        for mb, cb in b.items():
            _accumulate(out, tuple(sorted(ma + mb)), ca * cb)
    return out


def scale(a: Polynomial, factor: int) -> Polynomial:
    return {m: c * factor for m, c in a.items()} if factor else {}


def substitute(a: Polynomial, values: Mapping[str, Polynomial]) -> Polynomial:
    """``a`` with each symbol named in ``values`` replaced by its polynomial."""
    out: Polynomial = {}
    for m, c in a.items():
        if not any(s in values for s in m):
            _accumulate(out, m, c)
            continue
        term = constant(c)
        for s in m:
            term = multiply(term, values[s] if s in values else symbol(s))
        for tm, tc in term.items():
            _accumulate(out, tm, tc)
    return out


def symbols(a: Polynomial) -> set[str]:
    return {s for m in a for s in m}


def coefficient(a: Polynomial, name: str) -> Polynomial:
    """The polynomial multiplying ``name`` to the first power (as SymPy's ``coeff``)."""
    return {tuple(s for s in m if s != name): c for m, c in a.items() if m.count(name) == 1}

