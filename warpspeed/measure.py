"""Measure kernels on a real NVIDIA GPU: generated CUDA, cupy timings, optional Nsight Compute counters.

The CUDA kernel is generated from the warpspeed :class:`~warpspeed.kernel.Kernel` itself, so the GPU runs
exactly the address stream the model analyses (for pystencils / lbmpy kernels: the accesses that
``warpspeed_pystencils.describe`` extracted). Thread ``(tidx, tidy, tidz)`` handles the cells of its
folding; every distinct folded load is issued once when one of its cells is valid, the loaded values are
summed, and every store writes that sum. The arithmetic is therefore not the original kernel's (FP-bound
kernels time differently), but the memory traffic is; the binary's register count is recorded and the
estimates in ``validate`` use it.

Timing: ``warmup`` launches, then ``repeats`` launches each between two CUDA events; the median is
reported. With ``ncu=True`` the same launches run once more under ``ncu --csv --page raw`` with the
metrics of :mod:`warpspeed.ncu`, and the counters are written per lattice update.
"""

from __future__ import annotations

import datetime
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from . import __version__
from .device import Device
from .errors import InputError
from .expressions import THREAD_VARS, Add, Const, Expr, FloorDiv, Mod, Mul, Var
from .footprint import folded_instructions
from .kernel import Kernel
from .measurements import triple_text
from .ncu import METRICS, metric
from .space import Configuration

_C_TYPES = {4: "float", 8: "double"}
_HELPERS = """
__device__ __forceinline__ long long ws_floordiv(long long a, long long d) {
    long long q = a / d; return (a % d != 0 && a < 0) ? q - 1 : q;
}
__device__ __forceinline__ long long ws_mod(long long a, long long d) {
    long long r = a % d; return r < 0 ? r + d : r;
}
"""


def c_expr(e: Expr) -> str:
    """C text of an index expression (64-bit, floor division and non-negative modulo as in the model)."""
    if isinstance(e, Const):
        return f"{e.value}LL"
    if isinstance(e, Var):
        if e.name not in THREAD_VARS:
            raise InputError(f"cannot generate CUDA for variable {e.name!r}; only {', '.join(THREAD_VARS)}.")
        return e.name
    if isinstance(e, Add):
        return "(" + " + ".join(c_expr(t) for t in e.terms) + ")" if e.terms else "0LL"
    if isinstance(e, Mul):
        return f"({e.factor}LL * {c_expr(e.expr)})"
    if isinstance(e, FloorDiv):
        return f"ws_floordiv({c_expr(e.expr)}, {e.divisor}LL)"
    if isinstance(e, Mod):
        return f"ws_mod({c_expr(e.expr)}, {e.divisor}LL)"
    raise InputError(f"cannot generate CUDA for expression node {type(e).__name__}.")


def kernel_name(kernel: Kernel, c: Configuration) -> str:
    safe = "".join(ch if ch.isalnum() else "_" for ch in kernel.name)
    return f"ws_{safe}_{triple_text(c.block)}_{triple_text(c.folding)}"


