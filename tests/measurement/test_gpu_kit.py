"""The scripts in gpu/ that a session with a lent GPU runs (they cannot run here; their parts can)."""

import json
import math
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from paths import ROOT


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_scripts_parse():
    for script in sorted((ROOT / "gpu").glob("*.sh")):
        subprocess.run(["bash", "-n", str(script)], check=True)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_install_checkout_gives_an_importable_package_with_the_plugin(tmp_path):
    """What gpu/install-checkout.sh copies must be the package pyproject.toml installs: same packages, the
    catalog, the plugin's entry point (so `warpspeed measure d3q19-srt` finds pystencils' code)."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    packages = project["tool"]["setuptools"]["packages"]
    site = tmp_path / "site"
    subprocess.run(["bash", str(ROOT / "gpu" / "install-checkout.sh"), str(site)], check=True)
    for pkg in packages:
        assert (site / pkg.replace(".", "/") / "__init__.py").exists(), pkg
    code = ("import importlib.metadata as m, warpspeed, warpspeed.kernels as k; "
            f"assert warpspeed.__file__.startswith({str(site)!r}); "
            "eps = m.distribution('warpspeed-checkout').entry_points; "
            "assert [(e.group, e.name, e.value) for e in eps] == [('warpspeed.plugins', 'pystencils', "
            "'warpspeed_pystencils')], eps; "
            "print(k.find_kernel('star3d-r4').domain, sorted(k.entries()))")
    env = {**os.environ, "PYTHONPATH": str(site)}
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "(640, 512, 512)" in r.stdout and "'d3q19-srt'" in r.stdout and "'star3d-r1'" in r.stdout
    r = subprocess.run([sys.executable, "-m", "warpspeed", "devices", "list"], env=env, cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0 and "H200-SXM-141GB" in r.stdout


def _stand_in_env(tmp_path, **extra):
    """The environment gpu/session.sh runs in with tests/fake_gpu's cupy, ncu and nvidia-smi: $OUT, the install
    folder, a private warpspeed cache, no nvcc, and ``extra``."""
    fake = ROOT / "tests" / "fake_gpu"
    return {**os.environ, "OUT": str(tmp_path / "out"), "SITE": str(tmp_path / "site"), "PYTHONPATH": str(fake),
            "WARPSPEED_CACHE_DIR": str(tmp_path / "cache"), "WARPSPEED_NVCC": "",
            "PATH": os.pathsep.join([str(fake), str(Path(sys.executable).parent), os.environ["PATH"]]), **extra}


def _stage(stage, env):
    """Run a stage of gpu/session.sh; its log (it must succeed)."""
    r = subprocess.run(["bash", "gpu/session.sh", stage], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=900)
    log = (Path(env["OUT"]) / f"{stage}.log").read_text()
    assert r.returncode == 0, log
    return log


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_session_check_stage_runs_end_to_end_with_stand_in_gpu_tools(tmp_path):
    """gpu/session.sh check with tests/fake_gpu's cupy, ncu and nvidia-smi: install, measure both codes with
    the ncu child, write the CSV, validate it; what a lent GPU's first command does."""
    pytest.importorskip("pystencils")
    out = tmp_path / "out"
    log = _stage("check", _stand_in_env(tmp_path, WS_DEVICE="H100-SXM5-80GB"))
    assert "GPU: Fake GPU -> device H100-SXM5-80GB" in log and "cupy 0+fake" in log
    from warpspeed.measurement.measurements import read_measurements

    rows = read_measurements(out / "check-H100.csv")
    assert [(m.kernel, m.values["code"]) for m in rows] == [("star3d-r4", "warpspeed")] * 4 + [
        ("d3q19-srt", "pystencils")] * 2
    assert all(isinstance(m.values["cycles"], float) for m in rows)  # every configuration profiled
    assert log.strip().splitlines()[-2].startswith("summary: 6 configurations in 2 groups")


