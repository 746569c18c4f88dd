"""The paper's 168-configuration 3D25pt range-4 sweep on A100 (640x512x512): wall time and configs/s.

Target (issue): <= 10 s wall on a 2-core machine. Run: python benchmarks/bench_rank.py [--jobs N]
"""

from __future__ import annotations

import os
import sys
import time

import warpspeed


def main() -> int:
    jobs = int(sys.argv[sys.argv.index("--jobs") + 1]) if "--jobs" in sys.argv else (os.cpu_count() or 1)
    space = warpspeed.paper_space()
    t = time.perf_counter()
    r = warpspeed.rank("star3d-r4", "A100-SXM4-40GB", configs=space, jobs=jobs)
    wall = time.perf_counter() - t
    b = r.best
    print(f"{len(space)} configurations in {wall:.2f} s with {jobs} worker(s): {len(space) / wall:.1f} configs/s; "
          f"best {b.configuration.block} folding {b.configuration.folding}: {b.performance_GLup_s:.1f} GLup/s "
          f"({b.limiter}); limiters {r.limiter_counts}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
