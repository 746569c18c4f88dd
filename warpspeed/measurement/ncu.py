"""Nsight Compute (``ncu``) metrics: the counters that correspond to warpspeed's estimates, and a reader
for ncu's CSV export.

Export with ``ncu --csv --page raw --metrics <METRICS> ...``; ``--print-units base`` is best, but
auto-scaled units (``Kbyte``, ``usecond``, ``Msector``) are read too. The file has one header row
of column names (the first is ``ID``), an optional row of units (its ``ID`` cell is empty), then one row
per profiled kernel launch. Lines before the header and ncu's log lines (``==PROF==``, ``==WARNING==``,
``==ERROR==``) are skipped.

Only the metrics warpspeed uses (the values of :data:`METRICS` and :data:`FP_METRICS`) are converted to base
units, and only their units are checked: a used metric must be a number (or empty, ``n/a`` or ``(!) ...``:
not available), in a unit of its kind (``byte`` with a prefix such as ``Kbyte``; ``second`` with a prefix
such as ``usecond``; counts such as ``sector``, ``Ksector``, ``cycle``, ``inst``; ratios as printed), that is
0 or, in base units, within its kind's :data:`RANGES` (times from 1 ns to 1e6 s; bytes and counts from 1 to
1e21; ratios from 1e-6 to 1e6). Every other column is kept as it stands: metric columns (names with ``__``, e.g.
``launch__block_dim_x`` in ``block`` or ``launch__registers_per_thread`` in ``register/thread``) as the number
printed, *not* scaled by their unit, or None where the cell is not a number; other columns (``Kernel Name``,
``Block Size``, ...) as text. Their units never stop the reader.
"""

from __future__ import annotations

import csv
import math
import statistics
from pathlib import Path

from ..errors import InputError, read_text

__all__ = ["METRICS", "FP_METRICS", "USED_METRICS", "RANGES", "read_ncu_csv", "select_launches", "metric"]

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


def _kind(name: str) -> str:
    if name == METRICS["time"]:
        return "time"
    if name.startswith("dram__bytes"):
        return "bytes"
    return "ratio" if name.endswith(".ratio") else "count"


#: The metrics warpspeed reads (ncu name -> kind: time, bytes, count or ratio); only their units are parsed.
USED_METRICS = {m: _kind(m) for m in [*METRICS.values(), *(m for ms in FP_METRICS.values() for m in ms)]}

_COUNTS = ("sector", "cycle", "inst", "warp", "request", "wavefront", "thread", "block", "transaction", "")
_BASES = {"time": ("second",), "bytes": ("byte",), "count": _COUNTS, "ratio": _COUNTS}
_PREFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "n": 1e-9, "u": 1e-6, "m": 1e-3}
_SHORT = {"time": {"s": 1.0, "ms": 1e-3, "us": 1e-6, "ns": 1e-9},
          "bytes": {"B": 1.0, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12}}
_EXAMPLES = {"time": "second, msecond, usecond, nsecond (or s, ms, us, ns), or empty (seconds)",
             "bytes": "byte, Kbyte, Mbyte, Gbyte (or B, KB, MB, GB), or empty (bytes)",
             "count": "empty, or a count such as sector, Ksector, cycle, Mcycle, inst, wavefront",
             "ratio": "empty, %, a ratio such as thread/inst, or a count such as thread"}
#: A used metric's value in base units is 0 or in its kind's range (a kernel time ncu resolves; whole counts
#: of bytes, sectors, cycles and instructions, at most 1e21): beyond, no kernel run, and the projection's
#: ratios would overflow.
RANGES = {"time": (1e-9, 1e6, "s"), "bytes": (1.0, 1e21, "B"), "count": (1.0, 1e21, ""), "ratio": (1e-6, 1e6, "")}
_NA = ("", "n/a", "N/A", "nan", "NaN", "-nan")
_LOG_PREFIXES = ("==PROF==", "==WARNING==", "==ERROR==", "==INFO==")


def _unit_factor(unit: str, kind: str) -> float | None:
    """The factor from ``unit`` to the base unit of a metric of ``kind``; None if the unit is not of that kind."""
    u = unit.strip()
    if u == "":
        return 1.0  # no unit (or no units row): the number is taken as printed, in the base unit
    if u in _SHORT.get(kind, {}):
        return _SHORT[kind][u]
    if kind == "ratio" and ("/" in u or u == "%"):
        return 1.0  # ratios and rates are read as printed
    for prefix, factor in _PREFIX.items():
        if u.startswith(prefix):
            base = u[len(prefix):]
            if len(base) > 1 and base.endswith("s") and base[:-1] in _BASES[kind]:
                base = base[:-1]  # plural
            if base != "" and base in _BASES[kind]:
                return factor
    return None


