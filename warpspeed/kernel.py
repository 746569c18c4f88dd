"""Kernel descriptions: fields, their address expressions, flops, registers, iteration space.

A kernel is data. It is read from the TOML format of docs/kernel-format.md (``load_kernel``) or built from a
dict of the same shape (``kernel_from_dict``, used by the catalog and the plugins). Shapes and
expressions may use ``nx, ny, nz`` (the iteration-space size) and ``[params]``; a ``Kernel`` is always
resolved for one domain, and ``Kernel.with_domain`` re-resolves it for another one.
"""

from __future__ import annotations

import math
import os
import stat
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from .errors import InputError
from .expressions import THREAD_VARS, Add, Const, Expr, Mul, bounds, parse, simplify

PRECISIONS = ("fp32", "fp64")
INDEXING = ("linear3d", "linear1d", "gridstrided_linear1d")
"""How threads map to cells (docs/kernel-format.md, "Threads and cells"): ``linear3d``, thread (tidx, tidy, tidz)
updates that cell; ``linear1d``, the t-th thread of a one-dimensional launch updates the t-th cell of the
iteration space linearised x fastest (pystencils' Linear1D indexing scheme); ``gridstrided_linear1d``, the same
in a loop over the cells a grid apart (pystencils' GridstridedLinear1D with a grid of its own)."""
LINEAR_INDEXING = ("linear1d", "gridstrided_linear1d")
"""The indexings whose threads take the cells of the linearised iteration space in turn (one-dimensional blocks)."""
# the vocabulary of a kernel description (docs/kernel-format.md, tested against it): top-level, field, flops keys
KERNEL_KEYS = frozenset({"name", "precision", "flops_per_lup", "flops", "registers", "domain", "params", "field",
                         "fields", "shared_bytes_per_block", "description", "indexing"})
FIELD_KEYS = frozenset({"name", "element_bytes", "shape", "offset", "loads", "stores"})
FLOP_KEYS = frozenset({"fma", "add", "mul", "other"})


@dataclass(frozen=True)
class Access:
    """One load or store: per-dimension indices (x fastest) or one linear index, and its linear form."""

    text: str | tuple[str, ...]
    index: tuple[Expr, ...]
    linear: Expr  # element index into the field, linearized x-fastest over the field's shape


@dataclass(frozen=True)
class Field:
    """An array the kernel reads or writes. Base address = 128 B boundary + ``offset`` elements."""

    name: str
    element_bytes: int
    shape: tuple[int, ...]
    offset: int
    loads: tuple[Access, ...]
    stores: tuple[Access, ...]

    @property
    def strides(self) -> tuple[int, ...]:
        """Element strides of the allocated shape, x fastest."""
        out, s = [], 1
        for n in self.shape:
            out.append(s)
            s *= n
        return tuple(out)


@dataclass(frozen=True)
class Flops:
    """Floating-point work per lattice update, split by instruction kind where known.

    ``fma`` counts two flops each. When only a total is known it is kept in ``other``, assumed to pair into
    FMAs: two flops per instruction (see ``instructions``).
    """

    fma: float = 0.0
    add: float = 0.0
    mul: float = 0.0
    other: float = 0.0

    @property
    def total(self) -> float:
        return 2 * self.fma + self.add + self.mul + self.other

    @property
    def instructions(self) -> float:
        """FP instructions per lup. A bare total is assumed to run at the FMA peak (2 flops/instruction)."""
        return self.fma + self.add + self.mul + self.other / 2


