"""The kernel catalog: ready kernel descriptions shipped in ``kernels/`` (installed as package data)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from .errors import InputError
from .kernel import Kernel, load_kernel


def _catalog_dir() -> Path:
    return Path(str(resources.files("warpspeed._catalog")))


def catalog() -> dict[str, Path]:
    """Catalog name -> kernel TOML file."""
    return {p.stem: p for p in sorted(_catalog_dir().glob("*.toml"))}


def find_kernel(name_or_path: str, *, domain=None) -> Kernel:
    """A kernel TOML path, or a catalog name such as ``star3d-r4``."""
    p = Path(name_or_path)
    if p.suffix == ".toml" or p.exists():
        if not p.exists():
            raise InputError(f"kernel file '{p}' does not exist.")
        return load_kernel(p, domain=domain)
    known = catalog()
    if name_or_path not in known:
        raise InputError(f"unknown kernel '{name_or_path}': not a file and not a catalog name; "
                         f"catalog: {', '.join(known) or '(empty)'}.")
    return load_kernel(known[name_or_path], domain=domain)
