"""The entry point :func:`device`: a shipped device by id (or a unique prefix), a device file by path, or a
:class:`Device` as it is; each with optional overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..units import shown
from .description import Device
from .files import load_device_file, shipped_device
from .shipped import device_ids, looks_like_path

__all__ = ["device", "device_ids", "looks_like_path"]


def device(id_or_path: str | Path | Device, **overrides: Any) -> Device:
    """A device by built-in id (case-insensitive; a unique prefix such as ``"H100-SXM"`` works), by the
    path of a TOML file, or a :class:`Device`; ``overrides`` go through :meth:`Device.with_overrides`.

    An id with override suffixes, as produced by :meth:`Device.with_overrides`
    (``"A100-SXM4-40GB+l2_size=80MiB"``), is rebuilt from the built-in device.
    """
    if isinstance(id_or_path, Device):
        dev = id_or_path
    elif isinstance(id_or_path, Path) or (isinstance(id_or_path, str) and looks_like_path(id_or_path)):
        dev = load_device_file(str(id_or_path).strip())
    elif isinstance(id_or_path, str):
        dev = shipped_device(id_or_path)
    else:
        raise InputError(f"a device is a built-in id, a TOML path or a Device, got {shown(id_or_path)}.")
    return dev.with_overrides(**overrides) if overrides else dev
