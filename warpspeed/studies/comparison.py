"""Compare candidate kernels that do the same work: which kernel (or sequence of kernels) to generate.

A *candidate* is one kernel, or a sequence of kernels launched in turn (the even and odd kernels of AA
streaming, a collide and a stream kernel), with the number of updates of the domain the sequence makes.
Each kernel gets its best configuration from the screened ranking of its own space
(:func:`warpspeed.studies.ranking.rank` with ``screen=1``: its best and its order are the full ranking's).
A candidate's time per update of the domain is the sum of its kernels' best times divided by its updates;
candidates are sorted by it, fastest first, and each gets its factor to the fastest.

Candidates must do the same work: every kernel must sweep the same domain. A candidate whose kernels sweep
another domain is refused unless its updates are given, which states the normalisation (how many updates of
the compared domain its launches make).

The confidence carries across candidates (:mod:`warpspeed.studies.confidence`): candidates predicted within
the model's relative error of the fastest cannot be told apart (5 %, or 20 % on a device whose family's model
data was never measured: ``device_validation``), and a candidate whose ranking is ``unvalidated`` may be far
off; either way the comparison says so and names the candidates and blocks to measure.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from .._version import __version__
from ..device import Device
from ..errors import InputError
from ..kernel import Kernel
from ..model.device_validation import DeviceValidation, device_validation
from ..model.inputs import device_given, kernel_for
from ..model.launch import LaunchError, occupancy, registers_used
from ..model.performance import performance_model
from ..schemas import SCHEMA_VERSION
from .confidence import LEVELS, RELATIVE_ERROR, Confidence, resolution
from .ranking import RankedResult, Ranking, rank
from .space import Configuration, thread_counts

KernelSpec = Kernel | str | Path
"""A kernel as a user names it: a Kernel, a catalog name or a kernel TOML path (a Candidate holds names until the
application resolves them: Candidate.resolved)."""

SEQUENCE_SEPARATOR = "+"
"""Between the kernels of a sequence in a candidate's text (``even+odd@2``)."""
UPDATES_SEPARATOR = "@"
"""Before the updates of the domain a candidate's text makes (``even+odd@2``)."""


def _number_text(x: float) -> str:
    """A number as a candidate's text reads back exactly: ``2``, ``0.5``, ``10.09375``."""
    return str(int(x)) if float(x).is_integer() else repr(float(x))


@dataclass(frozen=True)
class Candidate:
    """Kernels launched in turn that together make ``updates`` updates of the domain (``None``: one, with the
    domains checked to be the compared one; a number states the normalisation, so that a kernel of another
    domain may be compared). ``name`` labels it in the output (default: its kernels' names joined by ``+``,
    with ``@updates`` where given)."""

    kernels: tuple[KernelSpec, ...]
    updates: float | None = None
    name: str | None = None
    labels: tuple[str, ...] | None = None  # each kernel as the user named it (default: the name or the text)

    def __post_init__(self) -> None:
        if isinstance(self.kernels, Kernel | str | Path):
            object.__setattr__(self, "kernels", (self.kernels,))
        object.__setattr__(self, "kernels", tuple(self.kernels))
        if not self.kernels:
            raise InputError("a candidate needs at least one kernel.")
        for k in self.kernels:
            if not isinstance(k, Kernel | str | Path):
                raise InputError(f"candidate kernel {k!r}: give a warpspeed Kernel, a catalog name or a kernel TOML "
                                 "path.")
        if self.updates is not None:
            u = self.updates
            if isinstance(u, bool) or not isinstance(u, int | float) or not math.isfinite(u) or u <= 0:
                names = SEQUENCE_SEPARATOR.join(_kernel_label(k) for k in self.kernels)
                raise InputError(f"candidate {self.name or names}: updates {u!r} must be a positive number (the "
                                 "updates of the domain its kernels make together, e.g. 2 for an even/odd pair).")

    @property
    def kernel_labels(self) -> tuple[str, ...]:
        """Each kernel as the user named it (a catalog name with its parameters, a path, a Kernel's name)."""
        return self.labels if self.labels is not None else tuple(_kernel_label(k) for k in self.kernels)

    @property
    def label(self) -> str:
        if self.name is not None:
            return self.name
        names = SEQUENCE_SEPARATOR.join(self.kernel_labels)
        return names if self.updates is None else f"{names}{UPDATES_SEPARATOR}{_number_text(self.updates)}"

    def resolved(self, kernels: Sequence[Kernel]) -> Candidate:
        """The same candidate of the Kernels its names resolve to (one each, in order), named and labelled as
        before."""
        return replace(self, kernels=tuple(kernels), name=self.label, labels=self.kernel_labels)


