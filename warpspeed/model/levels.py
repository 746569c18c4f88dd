"""The memory hierarchy as data: one :class:`MemoryLevel` per level, innermost first (:data:`LEVELS`).

A level says which of an estimate's volumes belong to it (and what each means), which of them add up to
its traffic, how Nsight Compute measures that traffic, and the device rates that bound it: the bandwidth
at which it moves bytes and the roofline's rate per unit of its cost. The performance models, rankings,
reports, plots, projections, measured runs and the measurement kit take the levels from here instead of
naming L1, L2 and DRAM themselves. A further level is one more entry here, the device keys its rates read,
and the stage that computes its volumes: the memory-side cache (``MSC``, AMD's Infinity Cache between the L2
and the DRAM) is the example, present only on a device that gives ``msc_size`` and ``msc_bw``
(:meth:`MemoryLevel.present`); its volumes come from the DRAM stage (:mod:`warpspeed.model.dram`).

A level a device lacks is left out of everything about an estimate on it: its volumes are not in the
estimate's ``volumes_B_per_lup`` (:func:`volume_keys`), its limiter not in the limits (its rate is None), and
the outputs show what is there (:func:`levels_in`), as they do the TLB-page limiter.

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
    bandwidth_GB_s: Callable[[Device], float | None]  # the bytes per ns the level moves at most (None: no level)
    # the roofline's rate per unit of cost (GB/s; L1: G warp-lup cycles); None where the device lacks the level
    rate: Callable[[Device, str], float | None]
    meaning: str  # what the roofline limit divides
    cycles_bound: bool = False  # the roofline cost is L1 cycles per warp-lup, not bytes
    optional: bool = False  # only some devices have it: present(device) says which

    @property
    def volume_keys(self) -> tuple[str, ...]:
        return tuple(k for k, _ in self.volumes)

    def present(self, device: Device) -> bool:
        """Whether ``device`` has this level (every device has the L1, the L2 and the DRAM)."""
        return not self.optional or self.bandwidth_GB_s(device) is not None

    def present_in(self, volumes: Mapping[str, float]) -> bool:
        """Whether ``volumes`` (an estimate's or a measurement's) hold this level's traffic."""
        return all(k in volumes for k in self.traffic_keys)

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
        rate=lambda d, precision: d.sm_count * d.clock_GHz * d.warp_size,
        meaning="SMs x clock x warp_size lups per warp / L1 cycles per warp-lup",
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
        "MSC",  # the memory-side cache (AMD's Infinity Cache): it receives the L2's misses and write-backs
        volumes=(("msc_load", "MSC->L2 load (L2 misses)"), ("msc_store", "L2->MSC store")),
        traffic_keys=("msc_load", "msc_store"),
        measured=(), ncu_traffic=(),  # no Nsight Compute metric: NVIDIA GPUs have no such level
        bandwidth_GB_s=lambda d: d.msc_bw_GB_s if d.msc_size_bytes is not None else None,
        rate=lambda d, precision: d.msc_bw_GB_s if d.msc_size_bytes is not None else None,
        meaning="MSC bandwidth / (MSC load + store) B/lup (only a device with msc_size and msc_bw)",
        optional=True),
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
MEASURED_LEVELS = tuple(lv for lv in LEVELS if lv.ncu_traffic)
"""The levels whose traffic Nsight Compute measures (L1, L2, DRAM): measured runs and their projections."""


def levels_of(device: Device) -> tuple[MemoryLevel, ...]:
    """The levels ``device`` has, innermost first."""
    return tuple(lv for lv in LEVELS if lv.present(device))


def levels_in(volumes: Mapping[str, float]) -> tuple[MemoryLevel, ...]:
    """The levels whose volumes ``volumes`` holds (an estimate's: the levels of its device), innermost first."""
    return tuple(lv for lv in LEVELS if lv.present_in(volumes))


def volume_keys(device: Device) -> tuple[str, ...]:
    """The volumes an estimate on ``device`` reports (:data:`VOLUME_KEYS` less those of levels it lacks)."""
    return tuple(k for lv in levels_of(device) for k in lv.volume_keys)


def level(name: str) -> MemoryLevel:
    """The level called ``name`` (a clear error for any other name)."""
    for lv in LEVELS:
        if lv.name == name:
            return lv
    raise InputError(f"unknown memory level {name!r}: valid are {', '.join(LEVEL_NAMES)}")


def traffic_B_per_lup(volumes: Mapping[str, float]) -> dict[str, float]:
    """The traffic in B/lup of every level ``volumes`` holds, innermost first."""
    return {lv.name: lv.traffic_B_per_lup(volumes) for lv in levels_in(volumes)}


def bandwidths_GB_s(device: Device) -> dict[str, float]:
    """The bandwidth in GB/s of every level ``device`` has, innermost first."""
    return {lv.name: lv.bandwidth_GB_s(device) for lv in levels_of(device)}  # type: ignore[misc]


__all__ = ["LEVELS", "LEVEL_NAMES", "MEASURED_LEVELS", "MEASURED_VOLUMES", "MemoryLevel", "VOLUME_KEYS",
           "VOLUME_LABELS", "bandwidths_GB_s", "level", "levels_in", "levels_of", "traffic_B_per_lup", "volume_keys"]
