"""The fields of assignments declared again in another memory layout and element type: how a variant of a
pystencils kernel or lbmpy update rule is generated from the user's own definition (pystencils threads follow
the declared layout, and the element type is the declared one)."""

from __future__ import annotations

from typing import Any

from ._errors import input_error


def redeclared(assignments: Any, layout: str | None, dtype: str | None) -> Any:
    """The assignments with every field of floating-point (or undetermined) elements declared in ``layout``
    and of ``dtype`` (None: as declared); other fields keep their element type but take the layout."""
    import pystencils as ps
    from pystencils import Field

    if layout is None and dtype is None:
        return assignments
    items = list(assignments.all_assignments) if isinstance(assignments, ps.AssignmentCollection) else assignments
    accesses = set().union(*(a.atoms(Field.Access) for a in items))
    fields = {a.field for a in accesses}
    if layout is None and all(_has_dtype(f, dtype) for f in fields):
        return assignments  # nothing changes: declared again, the same fields would compile differently
    new = {f: _field_as(f, layout, dtype) for f in fields}
    subs = {a: Field.Access(new[a.field], a.offsets, a.index, a.is_absolute_access) for a in accesses}

    def swap(a: Any) -> Any:
        return ps.Assignment(a.lhs.xreplace(subs), a.rhs.xreplace(subs))

    if isinstance(assignments, ps.AssignmentCollection):
        return assignments.copy([swap(a) for a in assignments.main_assignments],
                                [swap(a) for a in assignments.subexpressions])
    return [swap(a) for a in items]


def _has_dtype(f: Any, dtype: str | None) -> bool:
    """Whether field ``f``'s elements are already of ``dtype`` (None: any)."""
    from pystencils.types import create_type

    return dtype is None or f.dtype == create_type(dtype)


def _field_as(f: Any, layout: str | None, dtype: str | None) -> Any:
    """Field ``f`` declared again in ``layout`` with elements of ``dtype`` where they are floating point."""
    from pystencils import Field
    from pystencils.types import PsIeeeFloatType

    elem = f.dtype
    if dtype is not None and (isinstance(elem, PsIeeeFloatType) or not hasattr(elem, "itemsize")):
        elem = dtype
    if layout is None:
        order = f.layout
    elif set(layout) <= set("xyz"):
        order = spatial_order(layout, f)
        if f.has_fixed_shape and f.index_dimensions:  # the index contiguous, as a field declared so is described
            order = (*order, *range(f.spatial_dimensions, f.spatial_dimensions + f.index_dimensions))
    else:
        from ._extract import layout_orders  # imports warpspeed: not at the plugin's import

        # a fixed-size field's strides place its index too; a generic field declares its spatial order only
        index_dims = f.index_dimensions if f.has_fixed_shape else 0
        order = layout_orders(layout, f.spatial_dimensions, index_dims, f"layout of field '{f.name}'")
    if f.has_fixed_shape:
        return Field.create_fixed_size(f.name, f.shape, index_dimensions=f.index_dimensions, dtype=elem,
                                       layout=order, field_type=f.field_type)
    return Field.create_generic(f.name, f.spatial_dimensions, dtype=elem, index_dimensions=f.index_dimensions,
                                layout=order, index_shape=f.index_shape if f.has_fixed_index_shape else None,
                                field_type=f.field_type)


def spatial_order(order: str, f: Any) -> tuple[int, ...]:
    """The layout tuple of a spatial order (``yxz``: the coordinates slowest first, x being coordinate 0) for
    field ``f``, whose spatial coordinates it must name."""
    if len(order) != f.spatial_dimensions:
        raise input_error(f"layout {order!r} orders {len(order)} spatial coordinates, but field '{f.name}' has "
                          f"{f.spatial_dimensions}: give an order of {'xyz'[:f.spatial_dimensions]!r}'s letters.")
    return tuple("xyz".index(c) for c in order)
