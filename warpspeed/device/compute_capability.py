"""The per-SM limits of each NVIDIA compute capability (``warpspeed/devices/compute_capabilities.toml``).

Threads, blocks, registers, shared memory, unified L1 and FP lanes per SM are properties of the compute
capability, not of the board: every GPU of cc 9.0 has 2048 threads and 228 KB of shared memory per SM. The
table holds them once, with their sources (the CUDA Programming Guide's compute-capability tables and the
CUDA occupancy header), so that a device file that contradicts its compute capability is caught: a complete
device file is checked when it loads, and a test holds every shipped device to its row.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

from ..errors import InputError
from ..units import format_quantity
from .base import DeviceFileError, FrozenMap
from .keys import KEYS_BY_NAME, parse_value
from .tomlfile import check_schema_version, read_toml

CC_FILE = "compute_capabilities.toml"
#: The keys a row gives, in the table's order: device-file keys, values in their canonical units.
LIMIT_KEYS = ("warp_size", "max_threads_per_block", "max_threads_per_sm", "max_blocks_per_sm", "registers_per_sm",
              "max_registers_per_thread", "register_alloc_unit", "register_subpartitions", "l1_size",
              "shared_per_sm", "shared_per_block", "shared_alloc_unit", "shared_reserved_per_block", "fp32_lanes",
              "fp64_lanes")


@dataclass(frozen=True)
class ComputeCapability:
    """One row: the compute capability (``"9.0"``), its per-SM limits by device-file key (bytes or counts) and
    the source of the row."""

    name: str
    limits: FrozenMap[Any]
    source: str

    def problems(self, attrs: dict[str, Any]) -> list[str]:
        """What in ``attrs`` (Device attribute -> value, as the loaders hold them) contradicts this row: one
        text per key, naming the key, the file's value and the table's. Values not in ``attrs`` (or None) are
        not checked."""
        out = []
        for key, want in self.limits.items():
            spec = KEYS_BY_NAME[key]
            have = attrs.get(spec.attr)
            if have is not None and have != want:
                out.append(f"{key} = {_shown(spec.kind, have)} contradicts compute capability {self.name}: the "
                           f"table of its per-SM limits ({CC_FILE}) gives {_shown(spec.kind, want)}; give that, or "
                           "the compute_capability of the GPU this file describes")
        return out


def _shown(kind: str, value: Any) -> str:
    return format_quantity(value, "bytes") if kind == "bytes" else f"{value:g}"


@lru_cache(maxsize=1)
def compute_capabilities() -> dict[str, ComputeCapability]:
    """Every row of the shipped table, by compute capability (``"8.0"``), in the file's order."""
    path = resources.files("warpspeed.devices").joinpath(CC_FILE)
    return read_compute_capabilities(path.read_bytes(), str(path))


def read_compute_capabilities(data: bytes, path: str) -> dict[str, ComputeCapability]:
    """The rows of a compute-capability table's text; every row gives every key of LIMIT_KEYS and a source
    (one :class:`DeviceFileError` lists every problem)."""
    doc = read_toml(data, path)
    check_schema_version(doc, path)
    problems: list[str] = []
    rows = {}
    for name, row in doc.items():
        if name == "schema_version":
            continue
        if not isinstance(row, dict):
            problems.append(f"[{name}] must be a table of {', '.join(LIMIT_KEYS)} and source")
            continue
        missing = [k for k in (*LIMIT_KEYS, "source") if k not in row]
        extra = [k for k in row if k not in (*LIMIT_KEYS, "source")]
        problems += [f"[{name}] misses {', '.join(missing)}"] if missing else []
        problems += [f"[{name}] has unknown key(s) {', '.join(extra)}"] if extra else []
        if not isinstance(row.get("source"), str) or not row.get("source", "").strip():
            problems.append(f"[{name}] needs a non-empty source")
        limits = {}
        for key in LIMIT_KEYS:
            if key in row:
                try:
                    limits[key] = parse_value(KEYS_BY_NAME[key], row[key], f"[{name}] ")
                except InputError as e:
                    problems.append(str(e))
        rows[name] = ComputeCapability(name, FrozenMap(limits), str(row.get("source", "")))
    if problems:
        raise DeviceFileError(f"compute-capability table {path}", problems)
    return rows


def capability_problems(compute_capability: object, attrs: dict[str, Any]) -> list[str]:
    """What contradicts the row of ``compute_capability`` in ``attrs`` (Device attribute -> value); nothing
    for a compute capability without a row (AMD targets, an NVIDIA cc no shipped device uses)."""
    row = compute_capabilities().get(compute_capability) if isinstance(compute_capability, str) else None
    return row.problems(attrs) if row is not None else []
