"""Tests for warpspeed.expressions: parser safety, canonical form, evaluation, bounds, ISL output."""

from __future__ import annotations

import itertools
import os

import islpy as isl
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warpspeed.errors import InputError
from warpspeed.expressions import (
    THREAD_VARS,
    Add,
    Const,
    Expr,
    FloorDiv,
    Mod,
    Mul,
    Var,
    affine_form,
    bounds,
    evaluate,
    is_affine,
    parse,
    simplify,
    substitute,
    to_isl,
    variables,
)

WHERE = "field 'src', load 3, index 1"
NAMES = {"nx": 64, "ny": 32, "nz": 8, "halo": 2}
POINTS = [(0, 0, 0), (1, 2, 3), (5, 0, 7), (-3, 4, -1), (17, -9, 2), (63, 31, 7)]


def reference(e: Expr, x: int, y: int, z: int) -> int:
    """Independent scalar evaluation of a raw tree with Python's floor semantics."""
    if isinstance(e, Const):
        return e.value
    if isinstance(e, Var):
        return {"tidx": x, "tidy": y, "tidz": z}[e.name]
    if isinstance(e, Add):
        return sum(reference(t, x, y, z) for t in e.terms)
    if isinstance(e, Mul):
        return e.factor * reference(e.expr, x, y, z)
    if isinstance(e, FloorDiv):
        return reference(e.expr, x, y, z) // e.divisor
    if isinstance(e, Mod):
        return reference(e.expr, x, y, z) % e.divisor
    raise AssertionError(e)


def env_of(x: int, y: int, z: int) -> dict[str, int]:
    return {"tidx": x, "tidy": y, "tidz": z}


# ---------------------------------------------------------------------------------------------
# Table of valid inputs
# ---------------------------------------------------------------------------------------------

