"""Configuration spaces: thread-block shapes from constraints, foldings, domains; their product.

The paper's reference space: X, Y in {1 .. 1024}, Z in {1 .. 64}, powers of two with X*Y*Z = 1024,
folding none / 2y / 2z: 56 shapes x 3 foldings = 168 configurations (``paper_space``).
"""

from __future__ import annotations

import numbers
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..device import Device
from ..errors import InputError
from ..model.launch import triple

Triple = tuple[int, int, int]
PAPER_FOLDINGS: tuple[Triple, ...] = ((1, 1, 1), (1, 2, 1), (1, 1, 2))


@dataclass(frozen=True, order=True)
class Configuration:
    """One launch configuration of a kernel on a device."""

    block: Triple
    folding: Triple = (1, 1, 1)
    domain: Triple | None = None  # None: the kernel's own domain

    def to_dict(self) -> dict:
        return {"block": list(self.block), "folding": list(self.folding),
                "domain": None if self.domain is None else list(self.domain)}

    @property
    def label(self) -> str:
        """Short text: the block, and the folding where there is one ("32x4x8", "32x4x8 f1x2x1")."""
        fold = "" if tuple(self.folding) == (1, 1, 1) else " f" + "x".join(map(str, self.folding))
        return "x".join(map(str, self.block)) + fold


def without_idle_axes(shapes: Iterable[Triple], domains: Iterable[Sequence[int]]) -> list[Triple]:
    """The block shapes that put no more than one thread along an axis every domain has one cell on: a 2-D
    domain gets no block deeper than 1 (its other threads would have no cells)."""
    flat = [all(int(d[axis]) == 1 for d in domains) for axis in range(3)]
    return [s for s in shapes if not any(f and s[axis] > 1 for axis, f in enumerate(flat))]


def _powers_of_two(limit: int) -> list[int]:
    out, p = [], 1
    while p <= limit:
        out.append(p)
        p *= 2
    return out


def thread_counts(threads: int | Iterable[int]) -> tuple[int, ...]:
    """Thread counts per block as given to a ranking: one integer is that one count (``threads=256``), else an
    iterable of positive integers."""
    one = isinstance(threads, numbers.Integral) and not isinstance(threads, bool)
    given: object = (threads,) if one else threads  # callers may pass anything: checked below
    if isinstance(given, str | bytes) or not isinstance(given, Iterable):
        raise InputError(f"threads must be a thread count or a list of them, such as 256 or (256, 512), got "
                         f"{given!r}.")
    counts = tuple(given)
    wrong = [t for t in counts if not isinstance(t, numbers.Integral) or isinstance(t, bool) or t < 1]
    if not counts or wrong:
        raise InputError(f"threads must be positive integers such as 256 or (256, 512), got {counts!r}.")
    return tuple(int(t) for t in counts)


def not_powers_of_two(counts: Iterable[int]) -> tuple[list[int], list[int]]:
    """The counts that are not powers of two, and the powers of two just below and above them (what to
    suggest instead)."""
    odd = [t for t in counts if t & (t - 1)]
    return odd, sorted({1 << (t.bit_length() - 1) for t in odd} | {1 << t.bit_length() for t in odd})


def block_shapes(threads: Iterable[int] = (1024,), *, max_dims: Sequence[int] = (1024, 1024, 64),
                 x: Sequence[int] | None = None, y: Sequence[int] | None = None, z: Sequence[int] | None = None,
                 warp_multiple: bool = False, warp_size: int = 32) -> list[Triple]:
    """Block shapes with X*Y*Z in ``threads``; extents are powers of two unless given as explicit lists.

    Each extent respects ``max_dims`` (the device's per-dimension maxima); ``warp_multiple`` keeps only
    blocks whose thread count is a multiple of the warp size. Sorted, without duplicates.
    """
    totals = sorted({int(t) for t in threads})
    if not totals or any(t < 1 for t in totals):
        raise InputError(f"threads per block must be positive integers, got {list(threads)!r}.")
    odd, near = not_powers_of_two(totals)
    if odd and x is None and y is None and z is None:
        raise InputError(f"threads per block {', '.join(map(str, odd))}: the block extents X, Y, Z are powers of two, "
                         f"so a thread count must be one too (e.g. {', '.join(map(str, near))}); a block of "
                         "another shape can be given explicitly (blocks=[(X, Y, Z)]) or estimated alone.")
    largest = totals[-1]
    choices = []
    for axis, given, m in zip("xyz", (x, y, z), max_dims, strict=True):
        vals = _powers_of_two(min(m, largest)) if given is None else sorted({int(v) for v in given})
        if any(v < 1 for v in vals):
            raise InputError(f"block {axis} extents must be positive, got {list(given or [])!r}.")
        choices.append([v for v in vals if v <= m and v <= largest])
    # X and Y are enumerated, Z is looked up: the work grows with the X and Y extents up to the largest thread
    # count, never with the device's maxima (an override of max_block_dims=1e120 costs nothing more)
    zs = set(choices[2])
    out = []
    for bx in choices[0]:
        for by in choices[1]:
            for n in totals:
                bz, rest = divmod(n, bx * by)
                if not rest and bz in zs and (not warp_multiple or n % warp_size == 0):
                    out.append((bx, by, bz))
    return sorted(set(out))


def configurations(blocks: Iterable[Sequence[int]], foldings: Iterable[Sequence[int]] = ((1, 1, 1),),
                   domains: Iterable[Sequence[int] | None] = (None,)) -> list[Configuration]:
    """The cartesian product blocks x foldings x domains, validated and deduplicated, in a stable order."""
    seen: dict[Configuration, None] = {}
    for d in domains:
        dom = None if d is None else triple(d, "domain")
        for f in foldings:
            fold = triple(f, "folding")
            for b in blocks:
                seen.setdefault(Configuration(triple(b, "block"), fold, dom), None)
    if not seen:
        raise InputError("the configuration space is empty: check the thread counts, block extents and foldings.")
    return list(seen)


def paper_space(max_dims: Sequence[int] = (1024, 1024, 64)) -> list[Configuration]:
    """The 168 configurations of the paper's 3D25pt evaluation (Eq. 6, foldings none / 2y / 2z)."""
    return configurations(block_shapes((1024,), max_dims=max_dims), PAPER_FOLDINGS)


def linear_block_shapes(threads: Iterable[int], dev: Device) -> list[tuple[int, int, int]]:
    """The blocks ranked for a kernel of ``linear1d`` indexing, whose blocks hold consecutive cells whatever
    their shape: (N, 1, 1) for every power of two N from one warp up to the largest count of ``threads``, and
    every count given (within the device's limits)."""
    counts = thread_counts(threads)
    most = min(max(counts), dev.max_threads_per_block, dev.max_block_dims[0])
    powers = [1 << i for i in range(dev.warp_size.bit_length() - 1, most.bit_length()) if 1 << i <= most]
    return [(n, 1, 1) for n in sorted(set(powers) | {c for c in counts if c <= most})]


def generated_block_shapes(indexing: str, threads: Iterable[int], dev: Device) -> list[tuple[int, int, int]]:
    """The block shapes a ranking generates for a kernel of ``indexing`` on ``dev`` when none are given: a
    one-dimensional launch (``linear1d``, ``gridstrided_linear1d``) takes (N, 1, 1) blocks
    (:func:`linear_block_shapes`), a ``linear3d`` one the shapes of ``threads`` within the device's block
    extents (:func:`block_shapes`)."""
    if indexing == "linear3d":
        return block_shapes(threads, max_dims=dev.max_block_dims)
    return linear_block_shapes(threads, dev)
