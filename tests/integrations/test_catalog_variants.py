"""The catalog's LBM kernels name the variants ``compare_variants`` generates: ``streaming=pull|push|aa|esotwist``,
``timestep=even|odd`` for the in-place patterns and ``dtype=float64|float32``, each kernel the one the plugin
generates for the same options; so that ``warpspeed compare`` and the web page can name them."""

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

os.environ.setdefault("PYSTENCILS_CACHE_DIR", str(Path(tempfile.gettempdir()) / "warpspeed-tests-pystencils-cache"))

pytest.importorskip("pystencils")
pytest.importorskip("lbmpy")

import warpspeed_pystencils as wp  # noqa: E402
from warpspeed_pystencils import catalog  # noqa: E402

import warpspeed  # noqa: E402
from warpspeed.application.comparison import parse_candidate  # noqa: E402
from warpspeed.interface.cli import main  # noqa: E402

H100 = "H100-SXM5-80GB"
D2Q9 = "lbm:stencil=D2Q9,method=srt"
ISSUE_AA = ("lbm:stencil=D3Q19,method=srt,streaming=aa,timestep=even"
            "+lbm:stencil=D3Q19,method=srt,streaming=aa,timestep=odd@2")


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPSPEED_CACHE_DIR", str(tmp_path / "cache"))


def _same_work(a: warpspeed.Kernel, b: warpspeed.Kernel) -> bool:
    """The same accesses, flops, element type and domain (names, sources, registers and the order in which
    pystencils emits the loads aside)."""
    def fields(k):
        return [(f.name, f.element_bytes, f.shape, f.offset, sorted(map(str, (x.text for x in f.loads))),
                 sorted(map(str, (x.text for x in f.stores)))) for f in k.fields]

    return (fields(a), a.flops, a.precision, a.domain) == (fields(b), b.flops, b.precision, b.domain)


def test_each_catalog_variant_is_the_kernel_compare_variants_generates():
    vc = wp.compare_variants(D2Q9, H100, shape=(34, 34), streaming=["pull", "aa", "esotwist"], layout="zyxf",
                             dtype=["float64", "float32"], registers=48, threads=256)
    for streaming in ("pull", "aa", "esotwist"):
        for dtype in ("float64", "float32"):
            steps = ("even", "odd") if streaming != "pull" else (None,)
            variant = vc.variant(f"streaming={streaming},dtype={dtype}")
            for step, generated in zip(steps, variant.kernels, strict=True):
                name = f"{D2Q9},layout=zyxf,streaming={streaming},dtype={dtype}" + (f",timestep={step}" if step else "")
                assert _same_work(warpspeed.find_kernel(name, domain=(32, 32)), generated), name
    # the options do change the kernel: float32 halves the bytes, the AA steps differ from each other
    f64, f32 = (warpspeed.find_kernel(f"{D2Q9},dtype={d}", domain=(32, 32)) for d in ("float64", "float32"))
    assert {f.element_bytes for f in f64.fields} == {8} and {f.element_bytes for f in f32.fields} == {4}
    even, odd = (warpspeed.find_kernel(f"{D2Q9},streaming=aa,timestep={t}", domain=(32, 32)) for t in ("even", "odd"))
    assert not _same_work(even, odd)


def test_the_default_kernel_is_unchanged_by_the_new_options():
    """``d3q19-srt`` and its explicit defaults are one kernel (the measured-data tests rank it)."""
    plain = warpspeed.find_kernel("d3q19-srt", domain=(64, 64, 64))
    named = warpspeed.find_kernel("d3q19-srt:streaming=pull,dtype=double,layout=fzyx", domain=(64, 64, 64))
    assert _same_work(plain, named)


@pytest.mark.parametrize("stencil, method, layout", [("D3Q19", "srt", "fzyx"), ("D3Q19", "srt", "zyxf"),
                                                     ("D3Q27", "trt", "fzyx")])
def test_a_named_layout_keeps_lbmpys_own_fields_as_users_and_the_measured_kernels_have_them(stencil, method, layout):
    """With a layout name (and the element type lbmpy declares), the variant's PDF fields are the ones lbmpy
    declares for ``field_layout`` (as ``create_lb_update_rule`` gives a user, and as the measured kernels were
    built), not fields declared again: those compile to other code (D3Q19 SRT: 80 registers instead of 90)."""
    from pystencils import Field
    from warpspeed_pystencils import _variants
    from warpspeed_pystencils._redeclare import redeclared

    def fields(rule) -> set:
        return {a.field for x in rule.all_assignments for a in x.atoms(Field.Access)}

    lbmpy_own = catalog.lbm_update_rule(stencil, method, layout=layout)
    variant = _variants.lbm_variant(f"lbm:stencil={stencil},method={method}", layout=layout, dtype="float64")
    assert fields(variant.rules[0]) == fields(lbmpy_own)
    assert fields(redeclared(lbmpy_own, layout, None)) != fields(lbmpy_own)  # what the check tells apart


