"""The result of one estimate: the frozen, picklable :class:`Estimate` and each field's share of its volumes
(:class:`FieldVolumes`), with their JSON (``to_dict``, the layout of docs/outputs.md) and the way back
(``from_dict``, as a rank cache reads them). The pipeline that makes them is :mod:`warpspeed.model.estimate`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields

from .._version import __version__
from ..device import FrozenMap
from ..errors import InputError
from ..schemas import SCHEMA_VERSION
from .capacity import CacheReuse
from .device_validation import DeviceValidation
from .dram import MemorySideTraffic
from .launch import Occupancy
from .workload import Performance, Workload


@dataclass(frozen=True)
class FieldVolumes:
    """One field's share of the wave's volumes in B/lup (loads by cause, stores)."""

    name: str
    l2_load_compulsory: float
    dram_load_compulsory: float
    dram_layer_y_hit: float
    dram_layer_z_hit: float
    dram_store: float  # the field's unique stored sectors; the partial-store misses are in the total only

    def to_dict(self) -> dict:
        """The volumes by their field names, in their order (the name is the key this sits under)."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "name"}

    @classmethod
    def from_dict(cls, name: str, d: Mapping) -> FieldVolumes:
        return cls(name, **{f.name: d[f.name] for f in fields(cls) if f.name != "name"})


CAUSES = ("l1_capacity", "layer_y", "layer_z", "partial_stores")
"""The causes of reuse an estimate reports (its fields of these names, its JSON's ``causes``), in their order."""
MSC_CAUSES = {"msc_layer_y": "layer_y", "msc_layer_z": "layer_z", "msc_partial_stores": "partial_stores"}
"""The causes of reuse at a memory-side cache (JSON ``causes`` key -> :class:`MemorySideTraffic` field), after
:data:`CAUSES`: only an estimate on a device with one (MSC, warpspeed.model.levels) reports them."""


