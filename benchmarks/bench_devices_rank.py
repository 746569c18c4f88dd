"""Which GPU for a kernel: seconds of ``warpspeed devices rank`` over every shipped device.

For star3d-r4 (640x512x512) and d3q19-srt (256^3; 1024 threads cannot launch its 90 registers, so each device
ranks 1024 then 512), ``warpspeed.rank_devices`` on every shipped device is timed from fresh counts: in this
process (``jobs=1``, what the web page does) and with the default pool (one device per worker, all cores).
Then the command line, ``warpspeed devices rank KERNEL``, end to end in a fresh process (imports included).
Each device is a screened ranking (``screen=1``), as ``compare`` ranks a candidate. Goal: seconds, not minutes.

Run: python benchmarks/bench_devices_rank.py
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

import warpspeed
from warpspeed.model.analysis import forget_shared_analyses
from warpspeed.studies.workers import available_cores

KERNELS = ("star3d-r4", "d3q19-srt")


def cpu_s() -> float:
    """CPU seconds of this process and of its finished workers."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(f):
    c, t = cpu_s(), time.perf_counter()
    out = f()
    return out, cpu_s() - c, time.perf_counter() - t


def main() -> int:
    devices = warpspeed.device_ids()
    print(f"{len(devices)} shipped devices, {available_cores()} cores")
    for kernel in KERNELS:
        for jobs, what in ((1, "in this process"), (None, f"pool of {available_cores()} workers")):
            forget_shared_analyses()  # counts afresh: nothing of the previous run is reused
            r, cpu, wall = timed(lambda kernel=kernel, jobs=jobs: warpspeed.rank_devices(kernel, jobs=jobs))
            estimated = sum(len(d.ranking.results) for d in r.devices if d.ranking is not None)
            print(f"rank_devices({kernel!r}), {what}: {wall:.2f} s wall, {cpu:.2f} CPU-s, {estimated} configurations "
                  f"estimated in full; fastest {r.best.device.id} ({r.best.performance_GLup_s:.3g} GLup/s), "
                  f"{len(r.refused)} cannot run it")
        t = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "warpspeed", "devices", "rank", kernel], capture_output=True,
                              text=True, env={**os.environ, "PYTHONWARNINGS": "ignore"})
        assert done.returncode == 0, done.stderr
        print(f"warpspeed devices rank {kernel} (a fresh process, imports included): "
              f"{time.perf_counter() - t:.2f} s wall")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
