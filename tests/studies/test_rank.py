"""Ranking: configuration spaces, order and tie-break, parallel determinism, resumable cache, outputs."""

import csv
import io
import json
import math
import re

import pytest
from made_results import failed, ranked

import warpspeed
import warpspeed.application.ranking as app_ranking
import warpspeed.studies.ranking as rank_module
from warpspeed.application.projection import project
from warpspeed.application.ranking import rank
from warpspeed.application.whatif import whatif
from warpspeed.interface.cli import main
from warpspeed.studies.ranking import Failure, RankedResult, Ranking
from warpspeed.studies.space import Configuration, block_shapes, configurations, paper_space

DEV = "A100-SXM4-40GB"
SMALL = (64, 32, 32)


def test_paper_space_has_168_configurations():
    space = paper_space()
    assert len(space) == 168 and len(set(space)) == 168
    assert all(c.block[0] * c.block[1] * c.block[2] == 1024 and c.block[2] <= 64 for c in space)
    assert {c.folding for c in space} == {(1, 1, 1), (1, 2, 1), (1, 1, 2)}


def test_block_shape_constraints():
    assert len(block_shapes((1024,))) == 56
    assert block_shapes((64,), max_dims=(64, 64, 1)) == [(1, 64, 1), (2, 32, 1), (4, 16, 1), (8, 8, 1),
                                                         (16, 4, 1), (32, 2, 1), (64, 1, 1)]
    assert block_shapes((96,), x=[32, 96], y=[1, 3], z=[1]) == [(32, 3, 1), (96, 1, 1)]
    assert all(b[0] * b[1] * b[2] % 32 == 0 for b in block_shapes((16, 32, 64), warp_multiple=True))
    assert block_shapes((16,), warp_multiple=True) == []
    with pytest.raises(warpspeed.InputError):
        block_shapes((0,))


def test_configurations_deduplicate_and_validate():
    cs = configurations([(32, 4, 1), (32, 4), (32, 4, 1)], [(1, 1, 1), (1, 1, 1), (1, 2)])
    assert cs == [Configuration((32, 4, 1), (1, 1, 1)), Configuration((32, 4, 1), (1, 2, 1))]
    with pytest.raises(warpspeed.InputError, match="folding"):
        configurations([(32, 1, 1)], [(0, 1, 1)])


def result(block, perf, dram, l2=10.0, l1=4.0, error=None):
    """A ranked result with these numbers (the others those of a real estimate)."""
    base = warpspeed.estimate("star3d-r1", "A100-SXM4-40GB", (32, 4, 2), domain=(64, 64, 64))
    if error:
        return failed(base, block, error)
    return ranked(base, block, perf, limiter="DRAM", l1_cycles=l1,
                  volumes={"dram_load": dram, "dram_store": 0.0, "l2_load": l2, "l2_store": 0.0})


def test_order_and_tie_break():
    rs = [result((8, 8, 4), 50, 10), result((32, 4, 2), 60, 12), result((16, 4, 4), 60, 11),
          result((4, 4, 4), 0, 0, error="cannot launch"), result((64, 2, 2), 60, 11, l2=9),
          result((2, 2, 2), 60, 11, l2=9)]
    ordered = [r.configuration.block for r in sorted(rs, key=RankedResult.sort_key)]
    # 60 GLup/s first; among them less DRAM, then less L2, then the wider block in x; errors last
    assert ordered == [(64, 2, 2), (2, 2, 2), (16, 4, 4), (32, 4, 2), (8, 8, 4), (4, 4, 4)]


SWEEP = dict(blocks=block_shapes((128, 256), max_dims=(64, 16, 4)), folding=[(1, 1, 1), (1, 1, 2)], domain=SMALL)


@pytest.fixture(scope="module")
def serial():
    return rank("star3d-r1", DEV, jobs=1, **SWEEP)


def test_ranking_is_sorted_and_counts_limiters(serial):
    perf = [r.performance_GLup_s for r in serial.results]
    assert perf == sorted(perf, reverse=True)
    assert serial.best is serial.results[0] and serial.best.estimate is not None
    assert sum(serial.limiter_counts.values()) == len(serial.results) == 2 * len(SWEEP["blocks"]) == 2 * 26
    assert serial.to_dicts()[0]["rank"] == 1


def test_results_identical_whatever_the_workers(serial):
    for jobs in (2, 3):
        par = rank("star3d-r1", DEV, jobs=jobs, **SWEEP)
        assert par.to_dicts() == serial.to_dicts()