def _run_cli(args, cwd, env, isolated=False):
    cmd = [sys.executable, *(["-S"] if isolated else []), *args]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_cli_runs_from_the_checkout_root_as_session_sh_runs_it(tmp_path):
    """gpu/session.sh runs `python3 -m warpspeed` in the checkout root: the source tree is the package imported."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    r = _run_cli(["-c", "import warpspeed; print(warpspeed.__file__)"], ROOT, env)
    assert r.returncode == 0 and Path(r.stdout.strip()) == ROOT / "warpspeed" / "__init__.py", r.stdout + r.stderr
    r = _run_cli(["-m", "warpspeed", "kernels"], ROOT, env)
    assert r.returncode == 0, r.stderr
    assert "star3d-r4" in r.stdout and "copy" in r.stdout
    r = _run_cli(["-m", "warpspeed", "estimate", "star3d-r4", "--device", "H100-SXM5-80GB", "--block", "32,4,8"], ROOT,
                 env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("star3d-r4 on H100-SXM5-80GB, block (32, 4, 8)") and "GLup/s" in r.stdout


def test_cli_finds_the_catalog_in_a_source_tree_without_an_installed_package(tmp_path):
    """The source tree alone (no pip install; what the device machine's checkout is before gpu/install-checkout.sh
    and what shadows the copy it installs): `warpspeed._catalog` does not exist there, the kernels/ folder beside
    warpspeed/ is the catalog. `python -S` keeps site's .pth files (this checkout's editable install maps
    warpspeed._catalog to kernels/) out; the installed dependencies stay importable through PYTHONPATH."""
    tree = tmp_path / "checkout"
    for d in ("warpspeed", "kernels", "plugins"):
        shutil.copytree(ROOT / d, tree / d, ignore=shutil.ignore_patterns("__pycache__"))
    import site

    sites = [p for p in [*site.getsitepackages(), site.getusersitepackages()] if Path(p).is_dir()]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree), str(tree / "plugins"), *sites])}
    probe = ("import importlib.util as u, warpspeed; print(warpspeed.__file__); "
             "print(u.find_spec('warpspeed._catalog'))")
    r = _run_cli(["-c", probe], tree, env, isolated=True)
    assert r.returncode == 0, r.stderr
    # the failure case really is reproduced: the tree is imported, and it has no package warpspeed._catalog
    assert r.stdout.split() == [str(tree / "warpspeed" / "__init__.py"), "None"], r.stdout
    r = _run_cli(["-m", "warpspeed", "kernels"], tree, env, isolated=True)
    assert r.returncode == 0, r.stderr
    assert all(n in r.stdout for n in ("copy", "star3d-r1", "star3d-r4", "box3d-r1")) and "internal" not in r.stderr
    r = _run_cli(["-m", "warpspeed", "estimate", "star3d-r4", "--device", "H100-SXM5-80GB", "--block", "32,4,8"], tree,
                 env, isolated=True)
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("star3d-r4 on H100-SXM5-80GB, block (32, 4, 8)")
    # a copied package without its catalog: a clear error that says where it looked
    shutil.rmtree(tree / "kernels")
    r = _run_cli(["-m", "warpspeed", "kernels"], tree, env, isolated=True)
    assert r.returncode == 2 and r.stdout == "", r.stderr
    err = " ".join(r.stderr.split())
    assert err.startswith("error: the kernel catalog is missing") and "warpspeed._catalog" in err
    assert str(tree / "kernels") in err and "internal error" not in err


# ------------------------------------------------------------------------- the SM clock of `warpspeed measure`





MEASURE = ["measure", "star3d-r4", "--device", "H100-SXM5-80GB", "--domain", "64,32,32", "--block", "32,4,2",
           "--block", "1024,1,1", "--block", "64,2,2", "--repeats", "3", "--warmup", "2"]


def test_measure_records_the_sm_clock_sampled_after_each_configurations_timed_launches(tmp_path, capsys,
                                                                                         fake_gpu, monkeypatch):
    """sm_clock_MHz of a row is nvidia-smi's clocks.sm asked right after that configuration's timed launches
    (the fake answers 1000 + the launches so far), not the idle clock before the sweep (the fake's 345)."""
    from warpspeed.interface.cli import main
    from warpspeed.measurement.measurements import read_measurements

    log = tmp_path / "launches.log"
    log.touch()
    monkeypatch.setenv("FAKE_CUPY_LOG", str(log))
    out = tmp_path / "m.csv"
    assert main([*MEASURE, "-o", str(out)]) == 0, capsys.readouterr().err
    assert "block 1024x1x1 folding 1x1x1 did not run" in capsys.readouterr().err  # 90 registers x 1024 threads
    rows = read_measurements(out)
    assert [m.block for m in rows] == [(32, 4, 2), (64, 2, 2)]
    # 2 warm-up + 3 timed launches per configuration that ran: asked after launch 5 and after launch 10
    assert [m.values["sm_clock_MHz"] for m in rows] == [1005.0, 1010.0]
    assert all(m.values["mem_clock_MHz"] == 2619.0 and m.values["driver"] == "580.00" for m in rows)
    assert len(log.read_text().split()) == 10


@pytest.mark.parametrize("smi", ["missing", "no number"])
def test_measure_leaves_the_sm_clock_empty_without_an_answer_from_nvidia_smi(tmp_path, capsys, fake_gpu,
                                                                            monkeypatch, smi):
    from warpspeed.interface.cli import main
    from warpspeed.measurement.measurements import read_measurements

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if smi == "no number":  # what nvidia-smi prints for a clock it cannot read (e.g. some virtual GPUs)
        fake = bin_dir / "nvidia-smi"
        fake.write_text("#!/bin/sh\nfor a in \"$@\"; do case \"$a\" in --query-gpu=clocks.sm) echo '[N/A]';;\n"
                        "--query-gpu=driver_version*) echo '580.00, [N/A], [N/A]';; esac; done\n")
        fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))  # no nvidia-smi at all, or the one above
    out = tmp_path / "m.csv"
    assert main([*MEASURE, "-o", str(out)]) == 0, capsys.readouterr().err
    rows = read_measurements(out)
    assert len(rows) == 2
    assert all(m.values["sm_clock_MHz"] == "" and m.values["mem_clock_MHz"] == "" for m in rows)
    assert all(m.values["driver"] == ("580.00" if smi == "no number" else "13000") for m in rows)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_session_layers_stage_keeps_the_metrics_ncu_collects(tmp_path):
    """gpu/session.sh layers (issue 28's star3d-r4 blocks with the L2's counters), with the stand-in tools and
    an ncu that does not know one of the extra metrics: the stage probes them, leaves that one out (saying so)
    instead of losing the run, and writes the others per configuration next to the measurement CSV."""
    pytest.importorskip("pystencils")
    out = tmp_path / "out"
    unknown = "lts__t_sectors_srcunit_ltcfabric.sum"
    log = _stage("layers", _stand_in_env(tmp_path, WS_DEVICE="H200-SXM-141GB", FAKE_NCU_UNKNOWN=unknown,
                                         FAKE_CUPY_REGISTERS="48"))  # star3d-r4's count: 1024-thread blocks launch
    assert f"ncu does not collect {unknown} here: left out" in log
    from warpspeed.measurement.measurements import read_measurements

    rows = read_measurements(out / "layers-H200.csv")
    assert {(m.block, m.folding) for m in rows} >= {((128, 8, 1), (1, 1, 2)), ((32, 1, 32), (1, 2, 1))}
    assert len(rows) == 12
    extra = _csv_rows(out / "layers-extra-H200.csv")
    assert {e["metric"] for e in extra} == {"lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
                                            "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum",
                                            "lts__t_requests_srcunit_tex_op_read.sum"}
    assert len(extra) == 12 * 3


