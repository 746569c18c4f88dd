"""The keys of device files and overrides: units, limits, parsing and display of each value."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from ..errors import InputError
from ..units import REAL_KINDS, format_quantity, parse_quantity, require_unit, shown
from .base import FrozenMap
from .hitrates import HIT_RATE_CURVES


@dataclass(frozen=True)
class DeviceKey:
    """One numeric key of device files, ``--set`` and :meth:`~warpspeed.device.Device.with_overrides`, declared
    once in :data:`KEY_GROUPS`. The :class:`~warpspeed.device.Device` field ``attr`` holds its value (a test holds
    the fields to this table) and docs/device-format.md has its row (a test holds the rows to it)."""

    key: str        # name in files, --set and with_overrides
    attr: str       # Device attribute (and key of ``devices show --format json``)
    kind: str       # units kind, or "dims" (three counts)
    minimum: float  # smallest valid value (clock and bandwidths: must be > 0)
    required: bool = True  # a complete device file must give it
    plausible: tuple[float, float] | None = None  # the range of a GPU, real or imagined (canonical units)
    absent: str = "unused"  # what an optional key left out means (``devices show``: "not given (...)")
    derived: bool = False  # optional in a file, derived when left out: every Device has a value
    peak_of: str | None = None  # the key whose vendor peak this is (in a file: ``<peak_of>.peak``)
    group: str = ""  # the section of ``devices show`` (set by :func:`_group`)


@dataclass(frozen=True)
class KeyGroup:
    """A section of :meth:`Device.to_text`: its title and its keys, in the order ``devices show`` lists them."""

    title: str
    keys: tuple[DeviceKey, ...]

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(k.key for k in self.keys)


def _group(title: str, *keys: DeviceKey) -> KeyGroup:
    return KeyGroup(title, tuple(replace(k, group=title) for k in keys))


MAX_BLOCK_DIM = 65536
"""The largest entry of ``max_block_dims`` (its plausible range: 1 to this; a GPU allows 64 to 1024)."""

_K = DeviceKey
_PAIRING = "the L1 pairing rule applies"
_NO_PEAK = "no vendor peak recorded"
_NO_MSC = "no memory-side cache: the L2's misses go to DRAM"

KEY_GROUPS: tuple[KeyGroup, ...] = (
    _group("compute",
           _K("sm_count", "sm_count", "count", 1, plausible=(1, 10000)),
           _K("clock_GHz", "clock_GHz", "frequency", 0, plausible=(0.1, 10)),
           _K("warp_size", "warp_size", "count", 1, plausible=(1, 1024)),
           _K("fp32_lanes", "fp32_lanes_per_sm", "count", 1, plausible=(1, 4096)),
           _K("fp64_lanes", "fp64_lanes_per_sm", "count", 1, plausible=(1, 4096))),
    _group("L1",
           _K("l1_size", "l1_size_bytes", "bytes", 1, plausible=(1024, 67108864)),
           _K("l1_line", "l1_line_bytes", "bytes", 1, plausible=(1, 65536)),
           _K("l1_sector", "l1_sector_bytes", "bytes", 1, plausible=(1, 65536)),
           _K("l1_bytes_per_cycle", "l1_bytes_per_cycle", "bytes", 1, plausible=(1, 65536)),
           _K("l1_bytes_per_cycle_8B", "l1_bytes_per_cycle_8B", "bytes", 1, required=False, plausible=(1, 65536),
              absent="8 B accesses run at l1_bytes_per_cycle"),
           _K("l1_banks", "l1_banks", "count", 1, plausible=(1, 1024)),
           _K("l1_bank_width", "l1_bank_bytes", "bytes", 1, plausible=(1, 1024)),
           _K("l1_pairing_distance", "l1_pairing_distance_bytes", "bytes", 1, plausible=(1, 1048576)),
           # the L1 line rule (warpspeed.model.l1): L1_LINE_KEYS
           _K("l1_load_lines_per_wavefront", "l1_load_lines_per_wavefront", "count", 1, required=False,
              plausible=(1, 1024), absent=_PAIRING),
           _K("l1_store_lines_per_wavefront", "l1_store_lines_per_wavefront", "count", 1, required=False,
              plausible=(1, 1024), absent=_PAIRING),
           _K("l1_wavefronts_per_warp", "l1_wavefronts_per_warp", "count", 0, required=False, plausible=(0, 1024),
              absent=_PAIRING),
           _K("l1_wavefronts_per_missed_line", "l1_wavefronts_per_missed_line", "number", 0, required=False,
              plausible=(0.01, 64), absent="a further load line costs 1 / l1_load_lines_per_wavefront, hit or miss")),
    _group("L2",
           _K("l2_size", "l2_size_bytes", "bytes", 1, plausible=(65536, 17179869184)),
           _K("l2_partitions", "l2_partitions", "count", 1, plausible=(1, 1024)),
           _K("l2_effective_size", "l2_effective_size_bytes", "bytes", 1, required=False, derived=True,
              plausible=(64, 17179869184)),
           _K("l2_line", "l2_line_bytes", "bytes", 1, plausible=(1, 65536)),
           _K("l2_sector", "l2_sector_bytes", "bytes", 1, plausible=(1, 65536))),
    _group("DRAM and bandwidths",
           _K("dram_size", "dram_size_bytes", "bytes", 1, required=False, plausible=(67108864, 70368744177664),
              absent="no capacity recorded: no note on domains too large"),
           _K("l2_bw", "l2_bw_GB_s", "bandwidth", 0, plausible=(10, 1000000.0)),
           _K("l2_bw_peak", "l2_bw_peak_GB_s", "bandwidth", 0, required=False, plausible=(10, 1000000.0),
              absent=_NO_PEAK, peak_of="l2_bw"),
           _K("dram_bw", "dram_bw_GB_s", "bandwidth", 0, plausible=(10, 200000.0)),
           _K("dram_bw_peak", "dram_bw_peak_GB_s", "bandwidth", 0, required=False, plausible=(10, 200000.0),
              absent=_NO_PEAK, peak_of="dram_bw")),
    _group("occupancy limits",
           _K("max_threads_per_sm", "max_threads_per_sm", "count", 1, plausible=(1, 65536)),
           _K("max_blocks_per_sm", "max_blocks_per_sm", "count", 1, plausible=(1, 4096)),
           _K("max_threads_per_block", "max_threads_per_block", "count", 1, plausible=(1, 65536)),
           _K("max_block_dims", "max_block_dims", "dims", 1),
           _K("registers_per_sm", "registers_per_sm", "count", 1, plausible=(1, 16777216)),
           _K("max_registers_per_thread", "max_registers_per_thread", "count", 1, plausible=(1, 65536)),
           _K("register_alloc_unit", "register_alloc_unit", "count", 1, plausible=(1, 65536)),
           _K("register_subpartitions", "register_subpartitions", "count", 1, plausible=(1, 1024)),
           _K("shared_per_sm", "shared_per_sm_bytes", "bytes", 0, plausible=(0, 1073741824)),
           _K("shared_per_block", "shared_per_block_bytes", "bytes", 0, plausible=(0, 1073741824)),
           _K("shared_alloc_unit", "shared_alloc_unit_bytes", "bytes", 1, plausible=(1, 1048576)),
           _K("shared_reserved_per_block", "shared_reserved_per_block_bytes", "bytes", 0, plausible=(0, 1048576))),
    # memory parallelism (the latency model); a file may leave them to its family (devices/latency.toml)
    _group("latency model",
           _K("l2_latency", "l2_latency_s", "time", 0, required=False, plausible=(1e-09, 0.0001)),
           _K("dram_latency", "dram_latency_s", "time", 0, required=False, plausible=(1e-09, 0.0001)),
           _K("sectors_in_flight_per_warp", "sectors_in_flight_per_warp", "count", 1, required=False,
              plausible=(1, 65536)),
           _K("dram_run_overhead", "dram_run_overhead_bytes", "bytes", 0, required=False, plausible=(0, 1048576)),
           _K("dram_run_time", "dram_run_time_s", "time", 0, required=False, plausible=(1e-18, 1e-09)),
           _K("dram_run_exponent", "dram_run_exponent", "number", 0, required=False, plausible=(0.01, 4)),
           _K("l2_request_rate", "l2_requests_per_ns", "rate", 0, required=False, plausible=(1, 100000.0))),
    # the memory-side cache between the L2 and the DRAM (AMD's Infinity Cache; off unless a device gives both)
    _group("memory-side cache (off unless given)",
           _K("msc_size", "msc_size_bytes", "bytes", 1, required=False, plausible=(65536, 68719476736),
              absent=_NO_MSC),
           _K("msc_bw", "msc_bw_GB_s", "bandwidth", 0, required=False, plausible=(10, 1000000.0), absent=_NO_MSC),
           _K("msc_bw_peak", "msc_bw_peak_GB_s", "bandwidth", 0, required=False, plausible=(10, 1000000.0),
              absent=_NO_PEAK, peak_of="msc_bw")),
    # the TLB-page limiter (off unless a device gives all three; warpspeed/model/tlb.py)
    _group("TLB-page limiter (off unless given)",
           _K("tlb_page", "tlb_page_bytes", "bytes", 1, required=False, plausible=(1, 17179869184)),
           _K("tlb_reach", "tlb_reach_bytes", "bytes", 1, required=False, plausible=(1, 70368744177664)),
           _K("tlb_walk_rate", "tlb_walks_per_ns", "rate", 0, required=False, plausible=(1e-06, 100000.0))),
)
"""THE table of device keys, by the sections of :meth:`Device.to_text`. Adding a key: an entry here, the
:class:`Device` field of its ``attr``, the stage that reads it and its rows in docs/device-format.md (tests hold
the fields and the rows to this table); files, ``--set``, checks, ``devices show`` and JSON follow."""

KEYS: tuple[DeviceKey, ...] = tuple(k for g in KEY_GROUPS for k in g.keys)
"""Every key, in the order of :data:`KEY_GROUPS` (and of docs/device-format.md)."""


def _keys_of(title: str) -> tuple[str, ...]:
    return next(g.names for g in KEY_GROUPS if g.title == title)


LATENCY_KEYS = _keys_of("latency model")
"""Keys of the latency model; a device file that omits one gets its family's value (devices/latency.toml)."""
L1_LINE_KEYS = ("l1_load_lines_per_wavefront", "l1_store_lines_per_wavefront", "l1_wavefronts_per_warp",
                "l1_wavefronts_per_missed_line")
