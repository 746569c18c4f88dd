"""The kernel_tuner integration where a newcomer uses it a little wrong, inside real kernel_tuner 1.5 runs
(simulation mode, replaying caches of the model's own times written to tmp_path): a parameter that looks like a
block or folding extent under a name warpspeed does not read is warned about, warpspeed's restrictions work
inside a list of restrictions, a restriction that keeps nothing of the space tuned is an InputError before
kernel_tuner's "max_fevals must be greater than zero", a 2-D kernel's cache carries the problem_size kernel_tuner
is given, and the install hint names the extra as pip matches it."""

import ast
import json
import re
import sys
import warnings
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import warpspeed
from warpspeed import InputError
from warpspeed.integrations import kernel_tuner as wk
from warpspeed.measurement.measurements import Measurement

kernel_tuner = pytest.importorskip("kernel_tuner")

DEVICE = "H100-SXM5-80GB"
DOMAIN = (128, 128, 128)
TP = {"block_size_x": [32, 64, 128, 256], "block_size_y": [1, 2, 4, 8], "unroll": [0, 1]}


def tune(cache: Path, tune_params: dict, **kwargs) -> list[dict]:
    """kernel_tuner's tune_kernel replaying a cache file (a dummy kernel string: nothing is compiled)."""
    doc = json.loads(cache.read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results, _ = kernel_tuner.tune_kernel(doc["kernel_name"], f"__global__ void {doc['kernel_name']}() {{}}",
                                              tuple(doc["problem_size"]), [], tune_params, cache=str(cache),
                                              simulation_mode=True, quiet=True, **kwargs)
    return results


def blocks(results) -> set[tuple[int, int]]:
    return {(r["block_size_x"], r["block_size_y"]) for r in results}


@pytest.fixture(scope="module")
def ranking():
    return wk.rank_tune_params("star3d-r1", DEVICE, TP, domain=DOMAIN)


@pytest.fixture
def cache(ranking, tmp_path):
    """The model's times of TP as a kernel_tuner cache (replayable; nothing measured)."""
    return wk.write_cache(tmp_path / "predicted.json", ranking, TP)


def test_warpspeed_restrictions_work_inside_a_list_of_restrictions(ranking, cache):
    """kernel_tuner calls a function inside a list with positional values (a function of the dict failed with
    a bare TypeError); warpspeed's restrictions get the names there too, beside strings and each other."""
    top3 = {r.configuration.block[:2] for r in ranking.results[:3]}
    assert len(top3) == 3
    cached, top = wk.cached_restriction(cache), wk.restriction(ranking, top=3)
    for restrictions in ([cached, top], [top, "block_size_x >= 32"], ["block_size_x >= 32", top], [top],
                         [wk.all_of(cached), top, "unroll == 0"]):
        results = tune(cache, TP, restrictions=restrictions)
        assert blocks(results) == top3, restrictions
        assert len(results) == (3 if "unroll == 0" in restrictions else 6)  # x 2 unroll values
    # a user's function of the dict inside a list, through all_of
    worst = {r.configuration.block[:2] for r in ranking.results[-3:]}
    keep_worst = wk.all_of(lambda p: (p["block_size_x"], p["block_size_y"]) in worst)
    assert blocks(tune(cache, TP, restrictions=[cached, keep_worst])) == worst


def test_a_lone_restriction_of_a_one_parameter_space_gets_its_value_by_name(tmp_path):
    """kernel_tuner 1.5 calls a lone restriction of a one-parameter space with the value alone."""
    tp = {"block_size_x": [32, 64, 128, 256]}
    r = wk.rank_tune_params("star3d-r1", DEVICE, tp, domain=DOMAIN)
    cache = wk.write_cache(tmp_path / "predicted.json", r, tp)
    results = tune(cache, tp, restrictions=wk.restriction(r, top=2))
    assert [p["block_size_x"] for p in results] == sorted(c.configuration.block[0] for c in r.results[:2])


def test_a_restriction_called_with_values_alone_points_at_all_of(ranking):
    keep = wk.restriction(ranking, top=3)
    assert keep(wk.NAMES.params(ranking.best.configuration)) is True  # the dict, as before
    with pytest.raises(InputError, match=r"restriction\(top=3\) was called with \(32, 4\), not with the dict .* "
                                         r"restrictions=all_of\("):
        keep(32, 4)


def test_a_restriction_that_keeps_nothing_of_the_space_tuned_is_an_input_error(ranking, cache, tmp_path):
    """Without the check kernel_tuner builds an empty space and says "max_fevals must be greater than zero"."""
    small = {"block_size_x": [32, 64], "block_size_y": [1, 2]}
    other = wk.rank_tune_params("star3d-r1", DEVICE, {"block_size_x": [512, 1024], "block_size_y": [1]},
                                domain=DOMAIN)
    disjoint = (r"restriction\(top=2\): kernel_tuner's search space \(block_size_x \[32, 64\], block_size_y \[1, 2\]\) "
                r"lacks all 2 configurations it keeps and shares no configuration with the ranking of "
                r"star3d-r1 on H100-SXM5-80GB, .*max_fevals.* Rank the space kernel_tuner tunes: rank_tune_params")
    small_cache = wk.write_cache(tmp_path / "small.json", wk.rank_tune_params("star3d-r1", DEVICE, small,
                                                                              domain=DOMAIN), small)
    for restrictions in (wk.restriction(other, top=2), [wk.restriction(other, top=2)],
                         wk.all_of(wk.cached_restriction(small_cache), wk.restriction(other, top=2)),
                         [wk.cached_restriction(small_cache), wk.restriction(other, top=2), "block_size_x > 0"]):
        with pytest.raises(InputError, match=disjoint):
            tune(small_cache, small, restrictions=restrictions)
    # the space shares configurations with the ranking, but none of those kept
    best = ranking.best.configuration.block[:2]
    without_best = {"block_size_x": [v for v in TP["block_size_x"] if v != best[0]], **{
        k: v for k, v in TP.items() if k != "block_size_x"}}
    with pytest.raises(InputError, match=r"restriction\(top=1\): .* lacks the configuration it keeps "
                                         r"\(it holds 12 other configurations of the ranking\).*a larger top"):
        tune(cache, without_best, restrictions=wk.restriction(ranking, top=1))
    # kept ones in the space: it runs
    kept = {r.configuration.block[:2] for r in ranking.results[:5] if r.configuration.block[0] != best[0]}
    assert kept and blocks(tune(cache, without_best, restrictions=wk.restriction(ranking, top=5))) == kept


def test_a_restriction_string_without_kernel_tuner_names_the_extra_as_pip_matches_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "kernel_tuner.util", None)  # import kernel_tuner.util fails
    with pytest.raises(InputError, match=r"needs kernel_tuner") as err:
        wk.all_of("block_size_x>=32")
    assert "pip install -e '.[kernel-tuner]'" in str(err.value) and "kernel_tuner]" not in str(err.value)


