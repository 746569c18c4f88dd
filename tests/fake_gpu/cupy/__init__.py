"""A stand-in for cupy (tests only): numpy arrays, kernels that record their launches, 2 ms per launch.

Kernels with more than 64 K registers per block refuse to launch, as on a real GPU. With the environment
variable FAKE_CUPY_LOG set, every launch appends its kernel name to that file (the fake ncu reads it).
"""

import os

import numpy as np

__version__ = "0+fake"
float64, float32 = np.float64, np.float32
REGISTERS = 90
launches = []


def full(n, value, dtype):
    return np.full(n, value, dtype=dtype)


class RawKernel:
    def __init__(self, source, name, options=()):
        if f" {name}(" not in source and f" {name} (" not in source:
            raise ValueError(f"kernel {name} is not defined in the source")
        self.name, self.num_regs, self.options = name, REGISTERS, options

    def __call__(self, grid, block, args):
        if int(np.prod(block)) * self.num_regs > 65536:
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


class _Runtime:
    @staticmethod
    def getDeviceCount():
        return 1

    @staticmethod
    def getDeviceProperties(i):
        return {"name": b"Fake GPU"}

    @staticmethod
    def driverGetVersion():
        return 13000


class cuda:  # noqa: N801 - the attribute name cupy uses
    Event = _Event
    runtime = _Runtime

    @staticmethod
    def get_elapsed_time(a, b):
        return 2.0
