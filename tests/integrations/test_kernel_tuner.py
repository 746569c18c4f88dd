"""The kernel_tuner integration (warpspeed.integrations.kernel_tuner): the ranking of a tune_params space, the
restriction, the ordered strategy and x0 inside real kernel_tuner runs (simulation mode on a committed cache
file converted from measured H100 rows), the T4 and cache exports and their import, and the errors."""

import itertools
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import pytest
from paths import TESTS

import warpspeed
from warpspeed import InputError
from warpspeed.integrations import kernel_tuner as wk
from warpspeed.interface.cli import main
from warpspeed.measurement.measurements import read_measurements, write_measurements
from warpspeed.measurement.validation import validate

kernel_tuner = pytest.importorskip("kernel_tuner")

HERE = TESTS
CSV = HERE / "data" / "hopper" / "star3d-r4-H100.csv"
CACHE = HERE / "data" / "kernel_tuner" / "star3d-r4-H100.star3d_r4.json"
DEVICE = "H100-SXM5-80GB"
SMALL_TP = {"block_size_x": [32, 64, 128, 1024], "block_size_y": [1, 2, 4], "unroll": [0, 1]}


def small_keep(p: dict) -> bool:
    """Excludes one block (128x4), so that the restricted space differs from the product."""
    return not (p["block_size_x"] == 128 and p["block_size_y"] == 4)


def tune(cache: Path, doc: dict, **kwargs):
    """kernel_tuner's tune_kernel replaying a cache file (a dummy kernel string: nothing is compiled)."""
    kwargs.setdefault("restrictions", wk.cached_restriction(cache))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return kernel_tuner.tune_kernel(doc["kernel_name"], f"__global__ void {doc['kernel_name']}() {{}}",
                                        tuple(doc["problem_size"]), [], doc["tune_params"], cache=str(cache),
                                        simulation_mode=True, quiet=True, **kwargs)


def one_line(text: str) -> str:
    """The CLI's error paragraph without its line breaks."""
    return " ".join(text.split())


def key(r) -> tuple:
    return r.configuration.block, r.configuration.folding


def params_key(p: dict) -> tuple:
    c = wk.NAMES.configuration(p)
    return c.block, c.folding


@pytest.fixture(scope="module")
def doc():
    return json.loads(CACHE.read_text())


@pytest.fixture(scope="module")
def ranking(doc):
    """The model's ranking of the 168 measured configurations (registers of the binary that ran)."""
    return wk.rank_tune_params("star3d-r4", DEVICE, doc["tune_params"], restrictions=wk.cached_restriction(CACHE),
                               domain=doc["problem_size"], registers=32)


@pytest.fixture(scope="module")
def small():
    """star3d-r1 at 64^3: 4 x 3 blocks less one, 1024x2 and 1024x4 cannot launch (more than 1024 threads)."""
    return wk.rank_tune_params("star3d-r1", DEVICE, SMALL_TP, restrictions=small_keep, domain=(64, 64, 64))


def test_importing_warpspeed_and_the_module_does_not_import_kernel_tuner():
    code = ("import sys, warpspeed; from warpspeed.integrations import kernel_tuner as wk\n"
            "r = wk.rank_tune_params('star3d-r1', 'H100-SXM5-80GB', {'block_size_x': [32, 64]}, domain=(32, 32, 32))\n"
            "wk.restriction(r, top=1)({'block_size_x': 32}); wk.x0(r, {'block_size_x': [32, 64]}); wk.t4_results(r)\n"
            "assert 'kernel_tuner' not in sys.modules, 'imported'")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr


def test_parameter_names_and_tune_params_errors_name_the_parameter():
    with pytest.raises(InputError, match=r"three parameter names"):
        wk.ParameterNames(block=("bx", "by"))
    with pytest.raises(InputError, match=r"'bx' named for more than one"):
        wk.ParameterNames(block=("bx", "by", None), folding=("bx", None, None))
    with pytest.raises(InputError, match=r"tune_params\['block_size_x'\] holds '64'; a block size parameter takes "
                                         r"positive integers"):
        wk.checked_tune_params({"block_size_x": [32, "64"]})
    with pytest.raises(InputError, match=r"tune_params\['folding_y'\] holds 0; a folding parameter"):
        wk.checked_tune_params({"block_size_x": [32], "folding_y": [1, 0]})
    with pytest.raises(InputError, match=r"holds 2.0"):
        wk.checked_tune_params({"block_size_x": [32], "block_size_y": [1, 2.0]})
    with pytest.raises(InputError, match=r"none of the block size parameters \['block_size_x', 'block_size_y', "
                                         r"'block_size_z'\] is in tune_params \(its parameters: bx, by\)"):
        wk.checked_tune_params({"bx": [32], "by": [4]})
    with pytest.raises(InputError, match=r"tune_params\['unroll'\] is empty"):
        wk.checked_tune_params({"block_size_x": [32], "unroll": []})
    # other parameters take any values; other names work
    names = wk.ParameterNames(block=("bx", "by", None), folding=(None, "fy", None))
    assert wk.checked_tune_params({"bx": [32], "by": [4], "fy": [2], "unroll": ["a", 1.5]}, names)["fy"] == [2]
    assert names.configuration({"bx": 32, "by": 4, "fy": 2, "unroll": "a"}).block == (32, 4, 1)
    assert names.configuration({"bx": 32, "by": 4, "fy": 2}).folding == (1, 2, 1)
    with pytest.raises(InputError, match=r"names must be a ParameterNames"):
        wk.tune_space({"block_size_x": [32]}, names=("block_size_x",))


def test_tune_space_is_kernel_tuners_order_filtered_by_every_kind_of_restriction():
    tp = {"block_size_x": [32, 64], "block_size_y": [1, 2], "unroll": [0, 1]}
    space = wk.tune_space(tp)
    assert [tuple(p.values()) for p, _ in space] == [(32, 1, 0), (32, 1, 1), (32, 2, 0), (32, 2, 1), (64, 1, 0),
                                                     (64, 1, 1), (64, 2, 0), (64, 2, 1)]
    assert space[3][1] == warpspeed.Configuration((32, 2, 1), (1, 1, 1))

    def no_unroll(p):
        return p["unroll"] == 0

    assert len(wk.tune_space(tp, restrictions=no_unroll)) == 4
    # a list of functions and kernel_tuner strings: each must keep the configuration
    kept = wk.tune_space(tp, restrictions=[no_unroll, "block_size_x*block_size_y>=64"])
    assert [tuple(p.values()) for p, _ in kept] == [(32, 2, 0), (64, 1, 0), (64, 2, 0)]

    def broken(p):
        return p["missing"]

    with pytest.raises(InputError, match=r"restriction broken failed on .*KeyError: 'missing'"):
        wk.tune_space(tp, restrictions=broken)
    with pytest.raises(InputError, match=r"restrictions must be a function"):
        wk.tune_space(tp, restrictions=3)
    with pytest.raises(InputError, match=r"exclude every configuration"):
        wk.rank_tune_params("star3d-r1", DEVICE, tp, restrictions="block_size_x > 1000")


def test_rank_tune_params_ranks_exactly_the_restricted_space(small):
    blocks = {(x, y, 1) for x in SMALL_TP["block_size_x"] for y in SMALL_TP["block_size_y"]} - {(128, 4, 1)}
    assert {r.configuration.block for r in small.results} == blocks and len(small.results) == 11
    assert {r.configuration.folding for r in small.results} == {(1, 1, 1)}
    # the same numbers as warpspeed.rank of those blocks
    direct = warpspeed.rank("star3d-r1", DEVICE, blocks=sorted(blocks), domain=(64, 64, 64), jobs=1)
    assert [key(r) for r in small.results] == [key(r) for r in direct.results]
    assert [r.performance_GLup_s for r in small.results] == [r.performance_GLup_s for r in direct.results]
    # blocks of 2048 and 4096 threads cannot launch: last, with an error
    assert [r.configuration.block for r in small.results[-2:]] == [(1024, 2, 1), (1024, 4, 1)]
    assert all(r.error for r in small.results[-2:]) and not any(r.error for r in small.results[:-2])


