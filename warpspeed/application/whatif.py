"""What-if sweeps, the kernel and device given by name, file or object, and the sweep as the command line and
the page write it (``KEY=START:STOP:N[:log]`` or ``KEY=V1,V2,...``): read, resolved, then swept by
:func:`warpspeed.studies.whatif.whatif`."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from ..device import Device, override_kind
from ..device.keys import KEYS_BY_NAME, parse_value
from ..errors import InputError
from ..kernel import Kernel
from ..studies import whatif as _whatif
from ..studies.whatif import WhatIfPoint
from .resolve import resolve_device, resolve_kernel


def whatif(kernel: Kernel | str | Path, device: Device | str | Path, key: str, values: Iterable[float], *,
           domain: Sequence[int] | None = None, **options) -> list[WhatIfPoint]:
    """:func:`warpspeed.studies.whatif.whatif` (its options: threads, folding, blocks, registers, jobs, executor,
    model, progress) of a kernel and device given by name, file or object."""
    return _whatif.whatif(resolve_kernel(kernel, domain), resolve_device(device), key, values, domain=domain,
                          **options)


def sweep_device(device: Device | str | Path, overrides: Mapping[str, object] | None, key: str,
                 values: Sequence[float]) -> Device:
    """The device a sweep of ``key`` starts from: ``device`` with ``overrides`` (``--set``). Where the overrides
    alone are refused but hold with the swept key at its first value (one key of a pair given, the swept key the
    other: ``--set msc_bw=5TB/s --sweep msc_size=...`` on a device without a memory-side cache), that device;
    every point sets the key again. Otherwise the overrides' own error."""
    try:
        return resolve_device(device, overrides)
    except InputError as err:
        if not overrides or key in overrides or not values:
            raise
        try:
            return resolve_device(device, {**overrides, key: _whatif.override_value(key, values[0])})
        except InputError:
            raise err from None


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
