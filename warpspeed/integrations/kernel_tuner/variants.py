"""Variant parameters: a kernel_tuner parameter that selects which kernel runs (``layout: ["fzyx", "zyxf"]``,
``streaming: ["pull", "aa"]``), ranked together with the block and folding (:class:`VariantRanking`).

Why: the code generator's choice (a layout, a streaming pattern) is often worth more than the block, and
kernel_tuner tunes it as one more parameter. Each value's kernel is ranked over its own configurations; the
merged order is by predicted time per update of the domain, the basis :func:`warpspeed.compare` ranks
candidate kernels on, so every variant must sweep the same domain (:func:`merge_variants` refuses others). A
configuration's key is then (value, block, folding) instead of (block, folding): :func:`result_key` and
:func:`params_key` give either, so that the search and the exports treat both kinds of ranking alike.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

from ...errors import InputError
from ...model.device_validation import DeviceValidation
from ...model.results import Estimate
from ...studies.confidence import Confidence, assess
from ...studies.ranking import RankedResult, Ranking
from ...studies.space import Configuration
from .names import ParameterNames, configuration_key


@dataclass(frozen=True)
class VariantConfiguration:
    """A block and folding of one variant: the variant parameter's ``value`` with the ``configuration``."""

    parameter: str
    value: Any
    configuration: Configuration

    @property
    def block(self) -> tuple[int, int, int]:
        return self.configuration.block

    @property
    def folding(self) -> tuple[int, int, int]:
        return self.configuration.folding

    @property
    def domain(self) -> tuple[int, int, int] | None:
        return self.configuration.domain

    @property
    def key(self) -> tuple:
        """What its prediction depends on: the variant's value, the block and the folding."""
        return (self.value, *configuration_key(self.configuration))

    @property
    def label(self) -> str:
        return f"{self.parameter}={self.value} {self.configuration.label}"

    def to_dict(self) -> dict:
        return {self.parameter: self.value, **self.configuration.to_dict()}


@dataclass(frozen=True)
class VariantResult:
    """One variant's ranked result (its estimate or failure), read as a :class:`RankedResult` is."""

    configuration: VariantConfiguration
    result: RankedResult

    @property
    def estimate(self) -> Estimate | None:
        return self.result.estimate

    @property
    def error(self) -> str | None:
        return self.result.error

    @property
    def performance_GLup_s(self) -> float:
        return self.result.performance_GLup_s

    @property
    def limiter(self) -> str | None:
        return self.result.limiter

    @property
    def data(self) -> dict:
        return {self.configuration.parameter: self.configuration.value, **self.result.data}


@dataclass(frozen=True)
class VariantBound:
    """A configuration of one variant that its screened ranking only bounded (``bound_GLup_s``)."""

    configuration: VariantConfiguration
    bound_GLup_s: float


@dataclass(frozen=True)
class VariantRanking:
    """The rankings of the kernels a variant ``parameter`` selects, merged best first by predicted time per
    update of the domain (what :func:`~warpspeed.integrations.kernel_tuner.rank_tune_params` returns for a
    ``{parameter: {value: kernel}}`` mapping).

    ``variants``: each value (in ``tune_params`` order) with its own :class:`TuneRanking`; ``results`` and
    ``bounded`` hold every variant's, each :class:`VariantResult` naming its value. ``kernel`` names the
    variants for people (``layout: fzyx=d3q19-srt, zyxf=d3q19-srt:layout=zyxf``); ``names`` and ``problem_size`` are as
    a :class:`TuneRanking`'s. Equal times keep the ranking's tie rule (less traffic first), then the values'
    order: two copies of one kernel interleave."""

    parameter: str
    variants: tuple[tuple[Any, Ranking], ...]  # TuneRankings
    results: tuple[VariantResult, ...]
    bounded: tuple[VariantBound, ...]
    names: ParameterNames
    problem_size: tuple[int, ...] | None
    screen: int | None = None

    def __hash__(self) -> int:
        return hash((self.parameter, tuple(v for v, _ in self.variants), self.results))

    @property
    def kernel(self) -> str:
        return f"{self.parameter}: " + ", ".join(f"{v}={r.origin.kernel if r.origin and r.origin.kernel else r.kernel}"
                                                 for v, r in self.variants)

    @property
    def device(self) -> str:
        return self.variants[0][1].device

    @property
    def values(self) -> tuple:
        return tuple(v for v, _ in self.variants)

    def variant(self, value: Any) -> Ranking:
        """The ranking of the kernel that ``value`` selects."""
        for v, r in self.variants:
            if v == value:
                return r
        raise InputError(f"{self.parameter}={value!r} is no variant of this ranking; its values: "
                         f"{', '.join(map(repr, self.values))}.")

    @property
    def best(self) -> VariantResult:
        return self.results[0]

    @property
    def device_validation(self) -> DeviceValidation | None:
        return next((r.estimate.device_validation for r in self.results if r.estimate is not None), None)

    @cached_property
    def confidence(self) -> Confidence:
        """The contenders across variants (configurations are :class:`VariantConfiguration`)."""
        return assess(self.results)  # type: ignore[arg-type]  # read as RankedResults are

    def key_of(self, params: Mapping[str, Any], names: ParameterNames) -> tuple:
        """A kernel_tuner configuration's key: (its variant value, block, folding)."""
        if self.parameter not in params:
            raise InputError(f"configuration {dict(params)} has no variant parameter {self.parameter!r}; the ranking "
                             f"selects its kernel by it (values {', '.join(map(repr, self.values))}).")
        return (params[self.parameter], *configuration_key(names.configuration(params)))


AnyRanking = Ranking | VariantRanking