def test_the_issue_command_compares_pull_with_the_aa_pair(capsys):
    rc = main(["compare", "lbm:stencil=D3Q19,method=srt", ISSUE_AA, "lbm:stencil=D3Q19,method=srt,dtype=float32",
               "--device", H100, "--format", "json"])
    assert rc == 0
    doc = json.loads(capsys.readouterr().out)
    by_name = {c["name"]: c for c in doc["candidates"]}
    aa = by_name[ISSUE_AA]
    assert aa["updates"] == 2 and [k["kernel"] for k in aa["kernels"]] == ISSUE_AA.removesuffix("@2").split("+")
    # memory-bound D3Q19: the float32 twin moves half the bytes, about twice the updates per second
    f64, f32 = by_name["lbm:stencil=D3Q19,method=srt"], by_name["lbm:stencil=D3Q19,method=srt,dtype=float32"]
    assert doc["candidates"][0]["name"] == f32["name"]
    assert 1.7 < f64["time_per_update_s"] / f32["time_per_update_s"] < 2.2


def test_catalog_names_with_commas_split_at_plus_and_at_only():
    c = parse_candidate(ISSUE_AA)
    assert c.updates == 2 and c.kernels == tuple(ISSUE_AA.removesuffix("@2").split("+"))
    assert all(k.count(",") == 3 for k in c.kernels)


OPTIONS = st.fixed_dictionaries({}, optional={"stencil": st.sampled_from(["D2Q9", "D3Q19"]),
                                              "layout": st.sampled_from(["fzyx", "zyxf"]),
                                              "dtype": st.sampled_from(["float64", "float32"]),
                                              "streaming": st.sampled_from(["aa", "esotwist"])})


@settings(max_examples=40, deadline=None)
@given(opts=st.lists(OPTIONS, min_size=1, max_size=3), updates=st.none() | st.integers(1, 4))
def test_any_sequence_of_catalog_names_parses_back_to_its_names(opts, updates):
    names = ["lbm:" + ",".join(f"{k}={v}" for k, v in o.items()) + (",timestep=odd" if "streaming" in o else "")
             for o in opts]
    text = "+".join(names) + ("" if updates is None else f"@{updates}")
    c = parse_candidate(text)
    assert c.kernels == tuple(names) and c.updates == updates and c.label == text


@pytest.fixture
def _nothing_is_built(monkeypatch):
    def refuse(*_args, **_kwargs):
        raise AssertionError("lbmpy was asked to build a kernel with a wrong parameter")
    monkeypatch.setattr(catalog, "_rule", refuse)


@pytest.mark.usefixtures("_nothing_is_built")
@pytest.mark.parametrize("name, message", [
    ("lbm:streaming=ab", "lbm: streaming must be one of ['pull', 'push', 'aa', 'esotwist'], got 'ab'."),
    ("d3q19-srt:dtype=half", "d3q19-srt: dtype must be one of ['float64', 'double', 'fp64', 'float32', 'float', "
                             "'fp32'], got 'half'."),
    ("lbm:streaming=aa,timestep=third", "lbm: timestep must be one of ['even', 'odd'] (with streaming=aa or "
                                        "esotwist), got 'third'."),
    ("d3q19-srt:timestep=odd", "d3q19-srt: timestep=odd is a time step of the in-place streaming patterns "
                               "['aa', 'esotwist']; streaming=pull is one kernel: leave timestep out."),
    ("lbm:streaming=esotwist", "lbm: streaming=esotwist is in place, one kernel per time step: add timestep=even "
                               "or timestep=odd (compare the pair as one candidate: 'lbm:streaming=esotwist,"
                               "timestep=even+lbm:streaming=esotwist,timestep=odd@2')."),
])
def test_a_bad_option_is_refused_naming_what_is_valid(name, message):
    with pytest.raises(warpspeed.InputError) as err:
        warpspeed.find_kernel(name)
    assert str(err.value) == message


@pytest.mark.usefixtures("_nothing_is_built")
def test_compare_refuses_a_bad_candidate_option_before_building(capsys):
    rc = main(["compare", "d3q19-srt", "d3q19-srt:streaming=aa", "--device", H100])
    assert rc != 0
    assert "add timestep=even or timestep=odd" in " ".join(capsys.readouterr().err.split())


def test_warpspeed_measure_runs_the_variant_it_models():
    """The CUDA program of a catalog variant (``warpspeed measure``) has the arrays of the kernel described: AA
    streaming updates one array in place, float32 halves its elements' bytes."""
    from warpspeed.kernels import find_program

    aa = find_program(f"{D2Q9},streaming=aa,timestep=odd,dtype=float32", domain=(16, 16, 1))
    pull = find_program(D2Q9, domain=(16, 16, 1))
    assert [(a.name, a.element_bytes, a.elements) for a in aa.arrays] == [("src", 4, 18 * 18 * 9)]
    assert sorted((a.name, a.element_bytes, a.elements) for a in pull.arrays) == [("dst", 8, 18 * 18 * 9),
                                                                                   ("src", 8, 18 * 18 * 9)]
    modeled = warpspeed.find_kernel(f"{D2Q9},streaming=aa,timestep=odd,dtype=float32", domain=(16, 16))
    assert [(f.name, f.element_bytes) for f in modeled.fields] == [("src", 4)]
