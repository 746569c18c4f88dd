"""Rank a configuration space: evaluate every configuration (in parallel on any Executor), sort, explain.

Order: higher performance first; ties go to the lower DRAM volume, then the lower L2 volume, then fewer
L1 cycles, then the wider block in x (rows of whole sectors are the robust choice), then the smaller block
(x, y, z), folding and domain tuples; configurations that cannot launch (performance 0, with an ``error``)
come last. The order does not depend on the number of workers.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Executor, as_completed
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from .._version import __version__
from ..device import Device
from ..errors import InputError, check_output_file
from ..frontends import Reference
from ..kernel import Kernel
from ..model.device_validation import DeviceValidation, device_validation
from ..model.estimate import Estimate, estimate, performance_bound
from ..model.inputs import device_given, kernel_for
from ..model.launch import triple
from ..model.levels import LEVELS
from ..model.performance import performance_model
from ..model.roofline import limiter_names
from ..schemas import SCHEMA_VERSION
from .confidence import Confidence, assess, resolution
from .space import (
    Configuration,
    configurations,
    generated_block_shapes,
    thread_counts,
    without_idle_axes,
)
from .workers import available_cores, pool_size, run_tasks


@dataclass(frozen=True)
class Failure:
    """Why a configuration has no estimate (it cannot launch, or an internal error), with what names its row."""

    kernel: str
    device: str
    domain: tuple[int, int, int]
    message: str


@dataclass(frozen=True)
class RankedResult:
    """One configuration's outcome: its typed estimate, or the failure that left it without one.
    ``data`` is its JSON (docs/outputs.md), for the edges that write it (the CLI, the rank cache, the
    plugin's metadata); code below them reads the estimate."""

    configuration: Configuration
    estimate: Estimate | None = None
    failure: Failure | None = None  # exactly one of the two

    def __post_init__(self) -> None:
        if (self.estimate is None) == (self.failure is None):
            raise ValueError("a ranked result holds an estimate, or a failure")

    @property
    def error(self) -> str | None:
        return None if self.failure is None else self.failure.message

    @cached_property
    def data(self) -> dict:
        """The result's JSON: the estimate's, or an error row (performance 0, no limiter, the ``error``)."""
        if self.estimate is not None:
            return self.estimate.to_dict()
        c, f = self.configuration, self.failure
        assert f is not None  # exactly one of the two
        return {"kernel": f.kernel, "device": f.device, "block": list(c.block), "folding": list(c.folding),
                "domain": list(c.domain or f.domain), "performance_GLup_s": 0, "limiter": None, "error": f.message}

    @property
    def performance_GLup_s(self) -> float:
        return 0.0 if self.estimate is None else self.estimate.performance_GLup_s

    @property
    def limiter(self) -> str | None:
        return None if self.estimate is None else self.estimate.limiter

    def sort_key(self) -> tuple:
        c = self.configuration
        if self.estimate is None:
            return (1, 0.0, *(0.0 for _ in LEVELS), c.block, c.folding, c.domain or ())
        v, cycles = self.estimate.volumes_B_per_lup, self.estimate.l1_cycles_per_warp_lup
        # ties: less traffic at the outermost level first (DRAM, then the MSC, L2), then fewer L1 cycles; a level
        # the device lacks moves nothing
        costs = (lv.cost(v, cycles) if lv.present_in(v) else 0.0 for lv in reversed(LEVELS))
        return (0, -self.performance_GLup_s, *costs, -c.block[0], c.block, c.folding, c.domain or ())


@dataclass(frozen=True)
class BoundedResult:
    """A configuration a screened ranking did not estimate in full: its performance is at most ``bound_GLup_s``
    (:func:`warpspeed.model.estimate.performance_bound`), below the ``screen``-th best of the ranking and more than
    the contenders' share below its best (:func:`warpspeed.studies.confidence.resolution`)."""

    configuration: Configuration
    bound_GLup_s: float

    def to_dict(self) -> dict:
        return {**self.configuration.to_dict(), "performance_bound_GLup_s": self.bound_GLup_s}


@dataclass(frozen=True)
class Ranking:
    """Results sorted best first, with the inputs that produced them. A screened ranking (``screen`` = N)
    estimates in full every configuration that can be among its N best or within the contenders' share of the
    best (:func:`warpspeed.studies.confidence.resolution`); the others are ``bounded``."""

    kernel: str
    device: str
    results: tuple[RankedResult, ...]
    bounded: tuple[BoundedResult, ...] = ()
    screen: int | None = None

    @property
    def best(self) -> RankedResult:
        return self.results[0]

    @property
    def limiter_counts(self) -> dict[str, int]:
        counts = dict.fromkeys(limiter_names(r.limiter for r in self.results), 0)
        counts["error"] = 0
        for r in self.results:
            counts[r.limiter or "error"] += 1
        return counts

    @property
    def device_validation(self) -> DeviceValidation | None:
        """How far the device's model data was checked (its estimates carry it); None when nothing launches."""
        return next((r.estimate.device_validation for r in self.results if r.estimate is not None), None)

    @cached_property
    def confidence(self) -> Confidence:
        """How far the order can be trusted: contenders, unvalidated access patterns, what to measure (assessed
        once: the JSON, the headline and the plugin all ask)."""
        return assess(self.results)

    def to_dicts(self) -> list[dict]:
        """One JSON object per configuration, best first, with its ``rank`` (1-based)."""
        return [{"rank": i + 1, **r.data} for i, r in enumerate(self.results)]

    def to_dict(self) -> dict:
        out = {"kernel": self.kernel, "device": self.device, "configurations": len(self.results),
               "limiter_counts": self.limiter_counts, "best": self.to_dicts()[0] if self.results else None,
               "confidence": self.confidence.to_dict(),
               "device_validation": None if self.device_validation is None else self.device_validation.to_dict(),
               "results": self.to_dicts(), "warpspeed_version": __version__, "schema_version": SCHEMA_VERSION}
        if self.screen is not None:  # a screened ranking: which configurations were only bounded
            out["screen"] = self.screen
            out["bounded"] = [b.to_dict() for b in self.bounded]
        return out


def evaluate(kernel: Kernel, device: Device, configs: Sequence[Configuration], registers: int | None = None,
             model: str | None = None) -> list[RankedResult]:
    """Estimate configurations one by one, where a failing configuration is a result with its failure and no
    estimate (never raises). Results pickle: workers send them back as they are. ``model`` names the
    performance model."""
    out = []
    for c in configs:
        try:
            e = estimate(kernel, device, c.block, c.folding, c.domain, registers=registers, model=model)
            out.append(RankedResult(c, e))
        except InputError as err:
            out.append(RankedResult(c, failure=Failure(kernel.name, device.id, kernel.domain, str(err))))
        except Exception as err:  # an internal error in one configuration must not lose the others
            msg = f"internal error ({type(err).__name__}): {err}"
            out.append(RankedResult(c, failure=Failure(kernel.name, device.id, kernel.domain, msg)))
    return out


def kernel_content(kernel: Kernel) -> dict:
    """What a kernel's numbers depend on: its description (the TOML dict) less the prose of its
    ``description``, which may change between runs (``registers from nvcc`` the first time, ``... (cached)``
    the next) without changing a number."""
    return {k: v for k, v in kernel.spec.items() if k != "description"}


def content_hash(obj) -> str:
    """Short stable hash of JSON-able content (kernel spec, device description, configuration)."""
    text = json.dumps(obj, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class ResultCache:
    """Append-only JSON-lines file of finished configurations, keyed by kernel, device and config hashes.

    A changed kernel or device file changes its hash, so its old entries are simply not found again.
    """

    def __init__(self, path: str | Path, kernel: Kernel, device: Device, model: str = "roofline"):
        self.path = Path(path)
        self.kernel_hash = content_hash({"spec": kernel_content(kernel), "domain": kernel.domain,
                                         "version": __version__, **({} if model == "roofline" else
                                                                    {"model": model})})
        self.device_hash = content_hash(device.to_dict())
        self.entries: dict[str, dict] = {}
        self._newline_first = False
        check_output_file(self.path, "cache file")
        if self.path.exists():
            try:
                text = self.path.read_text(encoding="utf-8")
                lines = text.splitlines()
                self._newline_first = bool(text) and not text.endswith("\n")
            except OSError as e:
                raise InputError(f"cache file '{self.path}' cannot be read ({e}).") from None
            except UnicodeDecodeError:
                raise InputError(f"cache file '{self.path}' is not a ranking cache (it is not UTF-8 text); give a "
                                 "new file name, or one an earlier ranking's cache wrote.") from None
            _check_is_rank_cache(self.path, lines)
            for line in lines:
                try:
                    rec = json.loads(line)
                    if not isinstance(rec, dict) or ("data" not in rec
                                                     and not isinstance(rec.get("bound"), int | float)):
                        continue
                    self.entries[rec["key"]] = rec
                except (json.JSONDecodeError, KeyError, TypeError):
                    continue  # a line cut by an interruption: that configuration is evaluated again

    def key(self, c: Configuration) -> str:
        return f"{self.kernel_hash}:{self.device_hash}:{content_hash(c.to_dict())}"

    def get(self, c: Configuration) -> dict | None:
        """The finished configuration's record (None if absent, or if only its bound was recorded)."""
        rec = self.entries.get(self.key(c))
        return rec if rec is not None and "data" in rec else None

    def bound(self, c: Configuration) -> float | None:
        """The performance bound a screened ranking recorded for the configuration, if any."""
        rec = self.entries.get(self.key(c))
        return None if rec is None or "bound" not in rec else float(rec["bound"])

    def add(self, result: RankedResult) -> None:
        c = result.configuration
        self._append({"key": self.key(c), "configuration": c.to_dict(), "data": result.data, "error": result.error})

    def add_bound(self, c: Configuration, bound: float) -> None:
        self._append({"key": self.key(c), "configuration": c.to_dict(), "bound": bound})

    def _append(self, rec: dict) -> None:
        self.entries[rec["key"]] = rec
        with self.path.open("a", encoding="utf-8") as f:
            if self._newline_first:  # the file ends in a line cut by an interruption: start a new one
                f.write("\n")
                self._newline_first = False
            f.write(json.dumps(rec) + "\n")
            f.flush()


def _check_is_rank_cache(path: Path, lines: list[str]) -> None:
    """Refuse to append to a file that a ranking did not write (a measurement CSV, a kernel TOML): its first
    line must be JSON, as every line a ranking writes is (JSON lines that are not records are skipped)."""
    first = next((line for line in lines if line.strip()), None)
    if first is None:
        return
    try:
        json.loads(first)
    except json.JSONDecodeError:
        raise InputError(f"cache file '{path}' is not a ranking cache (its first line is not JSON); give a new "
                         "file name, or one an earlier ranking's cache wrote.") from None


def _cached_result(c: Configuration, rec: dict) -> RankedResult | None:
    """The ranked result of a cache record; None for a record of an older layout (estimated afresh)."""
    data = rec["data"]
    try:
        if rec["error"]:
            return RankedResult(c, failure=Failure(data["kernel"], data["device"], tuple(data["domain"]),
                                                   rec["error"]))
        return RankedResult(c, Estimate.from_dict(data))
    except (KeyError, TypeError, InputError):
        return None


def rank(kernel: Kernel, device: Device, threads: Iterable[int] = (1024,),
         folding: Iterable[Sequence[int]] = ((1, 1, 1),), domain: Sequence[int] | None = None, *,
         blocks: Iterable[Sequence[int]] | None = None, domains: Iterable[Sequence[int]] | None = None,
         configs: Iterable[Configuration] | None = None,
         registers: int | None = None, executor: Executor | None = None, jobs: int | None = None,
         cache: str | Path | None = None, progress: Callable[[int, int], None] | None = None,
         model: str | None = None, screen: int | None = None) -> Ranking:
    """Evaluate a configuration space and sort it best first.

    The space is ``configs`` if given, else ``blocks`` (or every power-of-two shape with a thread count in
    ``threads`` that fits the device) x ``folding`` x ``domains`` (default: the kernel's domain).
    ``executor``: any ``concurrent.futures.Executor``
    (a Dask ``Client.get_executor()`` runs the sweep on a cluster); by default a local process pool of
    ``jobs`` workers (all cores), or this process for ``jobs=1``. ``cache``: a JSON-lines file that
    makes an interrupted sweep resumable. ``progress(done, total)`` is called as results arrive.
    ``model`` names the performance model (default: :data:`warpspeed.model.performance.DEFAULT_MODEL`).
    ``screen`` = N ranks only the N best exactly: every configuration's performance is first bounded from its
    block stage (:func:`warpspeed.model.estimate.performance_bound`); they are then estimated in full, highest bound
    first, in this process, until the next bound is below the N-th best performance found; the rest are
    ``Ranking.bounded``. The N best, and their order, are those of the full ranking, and so is its
    ``confidence`` (the contenders of the best, and for an unvalidated access pattern the best of every
    x-extent).
    """
    model = performance_model(model).name
    threads = thread_counts(threads)
    k = kernel_for(kernel, domain)
    dev = device_given(device)
    if screen is not None:
        _check_screen(screen)
    space = _space(dev, threads, folding, blocks, domains, configs, k.domain, k.indexing)
    done: dict[Configuration, RankedResult] = {}
    store = ResultCache(cache, k, dev, model) if cache is not None else None
    if store is not None:
        for c in space:
            rec = store.get(c)
            cached = None if rec is None else _cached_result(c, rec)
            if cached is not None:
                done[c] = cached
    if progress is not None and done:
        progress(len(done), len(space))
    todo = [c for c in space if c not in done]
    bounded: dict[Configuration, float] = {}
    if screen is not None:
        bounded = _screened(k, dev, todo, done, screen, registers, model, store, progress, len(space))
    else:
        _evaluate_space(k, [dev], todo, [done], len(space), registers, executor, jobs, progress, model,
                        None if store is None else [store])
    return Ranking(k.name, dev.id, tuple(sorted(done.values(), key=RankedResult.sort_key)),
                   tuple(BoundedResult(c, b) for c, b in sorted(bounded.items(), key=lambda cb: _by_bound(*cb))),
                   screen)


def _check_screen(screen: object) -> None:
    if isinstance(screen, bool) or not isinstance(screen, int) or screen < 1:
        raise InputError(f"screen must be a positive number of best configurations to rank exactly, "
                         f"got {screen!r}.")


def _by_bound(c: Configuration, bound: float) -> tuple:
    """Highest bound first; ties in the order of :meth:`RankedResult.sort_key` (a domain of None first)."""
    return (-bound, c.block, c.folding, c.domain or ())


BOUND_MARGIN = 1e-9
"""Relative margin below the n-th best under which a screened ranking leaves a configuration bounded."""


class _Halted(Exception):
    """A screening's ``stop`` said to end where it is (:func:`precount`)."""


class _Screening:
    """The state of one screened ranking: the bounds known so far, which of them are tightened (least DRAM
    volumes too), the ``n`` best performances estimated, and the results (``done``)."""

    def __init__(self, k: Kernel, dev: Device, done: dict[Configuration, RankedResult], n: int,
                 registers: int | None, model: str, store: ResultCache | None, progress, total: int,
                 stop: Callable[[], bool] | None):
        self.k, self.dev, self.done, self.n = k, dev, done, n
        self.registers, self.model, self.store, self.progress, self.total = registers, model, store, progress, total
        self.stop = stop if stop is not None else (lambda: False)
        self.bounds: dict[Configuration, float] = {}
        self.tightened: set[Configuration] = set()
        self.best = sorted((r.performance_GLup_s for r in done.values() if not r.error), reverse=True)[:n]
        self.relative_error = resolution(device_validation(dev)).relative_error  # the contenders' share

    def check(self) -> None:
        if self.stop():
            raise _Halted

    def bound(self, c: Configuration, least_dram: bool) -> float:
        try:
            return performance_bound(self.k, self.dev, c.block, c.folding, c.domain, registers=self.registers,
                                     model=self.model, least_dram=least_dram)
        except Exception:  # the full estimate reports it as the configuration's error
            return math.inf

    def bound_all(self, todo: list[Configuration]) -> None:
        """The cheap bounds of the block stage (no DRAM traffic), or those the cache recorded."""
        for c in todo:
            self.check()
            known = self.store.bound(c) if self.store is not None else None
            self.bounds[c] = known if known is not None else self.bound(c, least_dram=False)

    def tighter(self, c: Configuration) -> float:
        """The bound with the least DRAM volumes too (once per configuration: it counts the wave's sectors)."""
        if c not in self.tightened:
            self.tightened.add(c)
            self.bounds[c] = min(self.bounds[c], self.bound(c, least_dram=True))
        return self.bounds[c]

    def estimate(self, c: Configuration) -> None:
        _record(self.done, self.store, evaluate(self.k, self.dev, [c], self.registers, model=self.model))
        if not self.done[c].error:
            self.best = sorted([*self.best, self.done[c].performance_GLup_s], reverse=True)[:self.n]
        if self.progress is not None:
            self.progress(len(self.done), self.total)

    def below(self, b: float) -> bool:
        """Whether a bound keeps a configuration from the n best and the contenders of the best (with a margin
        for rounding: a bound may differ from the estimate in the last digits where it is reached)."""
        best = self.best
        return len(best) == self.n and b < min(best[-1], best[0] * (1 - self.relative_error)) * (1 - BOUND_MARGIN)

    def by_bound(self, configs: list[Configuration]) -> list[Configuration]:
        return sorted(configs, key=lambda c: _by_bound(c, self.bounds[c]))

    def best_and_contenders(self, todo: list[Configuration]) -> list[Configuration]:
        """Estimate, highest bound first, every configuration that can be among the n best or the contenders
        of the best; the others, bounded, are returned (highest bound first)."""
        rest, passed = self.by_bound(todo), []
        while rest:
            if self.below(self.bounds[rest[0]]):  # neither this one nor any after it (cheap bounds, highest first)
                break
            self.check()
            c = rest.pop(0)
            if self.below(self.tighter(c)):  # the best only rises: a configuration passed stays out
                passed.append(c)
            else:
                self.check()
                self.estimate(c)
        return self.by_bound(passed + rest)

    def best_of_every_x(self, rest: list[Configuration]) -> list[Configuration]:
        """Estimate the best configuration of every x-extent, as the full ranking has it (what an unvalidated
        ranking's confidence reads); the configurations still bounded are returned."""
        best_of_x: dict[int, float] = {}  # the best estimated performance per x-extent

        def found(r: RankedResult) -> None:
            if not r.error:
                x = r.configuration.block[0] * r.configuration.folding[0]
                best_of_x[x] = max(best_of_x.get(x, 0.0), r.performance_GLup_s)

        for r in self.done.values():
            found(r)
        rest = list(rest)
        for c in list(rest):  # highest bound first
            self.check()
            x = c.block[0] * c.folding[0]
            if x in best_of_x and self.tighter(c) < best_of_x[x] * (1 - BOUND_MARGIN):
                continue
            self.check()
            rest.remove(c)
            self.estimate(c)
            found(self.done[c])
        return rest


def _screened(k: Kernel, dev: Device, todo: list[Configuration], done: dict[Configuration, RankedResult], n: int,
              registers: int | None, model: str, store: ResultCache | None, progress, total: int,
              stop: Callable[[], bool] | None = None) -> dict[Configuration, float]:
    """Estimate in full, highest bound first, the configurations of ``todo`` that can be among the ``n`` best
    or the contenders of the best (into ``done``), and, where those are unvalidated, the best of every
    x-extent (:mod:`warpspeed.studies.confidence`); the bounds of the others. A configuration whose bound fails is
    estimated (its error row). ``stop``: asked before each bound, tightened bound and estimate; once true, the
    screening ends where it is, unfinished (:func:`precount`)."""
    screening = _Screening(k, dev, done, n, registers, model, store, progress, total, stop)
    try:
        screening.bound_all(todo)
        rest = screening.best_and_contenders(todo)
        if rest:
            ordered: list[RankedResult] = sorted(done.values(), key=RankedResult.sort_key)
            if assess(ordered).level == "unvalidated":
                rest = screening.best_of_every_x(rest)
    except _Halted:
        return {}
    if store is not None:
        for c in rest:
            store.add_bound(c, screening.bounds[c])
    if progress is not None:
        progress(total, total)
    return {c: screening.bounds[c] for c in rest}


def precount(kernel: Kernel, device: Device, threads: Iterable[int] = (1024,),
             folding: Iterable[Sequence[int]] = ((1, 1, 1),), domain: Sequence[int] | None = None, *,
             until: Callable[[], bool], blocks: Iterable[Sequence[int]] | None = None,
             domains: Iterable[Sequence[int]] | None = None, configs: Iterable[Configuration] | None = None,
             registers: int | None = None, model: str | None = None, screen: int = 1) -> None:
    """Count ahead, in this process, what ``rank(..., screen=screen)`` of the same space will ask for, in the
    order it will ask, until ``until()`` is true (asked before each bound and estimate); nothing is returned.

    For time that would otherwise be spent waiting, such as the compiler's register count: the counts stay in
    the kernel's analysis, which serves every register count (:class:`~warpspeed.model.estimate.KernelAnalysis`),
    so the ranking with the real registers reuses each count whose wave the guessed ``registers`` got right
    (the same blocks per SM) and counts the others itself. The ranking's results do not depend on what was
    counted ahead, only its time does. Bad input raises here as in :func:`rank`."""
    _check_screen(screen)
    model = performance_model(model).name
    k = kernel_for(kernel, domain)
    dev = device_given(device)
    todo = _space(dev, threads, folding, blocks, domains, configs, k.domain, k.indexing)
    _screened(k, dev, todo, {}, screen, registers, model, None, None, len(todo), stop=until)


def rank_on_devices(kernel: Kernel, devices: Sequence[Device], threads: Iterable[int] = (1024,),
                    folding: Iterable[Sequence[int]] = ((1, 1, 1),), domain: Sequence[int] | None = None, *,
                    blocks: Iterable[Sequence[int]] | None = None, registers: int | None = None,
                    executor: Executor | None = None, jobs: int | None = None,
                    progress: Callable[[int, int], None] | None = None, model: str | None = None) -> list[Ranking]:
    """:func:`rank` on several devices at once (the values of a what-if), one ranking per device: each worker
    estimates its configurations on every device in turn, so that what the devices share (the block counts
    and wave counts of a configuration, when only cache sizes or bandwidths differ) is computed once.
    ``progress(done, total)`` counts configurations over all devices."""
    model = performance_model(model).name
    threads = thread_counts(threads)
    k = kernel_for(kernel, domain)
    devs = [device_given(d) for d in devices]
    blocks = None if blocks is None else [tuple(b) for b in blocks]
    spaces = [_space(d, threads, folding, blocks, None, None, k.domain, k.indexing) for d in devs]
    if any(sp != spaces[0] for sp in spaces):  # devices of other block limits: rank them one by one
        return [rank(k, d, threads, folding, blocks=blocks, registers=registers, executor=executor, jobs=jobs,
                     model=model, progress=progress) for d in devs]
    done: list[dict[Configuration, RankedResult]] = [{} for _ in devs]
    _evaluate_space(k, devs, spaces[0], done, len(spaces[0]) * len(devs), registers, executor, jobs, progress,
                    model, None)
    return [Ranking(k.name, d.id, tuple(sorted(r.values(), key=RankedResult.sort_key))) for d, r in zip(devs, done,
                                                                                                       strict=True)]


def _space(dev: Device, threads, folding, blocks, domains, configs, kernel_domain,
           indexing: str = "linear3d") -> list[Configuration]:
    """The configurations of a ranking on ``dev`` (see :func:`rank`): generated block shapes leave out those
    with threads along an axis that no domain ranked extends (a 2-D domain gets no block deeper than 1). A
    kernel of ``linear1d`` indexing gets one-dimensional blocks (:func:`generated_block_shapes`), one of
    ``gridstrided_linear1d`` indexing also its grids (:data:`GRID_STRIDES`, where no other folding is given)."""
    if configs is not None:
        return list(dict.fromkeys(configs))
    domains = None if domains is None else [triple(d, "domain") for d in domains]
    shapes = blocks
    if indexing == "gridstrided_linear1d" and [tuple(f) for f in folding] == [(1, 1, 1)]:
        folding = GRID_STRIDES  # the grid: the loop's iterations per thread
    if shapes is None:
        shapes = generated_block_shapes(indexing, threads, dev)
        if indexing == "linear3d":
            shapes = without_idle_axes(shapes, domains or [kernel_domain]) or shapes
    return configurations(shapes, folding, (None,) if domains is None else domains)


GRID_STRIDES = tuple((1 << i, 1, 1) for i in range(7))
"""The foldings a ranking of a ``gridstrided_linear1d`` kernel takes unless given: the loop's iterations per thread,
1 to 64 (the grid from one block per N cells down to a 64th of that)."""


def _evaluate_space(k: Kernel, devs: list[Device], todo: list[Configuration],
                    done: list[dict[Configuration, RankedResult]], total: int, registers: int | None,
                    executor: Executor | None, jobs: int | None, progress, model: str,
                    stores: list[ResultCache] | None) -> None:
    """Estimate every configuration of ``todo`` on every device into ``done`` (one dict per device), in this
    process or in chunks on an executor (a local process pool of ``jobs`` workers, all cores by default)."""

    def finished(i: int, batch: list[RankedResult]) -> None:
        _record(done[i], None if stores is None else stores[i], batch)

    def report() -> None:
        if progress is not None:
            progress(sum(len(d) for d in done), total)

    if executor is None and (pool_size(jobs, len(todo)) <= 1 or len(todo) <= 2):
        for c in todo:
            for i, dev in enumerate(devs):
                finished(i, evaluate(k, dev, [c], registers, model=model))
            report()
        return
    workers = pool_size(jobs, len(todo)) if executor is None else max(1, jobs or available_cores())
    size = max(1, math.ceil(len(todo) / (4 * workers)))
    tasks = [(k, devs, todo[i:i + size], registers, model) for i in range(0, len(todo), size)]

    def collect(futures: list) -> None:
        for fut in as_completed(futures):
            for i, batch in enumerate(fut.result()):
                finished(i, batch)
            report()

    run_tasks(_evaluate_on_devices, tasks, executor, workers, collect)


def _record(done: dict[Configuration, RankedResult], store: ResultCache | None, batch: list[RankedResult]) -> None:
    """Keep evaluated configurations as results (and in the cache file, if any)."""
    for r in batch:
        done[r.configuration] = r
        if store is not None:
            store.add(r)


def _evaluate_on_devices(k: Kernel, devs: list[Device], configs: Sequence[Configuration], registers: int | None,
                         model: str) -> list[list[RankedResult]]:
    """:func:`evaluate` of the configurations on each device (a worker's task), configuration by configuration,
    so that the devices of one configuration follow each other and share its counts."""
    out: list[list] = [[] for _ in devs]
    for c in configs:
        for i, dev in enumerate(devs):
            out[i] += evaluate(k, dev, [c], registers, model=model)
    return out


LINEAR_REFERENCE_BLOCK = (256, 1, 1)
"""pystencils' default block of its Linear1D indexing schemes: the reference of a one-dimensional launch."""


def reference_block(kernel: Kernel, reference: Reference, domain: Sequence[int] | None = None) -> tuple[int, int, int]:
    """The block a ranking of ``kernel`` is compared with: its front end's ``reference`` for the domain (default:
    the kernel's), or, for a one-dimensional launch (``linear1d``, ``gridstrided_linear1d`` indexing), which no
    block of two or three dimensions can launch, :data:`LINEAR_REFERENCE_BLOCK` whatever the front end."""
    if kernel.indexing != "linear3d":
        return LINEAR_REFERENCE_BLOCK
    return reference.block(domain if domain is not None else kernel.domain)


def reference_estimate(ranking: Ranking, kernel: Kernel, device: Device,
                       block: Sequence[int] | None = None, domain: Sequence[int] | None = None,
                       registers: int | None = None, model: str | None = None) -> RankedResult:
    """The ranking's row for ``block`` without folding, evaluated if not in it; ``block=None``: the reference
    block of the kernel-file front end for the domain (a Kernel object is that front end's; a plugin's kernel
    gets its own front end's block from :func:`warpspeed.application.ranking.reference_estimate`)."""
    if block is None:
        from ..file_frontend import kernel_files

        block = reference_block(kernel_for(kernel), kernel_files().reference, domain)
    c = Configuration(tuple(block), (1, 1, 1), None if domain is None else tuple(domain))  # type: ignore[arg-type]
    for r in ranking.results:
        if r.configuration.block == c.block and r.configuration.folding == c.folding:
            return r
    k = kernel_for(kernel, domain)
    dev = device_given(device)
    result, = evaluate(k, dev, [c], registers, model=model)
    return result
