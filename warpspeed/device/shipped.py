"""The shipped device files (``warpspeed/devices/*.toml``): their ids, and which text names one of them.

Text only: loading a file into a :class:`~warpspeed.device.description.Device` is the loaders' (``files``).
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from ..errors import InputError
from ..units import shown
from .base import NOT_DEVICE_FILES


@lru_cache(maxsize=1)
def shipped_files() -> dict[str, Any]:
    """Id -> the shipped file (an importlib resource) of every shipped device."""
    folder = resources.files("warpspeed.devices")
    return {f.name[:-5]: f for f in folder.iterdir()
            if f.name.endswith(".toml") and f.name not in NOT_DEVICE_FILES}


def device_ids() -> list[str]:
    """Ids of the shipped devices (the files in ``warpspeed/devices/``), sorted."""
    return sorted(shipped_files())


def match_id(text: str) -> str | None:
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
