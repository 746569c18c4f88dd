"""Nsight Compute (``ncu``) metrics: the counters that correspond to warpspeed's estimates, and a reader
for ncu's CSV export.

Export with ``ncu --csv --page raw --metrics <METRICS> ...``; ``--print-units base`` is best, but
auto-scaled units (``Kbyte``, ``usecond``, ``Msector``) are read too. The file has one header row
of column names, an optional row of units, then one row per profiled kernel launch.
"""

from __future__ import annotations

import csv
import io
import math
import statistics
from pathlib import Path

from .errors import InputError

__all__ = ["METRICS", "FP_METRICS", "read_ncu_csv", "select_launches", "metric"]

# warpspeed quantity -> ncu metric
METRICS = {
    "time": "gpu__time_duration.sum",  # kernel duration
    "cycles": "sm__cycles_elapsed.max",  # elapsed SM cycles of the slowest SM
    "l1_wavefronts": "l1tex__data_pipe_lsu_wavefronts.sum",  # L1 cycles (data-stage wavefronts) of the LSU
    "l1_load_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",  # sectors requested by loads
    "l1_store_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "l2_load_sectors": "lts__t_sectors_srcunit_tex_op_read.sum",  # L2 sectors read by L1 (L2 -> L1)
    "l2_store_sectors": "lts__t_sectors_srcunit_tex_op_write.sum",  # L1 -> L2 stores
    "dram_read_bytes": "dram__bytes_read.sum",
    "dram_write_bytes": "dram__bytes_write.sum",
    "warp_usage_threads": "smsp__thread_inst_executed_per_inst_executed.ratio",  # active threads per instruction
}
FP_METRICS = {  # thread-level FP instruction counts per precision: fma, add, mul
    "fp64": ("smsp__sass_thread_inst_executed_op_dfma_pred_on.sum",
             "smsp__sass_thread_inst_executed_op_dadd_pred_on.sum",
             "smsp__sass_thread_inst_executed_op_dmul_pred_on.sum"),
    "fp32": ("smsp__sass_thread_inst_executed_op_ffma_pred_on.sum",
             "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum",
             "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum"),
}

_BASES = {"byte": 1.0, "second": 1.0, "sector": 1.0, "cycle": 1.0, "inst": 1.0, "warp": 1.0, "request": 1.0,
          "wavefront": 1.0, "thread": 1.0, "": 1.0}
_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "n": 1e-9, "u": 1e-6, "m": 1e-3}
_SHORT = {"B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9}


def _unit_factor(unit: str, column: str) -> float:
    u = unit.strip()
    if u in _SHORT:
        return _SHORT[u]
    if "/" in u or u == "%":
        return 1.0  # ratios and rates are read as printed
    for prefix, factor in _PREFIX.items():
        base = u[len(prefix):] if u.startswith(prefix) else None
        if base is not None and base.rstrip("s") in _BASES:
            return factor * _BASES[base.rstrip("s")]
    raise InputError(f"ncu CSV column {column!r}: unknown unit {unit!r}; export with --print-units base.")


def _number(text: str) -> float | None:
    t = text.strip().replace(",", "")
    if t in ("", "n/a", "N/A") or t.startswith("(!)"):
        return None
    try:
        v = float(t)
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def read_ncu_csv(path: str | Path) -> list[dict]:
    """Rows of an ncu raw-page CSV: metric values in base units (bytes, seconds, counts) as floats,
    other columns (``Kernel Name``, ``Block Size``, ...) as text."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise InputError(f"cannot read ncu CSV {str(p)!r}: {e.strerror or e}.") from None
    # ncu prints "==PROF==" lines before the table when stdout was captured: skip to the header
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"') or line.startswith("ID,")), None)
    if start is None:
        raise InputError(f"{p}: no ncu CSV header (a row starting with \"ID\"); export with "
                         "ncu --csv --page raw.")
    rows = list(csv.reader(io.StringIO("\n".join(lines[start:]))))
    header, body = rows[0], [r for r in rows[1:] if any(c.strip() for c in r)]
    units = [""] * len(header)
    if body and body[0][0].strip() == "":  # the units row has an empty ID
        units, body = body[0], body[1:]
    out = []
    for r in body:
        if len(r) != len(header):
            raise InputError(f"{p}: a row has {len(r)} columns, the header {len(header)}.")
        row: dict = {}
        for name, unit, cell in zip(header, units, r, strict=True):
            if "__" in name:  # an ncu metric name
                v = _number(cell)
                row[name] = None if v is None else v * _unit_factor(unit, name)
            else:
                row[name] = cell
        out.append(row)
    if not out:
        raise InputError(f"{p}: the ncu CSV has no kernel rows.")
    return out


def select_launches(rows: list[dict], kernel: str | None = None) -> list[dict]:
    """The rows of one kernel: all rows when they share one kernel name, else those whose name contains
    ``kernel``."""
    names = sorted({r.get("Kernel Name", "") for r in rows})
    if kernel is not None:
        rows = [r for r in rows if kernel in r.get("Kernel Name", "")]
        if not rows:
            raise InputError(f"no ncu row has a kernel name containing {kernel!r}; the names are: "
                             f"{', '.join(names)}.")
    elif len(names) > 1:
        raise InputError(f"the ncu CSV holds several kernels ({', '.join(names)}); pick one with --ncu-kernel.")
    return rows


def metric(rows: list[dict], name: str) -> float | None:
    """Median of a metric over launches (warm-up and repeats of one kernel); None where ncu gave none."""
    values = [r[name] for r in rows if r.get(name) is not None]
    return statistics.median(values) if values else None
