"""CPU seconds of the launch-time block choice's ranking for every catalog kernel (goal, issue 43: <= 1 CPU-s).

The pystencils plugin chooses a block at a kernel's first call by ranking blocks of 256, 512 and 1024 threads
with the screened ranking (``screen=1``, one process) from fresh counts; ``bench_launch_choice.py`` times that
call end to end for three kernels through the stand-in GPU (the ranking plus describing the kernel for the
arrays). This benchmark runs the same ranking for every catalog kernel and layout, the arrays of structures
included: lbmpy kernels at 256^3 (a 258^3 array with its ghost layers), D2Q9 at 2048^2, stencils at the
catalog's domains. Prints one line per kernel (CPU-s, configurations estimated in full, the best block) and
the largest.
Run: python benchmarks/bench_launch_ranking.py [DEVICE]   (lbmpy kernels need the pystencils extra)
"""

from __future__ import annotations

import sys
import time

from bench_catalog import catalog_kernel  # the same kernels at the same domains

import warpspeed
from warpspeed.model.analysis import forget_shared_analyses

THREADS = (256, 512, 1024)  # what the plugin ranks at launch (warpspeed_pystencils._rank.CREATE_KERNEL_THREADS)
KERNELS = ("copy", "star2d-r1", "star3d-r1", "star3d-r4", "box3d-r1", "star:r=2,dims=3,element_bytes=4",
           "d3q19-srt", "d3q19-srt:layout=zyxf", "d3q19-srt:streaming=push,layout=zyxf",
           "d3q19-srt:streaming=aa,timestep=even,layout=zyxf", "d3q19-srt:streaming=esotwist,timestep=odd,layout=zyxf",
           "d3q15-allen-cahn", "d3q15-allen-cahn:layout=zyxf", "lbm:stencil=D3Q27,method=trt",
           "lbm:stencil=D3Q27,method=trt,layout=zyxf", "lbm:stencil=D3Q15,method=mrt,layout=zyxf",
           "lbm:stencil=D3Q27,method=cumulant,layout=zyxf,dtype=float32", "lbm:stencil=D2Q9",
           "lbm:stencil=D2Q9,layout=zyxf")


def main() -> int:
    device = warpspeed.device(sys.argv[1] if len(sys.argv) > 1 else "H100-SXM5-80GB")
    worst = (0.0, "")
    for name in KERNELS:
        kernel = catalog_kernel(name)
        if kernel is None:
            continue
        forget_shared_analyses()  # fresh counts, as a new process's first call has them
        t = time.process_time()
        ranking = warpspeed.rank(kernel, device, THREADS, screen=1, jobs=1)
        cpu = time.process_time() - t
        estimated = len(ranking.results)
        print(f"{name:58s} {'x'.join(map(str, kernel.domain)):>13s}: {cpu:5.2f} CPU-s, {estimated:3d} configurations "
              f"estimated in full, best {ranking.best.configuration.label}", flush=True)
        worst = max(worst, (cpu, name))
    print(f"largest: {worst[0]:.2f} CPU-s ({worst[1]}); goal 1 CPU-s per kernel")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
