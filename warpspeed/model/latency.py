"""The latency model: the roofline's limits, plus what memory parallelism and short DRAM runs cost.

Measured on an H100 and an H200, the roofline's absolute GLup/s are right for kernels with 64 resident
warps per SM and wide blocks, and up to 4x too high for LBM kernels (16-20 warps per SM) in narrow blocks.
Three effects explain the data with a few device-level numbers (``devices/latency.toml``):

- **Memory parallelism (Little's law).** A warp keeps about ``sectors_in_flight_per_warp`` 32 B sectors
  in flight (loads and stores together; fewer if one iteration of the warp moves fewer). Each sector is
  busy for its latency: the DRAM latency when the L2 misses, the L2 latency otherwise (stores wait for
  the L2). An SM therefore sustains ``warps x sectors in flight`` sectors per mean latency, whatever the
  bandwidths are:  t_latency = Σ sectors per lup x their latency / (SMs x warps x sectors per warp).
  Only warps with a cell count: a warp whose threads all lie beyond the domain exits at once.
- **Short DRAM runs.** Blocks whose rows are short (1-16 cells wide in x in an array-of-fields layout)
  scatter their DRAM reads and writes over many pages. Each run of R bytes a block loads (contiguous
  but for gaps inside the sectors it touches: ``footprint.count_runs``) costs some DRAM time besides its
  streaming; as bytes of streaming, O = ``dram_run_time`` x DRAM
  bandwidth (or ``dram_run_overhead`` where a device gives bytes). The DRAM streams at the efficiency
  e = 1 / (1 + (O / R)^k) of its bandwidth, k = ``dram_run_exponent``, for loads and stores alike
  (the stores of a stencil follow the same rows): t_DRAM = (DRAM load + DRAM store) / (e x bandwidth).
  With k = 1 this is R / (R + O), a fixed cost per run; the H100/H200 data fall off more slowly (the
  fitted k < 1: runs of the neighbouring blocks, in flight at the same time, share pages). A time per
  run, not bytes, is what the hardware fixes: the H200 streams 1.3x faster and loses 1.3x more bytes
  per run (its measured efficiencies at each run length match the H100's within a few percent).
- **L2 requests.** The L1 sends its misses (and its stores) to the L2 as requests, one per warp
  instruction and 128 B line, carrying that line's 1-4 sectors. Blocks one or two cells wide in x make one
  request per sector; on an H100 they saturate at about 140 G requests/s (3.6-3.9 TB/s of single
  sectors) while coalesced blocks move 8 TB/s in full-line requests. t_L2req = L2 requests per lup /
  ``l2_request_rate`` (a device without it has no request limit).

FP, L1, L2 (and any further roofline limiter the device has, e.g. the TLB or a memory-side cache, MSC) keep
the roofline's times. A memory-side cache's hits wait the DRAM latency (none of their own is known). The
times per lup combine as a 4-norm,
t = (Σ t_i^4)^(1/4): a single dominant limit gives its own time; two equal ones are 19 % slower than
either, as partly overlapped pipelines are. The limiter is the largest time.
"""

from __future__ import annotations

import math

from ..device import Device
from ..errors import InputError
from .levels import level
from .workload import Performance, Workload

_L2, _DRAM = level("L2"), level("DRAM")
OVERLAP_EXPONENT = 4  # the norm of the times; fitted with the parallelism values (3: 8 % worse rms, max: too fast)
SECTOR_BYTES = 32
ROOFLINE_INSTEAD = "roofline model"
"""What a device without the latency model's values can be estimated with (the message's last words; the command
line names its option, warpspeed.render.advice)."""


def _ns(seconds: float) -> float:
    return seconds * 1e9


def _time(limit_GLup_s: float) -> float:
    """ns per lup of a limit in GLup/s (0 for an unloaded resource)."""
    return 1.0 / limit_GLup_s if limit_GLup_s > 0 and math.isfinite(limit_GLup_s) else 0.0


