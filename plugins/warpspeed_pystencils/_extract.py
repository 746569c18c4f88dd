"""From a pystencils 2.x GPU kernel AST to a warpspeed kernel description (the TOML structure as a dict).

How addresses are converted:

1. Every global access in the kernel body is a ``PsMemAcc(pointer, offset)``; a store is one on the left of a
   ``PsAssignment``, every other one is a load. The pointer is a field's base pointer (kernel parameter with a
   ``FieldBasePtr`` property).
2. The offset expression is translated to SymPy. Declared symbols (``ctr_0 = 4 + blockIdx.x*blockDim.x +
   threadIdx.x`` and any integer temporaries) are substituted, then ``threadIdx.a`` is replaced by
   ``tid_a - blockIdx.a*blockDim.a``: warpspeed's thread coordinates are the global thread indices, so what is
   left must depend on ``tidx, tidy, tidz`` only (anything with ``blockIdx`` left is another indexing scheme).
3. The offset is ``sum_c index_c * stride_c`` over the field's coordinates (stride parameters such as
   ``_stride_src_1``). The per-coordinate indices are read off as the coefficients of the stride symbols and
   emitted as a tuple access in memory order (fastest first: x, y, z, then f for an ``fzyx`` LBM field); where
   that split is impossible the concrete strides for the given shape and layout are substituted and the access
   is one linear index.
4. Each index must be affine in the thread coordinates with integer coefficients (``//`` and ``%`` by positive
   constants are allowed); anything else (indirect addressing, products of thread indices, kernel parameters
   in an index) is an ``InputError``.
5. The iteration space comes from the guard ``ctr_c < _size_c - gl``: with ``ctr_c = a + s*tid`` and the
   concrete size, ``domain = ceil((size - gl - a) / s)``. Field extents are written relative to it
   (``"nx+8"``), so ``Kernel.with_domain`` resizes the arrays along with the iteration space.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pystencils as ps
import sympy as sp
from pystencils.types import PsIeeeFloatType, PsIntegerType

from warpspeed import InputError

from . import _polynomial as poly
from ._internals import FieldBasePtr, FieldShape, FieldStride, expressions, structural  # see _internals: why

TIDS = ("tidx", "tidy", "tidz")
_AXES = ("x", "y", "z")
_DOMAIN_NAMES = ("nx", "ny", "nz")
TID_SYMBOLS = tuple(sp.Symbol(t, integer=True) for t in TIDS)
#: threadIdx.a as the global thread index less the block's offset, as polynomials (see ``_thread_subs``)
_THREAD_POLYNOMIALS = {f"threadIdx_{a}": poly.add(poly.symbol(t), poly.multiply(
    poly.symbol(f"blockIdx_{a}"), poly.symbol(f"blockDim_{a}")), -1) for a, t in zip(_AXES, TIDS, strict=True)}


class FloorDiv(sp.Function):
    """``a // c`` for a positive integer constant ``c`` (kept unevaluated)."""


class Mod(sp.Function):
    """``a % c`` for a positive integer constant ``c`` (kept unevaluated)."""


@dataclass
class FieldInfo:
    """A pystencils field with its concrete allocated shape and strides for the requested layout."""

    name: str
    element_bytes: int
    is_float: bool
    shape: tuple[int, ...]  # pystencils coordinate order (spatial..., index...)
    strides: tuple[int, ...]
    order: tuple[int, ...]  # coordinates, fastest in memory first
    fixed: bool
    extents: tuple[int, ...] = ()  # allocated extent per coordinate (padding included); default: shape
    loads: list[Any] = field(default_factory=list)
    stores: list[Any] = field(default_factory=list)


@dataclass(frozen=True)
class ArrayLayout:
    """The array a launch passes for one field: its shape and strides (elements), pystencils' coordinate
    order (spatial..., index...)."""

    shape: tuple[int, ...]
    strides: tuple[int, ...]


def _padded_extents(shape: tuple[int, ...], strides: tuple[int, ...], order: tuple[int, ...],
                    what: str) -> tuple[int, ...]:
    """Allocated extents of an array that is dense up to padding: each coordinate's stride is the next faster
    one's stride times that one's allocated extent (>= its shape). Anything else cannot be described."""
    extents = list(shape)
    if strides[order[0]] != 1 and shape[order[0]] > 1:
        raise InputError(f"{what} has the element strides {list(strides)}: its fastest coordinate is not "
                         "contiguous; warpspeed describes arrays that are dense up to padding.")
    for faster, slower in zip(order, order[1:], strict=False):
        step, rest = divmod(strides[slower], strides[faster])
        if shape[slower] > 1 and (rest or step < shape[faster]):
            raise InputError(f"{what} has the element strides {list(strides)} for the shape {list(shape)}: "
                             "coordinates overlap or are not whole rows apart; warpspeed describes arrays that "
                             "are dense up to padding.")
        if shape[slower] > 1:
            extents[faster] = step
    return tuple(extents)


class _Said:
    """A part of an error message, written only when a message uses it: printing an access's pystencils
    index expression costs a fifth of describing a kernel, and every access would print it otherwise."""

    def __init__(self, write: Callable[[], str]):
        self._write = write

    def __str__(self) -> str:
        return self._write()

    def __format__(self, spec: str) -> str:
        return format(self._write(), spec)


def _sym(name: str) -> sp.Symbol:
    return sp.Symbol(name, integer=True)


_LAYOUT_NAMES = {"fzyx": "fzyx", "soa": "fzyx", "f": "fzyx", "reverse_numpy": "fzyx",
                 "zyxf": "zyxf", "aos": "zyxf", "c": "c", "numpy": "c"}


