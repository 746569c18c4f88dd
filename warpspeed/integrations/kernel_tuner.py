"""kernel_tuner integration: the model's ranking of a kernel_tuner search space, and the files both tools read.

kernel_tuner (https://github.com/KernelTuner/kernel_tuner) measures configurations; warpspeed predicts them.
This module lets the prediction steer the measuring:

- :func:`rank_tune_params` ranks the configurations of a kernel_tuner ``tune_params`` space (with kernel_tuner
  style restrictions) as :func:`warpspeed.rank` does, into a :class:`TuneRanking` that also records the
  parameter names it was ranked with (the functions below use them where ``names=`` is left out) and what
  loads its kernel and device (:class:`Origin`, recorded in the files it exports);
- :func:`restriction` is a kernel_tuner ``restrictions=`` function that keeps only the model's top N, or the
  configurations predicted within a share of the best;
- :class:`WarpspeedOrder` is a kernel_tuner strategy that measures first the configurations the model cannot
  decide between (the ranking's ``confidence``), then the best-predicted ones, and stops at the budget
  (``max_fevals``, ``time_limit``; without one, after the confidence's configurations); :func:`x0` is the
  best-predicted starting point for kernel_tuner's local strategies (``strategy_options={"x0": ...}``);
- :func:`write_t4_results` / :func:`write_cache` export a ranking as kernel_tuner's T4 results JSON or as a
  cache file (predicted kernel time in ms as ``time``; replayable with ``simulation_mode=True``);
  :func:`read_kernel_tuner` reads a cache or T4 file as measurements for :mod:`warpspeed.measurement.validation`
  (``warpspeed validate FILE.json``), :func:`recorded_devices` the device such a file records;
  :func:`convert_measurements` turns a measurement CSV into cache files.

Parameter names (:class:`ParameterNames`) say which ``tune_params`` are the block and folding extents;
kernel_tuner's defaults ``block_size_x/y/z`` are the block's. Other parameters (a loop-unroll flag, say) do
not change an estimate: configurations that differ only in them share their block and folding's prediction,
and keep kernel_tuner's order among themselves. The formats read and written: docs/kernel-tuner.md.

Only :class:`WarpspeedOrder`, :func:`all_of` with string restrictions and restriction strings passed to the
ranking import kernel_tuner (``pip install -e ".[kernel-tuner]"``); everything else works without it.
"""

from __future__ import annotations

import functools
import itertools
import json
import math
import numbers
import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from .._version import __version__
from ..device import Device
from ..device import device as get_device
from ..device.keys import KEYS_BY_NAME, value_text
from ..device.overrides import split_id
from ..errors import InputError, check_output_file, install_hint, read_text
from ..expressions import THREAD_VARS, variables
from ..kernel import Kernel
from ..kernels import is_kernel_file
from ..measurement.measurements import MAX_REGISTERS, NUMBER_RANGE, Measurement, read_measurements, triple_text
from ..model.estimate import resolve_kernel
from ..model.launch import triple
from ..studies.ranking import RankedResult, Ranking, kernel_content, rank
from ..studies.space import Configuration

Restriction = Callable[[dict], bool]
"""A kernel_tuner restriction: called with the dict of a configuration's parameters, True keeps it."""

OBJECTIVE = "time"  # kernel_tuner's default objective: the kernel time in ms
T4_SCHEMA_VERSION = "1.0.0"  # the T4 results schema kernel_tuner 1.5 ships (schema/T4/1.0.0)
ERROR_VALUES = ("ErrorConfig", "InvalidConfig", "CompilationFailedConfig", "RuntimeFailedConfig")
"""How kernel_tuner's cache files mark a configuration that did not run (a value of one of its keys)."""
STRATEGY_OPTIONS = ("max_fevals", "time_limit", "searchspace_construction_options")


@dataclass(frozen=True)
class ParameterNames:
    """Which kernel_tuner parameters hold the thread block's and the thread folding's extents (x, y, z).

    ``None``, or a name that ``tune_params`` lacks, means extent 1 on that axis. Defaults: kernel_tuner's
    ``block_size_x/y/z`` and ``folding_x/y/z``.
    """

    block: tuple[str | None, str | None, str | None] = ("block_size_x", "block_size_y", "block_size_z")
    folding: tuple[str | None, str | None, str | None] = ("folding_x", "folding_y", "folding_z")

    def __post_init__(self) -> None:
        for what in ("block", "folding"):
            names = getattr(self, what)
            if isinstance(names, str) or not isinstance(names, Sequence) or len(names) != 3 or not all(
                    n is None or (isinstance(n, str) and n.strip()) for n in names):
                raise InputError(f"ParameterNames.{what} is {names!r}; give three parameter names (x, y, z), "
                                 "None for an axis that is not tuned, e.g. ('block_size_x', 'block_size_y', None).")
            object.__setattr__(self, what, tuple(names))
        named = [n for n in (*self.block, *self.folding) if n is not None]
        if twice := sorted({n for n in named if named.count(n) > 1}):
            raise InputError(f"ParameterNames: {', '.join(map(repr, twice))} named for more than one extent; each "
                             "block and folding axis needs its own parameter.")

    @property
    def all(self) -> tuple[str, ...]:
        """The names given (block first, then folding)."""
        return tuple(n for n in (*self.block, *self.folding) if n is not None)

    def configuration(self, params: Mapping[str, Any]) -> Configuration:
        """The block and folding of a kernel_tuner configuration (a dict of parameter values)."""
        return Configuration(_extents(params, self.block, "block size"), _extents(params, self.folding, "folding"))

    def params(self, c: Configuration) -> dict[str, int]:
        """The parameter values of a configuration's block and folding (named axes only)."""
        return {n: v for names, values in ((self.block, c.block), (self.folding, c.folding))
                for n, v in zip(names, values, strict=True) if n is not None}


NAMES = ParameterNames()


def _extents(params: Mapping[str, Any], names: Sequence[str | None], what: str) -> tuple[int, int, int]:
    out = []
    for n in names:
        v = 1 if n is None or n not in params else params[n]
        if not _positive_int(v):
            raise InputError(f"parameter {n!r} is {v!r}; a {what} extent is a positive integer.")
        out.append(int(v))
    return tuple(out)  # type: ignore[return-value]


def _positive_int(v: Any) -> bool:
    return not isinstance(v, bool) and isinstance(v, numbers.Integral) and v >= 1


def _key(c: Configuration) -> tuple:
    """What a configuration's prediction depends on among kernel_tuner's parameters: its block and folding."""
    return c.block, c.folding


def _names(names: ParameterNames | None, ranking: Ranking | None = None) -> ParameterNames:
    """The names given; else those ``ranking`` was made with (a :class:`TuneRanking`); else :data:`NAMES`."""
    if names is None:
        return ranking.names if isinstance(ranking, TuneRanking) else NAMES
    if not isinstance(names, ParameterNames):
        raise InputError(f"names must be a ParameterNames, got {type(names).__name__} ({names!r}).")
    return names