def _kernel_label(k: KernelSpec) -> str:
    return k.name if isinstance(k, Kernel) else str(k)


@dataclass(frozen=True)
class KernelChoice:
    """One kernel of a candidate at its best configuration: the screened ranking of its space."""

    label: str  # as the candidate names it (a catalog name with its parameters, a path, a Kernel's name)
    ranking: Ranking
    threads: tuple[int, ...]  # the thread counts ranked (fewer than asked when a kernel cannot launch 1024)

    @property
    def best(self) -> RankedResult:
        return self.ranking.best

    @property
    def time_s(self) -> float:
        """The best configuration's time of one launch over its domain (s)."""
        best = self.best.estimate
        assert best is not None  # compare() refuses a kernel whose best configuration cannot launch
        return best.time_s

    @property
    def confidence(self) -> Confidence:
        return self.ranking.confidence

    def to_dict(self, candidate_time_s: float) -> dict:
        best = self.best.estimate
        assert best is not None  # compare() refuses a kernel whose best configuration cannot launch
        return {"kernel": self.label, "time_s": self.time_s, "time_share": self.time_s / candidate_time_s,
                "threads": list(self.threads), "configurations": len(self.ranking.results),
                "best": best.to_dict(), "confidence": self.confidence.to_dict()}


@dataclass(frozen=True)
class CandidateResult:
    """A candidate's kernels at their best, and what they add up to per update of the domain."""

    name: str
    kernels: tuple[KernelChoice, ...]
    updates: float
    updates_given: bool  # the normalisation was stated (Candidate.updates), not the default of one
    cells: int  # cells of the compared domain: one update is this many lattice updates
    factor: float = 1.0  # time per update / the fastest candidate's

    @property
    def time_s(self) -> float:
        """The sum of the kernels' best times: one launch of the sequence (s)."""
        return sum(k.time_s for k in self.kernels)

    @property
    def time_per_update_s(self) -> float:
        return self.time_s / self.updates

    @property
    def updates_per_s(self) -> float:
        return 1.0 / self.time_per_update_s

    @property
    def performance_GLup_s(self) -> float:
        """Lattice updates of the compared domain per second, in 10^9."""
        return self.cells / self.time_per_update_s / 1e9

    @property
    def dominant(self) -> KernelChoice:
        """The kernel that takes the most time (the first of equals)."""
        return max(self.kernels, key=lambda k: k.time_s)

    @property
    def limiter(self) -> str:
        """The limiter of the kernel that dominates the time."""
        limiter = self.dominant.best.limiter
        assert limiter is not None  # every kernel's best configuration launches (see KernelChoice.time_s)
        return limiter

    @property
    def level(self) -> str:
        """The least trusted confidence level of its kernels' rankings."""
        return max((k.confidence.level for k in self.kernels), key=LEVELS.index)

    def to_dict(self, rank: int) -> dict:
        t = self.time_s
        return {"rank": rank, "name": self.name, "updates": self.updates, "updates_given": self.updates_given,
                "time_s": t, "time_per_update_s": self.time_per_update_s, "updates_per_s": self.updates_per_s,
                "performance_GLup_s": self.performance_GLup_s, "limiter": self.limiter,
                "dominant_kernel": self.dominant.label, "factor": self.factor, "confidence_level": self.level,
                "kernels": [k.to_dict(t) for k in self.kernels]}