def layout_orders(layout: str, spatial_dims: int, index_dims: int, what: str) -> tuple[int, ...]:
    """pystencils' layout tuple (coordinates, slowest first) of a field with ``index_dims`` index dimensions.

    The names are pystencils' own: ``fzyx`` (also ``soa``, ``f``, ``reverse_numpy``: x fastest, the index
    slowest), ``zyxf`` (``aos``: the index fastest, then x, y, z) and ``c`` (``numpy``: the last coordinate
    fastest). pystencils' parser of them is not public API, so they are read here.
    """
    kind = _LAYOUT_NAMES.get(layout.lower()) if isinstance(layout, str) else None
    if kind is None or not 1 <= spatial_dims <= 3 or (kind == "zyxf" and index_dims > 1):
        raise InputError(f"pystencils plugin: {what} {layout!r} is not usable for a field with {spatial_dims} "
                         f"spatial and {index_dims} index dimension(s); use 'fzyx', 'zyxf' (at most one index "
                         "dimension), 'f' or 'c'/'numpy'.")
    n = spatial_dims + index_dims
    if kind == "c":
        return tuple(range(n))
    if kind == "zyxf" and index_dims:
        return (*reversed(range(spatial_dims)), spatial_dims)
    return tuple(reversed(range(n)))


def declared_order(spatial_layout: Sequence[int], index_dims: int) -> tuple[int, ...]:
    """The layout tuple (coordinates, slowest first) of a field as it was declared: its spatial layout
    (pystencils' ``Field.layout``, slowest first), and its index coordinates where the declaration's name puts
    them. A pystencils field declares the order of its spatial coordinates only; the names that order them
    x fastest (``fzyx``, ``f``, ``reverse_numpy``, ``soa``: lbmpy's structure of arrays) put the index
    slowest, ``numpy``/``c`` (the default of ``ps.fields``: an array of shape ``(..., Q)``) fastest. A
    ``zyxf`` field declares the same spatial order as ``fzyx``: its index is given by ``index_layout``."""
    spatial = tuple(int(c) for c in spatial_layout)
    dims = len(spatial)
    index = tuple(range(dims, dims + index_dims))
    if dims > 1 and spatial == tuple(reversed(range(dims))):
        return (*index, *spatial)
    return (*spatial, *index)


def layout_name(spatial_layout: Sequence[int]) -> str | None:
    """The ``layout=`` name that orders the spatial coordinates as ``spatial_layout`` does (slowest first):
    ``'c'`` (the last coordinate fastest), ``'fzyx'`` (x fastest); None for other orders."""
    spatial = tuple(int(c) for c in spatial_layout)
    if spatial == tuple(range(len(spatial))):
        return "c"
    return "fzyx" if spatial == tuple(reversed(range(len(spatial)))) else None


def estimated_order(f: Any, layout: str | None, index_layout: str | None) -> tuple[int, ...]:
    """The layout tuple (slowest first) a generic field is described in: ``index_layout`` (fields with an index
    dimension) or ``layout`` where given, else the field's declaration (:func:`declared_order`)."""
    dims, index_dims = f.spatial_dimensions, f.index_dimensions
    if index_dims and (index_layout or layout) is not None:
        return layout_orders(index_layout or layout, dims, index_dims, "index_layout" if index_layout else "layout")
    if layout is not None:
        return layout_orders(layout, dims, index_dims, "layout")
    return declared_order(f.layout, index_dims)


def dense_strides(shape: Sequence[int], layout: Sequence[int]) -> tuple[int, ...]:
    """Element strides of a dense array of ``shape`` whose coordinates lie in memory as ``layout`` (slowest
    first) orders them."""
    strides = [0] * len(shape)
    step = 1
    for c in reversed(layout):
        strides[c] = step
        step *= int(shape[c])
    return tuple(strides)


class _NotPolynomial(Exception):
    """An index expression that is not a plain polynomial (a division, a remainder, another indexing scheme,
    a term that is not affine): read through SymPy, which also words the errors."""