@dataclass(frozen=True)
class Origin:
    """What loads a ranked kernel and device again, for the files warpspeed exports.

    Why: a :class:`~warpspeed.studies.ranking.Ranking` names its kernel and device for people
    (``star3d-r1`` for the 4-byte ``star:r=1,element_bytes=4`` too, a TOML kernel's ``name``, a changed
    device's id such as ``A100-SXM4-40GB+clock_GHz=1.23457GHz``, rounded), which need not load the same kernel
    or device.
    ``kernel``: what :func:`warpspeed.find_kernel` (``--kernel``) takes, a catalog name with its parameters or
    the absolute path of a kernel TOML file (None where no name or path loads the ranked kernel, e.g. a
    :class:`~warpspeed.Kernel` built in Python); ``kernel_description``: the kernel's TOML table
    (:func:`warpspeed.kernel_from_dict` builds it; its prose ``description`` left out), what a kernel given
    on reading must equal; ``device``: what :func:`warpspeed.device` takes, a built-in id or a device TOML
    path (None where neither loads it), with ``device_overrides`` (:meth:`warpspeed.Device.with_overrides`
    keys, values as text that reads back exactly)."""

    kernel: str | None
    kernel_description: dict
    device: str | None
    device_overrides: dict[str, str]

    def __hash__(self) -> int:
        """Hashable as a Ranking is (its tables hash as their JSON text)."""
        return hash(json.dumps([self.kernel, self.kernel_description, self.device, self.device_overrides],
                               sort_keys=True))

    def to_dict(self) -> dict:
        """The keys of a file's ``warpspeed`` object (docs/kernel-tuner.md)."""
        out: dict[str, Any] = {}
        if self.kernel is not None:
            out["kernel_spec"] = self.kernel
        out["kernel_description"] = self.kernel_description
        if self.device is not None:
            out["device_spec"] = self.device
            if self.device_overrides:
                out["device_overrides"] = dict(self.device_overrides)
        return out


@dataclass(frozen=True)
class TuneRanking(Ranking):
    """A :class:`~warpspeed.studies.ranking.Ranking` of a kernel_tuner space (what :func:`rank_tune_params`
    returns), with the parameter ``names`` it was ranked with and the ``origin`` of its kernel and device.

    Why: :func:`restriction`, :class:`WarpspeedOrder`, :func:`x0` and the exports read kernel_tuner's
    configurations with these names when none are given, and the exported files record what loads the
    kernel and device back (:class:`Origin`). ``problem_size`` is kernel_tuner's: the domain as it was given
    (a 2-D kernel's ``(nx, ny)``), else the kernel's domain in its dimensions; :func:`write_cache` writes it,
    since kernel_tuner refuses a cache whose problem_size is not the one given to ``tune_kernel``."""

    names: ParameterNames = NAMES
    origin: Origin | None = None
    problem_size: tuple[int, ...] | None = None


def checked_tune_params(tune_params: Mapping[str, Sequence[Any]], names: ParameterNames | None = None
                        ) -> dict[str, list]:
    """``tune_params`` as a dict of lists, checked: every block and folding value a positive integer, at least
    one block parameter present. Errors name the parameter and what is valid."""
    names = _names(names)
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
        if k in names.all and (bad := [v for v in out[k] if not _positive_int(v)]):
            what = "block size" if k in names.block else "folding"
            raise InputError(f"tune_params[{k!r}] holds {bad[0]!r}; a {what} parameter takes positive integers "
                             f"(e.g. [1, 2, 4]).")
    if not any(n in out for n in names.block if n is not None):
        raise InputError(f"none of the block size parameters {[n for n in names.block if n]} is in tune_params "
                         f"(its parameters: {', '.join(out)}); name yours with "
                         "ParameterNames(block=('bx', 'by', 'bz')).")
    return out


def all_of(*restrictions: Restriction | str) -> Restriction:
    """One kernel_tuner restriction that keeps what every given one keeps: functions of the parameter dict, and
    kernel_tuner's restriction strings such as ``"block_size_x*block_size_y<=1024"``.

    Why: kernel_tuner 1.5 calls a lone function with the parameter dict but calls functions inside a list with
    positional values, and turns lambdas into strings (a lambda that calls another function then fails). Pass
    the result as the only restriction: ``restrictions=all_of(keep, "block_size_x>=32")``. (warpspeed's own
    restrictions, this one included, also work inside a list: see :func:`_restriction`.)"""
    checks = [_one_check(r) for r in restrictions]

    def keep_all(params: dict) -> bool:
        """True where every restriction keeps the configuration."""
        return all(check(params) for check in checks)

    space_checks = tuple(c for r in restrictions if _is_restriction(r) for c in r.space_checks)
    return _restriction(keep_all, f"all_of({', '.join(map(repr, restrictions))})", space_checks)


SpaceCheck = Callable[[Mapping[str, Sequence]], None]
"""Checks kernel_tuner's space (parameter name -> its values) before it is searched: raises an InputError where
a restriction would keep nothing of it."""


def _restriction(keep: Restriction, label: str, space_checks: tuple[SpaceCheck, ...] = ()) -> Restriction:
    """``keep`` (a function of the parameter dict) as a restriction that kernel_tuner 1.5 takes alone or in a list.

    Why: kernel_tuner calls a lone function with the parameter dict, but a function in a list with positional
    values, whose names it does not say (a function of the dict then fails with a bare TypeError). A
    python-constraint ``Constraint`` (kernel_tuner's solver) is called with the names and values in either
    place, and sees the whole space before the search (``preProcess``): there ``space_checks`` refuse a space
    the restriction keeps nothing of, which kernel_tuner reports as "max_fevals must be greater than zero".
    Without python-constraint (kernel_tuner not installed) it is a plain callable."""
    return _restriction_type()(keep, label, space_checks)


def _is_restriction(r: Any) -> bool:
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
            """kernel_tuner's own evaluation of the restriction string."""
            try:
                return bool(check_restriction(r, dict(params)))
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


def _restrictions(restrictions: Restriction | str | Sequence[Restriction | str] | None) -> Restriction:
    if restrictions is None:
        return all_of()
    if callable(restrictions) or isinstance(restrictions, str):
        return all_of(restrictions)
    if isinstance(restrictions, list | tuple):
        return all_of(*restrictions)
    raise InputError(f"restrictions must be a function of the parameter dict, a kernel_tuner string or a list of "
                     f"them, got {restrictions!r}.")


def tune_space(tune_params: Mapping[str, Sequence[Any]], *, names: ParameterNames | None = None,
               restrictions: Restriction | str | Sequence[Restriction | str] | None = None
               ) -> list[tuple[dict, Configuration]]:
    """The configurations of a kernel_tuner space in kernel_tuner's order (the product of the value lists, the
    last parameter varying fastest) that pass the restrictions, each with its block and folding."""
    names = _names(names)
    tp = checked_tune_params(tune_params, names)
    keep = _restrictions(restrictions)
    keys = list(tp)
    out = []
    for values in itertools.product(*tp.values()):
        params = dict(zip(keys, values, strict=True))
        if keep(params):
            out.append((params, names.configuration(params)))
    return out


