"""The model's ranking of a kernel_tuner space: :func:`rank_tune_params` into a :class:`TuneRanking`, which
records the parameter names and what loads its kernel and device, and that ranking spread over the whole space
(:func:`ordered_params`)."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from ...application.resolve import resolve_device, resolve_kernel
from ...errors import InputError
from ...studies.ranking import Ranking, rank
from .names import NAMES, ParameterNames, checked_names, warn_unmapped
from .origin import Origin, origin_of
from .restrictions import Restriction
from .space import check_dimensions, checked_tune_params, dimensions, tune_space
from .variants import (
    AnyRanking,
    VariantRanking,
    check_same_work,
    check_variant_values,
    merge_variants,
    params_key,
    result_key,
    variant_table,
)


@dataclass(frozen=True)
class TuneRanking(Ranking):
    """A :class:`~warpspeed.studies.ranking.Ranking` of a kernel_tuner space (what :func:`rank_tune_params`
    returns), with the parameter ``names`` it was ranked with and the ``origin`` of its kernel and device.

    Why: :func:`~warpspeed.integrations.kernel_tuner.restriction`, :class:`~warpspeed.integrations.kernel_tuner.
    WarpspeedOrder`, :func:`~warpspeed.integrations.kernel_tuner.x0` and the exports read kernel_tuner's
    configurations with these names when none are given, and the exported files record what loads the
    kernel and device back (:class:`Origin`). ``problem_size`` is kernel_tuner's: the domain as it was given
    (a 2-D kernel's ``(nx, ny)``), else the kernel's domain in its dimensions;
    :func:`~warpspeed.integrations.kernel_tuner.write_cache` writes it, since kernel_tuner refuses a cache whose
    problem_size is not the one given to ``tune_kernel``."""

    names: ParameterNames = NAMES
    origin: Origin | None = None
    problem_size: tuple[int, ...] | None = None


def ranking_names(names: ParameterNames | None, ranking: AnyRanking) -> ParameterNames:
    """The names given; else those ``ranking`` was made with (a :class:`TuneRanking` or
    :class:`~warpspeed.integrations.kernel_tuner.VariantRanking`); else :data:`NAMES`."""
    if names is None and isinstance(ranking, TuneRanking | VariantRanking):
        return ranking.names
    return checked_names(names)


def rank_tune_params(kernel, device, tune_params: Mapping[str, Sequence[Any]], *,
                     names: ParameterNames | None = None,
                     restrictions: Restriction | str | Sequence[Restriction | str] | None = None,
                     domain: Sequence[int] | None = None, registers: int | None = None, model: str | None = None,
                     screen: int | None = None, jobs: int | None = 1, executor=None,
                     cache: str | Path | None = None) -> TuneRanking | VariantRanking:
    """:func:`warpspeed.rank` of exactly the block/folding configurations of a kernel_tuner space.

    ``restrictions``: a function of the parameter dict, a kernel_tuner restriction string, or a list of them
    (each function is called with the dict). Parameters that are neither block nor folding extents (see
    ``names``) do not change an estimate: the ranking holds each block and folding once; :func:`ordered_params`
    spreads it over the full space. ``domain`` is kernel_tuner's ``problem_size`` (default: the kernel's);
    ``registers``, ``model``, ``screen``, ``jobs``, ``executor`` and ``cache`` are :func:`warpspeed.rank`'s.

    Returns a :class:`TuneRanking`: the ranking, the ``names`` it was made with (the other functions of this
    package use them where none are given) and what loads its kernel and device (recorded in exported files).
    A ``domain`` needs as many extents as the kernel has dimensions (an :class:`InputError` otherwise). A
    parameter that looks like a block or folding extent but is not in ``names`` is warned about
    (:func:`~warpspeed.integrations.kernel_tuner.warn_unmapped`): it would be ranked as one that does not change
    an estimate.

    Variant parameters: ``kernel`` may be a mapping ``{parameter: {value: kernel}}`` (``{"layout": {"fzyx":
    "d3q19-srt", "zyxf": "d3q19-srt:layout=zyxf"}}``) whose parameter is in ``tune_params`` and selects the
    kernel that runs. Each value's configurations are ranked with its kernel, and the result is a
    :class:`~warpspeed.integrations.kernel_tuner.VariantRanking` ordered by predicted time per update of the
    domain (as :func:`warpspeed.compare` orders candidate kernels; the kernels must sweep one domain). A value
    of ``tune_params`` without a kernel, or a kernel of a value ``tune_params`` lacks, is an :class:`InputError`
    naming it."""
    names = checked_names(names)
    tune_params = checked_tune_params(tune_params, names)
    variants = variant_table(kernel)
    values = None if variants is None else check_variant_values(*variants, tune_params, names)
    warn_unmapped(tune_params, names)
    space = tune_space(tune_params, names=names, restrictions=restrictions)
    if not space:
        raise InputError("the restrictions exclude every configuration of tune_params: nothing to rank.")
    if isinstance(domain, numbers.Integral):  # kernel_tuner's problem_size may be one integer
        domain = [domain]
    options = {"registers": registers, "model": model, "screen": screen, "jobs": jobs, "executor": executor,
               "cache": cache}
    if variants is None:
        configs = list(dict.fromkeys(c for _, c in space))
        k = _kernel(kernel, domain, "")
        return _ranked(kernel, k, resolve_device(device), configs, domain, names, options, {})
    parameter, table = variants
    kernels = [(v, table[v], _kernel(table[v], domain, f"kernel of {parameter}={v!r}: ")) for v in values]
    check_same_work(parameter, kernels)
    dev = resolve_device(device)
    rankings, done = [], {}
    for v, given, k in kernels:
        configs = list(dict.fromkeys(c for params, c in space if params[parameter] == v))
        if configs:  # a value the restrictions exclude entirely is not ranked
            rankings.append((v, _ranked(given, k, dev, configs, domain, names, options, done)))
    return merge_variants(parameter, rankings, names, rankings[0][1].problem_size, screen)


def _kernel(kernel, domain: Sequence[int] | None, what: str):
    """The kernel resolved for ``domain`` (checked: a triple, and as many extents as the kernel has
    dimensions); ``what`` prefixes an error (which variant's kernel)."""
    try:
        k = resolve_kernel(kernel, domain)  # checks the domain (warpspeed.model.launch.triple)
        if domain is not None:
            check_dimensions(k, domain, "domain", "domain=(nx, ny, nz)")
    except InputError as e:
        if not what:
            raise
        raise InputError(f"rank_tune_params: {what}{e}") from None
    return k


def _ranked(given, k, dev, configs, domain: Sequence[int] | None, names: ParameterNames, options: dict,
            done: dict) -> TuneRanking:
    """One kernel's :class:`TuneRanking` of ``configs``; ``done`` holds the rankings made before, so that a
    kernel met again under another variant value is not ranked again."""
    ranking = done.get((k, tuple(configs)))
    if ranking is None:
        ranking = done[k, tuple(configs)] = rank(k, dev, configs=configs, **options)
    problem_size = tuple(int(v) for v in domain) if domain is not None else k.domain[:dimensions(k)]
    return TuneRanking(**{f.name: getattr(ranking, f.name) for f in fields(Ranking)}, names=names,
                       origin=origin_of(given, k, dev), problem_size=problem_size)


def positions(ranking: AnyRanking) -> dict[tuple, int]:
    """Each ranked block and folding's place (a variant's: its value, block and folding): the ranking's order,
    then a screened ranking's bounded ones (a screened ranking's order is exact for its ``screen`` best only;
    after them it is approximate). Anything but a Ranking is an :class:`InputError`."""
    if not isinstance(ranking, Ranking | VariantRanking):
        raise InputError(f"expected a warpspeed Ranking (from rank_tune_params), got {type(ranking).__name__}.")
    out: dict[tuple, int] = {}
    for c in [r.configuration for r in ranking.results] + [b.configuration for b in ranking.bounded]:
        out.setdefault(result_key(c), len(out))
    return out


def ordered_params(ranking: AnyRanking, tune_params: Mapping[str, Sequence[Any]], *,
                   names: ParameterNames | None = None,
                   restrictions: Restriction | str | Sequence[Restriction | str] | None = None) -> list[dict]:
    """The kernel_tuner space (after the restrictions), best-predicted first.

    Configurations of one block and folding (differing in other parameters) keep kernel_tuner's order; those
    whose block and folding the ranking lacks come last, in kernel_tuner's order. ``names``: default, those of
    the ranking (:class:`TuneRanking`). For a :class:`~warpspeed.integrations.kernel_tuner.VariantRanking` a
    configuration is placed by its variant value, block and folding; one without the variant parameter is an
    :class:`InputError` naming it."""
    pos = positions(ranking)
    names = ranking_names(names, ranking)
    space = tune_space(tune_params, names=names, restrictions=restrictions)
    order = sorted(range(len(space)), key=lambda i: (pos.get(params_key(ranking, names, space[i][0]), len(pos)), i))
    return [space[i][0] for i in order]