"""Keys of the L1 line rule (warpspeed.model.l1); a device that gives the first follows it, else the pairing rule."""
MSC_KEYS = ("msc_size", "msc_bw")
"""Keys of the memory-side cache (warpspeed.model.levels, MSC): a device that gives both has the level, none: not."""
TLB_KEYS = _keys_of("TLB-page limiter (off unless given)")
"""Keys of the TLB-page limiter (warpspeed.model.tlb): a device that gives all three has the limiter, none: off."""


def _none_removes() -> dict[str, tuple[str, ...]]:
    out: dict[str, tuple[str, ...]] = {k.key: (k.key,) for k in KEYS
                                       if not k.required and not k.derived and k.key not in LATENCY_KEYS}
    for key in MSC_KEYS:
        out[key] = (*MSC_KEYS, "msc_bw_peak")
    for key in TLB_KEYS:
        out[key] = TLB_KEYS
    for key in L1_LINE_KEYS[:3]:
        out[key] = L1_LINE_KEYS
    return out


NONE_REMOVES: Mapping[str, tuple[str, ...]] = FrozenMap(_none_removes())
"""Key -> the keys ``KEY=none`` removes in ``--set`` and :meth:`Device.with_overrides` (each becomes None, "not
given", as in a file without it). Keys that go together leave together: ``msc_size`` or ``msc_bw`` removes the
memory-side cache (``msc_bw_peak`` too), any TLB key the TLB-page limiter, the first three L1 line-rule keys the line
rule (the pairing rule applies); every other key here only itself. Required keys, the derived
``l2_effective_size`` and the latency keys (left out of a file, each is its family's value: no clear meaning for
none) take no none."""

