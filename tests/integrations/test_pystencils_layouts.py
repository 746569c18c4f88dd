"""The pystencils plugin describes each field in the layout it was declared with, unless layout= says otherwise.

pystencils 2.0 orders a field's spatial coordinates by its declaration (``Field.layout``, slowest first; the
default of ``ps.fields`` is numpy's C order, the last coordinate contiguous) and puts ``threadIdx.x`` on the
contiguous one. Before, the plugin described every field as ``fzyx`` unless ``layout=`` was given, so the
most common declaration (``ps.fields("u, un: double[3D]")``) was estimated with its threads along x striding
by rows.
"""

import os
import re
import tempfile
import warnings
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

os.environ.setdefault("PYSTENCILS_CACHE_DIR", str(Path(tempfile.gettempdir()) / "warpspeed-tests-pystencils-cache"))

ps = pytest.importorskip("pystencils")
pytest.importorskip("lbmpy")

import warpspeed_pystencils as wp  # noqa: E402
from warpspeed_pystencils import _extract, _generate, _layouts  # noqa: E402

import warpspeed  # noqa: E402

H100 = "H100-SXM5-80GB"
ISSUE_SHAPE = (130, 258, 514)  # allocated extents, the fastest in memory first
SHAPE = (18, 10, 6)  # small and different per coordinate, so a swapped coordinate shows
#: pystencils' layout names; the spatial order each declares (slowest first), and the layout= name matching it
DECLARED = {"numpy": ((0, 1, 2), "c"), "c": ((0, 1, 2), "c"), "fzyx": ((2, 1, 0), "fzyx"),
            "zyxf": ((2, 1, 0), "fzyx"), "reverse_numpy": ((2, 1, 0), "fzyx"), "f": ((2, 1, 0), "fzyx"),
            "soa": ((2, 1, 0), "fzyx"), "aos": ((2, 1, 0), "fzyx")}


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPSPEED_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("WARPSPEED_NVCC", "")


def _seven_point(layout=None, names="u, un"):
    src, dst = ps.fields(f"{names}: double[3D]", **({} if layout is None else {"layout": layout}))
    return [ps.Assignment(dst.center, (src[1, 0, 0] + src[-1, 0, 0] + src[0, 1, 0] + src[0, -1, 0]
                                       + src[0, 0, 1] + src[0, 0, -1]) / 6)]


def _streaming(layout=None, q=19):
    """Copy every population of the neighbour: a field with an index dimension, loaded and stored."""
    f, g = ps.fields(f"f({q}), g({q}): double[3D]", **({} if layout is None else {"layout": layout}))
    return [ps.Assignment(g.center(i), f[1, 0, 0](i)) for i in range(q)]


def _described(assignments, shape=SHAPE, **kw):
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        k = wp.describe(assignments, shape, registers=32, **kw)
    return k, [str(w.message) for w in said if "layout" in str(w.message)]


def _stride_of(access, var):
    """The element stride of one thread coordinate in an access (its coefficient in the linear index)."""
    coefficients = {}
    for term in access.linear.terms:
        if hasattr(term, "factor"):
            coefficients[term.expr.name] = term.factor
        elif hasattr(term, "name"):
            coefficients[term.name] = 1
    return coefficients.get(var)


def _threadidx_x_coordinate(assignments):
    """The field coordinate pystencils' generated code puts threadIdx.x on."""
    kernel, _ = _generate.as_kernel(assignments)
    (found,) = re.findall(r"ctr_(\d) = [^;]*threadIdx\.x", kernel.get_c_code())
    return int(found)


# ----------------------------------------------------------------------------- pystencils' own semantics
@pytest.mark.parametrize("layout", sorted(DECLARED))
def test_pystencils_puts_threadidx_x_on_the_contiguous_coordinate_of_the_declaration(layout):
    spatial, _ = DECLARED[layout]
    (u, _) = ps.fields("u, un: double[3D]", layout=layout)
    assert u.layout == spatial
    assert _threadidx_x_coordinate(_seven_point(layout)) == spatial[-1]


def test_the_default_of_ps_fields_is_numpy_order():
    assert ps.fields("u: double[3D]").layout == (0, 1, 2)
    assert _extract.layout_name((0, 1, 2)) == "c" and _extract.layout_name((2, 1, 0)) == "fzyx"
    assert _extract.layout_name((1, 0, 2)) is None


# ----------------------------------------------------------------------------- describe
@pytest.mark.parametrize("layout", [None, *sorted(DECLARED)])
def test_describe_takes_each_declared_layout(layout):
    """Whatever the declaration, the threads' x runs along the contiguous coordinate (stride 1), the domain
    follows the shape fastest first, and the description equals the one with the matching layout= given."""
    spatial, name = DECLARED[layout or "numpy"]
    k, said = _described(_seven_point(layout))
    assert said == []
    assert k.domain == tuple(n - 2 for n in SHAPE)
    u = next(f for f in k.fields if f.name == "u")
    assert u.shape == SHAPE and len(u.loads) == 6
    assert all(_stride_of(a, "tidx") == 1 for a in u.loads)
    assert all(_stride_of(a, "tidy") == SHAPE[0] for a in u.loads)
    explicit, said = _described(_seven_point(layout), layout=name)
    assert said == [] and explicit.spec["field"] == k.spec["field"] and explicit.domain == k.domain
    assert f"the declared layouts (u {name}, un {name})" in k.spec["description"]