def test_ordered_params_spread_the_ranking_over_other_parameters_in_kernel_tuners_order(small):
    order = wk.ordered_params(small, SMALL_TP, restrictions=small_keep)
    assert len(order) == 22
    # each block twice in a row (unroll does not change the estimate), unroll 0 first as in kernel_tuner's order
    assert [params_key(p) for p in order[::2]] == [key(r) for r in small.results]
    assert [params_key(p) for p in order[1::2]] == [key(r) for r in small.results]
    assert [p["unroll"] for p in order] == [0, 1] * 11
    # a block the ranking lacks comes last, in kernel_tuner's order
    partial = wk.ordered_params(small, {**SMALL_TP, "block_size_y": [1, 2, 4, 8]}, restrictions=small_keep)
    assert [(p["block_size_x"], p["block_size_y"]) for p in partial[22:]] == [
        (32, 8), (32, 8), (64, 8), (64, 8), (128, 8), (128, 8), (1024, 8), (1024, 8)]


def test_restriction_keeps_exactly_the_top_n_or_those_within_a_share_of_the_best(ranking, doc):
    space = wk.tune_space(doc["tune_params"], restrictions=wk.cached_restriction(CACHE))
    assert len(space) == 168
    keep = wk.restriction(ranking, top=10)
    kept = {(c.block, c.folding) for p, c in space if keep({**p, "unroll": 1})}  # other parameters are ignored
    assert kept == {key(r) for r in ranking.results[:10]}
    best = ranking.best.performance_GLup_s
    within = wk.restriction(ranking, within=0.9)
    kept = {(c.block, c.folding) for p, c in space if within(p)}
    assert kept == {key(r) for r in ranking.results if r.performance_GLup_s >= 0.9 * best}
    assert 10 < len(kept) < 168
    assert not within({"block_size_x": 3, "block_size_y": 3})  # not in the ranking: not kept
    # in kernel_tuner: the restricted space is the top 10, whatever its order of the parameters
    results, _ = tune(CACHE, doc, restrictions=wk.all_of(wk.cached_restriction(CACHE), keep))
    assert {params_key(r) for r in results} == {key(r) for r in ranking.results[:10]} and len(results) == 10
    for bad, match in [(dict(top=0), "top is 0"), (dict(within=1.5), "within is 1.5"), ({}, "give one of top"),
                       (dict(top=3, within=0.9), "give one of top")]:
        with pytest.raises(InputError, match=match):
            wk.restriction(ranking, **bad)


def test_restriction_within_refuses_a_screened_ranking_that_may_hide_candidates():
    r = wk.rank_tune_params("star3d-r1", DEVICE, SMALL_TP, domain=(64, 64, 64), screen=1)
    assert r.bounded
    with pytest.raises(InputError, match=r"screened \(screen=1\)"):
        wk.restriction(r, within=0.01)
    assert wk.restriction(r, top=1)(wk.NAMES.params(r.best.configuration))


def test_warpspeed_order_measures_in_the_rankings_order_and_stops_at_the_budget(ranking, doc):
    before = CACHE.read_bytes()
    results, env = tune(CACHE, doc, strategy=wk.WarpspeedOrder(ranking), strategy_options={"max_fevals": 7})
    assert [params_key(r) for r in results] == [key(r) for r in ranking.results[:7]]
    first = ",".join(str(results[0][k]) for k in doc["tune_params_keys"])
    assert results[0]["time"] == doc["cache"][first]["time"]  # the measured time, replayed
    assert CACHE.read_bytes() == before  # simulation mode leaves the committed file as it was
    # configurations outside kernel_tuner's space are skipped: without the two best blocks it starts at the third
    best2 = {key(r) for r in ranking.results[:2]}

    def not_best2(p):
        return params_key(p) not in best2

    results, _ = tune(CACHE, doc, strategy=wk.WarpspeedOrder(ranking), strategy_options={"max_fevals": 3},
                      restrictions=wk.all_of(wk.cached_restriction(CACHE), not_best2))
    assert [params_key(r) for r in results] == [key(r) for r in ranking.results[2:5]]
    # the whole space when the budget allows, each configuration once
    results, _ = tune(CACHE, doc, strategy=wk.WarpspeedOrder(ranking), strategy_options={"max_fevals": 1000})
    assert [params_key(r) for r in results] == [key(r) for r in ranking.results] and len(results) == 168
    # without a budget: what the model cannot decide between, its contenders
    conf = ranking.confidence
    assert conf.level == "close" and 1 < len(conf.measure) <= 8
    results, _ = tune(CACHE, doc, strategy=wk.WarpspeedOrder(ranking))
    assert [params_key(r) for r in results] == [(c.block, c.folding) for c in conf.measure]
    with pytest.raises(InputError, match=r"unknown strategy option\(s\) popsize"):
        tune(CACHE, doc, strategy=wk.WarpspeedOrder(ranking), strategy_options={"max_fevals": 3, "popsize": 4})