KEYS_BY_NAME = {k.key: k for k in KEYS}
KEYS_BY_ATTR = {k.attr: k for k in KEYS}
PEAK_OF = {k.peak_of: k.key for k in KEYS if k.peak_of is not None}
"""Key -> the key of its vendor peak (``"dram_bw"`` -> ``"dram_bw_peak"``)."""
HIT_RATE_KEYS = tuple(f"hit_rates.{c}.{p}" for c in HIT_RATE_CURVES for p in "abc")

OVERRIDE_KEYS: tuple[str, ...] = tuple(k.key for k in KEYS) + HIT_RATE_KEYS
"""Every key :meth:`Device.with_overrides` and ``--set`` accept."""
KEY_ATTRIBUTES: Mapping[str, str] = FrozenMap((k.key, k.attr) for k in KEYS)
"""File/override key -> :class:`Device` attribute (``"l2_size"`` -> ``"l2_size_bytes"``)."""

FILE_KEYS = tuple(k.key for k in KEYS if k.peak_of is None)  # peaks live in the bw tables


def override_kind(key: str) -> str:
    """The unit kind (``bytes``, ``bandwidth``, ``frequency``, ``count``) of a numeric override key."""
    spec = KEYS_BY_NAME.get(key)
    if spec is None or spec.kind == "dims":
        numeric = ", ".join(k.key for k in KEYS if k.kind != "dims")
        raise InputError(f"'{key}' is not a numeric device key; valid: {numeric}.")
    return spec.kind


