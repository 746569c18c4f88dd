"""Run a ``warpspeed.measurement.measure.CudaProgram`` on the CPU: its source compiled as C++ with g++, the grid looped
over sequentially (one thread at a time). Test helper: the kernels measured on GPUs are checked here."""

import subprocess

import numpy as np

from warpspeed.measurement.measure import CudaProgram

HARNESS = r"""
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cmath>
#include <vector>
using std::pow; using std::sqrt; using std::fabs;
struct ws_dim3 { long long x, y, z; };
static ws_dim3 blockIdx, threadIdx, blockDim, gridDim;
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
#define RESTRICT
"""
_CTYPES = {"int32": "int32_t", "int64": "int64_t", "uint32": "uint32_t", "uint64": "uint64_t", "float32": "float",
           "float64": "double"}


def cpu_source(program: CudaProgram) -> str:
    """The program's source as C++: CUDA headers dropped, kernel called ws_k."""
    body = "\n".join(line for line in program.named("ws_k").splitlines() if not line.startswith("#include"))
    return HARNESS + body.replace('extern "C" ', "")


def run_on_cpu(program: CudaProgram, grid, block, inputs, tmp_path, *, grids=()):
    """Run ``program`` on the CPU over ``grid`` (and every grid of ``grids``) from the flat ``inputs``.

    Returns one list of output arrays per grid, each launch starting from ``inputs``.
    """
    ctype = {8: "double", 4: "float"}
    main_c = ["int main(int argc, char** argv) {",
              "  long long gx = atoll(argv[1]), gy = atoll(argv[2]), gz = atoll(argv[3]);"]
    for i, a in enumerate(program.arrays):
        t = ctype[a.element_bytes]
        main_c += [f"  std::vector<{t}> a{i}({a.elements + a.offset});",
                   f'  {{ FILE* f = fopen("in{i}.bin", "rb"); fread(a{i}.data(), sizeof({t}), {a.elements + a.offset}, '
                   "f); fclose(f); }"]
    args = ", ".join(f"a{v}.data() + {program.arrays[v].offset}" if kind == "array" else f"({_CTYPES[kind]}){v!r}"
                     for kind, v in program.args)
    bx, by, bz = block
    main_c += [f"  blockDim = {{{bx}, {by}, {bz}}};", "  gridDim = {gx, gy, gz};",
               "  for (long long z = 0; z < gz; ++z) for (long long y = 0; y < gy; ++y) for (long long x = 0; x < gx; "
               "++x)",
               f"  for (long long tz = 0; tz < {bz}; ++tz) for (long long ty = 0; ty < {by}; ++ty) "
               f"for (long long tx = 0; tx < {bx}; ++tx) {{",
               "    blockIdx = {x, y, z}; threadIdx = {tx, ty, tz};", f"    ws_k({args});", "  }"]
    for i, a in enumerate(program.arrays):
        t = ctype[a.element_bytes]
        main_c.append(f'  {{ FILE* f = fopen("out{i}.bin", "wb"); fwrite(a{i}.data(), sizeof({t}), '
                      f"{a.elements + a.offset}, f); fclose(f); }}")
    main_c += ["  return 0;", "}"]
    cpp = tmp_path / "k.cpp"
    cpp.write_text(cpu_source(program) + "\n" + "\n".join(main_c) + "\n")
    exe = tmp_path / "k"
    subprocess.run(["g++", "-O1", "-std=c++17", "-o", str(exe), str(cpp)], check=True, capture_output=True)
    for i, x in enumerate(inputs):
        x.tofile(tmp_path / f"in{i}.bin")
    results = []
    for g in (grid, *grids):
        subprocess.run([str(exe), *map(str, g)], check=True, cwd=tmp_path)
        results.append([np.fromfile(tmp_path / f"out{i}.bin", dtype=x.dtype) for i, x in enumerate(inputs)])
    return results
