"""GPU device descriptions: data files in ``warpspeed/devices/``, loaded into immutable :class:`Device`\\ s.

Device file schema (version 1)
==============================

One TOML file per GPU, named ``<id>.toml``. Identity keys are plain strings; every number is a table
with the value and where it comes from, written with dotted keys::

    schema_version = 1                 # required; this module reads version 1
    id = "A100-SXM4-40GB"              # must equal the file name for the shipped files
    name = "NVIDIA A100-SXM4-40GB"
    vendor = "NVIDIA"
    architecture = "ampere"            # family: selects the hit-rate curves in hit_rates.toml
    compute_capability = "8.0"

    sm_count.value = 108
    sm_count.source = "spec: ..."

    dram_bw.value = "1375GB/s"         # what the model uses (measured where known)
    dram_bw.source = "measured: ..."
    dram_bw.peak = "1555GB/s"          # optional, bandwidths only: vendor/theoretical peak
    dram_bw.peak_source = "spec: ..."

    [hit_rates.l2_z]                   # optional: replaces the family's curve for this device
    a = 1.0
    b = 0.0029
    c = 3.61
    source = "measured: warpspeed calibrate ..."

An inline table is the same thing in TOML: ``sm_count = { value = 108, source = "spec: ..." }``.

The numeric keys (also the keys of ``--set``, :meth:`Device.with_overrides` and the base-file form),
with their unit kinds (see :mod:`warpspeed.units`)::

    key                        Device attribute              kind        meaning
    sm_count                   sm_count                      count       streaming multiprocessors
    clock_GHz                  clock_GHz                     frequency   SM clock the model uses
    warp_size                  warp_size                     count       threads per warp
    l1_size                    l1_size_bytes                 bytes       unified L1/shared capacity per SM
    l1_line                    l1_line_bytes                 bytes       L1 allocation granularity
    l1_sector                  l1_sector_bytes               bytes       L1 <-> L2 transfer granularity
    l1_bytes_per_cycle         l1_bytes_per_cycle            bytes       LSU bytes per cycle per SM
    l1_bytes_per_cycle_8B      l1_bytes_per_cycle_8B         bytes       optional; the same for 8 B
                                                                         accesses where they are slower
                                                                         (A40, CDNA2); default: the above
    l1_banks                   l1_banks                      count       L1 banks
    l1_bank_width              l1_bank_bytes                 bytes       bytes per bank per cycle
    l1_pairing_distance        l1_pairing_distance_bytes     bytes       addresses this far apart never
                                                                         share a wavefront (pairing rule)
    l1_load_lines_per_wavefront, l1_store_lines_per_wavefront            count       optional: the L1 line
                                                                         rule (warpspeed.l1): lines that
                                                                         share a wavefront beyond the bank
                                                                         cost, for loads and stores
    l1_wavefronts_per_warp     l1_wavefronts_per_warp        count       optional (line rule): fixed
                                                                         wavefronts of every warp
    l2_size                    l2_size_bytes                 bytes       total L2 capacity
    l2_partitions              l2_partitions                 count       L2 partitions (an SM sees one)
    l2_effective_size          l2_effective_size_bytes       bytes       optional; default l2_size //
                                                                         l2_partitions
    l2_line, l2_sector         l2_line_bytes, l2_sector_bytes bytes      L2 allocation / transfer sizes
    l2_bw  (+ peak)            l2_bw_GB_s (l2_bw_peak_GB_s)  bandwidth   L2 <-> L1 bandwidth
    dram_bw (+ peak)           dram_bw_GB_s (..._peak_GB_s)  bandwidth   DRAM <-> L2 bandwidth
    dram_size                  dram_size_bytes               bytes       optional: device memory capacity
                                                                         (a domain that does not fit gets
                                                                         a note)
    fp32_lanes, fp64_lanes     fp32/fp64_lanes_per_sm        count       FMA lanes per SM per cycle
    max_threads_per_sm, max_blocks_per_sm, max_threads_per_block         count       occupancy limits
    max_block_dims             max_block_dims                three counts  [x, y, z] block limits
    registers_per_sm, max_registers_per_thread                           count       32-bit registers
    register_alloc_unit        register_alloc_unit           count       registers per warp granule
    register_subpartitions     register_subpartitions        count       register-file sub-partitions
    shared_per_sm, shared_per_block, shared_alloc_unit,
    shared_reserved_per_block  shared_*_bytes                bytes       shared-memory limits
    l2_latency                 l2_latency_s                  time        mean L2 hit latency (latency model)
    dram_latency               dram_latency_s                time        DRAM access latency (latency model)
    sectors_in_flight_per_warp sectors_in_flight_per_warp    count       32 B sectors one warp keeps in
                                                                         flight on average (latency model)
    dram_run_overhead          dram_run_overhead_bytes       bytes       DRAM time lost per contiguous run
                                                                         of bytes, in bytes of streaming
                                                                         (latency model; given, it wins
                                                                         over dram_run_time)
    dram_run_time              dram_run_time_s               time        the same loss as a time: bytes =
                                                                         dram_run_time x dram_bw
    dram_run_exponent          dram_run_exponent             number      how fast longer runs approach the
                                                                         full bandwidth (latency model)
    tlb_page, tlb_reach        tlb_page_bytes, tlb_reach_bytes  bytes    TLB-page limiter (optional, off
    tlb_walk_rate              tlb_walk_rate_GHz             frequency   unless all three are given):
                                                                         page size, the pages the TLBs
                                                                         hold, page walks per ns

``--set``/:meth:`~Device.with_overrides` also take ``l2_bw_peak``, ``dram_bw_peak`` and
``hit_rates.<curve>.<a|b|c>`` (curve one of ``l1, l2_y, l2_z, l2_store``).

Rules: every key above is required except ``l1_bytes_per_cycle_8B``, ``l2_effective_size``, the
peaks and the latency-model keys, which default to the family's values in
``devices/latency.toml``; unknown keys (top level or inside a value table) are errors; every value
needs a non-empty ``source``. A source starts with its provenance: ``spec:`` (vendor or spec sheet), ``measured:``
(benchmark, with tool and settings), ``derived:`` (arithmetic on cited values), ``assumed:`` (a stated assumption) or
``model:`` (a value taken from another model); ``override`` marks values changed by a user.

**Base files** describe a hypothetical GPU as a change to another one::

    schema_version = 1
    base = "H100-SXM5-80GB"            # a built-in id (unique prefix ok), or a path relative to this
                                       # file (it must contain "/" or end in ".toml")
    id = "H100-bigL2"                  # optional; default: base id + "+key=value" suffixes
    name = "H100 with 100 MiB L2"      # optional
    l2_size = "100MiB"                 # a bare value (source "override (<file>)") ...
    dram_bw.value = "4TB/s"            # ... or a table with its own source
    dram_bw.source = "assumed: HBM3e"

Changed keys follow :meth:`Device.with_overrides` semantics (derived values follow them). A changed
``architecture`` brings that family's hit-rate curves; ``[hit_rates.<curve>]`` tables replace single
curves. Without ``name`` the device is called "<base name> (modified)" (or its ``id`` when given).

Hit-rate coefficients live in ``devices/hit_rates.toml``: one table per family and curve
(``[ampere.l2_y]`` with ``a``, ``b``, ``c``, ``source``), for the families ``volta, ampere, ada,
hopper, cdna2, cdna3``. hit(O) = a * exp(-b * exp(c * O)), O = oversubscription (allocated volume / capacity).

Migration notes: version 1 is the first schema; a later version must say here what changed and the
loader must keep reading version 1 files.
"""