def valid_override_keys() -> str:
    return ", ".join(k.key for k in KEYS) + ", hit_rates.<curve>.<a|b|c> (curve: " + \
        ", ".join(HIT_RATE_CURVES) + ")"


def require_typed_unit(spec: DeviceKey, raw: object, label: str) -> None:
    """A value a person typed needs its unit, unless the key names it (``clock_GHz = 1.5`` is 1.5 GHz)."""
    if spec.kind != "dims" and not spec.key.endswith("_GHz"):
        require_unit(raw, spec.kind, key=label)


def parse_value(spec: DeviceKey, raw: object, where: str, label: str | None = None) -> Any:
    label = label or f"{where}{spec.key}"
    if spec.kind == "dims":
        parts: object = raw
        if isinstance(raw, str):
            parts = [p for p in raw.replace("x", ",").split(",")]
        if not isinstance(parts, list | tuple) or len(parts) != 3:
            raise InputError(f"{label}: expected three whole numbers [x, y, z] (e.g. [1024, 1024, 64] or "
                             f"'1024,1024,64'), got {shown(raw)}.")
        value: Any = tuple(parse_quantity(p, "count", key=label) for p in parts)
        if min(value) < spec.minimum:
            raise InputError(f"{label}: every entry must be at least 1, got {shown(raw)}.")
        if max(value) > MAX_BLOCK_DIM:
            raise InputError(f"{label}: {shown(raw)} has an entry above {MAX_BLOCK_DIM}, more threads along one "
                             f"axis of a block than a GPU has (1024 on NVIDIA and AMD).")
        return value
    if spec.key in NONE_REMOVES and is_none(raw):  # the overrides take it before they parse a value
        raise InputError(f"{label}: 'none' is not a value here: only --set and Device.with_overrides take none (it "
                         f"removes {', '.join(NONE_REMOVES[spec.key])}); a device file cannot remove a key its base "
                         f"gives: write a complete file without it.")
    if isinstance(raw, str) or spec.kind == "time":  # typed text: '80' is 80 B or 80 MiB? a bare 373 ns?
        require_typed_unit(spec, raw, label)
    value = parse_quantity(raw, spec.kind, key=label)
    if spec.minimum == 0 and spec.kind in REAL_KINDS and value <= 0:
        raise InputError(f"{label}: must be greater than zero, got {shown(raw)}.")
    if value < spec.minimum:
        raise InputError(f"{label}: must be at least {spec.minimum:g}, got {shown(raw)}.")
    if spec.plausible is not None and not spec.plausible[0] <= value <= spec.plausible[1]:
        raise InputError(f"{label}: {shown(raw)} is {format_quantity(value, spec.kind)}, outside what a GPU has "
                         f"({format_quantity(spec.plausible[0], spec.kind)} to "
                         f"{format_quantity(spec.plausible[1], spec.kind)}){_meant(spec, raw) or '.'}")
    return value


