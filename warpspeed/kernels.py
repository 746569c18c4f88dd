"""The kernel catalog: kernel files shipped in ``kernels/``, parametrized generators, plugin entries.

``get(name, **params)`` returns a Kernel. Names are the TOML files of ``kernels/`` (installed as package
data), the generators ``star`` and ``box`` (any range, 1 to 3 dimensions, 4 or 8 B elements), and entries
that plugins register (a code generator's plugin adds its kernels, built by the generator on first use).
On the command line a name may carry parameters: ``star:r=2,dims=2`` (values are integers or words).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from .errors import InputError, install_hint
from .kernel import Kernel, kernel_from_dict, load_kernel

VARS = ("tidx", "tidy", "tidz")


@dataclass(frozen=True)
class CatalogEntry:
    """A named kernel, its parameters with their defaults, and how to build it.

    ``program`` (optional) builds the kernel's own CUDA source for ``warpspeed measure``: called with the same
    parameters and ``domain=``, it returns a :class:`warpspeed.measurement.measure.CudaProgram`.
    ``accesses`` (optional) counts the loads and stores the build would make from the same parameters, without
    building: a caller with a work limit (the web page) refuses a large kernel before generating it.
    ``front_end`` (optional): the :class:`warpspeed.frontends.FrontEnd` its kernels come from (a plugin's entries
    get their plugin's ``front_end()``); None: the kernel-file front end.
    """

    name: str
    description: str
    build: Callable[..., Kernel]
    params: Mapping[str, Any] = field(default_factory=dict)
    program: Callable[..., Any] | None = None
    accesses: Callable[..., int] | None = None
    front_end: Any = None


def _catalog_dir() -> Path:
    """The folder of the shipped kernel files, wherever the package runs from.

    Installed (wheel, editable, ``gpu/install-checkout.sh``), it is the package data ``warpspeed._catalog``
    (pyproject.toml maps that package to ``kernels/``). Imported from a checkout's source tree (``python -m
    warpspeed`` in the checkout root shadows any installed copy, and the tree has no ``warpspeed/_catalog``),
    it is the ``kernels/`` folder beside the ``warpspeed/`` folder.
    """
    looked = []
    try:
        d = Path(str(resources.files("warpspeed._catalog")))
    except ModuleNotFoundError:
        looked.append("the package warpspeed._catalog (not installed)")
    else:
        if d.is_dir():
            return d
        looked.append(f"the package warpspeed._catalog ({d}: not a folder)")
    here = Path(__file__).resolve().parent
    for d in (here / "_catalog", here.parent / "kernels"):
        if d.is_dir() and (d / "__init__.py").is_file():
            return d
        looked.append(str(d))
    raise InputError(f"the kernel catalog is missing: looked in {'; '.join(looked)}. Install warpspeed (pip install "
                     "-e .) or run it from a checkout that has kernels/ beside warpspeed/.")


def catalog() -> dict[str, Path]:
    """Catalog name -> shipped kernel TOML file."""
    return {p.stem: p for p in sorted(_catalog_dir().glob("*.toml"))}


def _index(offset: Sequence[int], ghost: int) -> list[str]:
    out = []
    for v, o in zip(VARS, offset, strict=False):
        k = ghost + o
        out.append(v if k == 0 else f"{v}{k:+d}".replace("+", " + ").replace("-", " - "))
    return out


def stencil_kernel(name: str, offsets: Sequence[Sequence[int]], *, dims: int, ghost: int, domain: Sequence[int],
                   element_bytes: int = 8, flops: Mapping[str, float] | None = None,
                   registers: int | None = None) -> Kernel:
    """A Jacobi-style stencil ``dst = f(src[offsets])`` on arrays padded by ``ghost`` cells per side."""
    shape = [f"{n} + {2 * ghost}" if ghost else n for n in ("nx", "ny", "nz")[:dims]]
    spec: dict[str, Any] = {
        "name": name, "precision": "fp64" if element_bytes == 8 else "fp32", "domain": list(domain)[:dims],
        "flops": dict(flops or {"add": max(len(offsets) - 1, 0), "mul": 1 if len(offsets) > 1 else 0}),
        "field": [
            {"name": "src", "element_bytes": element_bytes, "shape": shape,
             "loads": [_index(o, ghost) for o in offsets], "stores": []},
            {"name": "dst", "element_bytes": element_bytes, "shape": shape, "loads": [],
             "stores": [_index([0] * dims, ghost)]},
        ],
    }
    if registers is not None:
        spec["registers"] = registers
    return kernel_from_dict(spec, source=f"catalog:{name}")


def _check_params(r: int, dims: int, element_bytes: int) -> None:
    if isinstance(r, bool) or not isinstance(r, int) or r < 0 or r > 16:
        raise InputError(f"catalog stencil: r (the range) must be an integer in 0..16, got {r!r}.")
    if dims not in (1, 2, 3):
        raise InputError(f"catalog stencil: dims must be 1, 2 or 3, got {dims!r}.")
    if element_bytes not in (4, 8):
        raise InputError(f"catalog stencil: element_bytes must be 4 or 8, got {element_bytes!r}.")


DEFAULT_DOMAINS = {1: [1 << 24], 2: [4096, 4096], 3: [256, 256, 256]}
"""The generators' domains: 16-17 M cells in every dimensionality, enough to fill a GPU many times over (a
2-D 256x256 domain is over in microseconds: launch-bound, which the model leaves out)."""


def star(r: int = 1, dims: int = 3, element_bytes: int = 8, domain: Sequence[int] | None = None) -> Kernel:
    """A (2·dims·r + 1)-point star stencil of range r."""
    _check_params(r, dims, element_bytes)
    offsets = [[0] * dims]
    for axis, d, s in itertools.product(range(dims), range(1, r + 1), (-1, 1)):
        o = [0] * dims
        o[axis] = s * d
        offsets.append(o)
    return stencil_kernel(f"star{dims}d-r{r}", offsets, dims=dims, ghost=r, domain=domain or DEFAULT_DOMAINS[dims],
                          element_bytes=element_bytes)


def box(r: int = 1, dims: int = 3, element_bytes: int = 8, domain: Sequence[int] | None = None) -> Kernel:
    """A (2·r + 1)^dims-point box stencil of range r."""
    _check_params(r, dims, element_bytes)
    offsets = [list(o) for o in itertools.product(range(-r, r + 1), repeat=dims)]
    return stencil_kernel(f"box{dims}d-r{r}", offsets, dims=dims, ghost=r, domain=domain or DEFAULT_DOMAINS[dims],
                          element_bytes=element_bytes)


def star_accesses(r: int = 1, dims: int = 3, element_bytes: int = 8) -> int:
    """Loads and stores of :func:`star` with these parameters (checked as it checks them)."""
    _check_params(r, dims, element_bytes)
    return 2 * dims * r + 1 + 1


def box_accesses(r: int = 1, dims: int = 3, element_bytes: int = 8) -> int:
    """Loads and stores of :func:`box` with these parameters (checked as it checks them)."""
    _check_params(r, dims, element_bytes)
    return (2 * r + 1) ** dims + 1


def _file_entry(name: str, path: Path) -> CatalogEntry:
    first = path.read_text().splitlines()[0] if path.stat().st_size else ""
    desc = first[1:].strip() if first.startswith("#") else f"kernel file {path.name}"
    return CatalogEntry(name, desc, lambda domain=None: load_kernel(path, domain=domain))


def _plugin_entries() -> dict[str, CatalogEntry]:
    """Entries from plugins of the group ``warpspeed.plugins`` that offer ``catalog_entries()``."""
    out: dict[str, CatalogEntry] = {}
    for ep in metadata.entry_points(group="warpspeed.plugins"):
        try:
            module = ep.load()
            entries = getattr(module, "catalog_entries", None)
            offer = getattr(module, "front_end", None)
            front_end = offer() if callable(offer) else None
            if entries is not None:
                out.update({e.name: e if e.front_end is not None else replace(e, front_end=front_end)
                            for e in entries()})
        except Exception:  # a broken or absent optional plugin must not break the core catalog
            continue
    return out


def entries() -> dict[str, CatalogEntry]:
    """Every catalog entry by name: shipped files, generators, plugin kernels."""
    out = {n: _file_entry(n, p) for n, p in catalog().items()}
    out["star"] = CatalogEntry("star", "star stencil of range r in 1-3 dimensions (Jacobi, dst = f(src))", star,
                               {"r": 1, "dims": 3, "element_bytes": 8}, accesses=star_accesses)
    out["box"] = CatalogEntry("box", "box stencil of range r in 1-3 dimensions", box,
                              {"r": 1, "dims": 3, "element_bytes": 8}, accesses=box_accesses)
    for n, e in _plugin_entries().items():
        out.setdefault(n, e)
    return out


def _entry(name: str, params: Mapping[str, Any]) -> CatalogEntry:
    """The catalog entry ``name``, after checking that it takes ``params``."""
    known = entries()
    if name not in known:
        raise InputError(f"unknown kernel '{name}': not a file and not a catalog name; catalog: "
                         f"{', '.join(known)}.")
    e = known[name]
    bad = set(params) - set(e.params)
    if bad:
        valid = ", ".join(e.params) or "none (only --domain)"
        raise InputError(f"catalog kernel '{name}': unknown parameter(s) {sorted(bad)}; valid: {valid}.")
    return e


def accesses(name: str, **params: Any) -> int | None:
    """The loads and stores of catalog kernel ``name`` with ``params``, counted without building it, or None
    where its entry cannot count them before building (kernel files, plugin kernels: bounded by what they are)."""
    e = _entry(name, params)
    return None if e.accesses is None else e.accesses(**params)


def get(name: str, *, domain: Sequence[int] | None = None, **params: Any) -> Kernel:
    """The catalog kernel ``name`` built with ``params`` (see ``entries()[name].params``)."""
    e = _entry(name, params)
    try:
        k = e.build(**params) if params else e.build()
    except ModuleNotFoundError as err:  # a plugin kernel whose code generator is not installed
        module = (err.name or "?").partition(".")[0]
        from .frontends import plugin_front_ends

        fe = e.front_end or next((f for f in plugin_front_ends() if module in f.modules), None)
        hint = (install_hint(fe.extra) if fe is not None and fe.extra and module in fe.modules
                else f"install the Python module '{module}'")
        raise InputError(f"catalog kernel '{name}' is built by a code generator that is not installed (no module "
                         f"'{module}'); {hint}.") from None
    return k.with_domain(domain)


_NAME_PARAMS = re.compile(r"^([A-Za-z0-9_.-]+):(.*)$")


def parse_kernel_name(text: str) -> tuple[str, dict[str, Any]]:
    """``star:r=2,dims=2`` -> ("star", {"r": 2, "dims": 2}); values are integers or words."""
    m = _NAME_PARAMS.match(text)
    if not m:
        return text, {}
    params: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in m.group(2).split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier() or not re.fullmatch(r"-?\d+|[A-Za-z0-9_.-]+", value.strip()):
            raise InputError(f"kernel '{text}': parameter '{item}' is malformed; write NAME:KEY=VALUE,KEY=VALUE "
                             "with integer or word values.")
        v = value.strip()
        params[key.strip()] = int(v) if re.fullmatch(r"-?\d+", v) else v
    return m.group(1), params


def is_kernel_file(name_or_path: str) -> bool:
    """Whether :func:`find_kernel` reads ``name_or_path`` as a kernel TOML file (else as a catalog name)."""
    p = Path(name_or_path)
    return p.suffix == ".toml" or p.exists()


def find_program(name_or_path: str, *, domain: Sequence[int]) -> Any:
    """The native CUDA program of a catalog kernel (see ``CatalogEntry.program``), or None (files, generators)."""
    if is_kernel_file(name_or_path):
        return None
    name, params = parse_kernel_name(name_or_path)
    e = _entry(name, params)
    return None if e.program is None else e.program(domain=tuple(domain), **params)


def find_front_end(name_or_path: str) -> Any:
    """The :class:`warpspeed.frontends.FrontEnd` a kernel file or catalog name comes from."""
    from .file_frontend import kernel_files

    if is_kernel_file(name_or_path):
        return kernel_files()
    name, params = parse_kernel_name(name_or_path)
    fe = _entry(name, params).front_end
    return kernel_files() if fe is None else fe


def find_kernel(name_or_path: str, *, domain: Sequence[int] | None = None) -> Kernel:
    """A kernel TOML path, or a catalog name (optionally with parameters) such as ``star3d-r4``."""
    p = Path(name_or_path)
    if is_kernel_file(name_or_path):
        if not p.exists():
            raise InputError(f"kernel file '{p}' does not exist.")
        return load_kernel(p, domain=domain)
    name, params = parse_kernel_name(name_or_path)
    return get(name, domain=domain, **params)
