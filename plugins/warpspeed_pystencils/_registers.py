"""Registers per thread from the real compiler: ``nvcc --resource-usage``, cached per source and architecture.

The cache is one small JSON file per (kernel source hash, arch) under ``$WARPSPEED_CACHE_DIR`` (default
``~/.cache/warpspeed``), in ``nvcc-registers/``. A cached count is used even where nvcc is absent (it came
from the compiler); ``find_nvcc`` is the hook tests replace (it honours ``$WARPSPEED_NVCC``, then ``PATH``).
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import warnings
from pathlib import Path

from ._cache import read_json, write_json

PRELUDE = "#include <cstdint>\n#define RESTRICT __restrict__\n"
NVCC_TIMEOUT_S = 120
_USED = re.compile(r"Used (\d+) registers")


def find_nvcc() -> str | None:
    """The nvcc executable: ``$WARPSPEED_NVCC`` if set (empty: none), else the one on ``PATH``."""
    env = os.environ.get("WARPSPEED_NVCC")
    if env is not None:
        return env or None
    return shutil.which("nvcc")


def _key(source: str, arch: str) -> str:
    digest = hashlib.sha256(f"{arch}\n{PRELUDE}{source}".encode()).hexdigest()[:24]
    return f"{digest}-{arch}"


def cached_registers(source: str, arch: str) -> int | None:
    data = read_json("nvcc-registers", _key(source, arch))
    n = data.get("registers") if isinstance(data, dict) else None
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def _store(source: str, arch: str, registers: int, nvcc: str) -> None:
    write_json("nvcc-registers", _key(source, arch), {"registers": registers, "arch": arch, "nvcc": nvcc})


def compile_registers(source: str, arch: str, nvcc: str) -> int | None:
    """Compile with nvcc and parse ``Used N registers``; None (with a warning) when that fails."""
    with tempfile.TemporaryDirectory(prefix="warpspeed-nvcc-") as d:
        cu = Path(d) / "kernel.cu"
        cu.write_text(PRELUDE + source)
        cmd = [nvcc, f"-arch={arch}", "--resource-usage", "-cubin", "-o", os.devnull, str(cu)]
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=NVCC_TIMEOUT_S, cwd=d)
        except (OSError, subprocess.SubprocessError) as e:
            warnings.warn(f"warpspeed_pystencils: running nvcc failed ({e}); registers per thread unknown.",
                          stacklevel=3)
            return None
    found = [int(n) for n in _USED.findall(run.stdout + run.stderr)]
    if run.returncode != 0 or not found:
        tail = (run.stderr or run.stdout).strip().splitlines()[-3:]
        warnings.warn(f"warpspeed_pystencils: nvcc -arch={arch} did not report registers (exit {run.returncode}"
                      f"{': ' + ' | '.join(tail) if tail else ''}); registers per thread unknown.", stacklevel=3)
        return None
    return max(found)


def registers_for(source: str, arch: str) -> tuple[int | None, str]:
    """(registers, where from): the cache, else nvcc (then cached), else (None, reason)."""
    n = cached_registers(source, arch)
    if n is not None:
        return n, f"nvcc {arch} (cached)"
    nvcc = find_nvcc()
    if nvcc is None:
        return None, "nvcc not found"
    n = compile_registers(source, arch, nvcc)
    if n is None:
        return None, f"nvcc {arch} failed"
    _store(source, arch, n, nvcc)
    return n, f"nvcc {arch}"