from __future__ import annotations

import difflib
import math
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, fields, replace
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from .capacity import HIT_RATE_CURVES, HitRateCurve, HitRates, curve_from_table
from .errors import InputError
from .units import format_quantity, parse_quantity, require_unit

__all__ = [
    "SCHEMA_VERSION", "OVERRIDE_KEYS", "KEY_ATTRIBUTES", "HIT_RATE_CURVES", "LATENCY_KEYS", "TLB_KEYS", "PROVENANCE",
    "FrozenMap", "DeviceFileError",
    "HitRateCurve", "HitRates", "Device", "device", "device_ids", "hit_rate_families", "load_device_file",
    "parse_set_options",
]

SCHEMA_VERSION = 1
PROVENANCE = ("spec", "measured", "derived", "assumed", "model", "override")
_HIT_RATE_FILE = "hit_rates.toml"
_LATENCY_FILE = "latency.toml"
_NOT_DEVICES = (_HIT_RATE_FILE, _LATENCY_FILE, "links.toml")  # data files beside the device files
_IDENTITY = ("id", "name", "vendor", "architecture", "compute_capability")


# --------------------------------------------------------------------------------------------------
# Small helpers


class FrozenMap(Mapping[str, str]):
    """A read-only, hashable, picklable str -> str mapping (the ``sources`` of a device)."""

    def __init__(self, data: Mapping[str, str] | Iterable[tuple[str, str]] = ()) -> None:
        self._data = dict(data)

    def __getitem__(self, key: str) -> str:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"


def _suggest(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=3, cutoff=0.6)
    return f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


class DeviceFileError(InputError):
    """An :class:`InputError` that lists every problem of one device file (or one set of overrides).

    ``where`` names the file (``"device file x.toml"``) or the changed device; ``problems`` holds one
    sentence per problem, each naming the key at fault and what would be valid. ``str()`` is the whole
    message: ``"<where>: <problem>"`` for one problem, else ``"<where>: N problems:"`` and one
    ``"  - <problem>"`` line each.
    """

    def __init__(self, where: str, problems: Sequence[str]) -> None:
        self.where = where
        self.problems = tuple(p if p.endswith((".", "?", "!")) else p + "." for p in problems)
        if len(self.problems) == 1:
            text = f"{where}: {self.problems[0]}"
        else:
            text = f"{where}: {len(self.problems)} problems:" + "".join(f"\n  - {p}" for p in self.problems)
        super().__init__(text)

    def __reduce__(self):  # picklable (worker processes hand errors back)
        return (type(self), (self.where, self.problems))


# --------------------------------------------------------------------------------------------------
# Hit-rate curves of the families (the curve itself: capacity.HitRateCurve)


@lru_cache(maxsize=1)
def _family_hit_rates() -> dict[str, HitRates]:
    path = resources.files("warpspeed.devices").joinpath(_HIT_RATE_FILE)
    doc = _read_toml(path.read_bytes(), str(path))
    _check_schema_version(doc, str(path))
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
def _family_latency() -> dict[str, dict[str, tuple[Any, str]]]:
    """Per family: latency-model key -> (raw value, source), from ``devices/latency.toml``."""
    path = resources.files("warpspeed.devices").joinpath(_LATENCY_FILE)
    doc = _read_toml(path.read_bytes(), str(path))
    _check_schema_version(doc, str(path))
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
            for k, value, source in _entry(raw, key, bare_source=None, problems=problems):
                try:
                    _parse_value(_BY_KEY[k], value, "")
                except InputError as e:
                    problems.append(str(e))
                else:
                    out[family][k] = (value, source)
        if problems:
            raise DeviceFileError(where.rstrip(), problems)
    return out


def hit_rate_families() -> list[str]:
    """Architecture families that have hit-rate curves in ``devices/hit_rates.toml``."""
    return sorted(_family_hit_rates())


# --------------------------------------------------------------------------------------------------
# The keys of device files and overrides


@dataclass(frozen=True)
class _Key:
    key: str        # name in files, --set and with_overrides
    attr: str       # Device attribute
    kind: str       # units kind, or "dims" (three counts)
    minimum: float  # smallest valid value (clock and bandwidths: must be > 0)
    required: bool = True


_KEYS: tuple[_Key, ...] = (
    _Key("sm_count", "sm_count", "count", 1),
    _Key("clock_GHz", "clock_GHz", "frequency", 0),
    _Key("warp_size", "warp_size", "count", 1),
    _Key("l1_size", "l1_size_bytes", "bytes", 1),
    _Key("l1_line", "l1_line_bytes", "bytes", 1),
    _Key("l1_sector", "l1_sector_bytes", "bytes", 1),
    _Key("l1_bytes_per_cycle", "l1_bytes_per_cycle", "bytes", 1),
    _Key("l1_bytes_per_cycle_8B", "l1_bytes_per_cycle_8B", "bytes", 1, required=False),
    _Key("l1_banks", "l1_banks", "count", 1),
    _Key("l1_bank_width", "l1_bank_bytes", "bytes", 1),
    _Key("l1_pairing_distance", "l1_pairing_distance_bytes", "bytes", 1),
    _Key("l1_load_lines_per_wavefront", "l1_load_lines_per_wavefront", "count", 1, required=False),
    _Key("l1_store_lines_per_wavefront", "l1_store_lines_per_wavefront", "count", 1, required=False),
    _Key("l1_wavefronts_per_warp", "l1_wavefronts_per_warp", "count", 0, required=False),
    _Key("l2_size", "l2_size_bytes", "bytes", 1),
    _Key("l2_partitions", "l2_partitions", "count", 1),
    _Key("l2_effective_size", "l2_effective_size_bytes", "bytes", 1, required=False),
    _Key("l2_line", "l2_line_bytes", "bytes", 1),
    _Key("l2_sector", "l2_sector_bytes", "bytes", 1),
    _Key("l2_bw", "l2_bw_GB_s", "bandwidth", 0),
    _Key("l2_bw_peak", "l2_bw_peak_GB_s", "bandwidth", 0, required=False),
    _Key("dram_bw", "dram_bw_GB_s", "bandwidth", 0),
    _Key("dram_bw_peak", "dram_bw_peak_GB_s", "bandwidth", 0, required=False),
    _Key("dram_size", "dram_size_bytes", "bytes", 1, required=False),
    _Key("fp32_lanes", "fp32_lanes_per_sm", "count", 1),
    _Key("fp64_lanes", "fp64_lanes_per_sm", "count", 1),
    _Key("max_threads_per_sm", "max_threads_per_sm", "count", 1),
    _Key("max_blocks_per_sm", "max_blocks_per_sm", "count", 1),
    _Key("max_threads_per_block", "max_threads_per_block", "count", 1),
    _Key("max_block_dims", "max_block_dims", "dims", 1),
    _Key("registers_per_sm", "registers_per_sm", "count", 1),
    _Key("max_registers_per_thread", "max_registers_per_thread", "count", 1),
    _Key("register_alloc_unit", "register_alloc_unit", "count", 1),
    _Key("register_subpartitions", "register_subpartitions", "count", 1),
    _Key("shared_per_sm", "shared_per_sm_bytes", "bytes", 0),
    _Key("shared_per_block", "shared_per_block_bytes", "bytes", 0),
    _Key("shared_alloc_unit", "shared_alloc_unit_bytes", "bytes", 1),
    _Key("shared_reserved_per_block", "shared_reserved_per_block_bytes", "bytes", 0),
    # memory parallelism (the latency model); a file may leave them to its family (devices/latency.toml)
    _Key("l2_latency", "l2_latency_s", "time", 0, required=False),
    _Key("dram_latency", "dram_latency_s", "time", 0, required=False),
    _Key("sectors_in_flight_per_warp", "sectors_in_flight_per_warp", "count", 1, required=False),
    _Key("dram_run_overhead", "dram_run_overhead_bytes", "bytes", 0, required=False),
    _Key("dram_run_time", "dram_run_time_s", "time", 0, required=False),
    _Key("dram_run_exponent", "dram_run_exponent", "number", 0, required=False),
    # the TLB-page limiter (off unless a device gives all three; warpspeed/tlb.py)
    _Key("tlb_page", "tlb_page_bytes", "bytes", 1, required=False),
    _Key("tlb_reach", "tlb_reach_bytes", "bytes", 1, required=False),
    _Key("tlb_walk_rate", "tlb_walk_rate_GHz", "frequency", 0, required=False),
)
LATENCY_KEYS = ("l2_latency", "dram_latency", "sectors_in_flight_per_warp", "dram_run_overhead", "dram_run_time",
                "dram_run_exponent")
