"""The integer polynomials the pystencils plugin reads index expressions with, against SymPy."""

import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from warpspeed_pystencils import _polynomial as poly

NAMES = ("tidx", "tidy", "_stride_f_1", "_size_f_0", "blockIdx_x")


def _as_sympy(a: poly.Polynomial) -> sp.Expr:
    return sp.Add(*(c * sp.Mul(*(sp.Symbol(s) for s in m)) for m, c in a.items()))


polynomials = st.dictionaries(
    st.lists(st.sampled_from(NAMES), max_size=3).map(lambda m: tuple(sorted(m))),
    st.integers(-5, 5).filter(bool), max_size=5)


@settings(max_examples=200, deadline=None)
@given(polynomials, polynomials, st.integers(-3, 3))
def test_sums_products_and_scaling_are_sympys(a, b, k):
    assert sp.expand(_as_sympy(poly.add(a, b)) - (_as_sympy(a) + _as_sympy(b))) == 0
    assert sp.expand(_as_sympy(poly.add(a, b, -1)) - (_as_sympy(a) - _as_sympy(b))) == 0
    assert sp.expand(_as_sympy(poly.multiply(a, b)) - _as_sympy(a) * _as_sympy(b)) == 0
    assert sp.expand(_as_sympy(poly.scale(a, k)) - k * _as_sympy(a)) == 0
    assert all(poly.add(a, b).values()) and all(poly.multiply(a, b).values())  # no zero terms kept


@settings(max_examples=200, deadline=None)
@given(polynomials, polynomials, st.sampled_from(NAMES))
def test_substitution_and_coefficients_are_sympys(a, b, name):
    x = sp.Symbol(name)
    assert sp.expand(_as_sympy(poly.substitute(a, {name: b})) - sp.expand(_as_sympy(a)).subs(x, _as_sympy(b))) == 0
    assert sp.expand(_as_sympy(poly.coefficient(a, name)) - sp.expand(_as_sympy(a)).coeff(x)) == 0
    assert poly.symbols(a) == {str(s) for s in _as_sympy(a).free_symbols}