class Extractor:
    """Walks one GPU kernel and produces the warpspeed kernel dict.

    ``POLYNOMIALS``: read index expressions as integer polynomials where they are (:mod:`._polynomial`), and
    through SymPy otherwise; the tests turn it off to check that both ways describe kernels alike."""

    POLYNOMIALS = True

    def __init__(self, kernel: Any, shape: Sequence[int] | None, layout: str | None, index_layout: str | None,
                 name: str, arrays: Mapping[str, ArrayLayout] | None = None):
        self.kernel = kernel
        self.arrays = arrays
        self.name = name
        self.where = f"pystencils kernel '{name}'"
        self.layout = layout  # None: each field in its declared layout (see estimated_order)
        self.index_layout = index_layout
        self.decls: dict[str, Any] = {}
        self.loops = 0  # grid-strided loops
        self.memo: dict[str, sp.Expr] = {}
        self.polynomial_memo: dict[str, poly.Polynomial | None] = {}  # None: not a polynomial
        self.values: dict[str, int] = {}  # shape / stride parameter -> concrete value
        self.shape_params: dict[str, tuple[str, int]] = {}  # size parameter -> (field, coordinate)
        self.stride_params: dict[tuple[str, int], str] = {}  # (field, coordinate) -> stride parameter
        self.fields: dict[str, FieldInfo] = {}
        self.pointer_field: dict[str, str] = {}
        self._setup(shape)

    def _check_shape(self, given: Any, fields: list[Any]) -> None:
        """``self.shape`` (fastest first) and ``self.ps_spatial`` (pystencils' order) from a shape argument."""
        try:
            shape = tuple(given) if not isinstance(given, str | bytes) else None
        except TypeError:
            shape = None
        if shape is None or len(shape) != self.spatial_dims or any(
                isinstance(n, bool) or not isinstance(n, numbers.Integral) or int(n) < 1 for n in shape):
            raise InputError(f"{self.where}: shape must be a tuple of {self.spatial_dims} positive integers (the "
                             f"allocated extent of each spatial dimension incl. ghost layers, the fastest in memory "
                             f"first; the index dimension of LBM fields is added from the field), got {given!r}.")
        self.shape = tuple(int(n) for n in shape)
        fastest_first = tuple(reversed(self._spatial_order(fields)))
        ps_spatial = [0] * self.spatial_dims
        for i, c in enumerate(fastest_first):
            ps_spatial[c] = self.shape[i]
        self.ps_spatial = tuple(ps_spatial)

    def _spatial_order(self, fields: list[Any]) -> tuple[int, ...]:
        """The order of the spatial coordinates in memory (slowest first) that ``shape`` is given in: that of
        ``layout``, else the fields' declared one (pystencils asks the fields of a kernel to share it; where
        they do not, the first generic field's by name)."""
        if self.layout is not None:
            return layout_orders(self.layout, self.spatial_dims, 0, "layout")
        first = min((f for f in fields if not f.has_fixed_shape), default=None, key=lambda f: f.name) or \
            min(fields, key=lambda f: f.name)
        return tuple(int(c) for c in first.layout if c < self.spatial_dims)

    def _shape_of_arrays(self, fields: list[Any]) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The allocated spatial extent of the arrays a launch passes (fastest first, and in pystencils' order);
        one for all fields."""
        assert self.arrays is not None
        missing = [f.name for f in fields if f.name not in self.arrays]
        if missing:
            raise InputError(f"{self.where}: no array given for field(s) {', '.join(missing)}.")
        generic = [f for f in fields if not f.has_fixed_shape] or fields
        spatial = {f.name: self.arrays[f.name].shape[:self.spatial_dims] for f in generic}
        if len(set(spatial.values())) != 1:
            raise InputError(f"{self.where}: the arrays have different spatial shapes "
                             f"({', '.join(f'{k}: {list(v)}' for k, v in sorted(spatial.items()))}); pystencils "
                             "launches a kernel on arrays of one shape.")
        first = self.arrays[generic[0].name]
        fastest_first = sorted(range(self.spatial_dims), key=lambda c: (first.strides[c], -c))
        return tuple(first.shape[c] for c in fastest_first), tuple(first.shape[:self.spatial_dims])

    # ----------------------------------------------------------------- fields, shapes, strides
    def _setup(self, shape: Sequence[int]) -> None:
        fields = list(self.kernel.get_fields())
        if not fields:
            raise InputError(f"{self.where}: accesses no field.")
        dims = {f.spatial_dimensions for f in fields}
        if len(dims) != 1:
            raise InputError(f"{self.where}: fields of different spatial dimensionality {sorted(dims)}.")
        self.spatial_dims = dims.pop()
        if self.arrays is not None:
            self.shape, self.ps_spatial = self._shape_of_arrays(fields)
        else:
            self._check_shape(shape, fields)
        element_types = field_element_types(self.kernel)
        for f in fields:
            dtype = element_types[f.name]
            eb = getattr(dtype, "itemsize", None)
            if not eb:
                raise InputError(f"{self.where}: field '{f.name}' has element type {dtype} of unknown size.")
            idx_shape = tuple(f.index_shape)
            if not all(isinstance(n, int | sp.Integer) for n in idx_shape):
                raise InputError(f"{self.where}: field '{f.name}' has a symbolic index shape {idx_shape}; only "
                                 "fixed index extents (e.g. the Q of an LBM field) are supported.")
            idx_shape = tuple(int(n) for n in idx_shape)
            fixed = bool(f.has_fixed_shape)
            if self.arrays is not None and not fixed:
                given = self.arrays[f.name]
                full, strides = given.shape, given.strides
                if len(full) != self.spatial_dims + len(idx_shape) or full[self.spatial_dims:] != idx_shape:
                    raise InputError(f"{self.where}: the array of field '{f.name}' has the shape {list(full)}; the "
                                     f"field needs {self.spatial_dims} spatial extents"
                                     + (f" and the index extents {list(idx_shape)}." if idx_shape else "."))
                order = tuple(sorted(range(len(full)), key=lambda c: (strides[c], -c)))
                extents = _padded_extents(full, strides, order, f"{self.where}: the array of field '{f.name}'")
            elif fixed:
                full = tuple(int(n) for n in f.shape)
                strides = tuple(int(s) for s in f.strides)
                order = tuple(sorted(range(len(full)), key=lambda c: (strides[c], -c)))
                if full[:self.spatial_dims] != self.ps_spatial:
                    raise InputError(f"{self.where}: field '{f.name}' has the fixed shape {list(full)}, which "
                                     f"does not match the shape {list(self.shape)} given (x fastest).")
            else:
                full = self.ps_spatial + idx_shape
                lay = estimated_order(f, self.layout, self.index_layout)
                strides = dense_strides(full, lay)
                order = tuple(reversed(lay))
            if self.arrays is None or fixed:
                extents = full
            self.fields[f.name] = FieldInfo(f.name, int(eb), isinstance(dtype, PsIeeeFloatType), full, strides,
                                            order, fixed, extents)
        for p in self.kernel.parameters:
            for prop in p.properties:
                if isinstance(prop, FieldBasePtr):
                    self.pointer_field[p.name] = prop.field.name
                elif isinstance(prop, FieldShape | FieldStride) and prop.field.name in self.fields:
                    info = self.fields[prop.field.name]
                    if prop.coordinate >= len(info.shape):
                        continue
                    v = (info.shape if isinstance(prop, FieldShape) else info.strides)[prop.coordinate]
                    old = self.values.setdefault(p.name, v)
                    if old != v:
                        raise InputError(f"{self.where}: parameter '{p.name}' is shared by fields that get "
                                         f"different values ({old} and {v}) for this shape and layout.")
                    if isinstance(prop, FieldShape):
                        self.shape_params[p.name] = (prop.field.name, prop.coordinate)
                    else:
                        self.stride_params[(prop.field.name, prop.coordinate)] = p.name

    # ----------------------------------------------------------------- expressions
    def _collect_decls(self, node: Any) -> None:
        if isinstance(node, structural.PsDeclaration):
            self.decls[node.declared_symbol.name] = node.rhs
        elif isinstance(node, structural.PsLoop):  # a grid-strided loop: its first iteration (see GRID_STRIDED)
            self.decls[node.counter.symbol.name] = node.start
            self.loops += 1
        for c in node.children:
            self._collect_decls(c)

    def to_sympy(self, e: Any, what: str | _Said) -> sp.Expr:
        """An integer index expression of the AST as SymPy (thread indices not yet substituted)."""
        match e:
            case expressions.PsSymbolExpr(symbol):
                name = symbol.name
                if name in self.memo:
                    return self.memo[name]
                if name in self.decls:
                    dt = symbol.dtype
                    if dt is not None and not isinstance(dt, PsIntegerType):
                        raise InputError(f"{self.where}: {what} depends on '{name}' of type {dt}, which is not "
                                         "an integer index (indirect or data-dependent addressing is not "
                                         "supported).")
                    v = self.to_sympy(self.decls[name], what)
                    self.memo[name] = v
                    return v
                return _sym(name)
            case expressions.PsConstantExpr(constant):
                v = constant.value
                try:
                    iv = int(v)
                except (TypeError, ValueError):
                    raise InputError(f"{self.where}: {what} has the non-integer constant {v}.") from None
                if iv != v:
                    raise InputError(f"{self.where}: {what} has the non-integer constant {v}.")
                return sp.Integer(iv)
            case expressions.PsLiteralExpr(literal):
                text = literal.text
                return _sym(text.replace(".", "_"))
            case expressions.PsCast(_, operand):
                return self.to_sympy(operand, what)
            case expressions.PsAdd(a, b):
                return self.to_sympy(a, what) + self.to_sympy(b, what)
            case expressions.PsSub(a, b):
                return self.to_sympy(a, what) - self.to_sympy(b, what)
            case expressions.PsMul(a, b):
                return self.to_sympy(a, what) * self.to_sympy(b, what)
            case expressions.PsNeg(a):
                return -self.to_sympy(a, what)
            case expressions.PsIntDiv(a, b) | expressions.PsDiv(a, b) | expressions.PsRem(a, b):
                num, den = self.to_sympy(a, what), self.to_sympy(b, what)
                den = den.subs(self._value_subs())
                if not (den.is_Integer and den > 0):
                    raise InputError(f"{self.where}: {what} divides by '{den}'; only integer division and "
                                     "remainder by positive constants are supported.")
                if isinstance(e, expressions.PsRem):
                    return Mod(num, den)
                if den == 1:
                    return num
                return FloorDiv(num, den)
            case expressions.PsMemAcc() | expressions.PsBufferAcc():
                raise InputError(f"{self.where}: {what} contains a memory access ({e}): indirect addressing "
                                 "is not supported.")
            case expressions.PsTernary():
                raise InputError(f"{self.where}: {what} contains a conditional expression ({e}); only affine "
                                 "index expressions are supported.")
            case _:
                raise InputError(f"{self.where}: {what} contains '{e}' ({type(e).__name__}), which is not an "
                                 "affine integer index expression.")

    def to_polynomial(self, e: Any) -> poly.Polynomial:
        """An integer index expression of the AST as a polynomial (thread indices not yet substituted);
        :class:`_NotPolynomial` where it is not one."""
        match e:
            case expressions.PsSymbolExpr(symbol):
                name = symbol.name
                if name in self.polynomial_memo:
                    found = self.polynomial_memo[name]
                    if found is None:
                        raise _NotPolynomial
                    return found
                if name in self.decls:
                    dt = symbol.dtype
                    if dt is not None and not isinstance(dt, PsIntegerType):
                        raise _NotPolynomial
                    self.polynomial_memo[name] = None  # until read: a failure below leaves it so
                    v = self.to_polynomial(self.decls[name])
                    self.polynomial_memo[name] = v
                    return v
                return poly.symbol(name)
            case expressions.PsConstantExpr(constant):
                v = constant.value
                try:
                    iv = int(v)
                except (TypeError, ValueError):
                    raise _NotPolynomial from None
                if iv != v:
                    raise _NotPolynomial
                return poly.constant(iv)
            case expressions.PsLiteralExpr(literal):
                return poly.symbol(literal.text.replace(".", "_"))
            case expressions.PsCast(_, operand):
                return self.to_polynomial(operand)
            case expressions.PsAdd(a, b):
                return poly.add(self.to_polynomial(a), self.to_polynomial(b))
            case expressions.PsSub(a, b):
                return poly.add(self.to_polynomial(a), self.to_polynomial(b), -1)
            case expressions.PsMul(a, b):
                return poly.multiply(self.to_polynomial(a), self.to_polynomial(b))
            case expressions.PsNeg(a):
                return poly.scale(self.to_polynomial(a), -1)
            case _:
                raise _NotPolynomial

    def _polynomial_entry(self, offset: Any, pointer_offsets: list[Any], info: FieldInfo) -> Any:
        """An access's entry (per-coordinate indices, or one linear index) read as polynomials, as
        :meth:`_access` reads it through SymPy; :class:`_NotPolynomial` where that does not go."""
        off = self.to_polynomial(offset)
        for extra in pointer_offsets:
            off = poly.add(off, self.to_polynomial(extra))
        off = poly.substitute(off, _THREAD_POLYNOMIALS)
        if any(s.startswith(("blockIdx", "blockDim", "gridDim")) for s in poly.symbols(off)):
            raise _NotPolynomial
        if not info.fixed:
            names = [self.stride_params.get((info.name, c)) for c in range(len(info.shape))]
            if None not in names and len(set(names)) == len(names):
                strides = set(names)  # type: ignore[arg-type]
                coefs = [poly.coefficient(off, n) for n in names]  # type: ignore[arg-type]
                rest = off
                for n, c in zip(names, coefs, strict=True):
                    rest = poly.add(rest, poly.multiply(c, poly.symbol(n)), -1)  # type: ignore[arg-type]
                if not rest and not any(poly.symbols(c) & strides for c in coefs):
                    return [self._polynomial_text(coefs[c]) for c in info.order]
        return self._polynomial_text(off)

    def _polynomial_text(self, a: poly.Polynomial) -> str:
        """:func:`affine_text` of a polynomial with the shape and stride parameters put in."""
        values = self._polynomial_values()
        a = poly.substitute(a, values) if poly.symbols(a) & values.keys() else a
        parts: list[tuple[int, str, int]] = []
        for m, c in a.items():
            if m == poly.ONE:
                parts.append((9, "", c))
            elif len(m) == 1 and m[0] in TIDS:
                parts.append((TIDS.index(m[0]), m[0], c))
            else:
                raise _NotPolynomial  # not affine in the thread indices: SymPy words the error
        return _affine_terms_text(parts)

    def _polynomial_values(self) -> dict[str, poly.Polynomial]:
        if not hasattr(self, "_pvalues"):
            self._pvalues = {k: poly.constant(v) for k, v in self.values.items()}
        return self._pvalues

    def _value_subs(self) -> dict[sp.Symbol, int]:
        if not hasattr(self, "_vsubs"):
            self._vsubs = {_sym(k): v for k, v in self.values.items()}
        return self._vsubs

    def _thread_subs(self, expr: sp.Expr, what: str | _Said) -> sp.Expr:
        subs = {}
        for a, t in zip(_AXES, TID_SYMBOLS, strict=True):
            subs[_sym(f"threadIdx_{a}")] = t - _sym(f"blockIdx_{a}") * _sym(f"blockDim_{a}")
        out = sp.expand(expr.xreplace(subs))
        left = sorted(str(s) for s in out.free_symbols if str(s).startswith(("blockIdx", "blockDim", "gridDim")))
        if left:
            raise InputError(f"{self.where}: {what} uses {', '.join(left)} other than through the global thread "
                             f"index blockIdx*blockDim+threadIdx; {SCHEMES_DESCRIBED}")
        return out

    # ----------------------------------------------------------------- the walk
    def run(self) -> dict:
        body = self.kernel.body
        self._collect_decls(body)
        self.linear = self._linear_counters()
        self.domain, self.extent_text = self._domain(body)
        self._walk(body)
        fields = []
        for info in sorted(self.fields.values(), key=lambda f: f.name):
            if not info.loads and not info.stores:
                continue
            shape = [self.extent_text.get((info.name, c), info.extents[c]) for c in info.order]
            fields.append({"name": info.name, "element_bytes": info.element_bytes, "shape": shape,
                           "loads": info.loads, "stores": info.stores})
        if not fields:
            raise InputError(f"{self.where}: no global load or store found.")
        return {"fields": fields, "domain": list(self.domain), "indexing": self._indexing()}

    def _indexing(self) -> str:
        """The warpspeed indexing of the kernel: a grid-strided loop under a manual launch grid (the caller's
        grid: ``gridstrided_linear1d``, its iterations per thread ranked as the folding in x) or else the plain
        scheme's (pystencils' own grid covers the iteration space: one iteration per thread)."""
        manual = self.loops and type(self.kernel.get_launch_configuration()).__name__ == "ManualLaunchConfiguration"
        if not manual:
            return "linear1d" if self.linear else "linear3d"
        if not self.linear:
            raise InputError(f"{self.where}: a GridstridedLinear3D kernel with a manual launch grid: warpspeed "
                             "models the grid of grid-strided loops over the linearised cells (GridstridedLinear1D); "
                             "use that scheme, or pystencils' own launch grid (no gpu.manual_launch_grid).")
        return "gridstrided_linear1d"

    def _linear_counters(self) -> bool:
        """Read the counters of pystencils' Linear1D indexing (and of the first iteration of its grid-strided
        loop), ``ctr_c = start_c + (ctr_1d / (n_0 ... n_c-1)) % n_c`` of the one-dimensional thread index
        ``ctr_1d``, as ``start_c + tid_c``: the cell's coordinates, in warpspeed's ``linear1d`` indexing (thread
        t on the t-th cell of the iteration space linearised with ``ctr_0`` fastest). False for other kernels."""
        if LINEAR_COUNTER not in self.decls:
            return False
        thread = _sym(LINEAR_COUNTER)
        self.memo[LINEAR_COUNTER] = thread
        counters = [n for n in self.decls if n != LINEAR_COUNTER and n.startswith("ctr_") and n[4:].isdigit()]
        axes: dict[str, tuple[int, int]] = {}
        for name in counters:
            e = sp.expand(self.to_sympy(self.decls[name], f"the counter '{name}'").xreplace(self._value_subs()))
            terms = [t for t in sp.Add.make_args(e) if t.has(thread)]
            start = e - sum(terms, sp.Integer(0))
            axis = _linear_axis(terms[0], thread, len(counters)) if len(terms) == 1 else None
            if axis is None or not start.is_Integer:
                raise InputError(f"{self.where}: the counter '{name}' = {e} is not pystencils' Linear1D "
                                 "de-linearisation of the thread index (start + (ctr_1d / stride) % extent).")
            axes[name] = (axis, int(start))
        if sorted(a for a, _ in axes.values()) != list(range(len(counters))):
            raise InputError(f"{self.where}: the counters {sorted(axes)} of its Linear1D indexing do not take one "
                             "thread axis each.")
        for name, (axis, start) in axes.items():
            self.memo[name] = start + TID_SYMBOLS[axis]
            self.polynomial_memo[name] = poly.add(poly.constant(start), poly.symbol(TIDS[axis]))
        return True

    def _walk(self, node: Any) -> None:
        if isinstance(node, structural.PsAssignment) and not isinstance(node, structural.PsDeclaration):
            lhs = node.lhs
            if isinstance(lhs, expressions.PsMemAcc):
                self._access(lhs, store=True)
                self._walk(lhs.offset)
            else:
                self._walk(lhs)
            self._walk(node.rhs)
            return
        if isinstance(node, expressions.PsMemAcc):
            self._access(node, store=False)
            self._walk(node.offset)
            return
        if isinstance(node, expressions.PsBufferAcc):
            raise InputError(f"{self.where}: unlowered buffer access {node}; pass a kernel created by "
                             "pystencils.create_kernel.")
        for c in node.children:
            self._walk(c)

    def _field_of(self, pointer: Any) -> tuple[FieldInfo, list[Any]]:
        """The field behind a pointer expression and the extra element offsets added to it (pointer
        arithmetic)."""
        extra: list[Any] = []
        p = pointer
        while True:
            if isinstance(p, expressions.PsCast):
                p = p.operand
                continue
            if isinstance(p, expressions.PsAdd):
                p, off = p.operand1, p.operand2
                extra.append(off)
                continue
            if isinstance(p, expressions.PsSymbolExpr):
                name = p.symbol.name
                if name in self.pointer_field:
                    return self.fields[self.pointer_field[name]], extra
                if name in self.decls:
                    p = self.decls[name]
                    continue
            raise InputError(f"{self.where}: memory access through '{pointer}', which is not a field's base "
                             "pointer (indirect addressing is not supported).")

    def _access(self, acc: expressions.PsMemAcc, store: bool) -> None:
        info, pointer_offsets = self._field_of(acc.pointer)
        entry: Any = None
        if self.POLYNOMIALS:
            try:
                entry = self._polynomial_entry(acc.offset, pointer_offsets, info)
            except _NotPolynomial:
                entry = None
        if entry is None:
            kind = "store" if store else "load"
            what = _Said(lambda: f"field '{info.name}', {kind} [{acc.offset}]")
            extra = sum((self.to_sympy(off, "a pointer offset") for off in pointer_offsets), sp.Integer(0))
            off = self._thread_subs(self.to_sympy(acc.offset, what) + extra, what)
            if not info.fixed:
                entry = self._split(off, info, what)
            if entry is None:
                lin = sp.expand(off.xreplace(self._value_subs()))
                entry = affine_text(lin, self.where, what)
        target = info.stores if store else info.loads
        if entry not in target:
            target.append(entry)

    def _split(self, off: sp.Expr, info: FieldInfo, what: str | _Said) -> list[str] | None:
        """Per-coordinate indices from the coefficients of the stride parameters, in memory order (None where a
        coordinate has no stride parameter: its stride is a constant, and the offset is one linear index)."""
        names = [self.stride_params.get((info.name, c)) for c in range(len(info.shape))]
        if None in names:
            return None
        stride_syms = [_sym(n) for n in names]  # type: ignore[arg-type]
        if len(set(stride_syms)) != len(stride_syms):
            return None
        coefs = [off.coeff(s) for s in stride_syms]
        rest = sp.expand(off - sum(c * s for c, s in zip(coefs, stride_syms, strict=True)))
        if rest != 0 or any(c.has(*stride_syms) for c in coefs):
            return None
        vs = self._value_subs()
        return [affine_text(sp.expand(coefs[c].xreplace(vs)), self.where, _Said(lambda c=c: f"{what}, coordinate {c}"))
                for c in info.order]

    # ----------------------------------------------------------------- iteration space
    def _domain(self, body: structural.PsBlock) -> tuple[tuple[int, int, int], dict[tuple[str, int], str]]:
        guard = next((s for s in body.statements if isinstance(s, structural.PsConditional)), None)
        if self.linear or guard is None:  # the guard of the counters, inside the linear index's and the loops
            guard = _counter_guard(body)
        dom: dict[int, int] = {}
        text: dict[tuple[str, int], str] = {}
        used = thread_axes(body)
        used_axes = sorted(i for i, a in enumerate(_AXES) if a in used)
        if guard is None:
            raise InputError(f"{self.where}: no iteration-space guard (if ctr < size - gl) found; "
                             f"{SCHEMES_DESCRIBED}")
        for rel in _conjuncts(guard.condition):
            self._bound(rel, dom, text)
        missing = [TIDS[i] for i in used_axes if i not in dom]
        if missing:
            raise InputError(f"{self.where}: the guard bounds no iteration range for {', '.join(missing)}.")
        if len(dom) < min(self.spatial_dims, 3):
            raise InputError(f"{self.where}: its {self.spatial_dims} spatial coordinates are not on "
                             f"{self.spatial_dims} thread axes; {SCHEMES_DESCRIBED}")
        out = tuple(dom.get(i, 1) for i in range(3))
        if any(n < 1 for n in out):
            raise InputError(f"{self.where}: empty iteration space {list(out)} for the shape "
                             f"{list(self.ps_spatial)} (ghost layers take it all).")
        return out, text  # type: ignore[return-value]

    def _bound(self, rel: Any, dom: dict[int, int], text: dict[tuple[str, int], str]) -> None:
        what = f"guard '{rel}'"
        if isinstance(rel, expressions.PsLt | expressions.PsLe):
            lo, hi, strict = rel.operand1, rel.operand2, isinstance(rel, expressions.PsLt)
        elif isinstance(rel, expressions.PsGt | expressions.PsGe):
            lo, hi, strict = rel.operand2, rel.operand1, isinstance(rel, expressions.PsGt)
        else:
            raise InputError(f"{self.where}: cannot read the iteration space from the {what}.")
        lhs = self._thread_subs(self.to_sympy(lo, what), what)
        rhs_raw = self.to_sympy(hi, what)
        rhs = sp.expand(self._thread_subs(rhs_raw, what).xreplace(self._value_subs()))
        lhs = sp.expand(lhs.xreplace(self._value_subs()))
        tids = [t for t in TID_SYMBOLS if lhs.has(t)]
        if not rhs.is_Integer:
            if not tids and rhs.has(*TID_SYMBOLS):  # a lower bound such as start <= ctr
                return
            raise InputError(f"{self.where}: the {what} does not compare with a constant for this shape.")
        if len(tids) != 1:
            if not tids and lhs.is_Integer and bool(lhs < rhs if strict else lhs <= rhs):
                return  # always true
            raise InputError(f"{self.where}: cannot read the iteration space from the {what}.")
        t = tids[0]
        poly = sp.Poly(lhs, t)
        if poly.degree() != 1:
            raise InputError(f"{self.where}: the {what} is not affine in {t}.")
        s, a = poly.all_coeffs()
        if not (s.is_Integer and a.is_Integer and s > 0):
            raise InputError(f"{self.where}: cannot read the iteration space from the {what}.")
        s, a, r = int(s), int(a), int(rhs)
        n = -(-(r - a) // s) if strict else (r - a) // s + 1
        axis = TID_SYMBOLS.index(t)
        dom[axis] = min(n, dom.get(axis, n))
        if s == 1:  # extents along this axis follow the domain: "nx+8"
            for sym in rhs_raw.free_symbols:
                if sym.name in self.shape_params:
                    fname, coord = self.shape_params[sym.name]
                    for info in self.fields.values():
                        if not info.fixed and coord < self.spatial_dims and info.extents[coord] == info.shape[coord]:
                            k = info.shape[coord] - n
                            text[(info.name, coord)] = f"{_DOMAIN_NAMES[axis]}+{k}" if k else _DOMAIN_NAMES[axis]


GRID_STRIDED = ("GridstridedLinear3D", "GridstridedLinear1D")
"""pystencils' grid-strided schemes: each thread loops over cells a grid apart. They are described by the loop's
first iteration, which is the whole kernel where the launch's grid covers the iteration space, as pystencils'
launch configuration of these schemes makes it unless a manual launch grid is asked for."""
LINEAR_COUNTER = "ctr_1d"
"""The one-dimensional thread index of pystencils' Linear1D indexing schemes."""
SCHEMES_DESCRIBED = ("only pystencils' Linear3D and Linear1D indexing schemes (and their grid-strided forms) are "
                     "described (gpu.indexing_scheme). Blockwise4D puts coordinates on blockIdx, one block per row "
                     "of the row's length, whose size is no choice: there is no block to rank.")


