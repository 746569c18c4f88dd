"""warpspeed: analytic GPU performance estimates for generated stencil kernels, without a GPU."""

__version__ = "0.1.0"

from . import kernels  # noqa: E402
from .device import Device, device, device_ids  # noqa: E402
from .errors import InputError  # noqa: E402
from .estimate import Estimate, KernelAnalysis, estimate, with_model  # noqa: E402
from .kernel import Field, Kernel, kernel_from_dict, load_kernel  # noqa: E402
from .kernels import catalog, find_kernel  # noqa: E402
from .performance import DEFAULT_MODEL, MODELS, Performance, Workload  # noqa: E402
from .ranking import Ranking, rank  # noqa: E402
from .space import Configuration, block_shapes, paper_space  # noqa: E402

__all__ = ["DEFAULT_MODEL", "MODELS", "Configuration", "Device", "Estimate", "Field", "InputError", "Kernel",
           "KernelAnalysis", "Performance", "Ranking", "Workload", "block_shapes", "catalog", "device", "device_ids",
           "estimate", "find_kernel", "kernel_from_dict", "kernels", "load_kernel", "paper_space", "rank",
           "with_model"]