def result_key(c: Configuration | VariantConfiguration) -> tuple:
    """A ranked configuration's key: (block, folding), or for a variant (value, block, folding)."""
    return c.key if isinstance(c, VariantConfiguration) else configuration_key(c)


def params_key(ranking: AnyRanking, names: ParameterNames, params: Mapping[str, Any]) -> tuple:
    """A kernel_tuner configuration's key in ``ranking`` (see :func:`result_key`)."""
    if isinstance(ranking, VariantRanking):
        return ranking.key_of(params, names)
    return configuration_key(names.configuration(params))


def _order(r: RankedResult, index: int) -> tuple:
    """Merged order: launchable first, shortest time per update of the domain, the ranking's tie rule, the
    value's place in ``tune_params``."""
    key = r.sort_key()
    return (key[0], 0.0 if r.estimate is None else r.estimate.time_s, *key[2:], index)


def merge_variants(parameter: str, rankings: Sequence[tuple[Any, Ranking]], names: ParameterNames,
                   problem_size: tuple[int, ...] | None, screen: int | None) -> VariantRanking:
    """The variants' rankings merged into one :class:`VariantRanking` (the kernels already checked to sweep one
    domain)."""
    tagged = [(_order(r, i), VariantResult(VariantConfiguration(parameter, v, r.configuration), r))
              for i, (v, ranking) in enumerate(rankings) for r in ranking.results]
    bounds = [((-b.bound_GLup_s, i), VariantBound(VariantConfiguration(parameter, v, b.configuration), b.bound_GLup_s))
              for i, (v, ranking) in enumerate(rankings) for b in ranking.bounded]
    tagged.sort(key=lambda t: t[0])
    bounds.sort(key=lambda t: t[0])
    return VariantRanking(parameter, tuple(rankings), tuple(r for _, r in tagged), tuple(b for _, b in bounds),
                          names, problem_size, screen)


def check_same_work(parameter: str, kernels: Sequence[tuple[Any, Any, Any]]) -> None:
    """Refuse variants whose kernels (value, as given, resolved Kernel) sweep different domains: their times per
    launch are then no times per update of one domain (as :func:`warpspeed.compare` refuses such candidates)."""
    domains = {k.domain for _, _, k in kernels}
    if len(domains) > 1:
        text = ", ".join(f"{parameter}={v!r} ({k.name}) sweeps {'x'.join(map(str, k.domain))}" for v, _, k in kernels)
        raise InputError(f"the variants of {parameter!r} do not do the same work: {text}. Give one domain for all "
                         "(domain=, kernel_tuner's problem_size), as warpspeed.compare compares only candidates of "
                         "one domain.")


def variant_table(kernel: Any) -> tuple[str, dict] | None:
    """``(parameter, {value: kernel})`` of a variant mapping given as ``rank_tune_params``'s kernel; None for
    one kernel. A mapping of another shape is an :class:`InputError` showing the one it takes."""
    if not isinstance(kernel, Mapping):
        return None
    shape = "{'layout': {'fzyx': 'd3q19-srt', 'zyxf': 'd3q19-srt:layout=zyxf'}}"
    if len(kernel) != 1:
        raise InputError(f"rank_tune_params: kernel as a mapping names one variant parameter and its kernels, e.g. "
                         f"{shape}; got {len(kernel)} keys ({', '.join(map(repr, kernel))}).")
    ((parameter, table),) = kernel.items()
    if not isinstance(parameter, str) or not parameter:
        raise InputError(f"rank_tune_params: the variant parameter {parameter!r} is no parameter name; e.g. {shape}.")
    if not isinstance(table, Mapping) or not table:
        raise InputError(f"rank_tune_params: kernel[{parameter!r}] is {table!r}; give a mapping of each value of "
                         f"{parameter!r} to its kernel (a catalog name, a Kernel or a kernel TOML path), e.g. {shape}.")
    return parameter, dict(table)


def check_variant_values(parameter: str, table: Mapping, tune_params: Mapping[str, list],
                         names: ParameterNames) -> list:
    """The variant values of ``tune_params`` (its order), each with a kernel in ``table`` and the reverse;
    errors name the values missing on either side."""
    if parameter in names.all:
        raise InputError(f"rank_tune_params: the variant parameter {parameter!r} is a block or folding parameter of "
                         "names; a variant parameter selects the kernel: name another.")
    if parameter not in tune_params:
        raise InputError(f"rank_tune_params: the variant parameter {parameter!r} is not in tune_params (its "
                         f"parameters: {', '.join(tune_params)}); add {parameter!r}: {list(table)} to tune_params.")
    if unhashable := [v for v in tune_params[parameter] if not _hashable(v)]:
        raise InputError(f"rank_tune_params: tune_params[{parameter!r}] holds {unhashable[0]!r}; a variant parameter's "
                         "values are names or numbers (keys of the kernel mapping).")
    values = list(dict.fromkeys(tune_params[parameter]))
    if lacking := [v for v in values if v not in table]:
        raise InputError(f"rank_tune_params: tune_params[{parameter!r}] holds {', '.join(map(repr, lacking))}, which "
                         f"the kernel mapping lacks (it has {', '.join(map(repr, table))}); "
                         "give each value its kernel.")
    if unused := [v for v in table if v not in values]:
        raise InputError(f"rank_tune_params: the kernel mapping has {parameter}={', '.join(map(repr, unused))}, which "
                         f"tune_params[{parameter!r}] lacks (it holds {', '.join(map(repr, values))}); add the "
                         "value to tune_params or remove its kernel.")
    return values


def _hashable(v: Any) -> bool:
    try:
        hash(v)
    except TypeError:
        return False
    return True
