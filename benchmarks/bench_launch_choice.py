"""Seconds the pystencils plugin spends choosing a block: at launch time, and in ``create_kernel`` with a shape.

Runs on the stand-in GPU of the tests (tests/fake_gpu: pystencils' cupy JIT around a cupy that compiles and
launches nothing), so what is timed is warpspeed's part of a launch: describing the kernel for the arrays,
ranking the blocks, reading the disk cache. Three cases: a 7-point stencil, and the D3Q19 SRT kernel with its
populations in structure-of-arrays (fzyx) and in array-of-structures (zyxf) layout. Each case runs in a fresh
process with one cache folder:
first the cold run (nothing cached), then the same program again (the choice is read back).
Prints per case and run: the first call at each array shape, and a repeated call. Then ``create_kernel`` with
``shape=`` and ``device=`` (the block chosen at creation; registers from nvcc where it is installed), cold and
cached, each in a fresh process; after the cold run, nvcc alone on the same code (the goal of a cold
``create_kernel``: nvcc's time plus 0.5 s).
Run: python benchmarks/bench_launch_choice.py [GPU-NAME]
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# the three cases: a 7-point stencil (fields of any shape), the D3Q19 kernel in structure-of-arrays layout
# (fzyx) or in array-of-structures layout (zyxf: a cell's 19 populations side by side), as ``assignments``
ASSIGNMENTS = '''if case == "star3d-r1":
    src, dst = ps.fields("src, dst: double[3D]", layout="fzyx")
    offsets = [(1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0), (0, 0, 1), (0, 0, -1)]
    assignments = [ps.Assignment(dst.center, sum(src[o] for o in offsets) - 6 * src.center)]
else:
    assignments = wp.lbm_d3q19_srt(layout="zyxf" if case == "d3q19-zyxf" else "fzyx")
'''

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import cupy, pystencils as ps, warpspeed_pystencils as wp
case, shapes = sys.argv[2], json.loads(sys.argv[3])
{ASSIGNMENTS}t = time.perf_counter()
run = wp.create_kernel(assignments).compile()
out = {"create_s": time.perf_counter() - t, "first_call_s": [], "first_call_cpu_s": []}
for shape in shapes:
    arrays = {}
    for f in run.kernel.get_fields():
        q = tuple(int(n) for n in f.index_shape)
        if case == "d3q19-zyxf":  # the populations of a cell side by side, then x, y, z
            arrays[f.name] = cupy.zeros(tuple(reversed(shape)) + q).transpose(2, 1, 0, 3)
        else:
            arrays[f.name] = cupy.zeros(tuple(shape) + q, order="F")
    t, c = time.perf_counter(), time.process_time()
    scalars = {} if case == "star3d-r1" else {"omega": 1.8}
    run(**arrays, **scalars)
    out["first_call_cpu_s"].append(time.process_time() - c)
    out["first_call_s"].append(time.perf_counter() - t)
t = time.perf_counter()
run(**arrays, **scalars)
out["repeat_call_s"] = time.perf_counter() - t
print(json.dumps(out))
""".replace("{ASSIGNMENTS}", ASSIGNMENTS)

CHILD_SHAPE = r"""
import json, sys, time
import pystencils as ps, warpspeed_pystencils as wp
from warpspeed_pystencils import _registers
case, shape = sys.argv[1], json.loads(sys.argv[2])
{ASSIGNMENTS}t = time.perf_counter()
kernel = wp.create_kernel(assignments, shape=shape, device="H100-SXM5-80GB")
out = {"create_s": time.perf_counter() - t, "block": kernel.metadata["warpspeed"]["block"]}
nvcc = _registers.find_nvcc()
if sys.argv[3] == "cold" and nvcc:  # nvcc alone on the same code, now: the yardstick of the cold run
    t = time.perf_counter()
    _registers._Compilation(kernel.get_c_code(), "sm_90", nvcc).registers()
    out["nvcc_s"] = time.perf_counter() - t
print(json.dumps(out))
""".replace("{ASSIGNMENTS}", ASSIGNMENTS)

CASES = (("star3d-r1", [[130, 66, 34], [514, 514, 514]]), ("d3q19-srt", [[66, 66, 66], [258, 258, 258]]),
         ("d3q19-zyxf", [[66, 66, 66], [258, 258, 258]]))


def main() -> int:
    gpu = sys.argv[1] if len(sys.argv) > 1 else "NVIDIA H100 80GB HBM3"
    env = dict(os.environ, FAKE_CUPY_GPU_NAME=gpu, WARPSPEED_NVCC="")
    print(f"launch-time block choice, stand-in GPU reporting {gpu!r} (seconds of wall time; the first calls also "
          "in CPU seconds: goal <= 1 CPU-s for every catalog kernel, arrays of structures included)")
    for case, shapes in CASES:
        with tempfile.TemporaryDirectory() as cache:
            env["WARPSPEED_CACHE_DIR"] = cache
            for run in ("cold", "cached"):
                done = subprocess.run([sys.executable, "-c", CHILD, str(ROOT / "tests" / "fake_gpu"), case,
                                       json.dumps(shapes)], env=env, capture_output=True, text=True, check=True)
                r = json.loads(done.stdout.strip().splitlines()[-1])
                firsts = ", ".join(f"{tuple(s)}: {t:.3f} ({c:.3f} CPU-s)" for s, t, c in zip(
                    shapes, r["first_call_s"], r["first_call_cpu_s"], strict=True))
                print(f"{case:10s} {run:6s}  create_kernel {r['create_s']:.3f}  first call {firsts}  "
                      f"repeat {r['repeat_call_s'] * 1e3:.2f} ms")
    print("create_kernel(assignments, shape=..., device='H100-SXM5-80GB') (seconds of wall time)")
    env = dict(os.environ)
    for case, shapes in CASES:
        with tempfile.TemporaryDirectory() as cache:
            env["WARPSPEED_CACHE_DIR"] = cache
            for run in ("cold", "cached", "cached"):
                done = subprocess.run([sys.executable, "-c", CHILD_SHAPE, case, json.dumps(shapes[-1]), run],
                                      env=env, capture_output=True, text=True, check=True)
                r = json.loads(done.stdout.strip().splitlines()[-1])
                nvcc = f", nvcc alone {r['nvcc_s']:.3f}" if "nvcc_s" in r else ""
                print(f"{case:10s} {run:6s}  shape {tuple(shapes[-1])}: create_kernel {r['create_s']:.3f} "
                      f"(block {tuple(r['block'])}){nvcc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
