"""The kernel-file front end: kernels written as TOML files, warpspeed's generators and Kernel objects.

Their rankings are compared with the block pystencils, the code generator most of these kernels stand for,
launches when nobody chooses one (:func:`pystencils_default_block`). They have no CUDA program of their own:
``warpspeed measure`` runs warpspeed's generated code for them.
"""

from __future__ import annotations

from collections.abc import Sequence

from .frontends import FrontEnd, Reference


def pystencils_default_block(domain: Sequence[int]) -> tuple[int, int, int]:
    """The block pystencils 2.x launches a kernel with when nobody chooses one, by the dimensionality of its
    iteration space (the axes of ``domain`` longer than 1): (256, 1, 1) in 1-D, (16, 16, 1) in 2-D, (8, 8, 4)
    in 3-D (``GpuOptions.get_default_block_size`` in pystencils 2.0 and 2.1)."""
    dims = max((i + 1 for i, n in enumerate(domain) if int(n) > 1), default=1)
    return ((256, 1, 1), (16, 16, 1), (8, 8, 4))[dims - 1]


FRONT_END = FrontEnd(name="kernel file", reference=Reference("pystencils default", pystencils_default_block))


def kernel_files() -> FrontEnd:
    """The front end of kernel files, warpspeed's generators and Kernel objects."""
    return FRONT_END