@dataclass(frozen=True)
class Measure:
    """What to launch to choose among candidates: one kernel of one candidate and its configurations."""

    candidate: str
    kernel: str
    configurations: tuple[Configuration, ...]

    def to_dict(self) -> dict:
        return {"candidate": self.candidate, "kernel": self.kernel,
                "configurations": [c.to_dict() for c in self.configurations]}


@dataclass(frozen=True)
class ComparisonConfidence:
    """How far the order of the candidates can be trusted: ``confident`` (the next candidate is predicted
    more than ``relative_error`` slower), ``close`` (``contenders``: candidates within it of the fastest) or
    ``unvalidated`` (some candidate's ranking is); ``measure`` what to launch to choose (the contenders, and
    with an unvalidated candidate the fastest and every unvalidated one; per kernel, its ranking's
    configurations to measure)."""

    level: str
    relative_error: float
    contenders: tuple[str, ...]
    unvalidated: tuple[str, ...]
    measure: tuple[Measure, ...]
    reasons: tuple[str, ...]

    def to_dict(self) -> dict:
        return {"level": self.level, "relative_error": self.relative_error, "contenders": list(self.contenders),
                "unvalidated": list(self.unvalidated), "measure": [m.to_dict() for m in self.measure],
                "reasons": list(self.reasons)}


@dataclass(frozen=True)
class Comparison:
    """Candidates sorted fastest first (by time per update of the domain; equal times keep the order given)."""

    device: str
    domain: tuple[int, int, int]
    model: str
    candidates: tuple[CandidateResult, ...]
    confidence: ComparisonConfidence

    @property
    def best(self) -> CandidateResult:
        return self.candidates[0]

    @property
    def device_validation(self) -> DeviceValidation:
        """How far the device's model data was checked (as its rankings' estimates carry it)."""
        validation = self.best.kernels[0].ranking.device_validation
        assert validation is not None  # compare() refuses a kernel whose best configuration cannot launch
        return validation

    def to_dict(self) -> dict:
        return {"device": self.device, "domain": list(self.domain), "cells": math.prod(self.domain),
                "model": self.model, "best": self.best.name,
                "candidates": [c.to_dict(i + 1) for i, c in enumerate(self.candidates)],
                "confidence": self.confidence.to_dict(), "device_validation": self.device_validation.to_dict(),
                "warpspeed_version": __version__,
                "schema_version": SCHEMA_VERSION}


def compare(candidates: Iterable[Candidate | KernelSpec | Sequence[KernelSpec]], device: Device,
            threads: int | Iterable[int] | None = None, folding: Iterable[Sequence[int]] = ((1, 1, 1),),
            domain: Sequence[int] | None = None, *, registers: int | None = None,
            model: str | None = None) -> Comparison:
    """Rank candidate kernels that do the same work (module docstring).

    A candidate is a :class:`Candidate`, one Kernel or a list or tuple of Kernels launched in turn that make
    one update of the domain together (names and files are resolved by
    :func:`warpspeed.application.comparison.compare`, which is ``warpspeed.compare``). ``threads``, ``folding``,
    ``registers`` and ``model`` are those of :func:`~warpspeed.studies.ranking.rank`, for every kernel;
    ``threads=None`` ranks blocks of 1024 threads, or for a kernel that cannot launch them (an LBM kernel of 90
    registers) of the largest power of two that can. ``domain`` resolves every kernel for this domain."""
    cands = candidates_of(candidates)
    model = performance_model(model).name
    dev = device_given(device)
    threads = None if threads is None else thread_counts(threads)
    foldings = list(folding)  # checked by the rankings
    resolved = [[kernel_for(k, domain) for k in c.kernels] for c in cands]
    ref = resolved[0][0].domain
    _check_same_work(cands, resolved, ref)
    cells = math.prod(ref)
    names = _unique_names([c.label for c in cands])
    results = []
    rankings: dict[Kernel, tuple[Ranking, tuple[int, ...]]] = {}  # a kernel met again is not ranked again
    for c, name, kernels in zip(cands, names, resolved, strict=True):
        choices = tuple(_best_of(name, label, k, dev, threads, foldings, registers, model, rankings)
                        for label, k in zip(c.kernel_labels, kernels, strict=True))
        results.append(CandidateResult(name, choices, 1 if c.updates is None else c.updates, c.updates is not None,
                                       cells))
    results.sort(key=lambda r: r.time_per_update_s)  # stable: equal times keep the order given
    fastest = results[0].time_per_update_s
    results = [replace(r, factor=r.time_per_update_s / fastest) for r in results]
    share = resolution(device_validation(dev)).relative_error  # wider where the device's data was not measured
    return Comparison(dev.id, ref, model, tuple(results), assess_candidates(results, share))


