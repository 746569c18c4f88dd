"""Measure kernels on a real NVIDIA GPU: CUDA programs, cupy timings, optional Nsight Compute counters.

Two code generators, chosen per configuration by ``code``:

* ``pystencils``: for kernels that come from pystencils / lbmpy (the plugin's catalog entries), the CUDA
  source pystencils itself generates, with its arithmetic, launched on arrays of the shape and layout the
  model was given. pystencils has no thread folding, so only folding (1, 1, 1) runs this way.
* ``warpspeed``: a CUDA kernel generated from the warpspeed :class:`~warpspeed.kernel.Kernel`, so that the
  GPU runs exactly the address stream the model analyses, for any folding. Thread ``(tidx, tidy, tidz)``
  handles the cells of its folding; every distinct folded load is issued once when one of its cells is
  valid, the loaded values are summed, and every store writes that sum. The arithmetic is therefore not
  the original kernel's (FP-bound kernels time differently), but the memory traffic is.

``auto`` (the default) takes pystencils' code where the kernel offers it and the folding is (1, 1, 1).
Either way the binary's register count is recorded and the estimates in ``validate`` use it.

Timing: ``warmup`` launches, then ``repeats`` launches each between two CUDA events; the median is
reported. With ``ncu=True`` every configuration runs once more, in a child process under
``ncu --csv --page raw`` with the metrics of :mod:`warpspeed.measurement.ncu`, and the counters are written per lattice
update.
"""

from __future__ import annotations

import csv
import datetime
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .._version import __version__
from ..device import Device
from ..errors import InputError
from ..expressions import THREAD_VARS, Add, Const, Expr, FloorDiv, Mod, Mul, Var
from ..frontends import GENERATED_CODE
from ..kernel import Kernel
from ..model.footprint import folded_instructions
from ..model.launch import check_linear
from ..model.launch import grid_of as launch_grid
from ..model.levels import LEVELS
from ..studies.space import Configuration
from .measurements import triple_text
from .ncu import METRICS, metric

_C_TYPES = {4: "float", 8: "double"}
#: Placeholder for the kernel function's name in a :class:`CudaProgram` source (see ``CudaProgram.named``).
NAME_TOKEN = "WS_KERNEL_NAME"
NCU_WARP_SIZE = 32  # lanes per warp of the GPUs ncu measures (NVIDIA): the model's warp-lup on those devices
ARG_TYPES = ("array", "int32", "int64", "uint32", "uint64", "float32", "float64")  # numpy type names
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


@dataclass(frozen=True)
class ArraySpec:
    """One device allocation: the kernel gets a pointer ``offset`` elements past its start."""

    name: str
    element_bytes: int
    elements: int
    offset: int = 0
    fill: float = 0.0  # initial value of every element (e.g. a finite LBM state)


@dataclass(frozen=True)
class CudaProgram:
    """A CUDA translation unit and how its kernel is called.

    ``source`` names the kernel function :data:`NAME_TOKEN` (``named`` puts in the real name); ``args`` is the
    kernel's argument list: ``("array", i)`` passes ``arrays[i]``, ``("int64", v)``, ``("float64", v)`` etc.
    a scalar of that numpy type. ``code`` says who generated the source (``warpspeed`` or ``pystencils``).
    """

    code: str
    source: str
    arrays: tuple[ArraySpec, ...]
    args: tuple[tuple[str, int | float], ...]
    options: tuple[str, ...] = ()  # NVRTC options, e.g. include paths

    def __post_init__(self):
        if NAME_TOKEN not in self.source:
            raise InputError(f"CUDA program ({self.code}): the source must name its kernel {NAME_TOKEN}.")
        for kind, v in self.args:
            if kind not in ARG_TYPES or (kind == "array" and not 0 <= int(v) < len(self.arrays)):
                raise InputError(f"CUDA program ({self.code}): argument ({kind!r}, {v!r}) is not one of "
                                 f"{ARG_TYPES} (arrays by index 0..{len(self.arrays) - 1}).")

    def named(self, name: str) -> str:
        return self.source.replace(NAME_TOKEN, name)


