"""What kernel_tuner's cache and T4 results files share, for writing and reading them: the objective, the error
markers, the cache's layout and keys, JSON in and out, kernel names and problem sizes (docs/kernel-tuner.md)."""

from __future__ import annotations

import json
import numbers
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...errors import InputError, read_text

OBJECTIVE = "time"  # kernel_tuner's default objective: the kernel time in ms
T4_SCHEMA_VERSION = "1.0.0"  # the T4 results schema kernel_tuner 1.5 ships (schema/T4/1.0.0)
ERROR_VALUES = ("ErrorConfig", "InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig")
"""How kernel_tuner's cache files mark a configuration that did not run (a value of one of its keys)."""


def kernel_name_of(kernel: str) -> str:
    """A C identifier for kernel_tuner's ``kernel_name`` from a warpspeed kernel name (``star3d-r4`` ->
    ``star3d_r4``)."""
    name = re.sub(r"\W", "_", Path(kernel).stem if kernel.endswith(".toml") else kernel)
    return name if name and not name[0].isdigit() else f"k_{name}"


def problem_size_of(domain: Sequence[int]) -> list[int]:
    """A domain as kernel_tuner's problem_size: without its trailing extents of 1, as a kernel of fewer
    dimensions is tuned (a 2-D kernel's ``[nx, ny]``; kernel_tuner refuses a cache of ``[nx, ny, 1]`` for
    ``problem_size=(nx, ny)``)."""
    out = [int(v) for v in domain]
    while len(out) > 1 and out[-1] == 1:
        out.pop()
    return out


def json_default(v):
    """JSON for the numbers JSON does not know (numpy's integers and floats)."""
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    raise TypeError(f"{v!r} is not JSON")


def cache_key(params: Mapping[str, Any], keys: Sequence[str]) -> str:
    """A configuration's key in a cache file: its values of ``keys`` (``tune_params_keys``) joined by commas."""
    return ",".join(str(params[k]) for k in keys)


def write_cache_file(path: str | Path, header: dict, entries: Sequence[dict]) -> Path:
    """A cache file in kernel_tuner's own layout: the header, then one configuration per line, closed."""
    keys = header["tune_params_keys"]
    head = json.dumps({**header, "cache": {}}, indent="", default=json_default)
    lines = [json.dumps({cache_key(e, keys): e}, default=json_default)[1:-1] for e in entries]
    p = Path(path)
    p.write_text(head[:-3] + ("\n" + ",\n".join(lines) if lines else "") + "}\n}\n")
    return p


def load_json(p: Path) -> Any:
    """A cache or T4 results file's JSON; a cache of an interrupted kernel_tuner run is closed as kernel_tuner
    closes it. Not JSON: an :class:`InputError` naming the line and column."""
    text = read_text(p, "kernel_tuner file", "a kernel_tuner cache or T4 results file is UTF-8 JSON")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        stripped = text.rstrip()
        if stripped.endswith(","):  # a cache of an interrupted kernel_tuner run: close it as kernel_tuner does
            try:
                return json.loads(stripped[:-1] + "}\n}")
            except json.JSONDecodeError:
                pass
        raise InputError(f"{p}, line {e.lineno}, column {e.colno}: not JSON ({e.msg}); a kernel_tuner cache or T4 "
                         "results file is JSON.") from None
