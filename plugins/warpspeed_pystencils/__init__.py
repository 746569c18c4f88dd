"""warpspeed plugin for pystencils 2.x / lbmpy 2.x: thread-block sizes chosen without a GPU.

    import warpspeed_pystencils as wp
    k = wp.describe(assignments, shape=(648, 520, 520))              # a warpspeed.Kernel
    r = wp.rank_block_sizes(assignments, (648, 520, 520), device="A100-SXM4-40GB", threads=(256, 512, 1024))
    kernel = wp.create_kernel(assignments, config, shape=(648, 520, 520), device="A100-SXM4-40GB")
    # == ps.create_kernel(assignments, config) with config.gpu.default_block_size = the best block;
    #    kernel.metadata["warpspeed"] holds the winning estimate

``shape`` is the allocated array extent of the spatial dimensions including ghost layers, the fastest in
memory first (for a numpy array in C order: ``arr.shape[::-1]``); fields with an index dimension (LBM
populations) get their index extent from the field. Each field is described in the memory layout it was
declared with (``ps.fields("u: double[3D]")``: numpy's C order, the last coordinate contiguous, which
pystencils puts ``threadIdx.x`` on; ``layout="fzyx"``: x contiguous). The declaration orders the spatial
coordinates only: the index of a field declared in numpy order is contiguous (an array of shape
``(..., Q)``), that of one declared x fastest (``fzyx``, lbmpy's default) the slowest. ``layout=`` (``"c"``,
``"fzyx"``, ``"zyxf"``, ...) overrides the declaration for every field, with a warning where it contradicts
it; ``index_layout=`` for the fields with an index dimension only (``"zyxf"``: the populations of a cell
side by side, x next).

Importing this module is cheap: pystencils, lbmpy and sympy are imported on first use. Registered as the
entry point ``pystencils`` of the group ``warpspeed.plugins``; ``catalog_entries()`` adds the LBM kernels
(``d3q19-srt``, ``d3q15-allen-cahn``, ``lbm``) to ``warpspeed kernels``. Tested with pystencils 2.0 and
lbmpy 2.0 (only the API that survives 2.1 is used).

This module is the plugin's face: every name here is defined in a module of one concept (``_describe``: the
kernel description; ``_rank``: the block sizes ranked; ``_summary`` and ``_choice``: what a choice keeps and
how it reads; ``_choice_cache``: the keys and cache of ``create_kernel``'s choices; ``_create``:
``create_kernel``; ``_launch``: the block chosen at launch time; ``_program``: the CUDA program ``warpspeed
measure`` runs; ``_variants``: ``compare_variants``, the variants of one definition compared, their fields
declared again by ``_redeclare``; ``catalog``: the LBM kernels; ``_frontend``: ``front_end()``, what
warpspeed's core asks of the plugin). None of them imports this module, and none imports another that imports it back
(tests/integrations/test_plugin_structure.py).
"""

from __future__ import annotations

from ._choice import BlockChoice, choice_of
from ._create import create_kernel, launch_time_jit
from ._describe import DEFAULT_ARCH as DEFAULT_ARCH
from ._describe import GUESS_ADDRESS_REGISTERS as GUESS_ADDRESS_REGISTERS
from ._describe import arch_for as arch_for
from ._describe import describe
from ._describe import guessed_registers as guessed_registers
from ._frontend import front_end
from ._program import cuda_program
from ._rank import CREATE_KERNEL_THREADS as CREATE_KERNEL_THREADS
from ._rank import rank_block_sizes
from ._summary import REPORT_ROWS as REPORT_ROWS
from ._summary import pystencils_default_block, ranking_summary
from ._variants import Variant, VariantComparison, compare_variants
from .catalog import allen_cahn_d3q15, catalog_entries, lbm_d3q19_srt, lbm_update_rule, star_stencil

__all__ = ["PLUGIN", "BlockChoice", "Variant", "VariantComparison", "allen_cahn_d3q15", "catalog_entries",
           "choice_of", "compare_variants", "create_kernel", "cuda_program", "describe", "front_end",
           "launch_time_jit", "lbm_d3q19_srt", "lbm_update_rule", "pystencils_default_block", "rank_block_sizes",
           "ranking_summary", "star_stencil"]

PLUGIN = {
    "name": "pystencils",
    "describe": describe,
    "rank_block_sizes": rank_block_sizes,
    "create_kernel": create_kernel,
    "cuda_program": cuda_program,
    "catalog_entries": catalog_entries,
}