def test_a_folding_under_a_name_warpspeed_does_not_read_is_warned_about_with_the_names_to_give():
    tp = {"block_size_x": [32, 64, 128], "block_size_y": [1, 2, 4], "fold_y": [1, 2]}
    with pytest.warns(UserWarning, match=r"'fold_y' \(values \[1, 2\]\) looks like a folding extent in y, but "
                                         r"warpspeed reads the folding from \(folding_x, folding_y, folding_z\).*"
                                         r"every configuration is ranked with folding 1 in y") as record:
        unfolded = wk.rank_tune_params("star3d-r1", DEVICE, tp, domain=DOMAIN)
    assert len(record) == 1 and record[0].filename == __file__  # points at the call
    assert len(unfolded.results) == 9 and {r.configuration.folding for r in unfolded.results} == {(1, 1, 1)}
    suggested = re.search(r"names=ParameterNames\(block=(\(.*?\)), folding=(\(.*?\))\)", str(record[0].message))
    names = wk.ParameterNames(*map(ast.literal_eval, suggested.groups()))
    assert names == wk.ParameterNames(folding=("folding_x", "fold_y", "folding_z"))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # named: no warning, and the folding is ranked
        folded = wk.rank_tune_params("star3d-r1", DEVICE, tp, domain=DOMAIN, names=names)
    assert len(folded.results) == 18 and {r.configuration.folding for r in folded.results} == {(1, 1, 1), (1, 2, 1)}


@pytest.mark.parametrize("tune_params, names", [
    (TP, None),  # an unroll flag
    ({"bx": [32, 64], "fy": [1, 2]}, wk.ParameterNames(block=("bx", None, None), folding=(None, "fy", None))),
    ({"block_size_x": [32, 64], "tile_size_y": [1]}, None),  # extent 1 only: ranked the same either way
    ({"block_size_x": [32, 64], "tile_mode_x": ["a", "b"], "use_threads_z": [True, False]}, None),  # no extents
    ({"block_size_x": [32, 64], "tile_max": [2, 4], "box": [2, 3]}, None),  # no axis word
])
def test_spaces_without_an_unnamed_extent_are_ranked_without_a_warning(tune_params, names):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wk.rank_tune_params("star3d-r1", DEVICE, tune_params, names=names, domain=DOMAIN)


@pytest.mark.parametrize("name, kind", [("fold_y", ("folding", 1)), ("foldz", ("folding", 2)),
                                        ("tile_size_x", ("folding", 0)), ("work_per_thread_y", ("folding", 1)),
                                        ("threads_z", ("block", 2)), ("blockDimX", ("block", 0)),
                                        ("BLOCK_Y", ("block", 1)), ("thread_block_z", ("block", 2)),
                                        ("tile_max", None), ("bx", None), ("block_size", None), ("unroll_x", None)])
def test_extent_like_reads_the_kind_and_axis_of_a_name(name, kind):
    assert wk.extent_like(name) == kind


WORDS = ["fold", "folding", "tile", "tiles", "block", "blocks", "threads", "blk"]  # also written foldy