def run_overhead_bytes(device: Device) -> float | None:
    """DRAM streaming lost per contiguous run, in bytes: the device's ``dram_run_overhead`` where it gives
    one, else ``dram_run_time`` x its DRAM bandwidth (None: neither)."""
    if device.dram_run_overhead_bytes is not None:
        return float(device.dram_run_overhead_bytes)
    if device.dram_run_time_s is None:
        return None
    return device.dram_run_time_s * device.dram_bw_GB_s * 1e9


def dram_efficiency(run_bytes: float, overhead_bytes: float, exponent: float) -> float:
    """Share of the DRAM bandwidth at which runs of ``run_bytes`` stream: 1 / (1 + (overhead / run)^exponent);
    1 without runs (no loads) or without an overhead."""
    if run_bytes <= 0 or overhead_bytes <= 0:
        return 1.0
    return 1.0 / (1.0 + (overhead_bytes / run_bytes) ** exponent)


class LatencyModel:
    """Roofline limits, a DRAM limit that pays for short runs, and a Little's-law limit; a 4-norm of times."""

    name = "latency"

    def predict(self, workload: Workload, device: Device) -> Performance:
        d = device
        missing = [k for k, v in (("l2_latency", d.l2_latency_s), ("dram_latency", d.dram_latency_s),
                                  ("sectors_in_flight_per_warp", d.sectors_in_flight_per_warp),
                                  ("dram_run_time (or dram_run_overhead)", run_overhead_bytes(d)),
                                  ("dram_run_exponent", d.dram_run_exponent)) if v is None]
        if missing:
            raise InputError(f"device {d.id} lacks {', '.join(missing)}, which the latency model needs: add them "
                             f"to its file (docs/device-format.md) or use the {ROOFLINE_INSTEAD}.")
        in_flight, overhead, exponent = d.sectors_in_flight_per_warp, run_overhead_bytes(d), d.dram_run_exponent
        assert in_flight is not None and overhead is not None and exponent is not None  # none is missing
        return self.predict_with(workload, d, in_flight, overhead, exponent, d.l2_requests_per_ns)

    def predict_with(self, workload: Workload, device: Device, sectors_in_flight_per_warp: float,
                     dram_run_overhead_bytes: float, dram_run_exponent: float = 1.0,
                     l2_requests_per_ns: float | None = None) -> Performance:
        """:meth:`predict` with the parallelism values given (``warpspeed calibrate`` fits them; no request
        limit without ``l2_requests_per_ns``)."""
        d = device
        v = workload.volumes_B_per_lup
        roof = workload.roofline_GLup_s(d)
        run = workload.load_run_bytes
        efficiency = dram_efficiency(run, dram_run_overhead_bytes, dram_run_exponent)
        t = {k: _time(limit) for k, limit in roof.items()}  # FP, L1, L2, DRAM and any further limiter
        l2_bytes = _L2.traffic_B_per_lup(v)
        t["DRAM"] = _DRAM.traffic_B_per_lup(v) / (efficiency * d.dram_bw_GB_s)  # B / (GB/s) = ns

        # Little's law over the L1 <-> L2 sectors of one lup; what misses in L2 waits for DRAM (a memory-side
        # cache's hits too: no latency of its own is known, so the L2's misses, msc_load, wait as long)
        dram_sectors = min(v.get("msc_load", v["dram_load"]), v["l2_load"]) / SECTOR_BYTES
        l2_sectors = l2_bytes / SECTOR_BYTES - dram_sectors
        sectors = l2_sectors + dram_sectors
        per_iteration = sectors * d.warp_size * workload.lups_per_thread  # sectors one warp moves per iteration
        in_flight = min(float(sectors_in_flight_per_warp), per_iteration)
        if sectors > 0:
            assert d.l2_latency_s is not None and d.dram_latency_s is not None, "the latency model needs both latencies"
            latency_ns = (l2_sectors * _ns(d.l2_latency_s) + dram_sectors * _ns(d.dram_latency_s)) / sectors
        else:
            latency_ns = 0.0
        warps = workload.active_warps_per_sm  # warps without a cell exit at once: nothing in flight
        assert warps is not None  # Workload.__post_init__ fills it in
        t["latency"] = sectors * latency_ns / (d.sm_count * warps * in_flight) if sectors > 0 and warps else 0.0
        requests = workload.l2_requests_per_lup
        if l2_requests_per_ns:  # requests per ns
            t["L2req"] = requests / l2_requests_per_ns

        total = sum(x ** OVERLAP_EXPONENT for x in t.values()) ** (1 / OVERLAP_EXPONENT)
        limits = {k: (1.0 / x if x > 0 else math.inf) for k, x in t.items()}
        limiter = max(t, key=lambda k: t[k])
        perf = 1.0 / total if total > 0 else math.inf
        bytes_in_flight = warps * in_flight * SECTOR_BYTES
        detail = {"dram_efficiency": efficiency, "load_run_bytes": run, "warps_per_sm": workload.warps_per_sm,
                  "active_warps_per_sm": warps,
                  "sectors_in_flight_per_warp": in_flight, "bytes_in_flight_per_sm": bytes_in_flight,
                  "mean_latency_ns": latency_ns, "overlap_exponent": OVERLAP_EXPONENT,
                  "l2_requests_per_lup": requests}
        reasons = _reasons(t, limiter, efficiency, run, dram_run_overhead_bytes, warps, workload.warps_per_sm,
                           in_flight, bytes_in_flight, latency_ns)
        if "L2req" in t and t["L2req"] >= 0.5 * max(t.values()) and requests > 0:
            per_request = l2_bytes / requests
            reasons += (f"L2 requests: the L1 sends {requests:.3g} requests per lup to the L2 ({per_request:.0f} B "
                        f"each: one per warp instruction and 128 B line) and the GPU serves "
                        f"{l2_requests_per_ns:.3g} per ns; wider blocks in x carry more sectors per request",)
        return Performance(self.name, perf, limiter, limits, detail, reasons)


