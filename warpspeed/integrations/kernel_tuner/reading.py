"""A kernel_tuner cache or T4 results file read as measurement rows (:func:`read_kernel_tuner`), for
:mod:`warpspeed.measurement.validation`: the file's entries, each configuration that ran as one row."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ...errors import InputError
from ...measurement.measurements import MAX_REGISTERS, NUMBER_RANGE, Measurement, triple_text
from .files import ERROR_VALUES, OBJECTIVE, load_json
from .header import file_kernel, header_device, header_domain, header_names, load_kernel, read_header, variant_header
from .names import ParameterNames, configuration_key
from .space import check_dimensions

Entry = tuple[dict, float | None, int | None, str, str]
"""One entry of a file: (parameters, time in ms or None if it did not run, registers, code, where)."""


def read_kernel_tuner(path: str | Path, *, kernel: str | None = None, device: str | None = None,
                      domain: Sequence[int] | None = None, names: ParameterNames | None = None,
                      select: Mapping[str, Any] | None = None) -> list[Measurement]:
    """A kernel_tuner cache file or T4 results file as measurement rows (:class:`warpspeed.measurement.measurements.
    Measurement`), for :func:`warpspeed.measurement.validation.validate`.

    Per configuration that ran: its block and folding (``names``; default the file's ``warpspeed`` header,
    else :data:`~warpspeed.integrations.kernel_tuner.NAMES`), ``time_s`` from ``time`` (ms), ``GLup_s`` = the
    domain's cells / ``time_s`` / 1e9, ``registers`` from ``num_regs``. ``kernel``, ``device`` and ``domain`` are
    used where the file's ``warpspeed`` header does not name them (the device may also be a warpspeed id, or a
    GPU's reported name, in ``device_name``; without a domain, kernel_tuner's ``problem_size`` is taken, which a
    given domain overrides, since it often counts the arrays' halos). The rows' kernel is what loads the file's
    kernel (a file warpspeed wrote records it: ``kernel_spec``); a given kernel must load the same kernel as the
    header says, and a given domain must equal the header's; a header's device wins (``validate --device``
    estimates on another device; :func:`~warpspeed.integrations.kernel_tuner.recorded_devices` loads a changed
    one). A domain needs as many extents as the kernel has dimensions. ``select`` keeps the entries whose other
    parameters have these values (compared as text): warpspeed compares one time per block and folding. A file of
    a variant ranking (:class:`~warpspeed.integrations.kernel_tuner.VariantRanking`: one kernel per value of its
    variant parameter) is read one kernel at a time: ``select`` must name that parameter's value."""
    p = Path(path)
    doc = load_json(p)
    kind, meta, meta_key = read_header(doc, p)
    meta = variant_header(meta, meta_key, select, p)
    names = header_names(meta, meta_key, names, p)
    if kernel is not None and (not isinstance(kernel, str) or not kernel):
        raise InputError(f"kernel is {kernel!r}; give a catalog name (e.g. star3d-r4) or a kernel TOML path.")
    if kernel is None and not any(k in meta for k in ("kernel", "kernel_spec", "kernel_description")):
        raise InputError(f"{p}: the file does not name the warpspeed kernel (no key {meta_key}.kernel); give it "
                         "(kernel=..., --kernel NAME).")
    dev = header_device(doc, kind, meta, device, p)
    dom, (extents_key, extents) = header_domain(doc, kind, meta, meta_key, domain, p)
    kernel = file_kernel(meta, meta_key, kernel, dom, p)
    if not isinstance(extents, Sequence) or len(extents) < 3:
        what = f"{p}: key {extents_key}" if extents_key != "domain" else "domain"
        check_dimensions(load_kernel(kernel, dom, "kernel", p), extents, what,
                         "domain=(nx, ny, nz), --domain NX,NY,NZ")
    entries = _entries(doc, kind, p)
    if not any(n in params for params, *_ in entries for n in names.block if n):
        raise InputError(f"{p}: no entry holds a block size parameter {[n for n in names.block if n]}; name the "
                         "file's (names=ParameterNames(block=...), --block-names).")
    rows = _rows(entries, names, select, (dev, kernel, dom), p)
    if not rows:
        raise InputError(f"{p}: no configuration that ran" + (" and matches select" if select else "") + ".")
    return rows


def _rows(entries: Sequence[Entry], names: ParameterNames, select: Mapping[str, Any] | None,
          sweep: tuple[str, str, tuple[int, int, int]], p: Path) -> list[Measurement]:
    """The measurement rows of the entries that ran (and match ``select``) on ``sweep`` (device, kernel, domain);
    two of one block and folding are an :class:`InputError`."""
    dev, kernel, dom = sweep
    rows: list[Measurement] = []
    seen: dict[tuple, str] = {}
    cells = math.prod(dom)
    for i, (params, time_ms, regs, code, where) in enumerate(entries, start=1):
        if time_ms is None:
            continue  # a configuration that did not run
        if select and not _selected(params, select, where, p):
            continue
        try:
            c = names.configuration(params)
        except InputError as e:
            raise InputError(f"{p}: {where}: {e}") from None
        if (first := seen.setdefault((*configuration_key(c), code), where)) != where:
            others = sorted(k for k in params if k not in names.all)
            raise InputError(f"{p}: {first} and {where} have the same block {triple_text(c.block)} and folding "
                             f"{triple_text(c.folding)}; warpspeed compares one time per block and folding: keep one "
                             f"by the values of {', '.join(others) or 'the other parameters'} (select=..., "
                             "--select NAME=VALUE).")
        t = time_ms / 1e3
        glups = cells / t / 1e9
        if not NUMBER_RANGE[0] <= glups <= NUMBER_RANGE[1]:
            raise InputError(f"{p}: {where}: time {time_ms!r} ms gives {glups:g} GLup/s for {cells} cells; give the "
                             "kernel time in ms.")
        rows.append(Measurement(dev, kernel, c.block, c.folding, dom, glups, regs,
                                {"time_s": t, "GLup_s": glups, "code": code}, i))
    return rows