def test_any_executor_works(serial):
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1) as ex:
        r = rank("star3d-r1", DEV, executor=ex, **SWEEP)
    assert r.to_dicts() == serial.to_dicts()


def test_failing_configuration_is_reported_in_its_row():
    r = rank("star3d-r1", DEV, blocks=[(32, 4, 1), (1024, 1, 1)], domain=SMALL, registers=128, jobs=1)
    assert [x.configuration.block for x in r.results] == [(32, 4, 1), (1024, 1, 1)]
    bad = r.results[-1]
    assert bad.error and "cannot launch" in bad.error and bad.performance_GLup_s == 0
    assert bad.data["performance_GLup_s"] == 0 and r.limiter_counts["error"] == 1


def test_cache_resumes_an_interrupted_sweep(tmp_path, monkeypatch):
    cache = tmp_path / "sweep.jsonl"
    calls = []
    real = rank_module.estimate

    def counting(*args, **kw):
        calls.append(args[2])
        return real(*args, **kw)

    monkeypatch.setattr(rank_module, "estimate", counting)

    def interrupt(done, total):
        if done == 5:
            raise KeyboardInterrupt

    blocks = block_shapes((256,), max_dims=(64, 64, 4))[:9]
    kw = dict(blocks=blocks, domain=SMALL, jobs=1, cache=cache)
    with pytest.raises(KeyboardInterrupt):
        rank("star3d-r1", DEV, progress=interrupt, **kw)
    assert len(cache.read_text().splitlines()) == 5
    with cache.open("a") as f:
        f.write('{"key": "cut off in the mid')  # a line cut by the interruption is ignored
    calls.clear()
    resumed = rank("star3d-r1", DEV, **kw)
    assert len(calls) == 9 - 5 and len(resumed.results) == 9
    fresh = rank("star3d-r1", DEV, blocks=blocks, domain=SMALL, jobs=1)
    assert resumed.to_dicts() == fresh.to_dicts()
    # the cached rows come back typed: the same estimates, workloads included
    assert [r.estimate for r in resumed.results] == [r.estimate for r in fresh.results]
    assert [r.estimate.workload for r in resumed.results] == [r.estimate.workload for r in fresh.results]
    calls.clear()
    rank("star3d-r1", DEV, **kw)
    assert calls == []  # everything from the cache
    # a changed device invalidates the entries
    rank("star3d-r1", warpspeed.device(DEV).with_overrides(l2_size="80MiB"), **kw)
    assert len(calls) == 9


