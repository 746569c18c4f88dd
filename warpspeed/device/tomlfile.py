"""Reading TOML data files of the device package: the bytes (bounded), decoding, schema version, value entries."""

from __future__ import annotations

import stat
import tomllib
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..units import shown
from .base import SCHEMA_VERSION, DeviceFileError
from .keys import PEAK_OF

MAX_FILE_BYTES = 2**20
"""The largest device file read (a shipped one has about 10 kB); a bigger one is refused unread."""


def file_problem(p: Path) -> str | None:
    """Why ``p`` cannot be read as a device file (missing, a directory, a device or FIFO, unreadable, too large),
    or None; decided on the path before it is opened, so that no FIFO or /dev/zero is read."""
    try:
        st = p.stat()
    except FileNotFoundError:
        return "does not exist"
    except OSError as e:  # a name too long, a loop of links, a path through a file, no permission
        return f"cannot be read ({e.strerror or type(e).__name__})"
    except ValueError:  # the operating system takes no path with a NUL character
        return "is no usable path (it holds a NUL character)"
    if stat.S_ISDIR(st.st_mode):
        return "is a directory, not a file"
    if not stat.S_ISREG(st.st_mode):
        return "is not a regular file (a device, FIFO or socket)"
    if st.st_size > MAX_FILE_BYTES:
        return f"is {st.st_size} bytes, larger than a device file can be ({MAX_FILE_BYTES} bytes)"
    return None


def read_device_file(p: Path, what: str = "device file", hint: str = "") -> bytes:
    """The bytes of the device file ``p``: an :class:`InputError` naming ``what`` and why it cannot be read
    (:func:`file_problem`, or the error of reading it), with ``hint`` appended to that message."""
    problem = file_problem(p)
    if problem is None:
        try:
            with p.open("rb") as f:
                data = f.read(MAX_FILE_BYTES + 1)
        except OSError as e:
            problem = f"cannot be read ({e.strerror or type(e).__name__})"
        else:
            if len(data) <= MAX_FILE_BYTES:
                return data
            problem = f"is larger than a device file can be ({MAX_FILE_BYTES} bytes)"
    name = str(p) if len(str(p)) <= 200 else shown(str(p))  # a path too long to exist is named, shortened
    raise InputError(f"{what} {name} {problem}{hint}.")


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
        assert isinstance(source, str)  # has_source says so
        out.append((key, raw["value"], source.strip()))
    if key in PEAK_OF and ("peak" in raw or "peak_source" in raw):
        peak_source = raw.get("peak_source", bare_source)
        if ("peak" in raw) != ("peak_source" in raw) and bare_source is None:
            problems.append(f"{key}: 'peak' and 'peak_source' go together; give both or neither.")
        elif "peak" in raw and not (isinstance(peak_source, str) and peak_source.strip()):
            problems.append(f"{key}.peak_source: must be a non-empty text saying where the peak comes from.")
        elif "peak" in raw:
            assert isinstance(peak_source, str)  # the branch before catches any other peak_source
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