def test_a_c_order_declaration_estimated_as_fzyx_warns_and_says_how_to_fix_it():
    k, said = _described(_seven_point(), layout="fzyx")
    (message,) = said
    assert "field 'u" in message and "declared with the spatial layout (0, 1, 2)" in message
    assert "pass layout='c'" in message and "leave layout= (and index_layout=) out" in message
    u = next(f for f in k.fields if f.name == "u")
    assert all(_stride_of(a, "tidx") == SHAPE[0] * SHAPE[1] for a in u.loads)  # as asked: x is the slow one


def test_an_fzyx_declaration_estimated_as_c_warns_with_the_matching_name():
    _, said = _described(_seven_point("fzyx"), layout="c")
    (message,) = said
    assert "declared with the spatial layout (2, 1, 0)" in message and "pass layout='fzyx'" in message


# ----------------------------------------------------------------------------- fields with an index dimension
def test_an_index_field_declared_in_numpy_order_has_its_populations_side_by_side():
    """``f(19): double[3D]`` (numpy order): an array of shape (x, y, z, 19) in C order, the populations of a
    cell contiguous (as zyxf, with z fastest among the spatial coordinates)."""
    k, said = _described(_streaming())
    assert said == []
    f = next(fl for fl in k.fields if fl.name == "f")
    assert f.shape == (19, *SHAPE) and len(f.loads) == 19
    assert all(_stride_of(a, "tidx") == 19 for a in f.loads)
    explicit, _ = _described(_streaming(), layout="c")
    assert explicit.spec["field"] == k.spec["field"]


def test_an_index_field_declared_fzyx_has_its_populations_slowest():
    k, said = _described(_streaming("fzyx"))
    assert said == []
    f = next(fl for fl in k.fields if fl.name == "f")
    assert f.shape == (*SHAPE, 19)
    assert all(_stride_of(a, "tidx") == 1 for a in f.loads)
    explicit, _ = _described(_streaming("fzyx"), layout="fzyx")
    assert explicit.spec["field"] == k.spec["field"]


def test_index_layout_places_the_populations_of_a_declared_field():
    """A generic field declares the order of its spatial coordinates only: ``zyxf`` declares what ``fzyx``
    does, and ``index_layout='zyxf'`` says the populations are side by side."""
    k, said = _described(_streaming("zyxf"), index_layout="zyxf")
    assert said == []
    f = next(fl for fl in k.fields if fl.name == "f")
    assert f.shape == (19, *SHAPE)
    assert all(_stride_of(a, "tidx") == 19 for a in f.loads)


def test_an_index_field_in_numpy_order_estimated_as_fzyx_warns():
    k, said = _described(_streaming(), layout="fzyx")
    assert len(said) == 1 and "pass layout='c'" in said[0]
    f = next(fl for fl in k.fields if fl.name == "f")
    assert f.shape == (*SHAPE, 19)


def test_fields_with_and_without_an_index_dimension_each_take_their_own_layout():
    f = ps.fields("f(3): double[3D]")
    rho = ps.fields("rho: double[3D]")
    k, said = _described([ps.Assignment(rho.center, f[1, 0, 0](0) + f[0, 1, 0](1) + f[0, 0, 1](2))])
    assert said == []
    shapes = {fl.name: fl.shape for fl in k.fields}
    assert shapes == {"f": (3, *SHAPE), "rho": SHAPE}


# ----------------------------------------------------------------------------- ranking and create_kernel
def test_rank_block_sizes_ranks_a_c_order_declaration_in_c_order():
    c = wp.rank_block_sizes(_seven_point(), ISSUE_SHAPE, device=H100, registers=32)
    explicit = wp.rank_block_sizes(_seven_point(), ISSUE_SHAPE, device=H100, registers=32, layout="c")
    assert c.best.configuration.block == explicit.best.configuration.block
    assert c.best.performance_GLup_s == pytest.approx(explicit.best.performance_GLup_s, rel=1e-12)
    assert c.best.configuration.block[0] >= 32 and c.best.configuration.block != (2, 2, 64)


@pytest.mark.parametrize("layout", ["reverse_numpy", "fzyx"])
def test_rank_block_sizes_of_an_x_fastest_declaration_is_as_before(layout):
    declared = wp.rank_block_sizes(_seven_point(layout), (66, 34, 34), device=H100, registers=32,
                                   blocks=[(64, 4, 1), (4, 8, 8), (1, 16, 16)])
    assert declared.best.configuration.block == (64, 4, 1)