@dataclass(frozen=True)
class Kernel:
    """A kernel resolved for one iteration space ``domain`` (cells in x, y, z)."""

    name: str
    precision: str
    flops: Flops
    registers: int | None
    domain: tuple[int, int, int]
    fields: tuple[Field, ...]
    params: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}), compare=False)
    shared_bytes_per_block: int = 0
    source: str = "<dict>"
    spec: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), compare=False, repr=False)
    indexing: str = "linear3d"  # one of INDEXING: how the launch's threads map to cells

    def __hash__(self) -> int:
        """The hash of the compared fields, computed once (a kernel keys the caches of every estimate)."""
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.name, self.precision, self.flops, self.registers, self.domain, self.fields,
                      self.shared_bytes_per_block, self.source, self.indexing))
            object.__setattr__(self, "_hash", h)
        return h

    def with_domain(self, domain: Sequence[int] | None) -> Kernel:
        """The same kernel resolved for another iteration space (shapes may depend on nx, ny, nz)."""
        if domain is None or tuple(_domain3(domain, self.source)) == self.domain:
            return self
        return kernel_from_dict(dict(self.spec), source=self.source, domain=domain)

    def without_registers(self) -> Kernel:
        """The same kernel with its registers unknown: what an analysis of its accesses is keyed on (kept, so
        its hash is computed once)."""
        if self.registers is None:
            return self
        twin = self.__dict__.get("_without_registers")
        if twin is None:
            twin = replace(self, registers=None,
                           spec=MappingProxyType({k: v for k, v in self.spec.items() if k != "registers"}))
            object.__setattr__(self, "_without_registers", twin)
        return twin

    def with_registers(self, registers: int | None) -> Kernel:
        if registers is None:
            return self
        spec = dict(self.spec)
        spec["registers"] = registers
        return kernel_from_dict(spec, source=self.source, domain=self.domain)

    @property
    def valid_lups(self) -> int:
        return math.prod(self.domain)

    @property
    def footprint_bytes(self) -> int:
        """Bytes of all arrays at their allocated shapes: what the GPU's memory must hold to run the kernel."""
        return sum(math.prod(f.shape) * f.element_bytes for f in self.fields)

    def __reduce__(self):
        """Pickle as the description it was built from (for process pools and distributed executors)."""
        return (_rebuild_kernel, (dict(self.spec), self.source, self.domain))


def _rebuild_kernel(spec: dict, source: str, domain: tuple[int, int, int]) -> Kernel:
    return kernel_from_dict(spec, source=source, domain=domain)


MAX_KERNEL_FILE_BYTES = 4 * 1024 * 1024
"""The largest kernel file read (a kernel description is a few kB; the largest generated ones are well under
1 MiB): a bigger file, or a device such as ``/dev/zero``, is refused before it is read."""


def read_kernel_text(path: str | Path) -> str:
    """A kernel file's text, read with bounds: only a regular file (a folder, FIFO or device is refused before
    it is opened, and it is opened non-blocking, so a FIFO swapped in cannot hang the read), at most
    :data:`MAX_KERNEL_FILE_BYTES`, and UTF-8 (else an InputError naming the line, never quoting the file)."""
    p = Path(path)
    where = f"kernel file '{p}'"
    try:
        if not stat.S_ISREG(os.stat(p).st_mode):
            raise InputError(f"{where}: not a regular file (a folder, pipe or device); give a kernel TOML file.")
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):  # replaced between the two looks
                raise InputError(f"{where}: not a regular file; give a kernel TOML file.")
            raw = f.read(MAX_KERNEL_FILE_BYTES + 1)
    except OSError as e:
        raise InputError(f"{where}: cannot be read ({e.strerror or e}).") from None
    except InputError:
        raise
    except ValueError:  # the operating system takes no path with a NUL character
        raise InputError(f"{where}: no usable path (it holds a NUL character).") from None
    if len(raw) > MAX_KERNEL_FILE_BYTES:
        raise InputError(f"{where}: larger than {MAX_KERNEL_FILE_BYTES // (1024 * 1024)} MiB; a kernel file is a "
                         "few kB of TOML (docs/kernel-format.md).")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = raw[:e.start].replace(b"\r\n", b"\n").replace(b"\r", b"\n").count(b"\n") + 1
        raise InputError(f"{where}, line {line}: not UTF-8 text; a kernel file is TOML text in UTF-8 "
                         "(docs/kernel-format.md).") from None


def load_kernel(path: str | Path, *, domain: Sequence[int] | None = None) -> Kernel:
    """Read a kernel TOML file (the format of docs/kernel-format.md), with the bounds of :func:`read_kernel_text`.
    A TOML file that is not a kernel description (no ``[[field]]`` table) is refused without quoting it."""
    p = Path(path)
    try:
        data = tomllib.loads(read_kernel_text(p))
    except tomllib.TOMLDecodeError as e:
        raise InputError(f"kernel file '{p}': not valid TOML: {e}.") from None
    if not ("field" in data or "fields" in data):
        raise InputError(f"kernel file '{p}': not a kernel description (it has no [[field]] table); see "
                         "docs/kernel-format.md.")
    return kernel_from_dict(data, source=str(p), domain=domain)


def _domain3(domain: Any, where: str) -> tuple[int, int, int]:
    if isinstance(domain, str) or not isinstance(domain, Sequence) or not 1 <= len(domain) <= 3:
        raise InputError(f"{where}: 'domain' must be a list of 1 to 3 positive integers (x, y, z), "
                         f"got {domain!r}.")
    out = []
    for v in domain:
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise InputError(f"{where}: 'domain' entries must be positive integers, got {v!r}.")
        out.append(v)
    return tuple(out + [1] * (3 - len(out)))  # type: ignore[return-value]