def _kib(nbytes: float) -> str:
    return f"{nbytes / 1024:.3g} KiB" if nbytes >= 1024 else f"{nbytes:.0f} B"


def _reasons(t: dict[str, float], limiter: str, efficiency: float, run: float, overhead: float, warps: float,
             resident: int, in_flight: float, bytes_in_flight: float, latency_ns: float) -> tuple[str, ...]:
    """The latency and DRAM-run effects in the user's terms, where they cost at least half the largest time."""
    out = []
    largest = max(t.values())
    bandwidth = max((k for k in t if k != "latency"), key=lambda k: t[k])
    if t["latency"] >= 0.5 * largest and t["latency"] > 0:
        need = bytes_in_flight * t["latency"] / t[bandwidth] if t[bandwidth] > 0 else math.inf
        head = "latency-bound" if limiter == "latency" else "memory parallelism"
        tail = (f"the {bandwidth} limit ({1 / t[bandwidth]:.3g} GLup/s) needs {_kib(need)} per SM"
                if math.isfinite(need) else "no bandwidth limit applies")
        who = (f"{warps:.3g} warps/SM" if warps >= resident else
               f"{warps:.3g} of the {resident} resident warps/SM have cells and")
        out.append(f"{head}: {who} keep {_kib(bytes_in_flight)} in flight ({in_flight:.3g} sectors "
                   f"each) at a mean latency of {latency_ns:.0f} ns; {tail}")
    if efficiency < 0.9 and t["DRAM"] >= 0.5 * largest:
        out.append(f"DRAM traffic streams at {100 * efficiency:.0f} % of the DRAM bandwidth: blocks load contiguous "
                   f"runs of {run:.0f} B and each run costs about {overhead:.0f} B of streaming time")
    return tuple(out)


__all__ = ["LatencyModel", "OVERLAP_EXPONENT", "dram_efficiency", "run_overhead_bytes"]