def linear_indexing(kernel: Any) -> bool:
    """Whether a pystencils GPU kernel takes its cells from a one-dimensional thread index (Linear1D)."""
    def declares(node: Any) -> bool:
        if isinstance(node, structural.PsDeclaration):
            return node.declared_symbol.name == LINEAR_COUNTER
        return not isinstance(node, expressions.PsExpression) and any(declares(c) for c in node.children)

    return declares(kernel.body)


def _linear_axis(term: sp.Expr, thread: sp.Symbol, dims: int) -> int | None:
    """The axis of a Linear1D counter's term: ``ctr_1d % n0`` (or ``ctr_1d`` of a 1-D space) 0,
    ``(ctr_1d / n0) % n1`` 1, ``ctr_1d / (n0 n1 ...)`` the last; None for anything else."""
    if term == thread:
        return 0 if dims == 1 else None
    if isinstance(term, Mod) and term.args[0] == thread:
        return 0
    if isinstance(term, Mod) and isinstance(term.args[0], FloorDiv) and term.args[0].args[0] == thread:
        return 1
    if isinstance(term, FloorDiv) and term.args[0] == thread:
        return dims - 1
    return None


def _counter_guard(node: Any) -> Any:
    """The first conditional of a Linear1D kernel that bounds its counters, not the linear index."""
    if isinstance(node, structural.PsConditional) and LINEAR_COUNTER not in str(node.condition):
        return node
    for c in node.children:
        found = _counter_guard(c)
        if found is not None:
            return found
    return None