def test_an_unvalidated_kernel_gets_a_block_of_every_x_extent_measured_and_its_best_found(tmp_path):
    """The array-of-structures D3Q19 sweep (measured on an H100), where the model's order is no better than
    chance: without a budget, WarpspeedOrder measures the contenders and the best-predicted block of every
    x-extent, and among them is the measured best."""
    (cache,) = wk.convert_measurements(HERE / "data" / "hopper" / "aos-lbm-H100.csv", tmp_path)
    aos = json.loads(cache.read_text())
    ranking = wk.rank_tune_params("d3q19-srt:layout=zyxf", DEVICE, aos["tune_params"],
                                  restrictions=wk.cached_restriction(cache), domain=aos["problem_size"], registers=92)
    conf = ranking.confidence
    assert conf.level == "unvalidated" and len(conf.measure) > conf.contenders_total
    results, env = tune(cache, aos, strategy=wk.WarpspeedOrder(ranking))
    assert [params_key(r) for r in results] == [(c.block, c.folding) for c in conf.measure]
    fastest = min(entry["time"] for entry in aos["cache"].values())
    assert env["best_config"]["time"] == fastest


def test_x0_is_the_best_predicted_configuration_and_starts_greedy_ils_there(ranking, doc):
    x = wk.x0(ranking, doc["tune_params"], restrictions=wk.cached_restriction(CACHE))
    assert x == [*ranking.best.configuration.block, *ranking.best.configuration.folding[1:]]  # x, y, z, fy, fz
    results, _ = tune(CACHE, doc, strategy="greedy_ils", strategy_options={"max_fevals": 3, "x0": x})
    assert [results[0][k] for k in doc["tune_params"]] == x
    # with a non-block parameter: its first value; the best-predicted block the restrictions keep
    assert wk.x0(ranking, {"unroll": [4, 8], **doc["tune_params"]}) == [4, *x]

    def not_best(p):
        return params_key(p) != key(ranking.best)

    second = ranking.results[1].configuration
    assert wk.x0(ranking, doc["tune_params"], restrictions=not_best) == [*second.block, *second.folding[1:]]


def test_t4_export_validates_against_kernel_tuners_schema_and_round_trips(small, tmp_path):
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads((Path(kernel_tuner.__file__).parent / "schema" / "T4" / "1.0.0" /
                         "results-schema.json").read_text())
    doc = wk.t4_results(small, SMALL_TP, restrictions=small_keep)
    jsonschema.validate(doc, schema)
    assert len(doc["results"]) == 22 and doc["schema_version"] == "1.0.0"
    first = doc["results"][0]
    assert first["configuration"] == {"block_size_x": small.best.configuration.block[0],
                                      "block_size_y": small.best.configuration.block[1], "unroll": 0}
    assert first["measurements"][0] == {"name": "time", "value": small.best.data["time_s"] * 1e3, "unit": "ms"}
    assert [r["invalidity"] for r in doc["results"]].count("runtime") == 4  # 2 blocks x 2 unroll values
    path = wk.write_t4_results(tmp_path / "t4.json", small, SMALL_TP, restrictions=small_keep)
    jsonschema.validate(json.loads(path.read_text()), schema)
    # read back: one time per block, so select an unroll value; the failed configurations did not run
    with pytest.raises(InputError, match=r"results\[0\] and results\[1\] have the same block \d+x\d+x1 .*unroll"):
        wk.read_kernel_tuner(path)
    rows = wk.read_kernel_tuner(path, select={"unroll": 1})
    assert len(rows) == 9
    by_block = {r.configuration.block: r for r in small.results}
    for m in rows:
        r = by_block[m.block]
        assert (m.kernel, m.device, m.domain, m.folding) == ("star3d-r1", DEVICE, (64, 64, 64), (1, 1, 1))
        assert m.values["time_s"] == pytest.approx(r.data["time_s"], rel=1e-12)
        assert m.GLup_s == pytest.approx(r.performance_GLup_s, rel=1e-12)
    (report,) = validate(rows)
    assert report.spearman == pytest.approx(1.0) and report.top1_percent == pytest.approx(100.0)
    # the default tune_params: the ranking's blocks
    assert wk.t4_results(small)["results"][0]["configuration"] == {
        "block_size_x": small.best.configuration.block[0], "block_size_y": small.best.configuration.block[1],
        "block_size_z": 1}


