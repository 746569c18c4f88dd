"""The scripts in gpu/ that a session with a lent GPU runs (they cannot run here; their parts can)."""

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


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
    from warpspeed.measurements import read_measurements

    rows = read_measurements(out / "check-H100.csv")
    assert [(m.kernel, m.values["code"]) for m in rows] == [("star3d-r4", "warpspeed")] * 4 + [
        ("d3q19-srt", "pystencils")] * 2
    assert all(isinstance(m.values["cycles"], float) for m in rows)  # every configuration profiled
    assert log.strip().splitlines()[-2].startswith("summary: 6 configurations in 2 groups")
