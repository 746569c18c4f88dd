"""SIGINT to the main process alone, as schedulers send it (SLURM, CI, ``timeout -s INT``): every long verb
exits with 130 within seconds, leaves no process behind, and a rank cache stays readable."""

import csv
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from paths import ROOT

import warpspeed
from warpspeed.studies.ranking import ResultCache

DATA = ROOT / "tests" / "data" / "hopper"
RANK = ["rank", "star3d-r4", "--device", "H100-SXM5-80GB", "--threads", "64,128,256,512,1024",
        "--folding", "1,1,1", "--folding", "1,2,1", "--folding", "1,1,2", "--jobs", "2"]
VERBS = {  # each runs for several seconds (5-13 s on a 2-core machine) so that it is interrupted at work
    "whatif": ["whatif", "star3d-r4", "--device", "H100-SXM5-80GB", "--sweep", "l2_size=10MiB:160MiB:30:log",
               "--threads", "64,128,256,512,1024", "--folding", "1,1,1", "1,2,1", "1,1,2", "--jobs", "2"],
    "project": ["project", "star3d-r4", "--from", "A100-SXM4-40GB", "--to", "H100-SXM5-80GB",
                "--threads", "64,128,256,512,1024", "--folding", "1,1,1", "1,2,1", "1,1,2", "1,1,4", "1,4,1",
                "--jobs", "2"],
    "validate": ["validate", "{many}"],
    "calibrate": ["calibrate", str(DATA / "star3d-r4-H100.csv"), str(DATA / "lbm-H100.csv"),
                  str(DATA / "occupancy-lbm-H100.csv"), "--device", "H100-SXM5-80GB"],
}
EXIT_WITHIN_S = 30  # a hang, not a speed: the interrupted runs exit in well under a second


def _start(args: list[str], tmp_path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "warpspeed", *args], cwd=tmp_path, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)


def _interrupt_and_wait(proc: subprocess.Popen) -> tuple[int, str]:
    """SIGINT to the main process only; its exit code and stderr. Kills the group if it hangs."""
    os.kill(proc.pid, signal.SIGINT)
    try:
        _, err = proc.communicate(timeout=EXIT_WITHIN_S)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(f"no exit within {EXIT_WITHIN_S} s of SIGINT")
    return proc.returncode, err


def _group_is_empty(pgid: int) -> bool:
    for _ in range(50):
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    os.killpg(pgid, signal.SIGKILL)
    return False


def _wait_for(condition, proc: subprocess.Popen, limit_s: float = 60) -> None:
    end = time.monotonic() + limit_s
    while not condition():
        assert proc.poll() is None, f"ended before it could be interrupted: {proc.stderr.read()}"
        assert time.monotonic() < end, "the run never started its work"
        time.sleep(0.02)


@pytest.mark.parametrize("after_first_record_s", [0.0, 0.15, 0.4, 0.8])
def test_rank_interrupted_exits_and_keeps_its_cache(tmp_path, after_first_record_s):
    cache = tmp_path / "t.jsonl"
    proc = _start([*RANK, "--cache", str(cache)], tmp_path)
    _wait_for(lambda: cache.exists() and cache.stat().st_size > 0, proc)
    time.sleep(after_first_record_s)
    code, err = _interrupt_and_wait(proc)
    assert code == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert _group_is_empty(proc.pid), "a worker outlived the interrupted run"
    lines = cache.read_text().splitlines()
    assert lines and all(isinstance(json.loads(line), dict) for line in lines)
    kept = ResultCache(cache, warpspeed.find_kernel("star3d-r4"), warpspeed.device("H100-SXM5-80GB"), "latency")
    assert len(kept.entries) == len(lines)  # every record a later run would reuse


def _many_domains(tmp_path) -> str:
    """The star3d-r4 sweep at eight domains: a validation of 1,344 rows (each domain estimated afresh)."""
    rows = list(csv.DictReader((DATA / "star3d-r4-H100.csv").open()))
    path = tmp_path / "many.csv"
    with path.open("w", newline="") as f:
        out = csv.DictWriter(f, fieldnames=list(rows[0]))
        out.writeheader()
        for k in range(8):
            for row in rows:
                x, y, z = row["domain"].split("x")
                out.writerow({**row, "domain": f"{x}x{y}x{int(z) - 8 * k}"})
    return str(path)


@pytest.mark.parametrize("verb", sorted(VERBS))
def test_long_verbs_interrupted_exit_130_and_leave_nothing(tmp_path, verb):
    args = [_many_domains(tmp_path) if a == "{many}" else a for a in VERBS[verb]]
    proc = _start(args, tmp_path)
    started = time.monotonic()
    _wait_for(lambda: time.monotonic() - started > 2.5, proc)
    code, err = _interrupt_and_wait(proc)
    assert code == 130, err
    assert "Traceback" not in err and "Exception ignored" not in err, err
    assert _group_is_empty(proc.pid)