def thread_axes(node: Any) -> set[str]:
    """The thread axes (``"x"``, ``"y"``, ``"z"``) whose ``threadIdx`` a kernel's AST reads."""
    if isinstance(node, expressions.PsLiteralExpr) and node.literal.text.startswith("threadIdx."):
        return {node.literal.text[len("threadIdx."):]}
    return set().union(*(thread_axes(c) for c in node.children))


def field_element_types(kernel: Any) -> dict[str, Any]:
    """The element type of each field, as pystencils' JIT checks the arrays against it: the field's own type,
    or for a field of generic type (``ps.fields("f: [3D]")``, ``ps::numeric_t``) the type its code declares
    (its base pointer's target: the config's default type)."""
    out = {f.name: f.dtype for f in kernel.get_fields()}
    for p in kernel.parameters:
        base = getattr(p.dtype, "base_type", None)
        roles = [prop for prop in p.properties if isinstance(prop, FieldBasePtr)]
        if base is not None and roles and isinstance(roles[0].field.dtype, ps.DynamicType):
            out[roles[0].field.name] = base
    return out


def _conjuncts(cond: Any) -> list[Any]:
    if isinstance(cond, expressions.PsAnd):
        return _conjuncts(cond.operand1) + _conjuncts(cond.operand2)
    return [cond]