def rank_tune_params(kernel, device, tune_params: Mapping[str, Sequence[Any]], *,
                     names: ParameterNames | None = None,
                     restrictions: Restriction | str | Sequence[Restriction | str] | None = None,
                     domain: Sequence[int] | None = None, registers: int | None = None, model: str | None = None,
                     screen: int | None = None, jobs: int | None = 1, executor=None,
                     cache: str | Path | None = None) -> Ranking:
    """:func:`warpspeed.rank` of exactly the block/folding configurations of a kernel_tuner space.

    ``restrictions``: a function of the parameter dict, a kernel_tuner restriction string, or a list of them
    (each function is called with the dict). Parameters that are neither block nor folding extents (see
    ``names``) do not change an estimate: the ranking holds each block and folding once; :func:`ordered_params`
    spreads it over the full space. ``domain`` is kernel_tuner's ``problem_size`` (default: the kernel's);
    ``registers``, ``model``, ``screen``, ``jobs``, ``executor`` and ``cache`` are :func:`warpspeed.rank`'s.

    Returns a :class:`TuneRanking`: the ranking, the ``names`` it was made with (the other functions of this
    module use them where none are given) and what loads its kernel and device (recorded in exported files).
    A ``domain`` needs as many extents as the kernel has dimensions (an :class:`InputError` otherwise). A
    parameter that looks like a block or folding extent but is not in ``names`` is warned about
    (:func:`warn_unmapped`): it would be ranked as one that does not change an estimate."""
    names = _names(names)
    tune_params = checked_tune_params(tune_params, names)
    warn_unmapped(tune_params, names)
    space = tune_space(tune_params, names=names, restrictions=restrictions)
    if not space:
        raise InputError("the restrictions exclude every configuration of tune_params: nothing to rank.")
    configs = list(dict.fromkeys(c for _, c in space))
    if isinstance(domain, numbers.Integral):  # kernel_tuner's problem_size may be one integer
        domain = [domain]
    k = resolve_kernel(kernel, domain)  # checks the domain (warpspeed.model.launch.triple)
    if domain is not None:
        check_dimensions(k, domain, "domain", "domain=(nx, ny, nz)")
    dev = get_device(device)
    ranking = rank(k, dev, configs=configs, registers=registers, model=model, screen=screen, jobs=jobs,
                   executor=executor, cache=cache)
    problem_size = tuple(int(v) for v in domain) if domain is not None else k.domain[:dimensions(k)]
    return TuneRanking(**{f.name: getattr(ranking, f.name) for f in fields(Ranking)}, names=names,
                       origin=origin_of(kernel, k, dev), problem_size=problem_size)


_FOLDING_WORDS = ("fold", "tile", "per_thread", "wpt")
_BLOCK_WORDS = ("block", "blk", "thread")
_BEFORE_AXIS = re.compile(r"(_|fold|folding|tiles?|blocks?|blk|threads?|wpt)$")
"""What precedes the axis letter of an extent's name: a separator, or one of the words itself (``foldy``)."""


