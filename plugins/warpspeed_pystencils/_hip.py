"""HIP kernels (pystencils' ``Target.HIP``, for AMD GPUs): whether a config or kernel targets HIP, the devices such
a kernel is estimated on (AMD ones, whose 64-lane wavefronts the model takes from the device's ``warp_size``), the
architecture ROCm's compiler counts its registers for, and the config's warp size checked against the device.

pystencils 2.0 generates the same kernel code for HIP as for CUDA (only the runtime header differs) and knows no
default warp size for HIP (``GpuOptions.default_warp_size`` is None: RDNA GPUs run 32 lanes, CDNA 64), so its
launch configuration trims blocks to the iteration space without rounding them to wavefronts; the block chosen
here is what decides how full the wavefronts are.
"""

from __future__ import annotations

from typing import Any

from ._errors import input_error


def is_hip(obj: Any) -> bool:
    """Whether a pystencils kernel or ``CreateKernelConfig`` targets HIP (a config's ``Target.CurrentGPU`` is
    read as CUDA, as the plugin always has; None, no config: False)."""
    import pystencils as ps

    target = getattr(obj, "target", None) if not isinstance(obj, ps.CreateKernelConfig) else obj.get_option("target")
    return target == ps.Target.HIP


def amd_device_ids() -> list[str]:
    """The shipped AMD devices (read from their files: only for messages)."""
    import warpspeed

    return [i for i in warpspeed.device_ids() if warpspeed.device(i).vendor == "AMD"]


def _as_device(device: Any) -> Any:
    import warpspeed

    return device if isinstance(device, warpspeed.Device) else warpspeed.device(device)


def is_amd(device: Any) -> bool:
    """Whether a device (id, path or ``Device``) is an AMD one."""
    return _as_device(device).vendor == "AMD"


def check_device(device: Any, kernel_name: str = "") -> Any:
    """The ``Device`` of ``device`` where a HIP kernel may be estimated on it (an AMD device); an ``InputError``
    naming the shipped AMD devices otherwise: a HIP kernel estimated on an NVIDIA device would get 32-lane
    warps and NVIDIA's caches without a word."""
    dev = _as_device(device)
    if dev.vendor != "AMD":
        what = f"kernel '{kernel_name}'" if kernel_name else "the kernel"
        raise input_error(f"{what} is generated for HIP (Target.HIP), but the device {dev.id} is an {dev.vendor} "
                          f"GPU; estimate a HIP kernel on an AMD device ({', '.join(amd_device_ids())}, or a device "
                          f"file with vendor = \"AMD\"), or generate it with target=ps.Target.CUDA for {dev.id}.")
    return dev


def hip_arch(device: Any) -> str:
    """The LLVM target ROCm's compiler builds for on an AMD device (``--offload-arch``): its compute capability,
    e.g. ``gfx942``."""
    dev = _as_device(device)
    arch = str(dev.compute_capability or "").lower()
    if not arch.startswith("gfx"):
        raise input_error(f"device {dev.id}: compute_capability {dev.compute_capability!r} is no AMD architecture "
                          "name (gfx90a, gfx942, ...); ROCm's compiler needs one to count the registers of a HIP "
                          "kernel (or pass registers=N).")
    return arch


def check_warp_size(config: Any, device: Any) -> None:
    """An ``InputError`` where a HIP config's ``gpu.warp_size`` is not the device's wavefront size (pystencils uses
    it for warp-level reductions and for rounding blocks to whole warps; a wrong one breaks both)."""
    size = config.gpu.get_option("warp_size")
    dev = _as_device(device)
    if size is not None and int(size) != dev.warp_size:
        raise input_error(f"the config's gpu.warp_size is {size}, but {dev.id} runs {dev.warp_size}-lane wavefronts; "
                          f"set gpu.warp_size = {dev.warp_size} (or leave it unset) for a HIP kernel on {dev.id}.")


def gpu_platform_target() -> Any:
    """The pystencils target of the GPUs cupy runs on: ``Target.HIP`` where cupy is built for ROCm, else
    ``Target.CUDA`` (also where cupy is not installed: the kernel is then created, and fails only at compile)."""
    import pystencils as ps

    try:
        import cupy
    except ImportError:
        return ps.Target.CUDA
    return ps.Target.HIP if getattr(cupy.cuda.runtime, "is_hip", False) else ps.Target.CUDA


def default_target(device: Any) -> Any:
    """The target of ``create_kernel`` without a config: HIP for an AMD device, the platform cupy runs on for
    ``device="auto"`` at launch, CUDA otherwise."""
    import pystencils as ps

    if isinstance(device, str) and device == "auto":
        return gpu_platform_target()
    return ps.Target.HIP if is_amd(device) else ps.Target.CUDA


def detected(hip: bool) -> Any:
    """``warpspeed.detected_device()``; for a HIP kernel its errors name the AMD devices to pass instead."""
    from warpspeed import InputError, detected_device

    try:
        return detected_device(example="MI300X" if hip else "H100-SXM5-80GB")
    except InputError as e:
        if not hip:
            raise
        raise input_error(f"{e} This kernel targets HIP: the device is an AMD one (shipped: "
                          f"{', '.join(amd_device_ids())}).") from None