def affine_text(expr: sp.Expr, where: str, what: str | _Said) -> str:
    """A warpspeed expression string for an affine integer expression of tidx, tidy, tidz."""
    expr = sp.expand(expr)
    terms = expr.as_coefficients_dict()
    parts: list[tuple[int, str, int]] = []
    for key, coef in terms.items():
        if not coef.is_Integer:
            raise InputError(f"{where}: {what}: coefficient {coef} of '{key}' is not an integer.")
        c = int(coef)
        if key == 1:
            parts.append((9, "", c))
        elif key in TID_SYMBOLS:
            parts.append((TID_SYMBOLS.index(key), key.name, c))
        elif isinstance(key, FloorDiv | Mod):
            inner = affine_text(key.args[0], where, what)
            op = "//" if isinstance(key, FloorDiv) else "%"
            parts.append((5, f"({inner}){op}{int(key.args[1])}", c))
        else:
            free = sorted(str(s) for s in key.free_symbols if s not in TID_SYMBOLS)
            if free:
                raise InputError(f"{where}: {what} depends on {', '.join(free)} (not a thread index or a field "
                                 "shape/stride): indirect or parameter-dependent addressing is not supported.")
            raise InputError(f"{where}: {what}: the index '{expr}' is not affine in tidx, tidy, tidz (term "
                             f"'{key}').")
    return _affine_terms_text(parts)


