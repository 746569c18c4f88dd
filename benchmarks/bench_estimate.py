"""CPU milliseconds of one estimate: star3d-r4 on an A100 over the paper's configurations, growth with the
domain, and lbmpy kernels (issue 27's goal: 10 ms for star3d-r4, 30 ms for every catalog kernel).

An estimate keeps the counts that do not depend on the device (its block stage and wave counts) for the next
configuration or device that shares them; every figure here is of estimates that count afresh: each of the
168 paper configurations once, or the same one with the kept counts dropped before each repeat.
Run: python benchmarks/bench_estimate.py
"""

from __future__ import annotations

import statistics
import sys
import time

import warpspeed
from warpspeed.model.estimate import KernelAnalysis

DEVICE = "A100-SXM4-40GB"
BLOCK = (32, 4, 8)


def timed(kernel, domain, folding=(1, 1, 1), repeats=7, block=BLOCK) -> float:
    """Median CPU seconds of one estimate of ``block``, counting afresh each time."""
    k = kernel.with_domain(domain)
    analysis = KernelAnalysis(k)
    warpspeed.estimate(k, DEVICE, block, folding, analysis=analysis)  # parsing, ISL maps, imports
    times = []
    for _ in range(repeats):
        analysis.forget_counts()
        t = time.process_time()
        warpspeed.estimate(k, DEVICE, block, folding, analysis=analysis)
        times.append(time.process_time() - t)
    return statistics.median(times)


def main() -> int:
    k = warpspeed.find_kernel("star3d-r4")
    analysis = KernelAnalysis(k)
    warpspeed.estimate(k, DEVICE, BLOCK, analysis=analysis)
    analysis.forget_counts()
    times = []
    for c in warpspeed.paper_space():
        t = time.process_time()
        warpspeed.estimate(k, DEVICE, c.block, c.folding, analysis=analysis)
        times.append(time.process_time() - t)
    print(f"star3d-r4 640x512x512 on {DEVICE}, the 168 paper configurations: {statistics.mean(times) * 1e3:.1f} ms "
          f"mean, {statistics.median(times) * 1e3:.1f} ms median, {max(times) * 1e3:.0f} ms largest per estimate "
          "(goal 10 ms)")
    t = timed(k, (640, 512, 512))
    t_fold = timed(k, (640, 512, 512), (1, 1, 2))
    small, large = timed(k, (256, 256, 256)), timed(k, (4096, 4096, 4096))
    print(f"block {BLOCK}: {t * 1e3:.1f} ms per estimate ({t_fold * 1e3:.1f} ms with folding 1,1,2); "
          f"256^3: {small * 1e3:.1f} ms, 4096^3: {large * 1e3:.1f} ms, ratio {large / small:.2f}")
    for name in ("d3q19-srt", "d3q15-allen-cahn", "d3q19-srt:layout=zyxf"):
        try:
            lbm = warpspeed.find_kernel(name)
        except warpspeed.InputError:
            print(f"{name}: skipped (pystencils plugin not installed)")
            continue
        for block in ((64, 4, 2), (16, 4, 8)):
            ms = timed(lbm, lbm.domain, block=block, repeats=3) * 1e3
            print(f"{name} 256^3 block {block} on {DEVICE}: {ms:.0f} ms per estimate")
    return 0


if __name__ == "__main__":
    sys.exit(main())
