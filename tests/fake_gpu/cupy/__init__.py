"""A stand-in for cupy (tests only): numpy arrays, kernels that record their launches, 2 ms per launch.

Kernels with more than 64 K registers per block refuse to launch, as on a real GPU (every kernel has 90
registers per thread, or what the environment variable FAKE_CUPY_REGISTERS says); posing as ROCm (below), those
whose waves need more than a SIMD's 512 VGPRs. With the environment
variable FAKE_CUPY_LOG set, every launch appends its kernel name to that file (the fake ncu reads it).
The GPU calls itself "Fake GPU", or what the environment variable FAKE_CUPY_GPU_NAME says, and reports
FAKE_CUPY_SM_COUNT streaming multiprocessors where that is set. With FAKE_CUPY_HIP=1 it poses as cupy on ROCm, as
cupy's runtime module does there: ``cuda.runtime.is_hip`` is True and the device properties hold
``gcnArchName`` (FAKE_CUPY_GCN_ARCH, default ``gfx942:sramecc+:xnack-``, an MI300X's); the name is then
"AMD Instinct MI300X" unless FAKE_CUPY_GPU_NAME says another. Arrays made here (``zeros``, ``full``,
``asarray``) are ``ndarray``: numpy arrays that live on device 0, as far as pystencils' cupy JIT can tell.
"""

import os

import numpy as np

__version__ = "0+fake"
float64, float32 = np.float64, np.float32
REGISTERS = int(os.environ.get("FAKE_CUPY_REGISTERS", "90"))  # per thread, every kernel
launches = []


class _DeviceId:
    id = 0


class ndarray(np.ndarray):  # noqa: N801 - the name cupy uses
    @property
    def device(self):
        return _DeviceId()


def asarray(a, dtype=None, order=None):
    return np.asarray(a, dtype=dtype, order=order).view(ndarray)


def zeros(shape, dtype=np.float64, order="C"):
    return np.zeros(shape, dtype=dtype, order=order).view(ndarray)


def full(n, value, dtype):
    return np.full(n, value, dtype=dtype).view(ndarray)


class RawKernel:
    def __init__(self, source, name, options=(), backend="nvrtc"):
        if f" {name}(" not in source and f" {name} (" not in source:
            raise ValueError(f"kernel {name} is not defined in the source")
        self.name, self.num_regs, self.options = name, REGISTERS, options

    def __call__(self, grid, block, args):
        threads = int(np.prod(block))
        if _hip():  # a CDNA CU: the block's 64-lane waves over 4 SIMDs of 512 VGPRs, allocated in granules of 8
            if -(-threads // 256) * (-(-self.num_regs // 8) * 8) > 512:
                raise RuntimeError("hipErrorLaunchOutOfResources: too many resources requested")
        elif threads * self.num_regs > 65536:
            raise RuntimeError("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES: too many resources requested")
        launches.append((self.name, grid, block, args))
        log = os.environ.get("FAKE_CUPY_LOG")
        if log:
            with open(log, "a") as fh:
                fh.write(self.name + "\n")


class _Event:
    def record(self):
        pass

    def synchronize(self):
        pass


def _hip():
    return os.environ.get("FAKE_CUPY_HIP") == "1"


class _Runtime:
    @property
    def is_hip(self):  # read when asked: a test sets FAKE_CUPY_HIP after importing this module
        return _hip()

    @staticmethod
    def getDeviceCount():
        return 1

    @staticmethod
    def getDevice():
        return 0

    @staticmethod
    def getDeviceProperties(i):
        default = "AMD Instinct MI300X" if _hip() else "Fake GPU"
        props = {"name": os.environ.get("FAKE_CUPY_GPU_NAME", default).encode()}
        if _hip():
            props["gcnArchName"] = os.environ.get("FAKE_CUPY_GCN_ARCH", "gfx942:sramecc+:xnack-").encode()
        if os.environ.get("FAKE_CUPY_SM_COUNT"):
            props["multiProcessorCount"] = int(os.environ["FAKE_CUPY_SM_COUNT"])
        return props

    @staticmethod
    def driverGetVersion():
        return 13000


class _Device:
    def __init__(self, index=0):
        self.id = index

    def synchronize(self):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class cuda:  # noqa: N801 - the attribute name cupy uses
    Event = _Event
    Device = _Device
    runtime = _Runtime()

    @staticmethod
    def get_elapsed_time(a, b):
        return 2.0