L1_LINE_KEYS = ("l1_load_lines_per_wavefront", "l1_store_lines_per_wavefront", "l1_wavefronts_per_warp")
TLB_KEYS = ("tlb_page", "tlb_reach", "tlb_walk_rate")
"""Keys of the TLB-page limiter (warpspeed.tlb): a device that gives all three has the limiter, none: off."""
"""Keys of the L1 line rule (warpspeed.l1); a device that gives the first follows it, else the pairing rule."""
"""Keys of the latency model; a device file that omits one gets its family's value (devices/latency.toml)."""
_BY_KEY = {k.key: k for k in _KEYS}
_BY_ATTR = {k.attr: k for k in _KEYS}
_PEAK_OF = {"dram_bw": "dram_bw_peak", "l2_bw": "l2_bw_peak"}
_HIT_KEYS = tuple(f"hit_rates.{c}.{p}" for c in HIT_RATE_CURVES for p in "abc")

OVERRIDE_KEYS: tuple[str, ...] = tuple(k.key for k in _KEYS) + _HIT_KEYS
"""Every key :meth:`Device.with_overrides` and ``--set`` accept."""
KEY_ATTRIBUTES: Mapping[str, str] = FrozenMap((k.key, k.attr) for k in _KEYS)
"""File/override key -> :class:`Device` attribute (``"l2_size"`` -> ``"l2_size_bytes"``)."""

_FILE_KEYS = tuple(k.key for k in _KEYS if k.key not in _PEAK_OF.values())  # peaks live in the bw tables

_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("compute", ("sm_count", "clock_GHz", "warp_size", "fp32_lanes", "fp64_lanes")),
    ("L1", ("l1_size", "l1_line", "l1_sector", "l1_bytes_per_cycle", "l1_bytes_per_cycle_8B", "l1_banks",
            "l1_bank_width", "l1_pairing_distance", *L1_LINE_KEYS)),
    ("L2", ("l2_size", "l2_partitions", "l2_effective_size", "l2_line", "l2_sector")),
    ("DRAM and bandwidths", ("dram_size", "l2_bw", "l2_bw_peak", "dram_bw", "dram_bw_peak")),
    ("occupancy limits", ("max_threads_per_sm", "max_blocks_per_sm", "max_threads_per_block", "max_block_dims",
                          "registers_per_sm", "max_registers_per_thread", "register_alloc_unit",
                          "register_subpartitions", "shared_per_sm", "shared_per_block", "shared_alloc_unit",
                          "shared_reserved_per_block")),
    ("latency model", LATENCY_KEYS),
    ("TLB-page limiter (off unless given)", TLB_KEYS),
)
"""The sections of :meth:`Device.to_text`; a key in none of them is listed under "other"."""


def override_kind(key: str) -> str:
    """The unit kind (``bytes``, ``bandwidth``, ``frequency``, ``count``) of a numeric override key."""
    spec = _BY_KEY.get(key)
    if spec is None or spec.kind == "dims":
        numeric = ", ".join(k.key for k in _KEYS if k.kind != "dims")
        raise InputError(f"'{key}' is not a numeric device key; valid: {numeric}.")
    return spec.kind


def _valid_override_keys() -> str:
    return ", ".join(k.key for k in _KEYS) + ", hit_rates.<curve>.<a|b|c> (curve: " + \
        ", ".join(HIT_RATE_CURVES) + ")"


def _parse_value(spec: _Key, raw: object, where: str, label: str | None = None) -> Any:
    label = label or f"{where}{spec.key}"
    if spec.kind == "dims":
        parts: object = raw
        if isinstance(raw, str):
            parts = [p for p in raw.replace("x", ",").split(",")]
        if not isinstance(parts, list | tuple) or len(parts) != 3:
            raise InputError(f"{label}: expected three whole numbers [x, y, z] (e.g. [1024, 1024, 64] or "
                             f"'1024,1024,64'), got {raw!r}.")
        value: Any = tuple(parse_quantity(p, "count", key=label) for p in parts)
        if min(value) < spec.minimum:
            raise InputError(f"{label}: every entry must be at least 1, got {raw!r}.")
        return value
    if isinstance(raw, str) or spec.kind == "time":  # typed text: '80' is 80 B or 80 MiB? a bare 373 ns?
        require_unit(raw, spec.kind, key=label)
    value = parse_quantity(raw, spec.kind, key=label)
    if spec.minimum == 0 and spec.kind in ("frequency", "bandwidth", "time", "number") and value <= 0:
        raise InputError(f"{label}: must be greater than zero, got {raw!r}.")
    if value < spec.minimum:
        raise InputError(f"{label}: must be at least {spec.minimum:g}, got {raw!r}.")
    return value


_NOT_GIVEN = {
    "l1_bytes_per_cycle_8B": "8 B accesses run at l1_bytes_per_cycle",
    "l1_load_lines_per_wavefront": "the L1 pairing rule applies",
    "l1_store_lines_per_wavefront": "the L1 pairing rule applies",
    "l1_wavefronts_per_warp": "the L1 pairing rule applies",
    "l2_bw_peak": "no vendor peak recorded", "dram_bw_peak": "no vendor peak recorded",
    "dram_size": "no capacity recorded: no note on domains too large",
}


def _value_text(spec: _Key, value: Any) -> str:
    """``value`` with its unit, as :meth:`Device.to_text` lists it; :func:`_parse_value` reads it back exactly
    (a value that 6 significant digits would round is written in full)."""
    if spec.kind == "dims":
        return ", ".join(str(v) for v in value)
    text = format_quantity(value, spec.kind)
    if _parse_value(spec, text, "") == value:
        return text
    full = {"bandwidth": f"{float(value)!r} GB/s", "frequency": f"{float(value)!r} GHz",
            "time": f"{float(value)!r} s", "bytes": f"{int(value)} B"}
    return full.get(spec.kind, str(value))


