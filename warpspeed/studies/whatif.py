"""What-if sweeps: vary one device key (e.g. the L2 size) and follow the best configuration.

For every value the device is overridden, the configuration space ranked, and the best configuration,
its performance and its limiter reported: "at which L2 size does the layer condition stop breaking?"
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..device import Device, override_kind
from ..device import device as get_device
from ..device.keys import KEYS_BY_NAME, parse_value
from ..errors import InputError
from ..kernel import Kernel
from ..model.estimate import resolve_kernel
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


def _typed_value(key: str, text: str) -> float:
    """One value as typed (a bound or a listed value), with its unit, checked against what a GPU has: an
    implausible bound is named as typed, not as a point of the sweep between the bounds."""
    return parse_value(KEYS_BY_NAME[key], text.strip(), "", label=f"--sweep {key}")


def sweep_values(text: str) -> tuple[str, list[float]]:
    """``KEY=START:STOP:N`` (N points, geometric when ``:log`` follows, else linear) or ``KEY=V1,V2,...``.

    Values may carry units (``l2_size=10MiB:160MiB:5:log``); they are returned in the key's canonical unit.
    """
    key, sep, spec = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise InputError(f"--sweep '{text}' is malformed: write KEY=START:STOP:N[:log] or KEY=V1,V2,...")
    kind = override_kind(key)
    if ":" in spec:
        parts = spec.split(":")
        if len(parts) not in (3, 4) or (len(parts) == 4 and parts[3] != "log") or not parts[2].strip().isdigit():
            raise InputError(f"--sweep '{text}': write KEY=START:STOP:N or KEY=START:STOP:N:log (N >= 2).")
        lo, hi = (_typed_value(key, p) for p in parts[:2])
        n = int(parts[2])
        if n < 2 or n > 200:
            raise InputError(f"--sweep '{text}': N must be between 2 and 200, got {n}.")
        if len(parts) == 4:
            if lo <= 0 or hi <= 0:
                raise InputError(f"--sweep '{text}': a log sweep needs positive bounds.")
            values = [lo * (hi / lo) ** (i / (n - 1)) for i in range(n)]
        else:
            values = [lo + (hi - lo) * i / (n - 1) for i in range(n)]
    else:
        texts = [p.strip() for p in spec.split(",") if p.strip()]
        values = [_typed_value(key, p) for p in texts]
        if not values:
            raise InputError(f"--sweep '{text}': no values.")
    if kind in ("bytes", "count"):
        values = [float(round(v)) for v in values]
    return key, list(dict.fromkeys(values))


def whatif(kernel: Kernel | str | Path, device: Device | str, key: str, values: Iterable[float], *,
           threads: Iterable[int] = (1024,), folding: Iterable[Sequence[int]] = ((1, 1, 1),),
           domain: Sequence[int] | None = None, blocks=None, registers: int | None = None,
           jobs: int | None = None, executor=None, model: str | None = None,
           progress: Progress | None = None) -> list[WhatIfPoint]:
    """Rank the space on the device with ``key`` set to each value; the best per value (``model``: the
    performance model; ``progress(done, total)``: configurations over all values)."""
    k = resolve_kernel(kernel, domain)
    base = get_device(device)
    kind = override_kind(key)
    devices, used = [], []
    for v in values:
        value = int(v) if kind in ("bytes", "count") else float(v)
        if not math.isfinite(value) or value <= 0:
            raise InputError(f"what-if value {v!r} for '{key}' must be positive.")
        # values are already in SI units; a time goes back with its unit (a bare number is refused as ambiguous)
        devices.append(base.with_overrides(**{key: f"{value!r}s" if kind == "time" else value}))
        used.append(float(value))
    # every value in one sweep: a configuration's counts are shared by the values that do not change them
    rankings = rank_on_devices(k, devices, threads, folding, blocks=blocks, registers=registers, jobs=jobs,
                               executor=executor, model=model, progress=progress)
    return [WhatIfPoint(key, value, r.device, r.best) for value, r in zip(used, rankings, strict=True)]
