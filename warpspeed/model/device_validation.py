"""How far the model data of the device an estimate was made on was checked: the device's family, whether its
hit-rate curves, L1 rule, latencies and memory parallelism were measured by this project, published by an outside
source or assumed from another family (``devices/families.toml``; :mod:`warpspeed.device.families`).

Every estimate carries it (``Estimate.device_validation``, JSON ``device_validation``), and so every ranking,
projection and comparison. Only a ``measured`` family was checked against measurements here; on any other the
answer is a first estimate: its headline says so and the configurations to measure widen
(:mod:`warpspeed.studies.confidence`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from ..device import Device
from ..device.families import KINDS, STATUSES, Family, device_family, families


@dataclass(frozen=True)
class DeviceValidation:
    """The validation of one device's model data: its ``family``, the family's ``status`` (the weakest of its
    kinds: ``measured`` / ``published`` / ``assumed``), the one-line ``validation`` of ``warpspeed devices``,
    the families its assumed data come from (``data_from``) and the GPUs the data it uses were measured or
    published on (``measured_on``; for assumed data, those of the family it is taken from)."""

    family: str
    status: str
    validation: str
    data_from: tuple[str, ...]
    measured_on: tuple[str, ...]

    @property
    def measured(self) -> bool:
        """Whether every kind of the family's model data was fitted to this project's measurements."""
        return self.status == "measured"

    def line(self, device: str, measure: int | None = None) -> str:
        """The headline line of an answer on an unmeasured device, with the number of configurations its
        ranking lists to measure where given; '' on a measured device (its headlines stay as they were)."""
        if self.measured:
            return ""
        then = f"; measure the {measure} configurations listed" if measure and measure > 1 else ""
        return (f"{device}: model data {self.validation}, never measured on {self.family} -- a first "
                f"estimate{then}")

    def to_dict(self) -> dict[str, Any]:
        return {"family": self.family, "status": self.status, "validation": self.validation,
                "data_from": list(self.data_from), "measured_on": list(self.measured_on)}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> DeviceValidation:
        if d["status"] not in STATUSES:
            raise KeyError(f"device_validation.status {d['status']!r}")
        return cls(str(d["family"]), str(d["status"]), str(d["validation"]), tuple(d["data_from"]),
                   tuple(d["measured_on"]))


@lru_cache(maxsize=64)
def family_validation(family: Family) -> DeviceValidation:
    """A family's validation: its status and line, and the GPUs behind the data it uses (an assumed kind
    followed to the family it is taken from)."""
    known = families()
    gpus: list[str] = []
    for kind in KINDS:
        origin, seen = family.origin(kind), {family.name}
        while origin.status == "assumed" and origin.data_from in known and origin.data_from not in seen:
            seen.add(origin.data_from)
            origin = known[origin.data_from].origin(kind)
        gpus += origin.measured_on
    return DeviceValidation(family.name, family.status, family.validation, family.assumed_from,
                            tuple(dict.fromkeys(gpus)))


def device_validation(device: Device) -> DeviceValidation:
    """The validation of ``device``'s model data (that of its family; an architecture the family file does not
    describe is all assumed)."""
    return family_validation(device_family(device))


__all__ = ["DeviceValidation", "device_validation", "family_validation"]