VALID = [
    ("tidx", lambda x, y, z: x),
    ("  tidx\t+\n1 ", lambda x, y, z: x + 1),
    ("42", lambda x, y, z: 42),
    ("-7", lambda x, y, z: -7),
    ("tidx + nx*tidy + nx*ny*tidz", lambda x, y, z: x + 64 * y + 64 * 32 * z),
    ("(tidx + halo) + (nx + 2*halo) * (tidy + halo)", lambda x, y, z: (x + 2) + 68 * (y + 2)),
    ("tidx - -tidy", lambda x, y, z: x + y),
    ("--+-tidz", lambda x, y, z: -z),
    ("2*-3*tidx", lambda x, y, z: -6 * x),
    ("tidx*3 - tidy*(4-1)", lambda x, y, z: 3 * x - 3 * y),
    ("(tidx + 3) // 4", lambda x, y, z: (x + 3) // 4),
    ("-tidx // 4", lambda x, y, z: (-x) // 4),
    ("tidx % 4 + 4*(tidx // 4)", lambda x, y, z: x),
    ("(tidx - 2*tidy) % 8", lambda x, y, z: (x - 2 * y) % 8),
    ("tidx // (4*2)", lambda x, y, z: x // 8),
    ("tidx % (nz)", lambda x, y, z: x % 8),
    ("tidx // 1 + tidy % 1", lambda x, y, z: x),
    ("((tidx // 2) + 1) // 3", lambda x, y, z: (x // 2 + 1) // 3),
    ("(tidx % 12) % 4 + (tidy % 3) % 5", lambda x, y, z: (x % 12) % 4 + (y % 3) % 5),
    ("(2*tidy + 1) % 2", lambda x, y, z: 1),
    ("(2*tidy + 1) // 2", lambda x, y, z: y),
    ("(4*tidx + 2*tidy + 6) % 8", lambda x, y, z: (4 * x + 2 * y + 6) % 8),
    ("(6*tidx + 4) // 4", lambda x, y, z: (6 * x + 4) // 4),
    ("(tidx % 4) // 4", lambda x, y, z: 0),
    ("tidx - tidx + 5", lambda x, y, z: 5),
    ("0 * tidy + tidz * 0", lambda x, y, z: 0),
    ("((((((tidx))))))", lambda x, y, z: x),
    ("10 // 3 + (-10) // 3 + (-10) % 3", lambda x, y, z: 10 // 3 + (-10) // 3 + (-10) % 3),
    ("tidx % 3 // 2 * 5", lambda x, y, z: ((x % 3) // 2) * 5),
    ("007 + tidx", lambda x, y, z: 7 + x),
]


@pytest.mark.parametrize(("text", "expected"), VALID)
def test_valid_inputs_evaluate_as_python(text, expected):
    e = parse(text, names=NAMES, where=WHERE)
    for x, y, z in POINTS:
        assert evaluate(e, env_of(x, y, z)) == expected(x, y, z), (text, x, y, z)
    xs, ys, zs = (np.array(c) for c in zip(*POINTS, strict=True))
    got = evaluate(e, {"tidx": xs, "tidy": ys, "tidz": zs})
    assert isinstance(got, np.ndarray) and got.dtype == np.int64 and got.shape == (len(POINTS),)
    assert got.tolist() == [expected(x, y, z) for x, y, z in POINTS]
    assert parse(str(e), names=NAMES) == e
    assert simplify(e) == e


# ---------------------------------------------------------------------------------------------
# Table of invalid inputs
# ---------------------------------------------------------------------------------------------

INVALID = [
    ("", "empty"),
    ("   \n\t", "empty"),
    ("foo + 1", "'foo'"),
    ("tidx + bar", "tidx, tidy, tidz, halo, nx, ny, nz"),
    ("tidw", "unknown name 'tidw'"),
    ("1.5 + tidx", "'1.5'"),
    ("tidx + .5", "'.5'"),
    ("1e3", "float literal '1e3'"),
    ("12abc", "'12abc'"),
    ("1_000", "'1_000'"),
    ("tidx / 2", "'/'"),
    ("tidx ** 2", "'**'"),
    ("abs(tidx)", "'abs('"),
    ("tidx(1)", "'tidx('"),
    ("tidx < 3", "'<'"),
    ("tidx == 3", "'=='"),
    ("tidx = 3", "'='"),
    ("tidx != 3", "'!='"),
    ("a[1]", "'['"),
    ("tidx[1]", "'['"),
    ("{tidx}", "'{'"),
    ("'tidx'", "string"),
    ("tidx, tidy", "','"),
    ("tidx tidy", "name 'tidy'"),
    ("tidx 3", "number '3'"),
    ("tidx)", "unmatched ')'"),
    ("(tidx", "missing ')'"),
    ("tidx +", "end of the expression"),
    ("* tidx", "'*'"),
    ("tidx*tidy", "'tidx*tidy' is not quasi-affine"),
    ("1 + (tidx+1) * (tidy-1)", "'(tidx+1) * (tidy-1)'"),
    ("tidx // tidy", "'tidy'"),
    ("tidx % (tidy - tidy + tidz)", "'(tidy - tidy + tidz)'"),
    ("tidx // 0", "it is 0"),
    ("tidx % (2 - 5)", "it is -3"),
    ("tidx // -2", "it is -2"),
    ("tidx @ 2", "'@'"),
    ("tidx;", "';'"),
    ("tidx # comment", "'#'"),
    ("tidx\\", "'\\\\'"),
    ("tidx + \u0661", "'\u0661'"),
    ("tidx + \u00b2", "'\u00b2'"),
    ("lambda: 1", "':'"),
    ("lambda", "'lambda'"),
    ("__import__('os')", "'__import__('"),
    ("1" * 31, "too long"),
    ("99999999999999999999 * tidx", "larger than"),
    ("tidx // 99999999999999999999", "larger than"),
    ("x" * 10_001, "too long"),
    ("(" * 101 + "1" + ")" * 101, "more than 100 levels"),
]


@pytest.mark.parametrize(("text", "fragment"), INVALID)
def test_invalid_inputs_raise_input_error(text, fragment):
    with pytest.raises(InputError) as info:
        parse(text, names=NAMES, where=WHERE)
    message = str(info.value)
    assert message.startswith(WHERE + ": "), message
    assert fragment in message, message
    assert "\n" not in message


def test_error_message_example_names_part_and_column():
    with pytest.raises(InputError) as info:
        parse("tidx*tidy", where="field 'src', load 3")
    assert str(info.value) == (
        "field 'src', load 3: 'tidx*tidy' is not quasi-affine: "
        "a product needs a constant factor (at column 5)"
    )


def test_error_column_points_at_offending_token():
    with pytest.raises(InputError, match=r"\(at column 8\)"):
        parse("tidx + foo")
    with pytest.raises(InputError, match=r"'/'.*\(at column 6\)"):
        parse("tidx / 2")


def test_non_string_input_and_bad_names():
    for bad in (None, 3, b"tidx", ["tidx"]):
        with pytest.raises(InputError, match=WHERE):
            parse(bad, where=WHERE)  # type: ignore[arg-type]
    with pytest.raises(InputError, match="thread coordinate"):
        parse("tidx", names={"tidx": 3})
    with pytest.raises(InputError, match="must be an int"):
        parse("n", names={"n": 1.5})  # type: ignore[dict-item]


def test_deep_nesting_is_input_error_not_recursion_error():
    with pytest.raises(InputError):
        parse("(" * 5000 + "1" + ")" * 5000)
    with pytest.raises(InputError, match="more than 100 levels"):
        parse("(" * 4000 + "1" + ")" * 4000)
    with pytest.raises(InputError):
        parse("-" * 9000 + "(" * 500 + "tidx")
    assert parse("(" * 100 + "tidx" + ")" * 100) == Var("tidx")
    assert parse("-" * 9001 + "tidx") == Mul(-1, Var("tidx"))


def test_long_flat_inputs_stay_flat_and_fast():
    assert parse(" + ".join(["tidx"] * 1400)) == Mul(1400, Var("tidx"))
    assert parse("tidx" + "*2" * 60) == Mul(2**60, Var("tidx"))
    assert parse("tidx" + "//2" * 60) == FloorDiv(Var("tidx"), 2**60)
    assert parse("tidx" + "%7" * 3000) == Mod(Var("tidx"), 7)


def test_floor_mod_nesting_limit():
    def nested(levels: int) -> str:
        text = "tidx"
        for i in range(levels):
            text = f"(tidy + {text}) % {3 + i % 2}"
        return text

    e = parse(nested(50))
    assert parse(str(e)) == e
    assert evaluate(e, env_of(7, 2, 0)) == reference(e, 7, 2, 0)
    with pytest.raises(InputError, match="more than 50 levels"):
        parse(nested(51))


# ---------------------------------------------------------------------------------------------
# Canonical form, substitution, affine form
# ---------------------------------------------------------------------------------------------


def test_canonical_equalities():
    assert simplify(parse("tidx + 1 + 2*tidx")) == simplify(parse("3*tidx+1"))
    assert parse("tidx + 1 + 2*tidx") == Add((Mul(3, Var("tidx")), Const(1)))
    expected = Add((Mul(2, Var("tidx")), Var("tidy"), Var("tidz"), Const(-1)))
    assert parse("tidz + tidx*2 - 1 + tidy") == expected
    assert parse("tidy % 4 + tidx // 2") == parse("tidx // 2 + tidy % 4")
    assert parse("(tidx + 5) // 4") == parse("1 + (tidx + 1) // 4")
    assert parse("(tidx + 5) % 4") == parse("(tidx + 1) % 4") == parse("(tidx - 3) % 4")
    assert parse("(5*tidx) % 4") == parse("tidx % 4")
    assert parse("(2*tidx) // 4") == parse("tidx // 2")
    assert parse("tidx // 2 // 3") == parse("tidx // 6")
    assert parse("(tidx % 8) % 4") == parse("tidx % 4")
    assert parse("tidx // 1") == Var("tidx")
    assert parse("tidx % 1") == Const(0)
    assert parse("7 // 2 + 7 % 2") == Const(4)
    assert simplify(Add(())) == Const(0)
    assert simplify(Add((Add((Var("tidx"), Const(1))), Mul(-1, Var("tidx"))))) == Const(1)
    assert simplify(Mul(1, Var("tidy"))) == Var("tidy")
    assert simplify(FloorDiv(Const(-7), 2)) == Const(-4)
    assert simplify(Mod(Const(-7), 2)) == Const(1)


def test_substitute_thread_folding():
    fold = {"tidy": parse("2*tidy + 1")}
    assert substitute(parse("tidy % 2"), fold) == Const(1)
    assert substitute(parse("tidy // 2"), fold) == Var("tidy")
    assert substitute(parse("tidx + nx*tidy", names=NAMES), fold) == parse("tidx + 128*tidy + 64")
    assert substitute(parse("(tidx + tidy) % 4"), {"tidx": Const(3)}) == parse("(tidy + 3) % 4")
    assert substitute(Var("n"), {"n": Const(5)}) == Const(5)


def test_affine_form_and_is_affine():
    assert affine_form(parse("3*tidx - tidz + 7")) == ((3, 0, -1), 7)
    assert affine_form(parse("5")) == ((0, 0, 0), 5)
    assert affine_form(parse("(2*tidy + 4) // 2")) == ((0, 1, 0), 2)
    assert affine_form(parse("tidx // 2")) is None
    assert is_affine(parse("tidx - tidy"))
    assert not is_affine(parse("tidx % 3"))
    with pytest.raises(InputError, match="'n'"):
        affine_form(Var("n"))


def test_variables():
    assert variables(parse("tidx + tidz % 3")) == frozenset({"tidx", "tidz"})
    assert variables(parse("tidx - tidx")) == frozenset()
    assert variables(Add((Var("a"), Mul(2, FloorDiv(Var("b"), 3))))) == frozenset({"a", "b"})


def test_node_validation():
    with pytest.raises(InputError):
        FloorDiv(Var("tidx"), 0)
    with pytest.raises(InputError):
        Mod(Var("tidx"), -4)
    with pytest.raises(InputError):
        Mul(1.5, Var("tidx"))  # type: ignore[arg-type]
    with pytest.raises(InputError):
        Const(True)
    with pytest.raises(InputError):
        Add([Var("tidx")])  # type: ignore[arg-type]
    assert len({Const(1), Const(1), Var("tidx"), Var("tidx")}) == 2


def test_str_is_readable():
    assert str(parse("tidx - 2*tidy - 1")) == "tidx - 2*tidy - 1"
    assert str(parse("(tidx + 3) // 4 - tidy % 2")) == "(tidx + 3) // 4 - (tidy % 2)"
    assert str(parse("-tidx")) == "-tidx"
    assert str(Mul(-3, FloorDiv(Var("tidx"), 2))) == "-3*(tidx // 2)"


# ---------------------------------------------------------------------------------------------
# evaluate and bounds
# ---------------------------------------------------------------------------------------------


def test_evaluate_broadcasts_over_grid():
    e = parse("tidx + 10*tidy + 100*tidz")
    x = np.arange(4).reshape(1, 1, 4)
    y = np.arange(3).reshape(1, 3, 1)
    z = np.arange(2).reshape(2, 1, 1)
    got = evaluate(e, {"tidx": x, "tidy": y, "tidz": z})
    assert got.shape == (2, 3, 4)
    assert got[1, 2, 3] == 123
    const = evaluate(parse("5"), {"tidx": x, "tidy": y, "tidz": z})
    assert isinstance(const, np.ndarray) and const.shape == (2, 3, 4) and (const == 5).all()
    assert evaluate(parse("(tidx - 7) // 4 + (tidx - 7) % 4"), {"tidx": 2}) == -2 + 3
    assert isinstance(evaluate(parse("tidx"), {"tidx": np.int32(3)}), int)
    floors = evaluate(parse("tidx // 4"), {"tidx": np.arange(-5, 5)})
    assert floors.tolist() == [v // 4 for v in range(-5, 5)]
    with pytest.raises(InputError, match="'tidy'"):
        evaluate(parse("tidy"), {"tidx": 1})
    with pytest.raises(InputError, match="broadcast"):
        evaluate(parse("tidx"), {"tidx": np.zeros(3, dtype=int), "tidy": np.zeros(4, dtype=int)})


def test_bounds_examples():
    box = {"tidx": (0, 15), "tidy": (-2, 3), "tidz": (0, 0)}
    assert bounds(parse("2*tidx - 3*tidy + 1"), box) == (0 - 9 + 1, 30 + 6 + 1)
    assert bounds(parse("tidx % 4"), box) == (0, 3)
    assert bounds(parse("(tidx % 16) // 4"), box) == (0, 3)
    assert bounds(parse("(tidz + 5) % 8"), box) == (5, 5)
    assert bounds(parse("7"), {}) == (7, 7)
    with pytest.raises(InputError, match="'tidy'"):
        bounds(parse("tidy"), {"tidx": (0, 1)})
    with pytest.raises(InputError, match="empty"):
        bounds(parse("tidx"), {"tidx": (3, 1)})
    with pytest.raises(InputError, match="pair"):
        bounds(parse("tidx"), {"tidx": (0, 1, 2)})  # type: ignore[dict-item]


# ---------------------------------------------------------------------------------------------
# to_isl
# ---------------------------------------------------------------------------------------------


def isl_value(text: str, point: tuple[int, int, int]) -> int:
    """Value ISL computes for the expression ``text`` at ``point``."""
    m = isl.Map(f"{{ [tidx, tidy, tidz] -> [a] : a = {text} }}")
    image = m.intersect_domain(isl.Set("{{ [{}, {}, {}] }}".format(*point))).range()
    return image.sample_point().get_coordinate_val(isl.dim_type.set, 0).to_python()


def test_to_isl_examples():
    e = parse("(tidx + 3) // 4 + (tidx - 2*tidy) % 4 - 3")
    assert "floor((tidx + 3)/4)" in to_isl(e)
    assert "((tidx + 2*tidy) mod 4)" in to_isl(e)  # -2 == 2 (mod 4): canonical coefficients
    assert to_isl(parse("tidx + 2*tidy"), {"tidx": "x", "tidy": "y"}) == "x + 2*y"
    for point in POINTS:
        assert isl_value(to_isl(e), point) == evaluate(e, env_of(*point))


# ---------------------------------------------------------------------------------------------
# Property tests
# ---------------------------------------------------------------------------------------------

leaves = st.one_of(st.integers(-20, 20).map(Const), st.sampled_from(THREAD_VARS).map(Var))


def _extend(children):
    return st.one_of(
        st.lists(children, min_size=1, max_size=3).map(lambda ts: Add(tuple(ts))),
        st.builds(Mul, st.integers(-6, 6), children),
        st.builds(FloorDiv, children, st.integers(1, 9)),
        st.builds(Mod, children, st.integers(1, 9)),
    )


trees = st.recursive(leaves, _extend, max_leaves=10)
coords = st.integers(-40, 40)
points = st.tuples(coords, coords, coords)
FAST = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@FAST
@given(trees, st.lists(points, min_size=1, max_size=4))
def test_str_parse_round_trip_preserves_value(tree, pts):
    parsed = parse(str(tree))
    assert parsed == simplify(tree)
    for x, y, z in pts:
        assert evaluate(parsed, env_of(x, y, z)) == reference(tree, x, y, z)
        assert evaluate(tree, env_of(x, y, z)) == reference(tree, x, y, z)


@FAST
@given(trees, st.lists(points, min_size=1, max_size=4))
def test_simplify_preserves_value_and_is_idempotent(tree, pts):
    s = simplify(tree)
    assert simplify(s) == s
    assert parse(str(s)) == s
    for x, y, z in pts:
        assert reference(s, x, y, z) == reference(tree, x, y, z)
    grid = np.array(pts)
    env = {"tidx": grid[:, 0], "tidy": grid[:, 1], "tidz": grid[:, 2]}
    assert evaluate(s, env).tolist() == [reference(tree, *p) for p in pts]


@FAST
@given(trees, st.lists(points, min_size=1, max_size=4))
def test_affine_form_agrees_with_evaluation(tree, pts):
    form = affine_form(tree)
    assert (form is not None) == is_affine(tree)
    if form is None:
        return
    (a, b, c), d = form
    for x, y, z in pts:
        assert a * x + b * y + c * z + d == reference(tree, x, y, z)


@st.composite
def affine_pairs(draw):
    """The same affine function written as two different shuffled, split-up sums."""
    coeffs = draw(st.tuples(*[st.integers(-5, 5)] * 3))
    const = draw(st.integers(-10, 10))

    def spelling() -> str:
        parts = []
        for coeff, name in zip(coeffs, THREAD_VARS, strict=True):
            split = draw(st.integers(-3, 3))
            parts += [f"{split}*{name}", f"({coeff - split})*{name}"]
        split = draw(st.integers(-5, 5))
        parts += [str(split), f"({const - split})"]
        return " + ".join(draw(st.permutations(parts)))

    return spelling(), spelling(), coeffs, const


@FAST
@given(affine_pairs())
def test_equal_affine_functions_have_equal_canonical_forms(pair):
    first, second, coeffs, const = pair
    assert parse(first) == parse(second)
    assert affine_form(parse(first)) == (coeffs, const)


small_boxes = st.tuples(*[st.tuples(st.integers(-8, 8), st.integers(0, 4))] * 3)


@FAST
@given(trees, small_boxes)
def test_bounds_contain_all_values_and_are_exact_for_affine(tree, spans):
    box = {name: (lo, lo + width) for name, (lo, width) in zip(THREAD_VARS, spans, strict=True)}
    lo, hi = bounds(tree, box)
    ranges = [range(a, b + 1) for a, b in box.values()]
    values = [reference(tree, *p) for p in itertools.product(*ranges)]
    assert lo <= min(values) and max(values) <= hi
    if is_affine(tree):
        assert (lo, hi) == (min(values), max(values))


@settings(max_examples=40, deadline=None)
@given(trees, points)
def test_to_isl_agrees_with_evaluate(tree, point):
    text = to_isl(tree)
    assert isl_value(text, point) == reference(tree, *point)
    renamed = to_isl(tree, {"tidx": "i", "tidy": "j", "tidz": "k"})
    m = isl.Map(f"{{ [i, j, k] -> [a] : a = {renamed} }}")
    image = m.intersect_domain(isl.Set("{{ [{}, {}, {}] }}".format(*point))).range()
    value = image.sample_point().get_coordinate_val(isl.dim_type.set, 0).to_python()
    assert value == reference(tree, *point)


# ---------------------------------------------------------------------------------------------
# Fuzzing: parse returns an Expr or raises InputError, and never executes anything
# ---------------------------------------------------------------------------------------------

SOUP_TOKENS = [
    "tidx", "tidy", "tidz", "nx", "halo", "0", "1", "7", "12", "-3", "1.5", "1e3", ".", "_",
    "+", "-", "*", "**", "/", "//", "%", "(", ")", "[", "]", "{", "}", ",", ":", ";", "=", "==",
    "<", ">", "!", "~", "&", "|", "^", "@", "#", "\\", "'", '"', "`", "$",
    "__import__", "os", "exec", "eval", "system", "lambda", "__class__", "__builtins__", "__dict__",
    "open", "compile", "globals", "getattr", ".system", "'touch /tmp/pwned'", "\n", " ", "\t", "\x00",
    "\u00e9", "\u0661", "\u2212", "\ufeff",
]  # fmt: skip


def check_parse_total(text: str) -> None:
    try:
        result = parse(text, names=NAMES, where=WHERE)
    except InputError as exc:
        message = str(exc)
        assert message.startswith(WHERE) and "\n" not in message
    else:
        assert isinstance(result, Expr)
        assert parse(str(result), names=NAMES) == result


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=60))
def test_fuzz_arbitrary_text(text):
    check_parse_total(text)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(SOUP_TOKENS), max_size=25))
def test_fuzz_token_soup(tokens):
    check_parse_total("".join(tokens))
    check_parse_total(" ".join(tokens))


def test_nothing_is_executed(tmp_path):
    target = tmp_path / "pwned"
    pwned_before = os.path.exists("/tmp/pwned")
    attacks = [
        "__import__('os').system('touch /tmp/pwned')",
        f"__import__('os').system('touch {target}')",
        f"tidx + __import__('os').system('touch {target}')",
        f"eval(\"__import__('os').system('touch {target}')\")",
        f"exec('open(\"{target}\", \"w\")')",
        "().__class__.__bases__[0].__subclasses__()",
        "__builtins__",
        "os.system",
        "tidx if 1 else 0",
        "[x for x in ()]",
    ]
    for text in attacks:
        with pytest.raises(InputError):
            parse(text, names=NAMES, where=WHERE)
    assert not target.exists()
    assert os.path.exists("/tmp/pwned") == pwned_before