def _not_available(cell: str) -> bool:
    """ncu's way of saying "no value": an empty cell, ``n/a`` (and NaN spellings) or a ``(!)`` note."""
    t = cell.strip().replace(",", "")
    return t in _NA or t.startswith("(!)")


def _number(text: str) -> float | None:
    """A cell's number (thousands separators allowed); None where it is not one (empty, n/a, ``(!)`` notes)."""
    if _not_available(text):
        return None
    try:
        v = float(text.strip().replace(",", ""))
    except ValueError:
        return None
    return v if math.isfinite(v) else None


def _rows(p: Path) -> list[tuple[int, list[str]]]:
    """(line number, cells) of the table from its header on, without blank and ncu log lines."""
    text = read_text(p, "ncu CSV", "give the CSV that ncu --csv --page raw prints")
    # lines as an editor counts them (\n, \r\n or \r), not str.splitlines' (which also splits at \x0b, \x1c,
    # \u2028, ...: characters a cell may hold)
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID"') or line.startswith("ID,")), None)
    if start is None:
        raise InputError(f"{p}: no ncu CSV header (a row starting with \"ID\"); export with "
                         "ncu --csv --page raw.")
    out = []
    for i in range(start, len(lines)):
        line = lines[i]
        if not line.strip() or line.startswith(_LOG_PREFIXES):
            continue
        if "\0" in line:
            raise InputError(f"{p}, line {i + 1}: a NUL byte; give the CSV that ncu --csv --page raw prints.")
        try:
            cells = next(csv.reader([line]), [])
        except csv.Error as e:
            raise InputError(f"{p}, line {i + 1}: not a CSV row ({e}).") from None
        if any(c.strip() for c in cells):
            out.append((i + 1, cells))
    return out


def read_ncu_csv(path: str | Path) -> list[dict]:
    """Rows of an ncu raw-page CSV: the used metrics (:data:`USED_METRICS`) in base units (bytes, seconds,
    counts) as floats or None (not available); other metric columns as the number printed (unscaled) or None;
    other columns (``Kernel Name``, ``Block Size``, ...) as text. See the module docstring."""
    p = Path(path)
    rows = _rows(p)
    (header_line, header), body = rows[0], rows[1:]
    used = [name for name in header if name in USED_METRICS]
    for name in used:
        if header.count(name) > 1:
            raise InputError(f"{p}, line {header_line}: the column {name} appears {header.count(name)} times.")
    units, units_line = [""] * len(header), None
    if body and body[0][1][0].strip() == "":  # the units row has an empty ID
        (units_line, units), body = body[0], body[1:]
        if len(units) != len(header):
            raise InputError(f"{p}, line {units_line}: the units row has {len(units)} cells, the header (line "
                             f"{header_line}) {len(header)} columns; give the whole file ncu --csv --page raw "
                             "printed.")
    factors: dict[str, float] = {}
    for name, unit in zip(header, units, strict=True):
        if name in USED_METRICS:
            kind = USED_METRICS[name]
            f = _unit_factor(unit, kind)
            if f is None:
                raise InputError(f"{p}, line {units_line}: column {name}: unknown unit {unit!r} for a {kind} "
                                 f"metric; valid: {_EXAMPLES[kind]} (export with --print-units base).")
            factors[name] = f
    out = []
    for line, r in body:
        if len(r) != len(header):
            raise InputError(f"{p}, line {line}: the row has {len(r)} cells, the header (line {header_line}) "
                             f"{len(header)} columns; give one cell per column, as ncu --csv --page raw prints.")
        row: dict = {}
        for name, cell in zip(header, r, strict=True):
            if name in factors:
                row[name] = _used_value(cell, factors[name], p, line, name)
            elif "__" in name:  # another ncu metric: the number as printed
                row[name] = _number(cell)
            else:
                row[name] = cell
        out.append(row)
    if not out:
        raise InputError(f"{p}: the ncu CSV has no kernel rows (only the header"
                         f"{' and the units row' if units_line else ''}).")
    return out


def _used_value(cell: str, factor: float, p: Path, line: int, name: str) -> float | None:
    if _not_available(cell):
        return None
    v = _number(cell)
    if v is None or v < 0:
        raise InputError(f"{p}, line {line}: column {name} is {cell!r}; give a finite number >= 0 (or n/a).")
    scaled = v * factor
    lo, hi, unit = RANGES[USED_METRICS[name]]
    if scaled != 0 and not lo <= scaled <= hi:
        shown = f" ({scaled:.3g} {unit})" if factor != 1 else ""
        raise InputError(f"{p}, line {line}: column {name} is {cell!r}{shown}; give 0 or a value from {lo:g} to "
                         f"{hi:g}{' ' + unit if unit else ''} in base units (or n/a).")
    return scaled


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
