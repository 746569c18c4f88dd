"""Comparisons of candidate kernels, the kernels and the device given by name, file or object, and candidates
as the command line writes them (``even+odd@2``): read, resolved, then compared by
:func:`warpspeed.studies.comparison.compare`. ``compare`` is ``warpspeed.compare``."""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from ..device import Device
from ..errors import InputError
from ..model.performance import performance_model
from ..studies import comparison as _comparison
from ..studies.comparison import SEQUENCE_SEPARATOR, UPDATES_SEPARATOR, Candidate, Comparison, KernelSpec, candidates_of
from ..studies.space import thread_counts
from .resolve import resolve_device, resolve_kernel


def compare(candidates: Iterable[Candidate | KernelSpec | Sequence[KernelSpec]], device: Device | str | Path,
            threads: int | Iterable[int] | None = None, folding: Iterable[Sequence[int]] = ((1, 1, 1),),
            domain: Sequence[int] | None = None, *, registers: int | None = None,
            model: str | None = None) -> Comparison:
    """:func:`warpspeed.studies.comparison.compare` of candidates whose kernels are Kernels, catalog names or
    TOML paths, on a device given by name, file or object (``domain`` resolves every kernel for it). The
    inputs are checked in the study's order: the candidates, the model, the device, the threads, the kernels."""
    cands = candidates_of(candidates)
    performance_model(model)
    dev = resolve_device(device)
    if threads is not None:
        thread_counts(threads)
    resolved = [c.resolved([resolve_kernel(k, domain) for k in c.kernels]) for c in cands]
    return _comparison.compare(resolved, dev, threads, folding, domain, registers=registers, model=model)


def parse_candidate(text: str) -> Candidate:
    """A candidate from the command line's text: ``KERNEL``, ``KERNEL+KERNEL...`` (a sequence) and an
    optional ``@N`` (the updates of the domain it makes), e.g. ``aa-even+aa-odd@2``. A kernel is a catalog
    name (which may hold ``:``, ``,`` and ``=``) or a TOML path; a text that names an existing file is
    that one kernel, whatever ``+`` or ``@`` it holds."""
    text = text.strip()
    if not text:
        raise InputError("an empty candidate: give a kernel (catalog name or TOML file), or kernels joined by "
                         "'+' with an optional '@N', e.g. even+odd@2.")
    if os.path.isfile(text):
        return Candidate((text,), name=text)
    body, at, tail = text.rpartition(UPDATES_SEPARATOR)
    updates = None
    if not at:
        body = text
    else:
        try:
            updates = float(tail)
        except ValueError:
            updates = math.nan
        if not math.isfinite(updates) or updates <= 0:
            raise InputError(f"candidate {text!r}: after '@' give the updates of the domain its kernels make "
                             f"together as a positive number (e.g. @2 for an even/odd pair), not {tail!r}.")
        if updates == int(updates):
            updates = int(updates)
    parts = [p.strip() for p in body.split(SEQUENCE_SEPARATOR)]
    if not all(parts):
        raise InputError(f"candidate {text!r}: an empty kernel between '+' separators; write the kernels of a "
                         "sequence as KERNEL+KERNEL, e.g. collide+stream@1.")
    return Candidate(tuple(parts), updates, name=text)
