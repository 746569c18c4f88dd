"""A small on-disk JSON cache shared across runs: compiler register counts, built catalog kernels, rankings.

Everything lives under ``$WARPSPEED_CACHE_DIR`` (default ``~/.cache/warpspeed``), one JSON file per key in a
folder per kind. Keys are hashes of the content that determines the value (kernel source, options, the
versions of pystencils, lbmpy and this plugin's code), so a stale entry is never found again, only left
behind. A cache that cannot be read or written costs recomputation, never an error.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any


def cache_dir() -> Path:
    base = os.environ.get("WARPSPEED_CACHE_DIR")
    return Path(base) if base else Path.home() / ".cache" / "warpspeed"


def content_key(*parts: Any) -> str:
    """Stable 24-hex-digit hash of JSON-able parts."""
    text = json.dumps(parts, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


@functools.lru_cache(maxsize=1)
def code_version() -> str:
    """What the cached analyses depend on: this plugin's source, warpspeed, pystencils and lbmpy versions."""
    from importlib.metadata import PackageNotFoundError, version

    import warpspeed

    here = Path(__file__).parent
    digest = hashlib.sha256()
    for f in sorted(here.glob("*.py")):
        digest.update(f.name.encode() + f.read_bytes())
    versions = [warpspeed.__version__]
    for pkg in ("pystencils", "lbmpy"):
        try:
            versions.append(f"{pkg} {version(pkg)}")
        except PackageNotFoundError:
            versions.append(f"{pkg} absent")
    return f"{digest.hexdigest()[:16]} {' '.join(versions)}"


@functools.lru_cache(maxsize=1)
def model_version() -> str:
    """A hash of warpspeed's own code and device data: rankings cached under it die with any model change."""
    import warpspeed

    root = Path(warpspeed.__file__).parent
    digest = hashlib.sha256(warpspeed.__version__.encode())
    for f in sorted([*root.rglob("*.py"), *root.rglob("*.toml")]):
        digest.update(str(f.relative_to(root)).encode() + f.read_bytes())
    return digest.hexdigest()[:16]


def path_for(kind: str, key: str, suffix: str = ".json") -> Path:
    return cache_dir() / kind / f"{key}{suffix}"


def read_json(kind: str, key: str) -> Any | None:
    """The cached value, or None when absent or unreadable."""
    try:
        return json.loads(path_for(kind, key).read_text())
    except (OSError, ValueError):
        return None


def write_json(kind: str, key: str, value: Any) -> None:
    """Store a value atomically (a reader never sees half a file); failures are ignored."""
    path = path_for(kind, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(value, f)
        os.replace(tmp, path)
    except OSError:
        pass