def _thread_lines(kernel: Kernel) -> list[str]:
    """The lines that give a thread its cell ``(tidx, tidy, tidz)``: one thread axis per coordinate; for a
    ``linear1d`` kernel the cells of the linearised domain in turn (``t`` past the last cell: no cell); for a
    ``gridstrided_linear1d`` one, the same in a loop over the cells a grid apart (closed in :func:`cuda_source`)."""
    if kernel.indexing == "linear3d":
        return ["    const long long tidx = (long long)blockIdx.x * blockDim.x + threadIdx.x;",
                "    const long long tidy = (long long)blockIdx.y * blockDim.y + threadIdx.y;",
                "    const long long tidz = (long long)blockIdx.z * blockDim.z + threadIdx.z;"]
    nx, ny, nz = kernel.domain
    first = "(long long)blockIdx.x * blockDim.x + threadIdx.x"
    loop = (f"    for (long long t = {first}; t < {nx * ny * nz}LL; t += (long long)gridDim.x * blockDim.x) {{"
            if kernel.indexing == "gridstrided_linear1d" else
            f"    const long long t = {first};\n    if (t < {nx * ny * nz}LL) {{")
    return [loop, f"    const long long tidx = t % {nx}LL, tidy = (t / {nx}LL) % {ny}LL, tidz = t / {nx * ny}LL;"]