def cuda_source(kernel: Kernel, folding: Sequence[int], name: str) -> str:
    """A CUDA kernel with the kernel's folded access pattern (see the module docstring)."""
    fold = tuple(int(f) for f in folding)
    for f in kernel.fields:
        if f.element_bytes not in _C_TYPES:
            raise InputError(f"field {f.name}: warpspeed measure generates 4 or 8 B elements, not "
                             f"{f.element_bytes} B.")
    acc_type = "double" if any(f.element_bytes == 8 for f in kernel.fields) else "float"
    params = ", ".join(f"{_C_TYPES[f.element_bytes]}* __restrict__ f{i}" for i, f in enumerate(kernel.fields))
    nx, ny, nz = kernel.domain
    origins = [(a, b, c) for c in range(fold[2]) for b in range(fold[1]) for a in range(fold[0])]
    lines = [_HELPERS, f'extern "C" __global__ void {name}({params}) {{',
             "    const long long tidx = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
             "    const long long tidy = (long long)blockIdx.y * blockDim.y + threadIdx.y;",
             "    const long long tidz = (long long)blockIdx.z * blockDim.z + threadIdx.z;"]
    for j, (a, b, c) in enumerate(origins):
        lines.append(f"    const bool v{j} = {fold[0]}LL * tidx + {a} < {nx}LL && {fold[1]}LL * tidy + {b} < {ny}LL"
                     f" && {fold[2]}LL * tidz + {c} < {nz}LL;")
    lines.append(f"    {acc_type} acc = 0;")
    instrs = folded_instructions(kernel, fold)
    index = {o: j for j, o in enumerate(origins)}
    for ins in instrs:
        cond = " || ".join(f"v{index[o]}" for o in ins.origins)
        if not ins.store:
            lines.append(f"    if ({cond}) acc += f{ins.field}[{c_expr(ins.thread_expr)}];")
    for ins in instrs:
        cond = " || ".join(f"v{index[o]}" for o in ins.origins)
        if ins.store:
            ctype = _C_TYPES[kernel.fields[ins.field].element_bytes]
            lines.append(f"    if ({cond}) f{ins.field}[{c_expr(ins.thread_expr)}] = ({ctype})acc;")
    lines.append("}")
    return "\n".join(lines) + "\n"


