"""Per-architecture-family data: hit-rate curves (``hit_rates.toml``) and latency-model values (``latency.toml``)."""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Any

from ..errors import InputError
from .base import HIT_RATE_FILE, LATENCY_FILE, DeviceFileError
from .hitrates import HIT_RATE_CURVES, HitRates, curve_from_table
from .keys import KEYS_BY_NAME, LATENCY_KEYS, parse_value
from .tomlfile import check_schema_version, file_entry, read_toml


@lru_cache(maxsize=1)
def family_hit_rates() -> dict[str, HitRates]:
    path = resources.files("warpspeed.devices").joinpath(HIT_RATE_FILE)
    doc = read_toml(path.read_bytes(), str(path))
    check_schema_version(doc, str(path))
    out: dict[str, HitRates] = {}
    for family, curves in doc.items():
        if family == "schema_version":
            continue
        where = f"{path}: [{family}]"
        if not isinstance(curves, dict) or set(curves) != set(HIT_RATE_CURVES):
            got = sorted(curves) if isinstance(curves, dict) else curves
            raise InputError(f"{where} must hold exactly the curve tables {', '.join(HIT_RATE_CURVES)}; "
                             f"got {got!r}.")
        out[family] = HitRates(**{c: curve_from_table(curves[c], f"{where}.{c}") for c in HIT_RATE_CURVES})
    return out


@lru_cache(maxsize=1)
def family_latency() -> dict[str, dict[str, tuple[Any, str]]]:
    """Per family: latency-model key -> (raw value, source), from ``devices/latency.toml``."""
    path = resources.files("warpspeed.devices").joinpath(LATENCY_FILE)
    doc = read_toml(path.read_bytes(), str(path))
    check_schema_version(doc, str(path))
    out: dict[str, dict[str, tuple[Any, str]]] = {}
    for family, table in doc.items():
        if family == "schema_version":
            continue
        where = f"{path}: [{family}] "
        if not isinstance(table, dict) or set(table) - set(LATENCY_KEYS):
            raise InputError(f"{where}may hold only the keys {', '.join(LATENCY_KEYS)}.")
        out[family] = {}
        problems: list[str] = []
        for key, raw in table.items():
            for k, value, source in file_entry(raw, key, bare_source=None, problems=problems):
                try:
                    parse_value(KEYS_BY_NAME[k], value, "")
                except InputError as e:
                    problems.append(str(e))
                else:
                    out[family][k] = (value, source)
        if problems:
            raise DeviceFileError(where.rstrip(), problems)
    return out


def hit_rate_families() -> list[str]:
    """Architecture families that have hit-rate curves in ``devices/hit_rates.toml``."""
    return sorted(family_hit_rates())
