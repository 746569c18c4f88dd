"""Time one estimate of the 3D25pt range-4 stencil on A100 and its growth with the domain size.

Prints the median time of one estimate after the first (640x512x512, block (32,4,8)) and the ratio of
that time between a 256^3 and a 4096^3 domain (target: well under 0.1 s, ratio <= 1.5); with the
pystencils plugin installed, also the lbmpy D3Q19 SRT and Allen-Cahn kernels at 256^3 (rows of 258 cells:
their fields have an index dimension and unaligned rows), and D3Q19 in the array-of-structures layout
(rows of one cell's 152 B whose phases cycle with x, y and z: counted by enumeration, see
warpspeed/enumerated_volumes.py; issue 15's goal is 0.3 s per estimate for every catalog kernel).
"""

from __future__ import annotations

import statistics
import sys
import time

import warpspeed

DEVICE = "A100-SXM4-40GB"
BLOCK = (32, 4, 8)


def timed(kernel, domain, folding=(1, 1, 1), repeats=7, block=BLOCK) -> float:
    k = kernel.with_domain(domain)
    warpspeed.estimate(k, DEVICE, block, folding)  # first call: parsing, ISL maps, imports
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        warpspeed.estimate(k, DEVICE, block, folding)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> int:
    k = warpspeed.find_kernel("star3d-r4")
    t = timed(k, (640, 512, 512))
    t_fold = timed(k, (640, 512, 512), (1, 1, 2))
    small, large = timed(k, (256, 256, 256)), timed(k, (4096, 4096, 4096))
    print(f"star3d-r4 640x512x512 block {BLOCK} on {DEVICE}: {t * 1e3:.1f} ms per estimate "
          f"({t_fold * 1e3:.1f} ms with folding 1,1,2)")
    print(f"256^3: {small * 1e3:.1f} ms, 4096^3: {large * 1e3:.1f} ms, ratio {large / small:.2f}")
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