def extent_like(name: str) -> tuple[str, int] | None:
    """``("block" | "folding", axis)`` for a parameter name that reads as a block or folding extent on an axis
    (``fold_y``, ``tile_size_x``, ``threads_z``, ``blockDimX``: a block, folding, tile or thread word, then
    the axis x/y/z as the last word or right after it), else None."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).lower()
    stem, axis = words[:-1], words[-1:]
    if axis not in ("x", "y", "z") or not stem.rstrip("_"):
        return None
    found = [kind for kind, vocabulary in (("folding", _FOLDING_WORDS), ("block", _BLOCK_WORDS))
             if any(w in stem for w in vocabulary)]
    return (found[0], "xyz".index(axis)) if found and _BEFORE_AXIS.search(stem) else None


def warn_unmapped(tune_params: Mapping[str, list], names: ParameterNames) -> None:
    """A UserWarning for each parameter of (checked) ``tune_params`` that looks like a block or folding extent
    (:func:`extent_like`, positive integer values, not all 1) but is not in ``names``.

    Why: such a parameter is ranked as another parameter, which does not change an estimate: a folding under a
    name warpspeed does not read (``fold_y``) leaves every configuration ranked unfolded."""
    suspects = {k: (kind, values) for k, values in tune_params.items()
                if k not in names.all and (kind := extent_like(k))
                and all(_positive_int(v) for v in values) and any(v > 1 for v in values)}
    mapped = {"block": list(names.block), "folding": list(names.folding)}
    for k, ((kind, axis), _) in suspects.items():
        if mapped[kind][axis] not in suspects:  # the first suspect of an axis takes it
            mapped[kind][axis] = k
    suggestion = f"ParameterNames(block={tuple(mapped['block'])!r}, folding={tuple(mapped['folding'])!r})"
    for k, ((kind, axis), values) in suspects.items():
        read = ", ".join(n or "-" for n in getattr(names, kind))
        now = getattr(names, kind)[axis]
        instead = (f"its {kind} in {'xyz'[axis]} is read from {now!r}" if now in tune_params else
                   f"every configuration is ranked with {kind} 1 in {'xyz'[axis]}")
        warnings.warn(f"tune_params: {k!r} (values {values}) looks like a {kind} extent in {'xyz'[axis]}, but "
                      f"warpspeed reads the {kind} from ({read}): it is ranked as another parameter, which does not "
                      f"change an estimate ({instead}). If it is one, name it: names={suggestion}; if not, ignore "
                      "this warning.", UserWarning, stacklevel=3)


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


def _description(kernel: Kernel) -> dict:
    """The kernel's TOML table as JSON (its prose ``description`` left out), with the domain it was loaded for
    (the ranked one, not its file's): what :class:`Origin` records."""
    return json.loads(json.dumps({**kernel_content(kernel), "domain": list(kernel.domain)}, default=str))


_NOT_COMPARED = ("domain", "registers")
"""Keys of a kernel description :func:`_same_kernel` ignores: the domain (the file has its own) and the
registers (nvcc counts them differently between machines and versions; the rows carry those that ran,
``num_regs``)."""


def _same_kernel(a: dict, b: dict) -> bool:
    """Two kernel descriptions load the same kernel (all but :data:`_NOT_COMPARED` equal)."""
    return ({k: v for k, v in a.items() if k not in _NOT_COMPARED}
            == {k: v for k, v in b.items() if k not in _NOT_COMPARED})


def origin_of(given: Kernel | str | Path, kernel: Kernel, device: Device) -> Origin:
    """What loads ``kernel`` (resolved from ``given``) and ``device`` again (see :class:`Origin`)."""
    description = _description(kernel)
    kernel_spec = None
    if isinstance(given, str | Path):  # what loaded it: a catalog name, or a file (absolute: read from anywhere)
        kernel_spec = str(Path(given).resolve()) if is_kernel_file(str(given)) else str(given)
    else:  # a Kernel: its name in the catalog, or its file, where either loads the same kernel
        files = [str(Path(kernel.source).resolve())] if is_kernel_file(kernel.source) else []
        for c in [kernel.name, *files]:
            try:
                if _same_kernel(_description(resolve_kernel(c, kernel.domain)), description):
                    kernel_spec = c
                    break
            except InputError:
                continue
    base, suffix = split_id(device.id)
    overrides = {}
    for key in suffix:
        if key.startswith("hit_rates."):
            _, curve, coef = key.split(".")
            overrides[key] = repr(float(getattr(getattr(device.hit_rates, curve), coef)))
        elif key in KEYS_BY_NAME:
            spec_ = KEYS_BY_NAME[key]
            overrides[key] = value_text(spec_, getattr(device, spec_.attr))
    loaded: dict[str, tuple[Device, dict[str, str]]] = {}
    for c in [base] + ([str(Path(device.file).resolve())] if device.file else []):
        try:
            plain = get_device(c)
            own = split_id(plain.id)[1]  # a file of changes has an id with suffixes of its own
            changes = {k: v for k, v in overrides.items() if own.get(k) != suffix[k]}
            loaded[c] = (plain.with_overrides(**changes) if changes else plain), changes
        except InputError:
            continue
    # the same device, its citations too (a file of changes over a built-in device: the file), else its values
    device_spec = next((c for c, (d, _) in loaded.items() if d == device), None) or next(
        (c for c, (d, _) in loaded.items() if _device_values(d) == _device_values(device)), None)
    return Origin(kernel_spec, description, device_spec, {} if device_spec is None else loaded[device_spec][1])


def _device_values(device: Device) -> dict:
    """What a device's estimates depend on: every value and its id, not the citations or the file it came from."""
    return {k: v for k, v in device.to_dict().items() if k not in ("file", "sources")}


def _expected(names: ParameterNames, params: Sequence[str]) -> str:
    """What an error says when configurations do not match a ranking: the parameters expected and those found."""
    shown = [", ".join(n or "-" for n in names3) for names3 in (names.block, names.folding)]
    return (f"the block extents are read from the parameters ({shown[0]}) and the folding from ({shown[1]}), but "
            f"the configurations have {', '.join(map(str, params)) or 'no parameters'}. Rank the space kernel_tuner "
            "tunes, with the names it uses (rank_tune_params(..., names=ParameterNames(block=('bx', 'by', 'bz'), "
            "folding=(None, 'fy', None))), or pass those names here (names=...).")


def _positions(ranking: Ranking) -> dict[tuple, int]:
    """Each ranked block and folding's place: the ranking's order, then a screened ranking's bounded ones (a
    screened ranking's order is exact for its ``screen`` best only; after them it is approximate)."""
    if not isinstance(ranking, Ranking):
        raise InputError(f"expected a warpspeed Ranking (from rank_tune_params), got {type(ranking).__name__}.")
    out: dict[tuple, int] = {}
    for c in [r.configuration for r in ranking.results] + [b.configuration for b in ranking.bounded]:
        out.setdefault(_key(c), len(out))
    return out


def ordered_params(ranking: Ranking, tune_params: Mapping[str, Sequence[Any]], *,
                   names: ParameterNames | None = None,
                   restrictions: Restriction | str | Sequence[Restriction | str] | None = None) -> list[dict]:
    """The kernel_tuner space (after the restrictions), best-predicted first.

    Configurations of one block and folding (differing in other parameters) keep kernel_tuner's order; those
    whose block and folding the ranking lacks come last, in kernel_tuner's order. ``names``: default, those of
    the ranking (:class:`TuneRanking`)."""
    pos = _positions(ranking)
    space = tune_space(tune_params, names=_names(names, ranking), restrictions=restrictions)
    order = sorted(range(len(space)), key=lambda i: (pos.get(_key(space[i][1]), len(pos)), i))
    return [space[i][0] for i in order]


def x0(ranking: Ranking, tune_params: Mapping[str, Sequence[Any]], *, names: ParameterNames | None = None,
       restrictions: Restriction | str | Sequence[Restriction | str] | None = None) -> list:
    """The best-predicted configuration as kernel_tuner's ``x0`` strategy option: its values in ``tune_params``
    order (``strategy_options={"x0": x0(...)}`` starts greedy_ils, basinhopping, ... there)."""
    pos = _positions(ranking)
    n = _names(names, ranking)
    for params in ordered_params(ranking, tune_params, names=n, restrictions=restrictions):
        if _key(n.configuration(params)) in pos:
            return [params[k] for k in tune_params]
    raise InputError(f"x0: no configuration of tune_params (after the restrictions) is in the ranking; "
                     f"{_expected(n, list(tune_params))}")


def restriction(ranking: Ranking, *, names: ParameterNames | None = None, top: int | None = None,
                within: float | None = None) -> Restriction:
    """A kernel_tuner ``restrictions=`` function that keeps the configurations the model ranks among its ``top``
    N, or whose predicted performance is at least ``within`` (a share, e.g. 0.9) of the predicted best.

    Why: kernel_tuner then measures only what the model thinks can win. It takes the dict of all parameters
    (others than block and folding are ignored); a block and folding the ranking lacks, or that cannot launch,
    is not kept. It works alone or in kernel_tuner's list of restrictions (:func:`_restriction`). ``names``:
    default, those of the ranking (:class:`TuneRanking`); a configuration without any of their block
    parameters, and (before kernel_tuner's search) a space that holds none of the kept configurations, are an
    :class:`InputError` (kernel_tuner would otherwise report an empty search space as "max_fevals must be
    greater than zero")."""
    _positions(ranking)
    names = _names(names, ranking)
    if (top is None) == (within is None):
        raise InputError("restriction: give one of top= (the number of best-predicted configurations to keep) or "
                         "within= (a share of the predicted best, e.g. 0.9).")
    launchable = [r for r in ranking.results if not r.error]
    if not launchable:
        raise InputError(f"restriction: no configuration of the ranking of {ranking.kernel} on {ranking.device} can "
                         "launch.")
    if top is not None:
        if not _positive_int(top):
            raise InputError(f"restriction: top is {top!r}; give a positive number of configurations.")
        kept = launchable[:top]
        if ranking.bounded and (len(kept) < top or max(b.bound_GLup_s for b in ranking.bounded)
                                > kept[-1].performance_GLup_s):
            raise InputError(f"restriction: the ranking is screened (screen={ranking.screen}): beyond its "
                             f"{ranking.screen} best, configurations it only bounded may belong to the top {top}; "
                             f"give top <= {ranking.screen}, or rank with screen >= {top} or without screen.")
    else:
        if isinstance(within, bool) or not isinstance(within, numbers.Real) or not 0 < within <= 1:
            raise InputError(f"restriction: within is {within!r}; give a share of the predicted best in (0, 1], "
                             "e.g. 0.9.")
        floor = within * launchable[0].performance_GLup_s
        if any(b.bound_GLup_s >= floor for b in ranking.bounded):
            raise InputError(f"restriction: the ranking is screened (screen={ranking.screen}) and some configurations "
                             f"it only bounded may be within {within:g} of the best; rank without screen.")
        kept = [r for r in launchable if r.performance_GLup_s >= floor]
    keep = frozenset(_key(r.configuration) for r in kept)
    label = f"restriction(top={top})" if top is not None else f"restriction(within={within:g})"

    def keep_predicted(params: dict) -> bool:
        """True for a configuration whose block and folding the model ranks among the kept ones."""
        if not any(n in params for n in names.block if n is not None):
            raise InputError(f"restriction: configuration {dict(params)} has no block size parameter; "
                             f"{_expected(names, list(params))}")
        return _key(names.configuration(params)) in keep

    def keeps_some(space: Mapping[str, Sequence]) -> None:
        """Refuse a space that holds none of the kept configurations (kernel_tuner would search nothing)."""
        if not any(n in space for n in names.block if n is not None) or any(_in_space(k, names, space)
                                                                           for k in keep):
            return  # a space without block parameters: keep_predicted names them for each configuration
        shared = sum(_in_space(k, names, space) for k in _positions(ranking))
        tuned = ", ".join(f"{n} {list(space[n])}" for n in names.all if n in space)
        raise InputError(
            f"{label}: kernel_tuner's search space ({tuned}) lacks "
            + ("the configuration it keeps " if len(keep) == 1 else f"all {len(keep)} configurations it keeps ")
            + (f"(it holds {shared} other configurations of the ranking)" if shared else
               f"and shares no configuration with the ranking of {ranking.kernel} on {ranking.device}")
            + ", so kernel_tuner would search nothing (\"max_fevals must be greater than zero\"). Rank the space "
            "kernel_tuner tunes: rank_tune_params(kernel, device, tune_params, restrictions=...) with the tune_params "
            "and restrictions given to tune_kernel, then restriction(ranking, ...)"
            + ("; or keep more (a larger top, a smaller within)." if shared else "."))

    return _restriction(keep_predicted, label, (keeps_some,))


def _in_space(key: tuple, names: ParameterNames, space: Mapping[str, Sequence]) -> bool:
    """Whether kernel_tuner's space (parameter name -> its values) holds a block and folding: each named axis's
    extent among its parameter's values, an axis whose parameter the space lacks at extent 1."""
    return all(v in space[n] if n in space else v == 1
               for names3, extents in zip((names.block, names.folding), key, strict=True)
               for n, v in zip(names3, extents, strict=True))


class WarpspeedOrder:
    """A kernel_tuner strategy: measure what the model cannot decide, then the best-predicted first.

    ``tune_kernel(..., strategy=WarpspeedOrder(ranking), strategy_options={"max_fevals": 20})``. It walks
    kernel_tuner's search space (after its restrictions): first the configurations the ranking's
    ``confidence`` says to measure (its contenders; for an access pattern the model was not validated on also
    the best-predicted block of every x-extent), then the others in :func:`ordered_params` order, and stops at
    ``max_fevals`` or ``time_limit``. Without either it measures the confidence's configurations only. A
    ranked configuration outside the space is skipped. ``names``: default, those of the ranking
    (:class:`TuneRanking`); a search space none of whose configurations is in the ranking is an
    :class:`InputError` naming the parameters expected."""

    def __init__(self, ranking: Ranking, names: ParameterNames | None = None):
        _positions(ranking)
        self.ranking = ranking
        self.names = _names(names, ranking)
        self.first = tuple(_key(c) for c in ranking.confidence.measure)

    def _position(self, key: tuple, ranked: dict[tuple, int]) -> int:
        if key in self.first:
            return self.first.index(key)
        return len(self.first) + ranked.get(key, len(ranked))

    def order(self, searchspace) -> list[tuple]:
        """The configurations of a kernel_tuner ``Searchspace`` as value tuples: the confidence's first, then
        best-predicted first."""
        keys = list(searchspace.tune_params)
        configs = searchspace.sorted_list()
        ranked = _positions(self.ranking)
        rank_of = [self._position(_key(self.names.configuration(dict(zip(keys, c, strict=True)))), ranked)
                   for c in configs]
        if configs and min(rank_of) >= len(self.first) + len(ranked):
            raise InputError(f"WarpspeedOrder: no configuration of kernel_tuner's search space is in the ranking; "
                             f"{_expected(self.names, keys)}")
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
            order = [c for c in order
                     if _key(self.names.configuration(dict(zip(keys, c, strict=True)))) in self.first] or order[:1]
        cost = CostFunc(searchspace, tuning_options, runner, snap=False)
        try:
            for c in order:
                cost(list(c))
        except StopCriterionReached:
            pass
        return cost.results


# --- files ---------------------------------------------------------------------------------------------------

def tune_params_of(configs: Iterable[Configuration], names: ParameterNames | None = None) -> dict[str, list[int]]:
    """The smallest kernel_tuner ``tune_params`` holding the configurations: every named block axis, and the
    folding axes where some folding is not 1 (sorted values)."""
    names = _names(names)
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


def _domain(ranking: Ranking) -> list[int]:
    domains = {tuple(r.estimate.domain) if r.estimate is not None else r.configuration.domain
               for r in ranking.results} - {None}
    if not domains:
        raise InputError(f"no configuration of the ranking of {ranking.kernel} on {ranking.device} can launch: "
                         "nothing to export.")
    if len(domains) != 1:
        raise InputError(f"the ranking spans {len(domains)} domains; a kernel_tuner file has one problem size: "
                         "export one ranking per domain.")
    return list(domains.pop())


def _predicted_entries(ranking: Ranking, tune_params, names, restrictions) -> list[tuple[dict, RankedResult]]:
    """The space's configurations that the ranking estimated in full, best-predicted first."""
    names = _names(names, ranking)
    if tune_params is None:
        tune_params = tune_params_of((r.configuration for r in ranking.results), names)
    by_key = {_key(r.configuration): r for r in ranking.results}
    out = []
    for params in ordered_params(ranking, tune_params, names=names, restrictions=restrictions):
        r = by_key.get(_key(names.configuration(params)))
        if r is not None:
            out.append((params, r))
    if not out:
        raise InputError(f"no configuration of tune_params (after the restrictions) is in the ranking; "
                         f"{_expected(names, list(tune_params))}")
    return out


def _metadata(ranking: Ranking, names: ParameterNames, domain: list[int]) -> dict:
    """The ``warpspeed`` object of an exported file: the kernel's and device's names (for people) and, for a
    :class:`TuneRanking`, what loads them (:class:`Origin`)."""
    origin = ranking.origin.to_dict() if isinstance(ranking, TuneRanking) and ranking.origin else {}
    return {"predicted": True, "kernel": ranking.kernel, "device": ranking.device, "domain": domain, **origin,
            "model": ranking.best.estimate.model if ranking.best.estimate else None, "block_names": list(names.block),
            "folding_names": list(names.folding), "warpspeed_version": __version__}


def t4_results(ranking: Ranking, tune_params: Mapping[str, Sequence[Any]] | None = None, *,
               names: ParameterNames | None = None,
               restrictions: Restriction | str | Sequence[Restriction | str] | None = None) -> dict:
    """The ranking as kernel_tuner's T4 results document (schema 1.0.0), best-predicted first.

    One result per configuration of ``tune_params`` (default: the ranking's blocks and foldings) that the
    ranking estimated in full: measurements ``time`` (predicted kernel time, ms), ``GLup_s`` and ``num_regs`` (the
    registers per thread the estimate assumed); a configuration that cannot launch is ``invalidity: "runtime"``.
    ``metadata.warpspeed`` names the kernel, device, domain and parameter names (for a :class:`TuneRanking` also
    what loads its kernel and device), so that :func:`read_kernel_tuner` reads the file back."""
    names = _names(names, ranking)
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


def write_t4_results(path: str | Path, ranking: Ranking, tune_params: Mapping[str, Sequence[Any]] | None = None,
                     *, names: ParameterNames | None = None,
                     restrictions: Restriction | str | Sequence[Restriction | str] | None = None) -> Path:
    """Write :func:`t4_results` as JSON; returns the path. Its folder must exist (an :class:`InputError`
    otherwise, before any work)."""
    p = Path(path)
    check_output_file(p, "write_t4_results: path")
    p.write_text(json.dumps(t4_results(ranking, tune_params, names=names, restrictions=restrictions),
                            indent=1, default=_json_default) + "\n")
    return p


def kernel_name_of(kernel: str) -> str:
    """A C identifier for kernel_tuner's ``kernel_name`` from a warpspeed kernel name (``star3d-r4`` ->
    ``star3d_r4``)."""
    name = re.sub(r"\W", "_", Path(kernel).stem if kernel.endswith(".toml") else kernel)
    return name if name and not name[0].isdigit() else f"k_{name}"


def _json_default(v):
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        return float(v)
    raise TypeError(f"{v!r} is not JSON")


def _cache_key(params: Mapping[str, Any], keys: Sequence[str]) -> str:
    return ",".join(str(params[k]) for k in keys)


def _write_cache_file(path: str | Path, header: dict, entries: Sequence[dict]) -> Path:
    """A cache file in kernel_tuner's own layout: the header, then one configuration per line, closed."""
    keys = header["tune_params_keys"]
    head = json.dumps({**header, "cache": {}}, indent="", default=_json_default)
    lines = [json.dumps({_cache_key(e, keys): e}, default=_json_default)[1:-1] for e in entries]
    p = Path(path)
    p.write_text(head[:-3] + ("\n" + ",\n".join(lines) if lines else "") + "}\n}\n")
    return p


def write_cache(path: str | Path, ranking: Ranking, tune_params: Mapping[str, Sequence[Any]] | None = None, *,
                names: ParameterNames | None = None,
                restrictions: Restriction | str | Sequence[Restriction | str] | None = None,
                kernel_name: str | None = None, problem_size: Sequence[int] | int | None = None) -> Path:
    """The ranking as a kernel_tuner cache file: each configuration's predicted kernel time in ms as ``time``
    (its ``GLup_s``, and the registers per thread the estimate assumed as ``num_regs``), like a measured cache;
    one that cannot launch is ``__error__: RuntimeFailedConfig``.

    ``tune_params`` (default: the ranking's blocks and foldings), ``kernel_name`` (default: the kernel's
    name as an identifier) and ``problem_size`` must be those given to ``tune_kernel`` (kernel_tuner refuses
    the cache otherwise); ``problem_size`` defaults to the domain as :func:`rank_tune_params` was given it,
    else the ranked domain without its trailing extents of 1 (:func:`_problem_size`); ``device_name`` is the
    warpspeed device id; the ``warpspeed`` object names the kernel and device and, for a
    :class:`TuneRanking`, records what loads them (:class:`Origin`). Replay it with ``tune_kernel(...,
    cache=path, simulation_mode=True, restrictions=cached_restriction(path))``. The file's folder must exist
    (an :class:`InputError` otherwise, before any work: a typo in a folder name should not create folders)."""
    check_output_file(path, "write_cache: path")
    names = _names(names, ranking)
    domain = _domain(ranking)
    if problem_size is None and isinstance(ranking, TuneRanking) and ranking.problem_size is not None:
        problem_size = ranking.problem_size
    size = _problem_size(domain) if problem_size is None else _given_problem_size(problem_size)
    items = _predicted_entries(ranking, tune_params, names, restrictions)
    tp = dict(tune_params) if tune_params is not None else tune_params_of((r.configuration for r in
                                                                             ranking.results), names)
    entries = []
    for params, r in items:
        entry = dict(params)
        if r.estimate is None:
            entry["__error__"] = "RuntimeFailedConfig"
        else:
            entry.update({OBJECTIVE: r.estimate.time_s * 1e3, "GLup_s": r.performance_GLup_s,
                          "num_regs": r.estimate.occupancy.registers})
        entries.append(entry)
    header = {"device_name": ranking.device, "kernel_name": kernel_name or kernel_name_of(ranking.kernel),
              "problem_size": size, "tune_params_keys": list(tp), "tune_params": tp, "objective": OBJECTIVE,
              "warpspeed": _metadata(ranking, names, domain)}
    return _write_cache_file(path, header, entries)


def _problem_size(domain: Sequence[int]) -> list[int]:
    """A domain as kernel_tuner's problem_size: without its trailing extents of 1, as a kernel of fewer
    dimensions is tuned (a 2-D kernel's ``[nx, ny]``; kernel_tuner refuses a cache of ``[nx, ny, 1]`` for
    ``problem_size=(nx, ny)``)."""
    out = [int(v) for v in domain]
    while len(out) > 1 and out[-1] == 1:
        out.pop()
    return out


def _given_problem_size(problem_size: Sequence[int] | int) -> list[int]:
    """A problem_size given to :func:`write_cache`, checked (1 to 3 positive integers, as given)."""
    size = [problem_size] if isinstance(problem_size, numbers.Integral) else problem_size
    triple(size, "write_cache: problem_size")
    return [int(v) for v in size]


def measurements_to_cache(rows: Sequence[Measurement], path: str | Path, *, names: ParameterNames | None = None,
                          kernel_name: str | None = None, source: str | None = None) -> Path:
    """Write the measured rows of one sweep (one kernel, device and domain; each block and folding once) as a
    kernel_tuner cache file: per configuration its block and folding parameters, the measured median kernel
    time ``time_s`` as ``time`` in ms, the binary's registers as ``num_regs`` (kernel_tuner's RegisterObserver
    key) and the ``code`` that ran; nothing else. ``device_name`` is the GPU's reported name; the ``warpspeed``
    header names the warpspeed kernel, device, domain and ``source`` (the CSV), for :func:`read_kernel_tuner`.
    The file's folder must exist (an :class:`InputError` otherwise)."""
    check_output_file(path, "measurements_to_cache: path")
    names = _names(names)
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
        if (first := seen.setdefault(_cache_key(entry, keys), m)) is not m:
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
              "kernel_name": kernel_name or kernel_name_of(kernel), "problem_size": _problem_size(domain),
              "tune_params_keys": keys, "tune_params": tp, "objective": OBJECTIVE,
              "warpspeed": {"predicted": False, "kernel": kernel, "device": dev, "domain": domain,
                            "block_names": list(names.block), "folding_names": list(names.folding),
                            **({"source": source} if source else {})}}
    return _write_cache_file(path, header, entries)


