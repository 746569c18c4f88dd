"""A block choice in readable form: what ``create_kernel`` chose for a pystencils kernel, and why.

The choice is kept as JSON (``kernel.metadata["warpspeed"]["ranking"]``, the summary of a launch-time
``LaunchChoice``; both come back from the disk cache), so :class:`BlockChoice` is read from that summary,
which holds the ranking in words as ``warpspeed rank`` prints it (``headline``, ``table``) along with the
numbers. Only the standard library is imported here (and by ``_summary``): importing the plugin stays cheap.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._summary import ranking_summary

Block = tuple[int, int, int]


@dataclass(frozen=True)
class Contender:
    """One of the best configurations ranked: its block, folding, predicted performance and limiter."""

    block: Block
    folding: Block
    performance_GLup_s: float
    limiter: str | None


@dataclass(frozen=True)
class BlockChoice:
    """warpspeed's choice of a thread block for one pystencils kernel (and array layout), and why.

    ``block``: the block the kernel launches with; ``performance_GLup_s``, ``limiter``: its prediction (for a
    measured choice, the ranking's best); ``default_block``: the block pystencils launches without warpspeed
    (the config's ``gpu.default_block_size`` or pystencils' default) and ``default_GLup_s`` its prediction
    (None where it cannot launch or is unknown); ``confidence``: how sure the ranking is (``confident``,
    ``close`` or ``unvalidated``, as in ``warpspeed rank``) with its ``confidence_reasons``; ``contenders``:
    the best configurations ranked, best first; ``configurations``: how many were ranked (estimated or only
    bounded); ``headline`` and ``table``: the ranking as ``warpspeed rank`` prints it; ``chosen_by``:
    ``"model"``, ``"measurement"`` (a launch-time choice timed on the GPU, ``measured_ms`` per block) or
    ``"pystencils"`` (arrays warpspeed cannot describe: ``fallback`` says why)."""

    kernel: str
    device: str
    block: Block
    performance_GLup_s: float | None
    limiter: str | None
    default_block: Block
    default_GLup_s: float | None
    confidence: str
    confidence_reasons: tuple[str, ...]
    contenders: tuple[Contender, ...]
    configurations: int
    headline: str
    table: str
    chosen_by: str = "model"
    measured_ms: tuple[tuple[Block, float], ...] = ()
    fallback: str | None = None

    @property
    def speedup_vs_default(self) -> float | None:
        """Predicted performance of the chosen block over pystencils' default block (None where unknown)."""
        if self.default_GLup_s is None or not self.performance_GLup_s:
            return None
        return self.performance_GLup_s / self.default_GLup_s

    def report(self) -> str:
        """The choice in words: the block chosen against pystencils' default, then the ranking's headline
        (with the confidence) and table as ``warpspeed rank`` prints them, then any timings."""
        if self.fallback is not None:
            return (f"{self.kernel}: launched with pystencils' default block {_text(self.block)}; warpspeed "
                    f"chose nothing: {self.fallback}")
        first = f"{self.kernel} on {self.device}: block {_text(self.block)}"
        if self.chosen_by == "measurement":
            first += " (the fastest measured)"
        if self.block == self.default_block:
            first += ", which is pystencils' default block"
        else:
            first += f" instead of pystencils' default {_text(self.default_block)}"
            speedup = self.speedup_vs_default
            if speedup is not None and self.chosen_by != "measurement":
                first += f" ({speedup:.2f}x predicted)"
        lines = [first, "", self.headline, "", self.table]
        if self.measured_ms:
            lines += ["", "measured on the GPU (one call each): " + ", ".join(
                f"{_text(b)} {t:.3g} ms" for b, t in self.measured_ms)]
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.report()


def _text(block: Block) -> str:
    return "x".join(str(n) for n in block)


def _block(value: Any) -> Block:
    return tuple(int(n) for n in value)  # type: ignore[return-value]


def from_summary(summary: Mapping[str, Any], kernel: str | None = None) -> BlockChoice:
    """A :class:`BlockChoice` from a choice's summary (``ranking_summary``'s dict, possibly with a launch's
    ``chosen_by``, ``measured_ms`` or ``fallback``)."""
    from warpspeed import InputError

    if "fallback" in summary:
        block = _block(summary.get("block", ()))
        return BlockChoice(kernel or str(summary.get("kernel", "kernel")), str(summary.get("device", "")), block,
                           None, None, block, None, "unknown", (), (), 0, "", "", "pystencils",
                           fallback=str(summary["fallback"]))
    try:
        confidence = summary.get("confidence") or {}
        return BlockChoice(
            kernel=str(summary.get("kernel") or kernel or "kernel"), device=str(summary["device"]),
            block=_block(summary["block"]), performance_GLup_s=float(summary["performance_GLup_s"]),
            limiter=summary.get("limiter"), default_block=_block(summary["pystencils_default_block"]),
            default_GLup_s=summary.get("pystencils_default_GLup_s"),
            confidence=str(confidence.get("level", "unknown")),
            confidence_reasons=tuple(confidence.get("reasons", ())),
            contenders=tuple(Contender(_block(c["block"]), _block(c["folding"]), float(c["performance_GLup_s"]),
                                       c.get("limiter")) for c in summary.get("contenders", ())),
            configurations=int(summary.get("configurations", 0)), headline=str(summary.get("headline", "")),
            table=str(summary.get("table", "")), chosen_by=str(summary.get("chosen_by", "model")),
            measured_ms=tuple((_block(m["block"]), float(m["time_ms"])) for m in summary.get("measured_ms", ())))
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"not a warpspeed block choice (the summary of create_kernel or of a launch): {e!r} is "
                         "missing or malformed.") from None


