"""Changes to a device's values (``with_overrides``, files of changes, ``--set`` parsing), the ids of changed
devices.

It works on attribute values (:func:`~warpspeed.device.description.attribute_values`), not on the
:class:`~warpspeed.device.description.Device` type, which builds its changed copies with it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

from ..errors import InputError
from ..units import MAGNITUDE, format_quantity, shown
from .base import suggest
from .consistency import consistency_problems
from .hitrates import HIT_RATE_CURVES, HitRateCurve, HitRates
from .keys import (
    HIT_RATE_KEYS,
    KEYS_BY_NAME,
    NONE_REMOVES,
    OVERRIDE_KEYS,
    PEAK_OF,
    display_value,
    is_none,
    parse_value,
    valid_override_keys,
)


def split_id(device_id: str) -> tuple[str, dict[str, str]]:
    base, *parts = device_id.split("+")
    suffix: dict[str, str] = {}
    for p in parts:
        k, sep, v = p.partition("=")
        if not sep:
            return device_id, {}
        suffix[k] = v
    return base, suffix


def changed_attributes(current: Mapping[str, Any], changes: Mapping[str, Any], sources: Mapping[str, str],
                       origin: str, problems: list[str], broken: Iterable[str] = ()
                       ) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """(attributes, sources, id suffixes) of a device changed by ``changes``; derived values follow.
    ``current`` is the device's attribute -> value (``attribute_values``); ``sources`` gives per-key citations
    (else ``origin``). A value ``none`` (or None) removes the keys :data:`~warpspeed.device.keys.NONE_REMOVES`
    names (their values None, their sources gone; the id suffix ``+key=none``).

    Every problem (unknown key, unreadable or out-of-range value, broken consistency rule) goes to
    ``problems``; a key with a problem, or named in ``broken`` (a file's keys that failed earlier), is
    left unchanged and out of the consistency checks.
    """
    attrs: dict[str, Any] = {}
    new_sources = dict(current["sources"])
    suffixes: dict[str, str] = {}
    curves = {c: getattr(current["hit_rates"], c) for c in HIT_RATE_CURVES}
    parsed: dict[str, Any] = {}
    removed: dict[str, str] = {}  # key removed by a none -> the key given none
    broken = set(broken)
    for key, raw in changes.items():
        if key in HIT_RATE_KEYS:
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
            suffixes[key] = display_value("float", value)
            continue
        spec = KEYS_BY_NAME.get(key)
        if spec is None:
            problems.append(f"unknown device key {key!r}.{suggest(key, OVERRIDE_KEYS)} "
                            f"Valid keys: {valid_override_keys()}.")
            continue
        if is_none(raw):
            if key in NONE_REMOVES:
                removed.update((k, key) for k in NONE_REMOVES[key] if k not in removed)
                suffixes[key] = "none"
            else:
                problems.append(_none_refused(key))
                broken.add(key)
            continue
        try:
            parsed[key] = parse_value(spec, raw, "")
        except InputError as e:
            text = str(e)
            if key in NONE_REMOVES:  # '0B', 'off': the user meant to remove it
                text = f"{text.rstrip('.')}; {key}=none removes {', '.join(NONE_REMOVES[key])}."
            problems.append(text)
            broken.add(key)
            continue
        attrs[spec.attr] = parsed[key]
        new_sources[key] = sources.get(key, origin)
        suffixes[key] = display_value(spec.kind, parsed[key])

    for key, by in removed.items():
        if key in parsed:
            problems.append(f"{by}=none removes {', '.join(NONE_REMOVES[by])}; {key} cannot also be given a value "
                            f"({shown(changes[key])}): give one or the other.")
            del parsed[key]
            attrs.pop(KEYS_BY_NAME[key].attr, None)
            broken.add(key)
            continue
        attrs[KEYS_BY_NAME[key].attr] = None
        new_sources.pop(key, None)
    if ("l2_size" in parsed or "l2_partitions" in parsed) and "l2_effective_size" not in parsed:
        size = parsed.get("l2_size", current["l2_size_bytes"])
        parts = parsed.get("l2_partitions", current["l2_partitions"])
        attrs["l2_effective_size_bytes"] = size // parts
        new_sources["l2_effective_size"] = (f"derived: l2_size / l2_partitions = "
                                            f"{format_quantity(size, 'bytes')} / {parts} ({origin})")
    for bw, peak in PEAK_OF.items():
        old_peak = current[KEYS_BY_NAME[peak].attr]
        if bw in parsed and peak not in changes and old_peak is not None:
            ratio = parsed[bw] / current[KEYS_BY_NAME[bw].attr]
            top = KEYS_BY_NAME[peak].plausible[1]  # type: ignore[index]
            attrs[KEYS_BY_NAME[peak].attr] = min(old_peak * ratio, max(top, parsed[bw]))
            capped = f", capped at {top:g} GB/s (its range)" if old_peak * ratio > top else ""
            new_sources[peak] = (f"derived: {old_peak:g} GB/s x {ratio:.4g}, scaled like {bw}{capped} ({origin}); "
                                 f"was: {current['sources'].get(peak, '?')}")
    if any(k in changes for k in HIT_RATE_KEYS):
        attrs["hit_rates"] = HitRates(**curves)
    values = {**current, **attrs}
    for key in broken:  # a value that failed to parse takes part in no rule (its derived values neither)
        values.pop(KEYS_BY_NAME[key].attr, None)
        if key in ("l2_size", "l2_partitions"):
            values.pop("l2_effective_size_bytes", None)
    problems.extend(consistency_problems(values))
    return attrs, new_sources, suffixes


def _none_refused(key: str) -> str:
    """Why ``key`` takes no none, and the keys that do."""
    spec = KEYS_BY_NAME[key]
    if spec.required:
        why = "every device has one (a required key)"
    elif spec.derived:
        why = "it is derived when not given (l2_size / l2_partitions): change those, or give it a value"
    else:
        why = ("a latency-model key: a file without it takes its family's value (devices/latency.toml), so none has "
               "no one meaning; give a value")
    return f"{key}=none: {key} cannot be removed, {why}. Keys that take none: {', '.join(NONE_REMOVES)}."


def suffixed_id(device_id: str, suffixes: Mapping[str, str]) -> str:
    """``device_id`` with one ``+key=value`` suffix per change (a repeated key replaces its suffix; a
    ``+key=none`` those of the keys it removes, so that the id rebuilds the device)."""
    base, suffix = split_id(device_id)
    for key, value in suffixes.items():
        if value == "none":
            for gone in NONE_REMOVES.get(key, ()):
                suffix.pop(gone, None)
        suffix[key] = value
    return base + "".join(f"+{k}={v}" for k, v in suffix.items())


def _parse_float(raw: object, label: str) -> float:
    if isinstance(raw, bool):
        raise InputError(f"{label}: expected a number, got {shown(raw)}.")
    if isinstance(raw, str) and len(raw) > 100:
        raise InputError(f"{label}: expected a number (a hit-rate coefficient), got {shown(raw)}.")
    try:
        value = float(raw)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise InputError(f"{label}: expected a number (a hit-rate coefficient), got {shown(raw)}.") from None
    except OverflowError:  # an integer beyond a float
        value = math.inf
    if not abs(value) <= MAGNITUDE[1]:
        raise InputError(f"{label}: expected a finite number from -1e18 to 1e18, got "
                         f"{shown(raw)}.")
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
            raise InputError(f"{option} expects KEY=VALUE text, got {shown(item)}.")
        key, sep, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise InputError(f"{option} {shown(item)} is not KEY=VALUE (e.g. {option} l2_size=80MiB {option} "
                             f"dram_bw=5000GB/s). Valid keys: {valid_override_keys()}.")
        if key in out:
            raise InputError(f"{option} {key} is given twice ({shown(out[key])} and {shown(value)}); give it once.")
        out[key] = value
    return out