def convert_measurements(csv_path: str | Path, out_dir: str | Path, *, names: ParameterNames | None = None,
                         source: str | None = None) -> list[Path]:
    """Convert a measurement CSV (:mod:`warpspeed.measurement.measurements`) into one kernel_tuner cache file per sweep
    (:func:`warpspeed.measurement.validation.sweeps`): ``<csv stem>.<kernel>[.<domain>][.<code>].json`` in ``out_dir``.
    ``source`` (default: the CSV path as given) is recorded in each file's header."""
    from ..measurement.validation import sweeps

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


def _load_json(p: Path) -> Any:
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


def cached_restriction(path: str | Path) -> Restriction:
    """A ``restrictions=`` function keeping exactly the configurations a cache file holds (what
    ``simulation_mode=True`` can replay; kernel_tuner raises for others). Give it as the only restriction."""
    p = Path(path)
    doc = _load_json(p)
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

    return _restriction(in_cache, f"cached_restriction({str(p)!r})")


def _given(doc_value, given, what: str, key: str, p: Path):
    """A file's value of ``what`` (None if absent) against the one given: absent -> the given one; both -> they
    must agree."""
    if doc_value is None:
        return given
    if given is not None and given != doc_value:
        raise InputError(f"{p}: key {key} says {what} {doc_value!r}, but {what} {given!r} was given; give none "
                         "(the file's) or fix the file.")
    return doc_value