def _display(spec_kind: str, value: Any) -> str:
    """Compact text of a value for an id suffix: 80MiB, 5000GB/s, 1.6GHz, 160, 1024,1024,64."""
    if spec_kind == "dims":
        return ",".join(str(v) for v in value)
    if spec_kind == "float":
        return f"{value:g}"
    return format_quantity(value, spec_kind).replace(" ", "")


# --------------------------------------------------------------------------------------------------
# The device


@dataclass(frozen=True)
class Device:
    """One GPU as the model sees it. Build it with :func:`device`; change it with :meth:`with_overrides`.

    ``sources`` maps every file/override key (``"l2_size"``, ``"dram_bw"``, ``"dram_bw_peak"``,
    ``"hit_rates.l2_y"`` ...) to the citation of its value; :meth:`source_of` also accepts attribute names.
    """

    id: str
    name: str
    vendor: str
    architecture: str
    compute_capability: str
    sm_count: int
    clock_GHz: float
    warp_size: int
    l1_size_bytes: int
    l1_line_bytes: int
    l1_sector_bytes: int
    l1_bytes_per_cycle: int
    l1_bytes_per_cycle_8B: int | None
    l1_banks: int
    l1_bank_bytes: int
    l1_pairing_distance_bytes: int
    l1_load_lines_per_wavefront: int | None
    l1_store_lines_per_wavefront: int | None
    l1_wavefronts_per_warp: int | None
    l2_size_bytes: int
    l2_partitions: int
    l2_effective_size_bytes: int
    l2_line_bytes: int
    l2_sector_bytes: int
    l2_bw_GB_s: float
    dram_bw_GB_s: float
    l2_bw_peak_GB_s: float | None
    dram_bw_peak_GB_s: float | None
    fp32_lanes_per_sm: int
    fp64_lanes_per_sm: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    max_threads_per_block: int
    max_block_dims: tuple[int, int, int]
    registers_per_sm: int
    max_registers_per_thread: int
    register_alloc_unit: int
    register_subpartitions: int
    shared_per_sm_bytes: int
    shared_per_block_bytes: int
    shared_alloc_unit_bytes: int
    shared_reserved_per_block_bytes: int
    l2_latency_s: float | None
    dram_latency_s: float | None
    sectors_in_flight_per_warp: int | None
    dram_run_overhead_bytes: int | None
    hit_rates: HitRates
    sources: Mapping[str, str]
    dram_size_bytes: int | None = None
    dram_run_time_s: float | None = None
    dram_run_exponent: float | None = None
    tlb_page_bytes: int | None = None
    tlb_reach_bytes: int | None = None
    tlb_walk_rate_GHz: float | None = None
    file: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.sources, FrozenMap):
            object.__setattr__(self, "sources", FrozenMap(self.sources))
        object.__setattr__(self, "max_block_dims", tuple(self.max_block_dims))
        self._validate()

    # -- queries ------------------------------------------------------------------------------------

    def lanes_per_sm(self, precision: str) -> int:
        """FMA lanes per SM per cycle for ``"fp32"`` or ``"fp64"``."""
        if precision == "fp32":
            return self.fp32_lanes_per_sm
        if precision == "fp64":
            return self.fp64_lanes_per_sm
        raise InputError(f"unknown precision {precision!r} for device {self.id}; use 'fp32' or 'fp64'.")

    def lsu_bytes_per_cycle(self, element_bytes: int) -> int:
        """Bytes the L1 load/store unit serves per cycle for accesses of ``element_bytes``."""
        if element_bytes == 8 and self.l1_bytes_per_cycle_8B is not None:
            return self.l1_bytes_per_cycle_8B
        return self.l1_bytes_per_cycle

    def peak_GFLOP_s(self, precision: str) -> float:
        """Peak GFLOP/s: SMs x FMA lanes x 2 FLOP x clock in GHz."""
        return self.sm_count * self.lanes_per_sm(precision) * 2 * self.clock_GHz

    def source_of(self, name: str) -> str:
        """The citation for a value, by key (``"l2_size"``) or attribute name (``"l2_size_bytes"``)."""
        key = _BY_ATTR[name].key if name in _BY_ATTR else name
        try:
            return self.sources[key]
        except KeyError:
            raise InputError(f"device {self.id} has no source for {name!r}; known: "
                             f"{', '.join(self.sources)}.") from None

    # -- changes ------------------------------------------------------------------------------------

    def with_overrides(self, **changes: Any) -> Device:
        """A hypothetical device: this one with some values replaced.

        Keys (values are numbers in the canonical unit or unit strings such as ``"80MiB"``,
        ``"5000GB/s"``, ``"1.6GHz"``): ``sm_count, clock_GHz, warp_size, l1_size, l1_line, l1_sector,
        l1_bytes_per_cycle, l1_banks, l1_bank_width, l1_pairing_distance, l2_size, l2_partitions,
        l2_effective_size, l2_line, l2_sector, l2_bw, l2_bw_peak, dram_bw, dram_bw_peak, fp32_lanes,
        fp64_lanes, max_threads_per_sm, max_blocks_per_sm, max_threads_per_block, max_block_dims
        ("1024,1024,64" or a triple), registers_per_sm, max_registers_per_thread, register_alloc_unit,
        register_subpartitions, shared_per_sm, shared_per_block, shared_alloc_unit,
        shared_reserved_per_block`` and ``hit_rates.<l1|l2_y|l2_z|l2_store>.<a|b|c>`` (pass those
        through ``**{"hit_rates.l2_z.b": 0.004}``).

        Derived values follow: a new ``l2_size`` or ``l2_partitions`` sets ``l2_effective_size =
        l2_size // l2_partitions`` unless that is given too; a new ``dram_bw``/``l2_bw`` scales the
        vendor peak beside it by the same factor unless the peak is given too. Changed keys get the
        source ``"override"`` and the id a suffix such as ``"+l2_size=80MiB"``.
        """
        return _apply(self, changes, {}, "override", where=f"override of device {self.id}")

    # -- export -------------------------------------------------------------------------------------

    def to_dict(self) -> dict:
        """Every attribute as JSON-able data (tuples become lists), plus ``schema_version``."""
        out: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "hit_rates":
                v = v.to_dict()
            elif f.name == "sources":
                v = dict(v)
            elif isinstance(v, tuple):
                v = list(v)
            out[f.name] = v
        return out

    def to_text(self) -> str:
        """A readable listing in the keys of device files and ``--set`` (``l2_size = 50 MiB``), grouped,
        with each value's source after ``#``; optional values the device does not give are listed as
        comments. Every ``key = value`` line reads back: the value text given to ``--set``,
        :meth:`with_overrides` or a file of changes yields the same value (``<bw>_peak`` is written
        ``<bw>.peak`` in a file)."""
        rows: list[tuple[str, str, str] | str] = []  # (key, value, source) or a heading

        def add(key: str, value: str, source: str = "") -> None:
            rows.append((key, value, source))

        rows.append("identity")
        for k in _IDENTITY:
            add(k, getattr(self, k))
        if self.file:
            add("file", str(self.file))
        listed = {k for _, keys in _GROUPS for k in keys}
        groups = (*_GROUPS, ("other", tuple(k.key for k in _KEYS if k.key not in listed)))
        for title, keys in groups:
            if not keys:
                continue
            rows.append(title)
            for key in keys:
                spec = _BY_KEY[key]
                value = getattr(self, spec.attr)
                if value is None:
                    rows.append(f"  # {key}: not given ({_NOT_GIVEN.get(key, 'unused')})")
                else:
                    add(key, _value_text(spec, value), self.sources.get(key, ""))
        rows.append("hit-rate curves: hit(O) = a*exp(-b*exp(c*O)), O = oversubscription")
        for curve in HIT_RATE_CURVES:
            c = getattr(self.hit_rates, curve)
            for i, coef in enumerate("abc"):
                add(f"hit_rates.{curve}.{coef}", repr(getattr(c, coef)), c.source if i == 0 else "")
        kw = max(len(r[0]) for r in rows if isinstance(r, tuple))
        vw = max(len(r[1]) for r in rows if isinstance(r, tuple) and r[2])
        lines = [f"{self.id}: {self.name}",
                 "keys as in device files and --set; each value's source follows '#'"]
        for r in rows:
            if isinstance(r, str):
                lines.append(r if r.startswith(" ") else f"\n{r}")
            elif r[2]:
                lines.append(f"  {r[0]:<{kw}} = {r[1]:<{vw}}  # {r[2]}")
            else:
                lines.append(f"  {r[0]:<{kw}} = {r[1]}")
        return "\n".join(lines)

    # -- checks -------------------------------------------------------------------------------------

    def _validate(self) -> None:
        problems: list[str] = []
        for spec in _KEYS:
            v = getattr(self, spec.attr)
            if v is None and not spec.required:
                continue
            if spec.kind == "dims":
                ok = len(v) == 3 and all(isinstance(x, int) and not isinstance(x, bool) and x >= 1 for x in v)
            elif spec.kind in ("frequency", "bandwidth", "time", "number"):
                ok = (isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and v > 0)
            else:
                ok = isinstance(v, int) and not isinstance(v, bool) and v >= spec.minimum
            if not ok:
                problems.append(f"{spec.key} = {v!r} is not valid (must be "
                                + ("three whole numbers >= 1" if spec.kind == "dims" else
                                   "a number > 0" if spec.kind in ("frequency", "bandwidth", "time", "number") else
                                   f"a whole number >= {spec.minimum:g}") + ")")
        if problems:
            raise InputError(f"device {self.id}: " + "; ".join(problems) + ".")
        problems = _consistency_problems(_values(self))
        required = {k.key for k in _KEYS if getattr(self, k.attr) is not None} | \
            {f"hit_rates.{c}" for c in HIT_RATE_CURVES}
        missing = sorted(required - set(self.sources))
        if missing:
            problems.append(f"values without a source: {', '.join(missing)}")
        empty = sorted(k for k, s in self.sources.items() if not isinstance(s, str) or not s.strip())
        if empty:
            problems.append(f"empty sources: {', '.join(empty)}")
        if problems:
            raise InputError(f"device {self.id} is inconsistent: " + "; ".join(problems) + ".")


