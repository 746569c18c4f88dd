"""What warpspeed's core asks of this plugin as a front end (``front_end()``): its name, the block its kernels'
rankings are compared with (pystencils' default block, "pystencils default"), the ``code`` of the CUDA
programs it produces for ``warpspeed measure`` (pystencils' own source, no thread folding) and the modules its
kernels are built with (the ``pystencils`` extra). Built on first call: importing the plugin imports no
warpspeed."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from ._summary import REFERENCE_LABEL, pystencils_default_block


def default_block_for(domain: Sequence[int]) -> tuple[int, int, int]:
    """pystencils' default block for the dimensionality of ``domain`` (its axes longer than 1)."""
    dims = max((i + 1 for i, n in enumerate(domain) if int(n) > 1), default=1)
    return pystencils_default_block(dims)


@cache
def front_end() -> Any:
    """The plugin's :class:`warpspeed.plugin_api.FrontEnd` (one object per process)."""
    from warpspeed.plugin_api import FrontEnd, Reference

    return FrontEnd(name="pystencils", reference=Reference(REFERENCE_LABEL, default_block_for),
                    program_code="pystencils", program_folds=False,
                    modules=frozenset({"pystencils", "lbmpy", "sympy"}), extra="pystencils")