def _header(doc: Any, p: Path) -> tuple[str, dict, str]:
    """(kind, the ``warpspeed`` object, its key) of a cache (``cache``) or T4 results (``T4``) document."""
    if not isinstance(doc, dict):
        raise InputError(f"{p}: a kernel_tuner cache or T4 results file is a JSON object, got "
                         f"{type(doc).__name__}.")
    if "cache" in doc:
        kind, meta, meta_key = "cache", doc.get("warpspeed", {}), "warpspeed"
    elif "results" in doc:
        kind, meta_key = "T4", "metadata.warpspeed"
        meta = doc.get("metadata", {}).get("warpspeed", {}) if isinstance(doc.get("metadata"), dict) else {}
    else:
        raise InputError(f"{p}: neither a kernel_tuner cache file (key 'cache') nor a T4 results file (key "
                         f"'results'); its keys: {', '.join(map(str, doc)) or 'none'}.")
    if not isinstance(meta, dict):
        raise InputError(f"{p}: key {meta_key} is {meta!r}, not an object.")
    for key, kinds, what in (("kernel", str, "a kernel name"), ("kernel_spec", str, "a catalog name or kernel file"),
                             ("kernel_description", dict, "a kernel's TOML table"),
                             ("device", str, "a device id"), ("device_spec", str, "a device id or device file"),
                             ("device_overrides", dict, "an object of device keys and values")):
        if key in meta and not (isinstance(meta[key], kinds) and meta[key]):
            raise InputError(f"{p}: key {meta_key}.{key} is {meta[key]!r}; give {what}.")
    return kind, meta, meta_key