def _consistency_problems(v: Mapping[str, Any]) -> list[str]:
    """The consistency rules between values (docs/device-format.md), on ``v``: Device attribute -> value.

    The one place these rules live: :class:`Device` checks itself with it, and the loaders check the
    values of a file that has other problems too, so that one run reports everything. A check whose
    values are not all in ``v`` (a value that failed to parse) is skipped; ``None`` is a value not given.
    """
    problems: list[str] = []

    def have(*attrs: str) -> bool:
        return all(a in v for a in attrs)

    def size(attr: str) -> str:
        return format_quantity(v[attr], "bytes")

    for lvl in ("l1", "l2"):
        line, sector = f"{lvl}_line_bytes", f"{lvl}_sector_bytes"
        if have(line, sector) and v[line] % v[sector]:
            problems.append(f"{lvl}_line ({v[line]} B) must be a whole multiple of {lvl}_sector ({v[sector]} B)")
    load, store = (_BY_KEY[k].attr for k in L1_LINE_KEYS[:2])
    if have(load, store) and (v[load] is None) != (v[store] is None):
        problems.append("l1_load_lines_per_wavefront and l1_store_lines_per_wavefront go together (the L1 line "
                        "rule); give both or neither")
    if have("l1_pairing_distance_bytes", "l1_bank_bytes") and v["l1_pairing_distance_bytes"] % v["l1_bank_bytes"]:
        problems.append(f"l1_pairing_distance ({v['l1_pairing_distance_bytes']} B) must be a whole multiple of "
                        f"l1_bank_width ({v['l1_bank_bytes']} B)")
    if have("l2_effective_size_bytes", "l2_size_bytes") and v["l2_effective_size_bytes"] > v["l2_size_bytes"]:
        problems.append(f"l2_effective_size ({size('l2_effective_size_bytes')}) cannot exceed l2_size "
                        f"({size('l2_size_bytes')})")
    if have("max_threads_per_sm", "warp_size") and v["max_threads_per_sm"] % v["warp_size"]:
        problems.append(f"max_threads_per_sm ({v['max_threads_per_sm']}) must be a multiple of warp_size "
                        f"({v['warp_size']})")
    if have("max_threads_per_block", "max_threads_per_sm") and v["max_threads_per_block"] > v["max_threads_per_sm"]:
        problems.append(f"max_threads_per_block ({v['max_threads_per_block']}) cannot exceed max_threads_per_sm "
                        f"({v['max_threads_per_sm']})")
    if have("shared_per_block_bytes", "shared_per_sm_bytes") and \
            v["shared_per_block_bytes"] > v["shared_per_sm_bytes"]:
        problems.append(f"shared_per_block ({v['shared_per_block_bytes']} B) cannot exceed shared_per_sm "
                        f"({v['shared_per_sm_bytes']} B)")
    if have("registers_per_sm", "register_subpartitions") and v["registers_per_sm"] % v["register_subpartitions"]:
        problems.append(f"registers_per_sm ({v['registers_per_sm']}) must split evenly into "
                        f"{v['register_subpartitions']} register_subpartitions")
    tlb = [k for k in TLB_KEYS if _BY_KEY[k].attr in v]
    if len(tlb) == len(TLB_KEYS) and len({v[_BY_KEY[k].attr] is None for k in tlb}) > 1:
        given = [k for k in tlb if v[_BY_KEY[k].attr] is not None]
        problems.append(f"the TLB-page limiter needs all of {', '.join(TLB_KEYS)} (or none: off); given only "
                        f"{', '.join(given)}")
    for bw, peak in _PEAK_OF.items():
        used, top = _BY_KEY[bw].attr, _BY_KEY[peak].attr
        if have(used, top) and v[top] is not None and v[used] > v[top] * (1 + 1e-9):
            problems.append(f"{bw} ({v[used]:g} GB/s) cannot exceed its peak {peak} ({v[top]:g} GB/s); "
                            "change both")
    return problems


def _values(dev: Device) -> dict[str, Any]:
    """Device attribute -> value, for :func:`_consistency_problems`."""
    return {f.name: getattr(dev, f.name) for f in fields(dev)}