def _csv_rows(path):
    import csv

    with path.open() as fh:
        return list(csv.DictReader(fh))


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_session_diagonal_stage_collects_the_l1_and_l2_counters_of_issue_46(tmp_path):
    """gpu/session.sh diagonal with the stand-in tools (small domains): box3d-r1 blocks 1-4 wide, D3Q19 blocks one
    cell wide at 512/256/128 threads and star3d-r4 blocks two planes deep, measured with ncu and the L1 and L2
    counters that the committed volumes lack; a metric this ncu does not know is left out, not the run."""
    pytest.importorskip("pystencils")
    unknown = "lts__t_sectors_srcunit_ltcfabric.sum"
    env = _stand_in_env(tmp_path, WS_DEVICE="H100-SXM5-80GB", FAKE_NCU_UNKNOWN=unknown, FAKE_CUPY_REGISTERS="48",
                        WS_BOX_DOMAIN="64,64,64", WS_LBM_DOMAIN="32,32,64", WS_STAR_DOMAIN="64,64,64")
    log = _stage("diagonal", env)
    assert f"ncu does not collect {unknown} here: left out" in log
    from warpspeed.measurement.measurements import read_measurements

    rows = read_measurements(tmp_path / "out" / "diagonal-H100.csv")
    by = {}
    for m in rows:
        by.setdefault(m.kernel, set()).add(m.block)
    assert by["box3d-r1"] >= {(1, 8, 32), (1, 32, 8), (1, 4, 64), (1, 64, 4)} and len(by["box3d-r1"]) == 9
    assert by["d3q19-srt"] == {(1, 8, 64), (1, 8, 32), (1, 8, 16), (32, 4, 4)}
    assert by["star3d-r4"] >= {(1, 128, 2), (16, 16, 2), (64, 4, 2), (128, 2, 2)} and len(by["star3d-r4"]) == 8
    extra = _csv_rows(tmp_path / "out" / "diagonal-extra-H100.csv")
    metrics = {e["metric"] for e in extra}
    assert len(metrics) == 7 and unknown not in metrics
    assert {"l1tex__m_xbar2l1tex_read_sectors.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld_lookup_miss.sum",
            "lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum"} <= metrics
    assert len(extra) == 21 * 7


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_session_launch_stage_records_calls_choices_and_every_block(tmp_path):
    """gpu/session.sh launch (issue 48's launch-time path) on the stand-in cupy at 18^3: each of the four kernels
    created once and called on two array shapes, until the plugin has timed its contenders (the stand-in takes the
    same time in every block, so the model cannot tell them apart) and three calls more, each with the block it
    launched; then every block pystencils launches distinctly, a block of too many registers with its error."""
    pytest.importorskip("lbmpy")
    env = _stand_in_env(tmp_path, WS_DEVICE="H100-SXM5-80GB", FAKE_CUPY_GPU_NAME="NVIDIA H100 80GB HBM3",
                        WS_SIZE="18")
    log = _stage("launch", env)
    out = tmp_path / "out"
    # the report the stage ends with: each case's last block against the fastest measured (all tie here)
    shares = [line for line in log.splitlines() if line.count(" | ") == 7 and not line.startswith("case |")]
    assert len(shares) == 8 and all(" | 100.0% | " in line for line in shares), log
    calls = _csv_rows(out / "launch-calls-H100.csv")
    cases = {(c["case"], c["extents"]) for c in calls}
    assert {c for c, _ in cases} == {"7-point c", "d3q19-srt fzyx", "d3q19-srt declared f(19)", "d3q27-trt fzyx"}
    assert len(cases) == 8
    for case in cases:
        rows = [c for c in calls if (c["case"], c["extents"]) == case]
        assert [int(c["call"]) for c in rows] == list(range(1, len(rows) + 1))
        timing = [c for c in rows if c["candidates_left"] != "0"]
        assert rows[0]["chosen_by"] == "model" and int(rows[0]["candidates_left"]) >= 2, case
        # one warm-up call, then one per candidate; the call timing the last one makes the choice final
        assert len(timing) == int(rows[0]["candidates_left"]), case
        assert len(rows) == len(timing) + 1 + 3 and all(c["chosen_by"] == "measurement" for c in rows[-4:]), case
        assert len({c["launched_block"] for c in rows}) >= 2  # the contenders were launched
        assert all(float(c["wall_s"]) >= float(c["host_s"]) > 0 for c in rows)
    choices = json.loads((out / "launch-choices-H100.json").read_text())
    assert len(choices) == 8 and all(c["summary"]["chosen_by"] == "measurement" for c in choices.values())
    blocks = _csv_rows(out / "launch-blocks-H100.csv")
    for case in cases:
        rows = [b for b in blocks if (b["case"], b["extents"]) == case]
        launched = [b["launched_block"] for b in rows]
        assert len(launched) == len(set(launched)) > 20, case  # each distinct launch timed once
        for b in rows:  # the stand-in's 90 registers per thread: blocks over 728 threads cannot launch
            too_many = math.prod(int(n) for n in b["launched_block"].split("x")) * 90 > 65536
            assert ("RESOURCES" in b["error"]) == too_many, b
            assert too_many or float(b["time_ms"]) == 0.5 == float(b["time_min_ms"])  # 2 ms per 4 launches