def test_create_kernel_with_a_shape_chooses_for_the_declared_layout():
    """The issue's example: ps.fields("u, un: double[3D]") at (130, 258, 514) on an H100."""
    cfg = ps.CreateKernelConfig(target=ps.Target.CUDA)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no layout warning: the layout is the declaration's
        kernel = wp.create_kernel(_seven_point(), cfg, shape=ISSUE_SHAPE, device=H100, registers=32)
    block = kernel.metadata["warpspeed"]["block"]
    assert block != [2, 2, 64] and block[0] >= 32
    explicit = wp.create_kernel(_seven_point(), cfg, shape=ISSUE_SHAPE, device=H100, registers=32, layout="c",
                                cache=None)
    assert explicit.metadata["warpspeed"]["block"] == block
    with pytest.warns(UserWarning, match="pass layout='c'"):
        misread = wp.create_kernel(_seven_point(), cfg, shape=ISSUE_SHAPE, device=H100, registers=32,
                                   layout="fzyx")
    assert misread.metadata["warpspeed"]["block"] != block


def test_a_choice_cached_for_another_layout_is_not_read_back(monkeypatch):
    """A choice made with layout='fzyx' (what a C-order declaration was estimated as before) is not the choice
    of the declared layout; each is read back for its own inputs, without ranking again."""
    with pytest.warns(UserWarning, match="pass layout='c'"):
        misread = wp.create_kernel(_seven_point(), shape=ISSUE_SHAPE, device=H100, registers=32, layout="fzyx")
    c = wp.create_kernel(_seven_point(), shape=ISSUE_SHAPE, device=H100, registers=32)
    f = wp.create_kernel(_seven_point("fzyx"), shape=ISSUE_SHAPE, device=H100, registers=32)
    assert misread.metadata["warpspeed"]["block"] != c.metadata["warpspeed"]["block"]
    assert f.metadata["warpspeed"]["block"] == c.metadata["warpspeed"]["block"]  # the same arrays, transposed
    ranks = []
    real = warpspeed.rank
    monkeypatch.setattr(warpspeed, "rank", lambda *a, **k: ranks.append(1) or real(*a, **k))
    again_c = wp.create_kernel(_seven_point(), shape=ISSUE_SHAPE, device=H100, registers=32)
    with pytest.warns(UserWarning, match="pass layout='c'"):
        again_misread = wp.create_kernel(_seven_point(), shape=ISSUE_SHAPE, device=H100, registers=32,
                                         layout="fzyx")
    assert ranks == []
    assert again_c.metadata["warpspeed"]["block"] == c.metadata["warpspeed"]["block"]
    assert again_misread.metadata["warpspeed"]["block"] == misread.metadata["warpspeed"]["block"]
    kernel, _ = _generate.as_kernel(_seven_point())
    other, _ = _generate.as_kernel(_seven_point("fzyx"))
    assert _layouts.declared_layouts(kernel) == [("u", [0, 1, 2]), ("un", [0, 1, 2])]
    assert _layouts.declared_layouts(other) == [("u", [2, 1, 0]), ("un", [2, 1, 0])]


def test_cuda_program_uses_the_declared_layout_as_describe_does():
    program = wp.cuda_program(_streaming(), SHAPE)
    k, _ = _described(_streaming())
    strides = dict(zip((p.name for p in _generate.as_kernel(_streaming())[0].parameters), program.args, strict=True))
    assert strides["_stride_f_3"][1] == 1  # the population index is contiguous, as described
    assert next(f for f in k.fields if f.name == "f").shape[0] == 19


@settings(max_examples=12, deadline=None)
@given(st.permutations((0, 1, 2)), st.tuples(*[st.integers(3, 12)] * 3), st.sampled_from([0, 3]))
def test_any_declared_order_puts_tidx_on_the_contiguous_coordinate(order, shape, q):
    """For every order of the spatial coordinates a field can be declared with (a layout tuple, slowest first),
    the threads' x, y, z run along the coordinates fastest first in memory, whose extents ``shape`` gives in
    that order: tidx has stride 1 (times the index extent where the index is contiguous), tidy the extent of
    the fastest, tidz of the two fastest; pystencils' code agrees on the coordinate of threadIdx.x."""
    f = ps.Field.create_generic("f", 3, dtype="float64", layout=tuple(order), index_shape=(q,) if q else None)
    g = ps.Field.create_generic("g", 3, dtype="float64", layout=tuple(order))
    load = f[1, 0, 0](0) if q else f[1, 0, 0]
    assignments = [ps.Assignment(g.center, load)]
    assert _threadidx_x_coordinate(assignments) == order[-1]
    k, said = _described(assignments, shape)
    assert said == [] and k.domain == tuple(n - 2 for n in shape)
    index_fastest = q and tuple(order) != (2, 1, 0)  # declared x fastest: the index slowest
    unit = q if index_fastest else 1
    for name in ("f", "g"):
        (access,) = next(fl for fl in k.fields if fl.name == name).loads or \
            next(fl for fl in k.fields if fl.name == name).stores
        step = unit if name == "f" else 1
        assert (_stride_of(access, "tidx"), _stride_of(access, "tidy"), _stride_of(access, "tidz")) == \
            (step, step * shape[0], step * shape[0] * shape[1])