# --------------------------------------------------------------------------------------------------
# Overrides


def _split_id(device_id: str) -> tuple[str, dict[str, str]]:
    base, *parts = device_id.split("+")
    suffix: dict[str, str] = {}
    for p in parts:
        k, sep, v = p.partition("=")
        if not sep:
            return device_id, {}
        suffix[k] = v
    return base, suffix


def _apply(dev: Device, changes: Mapping[str, Any], sources: Mapping[str, str], origin: str,
           where: str = "", new_id: str | None = None) -> Device:
    """``dev`` with ``changes`` (key -> raw value); ``sources`` gives per-key citations (else ``origin``).

    Every bad key or value and every rule the result breaks is reported at once: a
    :class:`DeviceFileError` for ``where``.
    """
    problems: list[str] = []
    attrs, new_sources, shown = _changes(dev, changes, sources, origin, problems)
    if problems:
        raise DeviceFileError(where, problems)
    return replace(dev, id=new_id if new_id is not None else _suffixed_id(dev, shown),
                   sources=FrozenMap(new_sources), **attrs)


def _changes(dev: Device, changes: Mapping[str, Any], sources: Mapping[str, str], origin: str,
             problems: list[str], broken: Iterable[str] = ()) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """(attributes, sources, id suffixes) of ``dev`` changed by ``changes``; derived values follow.

    Every problem (unknown key, unreadable or out-of-range value, broken consistency rule) goes to
    ``problems``; a key with a problem, or named in ``broken`` (a file's keys that failed earlier), is
    left unchanged and out of the consistency checks.
    """
    attrs: dict[str, Any] = {}
    new_sources = dict(dev.sources)
    shown: dict[str, str] = {}
    curves = {c: getattr(dev.hit_rates, c) for c in HIT_RATE_CURVES}
    parsed: dict[str, Any] = {}
    broken = set(broken)
    for key, raw in changes.items():
        if key in _HIT_KEYS:
            _, curve, coef = key.split(".")
            try:
                value = _parse_float(raw, key)
                old = curves[curve]
                src = (f"{sources.get(key, origin)}: {coef}={value:g} (was {getattr(old, coef):g}); "
                       f"otherwise {old.source}")
                curves[curve] = HitRateCurve(**{**old.to_dict(), coef: value, "source": src})
            except InputError as e:
                problems.append(str(e) if str(e).startswith(key) else f"{key}: {e}")
                continue
            new_sources[f"hit_rates.{curve}"] = curves[curve].source
            shown[key] = _display("float", value)
            continue
        spec = _BY_KEY.get(key)
        if spec is None:
            problems.append(f"unknown device key {key!r}.{_suggest(key, OVERRIDE_KEYS)} "
                            f"Valid keys: {_valid_override_keys()}.")
            continue
        try:
            parsed[key] = _parse_value(spec, raw, "")
        except InputError as e:
            problems.append(str(e))
            broken.add(key)
            continue
        attrs[spec.attr] = parsed[key]
        new_sources[key] = sources.get(key, origin)
        shown[key] = _display(spec.kind, parsed[key])

    if ("l2_size" in parsed or "l2_partitions" in parsed) and "l2_effective_size" not in parsed:
        size = parsed.get("l2_size", dev.l2_size_bytes)
        parts = parsed.get("l2_partitions", dev.l2_partitions)
        attrs["l2_effective_size_bytes"] = size // parts
        new_sources["l2_effective_size"] = (f"derived: l2_size / l2_partitions = "
                                            f"{format_quantity(size, 'bytes')} / {parts} ({origin})")
    for bw, peak in _PEAK_OF.items():
        old_peak = getattr(dev, _BY_KEY[peak].attr)
        if bw in parsed and peak not in changes and old_peak is not None:
            ratio = parsed[bw] / getattr(dev, _BY_KEY[bw].attr)
            attrs[_BY_KEY[peak].attr] = old_peak * ratio
            new_sources[peak] = (f"derived: {old_peak:g} GB/s x {ratio:.4g}, scaled like {bw} ({origin}); "
                                 f"was: {dev.sources.get(peak, '?')}")
    if any(k in changes for k in _HIT_KEYS):
        attrs["hit_rates"] = HitRates(**curves)
    values = {**_values(dev), **attrs}
    for key in broken:  # a value that failed to parse takes part in no rule (its derived values neither)
        values.pop(_BY_KEY[key].attr, None)
        if key in ("l2_size", "l2_partitions"):
            values.pop("l2_effective_size_bytes", None)
    problems.extend(_consistency_problems(values))
    return attrs, new_sources, shown


def _suffixed_id(dev: Device, shown: Mapping[str, str]) -> str:
    """``dev.id`` with one ``+key=value`` suffix per change (a repeated key replaces its suffix)."""
    base, suffix = _split_id(dev.id)
    suffix.update(shown)
    return base + "".join(f"+{k}={v}" for k, v in suffix.items())


def _parse_float(raw: object, label: str) -> float:
    if isinstance(raw, bool):
        raise InputError(f"{label}: expected a number, got {raw!r}.")
    try:
        value = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{label}: expected a number (a hit-rate coefficient), got {raw!r}.") from None
    if not math.isfinite(value):
        raise InputError(f"{label}: expected a finite number, got {raw!r}.")
    return value


def parse_set_options(items: Iterable[str] | str, option: str = "--set") -> dict[str, str]:
    """``["l2_size=80MiB", "dram_bw=5000GB/s"]`` -> ``{"l2_size": "80MiB", "dram_bw": "5000GB/s"}``.

    Keys are checked later by :meth:`Device.with_overrides`; a missing ``=``, an empty key or value, or
    a key given twice is an :class:`InputError`.
    """
    if isinstance(items, str):
        items = [items]
    out: dict[str, str] = {}
    for item in items:
        if not isinstance(item, str):
            raise InputError(f"{option} expects KEY=VALUE text, got {item!r}.")
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise InputError(f"{option} {item!r} is not KEY=VALUE (e.g. {option} l2_size=80MiB {option} "
                             f"dram_bw=5000GB/s). Valid keys: {_valid_override_keys()}.")
        if key in out:
            raise InputError(f"{option} {key} is given twice ({out[key]!r} and {value!r}); give it once.")
        out[key] = value
    return out


# --------------------------------------------------------------------------------------------------
# Files


def _read_toml(data: bytes, path: str) -> dict:
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise InputError(f"device file {path} is not UTF-8 text ({e}).") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"device file {path} is not valid TOML: {e}.") from None


def _schema_problems(doc: dict, *, required: bool) -> list[str]:
    if "schema_version" not in doc:
        if not required:
            return []
        return [f"schema_version: missing; a complete device file starts with 'schema_version = "
                f"{SCHEMA_VERSION}' (only a file of changes, with base = \"<id>\", may leave it out)."]
    v = doc["schema_version"]
    if isinstance(v, bool) or v != SCHEMA_VERSION:
        return [f"schema_version = {v!r}: this warpspeed reads version {SCHEMA_VERSION} only; write "
                f"schema_version = {SCHEMA_VERSION}."]
    return []


def _check_schema_version(doc: dict, path: str) -> None:
    problems = _schema_problems(doc, required=True)
    if problems:
        raise DeviceFileError(f"device file {path}", problems)


