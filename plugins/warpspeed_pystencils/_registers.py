"""Registers per thread from the real compiler, cached per source and architecture: ``nvcc --resource-usage`` for
CUDA (``arch`` ``sm_80``...), ROCm's ``hipcc`` (or ``amdclang++``) with ``-Rpass-analysis=kernel-resource-usage``
for HIP (``arch`` ``gfx942``...: the code object's VGPRs, plus its AGPRs where it uses any).

The cache is one small JSON file per (kernel source hash, arch) under ``$WARPSPEED_CACHE_DIR`` (default
``~/.cache/warpspeed``), in ``nvcc-registers/``. A cached count is used even where the compiler is absent (it
came from the compiler); ``find_nvcc`` and ``find_hipcc`` are the hooks tests replace (they honour
``$WARPSPEED_NVCC`` / ``$WARPSPEED_HIPCC``, then ``PATH``).
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
HIP_PRELUDE = "#include <hip/hip_runtime.h>\n" + PRELUDE
NVCC_TIMEOUT_S = 120
_USED = re.compile(r"Used (\d+) registers")
#: The AMDGPU backend's resource-usage remarks (``remark: ...:     VGPRs: 24``; LLVM's
#: test/CodeGen/AMDGPU/resource-usage-remarks.ll): the architected VGPRs and the accumulation VGPRs per lane.
_VGPRS = re.compile(r"\bVGPRs: (\d+)")
_AGPRS = re.compile(r"\bAGPRs: (\d+)")


def is_hip_arch(arch: str) -> bool:
    """Whether ``arch`` is an AMD target (``gfx942``): ROCm's compiler counts its registers."""
    return arch.lower().startswith("gfx")


def find_nvcc() -> str | None:
    """The nvcc executable: ``$WARPSPEED_NVCC`` if set (empty: none), else the one on ``PATH``."""
    env = os.environ.get("WARPSPEED_NVCC")
    if env is not None:
        return env or None
    return shutil.which("nvcc")


def find_hipcc() -> str | None:
    """ROCm's compiler: ``$WARPSPEED_HIPCC`` if set (empty: none), else ``hipcc`` or ``amdclang++`` on ``PATH``, else
    ``$ROCM_PATH/bin/hipcc`` where that exists."""
    env = os.environ.get("WARPSPEED_HIPCC")
    if env is not None:
        return env or None
    found = shutil.which("hipcc") or shutil.which("amdclang++")
    if found is None and os.environ.get("ROCM_PATH"):
        candidate = Path(os.environ["ROCM_PATH"]) / "bin" / "hipcc"
        found = str(candidate) if candidate.is_file() else None
    return found


def find_compiler(arch: str) -> str | None:
    """The compiler that counts the registers for ``arch``: hipcc for an AMD target, else nvcc."""
    return find_hipcc() if is_hip_arch(arch) else find_nvcc()


def compiler_name(arch: str) -> str:
    return "hipcc" if is_hip_arch(arch) else "nvcc"


def _prelude(arch: str) -> str:
    return HIP_PRELUDE if is_hip_arch(arch) else PRELUDE


def _key(source: str, arch: str) -> str:
    digest = hashlib.sha256(f"{arch}\n{_prelude(arch)}{source}".encode()).hexdigest()[:24]
    return f"{digest}-{arch}"


def cached_registers(source: str, arch: str) -> int | None:
    data = read_json("nvcc-registers", _key(source, arch))
    n = data.get("registers") if isinstance(data, dict) else None
    return n if isinstance(n, int) and not isinstance(n, bool) and n > 0 else None


def _store(source: str, arch: str, registers: int, nvcc: str) -> None:
    write_json("nvcc-registers", _key(source, arch), {"registers": registers, "arch": arch, "nvcc": nvcc})


def _command(compiler: str, arch: str, path: Path) -> list[str]:
    """The compiler's command line that reports the registers of the kernel in ``path``: nvcc's resource usage, or
    for HIP the device code alone (``--offload-device-only``, optimized as cupy's hiprtc compiles it) with the
    AMDGPU backend's resource-usage remarks."""
    if is_hip_arch(arch):
        return [compiler, "-x", "hip", f"--offload-arch={arch}", "--offload-device-only", "-O3", "-c",
                "-Rpass-analysis=kernel-resource-usage", "-o", os.devnull, str(path)]
    return [compiler, f"-arch={arch}", "--resource-usage", "-cubin", "-o", os.devnull, str(path)]


