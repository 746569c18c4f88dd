"""The comparison of candidate kernels: CPU seconds of ``warpspeed.compare`` beyond lbmpy's own derivation.

The D3Q19 SRT candidates at 256^3 on an H100: streaming {pull, push} x layout {fzyx, zyxf} (four candidates),
then all eight with AA and esotwist, each an even+odd pair of kernels making two updates. The kernels are built
and described first (lbmpy derives them, pystencils generates the code, nvcc counts the registers; cached on disk
after the first build) and that time is printed apart; then the comparison is timed, once with the default thread
counts (1024, halved per kernel until a block can launch) and once with blocks of 256, 512 and 1024 threads (what
``create_kernel`` ranks), each from fresh counts. Goal (issue 43): the 8-candidate comparison of {pull, push, AA,
esotwist} x {fzyx, zyxf} in <= 4 CPU-s.

Run: python benchmarks/bench_compare.py   (needs the pystencils extra)
"""

from __future__ import annotations

import resource
import time

import warpspeed
from warpspeed.application.resolve import resolve_kernel
from warpspeed.model.analysis import forget_shared_analyses

LAYOUTS = ("fzyx", "zyxf")
FOUR = [(f"d3q19-srt:streaming={s},layout={lay}",) for s in ("pull", "push") for lay in LAYOUTS]
EIGHT = FOUR + [tuple(f"d3q19-srt:streaming={s},timestep={t},layout={lay}" for t in ("even", "odd"))
                for s in ("aa", "esotwist") for lay in LAYOUTS]
DEVICE = "H100-SXM5-80GB"


def cpu_s() -> float:
    own = resource.getrusage(resource.RUSAGE_SELF)
    return own.ru_utime + own.ru_stime


def timed(f):
    c, t = cpu_s(), time.perf_counter()
    out = f()
    return out, cpu_s() - c, time.perf_counter() - t


def main() -> int:
    names = list(dict.fromkeys(name for cand in EIGHT for name in cand))
    built, cpu, wall = timed(lambda: {name: resolve_kernel(name) for name in names})
    print(f"build and describe {len(built)} kernels (lbmpy, pystencils, nvcc where installed; the disk cache "
          f"after the first run): {cpu:.2f} CPU-s ({wall:.2f} s wall)")
    for cands in (FOUR, EIGHT):
        for threads, what in ((None, "default threads"), ((256, 512, 1024), "256, 512, 1024 threads")):
            forget_shared_analyses()  # counts afresh: nothing of the previous comparison is reused
            c, cpu, wall = timed(lambda cands=cands, threads=threads: warpspeed.compare(
                [warpspeed.Candidate(tuple(built[n] for n in cand), updates=len(cand), name="+".join(cand))
                 for cand in cands], DEVICE, threads=threads))
            estimated = sum(len(k.ranking.results) for r in c.candidates for k in r.kernels)
            print(f"compare {len(cands)} candidates on {DEVICE} ({what}): {cpu:.2f} CPU-s ({wall:.2f} s wall), "
                  f"{estimated} configurations estimated in full; goal for 8 candidates: 4 CPU-s")
            for i, r in enumerate(c.candidates, start=1):
                k = r.kernels[0]
                print(f"  {i}. {r.name[:60]:<60} {r.performance_GLup_s:6.2f} GLup/s  {r.factor:5.2f}x  "
                      f"{k.best.configuration.label:<10} {r.limiter:<8} {r.level}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
