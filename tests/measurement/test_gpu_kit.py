"""The scripts in gpu/ that a session with a lent GPU runs (they cannot run here; their parts can)."""

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


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_session_check_stage_runs_end_to_end_with_stand_in_gpu_tools(tmp_path):
    """gpu/session.sh check with tests/fake_gpu's cupy, ncu and nvidia-smi: install, measure both codes with
    the ncu child, write the CSV, validate it; what a lent GPU's first command does."""
    pytest.importorskip("pystencils")
    fake = ROOT / "tests" / "fake_gpu"
    out = tmp_path / "out"
    env = {**os.environ, "OUT": str(out), "SITE": str(tmp_path / "site"), "PYTHONPATH": str(fake),
           "WS_DEVICE": "H100-SXM5-80GB",
           "PATH": os.pathsep.join([str(fake), str(Path(sys.executable).parent), os.environ["PATH"]])}
    r = subprocess.run(["bash", "gpu/session.sh", "check"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=900)
    log = (out / "check.log").read_text()
    assert r.returncode == 0, log
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
    import csv

    fake = ROOT / "tests" / "fake_gpu"
    out = tmp_path / "out"
    unknown = "lts__t_sectors_srcunit_ltcfabric.sum"
    env = {**os.environ, "OUT": str(out), "SITE": str(tmp_path / "site"), "PYTHONPATH": str(fake),
           "WS_DEVICE": "H200-SXM-141GB", "FAKE_NCU_UNKNOWN": unknown,
           "FAKE_CUPY_REGISTERS": "48",  # star3d-r4's count: its blocks of 1024 threads launch
           "PATH": os.pathsep.join([str(fake), str(Path(sys.executable).parent), os.environ["PATH"]])}
    r = subprocess.run(["bash", "gpu/session.sh", "layers"], cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=900)
    log = (out / "layers.log").read_text()
    assert r.returncode == 0, log
    assert f"ncu does not collect {unknown} here: left out" in log
    from warpspeed.measurement.measurements import read_measurements

    rows = read_measurements(out / "layers-H200.csv")
    assert {(m.block, m.folding) for m in rows} >= {((128, 8, 1), (1, 1, 2)), ((32, 1, 32), (1, 2, 1))}
    assert len(rows) == 12
    with (out / "layers-extra-H200.csv").open() as fh:
        extra = list(csv.DictReader(fh))
    assert {e["metric"] for e in extra} == {"lts__t_sectors_srcunit_tex_op_read_lookup_hit.sum",
                                            "lts__t_sectors_srcunit_tex_op_read_lookup_miss.sum",
                                            "lts__t_requests_srcunit_tex_op_read.sum"}
    assert len(extra) == 12 * 3
