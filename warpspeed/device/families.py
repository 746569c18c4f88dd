"""Per-architecture-family data: where each kind of model data comes from (``families.toml``), the hit-rate
curves (``hit_rates.toml``) and the latency-model values (``latency.toml``).

A device names its family in ``architecture``. For each kind of model data (:data:`KINDS`) the family says
whether it was measured here, published by an outside source, or assumed from another family; a family
without its own tables takes those of the family it assumes them from (docs/device-format.md, "Families").
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any, Protocol

from ..errors import InputError
from ..units import shown
from .base import HIT_RATE_FILE, LATENCY_FILE, DeviceFileError, suggest
from .hitrates import HIT_RATE_CURVES, HitRateCurve, HitRates, curve_from_table
from .keys import KEYS_BY_NAME, LATENCY_KEYS, parse_value
from .tomlfile import check_schema_version, file_entry, read_toml

FAMILY_FILE = "families.toml"
KINDS = ("hit_rates", "l1_rule", "latency", "parallelism")
"""The kinds of model data a family describes: the hit-rate curves, the L1 wavefront rule, the L2 and DRAM
latencies and the memory-parallelism values of the latency model."""
KIND_TITLES = {"hit_rates": "hit-rate curves", "l1_rule": "L1 rule", "latency": "L2 and DRAM latencies",
               "parallelism": "memory parallelism"}
STATUSES = ("measured", "published", "assumed")
"""Strongest first: fitted to this project's measurements; fitted or measured by an outside source on its own
GPU; taken from another family, never measured on this one."""
LATENCY_KIND_KEYS = {"latency": ("l2_latency", "dram_latency"),
                     "parallelism": tuple(k for k in LATENCY_KEYS if k not in ("l2_latency", "dram_latency"))}
CHIP_SPECIFIC_KEYS = ("l2_request_rate",)
"""Latency-model keys a family never takes from another: the request rate depends on each chip's SMs and L2
slices (latency.toml leaves it out where it was not measured: no request limit)."""


class _OfFamily(Protocol):
    """A device as far as its family goes (this module sits below :class:`~warpspeed.device.Device`)."""

    @property
    def architecture(self) -> str: ...


@dataclass(frozen=True)
class DataOrigin:
    """Where one kind of a family's model data comes from."""

    kind: str                      # one of KINDS
    status: str                    # one of STATUSES
    data_from: str                 # the family whose data it is: its own name unless assumed
    measured_on: tuple[str, ...]   # the GPUs it was measured or published on (empty if assumed)
    files: tuple[str, ...]         # the repository's data files it was fitted on (measured only)
    reason: str                    # where the data comes from, or why the assumption

    def text(self) -> str:
        """``measured``, ``published`` or ``assumed from <family>``."""
        return f"assumed from {self.data_from}" if self.status == "assumed" else self.status

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "from": self.data_from, "measured_on": list(self.measured_on),
                "files": list(self.files), "reason": self.reason}


@dataclass(frozen=True)
class Family:
    """An architecture family and the origin of each kind of its model data (one per :data:`KINDS`)."""

    name: str
    origins: tuple[DataOrigin, ...]
    described: bool = True  # False: a device's own architecture name that families.toml does not describe

    def origin(self, kind: str) -> DataOrigin:
        return next(o for o in self.origins if o.kind == kind)

    @property
    def status(self) -> str:
        """The weakest status of its kinds: a family is ``measured`` only if every kind was."""
        return max((o.status for o in self.origins), key=STATUSES.index)

    @property
    def measured(self) -> bool:
        return self.status == "measured"

    @property
    def assumed_from(self) -> tuple[str, ...]:
        """The families its assumed kinds come from, in the order of :data:`KINDS`, each once."""
        return tuple(dict.fromkeys(o.data_from for o in self.origins if o.status == "assumed"))

    @property
    def validation(self) -> str:
        """One line for a device list: the hit-rate curves' status, and which families the rest is assumed
        from (``measured``; ``published, partly assumed from hopper``; ``assumed from ampere, hopper``)."""
        if not self.described:
            return "assumed (the device file's own data)"
        curves = self.origin("hit_rates").status
        if curves == "assumed":
            return f"assumed from {', '.join(self.assumed_from)}"
        if self.assumed_from:
            return f"{curves}, partly assumed from {', '.join(self.assumed_from)}"
        return self.status

    def text_lines(self) -> list[str]:
        """A heading and one comment line per kind, as ``warpspeed devices show`` lists them."""
        lines = [f"family {self.name}: {self.validation}"]
        width = max(len(t) for t in KIND_TITLES.values())
        for o in self.origins:
            where = ""
            if o.measured_on:
                where = f" on {', '.join(o.measured_on)}"
            if o.files:
                folder = posixpath.commonpath(o.files) if len(o.files) > 1 else o.files[0]
                where += f" ({len(o.files)} files in {folder})" if len(o.files) > 1 else f" ({folder})"
            lines.append(f"  # {KIND_TITLES[o.kind]:<{width}}  {o.text()}{where}: {o.reason}")
        return lines

    def to_dict(self) -> dict[str, Any]:
        """The JSON record: name, overall status, the validation line and each kind's origin."""
        return {"name": self.name, "status": self.status, "validation": self.validation,
                "data": {o.kind: o.to_dict() for o in self.origins}}