def test_kernel_tuners_own_t4_output_is_read():
    from kernel_tuner.file_utils import get_t4_results

    tp = {"block_size_x": [32, 64], "block_size_y": [4]}
    timings = dict(compile_time=1.0, benchmark_time=2.0, framework_time=0.1, strategy_time=0.1,
                   verification_time=0.0, times=[0.5, 0.5])
    results = [{"block_size_x": 32, "block_size_y": 4, "time": 0.5, **timings},
               {"block_size_x": 64, "block_size_y": 4, "time": 0.25, "num_regs": 40, **timings}]
    path = Path(os.environ.get("TMPDIR", "/tmp")) / f"warpspeed-t4-{os.getpid()}.json"
    try:
        path.write_text(json.dumps(get_t4_results(results, tp)))
        rows = wk.read_kernel_tuner(path, kernel="star3d-r1", device=DEVICE, domain=(128, 128, 64))
    finally:
        path.unlink(missing_ok=True)
    assert [(m.block, m.values["time_s"], m.registers) for m in rows] == [((32, 4, 1), 0.5e-3, None),
                                                                          ((64, 4, 1), 0.25e-3, 40)]
    assert rows[1].GLup_s == pytest.approx(128 * 128 * 64 / 0.25e-3 / 1e9)


def test_cache_export_replays_in_simulation_mode_and_round_trips(small, tmp_path):
    path = wk.write_cache(tmp_path / "predicted.json", small, SMALL_TP, restrictions=small_keep)
    doc = json.loads(path.read_text())
    assert (doc["device_name"], doc["kernel_name"], doc["problem_size"]) == (DEVICE, "star3d_r1", [64, 64, 64])
    assert list(doc["cache"])[:2] == [f"{small.best.configuration.block[0]},{small.best.configuration.block[1]},"
                                      f"{u}" for u in (0, 1)]
    results, env = tune(path, doc)  # brute force over the cache
    assert len(results) == 22
    failed = [r for r in results if "__error__" in r]
    assert {(r["block_size_x"], r["block_size_y"]) for r in failed} == {(1024, 2), (1024, 4)} and len(failed) == 4
    by_block = {r.configuration.block[:2]: r for r in small.results}
    for r in results:
        if "__error__" not in r:
            assert r["time"] == by_block[(r["block_size_x"], r["block_size_y"])].data["time_s"] * 1e3
    best = env["best_config"]
    assert (best["block_size_x"], best["block_size_y"]) == small.best.configuration.block[:2]
    rows = wk.read_kernel_tuner(path, select={"unroll": "0"})  # device, kernel and domain from the file
    assert sorted(m.block for m in rows) == sorted(r.configuration.block for r in small.results if not r.error)
    assert {m.registers for m in rows} == {small.best.data["registers"]}  # what the estimates assumed
    (report,) = validate(rows)  # the model against its own times: exact
    assert report.spearman == pytest.approx(1.0) and report.ratio.median == pytest.approx(1.0)


def test_committed_cache_is_the_conversion_of_the_measured_csv(tmp_path, doc):
    (path,) = wk.convert_measurements(CSV, tmp_path, source="tests/data/hopper/star3d-r4-H100.csv")
    assert path.name == CACHE.name and path.read_bytes() == CACHE.read_bytes()
    csv_rows = read_measurements(CSV)
    rows = wk.read_kernel_tuner(CACHE)
    assert len(rows) == len(csv_rows) == 168
    for m, c in zip(rows, csv_rows, strict=True):
        assert (m.kernel, m.device, m.block, m.folding, m.domain, m.registers, m.code) == (
            c.kernel, c.device, c.block, c.folding, c.domain, c.registers, c.code)
        assert m.values["time_s"] == pytest.approx(c.values["time_s"], rel=1e-15)
        assert m.GLup_s == pytest.approx(c.GLup_s, rel=1e-12)
    assert doc["device_name"] == "NVIDIA H100 80GB HBM3" and doc["tune_params_keys"] == [
        "block_size_x", "block_size_y", "block_size_z", "folding_y", "folding_z"]
    assert set(doc["cache"]["32,4,8,1,2"]) == {*doc["tune_params_keys"], "time", "num_regs", "code"}