def _affine_terms_text(parts: list[tuple[int, str, int]]) -> str:
    """The text of (order, name, coefficient) terms: the thread indices x, y, z, then divisions and remainders,
    then the constant (name "")."""
    parts = sorted(parts, key=lambda p: (p[0], p[1]))
    out = ""
    for _, name, c in parts:
        if c == 0:
            continue
        if not name:
            term = str(abs(c))
        elif abs(c) == 1:
            term = name
        else:
            term = f"{abs(c)}*{name}"
        if not out:
            out = term if c > 0 else f"-{term}"
        else:
            out += f" + {term}" if c > 0 else f" - {term}"
    return out or "0"


# --------------------------------------------------------------------------- flops
_OTHER_OPS = ("divs", "sqrts", "fast_sqrts", "fast_inv_sqrts", "fast_div")


def flops_from_assignments(assignments: Any) -> dict[str, float] | None:
    """adds / muls / divs+sqrts of a list of assignments via ``count_operations``; None where it fails or warns
    that its count is inaccurate (a SymPy node it does not know, such as ``Abs``): the kernel's code is then
    counted instead (:func:`flops_from_ast`)."""
    import warnings

    from pystencils.sympyextensions import count_operations

    try:
        with warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            counts = count_operations(list(assignments), only_type=None)
    except Exception:  # count_operations does not know every SymPy node
        return None
    if any(issubclass(w.category, UserWarning) and not issubclass(w.category, DeprecationWarning) for w in said):
        return None
    return {"add": float(counts.get("adds", 0)), "mul": float(counts.get("muls", 0)),
            "other": float(sum(counts.get(k, 0) for k in _OTHER_OPS))}


