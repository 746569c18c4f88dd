"""Measurements converted into kernel_tuner cache files: the measured rows of one sweep
(:func:`measurements_to_cache`), or every sweep of a measurement CSV (:func:`convert_measurements`)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from ...errors import InputError, check_output_file
from ...measurement.measurements import Measurement, read_measurements, triple_text
from ...studies.space import Configuration
from .files import OBJECTIVE, cache_key, kernel_name_of, problem_size_of, write_cache_file
from .names import ParameterNames, checked_names
from .space import tune_params_of


def measurements_to_cache(rows: Sequence[Measurement], path: str | Path, *, names: ParameterNames | None = None,
                          kernel_name: str | None = None, source: str | None = None) -> Path:
    """Write the measured rows of one sweep (one kernel, device and domain; each block and folding once) as a
    kernel_tuner cache file: per configuration its block and folding parameters, the measured median kernel
    time ``time_s`` as ``time`` in ms, the binary's registers as ``num_regs`` (kernel_tuner's RegisterObserver
    key) and the ``code`` that ran; nothing else. ``device_name`` is the GPU's reported name; the ``warpspeed``
    header names the warpspeed kernel, device, domain and ``source`` (the CSV), for
    :func:`~warpspeed.integrations.kernel_tuner.read_kernel_tuner`. The file's folder must exist (an
    :class:`InputError` otherwise)."""
    check_output_file(path, "measurements_to_cache: path")
    names = checked_names(names)
    rows = list(rows)
    where = source or "measurements"
    if not rows:
        raise InputError(f"{where}: no rows to convert.")
    sweeps = {(m.kernel, m.device, m.domain) for m in rows}
    if len(sweeps) > 1:
        raise InputError(f"{where}: the rows hold {len(sweeps)} sweeps (kernel, device, domain); a cache file holds "
                         "one: use convert_measurements, which splits them.")
    configs = [Configuration(m.block, m.folding) for m in rows]
    tp = tune_params_of(configs, names)
    keys = list(tp)
    entries, seen = [], {}
    for m, c in zip(rows, configs, strict=True):
        t = m.values.get("time_s")
        if not isinstance(t, float) or t <= 0:
            raise InputError(f"{where}, line {m.line}: column time_s is {t!r}; a kernel_tuner cache needs the measured "
                             "kernel time.")
        entry: dict = {k: names.params(c)[k] for k in keys}
        if (first := seen.setdefault(cache_key(entry, keys), m)) is not m:
            raise InputError(f"{where}: block {triple_text(m.block)} folding {triple_text(m.folding)} is measured "
                             f"twice (lines {first.line} and {m.line}); a cache holds one time per configuration.")
        entry[OBJECTIVE] = t * 1e3
        if m.registers is not None:
            entry["num_regs"] = m.registers
        if m.code:
            entry["code"] = m.code
        entries.append(entry)
    gpu = {m.values.get("gpu_name") for m in rows}
    kernel, dev, domain = rows[0].kernel, rows[0].device, list(rows[0].domain)
    header = {"device_name": gpu.pop() if len(gpu) == 1 and "" not in gpu and None not in gpu else dev,
              "kernel_name": kernel_name or kernel_name_of(kernel), "problem_size": problem_size_of(domain),
              "tune_params_keys": keys, "tune_params": tp, "objective": OBJECTIVE,
              "warpspeed": {"predicted": False, "kernel": kernel, "device": dev, "domain": domain,
                            "block_names": list(names.block), "folding_names": list(names.folding),
                            **({"source": source} if source else {})}}
    return write_cache_file(path, header, entries)


def convert_measurements(csv_path: str | Path, out_dir: str | Path, *, names: ParameterNames | None = None,
                         source: str | None = None) -> list[Path]:
    """Convert a measurement CSV (:mod:`warpspeed.measurement.measurements`) into one kernel_tuner cache file per sweep
    (:func:`warpspeed.measurement.validation.sweeps`): ``<csv stem>.<kernel>[.<domain>][.<code>].json`` in ``out_dir``.
    ``source`` (default: the CSV path as given) is recorded in each file's header."""
    from ...measurement.validation import sweeps

    p = Path(csv_path)
    groups = sweeps(read_measurements(p))
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = []
    for (kernel, _dev, domain, code), rows in groups.items():
        parts = [p.stem, kernel_name_of(kernel)]
        if sum(k == kernel for k, *_ in groups) > 1:
            parts.append(triple_text(domain))
        if code:
            parts.append(code)
        out.append(measurements_to_cache(rows, out_dir / (".".join(parts) + ".json"), names=names,
                                         source=source or str(csv_path)))
    return out