def test_cli_validate_reads_a_kernel_tuner_cache_like_the_csv(tmp_path, capsys):
    rows = read_measurements(CSV)[:12]
    csv = write_measurements(tmp_path / "part.csv", [{**m.values} for m in rows])
    wk.measurements_to_cache(read_measurements(csv), tmp_path / "part.json")
    assert main(["validate", str(csv)]) == 0
    from_csv = capsys.readouterr().out.splitlines()
    assert main(["validate", str(tmp_path / "part.json")]) == 0
    from_json = capsys.readouterr().out.splitlines()
    assert from_json[0] == from_csv[0] and "12 configurations, Spearman" in from_json[0]
    assert from_json[1] == from_csv[1]  # the predicted / measured ratio
    # a file without the warpspeed header: the options name kernel, device and domain
    doc = json.loads((tmp_path / "part.json").read_text())
    del doc["warpspeed"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(doc))
    assert main(["validate", str(bare)]) == 2
    assert "does not name the warpspeed kernel" in one_line(capsys.readouterr().err)
    assert main(["validate", str(bare), "--kernel", "star3d-r4"]) == 0  # the GPU's reported name names it
    assert capsys.readouterr().out.splitlines()[0] == from_csv[0]
    unknown = tmp_path / "unknown.json"
    unknown.write_text(json.dumps({**doc, "device_name": "Fake GPU"}))
    assert main(["validate", str(unknown), "--kernel", "star3d-r4"]) == 2
    err = one_line(capsys.readouterr().err)
    assert "device_name 'Fake GPU' is no warpspeed device id" in err and "--device" in err
    assert main(["validate", str(bare), "--kernel", "star3d-r4", "--device", DEVICE]) == 0
    assert capsys.readouterr().out.splitlines()[0] == from_csv[0]  # the domain is kernel_tuner's problem_size
    # a problem size that counts the halos: the domain given wins over it
    halo = tmp_path / "halo.json"
    halo.write_text(json.dumps({**doc, "problem_size": [d + 8 for d in doc["problem_size"]]}))
    args = ["validate", str(halo), "--kernel", "star3d-r4", "--device", DEVICE]
    assert main([*args, "--domain", ",".join(map(str, doc["problem_size"]))]) == 0
    assert capsys.readouterr().out.splitlines()[0] == from_csv[0]
    assert main(["validate", str(csv), "--kernel", "star3d-r4"]) == 2
    assert "--kernel: for kernel_tuner .json files" in one_line(capsys.readouterr().err)