def family_named(name: str) -> Family:
    """The family ``name`` of ``families.toml``; an unknown name is an :class:`InputError` listing them."""
    described = families()
    if name not in described:
        raise InputError(f"unknown architecture family {shown(name)}.{suggest(name, described)} Known families: "
                         f"{', '.join(described)}.")
    return described[name]


def device_family(device: _OfFamily) -> Family:
    """The family of a device. An architecture that ``families.toml`` does not describe (a device file that
    gives all four curves itself) is a family whose every kind is assumed: nothing records where it was
    measured."""
    described = families()
    if device.architecture in described:
        return described[device.architecture]
    reason = ("not a family warpspeed describes: the device file gives its own hit-rate curves; nothing "
              "records whether its data was measured")
    return Family(device.architecture, tuple(DataOrigin(k, "assumed", device.architecture, (), (), reason)
                                             for k in KINDS), described=False)


@lru_cache(maxsize=1)
def families() -> dict[str, Family]:
    """Every family of ``devices/families.toml``, by name, in the file's order. The file is checked whole:
    each kind given, statuses known, ``from`` naming another family, no circles, every family of the curve
    and latency files described."""
    path = resources.files("warpspeed.devices").joinpath(FAMILY_FILE)
    return read_families(path.read_bytes(), str(path))


def read_families(data: bytes, path: str) -> dict[str, Family]:
    """The families of a family file's text (checked whole, as :func:`families` says); one
    :class:`DeviceFileError` lists every problem."""
    doc = read_toml(data, path)
    check_schema_version(doc, path)
    names = [n for n in doc if n != "schema_version"]
    problems: list[str] = []
    out = {n: _family(n, doc[n], names, problems) for n in names}
    for kind in KINDS if not problems else ():
        owned = _owned(kind, out)
        for name in names:
            try:
                _data_family(name, kind, out, owned)
            except InputError as e:
                problems.append(str(e))
    for other, tables in ((HIT_RATE_FILE, family_hit_rates()), (LATENCY_FILE, family_latency())):
        problems += [f"[{n}] of {other} is not described here" for n in tables if n not in out]
    if problems:
        raise DeviceFileError(f"family file {path}", problems)
    return out


