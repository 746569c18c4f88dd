"""Loading device files, complete or based on another device, and the shipped devices by id."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..units import MAGNITUDE, format_quantity, shown
from .base import HIT_RATE_FILE, IDENTITY_KEYS, LATENCY_FILE, DeviceFileError, FrozenMap, suggest
from .compute_capability import capability_problems
from .consistency import consistency_problems
from .description import Device, attribute_values
from .families import FAMILY_FILE, family_curves, family_latency_values, hit_rate_families
from .hitrates import HIT_RATE_CURVES, HitRateCurve, HitRates, curve_from_table
from .keys import FILE_KEYS, KEYS, KEYS_BY_NAME, PEAK_OF, parse_value, require_typed_unit
from .overrides import changed_attributes, split_id, suffixed_id
from .shipped import device_ids, looks_like_path, match_id, shipped_files
from .tomlfile import file_entry, file_problem, read_device_file, read_toml, schema_problems


def _file_values(doc: dict, *, bare_source: str | None, problems: list[str]) -> tuple[dict[str, tuple[Any, Any, str]],
                                                                                        set[str]]:
    """The numeric keys of a file: ({key: (raw value, parsed value, source)}, keys given but broken).

    Peaks appear as ``<bw>_peak``. Every problem of the top-level keys (unknown keys, identity strings,
    values) goes to ``problems``, in the order of the file; a file of changes has ``bare_source``.
    """
    values: dict[str, tuple[Any, Any, str]] = {}
    broken: set[str] = set()
    valid = ["schema_version", *(["base"] if bare_source is not None else []), *IDENTITY_KEYS, *FILE_KEYS,
             "hit_rates"]
    for key in doc:
        if key not in valid:
            problems.append(_unknown_key(key, valid))
        elif key in IDENTITY_KEYS and not (isinstance(doc[key], str) and doc[key].strip()):
            problems.append(f"{key} must be a non-empty string, got {shown(doc[key])}.")
        if key not in FILE_KEYS:
            continue
        given = [key] + ([PEAK_OF[key]] if key in PEAK_OF and isinstance(doc[key], dict) and "peak" in doc[key]
                         else [])
        for k, raw, source in file_entry(doc[key], key, bare_source=bare_source, problems=problems):
            spec = KEYS_BY_NAME[k]
            label = f"{key}.peak" if k != key else key
            try:
                require_typed_unit(spec, raw, label)  # a TOML number, too, was typed by a person
                values[k] = (raw, parse_value(spec, raw, "", label=label), source)
            except InputError as e:
                problems.append(str(e))
        broken.update(k for k in given if k not in values)
    return values, broken


def _unknown_key(key: str, valid: list[str]) -> str:
    if key in PEAK_OF.values():
        bw = next(b for b, pk in PEAK_OF.items() if pk == key)
        return (f"unknown key {key!r}: in a file the peak goes in the {bw} table, as {bw}.peak = \"...\" with "
                f"{bw}.peak_source = \"spec: ...\".")
    return f"unknown key {key!r}." + (suggest(key, valid) or f" Valid keys: {', '.join(valid)}.")


def _hit_rates_overrides(doc: dict, problems: list[str]) -> dict[str, HitRateCurve]:
    table = doc.get("hit_rates", {})
    if not isinstance(table, dict):
        problems.append(f"hit_rates must be a table of curves ({', '.join(HIT_RATE_CURVES)}), e.g. "
                        "[hit_rates.l2_z] with a, b, c and source.")
        return {}
    out = {}
    for name, t in table.items():
        if name not in HIT_RATE_CURVES:
            problems.append(f"unknown hit-rate curve {name!r} (hit_rates.{name}).{suggest(name, HIT_RATE_CURVES)} "
                            f"Valid curves: {', '.join(HIT_RATE_CURVES)}.")
            continue
        bad = _coefficient_problems(t, f"hit_rates.{name}")
        if bad:  # checked here: an integer beyond a float would overflow the curve's own check
            problems += bad
            continue
        try:
            out[name] = curve_from_table(t, f"hit_rates.{name}")
        except InputError as e:
            problems.append(str(e))
    return out


def _coefficient_problems(table: object, where: str) -> list[str]:
    """The coefficients a, b, c of a curve table that are not numbers from -1e18 to 1e18, named."""
    if not isinstance(table, dict):
        return []
    return [f"{where}.{c}: expected a number from -1e18 to 1e18, got {shown(v)}."
            for c, v in table.items() if c in ("a", "b", "c") and
            (isinstance(v, bool) or not isinstance(v, int | float) or not abs(v) <= MAGNITUDE[1])]


def _family_problem(family: object, curve_overrides: Mapping[str, HitRateCurve]) -> str | None:
    if not isinstance(family, str) or family_curves(family) is not None or len(curve_overrides) == len(HIT_RATE_CURVES):
        return None
    return (f"architecture {shown(family)} has no hit-rate curves in {HIT_RATE_FILE} or {FAMILY_FILE} (known families: "
            f"{', '.join(hit_rate_families())}); use one of those or give all four [hit_rates.<curve>] tables "
            f"({', '.join(HIT_RATE_CURVES)}).")


def load_device_bytes(data: bytes, path: str, *, stem: str, builtin: bool, depth: int = 0) -> Device:
    """A device file, complete or of changes (``base``). Every problem of the file is reported in one
    :class:`DeviceFileError` (a file that is not TOML stops at that)."""
    where = f"device file {path}"
    doc = read_toml(data, path)
    based = "base" in doc
    if based and builtin:
        raise DeviceFileError(where, ["shipped device files must be complete (no 'base')."])
    problems = schema_problems(doc, required=not based)
    if based:
        return _load_based(doc, path, depth, problems)
    missing = [k for k in IDENTITY_KEYS[1:] if k not in doc]
    missing += [k for k in FILE_KEYS if KEYS_BY_NAME[k].required and k not in doc]
    if missing:
        required = [k for k in FILE_KEYS if KEYS_BY_NAME[k].required]
        optional = [k for k in FILE_KEYS if not KEYS_BY_NAME[k].required]
        problems.append(f"missing key(s) {', '.join(missing)}; a complete device file gives "
                        f"{', '.join(IDENTITY_KEYS[1:])} and {', '.join(required)} (optional: id, "
                        f"{', '.join(optional)} and a peak in the bandwidth tables; a latency-model key left out "
                        f"is its family's), or use base = \"<id>\" to change an existing device.")
    values, broken = _file_values(doc, bare_source=None, problems=problems)
    dev_id = doc.get("id", stem)
    if builtin and dev_id != stem:
        problems.append(f"id {dev_id!r} must equal the file name {stem!r}.")
    family = doc.get("architecture")
    family = family if isinstance(family, str) else None
    curve_overrides = _hit_rates_overrides(doc, problems)
    if (text := _family_problem(family, curve_overrides)) is not None:
        problems.append(text)
    family_set = family_curves(family) if family is not None else None
    base_curves = {c: getattr(family_set, c) for c in HIT_RATE_CURVES} if family_set is not None else {}
    curves = {**base_curves, **curve_overrides}

    attrs: dict[str, Any] = {KEYS_BY_NAME[k].attr: parsed for k, (_, parsed, _) in values.items()}
    sources: dict[str, str] = {k: source for k, (_, _, source) in values.items()}
    for key, (value, source) in (family_latency_values(family) if family is not None else {}).items():
        if key not in doc:
            attrs[KEYS_BY_NAME[key].attr] = parse_value(KEYS_BY_NAME[key], value, f"{LATENCY_FILE} [{family}] ")
            sources[key] = source
    if "l2_effective_size" not in doc and "l2_size_bytes" in attrs and "l2_partitions" in attrs:
        parts = attrs["l2_partitions"]
        attrs["l2_effective_size_bytes"] = attrs["l2_size_bytes"] // parts
        sources["l2_effective_size"] = (f"derived: l2_size / l2_partitions = "
                                        f"{format_quantity(attrs['l2_size_bytes'], 'bytes')} / {parts}")
    for c, curve in curves.items():
        sources[f"hit_rates.{c}"] = curve.source
    for spec in KEYS:  # optional values not given are None (a value given but broken stays out)
        if not spec.required and spec.key not in broken:
            attrs.setdefault(spec.attr, None)
    problems += consistency_problems(attrs)
    problems += capability_problems(doc.get("compute_capability"), attrs)  # a complete file: a real GPU's limits
    if problems:
        raise DeviceFileError(where, problems)
    assert family is not None  # a file without a text architecture has a problem above
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
        problems.append(f"base must be a device id ({', '.join(device_ids())}) or a path, got {shown(base_ref)}.")
    elif depth > 8:
        problems.append("too many nested 'base' files (a cycle?).")
    elif looks_like_path(base_ref):
        base_path = Path(path).parent / base_ref
        try:
            data = read_device_file(base_path, "base file")
            base = load_device_bytes(data, str(base_path), stem=base_path.stem, builtin=False, depth=depth + 1)
        except InputError as e:
            problems.append(str(e) if str(e).startswith("base file") else f"base: {e}")
    else:
        try:
            base = shipped_device(base_ref)
        except InputError as e:
            problems.append(f"base: {e}")
    bare = f"override ({Path(path).name})"
    values, broken = _file_values(doc, bare_source=bare, problems=problems)
    curve_overrides = _hit_rates_overrides(doc, problems)
    identity = {k: doc[k] for k in IDENTITY_KEYS[1:] if k in doc and isinstance(doc[k], str) and doc[k].strip()}
    family = identity.get("architecture", base.architecture if base is not None else None)
    if base is not None and family != base.architecture and \
            (text := _family_problem(family, curve_overrides)) is not None:
        problems.append(text)
    if base is None:
        raise DeviceFileError(where, problems)
    assert family is not None  # the file's text architecture, else the base's
    changes = {k: raw for k, (raw, _, _) in values.items()}
    sources = {k: source for k, (_, _, source) in values.items()}
    attrs, new_sources, suffixes = changed_attributes(attribute_values(base), changes, sources, bare, problems, broken)
    if problems:
        raise DeviceFileError(where, problems)
    new_id = doc.get("id")
    dev = replace(base, id=new_id if isinstance(new_id, str) else suffixed_id(base.id, suffixes),
                  sources=FrozenMap(new_sources), **attrs)
    if "name" not in identity and (changes or curve_overrides):
        identity["name"] = new_id if new_id is not None else f"{base.name} (modified)"
    inherited = dev.hit_rates
    if family != base.architecture:  # a new family brings its own curves
        inherited = family_curves(family) or inherited
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
    hint = f" (built-in ids: {', '.join(device_ids())})" if file_problem(p) == "does not exist" else ""
    data = read_device_file(p, hint=hint)
    return load_device_bytes(data, str(p), stem=p.stem, builtin=False)


@cache
def _shipped(device_id: str) -> Device:
    f = shipped_files()[device_id]
    return load_device_bytes(f.read_bytes(), str(f), stem=device_id, builtin=True)


def shipped_device(text: str) -> Device:
    """A shipped device by id (case-insensitive, or a unique prefix), with the override suffixes an id of a
    changed device carries (``"A100-SXM4-40GB+l2_size=80MiB"``); an unknown id is an :class:`InputError`
    listing the shipped ones."""
    text = text.strip()
    base, suffix = split_id(text)
    found = match_id(base) if base else None
    if found is None:
        raise InputError(f"unknown device {shown(text)}.{suggest(base, device_ids())} Built-in devices: "
                         f"{', '.join(device_ids())}; or give the path of a device TOML file.")
    dev = _shipped(found)
    return dev.with_overrides(**suffix) if suffix else dev