def _entry(raw: object, key: str, *, bare_source: str | None, problems: list[str]) -> list[tuple[str, Any, str]]:
    """(key, raw value, source) of one numeric key in a file: its value and, for a bandwidth table with a
    ``peak``, the peak as key ``<bw>_peak``. Problems go to ``problems``; a part with a problem is left out."""
    if not isinstance(raw, dict):
        if bare_source is None:
            problems.append(f"{key}: give the value with its source, e.g. {key}.value = {raw!r} and "
                            f"{key}.source = \"spec: ...\" (bare values are allowed only in files with 'base').")
            return []
        return [(key, raw, bare_source)]
    allowed = {"value", "source"} | ({"peak", "peak_source"} if key in _PEAK_OF else set())
    out: list[tuple[str, Any, str]] = []
    unknown = sorted(set(raw) - allowed)
    if unknown:
        problems.append(f"{key}: unknown field(s) {', '.join(unknown)}; a value table has "
                        f"{', '.join(sorted(allowed))}.")
    source = raw.get("source", bare_source)
    has_source = isinstance(source, str) and bool(source.strip())
    if not has_source:
        problems.append(f"{key}: needs a non-empty 'source' saying where the value comes from "
                        f"(e.g. {key}.source = \"spec: vendor data sheet\").")
    if "value" not in raw:
        problems.append(f"{key}: the table needs 'value' (and 'source').")
    elif has_source:
        out.append((key, raw["value"], source.strip()))
    if key in _PEAK_OF and ("peak" in raw or "peak_source" in raw):
        peak_source = raw.get("peak_source", bare_source)
        if ("peak" in raw) != ("peak_source" in raw) and bare_source is None:
            problems.append(f"{key}: 'peak' and 'peak_source' go together; give both or neither.")
        elif "peak" in raw and not (isinstance(peak_source, str) and peak_source.strip()):
            problems.append(f"{key}.peak_source: must be a non-empty text saying where the peak comes from.")
        elif "peak" in raw:
            out.append((_PEAK_OF[key], raw["peak"], peak_source.strip()))
    return out


def _file_values(doc: dict, *, bare_source: str | None, problems: list[str]) -> tuple[dict[str, tuple[Any, Any, str]],
                                                                                        set[str]]:
    """The numeric keys of a file: ({key: (raw value, parsed value, source)}, keys given but broken).

    Peaks appear as ``<bw>_peak``. Every problem of the top-level keys (unknown keys, identity strings,
    values) goes to ``problems``, in the order of the file; a file of changes has ``bare_source``.
    """
    values: dict[str, tuple[Any, Any, str]] = {}
    broken: set[str] = set()
    valid = ["schema_version", *(["base"] if bare_source is not None else []), *_IDENTITY, *_FILE_KEYS,
             "hit_rates"]
    for key in doc:
        if key not in valid:
            problems.append(_unknown_key(key, valid))
        elif key in _IDENTITY and not (isinstance(doc[key], str) and doc[key].strip()):
            problems.append(f"{key} must be a non-empty string, got {doc[key]!r}.")
        if key not in _FILE_KEYS:
            continue
        given = [key] + ([_PEAK_OF[key]] if key in _PEAK_OF and isinstance(doc[key], dict) and "peak" in doc[key]
                         else [])
        for k, raw, source in _entry(doc[key], key, bare_source=bare_source, problems=problems):
            spec = _BY_KEY[k]
            label = f"{key}.peak" if k != key else key
            try:
                if spec.kind != "dims":  # a TOML number, too, was typed by a person: it needs its unit
                    require_unit(raw, spec.kind, key=label)
                values[k] = (raw, _parse_value(spec, raw, "", label=label), source)
            except InputError as e:
                problems.append(str(e))
        broken.update(k for k in given if k not in values)
    return values, broken


def _unknown_key(key: str, valid: list[str]) -> str:
    if key in _PEAK_OF.values():
        bw = next(b for b, pk in _PEAK_OF.items() if pk == key)
        return (f"unknown key {key!r}: in a file the peak goes in the {bw} table, as {bw}.peak = \"...\" with "
                f"{bw}.peak_source = \"spec: ...\".")
    return f"unknown key {key!r}." + (_suggest(key, valid) or f" Valid keys: {', '.join(valid)}.")


def _hit_rates_overrides(doc: dict, problems: list[str]) -> dict[str, HitRateCurve]:
    table = doc.get("hit_rates", {})
    if not isinstance(table, dict):
        problems.append(f"hit_rates must be a table of curves ({', '.join(HIT_RATE_CURVES)}), e.g. "
                        "[hit_rates.l2_z] with a, b, c and source.")
        return {}
    out = {}
    for name, t in table.items():
        if name not in HIT_RATE_CURVES:
            problems.append(f"unknown hit-rate curve {name!r} (hit_rates.{name}).{_suggest(name, HIT_RATE_CURVES)} "
                            f"Valid curves: {', '.join(HIT_RATE_CURVES)}.")
            continue
        try:
            out[name] = curve_from_table(t, f"hit_rates.{name}")
        except InputError as e:
            problems.append(str(e))
    return out


def _family_problem(family: object, curve_overrides: Mapping[str, HitRateCurve]) -> str | None:
    if not isinstance(family, str) or family in _family_hit_rates() or len(curve_overrides) == len(HIT_RATE_CURVES):
        return None
    return (f"architecture {family!r} has no hit-rate curves in {_HIT_RATE_FILE} (known families: "
            f"{', '.join(hit_rate_families())}); use one of those or give all four [hit_rates.<curve>] tables "
            f"({', '.join(HIT_RATE_CURVES)}).")


def _load(data: bytes, path: str, *, stem: str, builtin: bool, depth: int = 0) -> Device:
    """A device file, complete or of changes (``base``). Every problem of the file is reported in one
    :class:`DeviceFileError` (a file that is not TOML stops at that)."""
    where = f"device file {path}"
    doc = _read_toml(data, path)
    based = "base" in doc
    if based and builtin:
        raise DeviceFileError(where, ["shipped device files must be complete (no 'base')."])
    problems = _schema_problems(doc, required=not based)
    if based:
        return _load_based(doc, path, depth, problems)
    missing = [k for k in _IDENTITY[1:] if k not in doc]
    missing += [k for k in _FILE_KEYS if _BY_KEY[k].required and k not in doc]
    if missing:
        required = [k for k in _FILE_KEYS if _BY_KEY[k].required]
        problems.append(f"missing key(s) {', '.join(missing)}; a complete device file gives "
                        f"{', '.join(_IDENTITY[1:])} and {', '.join(required)} (optional: id, "
                        f"l1_bytes_per_cycle_8B, l2_effective_size, a peak in the bandwidth tables and the "
                        f"latency-model keys {', '.join(LATENCY_KEYS)}), or use "
                        f"base = \"<id>\" to change an existing device.")
    values, broken = _file_values(doc, bare_source=None, problems=problems)
    dev_id = doc.get("id", stem)
    if builtin and dev_id != stem:
        problems.append(f"id {dev_id!r} must equal the file name {stem!r}.")
    family = doc.get("architecture")
    family = family if isinstance(family, str) else None
    curve_overrides = _hit_rates_overrides(doc, problems)
    if (text := _family_problem(family, curve_overrides)) is not None:
        problems.append(text)
    families = _family_hit_rates()
    base_curves = {c: getattr(families[family], c) for c in HIT_RATE_CURVES} if family in families else {}
    curves = {**base_curves, **curve_overrides}

    attrs: dict[str, Any] = {_BY_KEY[k].attr: parsed for k, (_, parsed, _) in values.items()}
    sources: dict[str, str] = {k: source for k, (_, _, source) in values.items()}
    for key, (value, source) in _family_latency().get(family, {}).items():
        if key not in doc:
            attrs[_BY_KEY[key].attr] = _parse_value(_BY_KEY[key], value, f"{_LATENCY_FILE} [{family}] ")
            sources[key] = source
    if "l2_effective_size" not in doc and "l2_size_bytes" in attrs and "l2_partitions" in attrs:
        parts = attrs["l2_partitions"]
        attrs["l2_effective_size_bytes"] = attrs["l2_size_bytes"] // parts
        sources["l2_effective_size"] = (f"derived: l2_size / l2_partitions = "
                                        f"{format_quantity(attrs['l2_size_bytes'], 'bytes')} / {parts}")
    for c, curve in curves.items():
        sources[f"hit_rates.{c}"] = curve.source
    for spec in _KEYS:  # optional values not given are None (a value given but broken stays out)
        if not spec.required and spec.key not in broken:
            attrs.setdefault(spec.attr, None)
    problems += _consistency_problems(attrs)
    if problems:
        raise DeviceFileError(where, problems)
    try:
        return Device(id=dev_id, name=doc["name"], vendor=doc["vendor"], architecture=family,
                      compute_capability=doc["compute_capability"], hit_rates=HitRates(**curves),
                      sources=FrozenMap(sources), file=path, **attrs)
    except InputError as e:
        raise DeviceFileError(where, [str(e)]) from None


