"""kernel_tuner's search space as warpspeed sees it: ``tune_params`` checked, its configurations in kernel_tuner's
order with their block and folding, the smallest ``tune_params`` holding some configurations, and the check that
a domain (kernel_tuner's ``problem_size``) has as many extents as the kernel has dimensions."""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...errors import InputError
from ...expressions import THREAD_VARS, variables
from ...kernel import Kernel
from ...studies.space import Configuration
from .names import ParameterNames, checked_names, positive_int
from .restrictions import Restriction, combined


def checked_tune_params(tune_params: Mapping[str, Sequence[Any]], names: ParameterNames | None = None
                        ) -> dict[str, list]:
    """``tune_params`` as a dict of lists, checked: every block and folding value a positive integer, at least
    one block parameter present. Errors name the parameter and what is valid."""
    names = checked_names(names)
    if not isinstance(tune_params, Mapping) or not tune_params:
        raise InputError(f"tune_params must be a non-empty dict of parameter name -> list of values, got "
                         f"{tune_params!r}.")
    out: dict[str, list] = {}
    for k, values in tune_params.items():
        if not isinstance(k, str):
            raise InputError(f"tune_params: parameter name {k!r} is not a string.")
        if isinstance(values, str | bytes) or not isinstance(values, Iterable):
            raise InputError(f"tune_params[{k!r}] is {values!r}; give the list of its values.")
        out[k] = list(values)
        if not out[k]:
            raise InputError(f"tune_params[{k!r}] is empty; give at least one value.")
        if k in names.all and (bad := [v for v in out[k] if not positive_int(v)]):
            what = "block size" if k in names.block else "folding"
            raise InputError(f"tune_params[{k!r}] holds {bad[0]!r}; a {what} parameter takes positive integers "
                             f"(e.g. [1, 2, 4]).")
    if not any(n in out for n in names.block if n is not None):
        raise InputError(f"none of the block size parameters {[n for n in names.block if n]} is in tune_params "
                         f"(its parameters: {', '.join(out)}); name yours with "
                         "ParameterNames(block=('bx', 'by', 'bz')).")
    return out


def tune_space(tune_params: Mapping[str, Sequence[Any]], *, names: ParameterNames | None = None,
               restrictions: Restriction | str | Sequence[Restriction | str] | None = None
               ) -> list[tuple[dict, Configuration]]:
    """The configurations of a kernel_tuner space in kernel_tuner's order (the product of the value lists, the
    last parameter varying fastest) that pass the restrictions, each with its block and folding."""
    names = checked_names(names)
    tp = checked_tune_params(tune_params, names)
    keep = combined(restrictions)
    keys = list(tp)
    out = []
    for values in itertools.product(*tp.values()):
        params = dict(zip(keys, values, strict=True))
        if keep(params):
            out.append((params, names.configuration(params)))
    return out


def tune_params_of(configs: Iterable[Configuration], names: ParameterNames | None = None) -> dict[str, list[int]]:
    """The smallest kernel_tuner ``tune_params`` holding the configurations: every named block axis, and the
    folding axes where some folding is not 1 (sorted values)."""
    names = checked_names(names)
    configs = list(configs)
    out: dict[str, list[int]] = {}
    for what, names3 in (("block", names.block), ("folding", names.folding)):
        for axis, n in enumerate(names3):
            values = sorted({getattr(c, what)[axis] for c in configs})
            if n is None and values != [1]:
                raise InputError(f"the {what} extents in {'xyz'[axis]} are {values}, but ParameterNames.{what} names "
                                 f"no parameter for that axis.")
            if n is not None and (what == "block" or values != [1]):
                out[n] = values
    return out


def dimensions(kernel: Kernel) -> int:
    """How many of x, y, z the kernel's threads span: the highest thread index (``tidx``, ``tidy``, ``tidz``)
    its accesses use (1 if none)."""
    used = set().union(*(variables(a.linear) for f in kernel.fields for a in (*f.loads, *f.stores)))
    return max((THREAD_VARS.index(v) + 1 for v in used & set(THREAD_VARS)), default=1)


def check_dimensions(kernel: Kernel, domain: Sequence[int], what: str, how: str) -> None:
    """Refuse a domain (its extents as given, already checked) of fewer extents than the kernel has dimensions.

    Why: a missing extent would be taken as 1 (a 3-D kernel on one z-plane), and kernel_tuner's
    ``problem_size`` of a 3-D kernel is often 2-D (its threads loop over z)."""
    n = len(domain)
    dims = dimensions(kernel)
    if n < dims:
        raise InputError(f"{what} {[int(v) for v in domain]} has {n} extent{'s' if n > 1 else ''}, but kernel "
                         f"{kernel.name} is {dims}-D: give all {dims} ({how}); kernel_tuner's problem_size of a "
                         f"{dims}-D kernel may have fewer (threads that loop over z): add the missing extent.")
