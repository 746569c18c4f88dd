"""Front ends: where kernels come from, and what the core asks of them instead of naming them.

A front end is a source of kernels: the kernel files and generators of warpspeed itself
(:mod:`warpspeed.file_frontend`) or a code generator's plugin (registered under the entry-point group
``warpspeed.plugins``, whose module offers ``front_end()``). Rankings, reports, plots and measurements ask a
kernel's front end for the block a ranking is compared with and for the CUDA programs it can produce, so no
module of the core names a code generator.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import metadata

#: The ``code`` of the CUDA source warpspeed generates from a kernel's accesses (any kernel, any folding).
GENERATED_CODE = "warpspeed"
#: The ``code`` that takes a front end's own program where the kernel offers one, else the generated one.
AUTO_CODE = "auto"


@dataclass(frozen=True)
class Reference:
    """The block a ranking is compared with: ``label`` names it in reports and plots ("<label> 8x8x4 ...");
    ``block(domain)`` gives it for a domain (the cells along x, y, z)."""

    label: str
    block: Callable[[Sequence[int]], tuple[int, int, int]]


@dataclass(frozen=True)
class FrontEnd:
    """A source of kernels, as the core sees it.

    ``name``: who writes the kernels ("kernel file", a code generator's name); ``reference``: the block its
    kernels' rankings are compared with; ``program_code``: the ``code`` value (measurement files, ``measure
    --code``) of the kernels' own CUDA programs, None if it has none; ``program_folds``: whether those
    programs run folded configurations; ``modules`` and ``extra``: the Python modules its kernels are built
    with and the install extra that brings them (for the hint when one is missing).
    """

    name: str
    reference: Reference
    program_code: str | None = None
    program_folds: bool = False
    modules: frozenset[str] = frozenset()
    extra: str | None = None


@cache
def plugin_front_ends() -> tuple[FrontEnd, ...]:
    """The front ends of the plugins registered under ``warpspeed.plugins`` (their ``front_end()``)."""
    out = []
    for ep in metadata.entry_points(group="warpspeed.plugins"):
        try:
            offer = getattr(ep.load(), "front_end", None)
            fe = offer() if callable(offer) else None
        except Exception:  # a broken or absent optional plugin must not break the core
            continue
        if isinstance(fe, FrontEnd):
            out.append(fe)
    return tuple(out)


def program_codes() -> tuple[str, ...]:
    """Every ``code`` a measurement may ask for: auto, the front ends' own programs, warpspeed's generated code."""
    native = sorted({fe.program_code for fe in plugin_front_ends() if fe.program_code is not None})
    return (AUTO_CODE, *native, GENERATED_CODE)


def by_kernel_source(source: str) -> FrontEnd | None:
    """The plugin front end that built a kernel, from its ``Kernel.source``: a front end marks the kernels it
    describes as ``"<its name>:<what>"`` (the pystencils plugin: ``pystencils:d3q19-srt``). None for any other
    source (a file path, ``<dict>``): those kernels are the kernel-file front end's."""
    name, sep, _ = source.partition(":")
    if not sep:
        return None
    return next((fe for fe in plugin_front_ends() if fe.name == name), None)


def by_program_code(code: str) -> FrontEnd | None:
    """The front end whose own programs carry ``code``, or None (auto, generated code, unknown)."""
    return next((fe for fe in plugin_front_ends() if fe.program_code == code), None)
