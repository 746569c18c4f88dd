"""warpspeed: analytic GPU performance estimates for generated stencil kernels, without a GPU.

The functions of this face (``estimate``, ``rank``, ``compare``, ``rank_devices``, ``with_model``) are the
application layer's (:mod:`warpspeed.application`): they take kernels and devices by name, file or object and
resolve them for the model and the studies, which take objects only.

The names below are loaded on first use (``warpspeed.rank`` imports the ranking when it is first asked for),
so that ``import warpspeed`` stays cheap for a caller that needs only a little of it, such as a plugin
reading its cache. ``device`` is bound at once: it is also the name of the ``warpspeed.device`` subpackage,
which must not shadow the function.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from ._version import __version__
from .device import device
from .errors import InputError

_HOMES = {
    "Device": ".device", "detected_device": ".device", "device_for_gpu_name": ".device", "device_ids": ".device",
    "Field": ".kernel", "Kernel": ".kernel", "kernel_from_dict": ".kernel", "load_kernel": ".kernel",
    "catalog": ".kernels", "find_kernel": ".kernels",
    "Estimate": ".model.estimate", "KernelAnalysis": ".model.estimate", "estimate": ".application.estimating",
    "with_model": ".application.estimating",
    "DEFAULT_MODEL": ".model.performance", "MODELS": ".model.performance", "Performance": ".model.performance",
    "Workload": ".model.performance",
    "Ranking": ".studies.ranking", "rank": ".application.ranking",
    "Candidate": ".studies.comparison", "Comparison": ".studies.comparison", "compare": ".application.comparison",
    "DeviceRanking": ".studies.device_ranking", "rank_devices": ".application.device_ranking",
    "Configuration": ".studies.space", "block_shapes": ".studies.space", "paper_space": ".studies.space",
}

__all__ = ["__version__", "DEFAULT_MODEL", "MODELS",
           "Candidate", "Comparison", "Configuration", "Device", "DeviceRanking", "Estimate", "Field", "InputError",
           "Kernel", "KernelAnalysis", "Performance", "Ranking", "Workload", "block_shapes", "catalog", "compare",
           "detected_device", "device", "device_for_gpu_name", "device_ids",
           "estimate", "find_kernel", "kernel_from_dict", "kernels", "load_kernel", "paper_space", "rank",
           "rank_devices", "with_model"]


def __getattr__(name: str):
    if name == "kernels":
        return importlib.import_module(".kernels", __name__)
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'warpspeed' has no attribute {name!r}")
    value = getattr(importlib.import_module(home, __name__), name)
    globals()[name] = value  # the next access finds it directly
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


if TYPE_CHECKING:  # what checkers and editors see: the same names, imported eagerly
    from . import kernels
    from .application.comparison import compare
    from .application.device_ranking import rank_devices
    from .application.estimating import estimate, with_model
    from .application.ranking import rank
    from .device import Device, detected_device, device_for_gpu_name, device_ids
    from .kernel import Field, Kernel, kernel_from_dict, load_kernel
    from .kernels import catalog, find_kernel
    from .model.estimate import Estimate, KernelAnalysis
    from .model.performance import DEFAULT_MODEL, MODELS, Performance, Workload
    from .studies.comparison import Candidate, Comparison
    from .studies.device_ranking import DeviceRanking
    from .studies.ranking import Ranking
    from .studies.space import Configuration, block_shapes, paper_space
