"""Reading TOML data files of the device package: decoding, schema version, value entries."""

from __future__ import annotations

import tomllib
from typing import Any

from ..errors import InputError
from ..units import shown
from .base import SCHEMA_VERSION, DeviceFileError
from .keys import PEAK_OF


def read_toml(data: bytes, path: str) -> dict:
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise InputError(f"device file {path} is not UTF-8 text ({e}).") from None
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"device file {path} is not valid TOML: {e}.") from None
    except RecursionError:  # arrays or tables nested hundreds deep
        raise InputError(f"device file {path} nests arrays or tables too deeply to read; a device value is a "
                         f"number, a text or a table of them.") from None
    except ValueError:  # an integer of over 4,300 digits: Python refuses to read it
        raise InputError(f"device file {path} holds an integer of over 4300 digits; a device value has a few "
                         f"digits, with its unit (e.g. '80MiB').") from None


def check_schema_version(doc: dict, path: str) -> None:
    problems = schema_problems(doc, required=True)
    if problems:
        raise DeviceFileError(f"device file {path}", problems)


def file_entry(raw: object, key: str, *, bare_source: str | None, problems: list[str]) -> list[tuple[str, Any, str]]:
    """(key, raw value, source) of one numeric key in a file: its value and, for a bandwidth table with a
    ``peak``, the peak as key ``<bw>_peak``. Problems go to ``problems``; a part with a problem is left out."""
    if not isinstance(raw, dict):
        if bare_source is None:
            problems.append(f"{key}: give the value with its source, e.g. {key}.value = {shown(raw)} and "
                            f"{key}.source = \"spec: ...\" (bare values are allowed only in files with 'base').")
            return []
        return [(key, raw, bare_source)]
    allowed = {"value", "source"} | ({"peak", "peak_source"} if key in PEAK_OF else set())
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
    if key in PEAK_OF and ("peak" in raw or "peak_source" in raw):
        peak_source = raw.get("peak_source", bare_source)
        if ("peak" in raw) != ("peak_source" in raw) and bare_source is None:
            problems.append(f"{key}: 'peak' and 'peak_source' go together; give both or neither.")
        elif "peak" in raw and not (isinstance(peak_source, str) and peak_source.strip()):
            problems.append(f"{key}.peak_source: must be a non-empty text saying where the peak comes from.")
        elif "peak" in raw:
            out.append((PEAK_OF[key], raw["peak"], peak_source.strip()))
    return out

def schema_problems(doc: dict, *, required: bool) -> list[str]:
    if "schema_version" not in doc:
        if not required:
            return []
        return [f"schema_version: missing; a complete device file starts with 'schema_version = "
                f"{SCHEMA_VERSION}' (only a file of changes, with base = \"<id>\", may leave it out)."]
    v = doc["schema_version"]
    if isinstance(v, bool) or v != SCHEMA_VERSION:
        return [f"schema_version = {shown(v)}: this warpspeed reads version {SCHEMA_VERSION} only; write "
                f"schema_version = {SCHEMA_VERSION}."]
    return []