def test_read_kernel_tuner_errors_name_the_file_and_key(tmp_path):
    def write(name, text):
        p = tmp_path / name
        p.write_text(text if isinstance(text, str) else json.dumps(text))
        return p

    header = {"device_name": DEVICE, "kernel_name": "k", "problem_size": [64, 64, 64],
              "tune_params_keys": ["block_size_x"], "tune_params": {"block_size_x": [32, 64]}}
    p = write("bad.json", "{\n  nope")
    with pytest.raises(InputError, match=rf"{p}, line 2, column 3: not JSON"):
        wk.read_kernel_tuner(p, kernel="copy")
    with pytest.raises(InputError, match=r"neither a kernel_tuner cache file .* its keys: a"):
        wk.read_kernel_tuner(write("other.json", {"a": 1}), kernel="copy")
    p = write("time.json", {**header, "cache": {"32": {"block_size_x": 32, "time": "fast"}}})
    with pytest.raises(InputError, match=r"time.json: cache entry '32', key 'time' is 'fast'; give the kernel time"):
        wk.read_kernel_tuner(p, kernel="copy")
    p = write("nokey.json", {**header, "cache": {"32": {"block_size_x": 32}}})
    with pytest.raises(InputError, match=r"cache entry '32' has no key 'time'"):
        wk.read_kernel_tuner(p, kernel="copy")
    p = write("regs.json", {**header, "cache": {"32": {"block_size_x": 32, "time": 1.0, "num_regs": 600}}})
    with pytest.raises(InputError, match=r"key 'num_regs' is 600; .* registers per thread in 1..512"):
        wk.read_kernel_tuner(p, kernel="copy")
    p = write("block.json", {**header, "cache": {"32": {"block_size_x": -32, "time": 1.0}}})
    with pytest.raises(InputError, match=r"cache entry '32': parameter 'block_size_x' is -32"):
        wk.read_kernel_tuner(p, kernel="copy")
    p = write("failed.json", {**header, "cache": {"32": {"block_size_x": 32, "time": 1.0},
                                                   "64": {"block_size_x": 64, "__error__": "RuntimeFailedConfig"}}})
    rows = wk.read_kernel_tuner(p, kernel="copy")  # the device id in device_name, the domain in problem_size
    assert [(m.block, m.device, m.domain) for m in rows] == [((32, 1, 1), DEVICE, (64, 64, 64))]
    with pytest.raises(InputError, match=r"has no parameter 'unroll' to select on"):
        wk.read_kernel_tuner(p, kernel="copy", select={"unroll": 1})
    with pytest.raises(InputError, match=r"no configuration that ran and matches select"):
        wk.read_kernel_tuner(p, kernel="copy", select={"block_size_x": 128})
    assert {m.domain for m in wk.read_kernel_tuner(p, kernel="copy", domain=(32, 32, 32))} == {(32, 32, 32)}
    with pytest.raises(InputError, match=r"no entry holds a block size parameter"):
        wk.read_kernel_tuner(p, kernel="copy", names=wk.ParameterNames(block=("bx", None, None)))
    # an interrupted kernel_tuner run leaves the file open (a trailing comma): read as kernel_tuner reads it
    text = json.dumps({**header, "cache": {}}, indent="")[:-3] + '\n"32": {"block_size_x": 32, "time": 2.0},'
    assert wk.read_kernel_tuner(write("open.json", text), kernel="copy")[0].values["time_s"] == 2e-3
    t4 = {"schema_version": "1.0.0", "results": [{"configuration": {"block_size_x": 32}, "times": {},
                                                  "invalidity": "correct", "correctness": 1, "measurements": []}]}
    with pytest.raises(InputError, match=r"results\[0\].measurements has no entry named 'time'"):
        wk.read_kernel_tuner(write("t4.json", t4), kernel="copy", device=DEVICE, domain=(64, 64, 64))
    with pytest.raises(InputError, match=r"names no domain"):
        wk.read_kernel_tuner(write("t4b.json", t4), kernel="copy", device=DEVICE)


def test_export_errors():
    r = warpspeed.rank("star3d-r1", DEVICE, blocks=[(32, 4, 2)], folding=[(1, 1, 1), (1, 2, 1)],
                       domains=[(64, 64, 64), (32, 32, 32)], jobs=1)
    with pytest.raises(InputError, match=r"spans 2 domains"):
        wk.t4_results(r)
    with pytest.raises(InputError, match=r"block extents in z are \[2\], but ParameterNames.block names no"):
        wk.tune_params_of([c.configuration for c in r.results], wk.ParameterNames(block=("bx", "by", None)))
    with pytest.raises(InputError, match=r"expected a warpspeed Ranking"):
        wk.WarpspeedOrder([1, 2])


def test_a_top_n_restriction_of_a_screened_ranking_is_exact_or_refused():
    space = {"block_size_x": [32, 64, 128, 256], "block_size_y": [1, 2, 4, 8], "block_size_z": [1, 2, 4, 8]}
    full = wk.rank_tune_params("star3d-r4", DEVICE, space, domain=(256, 256, 128))
    screened = wk.rank_tune_params("star3d-r4", DEVICE, space, domain=(256, 256, 128), screen=2)
    assert screened.bounded
    params = [dict(zip(space, v, strict=True)) for v in itertools.product(*space.values())]
    for top in (1, 2):
        kept = [p for p in params if wk.restriction(screened, top=top)(p)]
        assert kept == [p for p in params if wk.restriction(full, top=top)(p)]
    with pytest.raises(InputError, match="give top <= 2"):
        wk.restriction(screened, top=len(full.results))