def parsed_registers(arch: str, output: str) -> int | None:
    """Registers per thread in a compiler's output: nvcc's largest ``Used N registers``; for HIP the largest
    VGPR count of the resource-usage remarks, with the AGPRs added where the kernel uses any (gfx90a and gfx942
    allocate both from one file, the VGPRs rounded up to 4 first: LLVM's ``getTotalNumVGPRs``). None where
    the output reports none."""
    if not is_hip_arch(arch):
        found = [int(n) for n in _USED.findall(output)]
        return max(found) if found else None
    vgprs = [int(n) for n in _VGPRS.findall(output)]
    if not vgprs:
        return None
    agprs = max((int(n) for n in _AGPRS.findall(output)), default=0)
    return max(vgprs) if agprs == 0 else -(-max(vgprs) // 4) * 4 + agprs


class _Compilation:
    """The compiler (nvcc, or hipcc for an AMD ``arch``) compiling one kernel in the background (a separate
    process: the caller goes on meanwhile)."""

    def __init__(self, source: str, arch: str, nvcc: str):
        self.arch = arch
        self.name = compiler_name(arch)
        self.error: Exception | None = None
        self._proc: subprocess.Popen | None = None
        self._dir = tempfile.TemporaryDirectory(prefix=f"warpspeed-{self.name}-")
        try:
            cu = Path(self._dir.name) / ("kernel.hip" if is_hip_arch(arch) else "kernel.cu")
            cu.write_text(_prelude(arch) + source)
            cmd = _command(nvcc, arch, cu)
            # a session of its own: stopping it stops the compiler stages nvcc runs (cicc, ptxas) too
            # hipcc compiles for NVIDIA GPUs through nvcc where nvcc is on the machine, unless told AMD
            env = {**os.environ, "HIP_PLATFORM": "amd"} if is_hip_arch(arch) else None
            self._proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                          cwd=self._dir.name, start_new_session=True, env=env)
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
        """Wait for the compiler and parse its register count (:func:`parsed_registers`); None (with a warning)
        when that fails."""
        try:
            if self._proc is None:
                warnings.warn(f"warpspeed_pystencils: running {self.name} failed ({self.error}); registers per "
                              "thread unknown.", stacklevel=4)
                return None
            try:
                out, err = self._proc.communicate(timeout=NVCC_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._kill()
                warnings.warn(f"warpspeed_pystencils: {self.name} took over {NVCC_TIMEOUT_S} s; registers per "
                              "thread unknown.", stacklevel=4)
                return None
        finally:
            self._dir.cleanup()
        found = parsed_registers(self.arch, out + err)
        if self._proc.returncode != 0 or found is None:
            tail = (err or out).strip().splitlines()[-3:]
            flag = f"--offload-arch={self.arch}" if is_hip_arch(self.arch) else f"-arch={self.arch}"
            warnings.warn(f"warpspeed_pystencils: {self.name} {flag} did not report registers (exit "
                          f"{self._proc.returncode}{': ' + ' | '.join(tail) if tail else ''}); registers per thread "
                          "unknown.", stacklevel=4)
            return None
        return found


class RegisterCount:
    """The registers per thread of a kernel source, as :func:`registers_for` gives them, begun at once: from the
    cache, or from the compiler (nvcc; hipcc for an AMD ``arch``) started in the background, so that describing
    the kernel overlaps the compiler."""

    def __init__(self, source: str, arch: str):
        self.source, self.arch = source, arch
        self._compilation: _Compilation | None = None
        self._nvcc = None
        name = compiler_name(arch)
        n = cached_registers(source, arch)
        self._result: tuple[int | None, str] | None = (n, f"{name} {arch} (cached)") if n is not None else None
        if self._result is None:
            self._nvcc = find_compiler(arch)
            if self._nvcc is None:
                self._result = (None, f"{name} not found")
            else:
                self._compilation = _Compilation(source, arch, self._nvcc)

    def cancel(self) -> None:
        """Stop the compiler where it still runs (the kernel turned out not to be needed)."""
        if self._compilation is not None and self._result is None:
            self._compilation.stop()
            self._result = (None, f"{compiler_name(self.arch)} stopped")

    def running(self) -> bool:
        """Whether nvcc still runs (``result`` would wait)."""
        return self._result is None and self._compilation is not None and self._compilation.running()

    def result(self) -> tuple[int | None, str]:
        """(registers, where from): waits for nvcc where it runs (then caches its count)."""
        if self._result is None:
            n = self._compilation.registers()
            name = compiler_name(self.arch)
            if n is None:
                self._result = (None, f"{name} {self.arch} failed")
            else:
                _store(self.source, self.arch, n, self._nvcc)
                self._result = (n, f"{name} {self.arch}")
        return self._result


def registers_for(source: str, arch: str) -> tuple[int | None, str]:
    """(registers, where from): the cache, else nvcc (then cached), else (None, reason)."""
    return RegisterCount(source, arch).result()
