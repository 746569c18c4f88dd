"""What a block choice keeps of its ranking (``kernel.metadata["warpspeed"]["ranking"]``, the summary of a
launch-time choice): the best block, how sure the ranking is, pystencils' default block with its estimate, the
best contenders and the ranking in words. ``BlockChoice`` (``_choice``) reads it back."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def pystencils_default_block(spatial_dims: int, config: Any = None) -> tuple[int, int, int]:
    """The block pystencils launches a kernel of ``spatial_dims`` dimensions with when nobody chooses one: the
    config's ``gpu.default_block_size`` where it sets one, else pystencils' default for the dimensionality."""
    from pystencils.codegen.config import GpuOptions

    given = config.gpu.get_option("default_block_size") if config is not None else None
    block = given if given is not None else GpuOptions.get_default_block_size(spatial_dims)
    return tuple(int(b) for b in block)  # type: ignore[return-value]


#: How reports name pystencils' default block (the plugin's front-end reference).
REFERENCE_LABEL = "pystencils default"
#: Rows of the ranking table (and ``contenders``) a choice keeps for its report.
REPORT_ROWS = 10


def ranking_summary(ranking: Any, wkernel: Any, spatial_dims: int, *, model: str | None,
                    folding_ranked: bool, default_block: Sequence[int] | None = None) -> dict[str, Any]:
    """What ``kernel.metadata["warpspeed"]["ranking"]`` says: the kernel, the best block, its performance and
    limiter, the configurations ranked, how sure the ranking is (``confidence``, as in the rank JSON), and
    pystencils' default block (``default_block``, else pystencils' default for ``spatial_dims``) with its
    estimate and the speedup over it; the best ``REPORT_ROWS`` configurations (``contenders``), and the
    ranking in words as ``warpspeed rank`` prints it (``headline``, ``table``). :func:`choice_of` reads it."""
    from warpspeed.plugin_api import ranking_headline, ranking_table, reference_estimate

    best = ranking.best
    block = [int(b) for b in best.configuration.block]
    default_block = (tuple(int(b) for b in default_block) if default_block is not None
                     else pystencils_default_block(spatial_dims))
    summary: dict[str, Any] = {
        "kernel": ranking.kernel,
        "device": ranking.device, "block": block, "folding": list(best.configuration.folding),
        # a grid-strided kernel's folding in x is its loop's iterations per thread: the grid the caller sets
        "folding_applied": tuple(best.configuration.folding) == (1, 1, 1) or wkernel.indexing == "gridstrided_linear1d",
        "performance_GLup_s": best.performance_GLup_s, "limiter": best.limiter,
        "configurations": len(ranking.results) + len(ranking.bounded),
        "configurations_estimated": len(ranking.results), "folding_ranked": folding_ranked,
        "pystencils_default_block": list(default_block), "confidence": ranking.confidence.to_dict(),
    }
    try:
        ref = reference_estimate(ranking, wkernel, ranking.device, block=default_block, model=model)
    except Exception:  # the default block may not launch (registers); the summary then omits it
        ref = None
    if ref is not None and not ref.error and ref.performance_GLup_s > 0:
        summary["pystencils_default_GLup_s"] = ref.performance_GLup_s
        summary["speedup_vs_default"] = best.performance_GLup_s / ref.performance_GLup_s
    summary["contenders"] = [{"block": list(r.configuration.block), "folding": list(r.configuration.folding),
                              "performance_GLup_s": r.performance_GLup_s, "limiter": r.limiter}
                             for r in ranking.results[:REPORT_ROWS] if not r.error]
    summary["headline"] = ranking_headline(ranking, ref, REFERENCE_LABEL)
    summary["table"] = ranking_table(ranking, REPORT_ROWS)
    return summary