def _load_based(doc: dict, path: str, depth: int, problems: list[str]) -> Device:
    """A file of changes: ``base`` plus changed keys (``schema_version`` optional, checked if given)."""
    where = f"device file {path}"
    base_ref = doc["base"]
    base: Device | None = None
    if not isinstance(base_ref, str) or not base_ref.strip():
        problems.append(f"base must be a device id ({', '.join(device_ids())}) or a path, got {base_ref!r}.")
    elif depth > 8:
        problems.append("too many nested 'base' files (a cycle?).")
    elif _looks_like_path(base_ref):
        base_path = Path(path).parent / base_ref
        if not base_path.is_file():
            problems.append(f"base file {base_path} does not exist.")
        else:
            try:
                base = _load(base_path.read_bytes(), str(base_path), stem=base_path.stem, builtin=False,
                             depth=depth + 1)
            except InputError as e:
                problems.append(f"base: {e}")
    else:
        try:
            base = device(base_ref)
        except InputError as e:
            problems.append(f"base: {e}")
    bare = f"override ({Path(path).name})"
    values, broken = _file_values(doc, bare_source=bare, problems=problems)
    curve_overrides = _hit_rates_overrides(doc, problems)
    identity = {k: doc[k] for k in _IDENTITY[1:] if k in doc and isinstance(doc[k], str) and doc[k].strip()}
    family = identity.get("architecture", base.architecture if base is not None else None)
    if base is not None and family != base.architecture and \
            (text := _family_problem(family, curve_overrides)) is not None:
        problems.append(text)
    if base is None:
        raise DeviceFileError(where, problems)
    changes = {k: raw for k, (raw, _, _) in values.items()}
    sources = {k: source for k, (_, _, source) in values.items()}
    attrs, new_sources, shown = _changes(base, changes, sources, bare, problems, broken)
    if problems:
        raise DeviceFileError(where, problems)
    new_id = doc.get("id")
    dev = replace(base, id=new_id if isinstance(new_id, str) else _suffixed_id(base, shown),
                  sources=FrozenMap(new_sources), **attrs)
    if "name" not in identity and (changes or curve_overrides):
        identity["name"] = new_id if new_id is not None else f"{base.name} (modified)"
    inherited = dev.hit_rates
    if family != base.architecture:  # a new family brings its own curves
        inherited = _family_hit_rates().get(family, inherited)
    if curve_overrides or inherited is not dev.hit_rates:
        curves = {c: curve_overrides.get(c, getattr(inherited, c)) for c in HIT_RATE_CURVES}
        src = dict(dev.sources)
        src.update({f"hit_rates.{c}": curves[c].source for c in HIT_RATE_CURVES})
        identity["hit_rates"] = HitRates(**curves)
        identity["sources"] = FrozenMap(src)
    try:
        return replace(dev, file=path, **identity)
    except InputError as e:
        raise DeviceFileError(where, [str(e)]) from None


def load_device_file(path: str | Path) -> Device:
    """Read a device TOML file (complete, or ``base = "<id>"`` plus changes) and validate it."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"device file {p} does not exist (built-in ids: {', '.join(device_ids())}).")
    return _load(p.read_bytes(), str(p), stem=p.stem, builtin=False)


# --------------------------------------------------------------------------------------------------
# Built-in devices


@lru_cache(maxsize=1)
def _builtin_files() -> dict[str, Any]:
    folder = resources.files("warpspeed.devices")
    return {f.name[:-5]: f for f in folder.iterdir()
            if f.name.endswith(".toml") and f.name not in _NOT_DEVICES}


def device_ids() -> list[str]:
    """Ids of the shipped devices (the files in ``warpspeed/devices/``), sorted."""
    return sorted(_builtin_files())


@cache
def _builtin(device_id: str) -> Device:
    f = _builtin_files()[device_id]
    return _load(f.read_bytes(), str(f), stem=device_id, builtin=True)


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
        raise InputError(f"device {text!r} is ambiguous: it could be {', '.join(prefixed)}; give the "
                         "full id.")
    return None


def _looks_like_path(text: str) -> bool:
    """Device ids never contain a slash or end in .toml; anything that does is a file path."""
    t = text.strip()
    return "/" in t or "\\" in t or t.lower().endswith(".toml")


def device(id_or_path: str | Path | Device, **overrides: Any) -> Device:
    """A device by built-in id (case-insensitive; a unique prefix such as ``"H100-SXM"`` works), by the
    path of a TOML file, or a :class:`Device`; ``overrides`` go through :meth:`Device.with_overrides`.

    An id with override suffixes, as produced by :meth:`Device.with_overrides`
    (``"A100-SXM4-40GB+l2_size=80MiB"``), is rebuilt from the built-in device.
    """
    if isinstance(id_or_path, Device):
        dev = id_or_path
    elif isinstance(id_or_path, Path) or (isinstance(id_or_path, str) and _looks_like_path(id_or_path)):
        dev = load_device_file(str(id_or_path).strip())
    elif isinstance(id_or_path, str):
        text = id_or_path.strip()
        base, suffix = _split_id(text)
        found = _match_id(base) if base else None
        if found is None:
            raise InputError(f"unknown device {text!r}.{_suggest(base, device_ids())} Built-in devices: "
                             f"{', '.join(device_ids())}; or give the path of a device TOML file.")
        dev = _builtin(found)
        if suffix:
            dev = dev.with_overrides(**suffix)
    else:
        raise InputError(f"a device is a built-in id, a TOML path or a Device, got {id_or_path!r}.")
    return dev.with_overrides(**overrides) if overrides else dev
