"""Parameter names: which kernel_tuner ``tune_params`` hold the thread block's and the thread folding's extents.

Why a module of their own: every other part (the space, the ranking, the search, the files) reads a kernel_tuner
configuration's block and folding through :class:`ParameterNames`, and a parameter that looks like an extent
under a name warpspeed does not read is warned about here (:func:`warn_unmapped`).
"""

from __future__ import annotations

import numbers
import re
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...errors import InputError
from ...studies.space import Configuration


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
        if not positive_int(v):
            raise InputError(f"parameter {n!r} is {v!r}; a {what} extent is a positive integer.")
        out.append(int(v))
    return tuple(out)  # type: ignore[return-value]


def positive_int(v: Any) -> bool:
    """Whether ``v`` is an integer >= 1 (not a bool): what a block or folding extent takes."""
    return not isinstance(v, bool) and isinstance(v, numbers.Integral) and v >= 1


def configuration_key(c: Configuration) -> tuple:
    """What a configuration's prediction depends on among kernel_tuner's parameters: its block and folding."""
    return c.block, c.folding


def checked_names(names: ParameterNames | None) -> ParameterNames:
    """The names given, else :data:`NAMES`; anything but a :class:`ParameterNames` is an :class:`InputError`."""
    if names is None:
        return NAMES
    if not isinstance(names, ParameterNames):
        raise InputError(f"names must be a ParameterNames, got {type(names).__name__} ({names!r}).")
    return names


def names_mismatch(names: ParameterNames, params: Sequence[str]) -> str:
    """What an error says when configurations do not match a ranking: the parameters expected and those found."""
    shown = [", ".join(n or "-" for n in names3) for names3 in (names.block, names.folding)]
    return (f"the block extents are read from the parameters ({shown[0]}) and the folding from ({shown[1]}), but "
            f"the configurations have {', '.join(map(str, params)) or 'no parameters'}. Rank the space kernel_tuner "
            "tunes, with the names it uses (rank_tune_params(..., names=ParameterNames(block=('bx', 'by', 'bz'), "
            "folding=(None, 'fy', None))), or pass those names here (names=...).")


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
                and all(positive_int(v) for v in values) and any(v > 1 for v in values)}
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