def grid_of(kernel: Kernel, c: Configuration) -> tuple[int, int, int]:
    return tuple(-(-n // (b * f)) for n, b, f in zip(kernel.domain, c.block, c.folding, strict=True))


# ------------------------------------------------------------------------------------------------ running


def _cupy():
    try:
        import cupy
    except ImportError:
        raise InputError("warpspeed measure needs cupy and an NVIDIA GPU (pip install cupy-cuda12x); "
                         "validate and calibrate work on measurement files without one.") from None
    try:
        cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # cupy raises its own CUDARuntimeError when there is no GPU
        raise InputError(f"warpspeed measure: no usable CUDA GPU ({e}).") from None
    return cupy


def _arrays(cupy, kernel: Kernel):
    """One zeroed allocation per field; the pointer passed is ``offset`` elements in (the model's alignment)."""
    out = []
    for f in kernel.fields:
        dtype = cupy.float64 if f.element_bytes == 8 else cupy.float32
        base = cupy.zeros(math.prod(f.shape) + f.offset, dtype=dtype)
        out.append(base[f.offset:])
    return out


def time_configurations(kernel: Kernel, configs: Sequence[Configuration], *, repeats: int = 20,
                        warmup: int = 3) -> list[dict]:
    """Time every configuration on GPU 0: registers, median and minimum seconds per launch."""
    cupy = _cupy()
    arrays = _arrays(cupy, kernel)
    out = []
    for c in configs:
        name = kernel_name(kernel, c)
        fn = cupy.RawKernel(cuda_source(kernel, c.folding, name), name, options=("-O3",))
        grid = grid_of(kernel, c)
        for _ in range(warmup):
            fn(grid, c.block, tuple(arrays))
        start, stop = cupy.cuda.Event(), cupy.cuda.Event()
        times = []
        for _ in range(repeats):
            start.record()
            fn(grid, c.block, tuple(arrays))
            stop.record()
            stop.synchronize()
            times.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3)
        out.append({"registers": fn.num_regs, "time_s": statistics.median(times), "time_min_s": min(times),
                    "repeats": repeats})
    return out


def gpu_info() -> dict:
    """Name, driver and current clocks of GPU 0 (empty strings where unknown)."""
    cupy = _cupy()
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    info = {"gpu_name": name, "driver": str(cupy.cuda.runtime.driverGetVersion()), "sm_clock_MHz": "",
            "mem_clock_MHz": ""}
    smi = shutil.which("nvidia-smi")
    if smi:
        try:
            r = subprocess.run([smi, "--query-gpu=driver_version,clocks.sm,clocks.mem", "--format=csv,noheader,nounits",
                                "-i", "0"], capture_output=True, text=True, timeout=30, check=True)
            driver, sm, mem = (x.strip() for x in r.stdout.strip().split(","))
            info.update(driver=driver, sm_clock_MHz=sm, mem_clock_MHz=mem)
        except (subprocess.SubprocessError, ValueError, OSError):
            pass
    return info


def profile_configurations(kernel: Kernel, kernel_ref: str, configs: Sequence[Configuration],
                           ncu: str = "ncu", timeout_s: int = 3600) -> dict[Configuration, list[dict]]:
    """Run every configuration under ``ncu`` (in a child process that rebuilds the kernel from
    ``kernel_ref``) and return the ncu rows of each."""
    from .ncu import read_ncu_csv

    exe = shutil.which(ncu)
    if exe is None:
        raise InputError(f"--ncu: the Nsight Compute CLI {ncu!r} is not on PATH.")
    with tempfile.TemporaryDirectory() as tmp:
        job = Path(tmp) / "job.json"
        job.write_text(json.dumps({"kernel": kernel_ref, "domain": list(kernel.domain),
                                   "configs": [[list(c.block), list(c.folding)] for c in configs]}))
        out = Path(tmp) / "ncu.csv"
        cmd = [exe, "--csv", "--page", "raw", "--print-units", "base", "--metrics", ",".join(METRICS.values()),
               "--kernel-name", "regex:^ws_", sys.executable, "-m", "warpspeed.measure", str(job)]
        with out.open("w") as fh:
            r = subprocess.run(cmd, stdout=fh, stderr=subprocess.PIPE, text=True, timeout=timeout_s,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
        if r.returncode != 0:
            raise InputError(f"ncu failed (exit {r.returncode}): {r.stderr.strip()[-500:]}")
        rows = read_ncu_csv(out)
    return {c: [r for r in rows if r.get("Kernel Name", "").startswith(kernel_name(kernel, c))] for c in configs}


def counters_per_lup(rows: list[dict], lups: int) -> dict:
    """The measurement columns from ncu rows of one configuration (empty where a metric is missing)."""
    def per_lup(name: str, factor: float = 1.0):
        v = metric(rows, METRICS[name]) if rows else None
        return "" if v is None else v * factor / lups

    return {"l1_cycles_per_warp_lup": per_lup("l1_wavefronts", 32.0), "l1_load": per_lup("l1_load_sectors", 32.0),
            "l2_load": per_lup("l2_load_sectors", 32.0), "l2_store": per_lup("l2_store_sectors", 32.0),
            "dram_load": per_lup("dram_read_bytes"), "dram_store": per_lup("dram_write_bytes"),
            "cycles": "" if not rows or metric(rows, METRICS["cycles"]) is None else metric(rows, METRICS["cycles"])}


def measurement_rows(kernel: Kernel, kernel_ref: str, device: Device | str, configs: Sequence[Configuration],
                     timings: Sequence[dict], info: dict, counters: dict | None = None) -> list[dict]:
    """Rows of the measurement CSV (:mod:`warpspeed.measurements`) from timings and optional ncu rows."""
    dev_id = device if isinstance(device, str) else (device.file or device.id)
    day = datetime.date.today().isoformat()
    lups = kernel.valid_lups
    out = []
    for c, t in zip(configs, timings, strict=True):
        row = {"device": dev_id, **info, "kernel": kernel_ref, "block": triple_text(c.block),
               "folding": triple_text(c.folding), "domain": triple_text(kernel.domain), **t,
               "GLup_s": lups / t["time_s"] / 1e9, "date": day, "warpspeed_version": __version__}
        if counters is not None:
            row.update(counters_per_lup(counters.get(c, []), lups))
        out.append(row)
    return out


def _worker(job_file: str) -> None:
    """Child process under ncu: launch every configuration once (after one warm-up launch)."""
    from .estimate import resolve_kernel

    job = json.loads(Path(job_file).read_text())
    kernel = resolve_kernel(job["kernel"], job["domain"])
    configs = [Configuration(tuple(b), tuple(f)) for b, f in job["configs"]]
    time_configurations(kernel, configs, repeats=1, warmup=1)


if __name__ == "__main__":
    _worker(sys.argv[1])
