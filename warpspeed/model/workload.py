"""What every performance model reads and returns: the analysed launch (:class:`Workload`: volumes, L1 cycles,
occupancy, what the model stages measured) and the prediction (:class:`Performance`: GLup/s, the binding
limit, each limit and the reasons), and the protocol a model follows (:class:`PerformanceModel`). The models
themselves are :mod:`warpspeed.model.performance` (the roofline, and the registry by name) and
:mod:`warpspeed.model.latency`."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Protocol

from ..device import Device, FrozenMap
from ..kernel import Flops
from .levels import levels_in
from .roofline import roofline_limits


@dataclass(frozen=True)
class Workload:
    """One analysed launch: what every performance model needs, independent of the model."""

    precision: str
    flops: Flops
    l1_cycles_per_warp_lup: float
    volumes_B_per_lup: Mapping[str, float]  # the keys of levels.volume_keys(device)
    warps_per_sm: int  # resident warps per SM (blocks per SM x warps per block)
    lups_per_thread: int  # cells one thread updates (the folding product)
    load_run_bytes: float  # mean run of bytes one thread block loads (footprint.count_runs; 0: no loads)
    tlb_pages_per_lup: float = 0.0  # pages walked per lup (warpspeed.model.tlb; 0 without the TLB-page limiter)
    l2_load_requests_per_byte: float = 0.0  # L1 -> L2 requests per byte of L2 load (warpspeed.model.l2)
    l2_store_requests_per_byte: float = 0.0  # the same per byte of L2 store
    # resident warps per SM with a cell to update (Launch.active_warps_per_block; None: all of them): a warp
    # without one exits at once
    active_warps_per_sm: float | None = None

    @property
    def l2_requests_per_lup(self) -> float:
        """L1 -> L2 requests per lup: the L2 load and store volumes times their requests per byte."""
        v = self.volumes_B_per_lup
        return v["l2_load"] * self.l2_load_requests_per_byte + v["l2_store"] * self.l2_store_requests_per_byte

    def __post_init__(self) -> None:
        object.__setattr__(self, "volumes_B_per_lup", FrozenMap(self.volumes_B_per_lup))
        if self.active_warps_per_sm is None:
            object.__setattr__(self, "active_warps_per_sm", self.warps_per_sm)

    def to_dict(self) -> dict:
        """The workload's JSON less its L1 cycles and volumes (the estimate's JSON holds those at its top)."""
        return {"precision": self.precision, "flops": {"fma": self.flops.fma, "add": self.flops.add,
                                                       "mul": self.flops.mul, "other": self.flops.other},
                "warps_per_sm": self.warps_per_sm, "active_warps_per_sm": self.active_warps_per_sm,
                "lups_per_thread": self.lups_per_thread, "load_run_bytes": self.load_run_bytes,
                "tlb_pages_per_lup": self.tlb_pages_per_lup,
                "l2_load_requests_per_byte": self.l2_load_requests_per_byte,
                "l2_store_requests_per_byte": self.l2_store_requests_per_byte}

    @classmethod
    def from_dict(cls, d: Mapping, l1_cycles_per_warp_lup: float, volumes_B_per_lup: Mapping[str, float]) -> Workload:
        """Back from ``to_dict`` and the estimate's L1 cycles and volumes."""
        return cls(d["precision"], Flops(**d["flops"]), l1_cycles_per_warp_lup, volumes_B_per_lup,
                   warps_per_sm=d["warps_per_sm"], lups_per_thread=d["lups_per_thread"],
                   load_run_bytes=d["load_run_bytes"], tlb_pages_per_lup=d["tlb_pages_per_lup"],
                   l2_load_requests_per_byte=d["l2_load_requests_per_byte"],
                   l2_store_requests_per_byte=d["l2_store_requests_per_byte"],
                   active_warps_per_sm=d["active_warps_per_sm"])

    def costs(self) -> dict[str, float]:
        """The workload's use of each limiter's resource per lup (warpspeed.model.roofline.LIMITS)."""
        v = self.volumes_B_per_lup  # the levels of the device (a memory-side cache only where it has one)
        levels = {lv.name: lv.cost(v, self.l1_cycles_per_warp_lup) for lv in levels_in(v)}
        return {"FP": self.flops.instructions, **levels, "TLB": self.tlb_pages_per_lup}

    def roofline_GLup_s(self, device: Device) -> dict[str, float]:
        """The roofline limits of this workload on ``device``: FP, L1, L2, DRAM, and any further limiter the
        device has (warpspeed.model.roofline.LIMITS)."""
        return roofline_limits(device, self.precision, self.costs())


@dataclass(frozen=True)
class Performance:
    """A model's prediction: GLup/s, the binding limit, every limit (GLup/s; inf = no load) and why."""

    model: str
    GLup_s: float
    limiter: str
    limits_GLup_s: Mapping[str, float]
    detail: Mapping[str, object] = field(default_factory=dict)  # model-specific numbers (JSON-able)
    reasons: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "limits_GLup_s", FrozenMap(self.limits_GLup_s))
        object.__setattr__(self, "detail", FrozenMap(self.detail))

    def to_dict(self) -> dict:
        return {"name": self.model,
                "limits_GLup_s": {k: (v if math.isfinite(v) else None) for k, v in self.limits_GLup_s.items()},
                **dict(self.detail), "reasons": list(self.reasons)}

    @classmethod
    def from_dict(cls, d: Mapping, GLup_s: float, limiter: str) -> Performance:
        """Back from ``to_dict`` (the estimate's ``performance_model``) and the estimate's GLup/s and limiter."""
        detail = {k: v for k, v in d.items() if k not in ("name", "limits_GLup_s", "reasons")}
        return cls(d["name"], GLup_s, limiter,
                   {k: math.inf if v is None else v for k, v in d["limits_GLup_s"].items()}, detail,
                   tuple(d["reasons"]))


class PerformanceModel(Protocol):
    """The model seam: a name and a pure function of a workload and a device."""

    name: str

    def predict(self, workload: Workload, device: Device) -> Performance: ...
