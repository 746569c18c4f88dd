"""Variant parameters in the kernel_tuner integration: a tune_params parameter that selects the kernel (a layout,
a streaming pattern) ranked together with the block, as warpspeed.compare ranks candidate kernels."""

import itertools
import json
import re
import warnings

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import warpspeed
from warpspeed import InputError
from warpspeed.integrations import kernel_tuner as wk
from warpspeed.integrations.kernel_tuner.variants import merge_variants
from warpspeed.measurement.validation import validate

DEVICE = "H100-SXM5-80GB"
COPIES = {"copy": {"a": "star3d-r1", "b": "star3d-r1"}}
COPIES_TP = {"copy": ["a", "b"], "block_size_x": [32, 64, 128, 1024], "block_size_y": [1, 2], "unroll": [0, 1]}
LAYOUTS = {"layout": {"fzyx": "d3q19-srt", "zyxf": "d3q19-srt:layout=zyxf"}}


def key(r) -> tuple:
    return r.configuration.block, r.configuration.folding


def vkey(r) -> tuple:
    return r.configuration.value, r.configuration.block, r.configuration.folding


def pkey(p: dict, parameter: str) -> tuple:
    c = wk.NAMES.configuration(p)
    return p[parameter], c.block, c.folding


@pytest.fixture(scope="module")
def copies():
    return wk.rank_tune_params(COPIES, DEVICE, COPIES_TP, domain=(64, 64, 64))


@pytest.fixture(scope="module")
def single():
    return wk.rank_tune_params("star3d-r1", DEVICE, {k: v for k, v in COPIES_TP.items() if k != "copy"},
                               domain=(64, 64, 64))


@pytest.fixture(scope="module")
def layouts():
    """d3q19-srt in both layouts on the blocks warpspeed.compare ranks them with (its thread count), and that
    comparison."""
    comparison = warpspeed.compare(list(LAYOUTS["layout"].values()), DEVICE)
    choice = comparison.candidates[0].kernels[0]
    blocks = {r.configuration.block for r in choice.ranking.results} | {b.configuration.block
                                                                        for b in choice.ranking.bounded}
    tp = {"layout": ["zyxf", "fzyx"], **{n: sorted({b[axis] for b in blocks})
                                         for axis, n in enumerate(wk.NAMES.block)}}

    def ranked_block(p):
        return (p["block_size_x"], p["block_size_y"], p["block_size_z"]) in blocks

    ranking = wk.rank_tune_params(LAYOUTS, DEVICE, tp, restrictions=ranked_block)
    return ranking, comparison, tp, ranked_block


def test_two_copies_of_one_kernel_tie_and_interleave(copies, single):
    assert isinstance(copies, wk.VariantRanking) and copies.values == ("a", "b")
    assert copies.variant("a").results is copies.variant("b").results  # one kernel met twice is ranked once
    # each configuration of the single kernel's order twice, a then b, at the same time
    assert [vkey(r) for r in copies.results] == [(v, *key(r)) for r in single.results for v in ("a", "b")]
    for a, b in zip(copies.results[::2], copies.results[1::2], strict=True):
        assert a.data["time_s"] == b.data["time_s"] if a.estimate else a.error == b.error
    assert copies.best.estimate.time_s == single.best.estimate.time_s
    # the full space: (value, block) in the merged order, other parameters in kernel_tuner's order among equals
    order = wk.ordered_params(copies, COPIES_TP)
    assert len(order) == 2 * 4 * 2 * 2
    assert [pkey(p, "copy") for p in order[:4]] == [(v, *key(single.best)) for v in ("a", "a", "b", "b")]
    assert [p["unroll"] for p in order[:4]] == [0, 1, 0, 1]
    assert wk.x0(copies, COPIES_TP) == ["a", *single.best.configuration.block[:2], 0]
    # two configurations predicted equal are contenders: both copies of the best are measured first
    assert [c.key for c in copies.confidence.measure[:2]] == [("a", *key(single.best)), ("b", *key(single.best))]