def _load_kernel(spec: str, domain: tuple[int, int, int], what: str, p: Path) -> Kernel:
    try:
        return resolve_kernel(spec, domain)
    except InputError as e:
        raise InputError(f"{p}: {what} {spec!r}: {e}") from None


def _file_kernel(meta: dict, meta_key: str, given: str | None, domain: tuple[int, int, int], p: Path) -> str:
    """What loads the rows' kernel: the kernel given, else the file's ``kernel_spec``, else (a file of
    measurements or of an older warpspeed) its ``kernel`` name.

    One rule: the file's reference kernel is its ``kernel_description`` if recorded, else the kernel its
    ``kernel_spec`` loads, else its name; the kernel taken must load the same kernel as the reference
    (:func:`_same_kernel`). Only a file with a name alone also accepts a kernel of that name."""
    name, spec, desc = meta.get("kernel"), meta.get("kernel_spec"), meta.get("kernel_description")
    said = f"key {meta_key}.kernel says kernel {name!r}" + (f" ({spec})" if spec and spec != name else "") \
        if name else f"key {meta_key}.kernel_spec says kernel {spec!r}"
    if given is None or given == spec:  # the file's own kernel
        if spec is None and desc is not None:
            raise InputError(f"{p}: the file's kernel {name!r} was ranked as a Kernel object that no catalog name or "
                             f"file loads (no key {meta_key}.kernel_spec); give it (kernel=..., --kernel NAME|"
                             f"FILE.toml): it must be the kernel {meta_key}.kernel_description describes (its TOML "
                             "table).")
        if spec is None:
            return name
        if desc is not None and not _same_kernel(
                _description(_load_kernel(spec, domain, f"key {meta_key}.kernel_spec", p)), desc):
            raise InputError(f"{p}: key {meta_key}.kernel_spec {spec!r} now loads a kernel other than the one key "
                             f"{meta_key}.kernel_description describes (it changed since the file was written); "
                             "restore it, give the kernel that was ranked (kernel=..., --kernel), or delete key "
                             f"{meta_key}.kernel_description to validate against the kernel as it is now.")
        return spec
    legacy = spec is None and desc is None  # a file of measurements or of an older warpspeed: a name alone
    if legacy and given == name or not (name or spec or desc):
        return given
    g = _load_kernel(given, domain, "kernel", p)
    if desc is not None:
        reference = desc
    elif spec is not None:
        reference = _description(_load_kernel(spec, domain, f"key {meta_key}.kernel_spec", p))
    else:
        try:
            reference = _description(resolve_kernel(name, domain))
        except InputError:  # the name no longer loads a kernel: the name decides
            reference = None
    # a legacy file also accepts a kernel of its name (an older warpspeed named the 4-byte star star3d-r1)
    if not (reference is not None and _same_kernel(_description(g), reference) or legacy and g.name == name):
        raise InputError(f"{p}: {said}, but kernel {given!r} was given, which loads "
                         f"{'another kernel' if g.name == name else f'kernel {g.name!r}'}; give none (the file's), "
                         "one that loads the same kernel, or fix the file.")
    return given


def recorded_devices(path: str | Path) -> dict[str, Device]:
    """The device a file written by warpspeed records (its ``warpspeed`` keys ``device_spec`` and
    ``device_overrides``), by the name its rows carry: ``validate(read_kernel_tuner(p),
    devices=recorded_devices(p))``. Empty for a file that records none.

    Why: the rows name the device by its id, which need not load it again: an id rounds override values
    (``clock_GHz=1.23457GHz`` for 1.234567891 GHz), and the id of a device read from a device file is no
    path. A recorded device that no longer loads (its file moved) is an :class:`InputError`; estimate on
    a device given instead (``validate(rows, device=...)``, ``warpspeed validate FILE.json --device``)."""
    p = Path(path)
    _, meta, meta_key = _header(_load_json(p), p)
    spec, overrides = meta.get("device_spec"), meta.get("device_overrides", {})
    if spec is None or "device" not in meta:
        return {}
    try:
        return {meta["device"]: get_device(spec, **overrides)}
    except InputError as e:
        raise InputError(f"{p}: key {meta_key}.device_spec {spec!r}"
                         + (f" with {meta_key}.device_overrides" if overrides else "") + f": {e} To estimate on "
                         "another device, give it (validate(rows, device=...), --device ID|FILE.toml).") from None


