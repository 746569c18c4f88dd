"""What loads a ranked kernel and device again (:class:`Origin`), recorded in the files warpspeed exports and
checked when they are read back: the kernel's description, and whether two descriptions load the same kernel."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...application.resolve import resolve_device, resolve_kernel
from ...device import Device
from ...device.keys import KEYS_BY_NAME, value_text
from ...device.overrides import split_id
from ...errors import InputError
from ...kernel import Kernel
from ...kernels import is_kernel_file
from ...studies.ranking import kernel_content


@dataclass(frozen=True)
class Origin:
    """What loads a ranked kernel and device again, for the files warpspeed exports.

    Why: a :class:`~warpspeed.studies.ranking.Ranking` names its kernel and device for people
    (``star3d-r1`` for the 4-byte ``star:r=1,element_bytes=4`` too, a TOML kernel's ``name``, a changed
    device's id such as ``A100-SXM4-40GB+clock_GHz=1.23457GHz``, rounded), which need not load the same kernel
    or device.
    ``kernel``: what :func:`warpspeed.find_kernel` (``--kernel``) takes, a catalog name with its parameters or
    the absolute path of a kernel TOML file (None where no name or path loads the ranked kernel, e.g. a
    :class:`~warpspeed.Kernel` built in Python); ``kernel_description``: the kernel's TOML table
    (:func:`warpspeed.kernel_from_dict` builds it; its prose ``description`` left out), what a kernel given
    on reading must equal; ``device``: what :func:`warpspeed.device` takes, a built-in id or a device TOML
    path (None where neither loads it), with ``device_overrides`` (:meth:`warpspeed.Device.with_overrides`
    keys, values as text that reads back exactly)."""

    kernel: str | None
    kernel_description: dict
    device: str | None
    device_overrides: dict[str, str]

    def __hash__(self) -> int:
        """Hashable as a Ranking is (its tables hash as their JSON text)."""
        return hash(json.dumps([self.kernel, self.kernel_description, self.device, self.device_overrides],
                               sort_keys=True))

    def to_dict(self) -> dict:
        """The keys of a file's ``warpspeed`` object (docs/kernel-tuner.md)."""
        out: dict[str, Any] = {}
        if self.kernel is not None:
            out["kernel_spec"] = self.kernel
        out["kernel_description"] = self.kernel_description
        if self.device is not None:
            out["device_spec"] = self.device
            if self.device_overrides:
                out["device_overrides"] = dict(self.device_overrides)
        return out


def kernel_description(kernel: Kernel) -> dict:
    """The kernel's TOML table as JSON (its prose ``description`` left out), with the domain it was loaded for
    (the ranked one, not its file's): what :class:`Origin` records."""
    return json.loads(json.dumps({**kernel_content(kernel), "domain": list(kernel.domain)}, default=str))


NOT_COMPARED = ("domain", "registers")
"""Keys of a kernel description :func:`same_kernel` ignores: the domain (the file has its own) and the
registers (nvcc counts them differently between machines and versions; the rows carry those that ran,
``num_regs``)."""


def same_kernel(a: dict, b: dict) -> bool:
    """Two kernel descriptions load the same kernel (all but :data:`NOT_COMPARED` equal)."""
    return ({k: v for k, v in a.items() if k not in NOT_COMPARED}
            == {k: v for k, v in b.items() if k not in NOT_COMPARED})


def origin_of(given: Kernel | str | Path, kernel: Kernel, device: Device) -> Origin:
    """What loads ``kernel`` (resolved from ``given``) and ``device`` again (see :class:`Origin`)."""
    description = kernel_description(kernel)
    kernel_spec = _kernel_spec(given, kernel, description)
    device_spec, overrides = _device_origin(device)
    return Origin(kernel_spec, description, device_spec, overrides)


def _kernel_spec(given: Kernel | str | Path, kernel: Kernel, description: dict) -> str | None:
    """What loads ``kernel`` (resolved from ``given``, described by ``description``) again, or None."""
    if isinstance(given, str | Path):  # what loaded it: a catalog name, or a file (absolute: read from anywhere)
        return str(Path(given).resolve()) if is_kernel_file(str(given)) else str(given)
    # a Kernel: its name in the catalog, or its file, where either loads the same kernel
    files = [str(Path(kernel.source).resolve())] if is_kernel_file(kernel.source) else []
    for c in [kernel.name, *files]:
        try:
            if same_kernel(kernel_description(resolve_kernel(c, kernel.domain)), description):
                return c
        except InputError:
            continue
    return None


def _device_origin(device: Device) -> tuple[str | None, dict[str, str]]:
    """What loads ``device`` again (a built-in id or its file; None where neither does) and the overrides to
    apply there."""
    base, suffix = split_id(device.id)
    overrides = {}
    for key in suffix:
        if key.startswith("hit_rates."):
            _, curve, coef = key.split(".")
            overrides[key] = repr(float(getattr(getattr(device.hit_rates, curve), coef)))
        elif key in KEYS_BY_NAME:
            spec_ = KEYS_BY_NAME[key]
            overrides[key] = value_text(spec_, getattr(device, spec_.attr))
    loaded: dict[str, tuple[Device, dict[str, str]]] = {}
    for c in [base] + ([str(Path(device.file).resolve())] if device.file else []):
        try:
            plain = resolve_device(c)
            own = split_id(plain.id)[1]  # a file of changes has an id with suffixes of its own
            changes = {k: v for k, v in overrides.items() if own.get(k) != suffix[k]}
            loaded[c] = (plain.with_overrides(**changes) if changes else plain), changes
        except InputError:
            continue
    # the same device, its citations too (a file of changes over a built-in device: the file), else its values
    device_spec = next((c for c, (d, _) in loaded.items() if d == device), None) or next(
        (c for c, (d, _) in loaded.items() if _device_values(d) == _device_values(device)), None)
    return device_spec, {} if device_spec is None else loaded[device_spec][1]


def _device_values(device: Device) -> dict:
    """What a device's estimates depend on: every value and its id, not the citations or the file it came from."""
    return {k: v for k, v in device.to_dict().items() if k not in ("file", "sources")}
