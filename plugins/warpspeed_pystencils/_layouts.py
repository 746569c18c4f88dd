"""The memory layouts of a kernel's fields as declared (``Field.layout``), and the warning where the layout
estimated (``layout=``, ``index_layout=``, or the arrays of a launch) contradicts the declaration: pystencils'
threads follow the declaration."""

from __future__ import annotations

import warnings
from typing import Any


def declared_layouts(kernel: Any) -> list[tuple[str, list[int]]]:
    """Each field of a pystencils kernel with the spatial layout it was declared with (``Field.layout``,
    coordinates slowest first): what the layouts default to, so a part of the keys of cached choices."""
    return [(f.name, [int(c) for c in f.layout]) for f in sorted(kernel.get_fields(), key=lambda f: f.name)]


def check_layout_matches(kernel: Any, layout: str | None = None, arrays: Any = None, stacklevel: int = 4,
                         index_layout: str | None = None) -> None:
    """Warn when a field was declared with another spatial layout than the one estimated (``layout`` or
    ``index_layout`` where given, or the strides of the ``arrays`` a launch passes): the threads follow the
    declared layout (pystencils puts ``threadIdx.x`` on the coordinate that is contiguous in it). The warning
    says how to fix it. ``stacklevel``: as :func:`warnings.warn`'s, from this function."""
    from warpspeed import InputError

    from ._extract import estimated_order, layout_name

    if arrays is None and layout is None and index_layout is None:
        return  # every field is estimated in its declared layout
    for f in kernel.get_fields():
        if f.has_fixed_shape:
            continue
        dims = f.spatial_dimensions
        have = tuple(c for c in f.layout if c < dims)
        if arrays is not None:
            strides = arrays[f.name].strides[:dims]
            want = tuple(sorted(range(dims), key=lambda c: (-strides[c], c)))
            what = f"the arrays launched have {want}"
            fix = ("allocate the arrays in the declared layout, or declare the field with the arrays' layout "
                   + (f"(ps.fields(..., layout={layout_name(want)!r}))" if layout_name(want) else "")).rstrip()
        else:
            try:
                full = estimated_order(f, layout, index_layout)
            except InputError:
                return  # the description reports the bad name
            want = tuple(c for c in full if c < dims)
            given = f"index_layout={index_layout!r}" if f.index_dimensions and index_layout else f"layout={layout!r}"
            what = f"is estimated with {given}, {want}"
            name = layout_name(have)
            fix = (f"pass layout={name!r}, the layout of the declaration, " if name else "") + \
                "or leave layout= (and index_layout=) out: each field is then estimated in its declared layout"
        if have and have != want:
            warnings.warn(f"warpspeed_pystencils: field '{f.name}' was declared with the spatial layout {have} "
                          f"(coordinates slowest first) but {what}; the threads of the kernel follow the declared "
                          f"layout (threadIdx.x on coordinate {have[-1]}). To fix: {fix}.", stacklevel=stacklevel)
            return
