"""Rankings: CPU seconds (this process and its workers) and wall time of four sweeps.

1. the paper's 168-configuration 3D25pt range-4 sweep on an A100 (640x512x512; goal <= 2 CPU-s), in full
   and screened (``screen=1``: only what can be the best estimated in full, in this process);
2. the default space of a 7-point stencil: star3d-r1 at 514^3 on an H100, 182 blocks of 128-1024 threads
   (what ``create_kernel`` ranks, screened; goal <= 1 CPU-s), in full and screened;
3. the default space of ``create_kernel`` for lbmpy's D3Q19 kernel (256^3, H100, 147 blocks of 256-1024
   threads), screened, in ``fzyx`` and in the array-of-structures layout ``zyxf`` (needs the pystencils
   plugin);
4. a 5-point what-if of the L2 size (10 MiB .. 160 MiB) of star3d-r4 on an A100 at 512x512x256 against one
   ranking of the same space (goal: <= 1.5x).

Each sweep runs in a fresh worker pool (its start-up counted). Run: python benchmarks/bench_rank.py [--jobs N]
"""

from __future__ import annotations

import os
import resource
import sys
import time

import warpspeed
from warpspeed.application.whatif import whatif
from warpspeed.model.analysis import forget_shared_analyses


def cpu_s() -> float:
    """CPU seconds of this process and of its finished children (the ranking's workers)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def fresh() -> None:
    """Drop what this process kept of earlier sweeps (the counts estimates share), so each sweep counts afresh."""
    forget_shared_analyses()


def timed(f):
    c, t = cpu_s(), time.perf_counter()
    out = f()
    return out, cpu_s() - c, time.perf_counter() - t


def main() -> int:
    jobs = int(sys.argv[sys.argv.index("--jobs") + 1]) if "--jobs" in sys.argv else (os.cpu_count() or 1)
    warpspeed.estimate("star3d-r1", "H100-SXM5-80GB", (32, 4, 2))  # imports and first parse, not counted
    space = warpspeed.paper_space()
    r, cpu, wall = timed(lambda: warpspeed.rank("star3d-r4", "A100-SXM4-40GB", configs=space, jobs=jobs))
    b = r.best
    print(f"paper sweep: {len(space)} configurations in {cpu:.2f} CPU-s ({wall:.2f} s wall, {jobs} worker(s)): "
          f"{cpu / len(space) * 1e3:.1f} CPU-ms each; best {b.configuration.block} folding "
          f"{b.configuration.folding}: {b.performance_GLup_s:.1f} GLup/s ({b.limiter}); goal 2 CPU-s")
    fresh()
    r, cpu, wall = timed(lambda: warpspeed.rank("star3d-r4", "A100-SXM4-40GB", configs=space, screen=1))
    print(f"paper sweep, screened: {cpu:.2f} CPU-s ({wall:.2f} s wall, this process), {len(r.results)} of "
          f"{len(space)} estimated in full; best {r.best.configuration.block} folding {r.best.configuration.folding}")
    k = warpspeed.find_kernel("star3d-r1").with_domain((514, 514, 514))
    fresh()
    r, cpu, wall = timed(lambda: warpspeed.rank(k, "H100-SXM5-80GB", threads=(128, 256, 512, 1024), jobs=jobs))
    print(f"7-point default space: {len(r.results)} configurations in {cpu:.2f} CPU-s ({wall:.2f} s wall): "
          f"{cpu / len(r.results) * 1e3:.1f} CPU-ms each; best {r.best.configuration.block}; goal 1 CPU-s")
    fresh()
    r, cpu, wall = timed(lambda: warpspeed.rank(k, "H100-SXM5-80GB", threads=(128, 256, 512, 1024), screen=1))
    print(f"7-point default space, screened: {cpu:.2f} CPU-s ({wall:.2f} s wall, this process), {len(r.results)} "
          f"of {len(r.results) + len(r.bounded)} estimated in full; best {r.best.configuration.block}")
    for name in ("d3q19-srt", "d3q19-srt:layout=zyxf"):
        try:  # the D3Q19 kernel comes from lbmpy through the pystencils plugin
            lbm = warpspeed.find_kernel(name).with_domain((256, 256, 256))
        except warpspeed.InputError as err:
            print(f"{name} default space: skipped ({err})")
            continue
        fresh()
        r, cpu, wall = timed(lambda lbm=lbm: warpspeed.rank(lbm, "H100-SXM5-80GB", threads=(256, 512, 1024), screen=1))
        print(f"{name} default space of create_kernel, screened: {cpu:.2f} CPU-s ({wall:.2f} s wall, this "
              f"process), {len(r.results)} of {len(r.results) + len(r.bounded)} estimated in full; "
              f"best {r.best.configuration.block}")
    star = warpspeed.find_kernel("star3d-r4").with_domain((512, 512, 256))
    values = [10 * 2**20 * 16 ** (i / 4) for i in range(5)]
    fresh()
    _, one, _ = timed(lambda: warpspeed.rank(star, "A100-SXM4-40GB", jobs=jobs))
    fresh()
    _, sweep, wall = timed(lambda: whatif(star, "A100-SXM4-40GB", "l2_size", values, jobs=jobs))
    print(f"what-if, 5 L2 sizes: {sweep:.2f} CPU-s ({wall:.2f} s wall) against {one:.2f} CPU-s for one ranking: "
          f"{sweep / one:.2f}x; goal 1.5x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
