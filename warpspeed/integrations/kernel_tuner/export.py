"""A ranking exported as kernel_tuner's files: its T4 results document (:func:`t4_results`,
:func:`write_t4_results`) and a cache file of predicted times (:func:`write_cache`), which kernel_tuner replays
with ``simulation_mode=True``."""

from __future__ import annotations

import json
import numbers
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ..._version import __version__
from ...errors import InputError, check_output_file
from ...model.launch import triple
from ...studies.ranking import RankedResult
from .files import OBJECTIVE, T4_SCHEMA_VERSION, json_default, kernel_name_of, problem_size_of, write_cache_file
from .names import ParameterNames, names_mismatch
from .ranking import TuneRanking, ordered_params, ranking_names
from .restrictions import Restriction
from .space import tune_params_of
from .variants import AnyRanking, VariantRanking, params_key, result_key


def _domain(ranking: AnyRanking) -> list[int]:
    domains = {tuple(r.estimate.domain) if r.estimate is not None else r.configuration.domain
               for r in ranking.results} - {None}
    if not domains:
        raise InputError(f"no configuration of the ranking of {ranking.kernel} on {ranking.device} can launch: "
                         "nothing to export.")
    if len(domains) != 1:
        raise InputError(f"the ranking spans {len(domains)} domains; a kernel_tuner file has one problem size: "
                         "export one ranking per domain.")
    return list(domains.pop())


def _ranked_tune_params(ranking: AnyRanking, names: ParameterNames) -> dict[str, list]:
    """The smallest ``tune_params`` holding the ranking's configurations (a variant ranking's parameter
    first, its values in their order)."""
    tp = tune_params_of((r.configuration for r in ranking.results), names)
    return {ranking.parameter: list(ranking.values), **tp} if isinstance(ranking, VariantRanking) else tp


def _predicted_entries(ranking: AnyRanking, tune_params, names, restrictions) -> list[tuple[dict, RankedResult]]:
    """The space's configurations that the ranking estimated in full, best-predicted first."""
    names = ranking_names(names, ranking)
    if tune_params is None:
        tune_params = _ranked_tune_params(ranking, names)
    by_key = {result_key(r.configuration): r for r in ranking.results}
    out = []
    for params in ordered_params(ranking, tune_params, names=names, restrictions=restrictions):
        r = by_key.get(params_key(ranking, names, params))
        if r is not None:
            out.append((params, r))
    if not out:
        raise InputError(f"no configuration of tune_params (after the restrictions) is in the ranking; "
                         f"{names_mismatch(names, list(tune_params))}")
    return out


def _metadata(ranking: AnyRanking, names: ParameterNames, domain: list[int]) -> dict:
    """The ``warpspeed`` object of an exported file: the kernel's and device's names (for people) and, for a
    :class:`TuneRanking`, what loads them (:class:`~warpspeed.integrations.kernel_tuner.Origin`); for a
    :class:`~warpspeed.integrations.kernel_tuner.VariantRanking` the variant parameter and, per value, its
    kernel's name and what loads it."""
    if isinstance(ranking, VariantRanking):
        origin = _variant_origin(ranking)
    else:
        origin = ranking.origin.to_dict() if isinstance(ranking, TuneRanking) and ranking.origin else {}
    return {"predicted": True, "kernel": ranking.kernel, "device": ranking.device, "domain": domain, **origin,
            "model": ranking.best.estimate.model if ranking.best.estimate else None, "block_names": list(names.block),
            "folding_names": list(names.folding), "warpspeed_version": __version__}


def _variant_origin(ranking: VariantRanking) -> dict:
    """What loads a variant ranking's kernels and device: the device's origin once, the variant parameter, and
    each variant's kernel in ``variants`` (``value``, ``kernel`` and what loads it: ``kernel_spec``,
    ``kernel_description``)."""
    variants, device = [], {}
    for value, r in ranking.variants:
        origin = r.origin.to_dict() if r.origin else {}
        device = device or {k: origin[k] for k in ("device_spec", "device_overrides") if k in origin}
        variants.append({"value": value, "kernel": r.kernel,
                         **{k: origin[k] for k in ("kernel_spec", "kernel_description") if k in origin}})
    return {**device, "variant_parameter": ranking.parameter, "variants": variants}


def _kernel_name(ranking: AnyRanking) -> str:
    """The default ``kernel_name``: the kernel's name as an identifier (a variant ranking's: its first
    variant's kernel)."""
    kernel = ranking.variants[0][1].kernel if isinstance(ranking, VariantRanking) else ranking.kernel
    return kernel_name_of(kernel)