def _family(name: str, table: object, names: list[str], problems: list[str]) -> Family:
    if not isinstance(table, dict) or set(table) != set(KINDS):
        got = sorted(table) if isinstance(table, dict) else shown(table)
        problems.append(f"[{name}] must hold exactly the kinds {', '.join(KINDS)}; got {got}")
        return Family(name, ())
    origins = []
    for kind in KINDS:
        t, where = table[kind], f"{name}.{kind}"
        if not isinstance(t, dict) or set(t) - {"status", "from", "devices", "files", "reason"}:
            problems.append(f"{where} must be a table of status, from, devices, files and reason")
            continue
        status, data_from, reason = t.get("status"), t.get("from", name), t.get("reason")
        devices, files = t.get("devices", []), t.get("files", [])
        if status not in STATUSES:
            problems.append(f"{where}.status must be one of {', '.join(STATUSES)}, got {shown(status)}")
        elif (status == "assumed") != ("from" in t):
            problems.append(f"{where}: 'from' (the family the data is taken from) goes with status assumed only")
        elif status == "assumed" and (data_from not in names or data_from == name):
            problems.append(f"{where}.from must name another family ({', '.join(names)}), got {shown(data_from)}")
        elif status != "assumed" and not devices:
            problems.append(f"{where}.devices must name the GPUs it was {status} on")
        elif status == "measured" and not files:
            problems.append(f"{where}.files must name the data files it was fitted on (paths in the repository)")
        elif status != "measured" and files:
            problems.append(f"{where}.files (the data files it was fitted on) go with status measured only")
        if not (isinstance(reason, str) and reason.strip()):
            problems.append(f"{where}.reason must be a non-empty text saying where the data comes from")
        if not all(isinstance(x, str) for x in [*devices, *files]) or not isinstance(devices, list) or \
                not isinstance(files, list):
            problems.append(f"{where}: devices and files must be lists of texts")
            continue
        origins.append(DataOrigin(kind, str(status), str(data_from), tuple(devices), tuple(files), str(reason)))
    return Family(name, tuple(origins))


def _data_family(name: str, kind: str, described: dict[str, Family], owned: set[str]) -> str:
    """The family whose own tables of ``kind`` family ``name`` uses: itself if it is in ``owned`` (it has
    tables of its own), else the family its ``kind`` is assumed from, followed on."""
    seen = [name]
    while name not in owned:
        origin = described[name].origin(kind)
        if origin.status != "assumed":
            raise InputError(f"{seen[0]}.{kind}: {name} is {origin.status} but has no data of its own")
        if origin.data_from in seen:
            raise InputError(f"{seen[0]}.{kind}: 'from' goes round in a circle: "
                             f"{' -> '.join([*seen, origin.data_from])}")
        name = origin.data_from
        seen.append(name)
    return name


def _owned(kind: str, described: dict[str, Family]) -> set[str]:
    """The families with data of their own of ``kind``: a table in the curve or latency file, or, for the
    L1 rule (keys of each device file), a status other than assumed."""
    if kind == "hit_rates":
        return set(family_hit_rates())
    if kind in LATENCY_KIND_KEYS:
        return set(family_latency())
    return {n for n, f in described.items() if f.origin(kind).status != "assumed"}


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


def family_curves(name: str) -> HitRates | None:
    """The hit-rate curves of family ``name``: its own tables in ``hit_rates.toml``, else those of the family
    it assumes them from, each source saying so; None for a family ``families.toml`` does not describe."""
    own = family_hit_rates()
    if name in own or name not in families():
        return own.get(name)
    src = _data_family(name, "hit_rates", families(), set(own))
    curves = {c: getattr(own[src], c) for c in HIT_RATE_CURVES}
    return HitRates(**{c: HitRateCurve(k.a, k.b, k.c, _assumed_source(name, "hit_rates", src, k.source))
                       for c, k in curves.items()})


def family_latency_values(name: str) -> dict[str, tuple[Any, str]]:
    """Latency-model key -> (raw value, source) of family ``name``: its own table in ``latency.toml``, else
    the values of the families it assumes them from (never the chip-specific :data:`CHIP_SPECIFIC_KEYS`),
    each source saying so; empty for a family ``families.toml`` does not describe."""
    own = family_latency()
    if name in own or name not in families():
        return own.get(name, {})
    out: dict[str, tuple[Any, str]] = {}
    for kind, keys in LATENCY_KIND_KEYS.items():
        src = _data_family(name, kind, families(), set(own))
        for key in keys:
            if key in own[src] and key not in CHIP_SPECIFIC_KEYS:
                value, source = own[src][key]
                out[key] = (value, _assumed_source(name, kind, src, source))
    return out


def _assumed_source(name: str, kind: str, src: str, source: str) -> str:
    return (f"assumed: the {src} family's value, taken for {name} until measured on it ({FAMILY_FILE}: "
            f"{name} {KIND_TITLES[kind]} assumed from {families()[name].origin(kind).data_from}); "
            f"{src}'s source: {source}")


def hit_rate_families() -> list[str]:
    """The architecture families a device may name without curves of its own: every family of
    ``families.toml`` (its own curves in ``hit_rates.toml`` or those of the family it assumes them from)."""
    return sorted(families())
