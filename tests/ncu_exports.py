"""Nsight Compute exports as ncu 2025.3 prints them (``--csv --page raw``), for the reader's tests and the CSV
fuzzing."""

from __future__ import annotations

from warpspeed.measurement.ncu import FP_METRICS, METRICS

M = METRICS
LUPS = 2048 * 1024 * 4  # the copy kernel's domain below
# columns and units as ncu 2025.3 prints them (metrics sorted by name, as ncu does)
COLUMNS = ["ID", "Process ID", "Process Name", "Host Name", "Kernel Name", "Context", "Stream", "Block Size",
           "Grid Size", "Device", "CC", M["dram_read_bytes"], M["dram_write_bytes"], M["time"], M["l1_wavefronts"],
           M["l1_load_sectors"], M["l1_store_sectors"], "launch__block_dim_x", "launch__grid_size",
           "launch__registers_per_thread", M["l2_load_sectors"], M["l2_store_sectors"], M["cycles"],
           "sm__throughput.avg.pct_of_peak_sustained_elapsed", *FP_METRICS["fp64"], M["warp_usage_threads"]]
UNITS = ["", "", "", "", "", "", "", "", "", "", "", "Kbyte", "Mbyte", "usecond", "", "sector", "Ksector", "block",
         "Kblock", "register/thread", "sector", "sector", "cycle", "%", "inst", "inst", "inst", "thread"]


def ncu_export(times_us=("48.10", "47.90", "48.00"), units=UNITS) -> str:
    """An ncu 2025.3 ``--csv --page raw`` export of copy (2048x1024x4, 16 B/lup): log lines, the header, the
    units row, one row per launch."""
    lines = ["==PROF== Connected to process 4242 (/usr/bin/python3.12)",
             '==PROF== Profiling "ws_copy_b256x1x1_f1x1x1" - 0: 0%....50%....100% - 9 passes',
             ",".join(f'"{c}"' for c in COLUMNS), ",".join(f'"{u}"' for u in units)]
    for i, t in enumerate(times_us):
        lines.append(",".join(f'"{c}"' for c in [
            i, 4242, "python3.12", "gpu-host", "ws_copy_b256x1x1_f1x1x1", 1, 7, "(256, 1, 1)", "(32768, 1, 1)", 0,
            "9.0", "67,108.86", "67.11", t, "524,288", "2,097,152", "2,097.15", 256, "32.77", 16, "2,097,152",
            "2,097,152", "87,912", "93.85", 0, 0, 0, 32]))
    lines.append("==PROF== Disconnected from process 4242")
    return "\n".join(lines) + "\n"
