"""The ranking steering kernel_tuner's search: :func:`restriction` keeps what the model thinks can win,
:class:`WarpspeedOrder` measures what the model cannot decide and then the best-predicted first, :func:`x0`
starts kernel_tuner's local strategies at the best-predicted configuration."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import InputError
from .names import ParameterNames, names_mismatch, positive_int
from .ranking import ordered_params, positions, ranking_names
from .restrictions import Restriction, as_restriction
from .variants import AnyRanking, VariantRanking, params_key, result_key

STRATEGY_OPTIONS = ("max_fevals", "time_limit", "searchspace_construction_options")


def x0(ranking: AnyRanking, tune_params: Mapping[str, Sequence[Any]], *, names: ParameterNames | None = None,
       restrictions: Restriction | str | Sequence[Restriction | str] | None = None) -> list:
    """The best-predicted configuration as kernel_tuner's ``x0`` strategy option: its values in ``tune_params``
    order (``strategy_options={"x0": x0(...)}`` starts greedy_ils, basinhopping, ... there); of a variant
    ranking, the best-predicted variant value with its block."""
    pos = positions(ranking)
    n = ranking_names(names, ranking)
    for params in ordered_params(ranking, tune_params, names=n, restrictions=restrictions):
        if params_key(ranking, n, params) in pos:
            return [params[k] for k in tune_params]
    raise InputError(f"x0: no configuration of tune_params (after the restrictions) is in the ranking; "
                     f"{names_mismatch(n, list(tune_params))}")


def restriction(ranking: AnyRanking, *, names: ParameterNames | None = None, top: int | None = None,
                within: float | None = None) -> Restriction:
    """A kernel_tuner ``restrictions=`` function that keeps the configurations the model ranks among its ``top``
    N, or whose predicted performance is at least ``within`` (a share, e.g. 0.9) of the predicted best.

    Why: kernel_tuner then measures only what the model thinks can win. It takes the dict of all parameters
    (others than block and folding are ignored); a block and folding the ranking lacks, or that cannot launch,
    is not kept. It works alone or in kernel_tuner's list of restrictions
    (:func:`~warpspeed.integrations.kernel_tuner.restrictions.as_restriction`). ``names``: default, those of the
    ranking (:class:`~warpspeed.integrations.kernel_tuner.TuneRanking`); a configuration without any of their
    block parameters, and (before kernel_tuner's search) a space that holds none of the kept configurations, are
    an :class:`InputError` (kernel_tuner would otherwise report an empty search space as "max_fevals must be
    greater than zero"). Of a :class:`~warpspeed.integrations.kernel_tuner.VariantRanking` it keeps (variant
    value, block, folding) triples: the ``top`` N across all variants."""
    positions(ranking)
    names = ranking_names(names, ranking)
    if (top is None) == (within is None):
        raise InputError("restriction: give one of top= (the number of best-predicted configurations to keep) or "
                         "within= (a share of the predicted best, e.g. 0.9).")
    launchable = [r for r in ranking.results if not r.error]
    if not launchable:
        raise InputError(f"restriction: no configuration of the ranking of {ranking.kernel} on {ranking.device} can "
                         "launch.")
    kept = _top(ranking, launchable, top) if top is not None else _within(ranking, launchable, within)
    keep = frozenset(result_key(r.configuration) for r in kept)
    label = f"restriction(top={top})" if top is not None else f"restriction(within={within:g})"

    def keep_predicted(params: dict) -> bool:
        """True for a configuration whose block and folding the model ranks among the kept ones."""
        if not any(n in params for n in names.block if n is not None):
            raise InputError(f"restriction: configuration {dict(params)} has no block size parameter; "
                             f"{names_mismatch(names, list(params))}")
        return params_key(ranking, names, params) in keep

    def keeps_some(space: Mapping[str, Sequence]) -> None:
        """Refuse a space that holds none of the kept configurations (kernel_tuner would search nothing)."""
        if not any(n in space for n in names.block if n is not None) or any(_in_space(ranking, k, names, space)
                                                                           for k in keep):
            return  # a space without block parameters: keep_predicted names them for each configuration
        if (variant := _variant(ranking)) and variant[0] not in space:
            raise InputError(f"{label}: kernel_tuner's search space (parameters {', '.join(map(str, space))}) has no "
                             f"variant parameter {variant[0]!r}, by which the ranking selects its kernel (values "
                             f"{', '.join(map(repr, ranking.values))}); tune the space that was ranked.")
        shared = sum(_in_space(ranking, k, names, space) for k in positions(ranking))
        tuned = ", ".join(f"{n} {list(space[n])}" for n in (*_variant(ranking), *names.all) if n in space)
        raise InputError(
            f"{label}: kernel_tuner's search space ({tuned}) lacks "
            + ("the configuration it keeps " if len(keep) == 1 else f"all {len(keep)} configurations it keeps ")
            + (f"(it holds {shared} other configurations of the ranking)" if shared else
               f"and shares no configuration with the ranking of {ranking.kernel} on {ranking.device}")
            + ", so kernel_tuner would search nothing (\"max_fevals must be greater than zero\"). Rank the space "
            "kernel_tuner tunes: rank_tune_params(kernel, device, tune_params, restrictions=...) with the tune_params "
            "and restrictions given to tune_kernel, then restriction(ranking, ...)"
            + ("; or keep more (a larger top, a smaller within)." if shared else "."))

    return as_restriction(keep_predicted, label, (keeps_some,))


def _top(ranking: AnyRanking, launchable: list, top: Any) -> list:
    """The ``top`` best-predicted of the launchable results, checked against a screened ranking's bounds."""
    if not positive_int(top):
        raise InputError(f"restriction: top is {top!r}; give a positive number of configurations.")
    kept = launchable[:top]
    if ranking.bounded and (len(kept) < top or max(b.bound_GLup_s for b in ranking.bounded)
                            > kept[-1].performance_GLup_s):
        raise InputError(f"restriction: the ranking is screened (screen={ranking.screen}): beyond its "
                         f"{ranking.screen} best, configurations it only bounded may belong to the top {top}; "
                         f"give top <= {ranking.screen}, or rank with screen >= {top} or without screen.")
    return kept


def _within(ranking: AnyRanking, launchable: list, within: Any) -> list:
    """The launchable results predicted within the share ``within`` of the best, checked against a screened
    ranking's bounds."""
    if isinstance(within, bool) or not isinstance(within, numbers.Real) or not 0 < within <= 1:
        raise InputError(f"restriction: within is {within!r}; give a share of the predicted best in (0, 1], "
                         "e.g. 0.9.")
    floor = within * launchable[0].performance_GLup_s
    if any(b.bound_GLup_s >= floor for b in ranking.bounded):
        raise InputError(f"restriction: the ranking is screened (screen={ranking.screen}) and some configurations "
                         f"it only bounded may be within {within:g} of the best; rank without screen.")
    return [r for r in launchable if r.performance_GLup_s >= floor]


def _variant(ranking: AnyRanking) -> tuple[str, ...]:
    """The variant parameter of a :class:`VariantRanking` (none of another ranking)."""
    return (ranking.parameter,) if isinstance(ranking, VariantRanking) else ()


def _in_space(ranking: AnyRanking, key: tuple, names: ParameterNames, space: Mapping[str, Sequence]) -> bool:
    """Whether kernel_tuner's space (parameter name -> its values) holds a block and folding (of a variant:
    its value among the variant parameter's values): each named axis's extent among its parameter's values, an
    axis whose parameter the space lacks at extent 1."""
    if variant := _variant(ranking):
        if key[0] not in space.get(variant[0], ()):
            return False
        key = key[1:]
    return all(v in space[n] if n in space else v == 1
               for names3, extents in zip((names.block, names.folding), key, strict=True)
               for n, v in zip(names3, extents, strict=True))


class WarpspeedOrder:
    """A kernel_tuner strategy: measure what the model cannot decide, then the best-predicted first.

    ``tune_kernel(..., strategy=WarpspeedOrder(ranking), strategy_options={"max_fevals": 20})``. It walks
    kernel_tuner's search space (after its restrictions): first the configurations the ranking's
    ``confidence`` says to measure (its contenders; for an access pattern the model was not validated on also
    the best-predicted block of every x-extent), then the others in
    :func:`~warpspeed.integrations.kernel_tuner.ordered_params` order, and stops at ``max_fevals`` or
    ``time_limit``. Without either it measures the confidence's configurations only. A ranked configuration
    outside the space is skipped. ``names``: default, those of the ranking
    (:class:`~warpspeed.integrations.kernel_tuner.TuneRanking`); a search space none of whose configurations is
    in the ranking is an :class:`InputError` naming the parameters expected. A
    :class:`~warpspeed.integrations.kernel_tuner.VariantRanking` is walked the same way over the mixed space:
    its contenders across variants first, then (variant value, block, folding) best-predicted first."""

    def __init__(self, ranking: AnyRanking, names: ParameterNames | None = None):
        positions(ranking)
        self.ranking = ranking
        self.names = ranking_names(names, ranking)
        self.first = tuple(result_key(c) for c in ranking.confidence.measure)

    def _key(self, keys: list[str], values) -> tuple:
        """The ranking's key of a kernel_tuner configuration (its values in ``keys`` order)."""
        return params_key(self.ranking, self.names, dict(zip(keys, values, strict=True)))

    def _position(self, key: tuple, ranked: dict[tuple, int]) -> int:
        if key in self.first:
            return self.first.index(key)
        return len(self.first) + ranked.get(key, len(ranked))

    def order(self, searchspace) -> list[tuple]:
        """The configurations of a kernel_tuner ``Searchspace`` as value tuples: the confidence's first, then
        best-predicted first."""
        keys = list(searchspace.tune_params)
        configs = searchspace.sorted_list()
        ranked = positions(self.ranking)
        rank_of = [self._position(self._key(keys, c), ranked) for c in configs]
        if configs and min(rank_of) >= len(self.first) + len(ranked):
            raise InputError(f"WarpspeedOrder: no configuration of kernel_tuner's search space is in the ranking; "
                             f"{names_mismatch(self.names, keys)}")
        return [configs[i] for i in sorted(range(len(configs)), key=lambda i: (rank_of[i], i))]

    def tune(self, searchspace, runner, tuning_options) -> list[dict]:
        """kernel_tuner's strategy interface: measure in order through its cost function, return its results."""
        from kernel_tuner.strategies.common import CostFunc
        from kernel_tuner.util import StopCriterionReached

        options = tuning_options.strategy_options or {}
        if unknown := sorted(set(options) - set(STRATEGY_OPTIONS)):
            raise InputError(f"WarpspeedOrder: unknown strategy option(s) {', '.join(unknown)}; it takes "
                             f"{', '.join(STRATEGY_OPTIONS)}.")
        order = self.order(searchspace)
        if "max_fevals" not in options and "time_limit" not in options:  # the confidence's configurations only
            keys = list(searchspace.tune_params)
            order = [c for c in order if self._key(keys, c) in self.first] or order[:1]
        cost = CostFunc(searchspace, tuning_options, runner, snap=False)
        try:
            for c in order:
                cost(list(c))
        except StopCriterionReached:
            pass
        return cost.results
