"""CPU seconds of one estimate for every catalog kernel over a spread of block shapes (goal: 30 ms each).

For each kernel (the catalog's default domains; lbmpy kernels at 256^3 when the pystencils plugin is
installed) the blocks run from 1 cell to 512 cells wide in x, flat and tall, 128 to 1024 threads. Prints one
line per kernel: the median and the largest time of one estimate (after a first one that parses the kernel)
and the block that took longest; the last line gives the largest over all kernels.
Run: python benchmarks/bench_catalog.py [DEVICE]
"""

from __future__ import annotations

import statistics
import sys
import time

import warpspeed
from warpspeed.errors import InputError

BLOCKS = ((512, 1, 1), (256, 1, 1), (128, 2, 2), (64, 4, 2), (32, 8, 2), (32, 4, 8), (16, 4, 8), (8, 8, 8),
          (4, 4, 16), (2, 8, 16), (1, 8, 64), (1, 256, 1), (16, 16, 4), (64, 1, 16))
KERNELS = ("copy", "star2d-r1", "star3d-r1", "star3d-r4", "box3d-r1", "star:r=2,dims=3,element_bytes=4",
           "d3q19-srt", "d3q19-srt:layout=zyxf", "d3q19-srt:streaming=push", "d3q15-allen-cahn",
           "lbm:stencil=D3Q27,method=trt", "lbm:stencil=D3Q15,method=mrt,layout=zyxf", "lbm:stencil=D2Q9")


def catalog_kernel(name: str) -> warpspeed.Kernel | None:
    """A catalog kernel at its benchmark domain (the catalog's own; lbmpy kernels at 256^3, D2Q9 at 2048^2), or
    None, said on the output, where it cannot be built (lbmpy missing)."""
    try:
        kernel = warpspeed.find_kernel(name)
    except InputError as err:
        print(f"{name}: skipped ({err})")
        return None
    if kernel.source.startswith("pystencils:"):
        kernel = kernel.with_domain((2048, 2048, 1) if "D2Q9" in name else (256, 256, 256))
    return kernel


def main() -> int:
    device = sys.argv[1] if len(sys.argv) > 1 else "H100-SXM5-80GB"
    worst_all = (0.0, "", ())
    for name in KERNELS:
        kernel = catalog_kernel(name)
        if kernel is None:
            continue
        warpspeed.estimate(kernel, device, (32, 4, 2) if kernel.domain[2] > 1 else (32, 8, 1))
        times = []
        for block in BLOCKS:
            if kernel.domain[2] == 1:
                block = (block[0], block[1] * block[2], 1)
            t = time.process_time()
            try:
                warpspeed.estimate(kernel, device, block)
            except InputError:
                continue
            times.append((time.process_time() - t, block))
        med = statistics.median(t for t, _ in times)
        worst = max(times)
        print(f"{name} {'x'.join(map(str, kernel.domain))}: median {med * 1e3:.0f} ms, largest "
              f"{worst[0] * 1e3:.0f} ms (block {worst[1]}) per estimate over {len(times)} blocks", flush=True)
        if worst[0] > worst_all[0]:
            worst_all = (worst[0], name, worst[1])
    print(f"largest over the catalog: {worst_all[0] * 1e3:.0f} ms ({worst_all[1]}, block {worst_all[2]}); "
          "goal 30 ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
