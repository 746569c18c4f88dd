"""kernel_tuner restrictions: warpspeed's own, which kernel_tuner 1.5 takes alone or in a list, and
:func:`all_of` and :func:`cached_restriction` built on them.

Why: kernel_tuner calls a lone function with the parameter dict, but a function in a list with positional
values, whose names it does not say; python-constraint (kernel_tuner's solver) calls a ``Constraint`` with
the names and values in either place. Only restriction strings (and the ``Constraint`` base, where installed)
need kernel_tuner.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...errors import InputError, install_hint
from .files import load_json

Restriction = Callable[[dict], bool]
"""A kernel_tuner restriction: called with the dict of a configuration's parameters, True keeps it."""

SpaceCheck = Callable[[Mapping[str, Sequence]], None]
"""Checks kernel_tuner's space (parameter name -> its values) before it is searched: raises an InputError where
a restriction would keep nothing of it."""


def all_of(*restrictions: Restriction | str) -> Restriction:
    """One kernel_tuner restriction that keeps what every given one keeps: functions of the parameter dict, and
    kernel_tuner's restriction strings such as ``"block_size_x*block_size_y<=1024"``.

    Why: kernel_tuner 1.5 calls a lone function with the parameter dict but calls functions inside a list with
    positional values, and turns lambdas into strings (a lambda that calls another function then fails). Pass
    the result as the only restriction: ``restrictions=all_of(keep, "block_size_x>=32")``. (warpspeed's own
    restrictions, this one included, also work inside a list: see :func:`as_restriction`.)"""
    checks = [_one_check(r) for r in restrictions]

    def keep_all(params: dict) -> bool:
        """True where every restriction keeps the configuration."""
        return all(check(params) for check in checks)

    space_checks = tuple(c for r in restrictions if is_restriction(r) for c in r.space_checks)
    return as_restriction(keep_all, f"all_of({', '.join(map(repr, restrictions))})", space_checks)


def as_restriction(keep: Restriction, label: str, space_checks: tuple[SpaceCheck, ...] = ()) -> Restriction:
    """``keep`` (a function of the parameter dict) as a restriction that kernel_tuner 1.5 takes alone or in a list.

    Why: kernel_tuner calls a lone function with the parameter dict, but a function in a list with positional
    values, whose names it does not say (a function of the dict then fails with a bare TypeError). A
    python-constraint ``Constraint`` (kernel_tuner's solver) is called with the names and values in either
    place, and sees the whole space before the search (``preProcess``): there ``space_checks`` refuse a space
    the restriction keeps nothing of, which kernel_tuner reports as "max_fevals must be greater than zero".
    Without python-constraint (kernel_tuner not installed) it is a plain callable."""
    return _restriction_type()(keep, label, space_checks)


def is_restriction(r: Any) -> bool:
    """Whether ``r`` is one of warpspeed's restrictions (:func:`as_restriction`), which carry space checks."""
    return isinstance(r, _restriction_type())


@functools.cache
def _restriction_type() -> type:
    """The class of warpspeed's restrictions, a python-constraint ``Constraint`` where installed (imported on
    first use: warpspeed works without kernel_tuner)."""
    try:
        from constraint import Constraint as base
    except ImportError:
        base = object

    class WarpspeedRestriction(base):  # type: ignore[misc, valid-type]
        """A kernel_tuner restriction called with the parameter dict, kernel_tuner's keywords (its bruteforce
        framework) or python-constraint's (variables, domains, assignments, forwardcheck)."""

        def __init__(self, keep: Restriction, label: str, space_checks: tuple[SpaceCheck, ...]):
            self.keep, self.label, self.space_checks = keep, label, space_checks

        def __call__(self, *args, **kwargs) -> bool:
            if len(args) == 1 and not kwargs and isinstance(args[0], Mapping):
                return self.keep(args[0])
            if kwargs and not args:
                return self.keep(kwargs)
            if len(args) in (3, 4) and isinstance(args[1], Mapping) and isinstance(args[2], Mapping):
                variables, _, assignments = args[:3]
                if any(v not in assignments for v in variables):
                    return True  # a partial configuration: decided once all its parameters are assigned
                return self.keep({v: assignments[v] for v in variables})
            raise InputError(f"{self.label} was called with {args!r}, not with the dict of a configuration's "
                             "parameters; kernel_tuner 1.5 calls functions inside a list of restrictions with "
                             "positional values: give one restriction, restrictions=all_of(f, g, "
                             "\"block_size_x>=32\").")

        def preProcess(self, variables, domains, constraints, vconstraints) -> None:  # noqa: N802 (python-constraint's)
            """python-constraint's look at the whole space before the search: the space checks run here."""
            for check in self.space_checks:
                check({v: list(domains[v]) for v in variables})
            if base is not object:
                super().preProcess(variables, domains, constraints, vconstraints)

        def __repr__(self) -> str:
            return self.label

    return WarpspeedRestriction


