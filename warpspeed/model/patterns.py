"""Access patterns outside those the model was validated on.

Every kernel measured for the model's validation (tests/data/hopper) reads and writes its fields
x-contiguously: threads adjacent in x touch elements side by side. A field whose threads adjacent in x lie a
sector or more apart (an array-of-structures layout, x indexing a slower dimension, folding in x) puts each
thread of a warp on its own sector; on the one such kernel measured the model misranked the blocks
(docs/model.md, "Assumptions and limits"). An estimate names such fields (``Estimate.unvalidated``) and a
ranking's confidence (:mod:`warpspeed.studies.confidence`) says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..kernel import Kernel
from .footprint import Instruction


def strided_fields(kernel: Kernel, instructions: Sequence[Instruction], sector_bytes: int) -> tuple[str, ...]:
    """Why an estimate lies outside the validated access patterns (empty: it does not): the fields whose loads
    or stores put threads adjacent in x a sector or more apart, one reason per distinct stride
    (``instructions``: the folded memory instructions of one configuration, affine over the thread
    coordinates)."""
    widest: dict[int, int] = {}
    for ins in instructions:
        if ins.affine is None:  # quasi-affine (modulo, division): no single stride to judge
            continue
        stride = abs(ins.affine[0][0]) * ins.element_bytes
        if stride >= sector_bytes:
            widest[ins.field] = max(widest.get(ins.field, 0), stride)
    by_stride: dict[int, list[str]] = {}
    for fi, stride in sorted(widest.items()):
        by_stride.setdefault(stride, []).append(f"'{kernel.fields[fi].name}'")
    return tuple(f"{'field' if len(names) == 1 else 'fields'} {', '.join(names)}: threads adjacent in x are "
                 f"{stride} B apart, each on its own {sector_bytes} B sector (array of structures, x in a slower "
                 f"dimension, or folding in x): an access pattern the model was not validated on"
                 for stride, names in sorted(by_stride.items()))


__all__ = ["strided_fields"]