def test_the_report_compares_the_block_that_ran_with_the_fastest_block_measured(tmp_path, capsys):
    """gpu/plugin_on_gpu.py report on hand-made CSVs: the share of the best is the fastest block's time over the
    time of the block the last call launched (matched on the block launched, not on the block asked for, which
    pystencils may have trimmed), rows that did not launch are left out, the later calls' cost is the median host
    time of the calls after the choice was final; a variant's time per update sums its kernels' fastest blocks."""
    sys.path.insert(0, str(ROOT / "gpu"))
    try:
        import plugin_on_gpu
    finally:
        sys.path.remove(str(ROOT / "gpu"))

    def write(name, header, rows):
        (tmp_path / name).write_text("\n".join([header, *rows]) + "\n")

    write("launch-calls-H100.csv", "case,extents,call,host_s,wall_s,launched_block,chosen_block,chosen_by,"
          "candidates_left,registers",
          ["k,8x8x8,1,0.5,0.6,64x2x2,64x2x2,model,2,40", "k,8x8x8,2,0.001,0.1,64x2x2,64x2x2,model,2,40",
           "k,8x8x8,3,0.001,0.1,32x4x2,64x2x2,model,2,40",
           "k,8x8x8,4,0.001,0.1,64x2x2,32x4x2,measurement,0,40",  # times the last candidate
           "k,8x8x8,5,0.002,0.1,32x4x2,32x4x2,measurement,0,40", "k,8x8x8,6,0.004,0.1,32x4x2,32x4x2,measurement,0,40"])
    write("launch-blocks-H100.csv", "case,extents,registers,block,launched_block,time_ms,time_min_ms,error",
          ["k,8x8x8,40,32x4x2,8x4x2,1.0,1.0,", "k,8x8x8,40,64x4x2,32x4x2,2.0,2.0,",
           "k,8x8x8,40,64x2x2,64x2x2,4.0,4.0,", "k,8x8x8,40,1024x1x1,1024x1x1,,,CUDADriverError: too many resources"])
    write("variants-H100.csv", "variant,kernel,kernels,updates,predicted_factor,predicted_time_per_update_s,"
          "predicted_block,registers,block,launched_block,time_ms,time_min_ms,error",
          ["a,1,2,2,1.0,1e-6,64x2x2,90,64x2x2,64x2x2,3.0,3.0,", "a,1,2,2,1.0,1e-6,64x2x2,90,32x4x2,32x4x2,2.0,2.0,",
           "a,2,2,2,1.0,1e-6,64x2x2,90,64x2x2,64x2x2,4.0,4.0,", "b,1,1,1,1.2,1.2e-6,64x2x2,90,64x2x2,64x2x2,4.5,4.5,",
           "b,1,1,1,1.2,1.2e-6,64x2x2,90,128x1x1,128x1x1,,,too many resources"])
    lines = plugin_on_gpu.report(tmp_path, "H100")
    # the last call launched 32x4x2 (a row asked for 32x4x2 but launched 8x4x2: not that one); fastest 8x4x2 1.0 ms
    assert lines[1] == "k | 8x8x8 | 32x4x2 (measurement) | 2 | 8x4x2 1 | 50.0% | 0.50 | 3.000"
    assert lines[3:] == ["a | 3.0 | 1.00 | 1.00", "b | 4.5 | 1.50 | 1.20"]  # a: (2 + 4) ms over 2 updates


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_session_variants_stage_times_every_kernel_of_every_variant(tmp_path):
    """gpu/session.sh variants (issue 48's candidate kernels) on the stand-in cupy at 18^3: the eight variants
    compare_variants generates for D3Q19 (four streaming patterns, two layouts), the in-place ones as two kernels,
    each timed in its blocks, with the comparison's predicted factor (the fastest 1.0) beside each row."""
    pytest.importorskip("lbmpy")
    env = _stand_in_env(tmp_path, WS_DEVICE="H100-SXM5-80GB", WS_SIZE="18")
    log = _stage("variants", env)
    assert "compare_variants d3q19-srt on H100-SXM5-80GB" in log
    factors = [line.split(" | ") for line in log.splitlines() if line.startswith("streaming=") and " | " in line]
    assert len(factors) == 8 and all(f[2] == "1.00" for f in factors)  # measured: the stand-in's time, every block
    assert [float(f[3]) for f in factors] == sorted(float(f[3]) for f in factors)  # listed as predicted
    rows = _csv_rows(tmp_path / "out" / "variants-H100.csv")
    kernels = {(r["variant"], r["kernel"]) for r in rows}
    assert len({v for v, _ in kernels}) == 8 and len(kernels) == 12
    assert {r["kernels"] for r in rows if "streaming=aa" in r["variant"]} == {"2"}
    factors = {r["variant"]: float(r["predicted_factor"]) for r in rows}
    assert min(factors.values()) == 1.0 and max(factors.values()) > 1.3  # zyxf predicted slower
    # the stage times 3 launches back to back, twice: the stand-in's 2 ms per pair of events over 3
    assert all(r["predicted_block"] and (r["error"] or float(r["time_ms"]) == pytest.approx(2 / 3)) for r in rows)