@dataclass(frozen=True)
class Estimate:
    """Inputs, occupancy, volumes by level / field / cause, the four roofline limiters and the prediction.

    ``workload`` is what the stages measured and every performance model reads (L1 cycles, volumes,
    resident warps, load runs, requests), so :func:`with_model` re-predicts without the stages;
    ``performance`` is the model's prediction (GLup/s, limiter, its limits and reasons).
    ``limiters_GLup_s`` are always the four roofline limits. ``wave_valid_lups`` are the valid cells of the
    wave whose volumes the DRAM stage counts (the volumes are per one of them).
    """

    kernel: str
    device: str
    block: tuple[int, int, int]
    folding: tuple[int, int, int]
    domain: tuple[int, int, int]
    grid: tuple[int, int, int]
    occupancy: Occupancy
    wave_blocks: int
    wave_valid_lups: int
    workload: Workload
    fields: tuple[FieldVolumes, ...]
    l1_capacity: CacheReuse  # L1 redundant loads -> L2 load capacity misses
    layer_y: CacheReuse  # L2 reuse from the y-layer thread set
    layer_z: CacheReuse  # L2 reuse from the z-layer thread set
    partial_stores: CacheReuse  # partially written sectors whose misses are read from DRAM (and written twice)
    limiters_GLup_s: Mapping[str, float]
    performance: Performance
    notes: tuple[str, ...] = field(default=())
    unvalidated: tuple[str, ...] = ()  # why the access pattern lies outside the validated ones (confidence.py)
    device_validation: DeviceValidation | None = None  # how far the device's model data was checked (estimate sets it)
    memory_side: MemorySideTraffic | None = None  # the memory-side cache's volumes and reuse (None: no such cache)

    @property
    def l1_cycles_per_warp_lup(self) -> float:
        return self.workload.l1_cycles_per_warp_lup

    @property
    def volumes_B_per_lup(self) -> Mapping[str, float]:
        """Each level's volumes (:data:`warpspeed.model.levels.VOLUME_KEYS`) in bytes per lup of the wave."""
        return self.workload.volumes_B_per_lup

    @property
    def performance_GLup_s(self) -> float:
        return self.performance.GLup_s

    @property
    def limiter(self) -> str:
        return self.performance.limiter

    @property
    def model(self) -> str:
        """The name of the performance model that predicted ``performance``."""
        return self.performance.model

    @property
    def time_s(self) -> float:
        """Seconds of one sweep over the domain at the predicted rate (0 for an infinite one)."""
        return sweep_time_s(math.prod(self.domain), self.performance_GLup_s)

    @property
    def limits_GLup_s(self) -> Mapping[str, float]:
        """The performance model's limits in GLup/s (inf: no load)."""
        return self.performance.limits_GLup_s

    @property
    def margin(self) -> tuple[str, float] | None:
        """The next limiter and how much faster it would allow (ratio >= 1), None if all others are inf."""
        limits = self.limits_GLup_s
        others = [(k, v) for k, v in limits.items() if k != self.limiter and math.isfinite(v)]
        if not others or self.performance_GLup_s <= 0:
            return None
        k, v = min(others, key=lambda kv: kv[1])
        return k, v / self.performance_GLup_s

    def to_dict(self) -> dict:
        """The estimate's JSON: the main keys first (infinite limiters are null), then further detail keys.

        docs/outputs.md describes every key; ``warpspeed.schemas.load("estimate")`` is its JSON Schema."""
        return {
            "kernel": self.kernel, "device": self.device, "block": list(self.block),
            "folding": list(self.folding), "domain": list(self.domain),
            "occupancy": {"blocks_per_sm": self.occupancy.blocks_per_sm, "wave_blocks": self.wave_blocks,
                          "limited_by": self.occupancy.limited_by},
            "l1_cycles_per_warp_lup": self.l1_cycles_per_warp_lup,
            "volumes_B_per_lup": dict(self.volumes_B_per_lup),
            "limiters_GLup_s": {k: _finite(v) for k, v in self.limiters_GLup_s.items()},
            "performance_GLup_s": self.performance_GLup_s, "limiter": self.limiter, "time_s": self.time_s,
            "grid": list(self.grid),
            "registers": self.occupancy.registers, "registers_source": self.occupancy.registers_source,
            "occupancy_limits": dict(self.occupancy.limits),
            "fields": {f.name: f.to_dict() for f in self.fields},
            "causes": {**{k: getattr(self, k).to_dict() for k in CAUSES}, **self._msc_causes()},
            "notes": list(self.notes), "unvalidated": list(self.unvalidated),
            "device_validation": None if self.device_validation is None else self.device_validation.to_dict(),
            "warpspeed_version": __version__,
            "model": self.model,
            "performance_model": self.performance.to_dict(),
            "wave_valid_lups": self.wave_valid_lups, "workload": self.workload.to_dict(),
            "schema_version": SCHEMA_VERSION,  # last: the keys above keep their places
        }

    def _msc_causes(self) -> dict[str, dict]:
        side = self.memory_side
        return {} if side is None else {k: getattr(side, f).to_dict() for k, f in MSC_CAUSES.items()}

    @classmethod
    def from_dict(cls, d: Mapping) -> Estimate:
        """The estimate back from its JSON (``to_dict``), e.g. from a rank cache: equal to the estimate that
        wrote it, and ``to_dict`` of the result is the same document (but for ``warpspeed_version``, which is
        always this version's). A document that is not an estimate's JSON (or one of an older layout) raises
        :class:`InputError` naming the missing key."""
        try:
            occ = Occupancy(d["occupancy"]["blocks_per_sm"], d["occupancy"]["limited_by"],
                            tuple(d["occupancy_limits"].items()), d["registers"], d["registers_source"])
            causes = {k: CacheReuse.from_dict(d["causes"][k]) for k in CAUSES}
            volumes = FrozenMap(d["volumes_B_per_lup"])
            side = None
            if "msc_load" in volumes:  # a device with a memory-side cache
                side = MemorySideTraffic(volumes["msc_load"], volumes["msc_store"],
                                         **{f: CacheReuse.from_dict(d["causes"][k]) for k, f in MSC_CAUSES.items()})
            return cls(
                kernel=d["kernel"], device=d["device"], block=tuple(d["block"]), folding=tuple(d["folding"]),
                domain=tuple(d["domain"]), grid=tuple(d["grid"]), occupancy=occ,
                wave_blocks=d["occupancy"]["wave_blocks"], wave_valid_lups=d["wave_valid_lups"],
                workload=Workload.from_dict(d["workload"], d["l1_cycles_per_warp_lup"], volumes),
                fields=tuple(FieldVolumes.from_dict(n, f) for n, f in d["fields"].items()),
                limiters_GLup_s=FrozenMap({k: math.inf if v is None else v for k, v in d["limiters_GLup_s"].items()}),
                performance=Performance.from_dict(d["performance_model"], d["performance_GLup_s"], d["limiter"]),
                notes=tuple(d["notes"]), unvalidated=tuple(d["unvalidated"]),
                device_validation=DeviceValidation.from_dict(d["device_validation"]), memory_side=side, **causes)
        except (KeyError, TypeError, AttributeError) as e:
            raise InputError(f"not an estimate document (docs/outputs.md): {type(e).__name__} {e}") from None


def _finite(v: float) -> float | None:
    return v if math.isfinite(v) else None


def sweep_time_s(valid_lups: int, GLup_s: float) -> float:
    """Seconds of one sweep over ``valid_lups`` cells at ``GLup_s`` (0 at an infinite rate, inf at none)."""
    return valid_lups / (GLup_s * 1e9) if 0 < GLup_s < math.inf else (0.0 if GLup_s == math.inf else math.inf)


__all__ = ["CAUSES", "Estimate", "MSC_CAUSES", "FieldVolumes", "sweep_time_s"]