def candidates_of(candidates: Iterable[Candidate | KernelSpec | Sequence[KernelSpec]]) -> list[Candidate]:
    """The candidates as :class:`Candidate`, at least two of them."""
    if isinstance(candidates, Kernel | str | Path | Candidate):
        raise InputError(f"compare takes a list of candidates, got one: {candidates!r}; give two or more, e.g. "
                         "compare(['d3q19-srt', 'd3q19-srt:layout=zyxf'], device).")
    cands = [_candidate(c) for c in candidates]
    if len(cands) < 2:
        raise InputError(f"compare needs at least two candidates, got {len(cands)}: give the kernels (or "
                         "sequences of kernels) to put side by side.")
    return cands


def _candidate(c) -> Candidate:
    if isinstance(c, Candidate):
        return c
    if isinstance(c, Kernel | str | Path):
        return Candidate((c,))
    if isinstance(c, Sequence):
        return Candidate(tuple(c))
    raise InputError(f"candidate {c!r}: give a Candidate, a kernel (warpspeed Kernel, catalog name or TOML path) "
                     "or a list of kernels launched in turn.")


def _check_same_work(cands: list[Candidate], resolved: list[list[Kernel]], ref: tuple[int, int, int]) -> None:
    """Refuse a candidate with a kernel of another domain than the first candidate's first kernel, unless its
    updates state the normalisation."""

    def text(d) -> str:
        return "x".join(map(str, d))

    for c, kernels in zip(cands, resolved, strict=True):
        other = [(label, k.domain) for label, k in zip(c.kernel_labels, kernels, strict=True) if k.domain != ref]
        if other and c.updates is None:
            where = ", ".join(f"{label} sweeps {text(d)}" for label, d in other)
            raise InputError(f"candidates {cands[0].label!r} and {c.label!r} do not do the same work: "
                             f"{cands[0].kernel_labels[0]} sweeps {text(ref)} cells, {where}. Give one "
                             f"domain for all (domain=), or state how many updates of the "
                             f"{text(ref)} domain {c.label!r} makes per launch ({c.label}@N as a candidate's text, "
                             "Candidate(..., updates=N) in Python).")


def _unique_names(names: list[str]) -> list[str]:
    """The candidates' names, a repeated one numbered (``copy``, ``copy #2``)."""
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n} #{seen[n]}")
    return out


def best_ranking(k: Kernel, dev: Device, threads: tuple[int, ...] | None, foldings, registers: int | None,
                 model: str | None) -> tuple[Ranking, tuple[int, ...]]:
    """A kernel's screened ranking (``screen=1``: its best is the full ranking's) and the thread counts ranked;
    with ``threads=None`` blocks of 1024 threads, halved until one can launch. The ranking's best is an error
    row when no block can launch (the caller says why)."""
    counts = (_first_resident(k, dev, registers),) if threads is None else tuple(threads)
    r = rank(k, dev, counts, foldings, registers=registers, model=model, screen=1)
    t = counts[0]
    while threads is None and r.best.error and t > dev.warp_size:
        t //= 2
        counts = (t,)
        r = rank(k, dev, counts, foldings, registers=registers, model=model, screen=1)
    return r, counts