def _one_check(r: Restriction | str) -> Restriction:
    if isinstance(r, str):
        try:
            from kernel_tuner.util import check_restriction
        except ImportError:
            raise InputError(f"restriction {r!r} is a kernel_tuner string, which needs kernel_tuner: "
                             f"{install_hint('kernel-tuner')}") from None

        def check_string(params: dict) -> bool:
            """kernel_tuner's own evaluation of the restriction string; it writes each parameter's value into the
            text, so a string value goes in quoted (``layout == 'fzyx'``), as kernel_tuner's search space reads it."""
            quoted = {k: repr(v) if isinstance(v, str) else v for k, v in params.items()}
            try:
                return bool(check_restriction(r, quoted))
            except Exception as e:
                raise InputError(f"restriction {r!r} failed on {params}: {type(e).__name__}: {e}") from None

        return check_string
    if not callable(r):
        raise InputError(f"a restriction is a function of the parameter dict or a kernel_tuner string, got {r!r}.")

    def check_function(params: dict) -> bool:
        """The user's function, its failures named."""
        try:
            return bool(r(dict(params)))
        except InputError:
            raise
        except Exception as e:
            name = getattr(r, "__name__", repr(r))
            raise InputError(f"restriction {name} failed on {params}: {type(e).__name__}: {e}") from None

    return check_function


def combined(restrictions: Restriction | str | Sequence[Restriction | str] | None) -> Restriction:
    """The ``restrictions=`` argument of this package's functions (None, one restriction or a list of them) as
    one restriction (:func:`all_of`)."""
    if restrictions is None:
        return all_of()
    if callable(restrictions) or isinstance(restrictions, str):
        return all_of(restrictions)
    if isinstance(restrictions, list | tuple):
        return all_of(*restrictions)
    raise InputError(f"restrictions must be a function of the parameter dict, a kernel_tuner string or a list of "
                     f"them, got {restrictions!r}.")


def cached_restriction(path: str | Path) -> Restriction:
    """A ``restrictions=`` function keeping exactly the configurations a cache file holds (what
    ``simulation_mode=True`` can replay; kernel_tuner raises for others). Give it as the only restriction."""
    p = Path(path)
    doc = load_json(p)
    if not isinstance(doc, dict) or not isinstance(doc.get("cache"), dict) or not isinstance(
            doc.get("tune_params_keys"), list):
        raise InputError(f"{p}: not a kernel_tuner cache file (keys 'tune_params_keys' and 'cache').")
    keys = [str(k) for k in doc["tune_params_keys"]]
    held = frozenset(doc["cache"])

    def in_cache(params: dict) -> bool:
        """True for a configuration the cache file holds."""
        if missing := [k for k in keys if k not in params]:
            raise InputError(f"cached_restriction({p}): configuration {dict(params)} lacks the parameter(s) "
                             f"{', '.join(missing)} of the cache's tune_params_keys ({', '.join(keys)}); tune the "
                             "cache's tune_params (its key tune_params).")
        return ",".join(str(params[k]) for k in keys) in held

    return as_restriction(in_cache, f"cached_restriction({str(p)!r})")