def _int(value: Any, where: str, *, minimum: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{where} must be an integer, got {value!r}.")
    if minimum is not None and value < minimum:
        raise InputError(f"{where} must be at least {minimum}, got {value}.")
    return value


def _const(value: Any, names: Mapping[str, int], where: str) -> int:
    """An integer or a constant expression of nx, ny, nz and params (e.g. "nx+8")."""
    if isinstance(value, str):
        e = parse(value, names=names, where=where)
        if not isinstance(e, Const):
            raise InputError(f"{where}: '{value}' must be a constant (it may use nx, ny, nz and params, "
                             "not thread coordinates).")
        return e.value
    return _int(value, where)


def _flops(data: Mapping[str, Any], where: str) -> Flops:
    if "flops" in data and "flops_per_lup" in data:
        raise InputError(f"{where}: give either 'flops_per_lup' or a [flops] table, not both.")
    raw = data.get("flops", data.get("flops_per_lup", 0))
    if isinstance(raw, Mapping):
        unknown = set(raw) - FLOP_KEYS
        if unknown:
            raise InputError(f"{where}: unknown key(s) {sorted(unknown)} in [flops]; valid: "
                             f"{sorted(FLOP_KEYS)}.")
        vals = {}
        for k, v in raw.items():
            if isinstance(v, bool) or not isinstance(v, int | float) or v < 0:
                raise InputError(f"{where}: flops.{k} must be a non-negative number, got {v!r}.")
            vals[k] = float(v)
        return Flops(**vals)
    if isinstance(raw, bool) or not isinstance(raw, int | float) or raw < 0:
        raise InputError(f"{where}: 'flops_per_lup' must be a non-negative number, got {raw!r}.")
    return Flops(other=float(raw))


def _access(raw: Any, fld: str, kind: str, i: int, shape: tuple[int, ...], names: Mapping[str, int],
            domain: tuple[int, int, int]) -> Access:
    where = f"field '{fld}', {kind} {i}"
    strides = [math.prod(shape[:d]) for d in range(len(shape))]
    if isinstance(raw, str):
        index = (parse(raw, names=names, where=where),)
        linear = index[0]
        text: str | tuple[str, ...] = raw
    elif isinstance(raw, Sequence) and all(isinstance(t, str) for t in raw):
        if len(raw) != len(shape):
            raise InputError(f"{where}: {len(raw)} index expressions for a field of {len(shape)} "
                             f"dimensions (shape {list(shape)}); give one per dimension or one linear index.")
        index = tuple(parse(t, names=names, where=f"{where}, index {d}") for d, t in enumerate(raw))
        linear = simplify(Add(tuple(Mul(s, e) for s, e in zip(strides, index, strict=True))))
        text = tuple(raw)
    else:
        raise InputError(f"{where}: an access is a string (linear index) or a list of strings "
                         f"(one per dimension), got {raw!r}.")
    box = {v: (0, n - 1) for v, n in zip(THREAD_VARS, domain, strict=True)}
    checks = [(linear, math.prod(shape), "linear index")] if len(index) == 1 else [
        (e, n, f"index {d}") for d, (e, n) in enumerate(zip(index, shape, strict=True))]
    for e, n, what in checks:
        lo, hi = bounds(e, box)
        if lo < 0 or hi >= n:
            raise InputError(f"{where}: {what} '{e}' ranges over [{lo}, {hi}] in the domain "
                             f"{list(domain)}, which leaves the allocated extent [0, {n - 1}] of field "
                             f"'{fld}' (shape {list(shape)}).")
    return Access(text=text, index=index, linear=linear)


def kernel_from_dict(data: Mapping[str, Any], *, source: str = "<dict>",
                     domain: Sequence[int] | None = None) -> Kernel:
    """Build and validate a kernel from the TOML structure; ``domain`` overrides the file's domain."""
    where = f"kernel '{source}'"
    if not isinstance(data, Mapping):
        raise InputError(f"{where}: expected a table of kernel keys.")
    unknown = set(data) - KERNEL_KEYS
    if unknown:
        raise InputError(f"{where}: unknown key(s) {sorted(unknown)}; valid keys: {sorted(KERNEL_KEYS)}.")
    name = data.get("name")
    if not isinstance(name, str) or not name:
        raise InputError(f"{where}: 'name' must be a non-empty string.")
    where = f"kernel '{name}' ({source})" if source != "<dict>" else f"kernel '{name}'"
    precision = data.get("precision", "fp64")
    if precision not in PRECISIONS:
        raise InputError(f"{where}: 'precision' must be one of {list(PRECISIONS)}, got {precision!r}.")
    indexing = data.get("indexing", "linear3d")
    if not isinstance(indexing, str) or indexing not in INDEXING:
        raise InputError(f"{where}: 'indexing' must be one of {list(INDEXING)} (how threads map to cells; "
                         f"docs/kernel-format.md), got {indexing!r}.")
    flops = _flops(data, where)
    registers = data.get("registers")
    if registers is not None:
        registers = _int(registers, f"{where}: 'registers'", minimum=1)
    shared = _int(data.get("shared_bytes_per_block", 0), f"{where}: 'shared_bytes_per_block'", minimum=0)
    if domain is None:
        if "domain" not in data:
            raise InputError(f"{where}: no 'domain' in the file; give the iteration space (e.g. --domain "
                             "640,512,512).")
        domain = data["domain"]
    dom = _domain3(domain, where)
    params = _params(data.get("params", {}), where)
    fields = _fields(data.get("field", data.get("fields")), {"nx": dom[0], "ny": dom[1], "nz": dom[2], **params},
                     dom, where)
    spec = dict(data)
    return Kernel(name=name, precision=precision, flops=flops, registers=registers, domain=dom,
                  fields=tuple(fields), params=MappingProxyType(params), shared_bytes_per_block=shared,
                  source=source, spec=MappingProxyType(spec), indexing=indexing)


def _params(params_raw: object, where: str) -> dict[str, int]:
    """The kernel's ``[params]``: integer constants its expressions may name."""
    if not isinstance(params_raw, Mapping):
        raise InputError(f"{where}: [params] must be a table of integers.")
    params: dict[str, int] = {}
    for k, v in params_raw.items():
        if k in THREAD_VARS or k in ("nx", "ny", "nz") or not k.isidentifier():
            raise InputError(f"{where}: parameter name {k!r} is reserved or not an identifier.")
        params[k] = _int(v, f"{where}: params.{k}")
    return params


def _fields(raw_fields: object, names: Mapping[str, int], dom: tuple[int, int, int], where: str) -> list[Field]:
    """The kernel's ``[[field]]`` tables, each checked (names unique, at least one load or store in all)."""
    if not isinstance(raw_fields, Sequence) or not raw_fields:
        raise InputError(f"{where}: needs at least one [[field]] table.")
    fields = []
    seen: set[str] = set()
    for j, f in enumerate(raw_fields):
        fields.append(_field(j, f, seen, names, dom, where))
    if not any(f.loads or f.stores for f in fields):
        raise InputError(f"{where}: no field has a load or a store.")
    return fields


def _field(j: int, f: object, seen: set[str], names: Mapping[str, int], dom: tuple[int, int, int],
           where: str) -> Field:
    """The ``j``-th ``[[field]]`` table (its name is added to ``seen``)."""
    if not isinstance(f, Mapping):
        raise InputError(f"{where}: [[field]] {j} must be a table.")
    bad = set(f) - FIELD_KEYS
    fname = f.get("name")
    if not isinstance(fname, str) or not fname:
        raise InputError(f"{where}: [[field]] {j} needs a 'name' string.")
    fw = f"{where}, field '{fname}'"
    if bad:
        raise InputError(f"{fw}: unknown key(s) {sorted(bad)}; valid keys: {sorted(FIELD_KEYS)}.")
    if fname in seen:
        raise InputError(f"{fw}: defined twice.")
    seen.add(fname)
    eb = _int(f.get("element_bytes", 8), f"{fw}: 'element_bytes'", minimum=1)
    if eb not in (1, 2, 4, 8, 16):
        raise InputError(f"{fw}: 'element_bytes' must be 1, 2, 4, 8 or 16, got {eb}.")
    raw_shape = f.get("shape")
    if isinstance(raw_shape, str) or not isinstance(raw_shape, Sequence) or not raw_shape:
        raise InputError(f"{fw}: 'shape' must be a list of extents (x fastest), got {raw_shape!r}.")
    shape = tuple(_const(s, names, f"{fw}, shape[{d}]") for d, s in enumerate(raw_shape))
    if any(s < 1 for s in shape):
        raise InputError(f"{fw}: shape {list(shape)} must have positive extents.")
    offset = _const(f.get("offset", 0), names, f"{fw}: 'offset'")
    lists = {}
    for kind in ("loads", "stores"):
        raw = f.get(kind, [])
        if isinstance(raw, str) or not isinstance(raw, Sequence):
            raise InputError(f"{fw}: '{kind}' must be a list of accesses.")
        lists[kind] = tuple(_access(a, fname, kind[:-1], i, shape, names, dom) for i, a in enumerate(raw))
    return Field(fname, eb, shape, offset, lists["loads"], lists["stores"])