@pytest.fixture(scope="module")
def wider(single):
    """star3d-r4 on the space of ``single`` (star3d-r1): another kernel of the same domain."""
    return wk.rank_tune_params("star3d-r4", DEVICE, {k: v for k, v in COPIES_TP.items() if k != "copy"},
                               domain=(64, 64, 64))


@settings(max_examples=60, deadline=None)
@given(values=st.lists(st.one_of(st.text(min_size=1, max_size=4), st.integers(-5, 5)), min_size=1, max_size=4,
                       unique=True),
       which=st.lists(st.booleans(), min_size=4, max_size=4))
def test_a_merge_keeps_each_variants_order_and_sorts_by_time_per_update(single, wider, values, which):
    rankings = [(v, wider if w else single) for v, w in zip(values, which, strict=False)]
    merged = merge_variants("variant", rankings, wk.NAMES, (64, 64, 64), None)
    assert len(merged.results) == sum(len(r.results) for _, r in rankings)
    for v, own in rankings:  # each value's configurations in its own ranking's order
        assert [key(r.result) for r in merged.results if r.configuration.value == v] == [key(r) for r in own.results]
    times = [r.estimate.time_s for r in merged.results if r.estimate is not None]
    assert times == sorted(times) and all(r.error for r in merged.results[len(times):])
    space = {"variant": values, **{k: v for k, v in COPIES_TP.items() if k != "copy"}}
    assert len(wk.ordered_params(merged, space)) == 16 * len(values)


def test_fzyx_before_zyxf_for_d3q19_on_the_h100_with_compares_factor(layouts):
    ranking, comparison, _, _ = layouts
    assert ranking.best.configuration.value == "fzyx"
    launchable = [r for r in ranking.results if not r.error]
    # the top of the order: every fzyx block of at least 8 threads in x (a sector of doubles per row), then zyxf
    wide = [vkey(r) for r in launchable if r.configuration.value == "fzyx" and r.configuration.block[0] >= 8]
    assert len(wide) > 20 and [vkey(r) for r in launchable[:len(wide)]] == wide
    assert launchable[len(wide)].configuration.value == "zyxf"
    assert {c.value for c in ranking.confidence.measure} == {"fzyx"}
    best_zyxf = next(r for r in launchable if r.configuration.value == "zyxf")
    factor = best_zyxf.estimate.time_s / ranking.best.estimate.time_s
    assert [c.name for c in comparison.candidates] == ["d3q19-srt", "d3q19-srt:layout=zyxf"]
    assert factor == pytest.approx(comparison.candidates[1].factor, rel=1e-12)  # the same time basis
    assert factor > 1.5  # measured 3.4 (tests/data/hopper): the model sees the gap, short of its size
    # each variant's ranking is its kernel's own
    zyxf_choice = comparison.candidates[1].kernels[0]
    assert ranking.variant("zyxf").best.configuration.block == zyxf_choice.best.configuration.block
    assert ranking.variant("fzyx").origin.kernel == "d3q19-srt"
    assert ranking.variant("zyxf").origin.kernel == "d3q19-srt:layout=zyxf"


def test_a_screened_variant_ranking_keeps_the_full_rankings_best_and_refuses_a_top_beyond_it(copies):
    screened = wk.rank_tune_params(COPIES, DEVICE, COPIES_TP, domain=(64, 64, 64), screen=2)
    assert screened.screen == 2 and screened.bounded
    assert [vkey(r) for r in screened.results[:2]] == [vkey(r) for r in copies.results[:2]]
    assert wk.ordered_params(screened, COPIES_TP)[:4] == wk.ordered_params(copies, COPIES_TP)[:4]
    # a top the screen proves keeps the full ranking's top; one beyond what it proves is refused
    refused = []
    for top in range(1, len(copies.results) + 1):
        try:
            kept = wk.restriction(screened, top=top)
        except InputError as e:
            assert re.search(r"screened \(screen=2\).*give top <= 2", str(e))
            refused.append(top)
            continue
        full = wk.restriction(copies, top=top)
        space = [dict(zip(COPIES_TP, values, strict=True)) for values in itertools.product(*COPIES_TP.values())]
        assert [kept(p) for p in space] == [full(p) for p in space], top
    assert refused and refused == list(range(refused[0], len(copies.results) + 1))


