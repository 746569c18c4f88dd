"""CPU seconds and peak memory of one estimate on domains thousands of cells wide, per footprint counter.

lbmpy's D3Q19 SRT in array-of-structures layout (``zyxf``) is counted line by line (``auto`` takes the
``lines`` counter): a field's x-line spans the whole x extent, so on wide domains with blocks one cell wide
(1x8x64) a layer of the wave is thousands of such lines. Goal: ``auto`` costs no more than the enumeration
(``counter="enumerated"``), in time and memory, also on these domains; 256^3 is the contrast. Each case runs in
a fresh process: the first estimate at the domain (the counts built from nothing), its CPU seconds and the
process's peak resident memory. The last line ranks the blocks of 256, 512 and 1024 threads at 4096x1024x256
(the plugin's launch-time ranking; ``auto`` only, the ranking takes no counter).
Run: python benchmarks/bench_wide_domain.py [DEVICE]   (needs the pystencils extra)
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL = "d3q19-srt:layout=zyxf"
CASES = (((4096, 1024, 256), (1, 8, 64)), ((8192, 256, 256), (1, 8, 64)), ((256, 256, 256), (1, 8, 64)))
COUNTERS = ("auto", "enumerated")
RANKED = (4096, 1024, 256)

CHILD = r"""
import json, resource, sys, time
import warpspeed
from warpspeed.errors import InputError
name, domain, block, counter, device = json.loads(sys.argv[1])
try:
    kernel = warpspeed.find_kernel(name).with_domain(tuple(domain))
except InputError as err:
    print(json.dumps({"skipped": str(err)}))
    raise SystemExit(0)
t = time.process_time()
if block:
    warpspeed.estimate(kernel, device, tuple(block), counter=counter)
else:
    warpspeed.rank(kernel, warpspeed.device(device), (256, 512, 1024), screen=1, jobs=1)
cpu = time.process_time() - t
print(json.dumps({"cpu_s": cpu, "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def _run(domain: tuple[int, ...], block: tuple[int, ...] | None, counter: str, device: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps([KERNEL, domain, block, counter, device])],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(out.stdout.splitlines()[-1])


def main() -> int:
    device = sys.argv[1] if len(sys.argv) > 1 else "H100-SXM5-80GB"
    runs = [(domain, block) for domain, block in CASES] + [(RANKED, None)]
    for domain, block in runs:
        figures = []
        for counter in COUNTERS if block else COUNTERS[:1]:
            r = _run(domain, block, counter, device)
            if "skipped" in r:
                print(f"{KERNEL}: skipped ({r['skipped']})")
                return 0
            figures.append(f"{counter} {r['cpu_s']:.2f} CPU-s, {r['peak_mib']:.0f} MiB")
        what = f"one estimate, block {'x'.join(map(str, block))}" if block else "ranking of 256-1024 threads"
        print(f"{KERNEL} {'x'.join(map(str, domain))}, {what}: {'; '.join(figures)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