@st.composite
def extent_names(draw) -> str:
    """A block or folding extent's name as people write them: fold_y, foldy, TILE_SIZE_X, work_per_thread_z."""
    word = draw(st.sampled_from([*WORDS, "tile_size", "block_dim", "work_per_thread"]))
    joined = word in WORDS and draw(st.booleans())
    name = f"{word}{'' if joined else '_'}{draw(st.sampled_from('xyz'))}"
    return name.upper() if draw(st.booleans()) else name


@given(st.dictionaries(extent_names(), st.lists(st.integers(1, 64), min_size=1), max_size=4))
def test_every_unnamed_extent_is_warned_about_once_and_the_suggested_names_read_it(suspects):
    tp, names = suspects, wk.NAMES
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        wk.warn_unmapped(tp, names)
    unnamed = {k for k, v in tp.items() if k not in names.all and max(v) > 1}
    assert sorted(str(w.message).split("'")[1] for w in record) == sorted(unnamed)
    if not record:
        return
    groups = re.search(r"names=ParameterNames\(block=(\(.*?\)), folding=(\(.*?\))\)", str(record[0].message))
    suggested = wk.ParameterNames(*map(ast.literal_eval, groups.groups()))
    slots = {wk.extent_like(k) for k in unnamed}
    assert len(set(suggested.all) & unnamed) == len(slots)  # one name per block or folding axis
    if len(slots) == len(unnamed) and not set(names.all) & set(tp):  # each on its own free axis: all named
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            wk.warn_unmapped(tp, suggested)


def test_a_2d_kernels_cache_replays_with_the_2d_problem_size_and_reads_back(tmp_path):
    """kernel_tuner refuses a cache whose problem_size is not tune_kernel's: [8190, 8190, 1] for (8190, 8190)."""
    tp = {"block_size_x": [32, 64, 128], "block_size_y": [1, 2, 4, 8]}
    r = wk.rank_tune_params("star2d-r1", DEVICE, tp, domain=(8190, 8190))
    assert r.problem_size == (8190, 8190)
    path = wk.write_cache(tmp_path / "star2d.json", r, tp)
    doc = json.loads(path.read_text())
    assert doc["problem_size"] == [8190, 8190] and doc["warpspeed"]["domain"] == [8190, 8190, 1]
    results = tune(path, tp)  # problem_size (8190, 8190), as the file says
    best = min((p for p in results if "__error__" not in p), key=lambda p: p["time"])
    assert (best["block_size_x"], best["block_size_y"]) == r.best.configuration.block[:2]
    # read back from either form of problem_size, where the file names no domain of its own
    del doc["warpspeed"]["domain"]
    for size in ([8190, 8190], [8190, 8190, 1]):
        other = tmp_path / f"size{len(size)}.json"
        other.write_text(json.dumps({**doc, "problem_size": size}))
        rows = wk.read_kernel_tuner(other)
        assert {m.domain for m in rows} == {(8190, 8190, 1)} and len(rows) == len(r.results)
        assert max(rows, key=lambda m: m.GLup_s).block == r.best.configuration.block
    # the kernel's own domain where none is given: in its two dimensions
    assert wk.rank_tune_params("star2d-r1", DEVICE, tp).problem_size == (
        wk.rank_tune_params("star2d-r1", DEVICE, tp).best.estimate.domain[:2])


def test_a_cache_takes_the_problem_size_kernel_tuner_is_given(tmp_path):
    """A 3-D kernel whose threads loop over z is tuned with a 2-D problem_size: write_cache(problem_size=...)."""
    tp = {"block_size_x": [32, 64], "block_size_y": [2, 4]}
    r = wk.rank_tune_params("star3d-r1", DEVICE, tp, domain=(64, 64, 64))
    assert json.loads(wk.write_cache(tmp_path / "a.json", r, tp).read_text())["problem_size"] == [64, 64, 64]
    path = wk.write_cache(tmp_path / "b.json", r, tp, problem_size=(64, 64))
    assert json.loads(path.read_text())["problem_size"] == [64, 64] and len(tune(path, tp)) == 4
    # a Ranking of warpspeed.rank (a 2-D kernel): the domain without its trailing extent of 1
    plain = warpspeed.rank("star2d-r1", DEVICE, domain=(96, 80), configs=[c for _, c in wk.tune_space(tp)])
    assert json.loads(wk.write_cache(tmp_path / "c.json", plain, tp).read_text())["problem_size"] == [96, 80]
    with pytest.raises(InputError, match=r"write_cache: problem_size must be positive integers"):
        wk.write_cache(tmp_path / "d.json", r, tp, problem_size=(64, 0))


def test_measurements_of_a_2d_kernel_convert_to_a_2d_problem_size(tmp_path):
    rows = [Measurement(DEVICE, "star2d-r1", (bx, 4, 1), (1, 1, 1), (8190, 8190, 1), 8190 ** 2 / t / 1e9,
                        values={"time_s": t}, line=i)
            for i, (bx, t) in enumerate([(32, 2e-4), (64, 1.5e-4)], start=2)]
    path = wk.measurements_to_cache(rows, tmp_path / "measured.json")
    assert json.loads(path.read_text())["problem_size"] == [8190, 8190]
    assert [m.GLup_s for m in wk.read_kernel_tuner(path)] == pytest.approx([m.GLup_s for m in rows])