def _first_resident(k: Kernel, dev: Device, registers: int | None) -> int:
    """The largest of 1024, 512, ... threads per block of which an SM holds one block with the kernel's
    registers and shared memory: no ranking of a count that cannot launch at all (every block of it an error
    row) is run only to be halved (a 148-register D3Q19 kernel: 1024 and 512 skipped). Counts that fail for
    other reasons (grid size, block extents) are still found by ranking them."""
    regs, source = registers_used(k, registers)
    t = 1024
    if isinstance(regs, bool) or not isinstance(regs, int) or regs < 1:
        return t  # the ranking refuses it with its own message
    while t > dev.warp_size:
        try:
            occupancy(dev, t, regs, k.shared_bytes_per_block, source)
        except LaunchError:
            t //= 2
        else:
            break
    return t


def _best_of(name: str, label: str, k: Kernel, dev: Device, threads, foldings, registers, model: str,
             rankings: dict[Kernel, tuple[Ranking, tuple[int, ...]]]) -> KernelChoice:
    """A kernel's screened ranking (from ``rankings`` where it was ranked before); with ``threads=None`` 1024
    threads, halved until a block can launch."""
    if k in rankings:
        return KernelChoice(label, *rankings[k])
    r, counts = best_ranking(k, dev, threads, foldings, registers, model)
    if r.best.error:
        raise InputError(f"candidate {name!r}: no configuration of {label} can launch on {dev.id}: {r.best.error} "
                         "Try fewer threads per block or fewer registers.")
    rankings[k] = r, counts
    return KernelChoice(label, r, counts)


def assess_candidates(results: Sequence[CandidateResult],
                      relative_error: float = RELATIVE_ERROR) -> ComparisonConfidence:
    """The confidence of candidates sorted fastest first (ComparisonConfidence): those predicted within
    ``relative_error`` of the fastest (performance at least 1 - relative_error of its, as for configurations)
    are contenders; a candidate with an unvalidated ranking makes the comparison unvalidated."""
    pct = f"{100 * relative_error:.0f} %"
    best = results[0]
    within = [r for r in results if r.performance_GLup_s >= (1 - relative_error) * best.performance_GLup_s]
    unvalidated = [r for r in results if r.level == "unvalidated"]
    reasons = []
    if len(within) > 1:
        reasons.append(f"{len(within)} candidates are predicted within the model's {pct} of the fastest: "
                       f"{', '.join(r.name for r in within)}; measure them to choose")
    elif len(results) > 1:
        reasons.append(f"the next candidate, {results[1].name}, is predicted {results[1].factor:.2f}x slower, "
                       f"beyond the model's {pct}")
    chosen = list(within) if len(within) > 1 else []
    if unvalidated:
        for r in unvalidated:
            why = next(k.confidence.reasons[1:-1] for k in r.kernels if k.confidence.level == "unvalidated")
            reasons.append(f"{r.name} is unvalidated: {why[0] if why else 'an access pattern outside the validated'}")
        reasons.append("the model may be far off for an unvalidated candidate: measure it against the fastest")
        for r in [best, *unvalidated]:
            if r not in chosen:
                chosen.append(r)
    level = "unvalidated" if unvalidated else "close" if len(within) > 1 else "confident"
    measure = tuple(Measure(r.name, k.label, k.confidence.measure) for r in chosen for k in r.kernels)
    if measure:
        n = sum(len(m.configurations) for m in measure)
        reasons.append(f"measure {n} launches of {len(chosen)} candidates: each kernel's contenders"
                       + (" (and for an unvalidated one the best block of every x-extent)" if unvalidated else ""))
    return ComparisonConfidence(level, relative_error, tuple(r.name for r in within),
                                tuple(r.name for r in unvalidated), measure, tuple(reasons))


__all__ = ["Candidate", "CandidateResult", "Comparison", "ComparisonConfidence", "KernelChoice", "Measure",
           "SEQUENCE_SEPARATOR", "UPDATES_SEPARATOR", "assess_candidates", "best_ranking", "compare"]