def test_variant_errors_name_the_values_and_parameters():
    tp = {"layout": ["fzyx", "zyxf", "soa"], "block_size_x": [64, 128]}
    with pytest.raises(InputError, match=r"tune_params\['layout'\] holds 'soa', which the kernel mapping lacks"):
        wk.rank_tune_params(LAYOUTS, DEVICE, tp)
    with pytest.raises(InputError, match=r"the kernel mapping has layout='zyxf', which tune_params\['layout'\] "
                                         r"lacks \(it holds 'fzyx'\)"):
        wk.rank_tune_params(LAYOUTS, DEVICE, {"layout": ["fzyx"], "block_size_x": [64]})
    with pytest.raises(InputError, match=r"variant parameter 'layout' is not in tune_params \(its parameters: "
                                         r"block_size_x\)"):
        wk.rank_tune_params(LAYOUTS, DEVICE, {"block_size_x": [64]})
    with pytest.raises(InputError, match=r"'block_size_y' is a block or folding parameter"):
        wk.rank_tune_params({"block_size_y": {1: "d3q19-srt"}}, DEVICE, {"block_size_x": [64], "block_size_y": [1]})
    with pytest.raises(InputError, match=r"one variant parameter .* got 2 keys \('layout', 'streaming'\)"):
        wk.rank_tune_params({"layout": {}, "streaming": {}}, DEVICE, tp)
    with pytest.raises(InputError, match=r"kernel\['layout'\] is 'd3q19-srt'; give a mapping"):
        wk.rank_tune_params({"layout": "d3q19-srt"}, DEVICE, tp)
    with pytest.raises(InputError, match=r"kernel of layout='zyxf': .*nosuchkernel"):
        wk.rank_tune_params({"layout": {"fzyx": "d3q19-srt", "zyxf": "nosuchkernel"}}, DEVICE,
                            {"layout": ["fzyx", "zyxf"], "block_size_x": [64]})
    # different work: kernels of other domains are refused as warpspeed.compare refuses such candidates
    with pytest.raises(InputError, match=r"do not do the same work: kernel='a' \(d3q19-srt\) sweeps 256x256x256, "
                                         r"kernel='b' \(star3d-r1\) sweeps 510x510x510.*domain="):
        wk.rank_tune_params({"kernel": {"a": "d3q19-srt", "b": "star3d-r1"}}, DEVICE,
                            {"kernel": ["a", "b"], "block_size_x": [64]})


def test_a_configuration_without_the_variant_parameter_is_an_error_naming_it(copies):
    no_variant = {k: v for k, v in COPIES_TP.items() if k != "copy"}
    for call in (lambda: wk.ordered_params(copies, no_variant), lambda: wk.x0(copies, no_variant),
                 lambda: wk.restriction(copies, top=2)({"block_size_x": 32, "block_size_y": 1})):
        with pytest.raises(InputError, match=r"has no variant parameter 'copy'.*values 'a', 'b'"):
            call()


def test_restriction_keeps_the_top_value_block_pairs(copies):
    keep = wk.restriction(copies, top=3)
    kept = [p for p, _ in wk.tune_space(COPIES_TP) if keep(p)]
    assert {pkey(p, "copy") for p in kept} == {vkey(r) for r in copies.results[:3]}
    # a space without the kept variant's value keeps nothing: refused before kernel_tuner's search
    (check,) = keep.space_checks
    with pytest.raises(InputError, match=r"\(copy \['c'\], block_size_x .*lacks all 3 configurations it keeps"):
        check({"copy": ["c"], "block_size_x": [32, 64, 128, 1024], "block_size_y": [1, 2]})
    with pytest.raises(InputError, match=r"\(parameters block_size_x, block_size_y\) has no variant parameter 'copy'"):
        check({"block_size_x": [32, 64, 128, 1024], "block_size_y": [1, 2]})