def cuda_source(kernel: Kernel, folding: Sequence[int], name: str = NAME_TOKEN) -> str:
    """A CUDA kernel with the kernel's folded access pattern (see the module docstring); a grid-strided kernel's
    folding is its loop's iterations, given by the grid (:func:`grid_of`), and its body is one cell's."""
    fold = (1, 1, 1) if kernel.indexing != "linear3d" else tuple(int(f) for f in folding)
    for f in kernel.fields:
        if f.element_bytes not in _C_TYPES:
            raise InputError(f"field {f.name}: warpspeed measure generates 4 or 8 B elements, not "
                             f"{f.element_bytes} B.")
    acc_type = "double" if any(f.element_bytes == 8 for f in kernel.fields) else "float"
    params = ", ".join(f"{_C_TYPES[f.element_bytes]}* __restrict__ f{i}" for i, f in enumerate(kernel.fields))
    nx, ny, nz = kernel.domain
    origins = [(a, b, c) for c in range(fold[2]) for b in range(fold[1]) for a in range(fold[0])]
    lines = [_HELPERS, f'extern "C" __global__ void {name}({params}) {{', *_thread_lines(kernel)]
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
    if kernel.indexing != "linear3d":
        lines.append("    }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def generated_program(kernel: Kernel, folding: Sequence[int]) -> CudaProgram:
    """The ``warpspeed`` code of a kernel and folding: one array per field at the model's alignment offset."""
    arrays = tuple(ArraySpec(f.name, f.element_bytes, math.prod(f.shape), f.offset) for f in kernel.fields)
    return CudaProgram("warpspeed", cuda_source(kernel, folding), arrays,
                       tuple(("array", i) for i in range(len(arrays))))


def check_program(kernel: Kernel, program: CudaProgram) -> None:
    """Refuse a program whose arrays are not the model's fields (then the measurement would not compare)."""
    fields = {f.name: f for f in kernel.fields}
    for a in program.arrays:
        f = fields.get(a.name)
        if (f is None or f.element_bytes != a.element_bytes or math.prod(f.shape) != a.elements
                or f.offset != a.offset):
            model = "absent" if f is None else f"{math.prod(f.shape)} x {f.element_bytes} B at offset {f.offset}"
            raise InputError(f"{program.code} program of kernel '{kernel.name}': array {a.name!r} "
                             f"({a.elements} x {a.element_bytes} B at offset {a.offset}) does not match the model's "
                             f"field ({model}).")


def programs_for(kernel: Kernel, kernel_ref: str, configs: Sequence[Configuration],
                 code: str = "auto") -> dict[tuple[int, int, int], CudaProgram]:
    """The program per folding of ``configs`` for ``code``: ``auto``, a front end's own programs (its
    ``program_code``; :func:`warpspeed.frontends.program_codes`) or ``warpspeed`` (generated)."""
    from ..frontends import by_program_code, program_codes
    from ..kernels import find_program

    codes = program_codes()
    if code not in codes:
        raise InputError(f"--code {code!r}: choose one of {', '.join(codes)}.")
    if kernel.indexing != "linear3d":  # its program reads blockIdx.x, blockDim.x, threadIdx.x only
        for c in configs:
            check_linear(c.block, c.folding, kernel.indexing)
    foldings = sorted({tuple(c.folding) for c in configs})
    native = None
    if code != GENERATED_CODE:
        native = find_program(kernel_ref, domain=kernel.domain)
        front = by_program_code(code)
        if front is not None and (native is None or native.code != code):
            raise InputError(f"--code {code}: kernel '{kernel_ref}' has no {code} source (the {front.name} "
                             "plugin's catalog kernels have one); use --code warpspeed or auto.")
        if front is not None and not front.program_folds and foldings != [(1, 1, 1)]:
            raise InputError(f"--code {code}: {front.name} has no thread folding, but folding(s) "
                             f"{', '.join(triple_text(f) for f in foldings if f != (1, 1, 1))} were asked for; "
                             "use --code auto (warpspeed's code for folded configurations).")
        if native is not None:
            check_program(kernel, native)
    return {f: native if native is not None and f == (1, 1, 1) else generated_program(kernel, f)
            for f in foldings}


def grid_of(kernel: Kernel, c: Configuration) -> tuple[int, int, int]:
    """The grid a configuration launches: domain / (block x folding), rounded up; for a ``linear1d`` or
    ``gridstrided_linear1d`` kernel the cells / (N x iterations per thread)."""
    if kernel.indexing != "linear3d":
        return (-(-math.prod(kernel.domain) // (math.prod(c.block) * c.folding[0])), 1, 1)
    return launch_grid(kernel.domain, c.block, c.folding)


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


def _allocate(cupy, program: CudaProgram) -> list:
    """The program's arrays, filled; each view starts ``offset`` elements into its allocation."""
    out = []
    for a in program.arrays:
        dtype = cupy.float64 if a.element_bytes == 8 else cupy.float32
        base = cupy.full(a.elements + a.offset, a.fill, dtype=dtype)
        out.append(base[a.offset:])
    return out


def _arguments(program: CudaProgram, arrays: list) -> tuple:
    import numpy as np

    return tuple(arrays[int(v)] if kind == "array" else getattr(np, kind)(v)
                 for kind, v in program.args)


def time_configurations(kernel: Kernel, configs: Sequence[Configuration],
                        programs: Mapping[tuple[int, int, int], CudaProgram] | None = None, *, repeats: int = 20,
                        warmup: int = 3, sample_clock: bool = True) -> list[dict]:
    """Time every configuration on GPU 0: code, registers, median and minimum seconds per launch, and (with
    ``sample_clock``) ``sm_clock_MHz``: nvidia-smi's ``clocks.sm`` asked right after the configuration's last
    timed launch, so that it reads the clock under load, not the idle clock of a GPU before the sweep ("" if
    nvidia-smi is unavailable or gives no number).

    ``programs`` maps each folding to its program (default: warpspeed's generated code for every folding).
    Programs with the same arrays share one allocation. A configuration that does not compile or launch
    gets ``{"error": reason}`` and the sweep goes on.
    """
    cupy = _cupy()
    if programs is None:
        programs = {tuple(c.folding): generated_program(kernel, c.folding) for c in configs}
    smi = shutil.which("nvidia-smi") if sample_clock else None
    allocations: dict[tuple[ArraySpec, ...], list] = {}
    out = []
    for c in configs:
        program = programs[tuple(c.folding)]
        if program.arrays not in allocations:
            allocations[program.arrays] = _allocate(cupy, program)
        try:
            t = _time_one(cupy, kernel, c, program, allocations[program.arrays], repeats, warmup)
        except Exception as e:  # cupy's compile and launch errors (e.g. too many registers for the block)
            out.append({"error": f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"})
            continue
        if sample_clock:
            t["sm_clock_MHz"] = clock = sm_clock_MHz(smi) if smi else ""
            if not clock:
                smi = None  # no answer: do not ask (and maybe wait for a timeout) again in this sweep
        out.append(t)
    return out


def _smi_query(smi: str | None, fields: str, timeout_s: float = 30) -> list[str] | None:
    """The comma-separated answer of ``nvidia-smi --query-gpu=FIELDS`` for GPU 0; None if it fails."""
    if smi is None:
        return None
    try:
        r = subprocess.run([smi, f"--query-gpu={fields}", "--format=csv,noheader,nounits", "-i", "0"],
                           capture_output=True, text=True, timeout=timeout_s, check=True)
    except (subprocess.SubprocessError, OSError):
        return None
    lines = r.stdout.strip().splitlines()
    parts = [x.strip() for x in lines[0].split(",")] if lines else []
    return parts if len(parts) == len(fields.split(",")) else None


def _mhz(text: str) -> str:
    """A clock as nvidia-smi printed it, if it is a number of MHz ('' for ``[N/A]`` and the like)."""
    return text if text.isascii() and text.isdigit() else ""


def sm_clock_MHz(smi: str | None = None) -> str:
    """The SM clock of GPU 0 now, in MHz, as text ("" if nvidia-smi is not there or gives no number)."""
    answer = _smi_query(smi or shutil.which("nvidia-smi"), "clocks.sm", timeout_s=10)
    return "" if answer is None else _mhz(answer[0])


def _time_one(cupy, kernel: Kernel, c: Configuration, program: CudaProgram, arrays: list, repeats: int,
              warmup: int) -> dict:
    args = _arguments(program, arrays)
    name = kernel_name(kernel, c)
    fn = cupy.RawKernel(program.named(name), name, options=program.options)
    grid = grid_of(kernel, c)
    for _ in range(warmup):
        fn(grid, c.block, args)
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    times = []
    for _ in range(repeats):
        start.record()
        fn(grid, c.block, args)
        stop.record()
        stop.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, stop) / 1e3)
    return {"code": program.code, "registers": fn.num_regs, "time_s": statistics.median(times),
            "time_min_s": min(times), "repeats": repeats}


def gpu_info() -> dict:
    """Name, driver and memory clock of GPU 0 (empty strings where unknown).

    ``sm_clock_MHz`` is left empty: before the sweep the GPU idles at a low SM clock (345 MHz on an H100);
    :func:`time_configurations` samples the clock under load for each configuration.
    """
    cupy = _cupy()
    props = cupy.cuda.runtime.getDeviceProperties(0)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    info = {"gpu_name": name, "driver": str(cupy.cuda.runtime.driverGetVersion()), "sm_clock_MHz": "",
            "mem_clock_MHz": ""}
    answer = _smi_query(shutil.which("nvidia-smi"), "driver_version,clocks.sm,clocks.mem")
    if answer is not None:
        driver, _idle_sm, mem = answer
        info.update(driver=driver or info["driver"], mem_clock_MHz=_mhz(mem))
    return info


def profile_configurations(kernel: Kernel, kernel_ref: str, configs: Sequence[Configuration], code: str = "auto",
                           ncu: str = "ncu", timeout_s: int = 3600,
                           extra_metrics: Sequence[str] = ()) -> dict[Configuration, list[dict]]:
    """Run every configuration once under ``ncu`` (in a child process that rebuilds the kernel and its
    programs from ``kernel_ref`` and ``code``) and return the ncu rows of each: warpspeed's metrics
    (:data:`~warpspeed.measurement.ncu.METRICS`) and ``extra_metrics`` (checked by :func:`extra_metric_names`).

    ``--clock-control none`` keeps the GPU's own clocks, those of the timed runs; ncu still flushes the
    caches before every profiled launch.
    """
    from .ncu import read_ncu_csv

    exe = shutil.which(ncu)
    if exe is None:
        raise InputError(f"--ncu: the Nsight Compute CLI {ncu!r} is not on PATH.")
    with tempfile.TemporaryDirectory() as tmp:
        job = Path(tmp) / "job.json"
        job.write_text(json.dumps({"kernel": kernel_ref, "domain": list(kernel.domain), "code": code,
                                   "configs": [[list(c.block), list(c.folding)] for c in configs]}))
        out = Path(tmp) / "ncu.csv"
        metrics = list(dict.fromkeys([*METRICS.values(), *extra_metrics]))
        cmd = [exe, "--csv", "--page", "raw", "--print-units", "base", "--clock-control", "none", "--metrics",
               ",".join(metrics), "--kernel-name", "regex:^ws_", sys.executable, "-m",
               "warpspeed.measurement.measure", str(job)]
        with out.open("w") as fh:
            r = subprocess.run(cmd, stdout=fh, stderr=subprocess.PIPE, text=True, timeout=timeout_s,
                               env={**os.environ, "PYTHONUNBUFFERED": "1"})
        if r.returncode != 0:
            raise InputError(f"ncu failed (exit {r.returncode}): {r.stderr.strip()[-500:]}")
        rows = read_ncu_csv(out)
    return {c: [r for r in rows if _launch_name(r.get("Kernel Name", "")) == kernel_name(kernel, c)]
            for c in configs}


_METRIC_NAME = re.compile(r"[a-z][a-z0-9_]*__[a-z0-9_]+(\.[a-z0-9_]+)*")


def extra_metric_names(text: str) -> tuple[str, ...]:
    """The ncu metric names of a comma-separated list (``--ncu-metrics``), e.g.
    ``lts__t_requests_srcunit_tex_op_read.sum``; a clear error for anything that is not one (ncu itself
    names a metric the GPU does not have when it starts)."""
    names = tuple(dict.fromkeys(n.strip() for n in text.split(",")))  # each once, in the order given
    for n in names:
        if not _METRIC_NAME.fullmatch(n):
            raise InputError(f"--ncu-metrics: {n!r} is not an Nsight Compute metric name; give names such as "
                             "lts__t_requests_srcunit_tex_op_read.sum or smsp__cycles_active.avg, comma-separated "
                             "(ncu --query-metrics lists those of a GPU).")
    return names


EXTRA_COLUMNS = ("kernel", "block", "folding", "domain", "metric", "value")
"""Columns of ``--ncu-output``: one row per profiled configuration and extra metric, the value as ncu printed
it in base units (``--print-units base``; the median over the configuration's launches), empty where ncu
gave none."""


def extra_metric_rows(kernel: Kernel, kernel_ref: str, counters: dict[Configuration, list[dict]],
                      names: Sequence[str]) -> list[dict]:
    """The ``--ncu-output`` rows (:data:`EXTRA_COLUMNS`) of the profiled configurations."""
    out = []
    for c, rows in counters.items():
        for name in names:
            v = metric(rows, name) if rows else None
            out.append({"kernel": kernel_ref, "block": triple_text(c.block), "folding": triple_text(c.folding),
                        "domain": triple_text(kernel.domain), "metric": name, "value": "" if v is None else v})
    return out


def check_extra_output(path: str | Path, measurements: str | Path | None = None) -> bool:
    """Whether ``--ncu-output`` exists already (then with :data:`EXTRA_COLUMNS` as its header). Checked before
    anything is measured, with the folder it goes to and, where given, the ``measurements`` CSV it must not
    be: a sweep's counters are never lost to a file that refuses them after the sweep."""
    p = Path(path)
    if measurements is not None and p.resolve() == Path(measurements).resolve():
        raise InputError(f"--ncu-output {p} is the measurement CSV (-o); give the extra metrics a file of their "
                         "own.")
    if p.is_dir() or not p.parent.is_dir() or not os.access(p.parent, os.W_OK) \
            or (p.exists() and not os.access(p, os.W_OK)):
        raise InputError(f"--ncu-output {p}: cannot write there; give a file in an existing folder you can write "
                         "to.")
    if not (p.exists() and p.stat().st_size > 0):
        return False
    try:
        with p.open(newline="") as fh:
            header = next(csv.reader(fh), [])
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"--ncu-output {p}: cannot read it ({err}); give a new file or one it wrote.") from None
    if tuple(header) != EXTRA_COLUMNS:
        raise InputError(f"--ncu-output {p}: the file has other columns ({', '.join(header)}) than "
                         f"{', '.join(EXTRA_COLUMNS)}; write to a new file.")
    return True


def write_extra_metrics(path: str | Path, rows: Sequence[dict]) -> None:
    """Append ``--ncu-output`` rows to ``path`` (a header first in a new file)."""
    p = Path(path)
    exists = check_extra_output(p)
    with p.open("a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=EXTRA_COLUMNS, lineterminator="\n")
        if not exists:
            w.writeheader()
        w.writerows(rows)


def _launch_name(text: str) -> str:
    """The function name of an ncu 'Kernel Name' cell (which may carry a parameter list)."""
    return text.split("(", 1)[0].strip()


def counters_per_lup(rows: list[dict], lups: int) -> dict:
    """The measurement columns from ncu rows of one configuration (empty where a metric is missing)."""
    def per_lup(name: str, factor: float = 1.0):
        v = metric(rows, METRICS[name]) if rows else None
        return "" if v is None else v * factor / lups

    volumes = {column: per_lup(name, unit_bytes) for lv in LEVELS for column, name, unit_bytes in lv.measured}
    return {"l1_cycles_per_warp_lup": per_lup("l1_wavefronts", float(NCU_WARP_SIZE)), **volumes,
            "cycles": "" if not rows or metric(rows, METRICS["cycles"]) is None else metric(rows, METRICS["cycles"])}


def measurement_rows(kernel: Kernel, kernel_ref: str, device: Device | str, configs: Sequence[Configuration],
                     timings: Sequence[dict], info: dict, counters: dict | None = None) -> list[dict]:
    """Rows of the measurement CSV (:mod:`warpspeed.measurement.measurements`) from timings and optional ncu rows;
    configurations whose timing is an error get no row."""
    dev_id = device if isinstance(device, str) else (device.file or device.id)
    day = datetime.date.today().isoformat()
    lups = kernel.valid_lups
    out = []
    for c, t in zip(configs, timings, strict=True):
        if "error" in t:
            continue
        row = {"device": dev_id, **info, "kernel": kernel_ref, "block": triple_text(c.block),
               "folding": triple_text(c.folding), "domain": triple_text(kernel.domain), **t,
               "GLup_s": lups / t["time_s"] / 1e9, "date": day, "warpspeed_version": __version__}
        if counters is not None:
            row.update(counters_per_lup(counters.get(c, []), lups))
        out.append(row)
    return out


def _worker(job_file: str) -> None:
    """Child process under ncu: launch every configuration once (no warm-up: ncu flushes caches anyway)."""
    from ..application.resolve import resolve_kernel

    job = json.loads(Path(job_file).read_text())
    kernel = resolve_kernel(job["kernel"], job["domain"])
    configs = [Configuration(tuple(b), tuple(f)) for b, f in job["configs"]]
    programs = programs_for(kernel, job["kernel"], configs, job.get("code", "auto"))
    time_configurations(kernel, configs, programs, repeats=1, warmup=0, sample_clock=False)


if __name__ == "__main__":
    _worker(sys.argv[1])
