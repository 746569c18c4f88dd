"""The parameter names a ranking was made with travel with it: inside real kernel_tuner runs (simulation mode,
replaying a cache of the model's own times written to tmp_path) over a space with custom names, WarpspeedOrder,
restriction and x0 read the configurations with the ranking's names when none are given, and a space none
of whose configurations is in the ranking is an InputError naming the parameters expected. Also: WarpspeedOrder
stops at kernel_tuner's time_limit where the cache carries kernel_tuner's timings."""

import json
import pickle
import warnings
from pathlib import Path

import pytest

import warpspeed
from warpspeed import InputError
from warpspeed.integrations import kernel_tuner as wk

kernel_tuner = pytest.importorskip("kernel_tuner")

NAMES = wk.ParameterNames(block=("bx", "by", "bz"), folding=(None, "fy", None))
TP = {"bx": [32, 64, 128, 256], "by": [1, 2, 4, 8], "bz": [1, 2], "fy": [1, 2], "unroll": [0, 1]}
DEVICE = "H100-SXM5-80GB"


def tune(cache: Path, tune_params: dict, **kwargs):
    """kernel_tuner's tune_kernel replaying a cache file (a dummy kernel string: nothing is compiled)."""
    doc = json.loads(cache.read_text())
    kwargs.setdefault("restrictions", wk.cached_restriction(cache))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return kernel_tuner.tune_kernel(doc["kernel_name"], f"__global__ void {doc['kernel_name']}() {{}}",
                                        tuple(doc["problem_size"]), [], tune_params, cache=str(cache),
                                        simulation_mode=True, quiet=True, block_size_names=["bx", "by", "bz"],
                                        **kwargs)


def key(params: dict) -> tuple:
    c = NAMES.configuration(params)
    return c.block, c.folding


@pytest.fixture(scope="module")
def ranking():
    return wk.rank_tune_params("star3d-r1", DEVICE, TP, names=NAMES, domain=(128, 128, 128))


@pytest.fixture
def cache(ranking, tmp_path):
    """The model's times of the space as a kernel_tuner cache (replayable; nothing measured)."""
    return wk.write_cache(tmp_path / "predicted.json", ranking, TP)


def test_the_ranking_carries_its_names(ranking, cache):
    assert isinstance(ranking, wk.TuneRanking) and isinstance(ranking, warpspeed.Ranking)
    assert ranking.names == NAMES
    copy = pickle.loads(pickle.dumps(ranking))  # to worker processes and back: equal, and hashed alike
    assert copy is not ranking and copy == ranking and hash(copy) == hash(ranking)
    assert copy.names == NAMES and copy.origin == ranking.origin and hash(copy.origin) == hash(ranking.origin)
    meta = json.loads(cache.read_text())["warpspeed"]  # the export used them too
    assert (meta["block_names"], meta["folding_names"]) == (["bx", "by", "bz"], [None, "fy", None])
    assert wk.x0(ranking, TP) == [*ranking.best.configuration.block, ranking.best.configuration.folding[1], 0]


def test_warpspeed_order_without_names_measures_the_predicted_best_first(ranking, cache):
    results, _ = tune(cache, TP, strategy=wk.WarpspeedOrder(ranking), strategy_options={"max_fevals": 6})
    assert key(results[0]) == (ranking.best.configuration.block, ranking.best.configuration.folding)
    order = [(c.block, c.folding) for c in ranking.confidence.measure] + [
        (r.configuration.block, r.configuration.folding) for r in ranking.results]
    expected = list(dict.fromkeys(order))[:3]  # each block and folding twice (unroll 0 and 1), in turn
    assert [key(r) for r in results] == [k for k in expected for _ in (0, 1)]
    # kernel_tuner's own order starts elsewhere: the names, not luck, put the best first
    brute, _ = tune(cache, TP, strategy="brute_force")
    assert key(brute[0]) != key(results[0])
    named, _ = tune(cache, TP, strategy=wk.WarpspeedOrder(ranking, names=NAMES), strategy_options={"max_fevals": 6})
    assert [key(r) for r in named] == [key(r) for r in results]


def test_restriction_without_names_keeps_the_top_n(ranking, cache):
    results, _ = tune(cache, TP, restrictions=wk.all_of(wk.cached_restriction(cache), wk.restriction(ranking, top=5)))
    top = {(r.configuration.block, r.configuration.folding) for r in ranking.results[:5]}
    assert {key(r) for r in results} == top and len(results) == 10  # x 2 unroll values


def test_a_space_with_none_of_the_rankings_configurations_is_an_input_error(cache):
    """A ranking made with kernel_tuner's default names, used on the bx/by/bz space: every configuration reads
    as block 1x1x1, which it lacks."""
    default = wk.rank_tune_params("star3d-r1", DEVICE, {"block_size_x": [32, 64]}, domain=(128, 128, 128))
    expected = r"read from the parameters \(block_size_x, block_size_y, block_size_z\) .* have bx, by, bz, fy, unroll"
    with pytest.raises(InputError, match=rf"WarpspeedOrder: no configuration of kernel_tuner's search space is in "
                                         rf"the ranking; the block extents are {expected}"):
        tune(cache, TP, strategy=wk.WarpspeedOrder(default), strategy_options={"max_fevals": 3})
    with pytest.raises(InputError, match=rf"restriction: configuration .* has no block size parameter; .*{expected}"):
        tune(cache, TP, restrictions=wk.restriction(default, top=1))
    with pytest.raises(InputError, match=r"none of the block size parameters \['block_size_x', 'block_size_y', "
                                         r"'block_size_z'\] is in tune_params \(its parameters: bx, by, bz, fy"):
        wk.x0(default, TP)  # x0 sees the whole tune_params: the names it lacks
    with pytest.raises(InputError, match=r"x0: no configuration of tune_params .* is in the ranking; .* have "
                                         r"block_size_x, unroll"):
        wk.x0(default, {"block_size_x": [128], "unroll": [0]})


def test_warpspeed_order_stops_at_the_time_limit_of_a_cache_with_kernel_tuners_timings(ranking, cache, tmp_path):
    """warpspeed's caches carry no compile/verification/benchmark times (it neither measures nor predicts them):
    kernel_tuner's simulation mode then refuses a time_limit. Given them, here made up (100 s per configuration,
    clearly not measured) in a copy in tmp_path, WarpspeedOrder stops once the simulated time exceeds the limit."""
    with pytest.raises(RuntimeError, match="Cannot use simulation mode with a time limit"):
        tune(cache, TP, strategy=wk.WarpspeedOrder(ranking), strategy_options={"time_limit": 350})
    doc = json.loads(cache.read_text())
    for entry in doc["cache"].values():
        entry.update(compile_time=60_000.0, verification_time=0.0, benchmark_time=40_000.0)  # synthetic, in ms
    timed = tmp_path / "synthetic-timings.json"
    timed.write_text(json.dumps(doc))
    results, env = tune(timed, TP, strategy=wk.WarpspeedOrder(ranking), strategy_options={"time_limit": 350})
    budgeted, _ = tune(timed, TP, strategy=wk.WarpspeedOrder(ranking), strategy_options={"max_fevals": 4})
    assert [key(r) for r in results] == [key(r) for r in budgeted]  # 4 x 100 s is the first past 350 s
    assert env["simulated_time"] == pytest.approx(400_000.0)