def _selected(params: Mapping[str, Any], select: Mapping[str, Any], where: str, p: Path) -> bool:
    for k, v in select.items():
        if k not in params:
            raise InputError(f"{p}: {where} has no parameter {k!r} to select on (its parameters: "
                             f"{', '.join(params)}).")
        if str(params[k]) != str(v):
            return False
    return True


def _number(v, what: str, p: Path) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float) or not v > 0 or not math.isfinite(v):
        raise InputError(f"{p}: {what} is {v!r}; give the kernel time in ms (a positive number).")
    return float(v)


def _registers(v, what: str, p: Path) -> int | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or v != int(v) or not 1 <= v <= MAX_REGISTERS:
        raise InputError(f"{p}: {what} is {v!r}; give a whole number of registers per thread in 1..{MAX_REGISTERS}.")
    return int(v)


def _entries(doc: dict, kind: str, p: Path) -> list[Entry]:
    """(parameters, time in ms or None if it did not run, registers, code, where) per entry of the file."""
    return _cache_entries(doc, p) if kind == "cache" else _t4_entries(doc, p)


def _cache_entries(doc: dict, p: Path) -> list[Entry]:
    """The entries of a cache file (key ``cache``, its parameters named by ``tune_params_keys``)."""
    cache, keys = doc["cache"], doc.get("tune_params_keys")
    if not isinstance(cache, dict):
        raise InputError(f"{p}: key cache is {type(cache).__name__}, not an object of configurations.")
    if keys is not None and (not isinstance(keys, list) or not all(isinstance(k, str) for k in keys)):
        raise InputError(f"{p}: key tune_params_keys is {keys!r}, not a list of parameter names.")
    out = []
    for key, e in cache.items():
        where = f"cache entry {key!r}"
        if not isinstance(e, dict):
            raise InputError(f"{p}: {where} is {e!r}, not an object.")
        params = {k: e[k] for k in keys if k in e} if keys is not None else dict(e)
        if keys is not None and (missing := [k for k in keys if k not in e]):
            raise InputError(f"{p}: {where} lacks the parameter(s) {', '.join(missing)} of tune_params_keys.")
        failed = "__error__" in e or any(isinstance(v, str) and v in ERROR_VALUES for v in e.values())
        if failed:
            out.append((params, None, None, "", where))
            continue
        if OBJECTIVE not in e:
            raise InputError(f"{p}: {where} has no key {OBJECTIVE!r} (the kernel time in ms).")
        code = e.get("code", "")
        out.append((params, _number(e[OBJECTIVE], f"{where}, key {OBJECTIVE!r}", p),
                    _registers(e.get("num_regs"), f"{where}, key 'num_regs'", p),
                    code if isinstance(code, str) else "", where))
    return out


def _t4_entries(doc: dict, p: Path) -> list[Entry]:
    """The entries of a T4 results file (key ``results``; times in ``metadata.timeunit`` unless a measurement
    gives its unit)."""
    results = doc["results"]
    if not isinstance(results, list):
        raise InputError(f"{p}: key results is {type(results).__name__}, not a list.")
    unit = doc.get("metadata", {}).get("timeunit", "milliseconds") if isinstance(doc.get("metadata"), dict) \
        else "milliseconds"
    scale = {"milliseconds": 1.0, "ms": 1.0, "seconds": 1e3, "s": 1e3, "microseconds": 1e-3, "us": 1e-3}.get(unit)
    if scale is None:
        raise InputError(f"{p}: key metadata.timeunit is {unit!r}; give milliseconds, seconds or microseconds.")
    return [_t4_entry(r, f"results[{i}]", scale, p) for i, r in enumerate(results)]


def _t4_entry(r: Any, where: str, scale: float, p: Path) -> Entry:
    """One result of a T4 file; ``scale``: its time unit's in ms."""
    if not isinstance(r, dict) or not isinstance(r.get("configuration"), dict):
        raise InputError(f"{p}: {where} has no object 'configuration'.")
    params = dict(r["configuration"])
    if r.get("invalidity", "correct") != "correct":
        return params, None, None, "", where
    ms = r.get("measurements")
    if not isinstance(ms, list) or not all(isinstance(m, dict) for m in ms):
        raise InputError(f"{p}: {where}.measurements is {ms!r}, not a list of objects.")
    names = [m.get("name") for m in ms]
    wrong = next((n for n in names if n is not None and not isinstance(n, str)), None)
    if wrong is not None:
        raise InputError(f"{p}: {where}.measurements has a name {wrong!r}; each name is a string such as "
                         f"{OBJECTIVE!r}.")
    values = dict(zip(names, ms, strict=True))
    if OBJECTIVE not in values:
        raise InputError(f"{p}: {where}.measurements has no entry named {OBJECTIVE!r} (the kernel time).")
    m = values[OBJECTIVE]
    unit = m.get("unit") or "ms"
    factor = {"ms": 1.0, "s": 1e3, "us": 1e-3}.get(unit) if isinstance(unit, str) else None
    if factor is None:
        raise InputError(f"{p}: {where}.measurements 'time' has unit {m.get('unit')!r}; give ms, s or us.")
    t = _number(m.get("value"), f"{where}.measurements 'time' value", p) * (factor if m.get("unit") else scale)
    regs = values.get("num_regs", {}).get("value")
    code = values.get("code", {}).get("value", "")
    return (params, t, _registers(regs, f"{where}.measurements 'num_regs'", p),
            code if isinstance(code, str) else "", where)
