"""warpspeed: analytic GPU performance estimates for generated stencil kernels, without a GPU."""

from . import kernels
from ._version import __version__
from .device import Device, detected_device, device, device_for_gpu_name, device_ids
from .errors import InputError
from .kernel import Field, Kernel, kernel_from_dict, load_kernel
from .kernels import catalog, find_kernel
from .model.estimate import Estimate, KernelAnalysis, estimate, with_model
from .model.performance import DEFAULT_MODEL, MODELS, Performance, Workload
from .studies.ranking import Ranking, rank
from .studies.space import Configuration, block_shapes, paper_space

__all__ = ["__version__", "DEFAULT_MODEL", "MODELS",
           "Configuration", "Device", "Estimate", "Field", "InputError", "Kernel",
           "KernelAnalysis", "Performance", "Ranking", "Workload", "block_shapes", "catalog", "detected_device",
           "device", "device_for_gpu_name", "device_ids",
           "estimate", "find_kernel", "kernel_from_dict", "kernels", "load_kernel", "paper_space", "rank",
           "with_model"]
