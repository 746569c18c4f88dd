"""The memory hierarchy as data: one :class:`MemoryLevel` per level, innermost first (:data:`LEVELS`).

A level says which of an estimate's volumes belong to it (and what each means), which of them add up to
its traffic, how Nsight Compute measures that traffic, and the device rates that bound it: the bandwidth
at which it moves bytes and the roofline's rate per unit of its cost. The performance models, rankings,
reports, plots, projections, measured runs and the measurement kit take the levels from here instead of
naming L1, L2 and DRAM themselves. A further level (a memory-side cache, say) is one more entry here, the
device keys its rates read, and the stage that computes its volumes.

L1 is the one level whose roofline cost is not bytes: its limit divides L1 cycles (wavefronts) per
warp-lup, which already hold the bank and line conflicts of the accesses (:mod:`warpspeed.model.l1`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..device import Device
from ..errors import InputError


@dataclass(frozen=True)
class MemoryLevel:
    """One level of the memory hierarchy and how warpspeed predicts, measures and rates its traffic."""

    name: str  # also the name of its roofline limiter
    volumes: tuple[tuple[str, str], ...]  # the estimate's volume keys of this level (B/lup) and their meaning
    traffic_keys: tuple[str, ...]  # the volumes whose sum is the level's traffic
    # measurement column, ncu metric (a key of warpspeed.measurement.ncu.METRICS), bytes per count
    measured: tuple[tuple[str, str, float], ...]
    ncu_traffic: tuple[tuple[str, float], ...]  # ncu metrics whose sum (x bytes per count) is the measured traffic
    bandwidth_GB_s: Callable[[Device], float]  # the bytes per ns the level moves at most
    rate: Callable[[Device, str], float]  # the roofline's rate per unit of cost (GB/s; L1: G warp-lup cycles)
    meaning: str  # what the roofline limit divides
    cycles_bound: bool = False  # the roofline cost is L1 cycles per warp-lup, not bytes

    @property
    def volume_keys(self) -> tuple[str, ...]:
        return tuple(k for k, _ in self.volumes)

    def traffic_B_per_lup(self, volumes: Mapping[str, float]) -> float:
        """The level's traffic in B/lup from an estimate's (or a measurement's) volumes."""
        return sum(volumes[k] for k in self.traffic_keys)

    def cost(self, volumes: Mapping[str, float], l1_cycles_per_warp_lup: float) -> float:
        """What the roofline limit of this level divides: L1 cycles per warp-lup, or the traffic in B/lup."""
        return l1_cycles_per_warp_lup if self.cycles_bound else self.traffic_B_per_lup(volumes)


LEVELS: tuple[MemoryLevel, ...] = (
    MemoryLevel(
        "L1",
        volumes=(("l1_load", "L1 requests (no L1 hit)"),),
        traffic_keys=("l1_load", "l2_store"),  # loads requested, and the stores that pass through to the L2
        measured=(("l1_load", "l1_load_sectors", 32.0),),
        ncu_traffic=(("l1_load_sectors", 32.0), ("l1_store_sectors", 32.0)),
        bandwidth_GB_s=lambda d: d.sm_count * d.clock_GHz * d.l1_bytes_per_cycle,
        rate=lambda d, precision: d.sm_count * d.clock_GHz * 32,
        meaning="SMs x clock x 32 lups per warp / L1 cycles per warp-lup",
        cycles_bound=True),
    MemoryLevel(
        "L2",
        volumes=(("l2_load_compulsory", "L2->L1 load, block footprints"), ("l2_load", "L2->L1 load"),
                 ("l2_store", "L1->L2 store")),
        traffic_keys=("l2_load", "l2_store"),
        measured=(("l2_load", "l2_load_sectors", 32.0), ("l2_store", "l2_store_sectors", 32.0)),
        ncu_traffic=(("l2_load_sectors", 32.0), ("l2_store_sectors", 32.0)),
        bandwidth_GB_s=lambda d: d.l2_bw_GB_s,
        rate=lambda d, precision: d.l2_bw_GB_s,
        meaning="L2 bandwidth / (L2 load + store) B/lup"),
    MemoryLevel(
        "DRAM",
        volumes=(("dram_load_compulsory", "DRAM->L2 load, wave footprint"), ("dram_load", "DRAM->L2 load"),
                 ("dram_store", "L2->DRAM store")),
        traffic_keys=("dram_load", "dram_store"),
        measured=(("dram_load", "dram_read_bytes", 1.0), ("dram_store", "dram_write_bytes", 1.0)),
        ncu_traffic=(("dram_read_bytes", 1.0), ("dram_write_bytes", 1.0)),
        bandwidth_GB_s=lambda d: d.dram_bw_GB_s,
        rate=lambda d, precision: d.dram_bw_GB_s,
        meaning="DRAM bandwidth / (DRAM load + store) B/lup"),
)
LEVEL_NAMES = tuple(lv.name for lv in LEVELS)
VOLUME_KEYS = tuple(k for lv in LEVELS for k in lv.volume_keys)
"""Every volume an estimate reports, in B/lup, level by level."""
VOLUME_LABELS = {k: label for lv in LEVELS for k, label in lv.volumes}
MEASURED_VOLUMES = tuple(col for lv in LEVELS for col, _, _ in lv.measured)
"""The volume columns of a measurement (B/lup), level by level."""


def level(name: str) -> MemoryLevel:
    """The level called ``name`` (a clear error for any other name)."""
    for lv in LEVELS:
        if lv.name == name:
            return lv
    raise InputError(f"unknown memory level {name!r}: valid are {', '.join(LEVEL_NAMES)}")


def traffic_B_per_lup(volumes: Mapping[str, float]) -> dict[str, float]:
    """Every level's traffic in B/lup, innermost first."""
    return {lv.name: lv.traffic_B_per_lup(volumes) for lv in LEVELS}


def bandwidths_GB_s(device: Device) -> dict[str, float]:
    """Every level's bandwidth on ``device`` in GB/s, innermost first."""
    return {lv.name: lv.bandwidth_GB_s(device) for lv in LEVELS}


__all__ = ["LEVELS", "LEVEL_NAMES", "MEASURED_VOLUMES", "MemoryLevel", "VOLUME_KEYS", "VOLUME_LABELS",
           "bandwidths_GB_s", "level", "traffic_B_per_lup"]