def test_exports_record_each_variants_kernel_and_read_back_one_variant(layouts, tmp_path):
    ranking, _, tp, ranked_block = layouts
    doc = wk.t4_results(ranking, tp, restrictions=ranked_block)
    meta = doc["metadata"]["warpspeed"]
    assert meta["variant_parameter"] == "layout" and "kernel_spec" not in meta
    assert [(v["value"], v["kernel_spec"]) for v in meta["variants"]] == [("zyxf", "d3q19-srt:layout=zyxf"),
                                                                         ("fzyx", "d3q19-srt")]
    assert meta["device_spec"] == DEVICE
    assert doc["results"][0]["configuration"]["layout"] == "fzyx"
    path = wk.write_cache(tmp_path / "layouts.json", ranking, tp, restrictions=ranked_block)
    cache = json.loads(path.read_text())
    assert cache["kernel_name"] == "d3q19_srt" and cache["tune_params_keys"][0] == "layout"
    assert list(cache["cache"])[0] == "fzyx," + ",".join(map(str, ranking.best.configuration.block))
    with pytest.raises(InputError, match=r"holds 2 kernels, one per value of parameter 'layout' \(zyxf, fzyx\); "
                                         r".*--select layout=zyxf"):
        wk.read_kernel_tuner(path)
    with pytest.raises(InputError, match=r"select layout='soa' is no value of the file's variants"):
        wk.read_kernel_tuner(path, select={"layout": "soa"})
    for value in ("fzyx", "zyxf"):
        rows = wk.read_kernel_tuner(path, select={"layout": value})
        own = ranking.variant(value)
        assert {m.kernel for m in rows} == {own.origin.kernel}
        assert sorted(m.block for m in rows) == sorted(r.configuration.block for r in own.results if not r.error)
        (report,) = validate(rows)  # each variant's rows, estimated again with its own kernel: exact
        assert report.ratio.median == pytest.approx(1.0)


def test_warpspeed_order_runs_kernel_tuners_strategy_interface_over_the_mixed_space(copies, tmp_path):
    kernel_tuner = pytest.importorskip("kernel_tuner")
    path = wk.write_cache(tmp_path / "copies.json", copies, COPIES_TP)
    doc = json.loads(path.read_text())

    def tune(**kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return kernel_tuner.tune_kernel(doc["kernel_name"], f"__global__ void {doc['kernel_name']}() {{}}",
                                            tuple(doc["problem_size"]), [], doc["tune_params"], cache=str(path),
                                            simulation_mode=True, quiet=True,
                                            restrictions=kwargs.pop("restrictions", wk.cached_restriction(path)),
                                            **kwargs)

    results, env = tune(strategy=wk.WarpspeedOrder(copies), strategy_options={"max_fevals": 6})
    assert [{k: r[k] for k in COPIES_TP} for r in results] == wk.ordered_params(copies, COPIES_TP)[:6]
    assert [r["copy"] for r in results] == ["a", "a", "b", "b", "a", "a"]  # the copies interleave (unroll 0, 1)
    assert pkey(results[0], "copy") == vkey(copies.best) and pkey(results[2], "copy") == ("b", *vkey(copies.best)[1:])
    assert wk.x0(copies, COPIES_TP) == [env["best_config"][k] for k in COPIES_TP]
    # the model's top 2 (value, block) pairs kept by restriction: kernel_tuner measures exactly those
    results, _ = tune(restrictions=wk.all_of(wk.cached_restriction(path), wk.restriction(copies, top=2)))
    assert {pkey(r, "copy") for r in results} == {vkey(r) for r in copies.results[:2]}


def test_the_docs_variant_example_runs_and_prints_what_it_says():
    """docs/kernel-tuner.md, "Variant parameters": its python block runs, and its comment is the best found."""
    from paths import ROOT

    text = (ROOT / "docs" / "kernel-tuner.md").read_text()
    section = re.search(r"^## Variant parameters\n(.*?)^## ", text, flags=re.S | re.M)
    block = re.search(r"^```python\n(.*?)^```", section.group(1), flags=re.S | re.M).group(1)
    namespace: dict = {"wk": wk}
    exec(compile(block, "<docs/kernel-tuner.md variant example>", "exec"), namespace)
    said = re.search(r"ranking.best.configuration.label\s+# '(.*)'", block).group(1)
    assert namespace["ranking"].best.configuration.label == said
    assert isinstance(namespace["ranking"].variant("zyxf"), wk.TuneRanking)