def _spatial_dims(domain: Any) -> int:
    """The dimensionality of a warpspeed domain (x, y, z; a 2-D kernel's z extent is 1)."""
    d = tuple(int(n) for n in domain)
    return 3 if d[2] > 1 else 2 if d[1] > 1 else 1


def choice_of(kernel_or_choice: Any, kernel: Any = None) -> BlockChoice:
    """warpspeed's choice of a block for a pystencils kernel, readable: a :class:`BlockChoice` (``print`` it
    for the block chosen against pystencils' default, the ranking's headline with its confidence and the
    table of the contenders, as ``warpspeed rank`` prints them).

    ``kernel_or_choice``: a kernel of ``create_kernel(..., shape=...)`` (or its ``metadata["warpspeed"]``);
    for a launch-time kernel, a choice (a value of ``run.choices``, or ``run.choice_for(**arrays)``), or the
    compiled kernel ``run`` itself once it has been called with arrays of one layout; or a
    ``warpspeed.Ranking`` (of ``rank_block_sizes``, say), with ``kernel`` the ``warpspeed.Kernel`` it ranks to
    estimate pystencils' default block where the ranking does not hold it. Anything else is an
    ``InputError``."""
    import warpspeed
    from warpspeed import InputError

    from ._launch import LaunchChoice, LaunchTimeKernel

    obj = kernel_or_choice
    if isinstance(obj, warpspeed.Ranking):
        if not obj.results or obj.best.error:
            raise InputError(f"the ranking of {obj.kernel} on {obj.device} has no configuration that can launch.")
        domain = kernel.domain if isinstance(kernel, warpspeed.Kernel) else obj.best.data["domain"]
        return from_summary(ranking_summary(obj, kernel, _spatial_dims(domain), model=obj.best.data.get("model"),
                                            folding_ranked=True))
    if isinstance(obj, LaunchChoice):
        return from_summary({**obj.summary, "block": list(obj.block), "device": obj.device}
                            if "fallback" in obj.summary else obj.summary)
    if isinstance(obj, LaunchTimeKernel):
        if len(obj.choices) == 1:
            return choice_of(next(iter(obj.choices.values())))
        said = ("has not been called yet" if not obj.choices else
                f"has chosen for {len(obj.choices)} array layouts")
        raise InputError(f"launch-time kernel '{obj.kernel.name}' {said}: pass run.choice_for(**arrays) for the "
                         "arrays you mean, or each of run.choices.values().")
    meta = getattr(obj, "metadata", obj)
    meta = meta.get("warpspeed", meta) if isinstance(meta, Mapping) else None
    if isinstance(meta, Mapping) and isinstance(meta.get("ranking"), Mapping):
        return from_summary(meta["ranking"], meta.get("kernel"))
    if isinstance(meta, Mapping) and isinstance(meta.get("block"), str):  # "chosen at each launch, ..."
        raise InputError(f"kernel '{getattr(obj, 'name', '?')}' chooses its block at each launch (created without "
                         "shape=): compile it (run = kernel.compile()), call it, and pass run or "
                         "run.choice_for(**arrays).")
    raise InputError(f"choice_of takes a kernel of warpspeed_pystencils.create_kernel, a launch-time kernel or "
                     f"one of its choices, or a warpspeed.Ranking, got {type(obj).__name__}.")
