"""What-if sweeps: vary one device key (e.g. the L2 size) and follow the best configuration.

For every value the device is overridden, the configuration space ranked, and the best configuration,
its performance and its limiter reported: "at which L2 size does the layer condition stop breaking?"
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..device import Device, override_kind
from ..errors import InputError
from ..kernel import Kernel
from ..model.inputs import device_given, kernel_for
from ..progress import Progress
from ..units import format_quantity
from .ranking import RankedResult, rank_on_devices


@dataclass(frozen=True)
class WhatIfPoint:
    """The best configuration on the device with ``key`` set to ``value`` (canonical unit of the key)."""

    key: str
    value: float
    device: str
    best: RankedResult

    def to_dict(self, kind: str) -> dict:
        return {"key": self.key, "value": self.value, "value_text": format_quantity(self.value, kind),
                "device": self.device, "best": self.best.data}


def override_value(key: str, value: float) -> float | str:
    """A swept value (SI units) as :meth:`Device.with_overrides` takes it: a time goes back with its unit (a bare
    number is refused as ambiguous), a size or count as a whole number."""
    kind = override_kind(key)
    if kind == "time":
        return f"{float(value)!r}s"
    return int(value) if kind in ("bytes", "count") else float(value)


def whatif(kernel: Kernel, device: Device, key: str, values: Iterable[float], *,
           threads: Iterable[int] = (1024,), folding: Iterable[Sequence[int]] = ((1, 1, 1),),
           domain: Sequence[int] | None = None, blocks=None, registers: int | None = None,
           jobs: int | None = None, executor=None, model: str | None = None,
           progress: Progress | None = None) -> list[WhatIfPoint]:
    """Rank the space on the device with ``key`` set to each value; the best per value (``model``: the
    performance model; ``progress(done, total)``: configurations over all values)."""
    k = kernel_for(kernel, domain)
    base = device_given(device)
    kind = override_kind(key)
    devices, used = [], []
    for v in values:
        value = int(v) if kind in ("bytes", "count") else float(v)
        if not math.isfinite(value) or value <= 0:
            raise InputError(f"what-if value {v!r} for '{key}' must be positive.")
        devices.append(base.with_overrides(**{key: override_value(key, value)}))
        used.append(float(value))
    # every value in one sweep: a configuration's counts are shared by the values that do not change them
    rankings = rank_on_devices(k, devices, threads, folding, blocks=blocks, registers=registers, jobs=jobs,
                               executor=executor, model=model, progress=progress)
    return [WhatIfPoint(key, value, r.device, r.best) for value, r in zip(used, rankings, strict=True)]