def test_cli_rank_json_and_csv_round_trip(capsys):
    argv = ["rank", "star3d-r1", "--device", DEV, "--threads", "256", "--domain", "64,32,32", "--jobs", "1"]
    assert main(argv + ["--format", "json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["configurations"] == 42 and d["best"] == d["results"][0]  # 256 threads: 42 shapes with z <= 64
    assert [x["rank"] for x in d["results"]] == list(range(1, 43))
    assert main(argv + ["--format", "csv"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == 42
    for row, res in zip(rows, d["results"], strict=True):
        assert int(row["rank"]) == res["rank"]
        assert [int(row[f"block_{a}"]) for a in "xyz"] == res["block"]
        assert float(row["performance_GLup_s"]) == pytest.approx(res["performance_GLup_s"], rel=1e-12)
        assert float(row["dram_load"]) == pytest.approx(res["volumes_B_per_lup"]["dram_load"], rel=1e-12)
        assert row["limiter"] == res["limiter"]
        assert row["model"] == res["model"] == "latency"
        pm = res["performance_model"]
        assert float(row["latency_GLup_s"]) == pytest.approx(pm["limits_GLup_s"]["latency"], rel=1e-12)
        assert float(row["dram_efficiency"]) == pytest.approx(pm["dram_efficiency"], rel=1e-12)
    assert main(argv + ["--format", "csv", "--model", "roofline"]) == 0
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert {r["model"] for r in rows} == {"roofline"} and {r["latency_GLup_s"] for r in rows} == {""}


def test_cli_rank_text_headline(capsys):
    code = main(["rank", "star3d-r1", "--device", DEV, "--threads", "256", "--domain", "64,32,32", "--jobs", "1",
                 "--top", "3"])
    out = capsys.readouterr().out
    assert code == 0
    first = out.splitlines()[0]
    assert "best block" in first and "next best" in first and "pystencils default 8x8x4" in first
    assert len([ln for ln in out.splitlines() if re.match(r"^\s*\d+ \d+x\d+x\d+", ln)]) == 3


@pytest.mark.parametrize("argv, word", [
    (["--threads", "25x"], "--threads"), (["--top", "0"], "--top"), (["--jobs", "0"], "--jobs"),
    (["--folding", "1,1"], None),
])
def test_cli_rank_bad_input(capsys, argv, word):
    code = main(["rank", "star3d-r1", "--device", DEV, "--domain", "64,32,32", "--jobs", "1"] + argv)
    err = capsys.readouterr().err
    if word is None:
        assert code == 0  # 1,1 is a valid folding (z = 1)
    else:
        assert code == 2 and word in err


def test_dask_executor_when_installed():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as lc, \
            distributed.Client(lc) as client:
        r = rank("star3d-r1", DEV, threads=(256,), domain=SMALL, executor=client.get_executor())
    assert isinstance(r, Ranking)
    assert r.to_dicts() == rank("star3d-r1", DEV, threads=(256,), domain=SMALL, jobs=1).to_dicts()


def test_domains_and_devices_are_part_of_the_space(capsys):
    r = rank("star3d-r1", DEV, blocks=[(32, 4, 2), (64, 2, 2)], domains=[(64, 32, 32), (128, 64, 32)], jobs=1)
    assert len(r.results) == 4
    assert {tuple(x.data["domain"]) for x in r.results} == {(64, 32, 32), (128, 64, 32)}
    code = main(["rank", "star3d-r1", "--device", DEV, "--device", "H100-SXM5-80GB", "--threads", "256",
                 "--domain", "64,32,32", "--domain", "64,64,32", "--jobs", "1", "--format", "csv"])
    rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert code == 0 and len(rows) == 2 * 2 * 42
    assert {r["device"] for r in rows} == {DEV, "H100-SXM5-80GB"}
    assert {r["domain_y"] for r in rows} == {"32", "64"}


def test_parallel_workers_send_typed_estimates_back():
    blocks = block_shapes((256,), max_dims=(64, 64, 4))[:6]
    par = rank("star3d-r1", DEV, blocks=blocks, domain=SMALL, jobs=2)
    seq = rank("star3d-r1", DEV, blocks=blocks, domain=SMALL, jobs=1)
    assert all(r.estimate is not None for r in par.results)
    assert [r.estimate for r in par.results] == [r.estimate for r in seq.results]
    assert [r.estimate.to_dict() for r in par.results] == [r.data for r in par.results]


def test_an_old_cache_record_is_estimated_afresh_and_an_error_record_is_kept(tmp_path, monkeypatch):
    cache = tmp_path / "sweep.jsonl"
    kw = dict(blocks=[(32, 4, 1), (64, 2, 1), (1024, 1, 1)], domain=(64, 32, 32), registers=128, jobs=1, cache=cache)
    fresh = rank("star3d-r1", DEV, **kw)
    lines = [json.loads(line) for line in cache.read_text().splitlines()]
    assert [bool(rec["error"]) for rec in lines].count(True) == 1  # 1024 threads of 128 registers cannot launch
    for rec in lines:
        if not rec["error"] and rec["configuration"]["block"] == [64, 2, 1]:
            del rec["data"]["workload"]  # as a warpspeed before the workload key wrote it
    cache.write_text("".join(json.dumps(rec) + "\n" for rec in lines))
    calls = []
    real = rank_module.estimate
    monkeypatch.setattr(rank_module, "estimate", lambda *a, **k: calls.append(a[2]) or real(*a, **k))
    resumed = rank("star3d-r1", DEV, **kw)
    assert calls == [(64, 2, 1)]  # only the old record is estimated again; the error row is kept
    assert resumed.to_dicts() == fresh.to_dicts()
    failed_row = resumed.results[-1]
    assert failed_row.estimate is None and "registers" in failed_row.error
    assert failed_row.failure == Failure("star3d-r1", DEV, (64, 32, 32), failed_row.error)
    with pytest.raises(ValueError, match="an estimate, or a failure"):
        RankedResult(Configuration((32, 4, 1)))


@pytest.mark.parametrize("kernel, device, domain, n", [
    ("star3d-r4", "A100-SXM4-40GB", (256, 128, 128), 1), ("star3d-r1", "H100-SXM5-80GB", (258, 130, 66), 3),
    ("box3d-r1", "MI300X", (128, 64, 64), 1), ("star2d-r1", "H200-SXM-141GB", (2048, 512, 1), 5),
    ("copy", "V100-SXM2-32GB", (1 << 20, 1, 1), 2)])
def test_a_screened_ranking_has_the_full_rankings_best(kernel, device, domain, n):
    """Screening skips the full estimate of configurations whose bound is below the n-th best: the n best and
    their order are the full ranking's, every bound is at least the configuration's full estimate, and the
    rest of the space is listed as bounded."""
    k = warpspeed.find_kernel(kernel).with_domain(domain)
    threads = (128, 256, 512, 1024)
    full = warpspeed.rank(k, device, threads, [(1, 1, 1), (1, 2, 1)], jobs=1)
    screened = warpspeed.rank(k, device, threads, [(1, 1, 1), (1, 2, 1)], jobs=1, screen=n)
    assert screened.to_dicts()[:n] == full.to_dicts()[:n]
    by_config = {r.configuration: r for r in full.results}
    assert {r.configuration for r in screened.results} | {b.configuration for b in screened.bounded} == set(by_config)
    assert all(b.bound_GLup_s >= by_config[b.configuration].performance_GLup_s for b in screened.bounded)
    assert all(b.bound_GLup_s < screened.results[n - 1].performance_GLup_s for b in screened.bounded)
    doc = screened.to_dict()
    assert doc["screen"] == n and len(doc["bounded"]) == len(screened.bounded)
    assert "bounded" not in full.to_dict()


def test_screening_skips_most_full_estimates_and_a_cache_remembers_the_bounds(tmp_path, monkeypatch):
    import warpspeed.studies.ranking as ranking

    calls = []
    real = ranking.evaluate
    monkeypatch.setattr(ranking, "evaluate", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    k = warpspeed.find_kernel("star3d-r4")
    first = warpspeed.rank(k, "A100-SXM4-40GB", configs=warpspeed.paper_space(), screen=1, cache=tmp_path / "c")
    assert len(first.bounded) > 84 and len(calls) == len(first.results) < 84  # most of the 168 only bounded
    calls.clear()
    bound = ranking.performance_bound
    monkeypatch.setattr(ranking, "performance_bound", lambda *a, **kw: pytest.fail("bound again"))
    second = warpspeed.rank(k, "A100-SXM4-40GB", configs=warpspeed.paper_space(), screen=1, cache=tmp_path / "c")
    assert calls == [] and second.to_dict() == first.to_dict()
    monkeypatch.setattr(ranking, "performance_bound", bound)
    full = warpspeed.rank(k, "A100-SXM4-40GB", configs=warpspeed.paper_space(), cache=tmp_path / "c", jobs=1)
    assert len(full.results) == 168 and full.best.data == first.best.data  # bound records are not results
    with pytest.raises(warpspeed.InputError, match=r"^screen must be a positive number"):
        warpspeed.rank(k, "A100-SXM4-40GB", configs=warpspeed.paper_space()[:3], screen=0)


def test_cli_rank_screen_lists_the_bounded_configurations(capsys):
    code = main(["rank", "star3d-r4", "--device", "A100-SXM4-40GB", "--domain", "256,128,128", "--screen", "2",
                 "--threads", "256", "--top", "3"])
    out = capsys.readouterr().out
    assert code == 0 and "more only bounded: at most" in out and "below the 2 best (--screen 2)" in out
    code = main(["rank", "star3d-r4", "--device", "A100-SXM4-40GB", "--domain", "256,128,128", "--screen", "2",
                 "--threads", "256", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert code == 0 and doc["screen"] == 2 and doc["bounded"] and doc["configurations"] == len(doc["results"])
    jsonschema = pytest.importorskip("jsonschema")
    from warpspeed import schemas

    jsonschema.validate(doc, schemas.load("rank"))


def test_a_screened_ranking_orders_tied_bounds_and_an_odd_cache_line_is_skipped(tmp_path):
    """Equal bounds (the kernel's domain given and left out) are ordered like the ranking, not by comparing a
    domain of None with a tuple; a cache line that is JSON but not a record is skipped."""
    k = warpspeed.find_kernel("star3d-r1").with_domain((64, 32, 16))
    cfgs = [Configuration((32, 4, 2)), Configuration((32, 4, 2), (1, 1, 1), (64, 32, 16)), Configuration((64, 2, 2))]
    full = warpspeed.rank(k, "H100-SXM5-80GB", configs=cfgs, jobs=1)
    screened = warpspeed.rank(k, "H100-SXM5-80GB", configs=cfgs, jobs=1, screen=1)
    assert screened.to_dicts()[:1] == full.to_dicts()[:1]
    cache = tmp_path / "c.jsonl"
    cache.write_text("[1, 2]\n\"text\"\n")
    assert warpspeed.rank(k, "H100-SXM5-80GB", configs=cfgs, jobs=1, cache=cache).to_dicts() == full.to_dicts()


# ----------------------------------------------------------------------------- 1-D and 2-D kernels
@pytest.mark.parametrize(("domain", "block"), [((1000, 1, 1), (256, 1, 1)), ((512, 512, 1), (16, 16, 1)),
                                               ((64, 64, 64), (8, 8, 4)), ((1, 1, 7), (8, 8, 4))])
def test_pystencils_default_block_follows_the_dimensionality(domain, block):
    from warpspeed.file_frontend import pystencils_default_block

    assert pystencils_default_block(domain) == block


def test_a_2d_domain_is_ranked_without_deeper_blocks_and_against_the_2d_default(capsys):
    r = rank("star2d-r1", "H100-SXM5-80GB", threads=(256, 1024), jobs=1)
    blocks = {res.configuration.block for res in r.results}
    flat = {b for b in block_shapes((256, 1024)) if b[2] == 1}
    assert blocks == flat  # 9 + 11 shapes, none with z > 1
    three_d = rank("star2d-r1", "H100-SXM5-80GB", threads=(1024,), domain=(64, 64, 64), jobs=1)
    assert len(three_d.results) == len(block_shapes((1024,)))  # a 3-D domain keeps every shape
    given = rank("star2d-r1", "H100-SXM5-80GB", blocks=[(32, 4, 2)], jobs=1)
    assert [res.configuration.block for res in given.results] == [(32, 4, 2)]  # named blocks stay
    ref = app_ranking.reference_estimate(r, "star2d-r1", "H100-SXM5-80GB")
    assert ref.configuration.block == (16, 16, 1)
    assert main(["rank", "star2d-r1", "--device", "H100-SXM5-80GB", "--top", "3"]) == 0
    assert "pystencils default 16x16x1" in capsys.readouterr().out


def test_a_1d_domain_gets_only_x_blocks():
    kernel = warpspeed.find_kernel("copy").with_domain((1 << 20, 1, 1))
    r = rank(kernel, "A100-SXM4-40GB", threads=(256, 512, 1024), jobs=1)
    assert {res.configuration.block for res in r.results} == {(256, 1, 1), (512, 1, 1), (1024, 1, 1)}
    assert app_ranking.reference_estimate(r, kernel, "A100-SXM4-40GB").configuration.block == (256, 1, 1)


def test_a_tiny_domain_ranking_says_what_estimate_says(capsys):
    assert main(["rank", "copy", "--device", "A100-SXM4-40GB", "--domain", "4,4,4", "--top", "3"]) == 0
    head = capsys.readouterr().out.split("\n\n")[0]
    assert "note: the domain is smaller than one block's cells" in head
    assert "note: the grid has 1 blocks" in head
    assert "% ahead of the ranked blocks: rank its thread count too" in head  # 8x8x4 has 256 threads, not 1024
    assert "registers per thread" not in head


def _counting_block_stages(monkeypatch) -> list:
    """The block stages counted from here on (each (block, wave blocks) once per count)."""
    import warpspeed.model.analysis as analysis_module

    counted = []
    real = analysis_module._block_stage

    def counting(an, launch, dev, modulus):
        counted.append((launch.block, launch.wave_blocks))
        return real(an, launch, dev, modulus)

    monkeypatch.setattr(analysis_module, "_block_stage", counting)
    return counted


@pytest.mark.parametrize("guess, reused", [(16, True), (200, False)])
def test_counts_made_ahead_with_guessed_registers_serve_the_real_ranking(monkeypatch, guess, reused):
    """precount with registers that give the same blocks per SM (16 and 24 registers both leave the threads as
    the limit) leaves the ranking with the real ones no block stage to count; a guess that changes the waves
    (200 registers) leaves them all. The ranking is the same either way."""
    from warpspeed.model.analysis import forget_shared_analyses

    k = warpspeed.find_kernel("star3d-r1").with_domain((130, 66, 34))
    threads, dev = (256, 512), "H100-SXM5-80GB"
    forget_shared_analyses()
    alone = warpspeed.rank(k.with_registers(24), dev, threads, screen=1)
    forget_shared_analyses()
    counted = _counting_block_stages(monkeypatch)
    app_ranking.precount(k.with_registers(guess), dev, threads, until=lambda: False)
    ahead = len(counted)
    assert ahead > 0
    after = warpspeed.rank(k.with_registers(24), dev, threads, screen=1)
    assert after.to_dicts() == alone.to_dicts()
    assert (len(counted) == ahead) is reused
    if not reused:
        assert {w for _, w in counted[ahead:]}.isdisjoint({w for _, w in counted[:ahead]})
    forget_shared_analyses()


def test_precount_stops_when_told_and_checks_its_input(monkeypatch):
    from warpspeed.model.analysis import forget_shared_analyses

    k = warpspeed.find_kernel("star3d-r1").with_domain((130, 66, 34))
    forget_shared_analyses()
    counted = _counting_block_stages(monkeypatch)
    app_ranking.precount(k, "H100-SXM5-80GB", (256, 512), until=lambda: len(counted) >= 3)
    assert len(counted) == 3
    app_ranking.precount(k, "H100-SXM5-80GB", (256, 512), until=lambda: True)
    assert len(counted) == 3
    with pytest.raises(warpspeed.InputError, match=r"^screen must be a positive number"):
        app_ranking.precount(k, "H100-SXM5-80GB", (256,), until=lambda: False, screen=0)
    forget_shared_analyses()


def test_one_analysis_serves_a_kernel_with_any_registers():
    from warpspeed.model.estimate import KernelAnalysis

    k = warpspeed.find_kernel("star3d-r4").with_domain((256, 128, 128))
    an = KernelAnalysis(k.with_registers(40))
    assert an.kernel.registers is None and an.serves(k) and an.serves(k.with_registers(200))
    assert not an.serves(k.with_domain((128, 128, 128)))
    assert k.without_registers() is k.without_registers() and "registers" not in k.without_registers().spec
    for regs in (40, 64):
        shared = warpspeed.estimate(k.with_registers(regs), DEV, (32, 4, 8), analysis=an)
        own = warpspeed.estimate(k.with_registers(regs), DEV, (32, 4, 8), analysis=KernelAnalysis(k))
        assert shared.to_dict() == own.to_dict() and shared.occupancy.registers == regs


def test_one_thread_count_is_that_count_on_every_ranking_path():
    """threads=256 raised TypeError: 'int' object is not iterable."""
    one = rank("star3d-r1", "H100-SXM5-80GB", threads=256, jobs=1)
    assert {math.prod(r.configuration.block) for r in one.results} == {256}
    assert [r.configuration for r in one.results] == \
        [r.configuration for r in rank("star3d-r1", "H100-SXM5-80GB", threads=(256,), jobs=1).results]
    points = whatif("copy", "A100-SXM4-40GB", "dram_bw", [1000.0, 2000.0], threads=256, jobs=1)
    assert all(math.prod(p.best.configuration.block) == 256 for p in points)
    proj = project("copy", "A100-SXM4-40GB", "H100-SXM5-80GB", threads=256, jobs=1)
    assert math.prod(proj.target_best.configuration.block) == math.prod(proj.source_best.configuration.block) == 256


@pytest.mark.parametrize("threads, shown", [("256", "'256'"), (2.5, "2.5"), ([], "()"), ([True], "(True,)"),
                                            ([256, 0], "(256, 0)"), (None, "None")])
def test_wrong_thread_counts_are_named(threads, shown):
    with pytest.raises(warpspeed.InputError, match=r"threads must be .* got " + re.escape(shown) + r"\.$"):
        rank("star3d-r1", "H100-SXM5-80GB", threads=threads)


def test_a_cache_that_is_not_utf8_is_refused_clearly(tmp_path, capsys):
    bad = tmp_path / "c.jsonl"
    bad.write_bytes(b"\xff\xfe\x00not text")
    with pytest.raises(warpspeed.InputError, match=r"is not a ranking cache \(it is not UTF-8 text\)"):
        rank("star3d-r1", "H100-SXM5-80GB", threads=(256,), cache=bad)
    assert main(["rank", "star3d-r1", "--device", "H100-SXM5-80GB", "--threads", "256", "--cache", str(bad)]) == 2
    assert "internal error" not in capsys.readouterr().err
    assert bad.read_bytes() == b"\xff\xfe\x00not text"  # nothing appended