def t4_results(ranking: AnyRanking, tune_params: Mapping[str, Sequence[Any]] | None = None, *,
               names: ParameterNames | None = None,
               restrictions: Restriction | str | Sequence[Restriction | str] | None = None) -> dict:
    """The ranking as kernel_tuner's T4 results document (schema 1.0.0), best-predicted first.

    One result per configuration of ``tune_params`` (default: the ranking's blocks and foldings) that the
    ranking estimated in full: measurements ``time`` (predicted kernel time, ms), ``GLup_s`` and ``num_regs`` (the
    registers per thread the estimate assumed); a configuration that cannot launch is ``invalidity: "runtime"``.
    ``metadata.warpspeed`` names the kernel, device, domain and parameter names (for a :class:`TuneRanking` also
    what loads its kernel and device), so that :func:`~warpspeed.integrations.kernel_tuner.read_kernel_tuner`
    reads the file back. A :class:`~warpspeed.integrations.kernel_tuner.VariantRanking`'s file holds every
    variant (its parameter among the configuration's) and records each value's kernel (``variant_parameter``,
    ``variants``); it is read back one variant at a time (``select={parameter: value}``)."""
    names = ranking_names(names, ranking)
    domain = _domain(ranking)
    results = []
    for params, r in _predicted_entries(ranking, tune_params, names, restrictions):
        item: dict = {"configuration": params, "objectives": [OBJECTIVE], "times": {},
                      "invalidity": "runtime" if r.error else "correct", "correctness": 1, "measurements": []}
        if r.estimate is not None:
            item["measurements"] = [{"name": OBJECTIVE, "value": r.estimate.time_s * 1e3, "unit": "ms"},
                                    {"name": "GLup_s", "value": r.performance_GLup_s, "unit": "GLup/s"},
                                    {"name": "num_regs", "value": r.estimate.occupancy.registers, "unit": ""}]
        results.append(item)
    return {"schema_version": T4_SCHEMA_VERSION, "results": results,
            "metadata": {"timeunit": "milliseconds", "warpspeed": _metadata(ranking, names, domain)}}


def write_t4_results(path: str | Path, ranking: AnyRanking, tune_params: Mapping[str, Sequence[Any]] | None = None,
                     *, names: ParameterNames | None = None,
                     restrictions: Restriction | str | Sequence[Restriction | str] | None = None) -> Path:
    """Write :func:`t4_results` as JSON; returns the path. Its folder must exist (an :class:`InputError`
    otherwise, before any work)."""
    p = Path(path)
    check_output_file(p, "write_t4_results: path")
    p.write_text(json.dumps(t4_results(ranking, tune_params, names=names, restrictions=restrictions),
                            indent=1, default=json_default) + "\n")
    return p


def write_cache(path: str | Path, ranking: AnyRanking, tune_params: Mapping[str, Sequence[Any]] | None = None, *,
                names: ParameterNames | None = None,
                restrictions: Restriction | str | Sequence[Restriction | str] | None = None,
                kernel_name: str | None = None, problem_size: Sequence[int] | int | None = None) -> Path:
    """The ranking as a kernel_tuner cache file: each configuration's predicted kernel time in ms as ``time``
    (its ``GLup_s``, and the registers per thread the estimate assumed as ``num_regs``), like a measured cache;
    one that cannot launch is ``__error__: RuntimeFailedConfig``.

    ``tune_params`` (default: the ranking's blocks and foldings), ``kernel_name`` (default: the kernel's
    name as an identifier) and ``problem_size`` must be those given to ``tune_kernel`` (kernel_tuner refuses
    the cache otherwise); ``problem_size`` defaults to the domain as
    :func:`~warpspeed.integrations.kernel_tuner.rank_tune_params` was given it, else the ranked domain without its
    trailing extents of 1 (:func:`~warpspeed.integrations.kernel_tuner.files.problem_size_of`); ``device_name`` is
    the warpspeed device id; the ``warpspeed`` object names the kernel and device and, for a :class:`TuneRanking`,
    records what loads them (:class:`~warpspeed.integrations.kernel_tuner.Origin`); a variant ranking's records
    each value's kernel, as :func:`t4_results` does, and its default ``kernel_name`` is the first variant's
    kernel's (kernel_tuner tunes one kernel function: give the one ``tune_kernel`` gets). Replay it with
    ``tune_kernel(..., cache=path, simulation_mode=True, restrictions=cached_restriction(path))``. The file's
    folder must exist (an :class:`InputError` otherwise, before any work: a typo in a folder name should not
    create folders)."""
    check_output_file(path, "write_cache: path")
    names = ranking_names(names, ranking)
    domain = _domain(ranking)
    if problem_size is None and isinstance(ranking, TuneRanking | VariantRanking) and ranking.problem_size is not None:
        problem_size = ranking.problem_size
    size = problem_size_of(domain) if problem_size is None else _given_problem_size(problem_size)
    items = _predicted_entries(ranking, tune_params, names, restrictions)
    tp = dict(tune_params) if tune_params is not None else _ranked_tune_params(ranking, names)
    entries = []
    for params, r in items:
        entry = dict(params)
        if r.estimate is None:
            entry["__error__"] = "RuntimeFailedConfig"
        else:
            entry.update({OBJECTIVE: r.estimate.time_s * 1e3, "GLup_s": r.performance_GLup_s,
                          "num_regs": r.estimate.occupancy.registers})
        entries.append(entry)
    header = {"device_name": ranking.device, "kernel_name": kernel_name or _kernel_name(ranking),
              "problem_size": size, "tune_params_keys": list(tp), "tune_params": tp, "objective": OBJECTIVE,
              "warpspeed": _metadata(ranking, names, domain)}
    return write_cache_file(path, header, entries)


def _given_problem_size(problem_size: Sequence[int] | int) -> list[int]:
    """A problem_size given to :func:`write_cache`, checked (1 to 3 positive integers, as given)."""
    size = [problem_size] if isinstance(problem_size, numbers.Integral) else problem_size
    triple(size, "write_cache: problem_size")
    return [int(v) for v in size]
