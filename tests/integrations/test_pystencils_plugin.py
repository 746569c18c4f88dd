"""The pystencils / lbmpy plugin: kernels extracted from generated code, block-size choice, registers from nvcc."""

import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from importlib import metadata
from pathlib import Path

import pytest

# lbmpy caches update rules on disk (read when pystencils is imported): keep it out of the home directory
os.environ.setdefault("PYSTENCILS_CACHE_DIR", str(Path(tempfile.gettempdir()) / "warpspeed-tests-pystencils-cache"))

ps = pytest.importorskip("pystencils")
pytest.importorskip("lbmpy")

import warpspeed_pystencils as wp  # noqa: E402
from warpspeed_pystencils import _choice_cache, _describe, _extract, _generate, _registers  # noqa: E402

import warpspeed  # noqa: E402

A100 = "A100-SXM4-40GB"
STAR_SHAPE = (648, 520, 520)


@pytest.fixture(autouse=True)
def _private_register_cache(tmp_path, monkeypatch):
    """nvcc results go to a fresh cache per test (never to ~/.cache)."""
    monkeypatch.setenv("WARPSPEED_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("WARPSPEED_NVCC", raising=False)


@pytest.fixture(scope="module")
def star4():
    return wp.describe(wp.star_stencil(4), STAR_SHAPE, registers=48)


@pytest.fixture(scope="module")
def d3q19_rule():
    return wp.lbm_d3q19_srt()


@pytest.fixture(scope="module")
def d3q19(d3q19_rule):
    return wp.describe(d3q19_rule, (130, 130, 130), registers=90)


def _field(kernel, name):
    return next(f for f in kernel.fields if f.name == name)


def _norm(access):
    return tuple(a.replace(" ", "") for a in access) if isinstance(access, list | tuple) else access.replace(" ", "")


# ----------------------------------------------------------------------------- plugin registration
def test_import_is_cheap_and_registered():
    code = "import sys, warpspeed_pystencils; print(any(m.split('.')[0] in ('pystencils', 'lbmpy', 'sympy') " \
           "for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    eps = {ep.name: ep for ep in metadata.entry_points(group="warpspeed.plugins")}
    assert eps["pystencils"].load() is wp
    assert wp.PLUGIN["name"] == "pystencils" and wp.PLUGIN["describe"] is wp.describe
    names = {e.name for e in wp.catalog_entries()}
    assert {"d3q19-srt", "d3q15-allen-cahn"} <= names


# ----------------------------------------------------------------------------- 3D25pt
def test_star_r4_accesses_and_iteration_space(star4):
    assert star4.domain == (640, 512, 512)
    src, dst = _field(star4, "src"), _field(star4, "dst")
    assert len(src.loads) == 25 and not src.stores
    assert len(dst.stores) == 1 and not dst.loads
    assert src.shape == dst.shape == STAR_SHAPE and src.element_bytes == 8
    assert star4.precision == "fp64" and star4.registers == 48
    assert star4.flops.add == 24 and star4.flops.mul == 1
    ref = warpspeed.find_kernel("star3d-r4")
    ref_loads = {_norm(a) for f in ref.spec["field"] for a in f["loads"]}
    assert {_norm(a) for a in star4.spec["field"][1]["loads"]} == ref_loads  # src (fields sorted by name)
    assert star4.spec["field"][1]["shape"] == ["nx+8", "ny+8", "nz+8"]


@pytest.mark.parametrize("block", [(32, 4, 8), (256, 4, 1), (8, 8, 8)])
@pytest.mark.parametrize("folding", [(1, 1, 1), (1, 1, 2)])
def test_star_r4_matches_hand_written_kernel(star4, block, folding):
    ref = warpspeed.find_kernel("star3d-r4")
    a = warpspeed.estimate(star4, A100, block, folding, registers=48).to_dict()
    b = warpspeed.estimate(ref, A100, block, folding, registers=48).to_dict()
    assert a["domain"] == b["domain"] == [640, 512, 512]
    for key, v in b["volumes_B_per_lup"].items():
        assert a["volumes_B_per_lup"][key] == pytest.approx(v, rel=0.01, abs=1e-9), key
    assert a["limiter"] == b["limiter"]
    assert a["performance_GLup_s"] == pytest.approx(b["performance_GLup_s"], rel=0.01)


def test_folding_is_applied_to_the_address_expressions(star4):
    # what an unrolled kernel with a y-stride-2 iteration slice accesses: 42 distinct loads of 50, 2 stores
    instructions = warpspeed.KernelAnalysis(star4).instructions((1, 2, 1))
    assert sum(not i.store for i in instructions) == 42 and sum(i.store for i in instructions) == 2


def test_describe_an_existing_gpu_kernel_counts_flops_from_the_ast():
    kernel = ps.create_kernel(wp.star_stencil(4), ps.CreateKernelConfig(target=ps.Target.CUDA, jit=ps.no_jit))
    k = wp.describe(kernel, STAR_SHAPE, registers=48, name="star-r4-from-kernel")
    assert k.name == "star-r4-from-kernel" and k.domain == (640, 512, 512)
    assert (k.flops.add, k.flops.mul, k.flops.other) == (24, 1, 0)
    assert len(_field(k, "src").loads) == 25


# ----------------------------------------------------------------------------- LBM
def test_d3q19_pull_loads_and_stores(d3q19):
    from lbmpy import LBStencil, Stencil

    src, dst = _field(d3q19, "src"), _field(d3q19, "dst")
    assert len(src.loads) == 19 and len(dst.stores) == 19 and not src.stores and not dst.loads
    assert src.shape == (130, 130, 130, 19)  # fzyx: x fastest, the population index slowest
    assert d3q19.domain == (128, 128, 128)
    raw = next(f for f in d3q19.spec["field"] if f["name"] == "src")
    want = {(f"tidx+{1 - c[0]}", f"tidy+{1 - c[1]}", f"tidz+{1 - c[2]}", str(i))
            for i, c in enumerate(LBStencil(Stencil.D3Q19))}
    assert {_norm(a) for a in raw["loads"]} == {tuple(s.replace("+0", "") for s in w) for w in want}
    assert all(_norm(a)[:3] == ("tidx+1", "tidy+1", "tidz+1") for a in
               next(f for f in d3q19.spec["field"] if f["name"] == "dst")["stores"])
    assert d3q19.flops.add > 100 and d3q19.flops.mul > 50


@pytest.mark.parametrize("block", [(128, 1, 1), (64, 2, 2)])
def test_d3q19_is_dram_bound_for_wide_blocks(d3q19, block):
    e = warpspeed.estimate(d3q19, A100, block).to_dict()
    assert e["limiter"] == "DRAM"
    assert e["volumes_B_per_lup"]["dram_load"] + e["volumes_B_per_lup"]["dram_store"] >= 2 * 19 * 8 * 0.95


def test_d3q19_short_x_blocks_rank_last(d3q19_rule):
    # a sample of the 512-thread shapes (the full set takes ~25 s): every x extent, several y/z splits
    blocks = [(512, 1, 1), (256, 2, 1), (128, 2, 2), (64, 8, 1), (32, 4, 4), (16, 32, 1), (8, 8, 8), (4, 128, 1),
              (4, 16, 8), (2, 256, 1), (2, 16, 16), (1, 512, 1), (1, 32, 16)]
    r = wp.rank_block_sizes(d3q19_rule, (258, 258, 258), device=A100, threads=(512,), registers=90, blocks=blocks)
    order = [res.configuration.block for res in r.results]
    assert sorted(order) == sorted(blocks) and not any(res.error for res in r.results)
    short = [i for i, b in enumerate(order) if b[0] <= 2]
    assert short == list(range(len(order) - len(short), len(order))), order
    assert r.best.configuration.block[0] >= 32 and r.best.limiter == "DRAM"


def test_d3q19_zyxf_layout_puts_populations_first(d3q19_rule):
    k = wp.describe(wp.lbm_d3q19_srt(layout="zyxf"), (34, 34, 34), layout="zyxf", registers=90)
    src = _field(k, "src")
    assert src.shape == (19, 34, 34, 34) and len(src.loads) == 19
    assert k.spec["field"][1]["shape"] == [19, "nx+2", "ny+2", "nz+2"]


def test_allen_cahn_d3q15_accesses():
    k = wp.describe(wp.allen_cahn_d3q15(), (66, 66, 66), registers=94)
    counts = {f.name: (len(f.loads), len(f.stores)) for f in k.fields}
    assert counts == {"lb_phase_field": (15, 0), "phase_field": (15, 0), "vel_field": (3, 0),
                      "lb_phase_field_tmp": (0, 15), "phase_field_tmp": (0, 1)}
    assert _field(k, "lb_phase_field").shape == (66, 66, 66, 15)
    assert _field(k, "vel_field").shape == (66, 66, 66, 3)
    assert k.domain == (64, 64, 64) and k.flops.other > 0  # divisions and square roots
    assert warpspeed.estimate(k, A100, (64, 4, 1)).limiter in ("DRAM", "L2", "FP", "L1")


def test_catalog_entry_builds_and_resizes():
    k = warpspeed.kernels.get("d3q19-srt", domain=[32, 32, 32])
    assert k.domain == (32, 32, 32) and _field(k, "src").shape == (34, 34, 34, 19)
    assert k.registers is not None
    with pytest.raises(warpspeed.InputError):
        warpspeed.kernels.get("lbm", stencil="D3Q7x")


# ----------------------------------------------------------------------------- create_kernel
SMALL_BLOCKS = [(256, 1, 1), (64, 4, 1), (32, 8, 1), (32, 2, 4), (16, 16, 1), (8, 8, 4)]


def test_create_kernel_uses_the_best_block():
    asm = wp.star_stencil(1)
    cfg = ps.CreateKernelConfig(target=ps.Target.CUDA, jit=ps.no_jit)
    kernel = wp.create_kernel(asm, cfg, shape=(66, 66, 66), device=A100, registers=32, blocks=SMALL_BLOCKS)
    ranking = wp.rank_block_sizes(asm, (66, 66, 66), device=A100, registers=32, blocks=SMALL_BLOCKS)
    best = ranking.best.configuration.block
    assert type(kernel).__name__ == "GpuKernel"
    assert tuple(kernel.get_launch_configuration().default_block_size) == best
    meta = kernel.metadata["warpspeed"]
    assert tuple(meta["block"]) == best and meta["limiter"] == ranking.best.limiter
    assert meta["performance_GLup_s"] == pytest.approx(ranking.best.performance_GLup_s)
    assert meta["ranking"]["block"] == list(best) and meta["ranking"]["folding_applied"]
    assert meta["ranking"]["pystencils_default_block"] == [8, 8, 4]
    assert cfg.gpu.default_block_size is None  # the user's config is not changed


def test_create_kernel_without_config_and_with_folding():
    kernel = wp.create_kernel(wp.star_stencil(1), shape=(66, 66, 66), device=A100, registers=32,
                              blocks=SMALL_BLOCKS, folding=[(1, 1, 1), (1, 1, 2)])
    meta = kernel.metadata["warpspeed"]
    assert meta["ranking"]["configurations"] == 2 * len(SMALL_BLOCKS)
    assert meta["ranking"]["folding_applied"] == (meta["folding"] == [1, 1, 1])
    assert tuple(kernel.get_launch_configuration().default_block_size) == tuple(meta["block"])


def test_create_kernel_rejects_a_cpu_target():
    with pytest.raises(warpspeed.InputError, match="GPU"):
        wp.create_kernel(wp.star_stencil(1), ps.CreateKernelConfig(target=ps.Target.CPU), shape=(66, 66, 66),
                         device=A100, registers=32, blocks=SMALL_BLOCKS)


def test_create_kernel_reads_its_ranking_back_on_the_second_run(tmp_path, monkeypatch):
    """The first run ranks (screened: only what can be the best in full) and caches every configuration or its
    bound; the second evaluates none (the pystencils default block is among SMALL_BLOCKS) and chooses the same
    block; a changed kernel is ranked afresh, and without screening every configuration in full."""
    import warpspeed.studies.ranking

    calls = []
    real = warpspeed.studies.ranking.evaluate
    monkeypatch.setattr(warpspeed.studies.ranking, "evaluate", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    first = wp.create_kernel(wp.star_stencil(1), shape=(66, 66, 66), device=A100, registers=32, blocks=SMALL_BLOCKS)
    summary = first.metadata["warpspeed"]["ranking"]
    estimated = summary["configurations_estimated"]  # and pystencils' default block, if it was only bounded
    assert summary["configurations"] == len(SMALL_BLOCKS) and 1 <= estimated <= len(calls) <= estimated + 1
    full = wp.create_kernel(wp.star_stencil(1), shape=(66, 66, 66), device=A100, registers=32, blocks=SMALL_BLOCKS,
                            screen=None, cache=None)
    assert full.metadata["warpspeed"]["block"] == first.metadata["warpspeed"]["block"]
    assert full.metadata["warpspeed"]["ranking"]["configurations_estimated"] == len(SMALL_BLOCKS)
    calls.clear()
    assert len(list((tmp_path / "cache" / "rankings").glob("*.jsonl"))) == 1
    calls.clear()
    second = wp.create_kernel(wp.star_stencil(1), shape=(66, 66, 66), device=A100, registers=32,
                              blocks=SMALL_BLOCKS)
    assert calls == []
    assert second.metadata["warpspeed"]["ranking"] == first.metadata["warpspeed"]["ranking"]
    wp.create_kernel(wp.star_stencil(2), shape=(66, 66, 66), device=A100, registers=32, blocks=SMALL_BLOCKS)
    assert len(calls) >= 1
    calls.clear()
    wp.create_kernel(wp.star_stencil(1), shape=(66, 66, 66), device=A100, registers=32, blocks=SMALL_BLOCKS,
                     cache=None, screen=None)
    assert len(calls) == len(SMALL_BLOCKS)


def test_a_second_run_with_registers_from_nvcc_neither_compiles_nor_ranks(tmp_path, monkeypatch):
    """The registers' source reads "nvcc sm_80" the first time and "nvcc sm_80 (cached)" the next: prose that
    must not key the ranking cache (it did: the second run ranked again and wrote a second file)."""
    import warpspeed.studies.ranking

    log = tmp_path / "nvcc-calls"
    monkeypatch.setenv("PATH", str(_fake_nvcc(tmp_path, f'echo x >> {log}; echo "ptxas info : Used 40 registers"')))
    calls = []
    real = warpspeed.studies.ranking.evaluate
    monkeypatch.setattr(warpspeed.studies.ranking, "evaluate", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    first = wp.create_kernel(wp.star_stencil(1), shape=(66, 66, 66), device=A100, blocks=SMALL_BLOCKS)
    assert calls and log.read_text().count("x") == 1
    calls.clear()
    described = []
    real_describe = _extract.kernel_dict
    monkeypatch.setattr(_extract, "kernel_dict", lambda *a, **kw: described.append(1) or real_describe(*a, **kw))
    second = wp.create_kernel(wp.star_stencil(1), shape=(66, 66, 66), device=A100, blocks=SMALL_BLOCKS)
    assert calls == [] and log.read_text().count("x") == 1  # no ranking, no compiler
    assert described == []  # nor a description of the kernel: the choice itself is read back
    assert len(list((tmp_path / "cache" / "rankings").glob("*.jsonl"))) == 1
    assert len(list((tmp_path / "cache" / "choices").glob("*.json"))) == 1
    assert second.metadata["warpspeed"] == first.metadata["warpspeed"]
    assert tuple(second.get_launch_configuration().default_block_size) == tuple(first.metadata["warpspeed"]["block"])
    wp.create_kernel(wp.star_stencil(1), shape=(66, 66, 66), device=A100, blocks=SMALL_BLOCKS, threads=(256,))
    assert described == [1]  # another option: described and ranked afresh
    wp.create_kernel(wp.star_stencil(1), shape=(66, 66, 66), device="H100-SXM5-80GB", blocks=SMALL_BLOCKS)
    assert calls and log.read_text().count("x") == 2  # another device: ranked (and compiled for sm_90) afresh
    assert len(list((tmp_path / "cache" / "rankings").glob("*.jsonl"))) == 2


def test_a_second_run_generates_the_code_once(tmp_path, monkeypatch):
    """The choice is also found from the inputs (pickled assignments and config): a second run generates the
    kernel once, with the block chosen before, and checks its code against the choice's key. A stale entry
    (its choice made for other code) costs the full path, which mends it; a kernel whose code depends on the
    block (launch bounds) keeps no such entry and takes the full path each time, with the right block."""
    import warpspeed.studies.ranking

    made = []
    real_create = ps.create_kernel
    monkeypatch.setattr(ps, "create_kernel", lambda *a, **kw: made.append(1) or real_create(*a, **kw))
    ranked = []
    real = warpspeed.studies.ranking.evaluate
    monkeypatch.setattr(warpspeed.studies.ranking, "evaluate", lambda *a, **kw: ranked.append(1) or real(*a, **kw))
    run = dict(shape=(66, 66, 66), device=A100, registers=32, blocks=SMALL_BLOCKS)
    first = wp.create_kernel(wp.star_stencil(1), **run)
    assert len(made) == 2 and ranked  # the code that keys the choice, then the kernel with the chosen block
    entries = list((tmp_path / "cache" / "choice-inputs").glob("*.json"))
    assert len(entries) == 1
    made.clear(), ranked.clear()
    second = wp.create_kernel(wp.star_stencil(1), **run)
    assert len(made) == 1 and not ranked
    assert second.metadata["warpspeed"] == first.metadata["warpspeed"]
    assert second.get_c_code() == first.get_c_code()
    assert not first.metadata["warpspeed"]["ranking"]["folding_ranked"]
    given = wp.create_kernel(wp.star_stencil(1), folding=((1, 1, 1),), **run)  # the same ranking, another summary
    assert given.metadata["warpspeed"]["ranking"]["folding_ranked"]
    made.clear(), ranked.clear()
    assert tuple(second.get_launch_configuration().default_block_size) == tuple(first.metadata["warpspeed"]["block"])

    right = entries[0].read_text()
    entries[0].write_text('{"choice": "%s"}' % ("0" * 24))  # no such choice
    made.clear()
    assert wp.create_kernel(wp.star_stencil(1), **run).metadata["warpspeed"] == first.metadata["warpspeed"]
    assert len(made) == 2 and entries[0].read_text() == right and not ranked
    wp.create_kernel(wp.star_stencil(2), **run)  # its entry points at a choice made for other code
    stale = {e.read_text() for e in (tmp_path / "cache" / "choice-inputs").glob("*.json")} - {right}
    entries[0].write_text(stale.pop())
    made.clear()
    assert wp.create_kernel(wp.star_stencil(1), **run).metadata["warpspeed"] == first.metadata["warpspeed"]
    assert len(made) == 3 and entries[0].read_text() == right  # tried, checked, then the full path

    bounded = ps.CreateKernelConfig(target=ps.Target.CUDA, jit=ps.no_jit)
    bounded.gpu.generate_launch_bounds = True
    shutil.rmtree(tmp_path / "cache")
    first = wp.create_kernel(wp.star_stencil(1), bounded, **run)
    block = tuple(first.metadata["warpspeed"]["block"])
    assert f"__launch_bounds__({block[0] * block[1] * block[2]})" in first.get_c_code()
    assert not list((tmp_path / "cache" / "choice-inputs").glob("*.json"))
    made.clear(), ranked.clear()
    again = wp.create_kernel(wp.star_stencil(1), bounded, **run)
    assert len(made) == 2 and not ranked and again.get_c_code() == first.get_c_code()


def test_the_inputs_hash_does_not_see_pystencils_caches():
    """The inputs' hash does not change with what pystencils caches as it generates code (its data types fill
    caches of their own: the plain pickle of the same assignments changed); different assignments hash
    differently; what does not pickle gives no hash (and no error)."""
    before = _choice_cache.value_digest(wp.star_stencil(1))
    ps.create_kernel(wp.star_stencil(1), ps.CreateKernelConfig(target=ps.Target.CUDA, jit=ps.no_jit))
    assert _choice_cache.value_digest(wp.star_stencil(1)) == before
    assert _choice_cache.value_digest(wp.star_stencil(2)) != before
    assert _choice_cache.value_digest([wp.star_stencil(1), lambda: 0]) is None


@pytest.mark.parametrize("shape", [66, (66, 66, 66.5), "66,66,66"])
def test_create_kernel_names_a_bad_shape(shape):
    with pytest.raises(warpspeed.InputError, match="shape"):
        wp.create_kernel(wp.star_stencil(1), shape=shape, device=A100, registers=32, blocks=SMALL_BLOCKS)


def test_create_kernel_takes_a_shape_of_any_integers():
    """A generator is read once (the key and the description both need it); numpy's integers key as ints."""
    import numpy as np

    run = dict(device=A100, registers=32, blocks=SMALL_BLOCKS)
    first = wp.create_kernel(wp.star_stencil(1), shape=(n for n in (66, 66, 66)), **run)
    again = wp.create_kernel(wp.star_stencil(1), shape=np.array([66, 66, 66]), **run)
    assert again.metadata["warpspeed"] == first.metadata["warpspeed"]


def test_a_damaged_choice_is_ranked_again(tmp_path):
    run = dict(shape=(66, 66, 66), device=A100, registers=32, blocks=SMALL_BLOCKS)
    first = wp.create_kernel(wp.star_stencil(1), **run)
    (stored,) = (tmp_path / "cache" / "choices").glob("*.json")
    for damaged in ('{"block": 5, "metadata": {}}', '{"block": [0, 0, 0], "metadata": {}}', '{"block": [8, 8]}',
                    "[1, 2]", '{"block": [4096, 1, 1], "metadata": {}}',
                    '{"block": [8, 8], "metadata": {"block": [8, 8]}}'):
        stored.write_text(damaged)
        again = wp.create_kernel(wp.star_stencil(1), **run)
        assert again.metadata["warpspeed"] == first.metadata["warpspeed"], damaged
        assert json.loads(stored.read_text())["block"] == first.metadata["warpspeed"]["block"]


def test_catalog_kernels_are_built_once_across_runs(tmp_path, monkeypatch):
    """A catalog kernel's description is stored on disk; a new process (here: a cleared in-memory cache) reads
    it back without lbmpy and gets the same kernel; a damaged entry is rebuilt."""
    from warpspeed_pystencils import catalog

    catalog._built.cache_clear()
    fresh = warpspeed.kernels.get("lbm", stencil="D2Q9", domain=(64, 64))
    stored = list((tmp_path / "cache" / "kernels").glob("*.json"))
    assert len(stored) == 1
    catalog._built.cache_clear()

    def no_build(*a, **kw):
        raise AssertionError("built again")

    real = catalog.describe_spec
    monkeypatch.setattr(catalog, "describe_spec", no_build)
    again = warpspeed.kernels.get("lbm", stencil="D2Q9", domain=(64, 64))
    assert dict(again.spec) == dict(fresh.spec) and again.domain == fresh.domain
    e1, e2 = (warpspeed.estimate(k, A100, (64, 2, 1)).to_dict() for k in (fresh, again))
    assert e1 == e2
    stored[0].write_text('{"name": 3}')
    catalog._built.cache_clear()
    monkeypatch.setattr(catalog, "describe_spec", real)
    rebuilt = warpspeed.kernels.get("lbm", stencil="D2Q9", domain=(64, 64))
    same = ("description",)  # only where the registers came from may differ (nvcc's own cache)
    assert {k: v for k, v in rebuilt.spec.items() if k not in same} == \
        {k: v for k, v in fresh.spec.items() if k not in same}
    catalog._built.cache_clear()


# ----------------------------------------------------------------------------- registers
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_registers_from_nvcc(tmp_path, monkeypatch):
    k = wp.describe(wp.star_stencil(4), STAR_SHAPE, arch="sm_80")
    assert k.registers == 48
    assert list((tmp_path / "cache" / "nvcc-registers").glob("*-sm_80.json"))
    monkeypatch.setattr(_registers, "find_nvcc", lambda: None)  # the second time: from the cache
    k2 = wp.describe(wp.star_stencil(4), STAR_SHAPE, arch="sm_80")
    assert k2.registers == 48 and "cached" in k2.spec["description"]


def _fake_nvcc(tmp_path, body):
    d = tmp_path / "bin"
    d.mkdir(exist_ok=True)
    exe = d / "nvcc"
    exe.write_text("#!/bin/sh\n" + body + "\n")
    exe.chmod(0o755)
    return d


def test_registers_parsed_from_compiler_output(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(_fake_nvcc(tmp_path, 'echo "ptxas info    : Used 77 registers, 400 bytes cmem[0]"')))
    k = wp.describe(wp.star_stencil(1), (34, 34, 34), arch="sm_90")
    assert k.registers == 77 and "nvcc sm_90" in k.spec["description"]


def test_registers_argument_wins_over_nvcc(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(_fake_nvcc(tmp_path, "exit 3")))
    monkeypatch.setattr(_registers, "_Compilation", lambda *a: pytest.fail("nvcc must not run"))
    k = wp.describe(wp.star_stencil(1), (34, 34, 34), registers=40)
    assert k.registers == 40


def test_registers_default_with_a_warning_without_nvcc(tmp_path, monkeypatch):
    empty = tmp_path / "empty"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    with pytest.warns(UserWarning, match="registers per thread"):
        k = wp.describe(wp.star_stencil(1), (34, 34, 34))
    assert k.registers is None
    e = warpspeed.estimate(k, A100, (32, 4, 2))
    assert e.to_dict()["performance_GLup_s"] > 0


def test_failing_nvcc_falls_back_with_a_warning(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(_fake_nvcc(tmp_path, 'echo "nvcc fatal : Unsupported gpu architecture" >&2; '
                                                        "exit 1")))
    with pytest.warns(UserWarning) as record:
        k = wp.describe(wp.star_stencil(1), (34, 34, 34), arch="sm_70")
    messages = [str(w.message) for w in record]
    assert any("Unsupported gpu architecture" in m for m in messages)
    assert any("registers per thread" in m and "warpspeed assumes" in m for m in messages)
    assert k.registers is None


# ----------------------------------------------------------------------------- other kernels, bad input
def test_1d_2d_strided_and_ghost_layer_kernels():
    a, b = ps.fields("a, b: float[1D]", layout="fzyx")
    k1 = wp.describe([ps.Assignment(b.center, a[-1] + a[1])], (1026,), registers=16)
    assert k1.domain == (1024, 1, 1) and k1.precision == "fp32" and _field(k1, "a").element_bytes == 4
    c, d = ps.fields("c, d: double[2D]", layout="fzyx")
    k2 = wp.describe([ps.Assignment(d.center, c[-1, 0] + c[0, 1])], (66, 34), registers=16)
    assert k2.domain == (64, 32, 1) and len(_field(k2, "c").loads) == 2
    cfg = ps.CreateKernelConfig(iteration_slice=ps.make_slice[2:-2:2, 1:-1, 1:-1])
    k3 = wp.describe(wp.star_stencil(1), (20, 12, 12), registers=16, config=cfg)
    assert k3.domain == (8, 10, 10)
    assert _norm(k3.spec["field"][0]["stores"][0]) == ("2*tidx+2", "tidy+1", "tidz+1")
    k4 = wp.describe(wp.star_stencil(1), (20, 12, 12), registers=16, config=ps.CreateKernelConfig(ghost_layers=2))
    assert k4.domain == (16, 8, 8)


def test_fixed_size_fields_become_linear_accesses():
    fa, fb = ps.fields("fa, fb: double[16,16,16]", layout="fzyx")
    k = wp.describe([ps.Assignment(fb.center, fa[1, 0, 0])], (16, 16, 16), registers=16)
    assert k.domain == (14, 14, 14)
    assert _norm(k.spec["field"][0]["loads"][0]) == "tidx+16*tidy+256*tidz+274"


def _custom_src():
    from pystencils.field import FieldType

    return ps.Field.create_generic("src", 2, dtype="float64", field_type=FieldType.CUSTOM, layout="fzyx")


def test_indirect_addressing_is_an_input_error():
    dst, idx = ps.fields("dst: double[2D]", layout="fzyx"), ps.fields("idx: int64[2D]", layout="fzyx")
    y = ps.DEFAULTS.spatial_counters[1]
    asm = [ps.Assignment(dst.center, _custom_src().absolute_access((idx.center, y), ()))]
    with pytest.raises(warpspeed.InputError, match="indirect"):
        wp.describe(asm, (100, 100), registers=16)


def test_non_affine_and_parameter_indices_are_input_errors():
    """The message names the field, the access with pystencils' own index expression and the coordinate."""
    dst = ps.fields("dst: double[2D]", layout="fzyx")
    x, y = ps.DEFAULTS.spatial_counters[:2]
    asm = [ps.Assignment(dst.center, _custom_src().absolute_access((x * y, y), ()))]
    with pytest.raises(warpspeed.InputError, match=r"field 'src', load \[ctr_0 \* ctr_1 \* _stride_src_0 \+ .*\], "
                       r"coordinate 0: the index 'tidx\*tidy' is not affine"):
        wp.describe(asm, (100, 100), registers=16)
    n = ps.TypedSymbol("n", "int64")
    asm = [ps.Assignment(dst.center, _custom_src().absolute_access((x + n, y), ()))]
    with pytest.raises(warpspeed.InputError, match=r"load \[\(ctr_0 \+ n\) \* _stride_src_0 .*\], coordinate 0 "
                       "depends on n"):
        wp.describe(asm, (100, 100), registers=16)


def test_integer_division_and_remainder_by_constants():
    from pystencils.sympyextensions.integer_functions import int_div, int_rem

    dst = ps.fields("dst: double[2D]", layout="fzyx")
    x, y = ps.DEFAULTS.spatial_counters[:2]
    asm = [ps.Assignment(dst.center, _custom_src().absolute_access((int_div(x, 2), int_rem(y, 4) + 1), ()))]
    k = wp.describe(asm, (100, 100), registers=16)
    assert _norm(_field(k, "src").loads[0].text) == ("(tidx)//2", "(tidy)%4+1")


@pytest.mark.parametrize("shape", [(648, 520), (648, 520, 520, 19), "648", (648, 0, 520), (6, 520, 520)])
def test_bad_shapes_are_input_errors(shape):
    with pytest.raises(warpspeed.InputError):
        wp.describe(wp.star_stencil(4), shape, registers=48)


@pytest.mark.parametrize("shape", ["66,66,66", b"66", "66"])
def test_a_shape_given_as_text_is_quoted_in_the_error(shape):
    """The message quotes what was given (it said "got None" for a string)."""
    with pytest.raises(warpspeed.InputError, match=rf"shape must be a tuple of 3 positive integers .*got {shape!r}\.$"):
        wp.create_kernel(wp.star_stencil(1), shape=shape, device=A100, registers=32, cache=None)


def test_one_thread_count_is_that_count_alone():
    """threads=256 is the thread count 256 (it raised TypeError: 'int' object is not iterable)."""
    ranked = wp.rank_block_sizes(wp.star_stencil(1), (66, 66, 66), device=A100, threads=256, registers=32)
    gpu_kernel, _ = _generate.as_kernel(wp.star_stencil(1))
    of_kernel = wp.rank_block_sizes(gpu_kernel, (66, 66, 66), device=A100, threads=256, registers=32)
    for r in (ranked, of_kernel):
        assert {math.prod(res.configuration.block) for res in r.results} == {256}
    assert of_kernel.best.configuration.block == ranked.best.configuration.block
    kernel = wp.create_kernel(wp.star_stencil(1), shape=(66, 66, 66), device=A100, threads=256, registers=32,
                              cache=None)
    summary = kernel.metadata["warpspeed"]["ranking"]
    assert math.prod(summary["block"]) == 256 and summary["configurations"] == len(warpspeed.block_shapes((256,)))
    assert summary["block"] == list(ranked.best.configuration.block)


@pytest.mark.parametrize("kwargs", [{"registers": 0}, {"registers": 2.5}, {"layout": "xyz"}])
def test_bad_options_are_input_errors(kwargs):
    kw = {"registers": 32, **kwargs}
    with pytest.raises(warpspeed.InputError):
        wp.describe(wp.star_stencil(1), (34, 34, 34), **kw)


def test_bad_kernel_objects_are_input_errors():
    with pytest.raises(warpspeed.InputError, match="expected a pystencils"):
        wp.describe(42, (34, 34, 34), registers=32)
    cpu = ps.create_kernel(wp.star_stencil(1))
    with pytest.raises(warpspeed.InputError, match="not a GPU"):
        wp.describe(cpu, (34, 34, 34), registers=32)
    with pytest.raises(warpspeed.InputError):
        wp.star_stencil(range_=-1)
    with pytest.raises(warpspeed.InputError):
        wp.lbm_update_rule("D3Q19", "srt", streaming="sideways")



def test_describe_compiles_for_the_device_it_is_given(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(_fake_nvcc(tmp_path, 'echo "ptxas info    : Used 66 registers"')))
    assert "nvcc sm_90" in wp.describe(wp.star_stencil(1), (34, 34, 34), device="H100-SXM5-80GB").spec["description"]
    assert "nvcc sm_80" in wp.describe(wp.star_stencil(1), (34, 34, 34)).spec["description"]


def test_create_kernel_counts_the_ranking_ahead_while_nvcc_runs(tmp_path, monkeypatch):
    """While nvcc counts the registers (here a stand-in taking 0.5 s) the ranking's counts are made with guessed
    registers; the choice is the one made with the registers known up front. A failure while counting ahead
    costs nothing but the time."""
    import warpspeed.plugin_api

    sleep = shutil.which("sleep")
    monkeypatch.setenv("PATH", str(_fake_nvcc(tmp_path, f'{sleep} 0.5; echo "ptxas info : Used 24 registers"')))
    real, ahead = warpspeed.plugin_api.precount, []

    def watched(kernel, device, *args, until, **kw):
        ahead.append((kernel.registers, until()))
        return real(kernel, device, *args, until=until, **kw)

    monkeypatch.setattr(warpspeed.plugin_api, "precount", watched)
    shape = (66, 66, 66)
    found = wp.create_kernel(wp.star_stencil(1), shape=shape, device=A100, blocks=SMALL_BLOCKS, cache=None)
    assert ahead == [(warpspeed.plugin_api.DEFAULT_REGISTERS, False)]
    given = wp.create_kernel(wp.star_stencil(1), shape=shape, device=A100, blocks=SMALL_BLOCKS, cache=None,
                             registers=24)
    assert len(ahead) == 1  # registers known: nothing to wait for
    assert found.metadata["warpspeed"]["registers"] == 24
    assert found.metadata["warpspeed"] == given.metadata["warpspeed"]

    def broken(*a, **kw):
        raise RuntimeError("counting ahead failed")

    monkeypatch.setattr(warpspeed.plugin_api, "precount", broken)
    again = wp.create_kernel(wp.star_stencil(2), shape=shape, device=A100, blocks=SMALL_BLOCKS, cache=None)
    assert again.metadata["warpspeed"]["registers"] == 24
    full = wp.create_kernel(wp.star_stencil(2), shape=shape, device=A100, blocks=SMALL_BLOCKS, cache=None,
                            screen=None)
    assert full.metadata["warpspeed"]["block"] == again.metadata["warpspeed"]["block"]


def test_registers_guessed_for_counting_ahead_hold_what_an_update_keeps_live(tmp_path, monkeypatch):
    """An LBM update writes every population, so all it loaded is live at once: D3Q19 (19 loads and 19 stores
    of doubles, 2 registers each) is guessed 19 x 2 x 2 + 12 = 88 registers (nvcc counts 92 for sm_90: the same
    blocks per SM at 256-1024 threads), and create_kernel counts ahead with that guess; a stencil writes one
    value and keeps warpspeed's default."""
    import warpspeed.plugin_api

    d3q19 = _describe.describe_spec(wp.lbm_update_rule("D3Q19"), (34, 34, 34), registers=92)
    assert wp.guessed_registers(d3q19) == 19 * 2 * 2 + wp.GUESS_ADDRESS_REGISTERS == 88
    float_d2q9 = _describe.describe_spec(wp.lbm_update_rule("D2Q9"), (34, 34), registers=40)
    float_d2q9["field"] = [dict(f, element_bytes=4) for f in float_d2q9["field"]]
    assert (9 + 9) * 1 + 12 == 30 and wp.guessed_registers(float_d2q9) == 32  # a float a register; at least 32
    assert wp.guessed_registers(_describe.describe_spec(wp.star_stencil(4), (34, 34, 34), registers=48)) == \
        warpspeed.plugin_api.DEFAULT_REGISTERS
    monkeypatch.setenv("PATH", str(_fake_nvcc(tmp_path, f'{shutil.which("sleep")} 0.3; echo "ptxas info : Used 92 '
                                                        'registers"')))
    real, ahead = warpspeed.plugin_api.precount, []

    def watched(kernel, device, *args, until, **kw):
        ahead.append(kernel.registers)
        return real(kernel, device, *args, until=until, **kw)

    monkeypatch.setattr(warpspeed.plugin_api, "precount", watched)
    k = wp.create_kernel(wp.lbm_update_rule("D3Q19"), shape=(34, 34, 34), device=A100, blocks=SMALL_BLOCKS,
                         cache=None)
    assert ahead == [88] and k.metadata["warpspeed"]["registers"] == 92


def test_stopping_nvcc_stops_the_compiler_stages_it_started(tmp_path, monkeypatch):
    """nvcc runs its stages (cicc, ptxas) as child processes that hold its output: stopping it must stop them
    too (they run in its own session), not wait for them. The stand-in's stage would leave a file after 1 s."""
    import time

    started, done = tmp_path / "stage-started", tmp_path / "stage-finished"
    stage = f'{shutil.which("sh")} -c ": > {started}; {shutil.which("sleep")} 1; : > {done}" & wait'
    monkeypatch.setenv("PATH", str(_fake_nvcc(tmp_path, stage)))
    count = _registers.RegisterCount("__global__ void k() {}", "sm_90")
    for _ in range(500):  # until the stage runs (at most 5 s)
        if started.exists():
            break
        time.sleep(0.01)
    assert count.running() and started.exists()
    count.cancel()
    assert not count.running() and count.result() == (None, "nvcc stopped")
    time.sleep(1.5)  # longer than the stage would have run
    assert not done.exists()


def test_a_bad_fallback_guess_costs_nothing_when_nvcc_counts(tmp_path, monkeypatch):
    """The registers guessed for counting ahead come from fallback_registers: one that describes no kernel
    only skips the counting ahead; nvcc's count is used."""
    sleep = shutil.which("sleep")
    monkeypatch.setenv("PATH", str(_fake_nvcc(tmp_path, f'{sleep} 0.3; echo "ptxas info : Used 24 registers"')))
    k = wp.create_kernel(wp.star_stencil(1), shape=(66, 66, 66), device=A100, blocks=SMALL_BLOCKS, cache=None,
                         fallback_registers=-3)
    assert k.metadata["warpspeed"]["registers"] == 24


# ----------------------------------------------------------------------------- index expressions, two ways
def _two_way_kernels():
    src, dst = ps.fields("src, dst: double[34, 34, 34]", layout="fzyx")  # fixed shape: one linear index
    fixed = [ps.Assignment(dst.center, src[1, 0, 0] + src[0, -1, 0])]
    v, w = ps.fields("v(3), w: float32[2D]", layout="zyxf")
    vector = [ps.Assignment(w.center, v(0) + v[1, 0](1) - v[0, -1](2))]
    return {
        "star3d-r4": (wp.star_stencil(4), (72, 40, 24)),
        "star2d-r2 fp32": (wp.star_stencil(2, dims=2, dtype="float32"), (68, 36)),
        "fixed shape": (fixed, (34, 34, 34)),
        "vector field, zyxf": (vector, (66, 34)),
        "d3q19 fzyx": (wp.lbm_d3q19_srt(), (34, 18, 10)),
        "d3q19 zyxf push": (wp.lbm_d3q19_srt("zyxf", "push"), (34, 18, 10)),
        "d3q27 trt": (wp.lbm_update_rule("D3Q27", "trt"), (18, 10, 6)),
        "allen-cahn": (wp.allen_cahn_d3q15(), (18, 10, 6)),
    }


@pytest.mark.parametrize("case", list(_two_way_kernels()))
def test_index_expressions_read_as_polynomials_describe_kernels_as_sympy_does(case, monkeypatch):
    """The polynomial reading (the fast way) and the SymPy reading of index expressions give the same
    description, and the polynomial one reads every access of these kernels (SymPy's split is never asked)."""
    assignments, shape = _two_way_kernels()[case]
    kernel = ps.create_kernel(assignments, ps.CreateKernelConfig(target=ps.Target.CUDA, jit=ps.no_jit))
    split_calls = []
    real_split = _extract.Extractor._split
    monkeypatch.setattr(_extract.Extractor, "_split", lambda self, *a: split_calls.append(a) or real_split(self, *a))
    fast = _describe.describe_spec(kernel, shape, registers=64)
    assert split_calls == []
    monkeypatch.setattr(_extract.Extractor, "POLYNOMIALS", False)
    slow = _describe.describe_spec(kernel, shape, registers=64)
    assert fast == slow
    assert split_calls or case == "fixed shape"  # the SymPy way was taken the second time


def test_flops_are_counted_from_the_code_where_pystencils_count_would_be_inaccurate():
    """count_operations warns and skips nodes it does not know (Abs): the kernel's code is counted instead, and
    its warning does not reach the user; a kernel it counts fully keeps its count."""
    import warnings

    import sympy as sp

    src, dst = ps.fields("src, dst: double[3D]", layout="fzyx")
    with_abs = [ps.Assignment(dst.center, sp.Abs(src[1, 0, 0] - src[-1, 0, 0]) + 2 * src[0, 1, 0])]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _extract.flops_from_assignments(with_abs) is None
        spec = _describe.describe_spec(with_abs, (34, 34, 34), registers=32)
    kernel = ps.create_kernel(with_abs, ps.CreateKernelConfig(target=ps.Target.CUDA, jit=ps.no_jit))
    assert spec["flops"] == _extract.flops_from_ast(kernel) and spec["flops"]["other"] >= 1  # the Abs call
    plain = [ps.Assignment(dst.center, src[1, 0, 0] - src[-1, 0, 0] + 2 * src[0, 1, 0])]
    assert _extract.flops_from_assignments(plain) == {"add": 2.0, "mul": 1.0, "other": 0.0}


# ----------------------------------------------------------------------------- the choice, readable
def test_choice_of_a_created_kernel_reads_as_warpspeed_rank_prints_it():
    """wp.choice_of(kernel): the block against pystencils' default, the ranking's headline with its confidence
    and the table of the contenders, as `warpspeed rank` prints them; the same after the choice is read back
    from the cache."""
    from warpspeed.plugin_api import reference_estimate
    from warpspeed.render.report import ranking_headline, ranking_table

    kernel = wp.create_kernel(wp.star_stencil(1), shape=(66, 66, 66), device=A100, registers=32)
    choice = wp.choice_of(kernel)
    meta = kernel.metadata["warpspeed"]
    assert isinstance(choice, wp.BlockChoice)
    assert choice.block == tuple(meta["block"]) and choice.default_block == (8, 8, 4)
    assert choice.performance_GLup_s == meta["performance_GLup_s"] and choice.limiter == meta["limiter"]
    assert choice.confidence == meta["ranking"]["confidence"]["level"]
    assert choice.confidence_reasons == tuple(meta["ranking"]["confidence"]["reasons"])
    assert choice.speedup_vs_default == pytest.approx(meta["ranking"]["speedup_vs_default"], rel=1e-12)
    assert choice.contenders[0].block == choice.block
    assert len(choice.contenders) == min(10, meta["ranking"]["configurations_estimated"])
    assert [c.performance_GLup_s for c in choice.contenders] == sorted(
        (c.performance_GLup_s for c in choice.contenders), reverse=True)
    ranking = wp.rank_block_sizes(wp.star_stencil(1), (66, 66, 66), device=A100, registers=32, screen=1)
    described = wp.describe(wp.star_stencil(1), (66, 66, 66), registers=32)
    reference = reference_estimate(ranking, described, A100, block=(8, 8, 4))
    assert choice.headline == ranking_headline(ranking, reference)
    assert choice.table == ranking_table(ranking, 10)
    text = str(choice)
    block = "x".join(map(str, choice.block))
    assert text.startswith(f"{kernel.name} on {A100}: block {block} instead of pystencils' default 8x8x4 (")
    assert choice.headline in text and choice.table in text and "confidence: " in text
    again = wp.create_kernel(wp.star_stencil(1), shape=(66, 66, 66), device=A100, registers=32)
    assert wp.choice_of(again) == choice  # read back from the cache
    assert wp.choice_of(kernel.metadata["warpspeed"]) == choice  # the JSON alone


def test_choice_of_refuses_what_holds_no_choice():
    with pytest.raises(warpspeed.InputError, match="chooses its block at each launch"):
        wp.choice_of(wp.create_kernel(wp.star_stencil(1)))
    with pytest.raises(warpspeed.InputError, match="choice_of takes a kernel of warpspeed_pystencils.create_kernel"):
        wp.choice_of(42)
    with pytest.raises(warpspeed.InputError, match="not a warpspeed block choice"):
        wp.choice_of({"ranking": {"block": [1, 2, 3]}})


def test_choice_of_a_ranking_reads_it_as_warpspeed_rank_prints_it():
    """A Ranking of rank_block_sizes (or warpspeed.rank) in words; pystencils' default block is estimated with
    the kernel where the ranking does not hold it. One configuration ranked is confident (its headline had no
    reason to give and raised IndexError)."""
    described = wp.describe(wp.star_stencil(1), (66, 66, 66), registers=32)
    one = wp.rank_block_sizes(described, None, device=A100, blocks=[(64, 4, 1)])
    choice = wp.choice_of(one, described)
    assert choice.block == (64, 4, 1) and choice.confidence == "confident"
    assert choice.confidence_reasons == (  # the A100's model data was never measured: the wider share
        "no other configuration is predicted within the model's 20 % of the best",
        "model data never measured on ampere: contenders are those within 20 % (5 % where measured), up to 24 listed")
    assert choice.default_block == (8, 8, 4) and choice.default_GLup_s > 0
    assert "pystencils default 8x8x4" in choice.headline and "1 configurations" in choice.table
    assert wp.choice_of(one).default_GLup_s is None  # without the kernel: not estimated
    assert str(wp.choice_of(one)).startswith(f"{described.name} on {A100}: block 64x4x1 instead of pystencils' "
                                             "default 8x8x4\n")