def is_none(raw: object) -> bool:
    """``raw`` asks to remove an optional key: ``None`` or the text ``none`` (any case)."""
    return raw is None or (isinstance(raw, str) and raw.strip().lower() == "none")


def value_problem(spec: DeviceKey, value: object) -> str:
    """What is wrong with ``value`` as the canonical value of ``spec``, or '': its type, its minimum and its
    plausible range. Every :class:`~warpspeed.device.Device` checks its values so, whoever built it (text a
    person typed is read by :func:`parse_value`, which says more: the unit that was probably meant)."""
    if spec.kind == "dims":
        ok = isinstance(value, tuple | list) and len(value) == 3 and all(
            _is_int(x) and 1 <= x <= MAX_BLOCK_DIM for x in value)
        return "" if ok else (f"{spec.key} = {shown(value)} is not valid (must be three whole numbers from 1 to "
                              f"{MAX_BLOCK_DIM})")
    real = spec.kind in REAL_KINDS
    if real:
        ok = isinstance(value, int | float) and not isinstance(value, bool) and abs(value) <= 1e300 and \
            math.isfinite(value) and value > 0
    else:
        ok = _is_int(value) and value >= spec.minimum  # type: ignore[operator]
    lo, hi = spec.plausible if spec.plausible is not None else (spec.minimum, math.inf)
    if ok and lo <= value <= hi:  # type: ignore[operator]
        return ""
    what = "a number" if real else "a whole number"
    return (f"{spec.key} = {shown(value)} is not valid (must be {what} from {format_quantity(lo, spec.kind)} to "
            f"{format_quantity(hi, spec.kind)})")


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _meant(spec: DeviceKey, raw: object) -> str:
    """' ; did you mean ...?' with the number of ``raw`` in the unit that puts it in the plausible range."""
    from ..units import units_of

    try:
        number = float(str(raw).strip().rstrip("".join(c for c in str(raw) if c.isalpha() or c == "/")).strip())
    except ValueError:
        return ""
    assert spec.plausible is not None
    factors = units_of(spec.kind)
    for unit in _SUGGESTED_UNITS.get(spec.kind, ()):
        if spec.plausible[0] <= number * factors[unit] <= spec.plausible[1]:
            return f"; did you mean '{number:g}{unit}'?"
    return ""


_SUGGESTED_UNITS = {"bytes": ("MiB", "KiB", "GiB", "TiB"), "bandwidth": ("GB/s", "TB/s", "MB/s"),
                    "frequency": ("GHz", "MHz", "THz"), "rate": ("G/s", "M/s", "T/s"), "time": ("ns", "us", "ms", "s")}


def value_text(spec: DeviceKey, value: Any) -> str:
    """``value`` with its unit, as :meth:`Device.to_text` lists it; :func:`parse_value` reads it back exactly
    (a value that 6 significant digits would round is written in full)."""
    if spec.kind == "dims":
        return ", ".join(str(v) for v in value)
    text = format_quantity(value, spec.kind)
    if parse_value(spec, text, "") == value:
        return text
    full = {"bandwidth": f"{float(value)!r} GB/s", "frequency": f"{float(value)!r} GHz",
            "rate": f"{float(value)!r} G/s", "time": f"{float(value)!r} s", "bytes": f"{int(value)} B"}
    return full.get(spec.kind, str(value))


def display_value(spec_kind: str, value: Any) -> str:
    """Compact text of a value for an id suffix: 80MiB, 5000GB/s, 1.6GHz, 160, 1024,1024,64."""
    if spec_kind == "dims":
        return ",".join(str(v) for v in value)
    if spec_kind == "float":
        return f"{value:g}"
    return format_quantity(value, spec_kind).replace(" ", "")
