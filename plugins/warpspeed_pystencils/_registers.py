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
import signal
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


class _Compilation:
    """nvcc compiling one kernel in the background (a separate process: the caller goes on meanwhile)."""

    def __init__(self, source: str, arch: str, nvcc: str):
        self.arch = arch
        self.error: Exception | None = None
        self._proc: subprocess.Popen | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="warpspeed-nvcc-")
        try:
            cu = Path(self._dir.name) / "kernel.cu"
            cu.write_text(PRELUDE + source)
            cmd = [nvcc, f"-arch={arch}", "--resource-usage", "-cubin", "-o", os.devnull, str(cu)]
            # a session of its own: stopping it stops the compiler stages nvcc runs (cicc, ptxas) too
            self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                          cwd=self._dir.name, start_new_session=True)
        except OSError as e:
            self.error = e

    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def _kill(self) -> None:
        """Kill nvcc with the compiler stages it started (its session) and collect it."""
        if self._proc.poll() is None:
            try:
                os.killpg(self._proc.pid, signal.SIGKILL)
            except OSError:  # gone meanwhile
                pass
        self._proc.communicate()

    def stop(self) -> None:
        if self._proc is not None:
            self._kill()
        self._dir.cleanup()

    def registers(self) -> int | None:
        """Wait for nvcc and parse ``Used N registers``; None (with a warning) when that fails."""
        try:
            if self._proc is None:
                warnings.warn(f"warpspeed_pystencils: running nvcc failed ({self.error}); registers per thread "
                              "unknown.", stacklevel=4)
                return None
            try:
                out, err = self._proc.communicate(timeout=NVCC_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._kill()
                warnings.warn(f"warpspeed_pystencils: nvcc took over {NVCC_TIMEOUT_S} s; registers per thread "
                              "unknown.", stacklevel=4)
                return None
        finally:
            self._dir.cleanup()
        found = [int(n) for n in _USED.findall(out + err)]
        if self._proc.returncode != 0 or not found:
            tail = (err or out).strip().splitlines()[-3:]
            warnings.warn(f"warpspeed_pystencils: nvcc -arch={self.arch} did not report registers (exit "
                          f"{self._proc.returncode}{': ' + ' | '.join(tail) if tail else ''}); registers per thread "
                          "unknown.", stacklevel=4)
            return None
        return max(found)


class RegisterCount:
    """The registers per thread of a kernel source, as :func:`registers_for` gives them, begun at once: from the
    cache, or from nvcc started in the background, so that describing the kernel overlaps the compiler."""

    def __init__(self, source: str, arch: str):
        self.source, self.arch = source, arch
        self._compilation: _Compilation | None = None
        self._nvcc = None
        n = cached_registers(source, arch)
        self._result: tuple[int | None, str] | None = (n, f"nvcc {arch} (cached)") if n is not None else None
        if self._result is None:
            self._nvcc = find_nvcc()
            if self._nvcc is None:
                self._result = (None, "nvcc not found")
            else:
                self._compilation = _Compilation(source, arch, self._nvcc)

    def cancel(self) -> None:
        """Stop nvcc where it still runs (the kernel turned out not to be needed)."""
        if self._compilation is not None and self._result is None:
            self._compilation.stop()
            self._result = (None, "nvcc stopped")

    def running(self) -> bool:
        """Whether nvcc still runs (``result`` would wait)."""
        return self._result is None and self._compilation is not None and self._compilation.running()

    def result(self) -> tuple[int | None, str]:
        """(registers, where from): waits for nvcc where it runs (then caches its count)."""
        if self._result is None:
            n = self._compilation.registers()
            if n is None:
                self._result = (None, f"nvcc {self.arch} failed")
            else:
                _store(self.source, self.arch, n, self._nvcc)
                self._result = (n, f"nvcc {self.arch}")
        return self._result


def registers_for(source: str, arch: str) -> tuple[int | None, str]:
    """(registers, where from): the cache, else nvcc (then cached), else (None, reason)."""
    return RegisterCount(source, arch).result()