def flops_from_ast(kernel: Any) -> dict[str, float]:
    """Floating-point operations inside the kernel's guard (hoisted constants outside it are not counted)."""
    counts = {"add": 0.0, "mul": 0.0, "other": 0.0}
    guard = next((s for s in kernel.body.statements if isinstance(s, structural.PsConditional)), kernel.body)

    def visit(node: Any) -> None:
        if isinstance(node, expressions.PsMemAcc):
            return  # index arithmetic is integer
        if isinstance(node, expressions.PsExpression) and isinstance(node.dtype, PsIeeeFloatType):
            if isinstance(node, expressions.PsAdd | expressions.PsSub):
                counts["add"] += 1
            elif isinstance(node, expressions.PsMul):
                counts["mul"] += 1
            elif isinstance(node, expressions.PsDiv | expressions.PsCall):
                counts["other"] += 1
        for c in node.children:
            visit(c)

    visit(guard)
    return counts


def precision_of(fields: Mapping[str, FieldInfo]) -> str:
    floats = [f.element_bytes for f in fields.values() if f.is_float]
    return "fp32" if floats and max(floats) <= 4 else "fp64"


def _layouts_text(ex: Extractor, layout: str | None, index_layout: str | None) -> str:
    """The layouts a description was made for, in words."""
    if layout is not None:
        return f"layout {layout}" + (f", index layout {index_layout}" if index_layout not in (None, layout) else "")
    named = []
    for info in sorted(ex.fields.values(), key=lambda f: f.name):
        slowest_first = tuple(reversed(info.order))
        n = len(info.shape)
        known = [k for k in ("c", "fzyx", "zyxf") if (k != "zyxf" or n == ex.spatial_dims + 1)
                 and layout_orders(k, ex.spatial_dims, n - ex.spatial_dims, "layout") == slowest_first]
        named.append(f"{info.name} {known[0] if known else slowest_first}")
    index = f"; index layout {index_layout}" if index_layout else ""
    return f"the declared layouts ({', '.join(named)}{index})"


def kernel_dict(kernel: Any, shape: Sequence[int] | None, *, layout: str | None, index_layout: str | None,
                name: str, flops: dict[str, float] | None, arrays: Mapping[str, ArrayLayout] | None = None) -> dict:
    """The warpspeed kernel dict (the structure of docs/kernel-format.md) of a pystencils GPU kernel, for
    arrays of ``shape`` and ``layout``, or for the ``arrays`` of a launch (their shapes and strides).
    ``layout=None``: each field in the layout it was declared with (:func:`estimated_order`); ``index_layout``:
    that of the fields with an index dimension (default: ``layout``, else the declaration)."""
    ex = Extractor(kernel, shape, layout, index_layout, name, arrays)
    out = ex.run()
    if flops is None:
        flops = flops_from_ast(kernel)
    spec = {"name": name, "precision": precision_of(ex.fields),
            "flops": {k: v for k, v in flops.items() if v},
            "domain": out["domain"], "field": out["fields"]}
    if out["indexing"] != "linear3d":
        spec["indexing"] = out["indexing"]
    loads = sum(len(f["loads"]) for f in out["fields"])
    stores = sum(len(f["stores"]) for f in out["fields"])
    spec["description"] = (f"pystencils {ps.__version__} kernel '{kernel.name}': {loads} distinct loads, {stores} "
                           f"distinct stores; allocated shape {list(ex.shape)} (fastest first), "
                           + ("the strides of the arrays launched" if arrays is not None
                              else _layouts_text(ex, layout, index_layout)))
    return spec