def read_kernel_tuner(path: str | Path, *, kernel: str | None = None, device: str | None = None,
                      domain: Sequence[int] | None = None, names: ParameterNames | None = None,
                      select: Mapping[str, Any] | None = None) -> list[Measurement]:
    """A kernel_tuner cache file or T4 results file as measurement rows (:class:`warpspeed.measurement.measurements.
    Measurement`), for :func:`warpspeed.measurement.validation.validate`.

    Per configuration that ran: its block and folding (``names``; default the file's ``warpspeed`` header,
    else :data:`NAMES`), ``time_s`` from ``time`` (ms), ``GLup_s`` = the domain's cells / ``time_s`` / 1e9,
    ``registers`` from ``num_regs``. ``kernel``, ``device`` and ``domain`` are used where the file's
    ``warpspeed`` header does not name them (the device may also be a warpspeed id, or a GPU's reported name,
    in ``device_name``; without a domain, kernel_tuner's ``problem_size`` is taken, which a given domain
    overrides, since it often counts the arrays' halos). The rows' kernel is what loads the file's kernel (a
    file warpspeed wrote records it: ``kernel_spec``); a given kernel must load the same kernel as the header
    says, and a given domain must equal the header's; a header's device wins (``validate --device`` estimates
    on another device; :func:`recorded_devices` loads a changed one). A domain needs as many extents as the
    kernel has dimensions. ``select`` keeps the entries whose other parameters have these values (compared as
    text): warpspeed compares one time per block and folding."""
    p = Path(path)
    doc = _load_json(p)
    kind, meta, meta_key = _header(doc, p)
    if names is None and ("block_names" in meta or "folding_names" in meta):
        try:
            names = ParameterNames(tuple(meta.get("block_names", NAMES.block)),
                                   tuple(meta.get("folding_names", NAMES.folding)))
        except (InputError, TypeError) as e:
            raise InputError(f"{p}: key {meta_key}.block_names / folding_names: {e}") from None
    names = _names(names)
    if kernel is not None and (not isinstance(kernel, str) or not kernel):
        raise InputError(f"kernel is {kernel!r}; give a catalog name (e.g. star3d-r4) or a kernel TOML path.")
    if kernel is None and not any(k in meta for k in ("kernel", "kernel_spec", "kernel_description")):
        raise InputError(f"{p}: the file does not name the warpspeed kernel (no key {meta_key}.kernel); give it "
                         "(kernel=..., --kernel NAME).")
    dev = meta.get("device", device)
    why = ""
    if dev is None and kind == "cache" and isinstance(doc.get("device_name"), str):
        from ..device import device_for_gpu_name, device_ids
        if doc["device_name"] in device_ids():
            dev = doc["device_name"]
        else:  # kernel_tuner records the name the GPU reports ("NVIDIA H100 80GB HBM3")
            try:
                dev = device_for_gpu_name(doc["device_name"]).id
            except InputError as e:
                why = f": {e}"
    if not isinstance(dev, str) or not dev:
        found = (f" (device_name {doc['device_name']!r} is no warpspeed device id{why})" if "device_name" in doc
                 else "")
        raise InputError(f"{p}: the file does not name the warpspeed device{found}; give it (device=..., --device "
                         "ID).")
    dom = meta.get("domain")
    dom_key = f"{meta_key}.domain"
    if dom is None and domain is None and kind == "cache" and "problem_size" in doc:
        # kernel_tuner's problem size is often the arrays' extent with halos: a given domain wins over it
        dom, dom_key = doc["problem_size"], "problem_size"
        dom = [dom] if isinstance(dom, int) else dom
    extents = (dom_key, dom) if domain is None else ("domain", domain)  # the domain taken, as given
    try:
        dom = None if dom is None else triple(dom, "domain")
    except InputError as e:
        raise InputError(f"{p}: key {dom_key}: {e}") from None
    dom = _given(dom, None if domain is None else triple(domain, "domain"), "domain", dom_key, p)
    if dom is None:
        raise InputError(f"{p}: the file names no domain (no key {dom_key} or problem_size); give it (domain=..., "
                         "--domain X,Y,Z).")
    kernel = _file_kernel(meta, meta_key, kernel, dom, p)
    if not isinstance(extents[1], Sequence) or len(extents[1]) < 3:
        what = f"{p}: key {extents[0]}" if extents[0] != "domain" else "domain"
        check_dimensions(_load_kernel(kernel, dom, "kernel", p), extents[1], what,
                         "domain=(nx, ny, nz), --domain NX,NY,NZ")
    entries = _entries(doc, kind, p)
    if not any(n in params for params, *_ in entries for n in names.block if n):
        raise InputError(f"{p}: no entry holds a block size parameter {[n for n in names.block if n]}; name the "
                         "file's (names=ParameterNames(block=...), --block-names).")
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
        if (first := seen.setdefault((*_key(c), code), where)) != where:
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
    if not rows:
        raise InputError(f"{p}: no configuration that ran" + (" and matches select" if select else "") + ".")
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


def _entries(doc: dict, kind: str, p: Path) -> list[tuple[dict, float | None, int | None, str, str]]:
    """(parameters, time in ms or None if it did not run, registers, code, where) per entry of the file."""
    out = []
    if kind == "cache":
        cache, keys = doc["cache"], doc.get("tune_params_keys")
        if not isinstance(cache, dict):
            raise InputError(f"{p}: key cache is {type(cache).__name__}, not an object of configurations.")
        if keys is not None and (not isinstance(keys, list) or not all(isinstance(k, str) for k in keys)):
            raise InputError(f"{p}: key tune_params_keys is {keys!r}, not a list of parameter names.")
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
    results = doc["results"]
    if not isinstance(results, list):
        raise InputError(f"{p}: key results is {type(results).__name__}, not a list.")
    unit = doc.get("metadata", {}).get("timeunit", "milliseconds") if isinstance(doc.get("metadata"), dict) \
        else "milliseconds"
    scale = {"milliseconds": 1.0, "ms": 1.0, "seconds": 1e3, "s": 1e3, "microseconds": 1e-3, "us": 1e-3}.get(unit)
    if scale is None:
        raise InputError(f"{p}: key metadata.timeunit is {unit!r}; give milliseconds, seconds or microseconds.")
    for i, r in enumerate(results):
        where = f"results[{i}]"
        if not isinstance(r, dict) or not isinstance(r.get("configuration"), dict):
            raise InputError(f"{p}: {where} has no object 'configuration'.")
        params = dict(r["configuration"])
        if r.get("invalidity", "correct") != "correct":
            out.append((params, None, None, "", where))
            continue
        ms = r.get("measurements")
        if not isinstance(ms, list) or not all(isinstance(m, dict) for m in ms):
            raise InputError(f"{p}: {where}.measurements is {ms!r}, not a list of objects.")
        values = {m.get("name"): m for m in ms}
        if OBJECTIVE not in values:
            raise InputError(f"{p}: {where}.measurements has no entry named {OBJECTIVE!r} (the kernel time).")
        m = values[OBJECTIVE]
        factor = {"ms": 1.0, "s": 1e3, "us": 1e-3}.get(m.get("unit") or "ms")
        if factor is None:
            raise InputError(f"{p}: {where}.measurements 'time' has unit {m.get('unit')!r}; give ms, s or us.")
        t = _number(m.get("value"), f"{where}.measurements 'time' value", p) * (factor if m.get("unit") else scale)
        regs = values.get("num_regs", {}).get("value")
        code = values.get("code", {}).get("value", "")
        out.append((params, t, _registers(regs, f"{where}.measurements 'num_regs'", p),
                    code if isinstance(code, str) else "", where))
    return out
