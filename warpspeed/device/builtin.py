"""The shipped devices and the :func:`device` entry point (an id, a unique prefix or a path)."""

from __future__ import annotations

from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..units import shown
from .base import NOT_DEVICE_FILES, suggest
from .files import load_device_bytes, load_device_file
from .model import Device
from .overrides import split_id


@lru_cache(maxsize=1)
def _builtin_files() -> dict[str, Any]:
    folder = resources.files("warpspeed.devices")
    return {f.name[:-5]: f for f in folder.iterdir()
            if f.name.endswith(".toml") and f.name not in NOT_DEVICE_FILES}


def device_ids() -> list[str]:
    """Ids of the shipped devices (the files in ``warpspeed/devices/``), sorted."""
    return sorted(_builtin_files())


@cache
def _builtin(device_id: str) -> Device:
    f = _builtin_files()[device_id]
    return load_device_bytes(f.read_bytes(), str(f), stem=device_id, builtin=True)


def _match_id(text: str) -> str | None:
    """Exact id, case-insensitive id, or a unique case-insensitive prefix; None if nothing matches."""
    ids = device_ids()
    if text in ids:
        return text
    low = text.lower()
    exact = [i for i in ids if i.lower() == low]
    if exact:
        return exact[0]
    prefixed = [i for i in ids if i.lower().startswith(low)]
    if len(prefixed) == 1:
        return prefixed[0]
    if len(prefixed) > 1:
        raise InputError(f"device {shown(text)} is ambiguous: it could be {', '.join(prefixed)}; give the "
                         "full id.")
    return None


def looks_like_path(text: str) -> bool:
    """Device ids never contain a slash or end in .toml; anything that does is a file path. Override suffixes
    may (``H100-SXM5-80GB+dram_bw=3TB/s``): only the part before the first ``+`` counts."""
    t = text.strip()
    base = t.split("+", 1)[0]
    return "/" in base or "\\" in base or t.lower().endswith(".toml")


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
        text = id_or_path.strip()
        base, suffix = split_id(text)
        found = _match_id(base) if base else None
        if found is None:
            raise InputError(f"unknown device {shown(text)}.{suggest(base, device_ids())} Built-in devices: "
                             f"{', '.join(device_ids())}; or give the path of a device TOML file.")
        dev = _builtin(found)
        if suffix:
            dev = dev.with_overrides(**suffix)
    else:
        raise InputError(f"a device is a built-in id, a TOML path or a Device, got {shown(id_or_path)}.")
    return dev.with_overrides(**overrides) if overrides else dev
