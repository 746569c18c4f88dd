"""Performance models: from what one launch moves (volumes, L1 cycles, occupancy) to GLup/s and a limiter.

Every model takes the same :class:`Workload`, the analysed launch that the model stages produce, and a
device, and returns a :class:`Performance`: the predicted GLup/s, the binding limit, each limit in GLup/s
and the reasons in the user's terms. Models are chosen by name (:data:`MODELS`, ``--model``):

- ``roofline``: Ernst et al.'s four-limiter roofline, the smallest of the FP, L1, L2 and DRAM limits
  (:mod:`warpspeed.model.roofline`). It assumes every level runs at its bandwidth.
- ``latency``: the same FP, L1 and L2 limits; a DRAM limit that also pays for short contiguous runs; and a
  memory-parallelism limit from Little's law (:mod:`warpspeed.model.latency`). The times per lup of these five
  combine as a 4-norm rather than a maximum, because neighbouring limits do not overlap perfectly.
"""

from __future__ import annotations

from ..device import Device
from ..errors import InputError
from .latency import LatencyModel
from .roofline import bottleneck
from .workload import Performance, PerformanceModel, Workload

DEFAULT_MODEL = "latency"


class RooflineModel:
    """The paper's model: performance = the smallest of the four limits."""

    name = "roofline"

    def predict(self, workload: Workload, device: Device) -> Performance:
        lim = workload.roofline_GLup_s(device)
        name, perf = bottleneck(lim)
        return Performance(self.name, perf, name, lim)


MODELS = ("roofline", "latency")
"""Names of the shipped performance models (:func:`models` maps them to the model objects)."""


def models() -> dict[str, PerformanceModel]:
    """Every shipped model by name."""
    return {m.name: m for m in (RooflineModel(), LatencyModel())}


def performance_model(model: str | PerformanceModel | None) -> PerformanceModel:
    """A model by name (``None``: :data:`DEFAULT_MODEL`), or the given model object."""
    if model is None:
        model = DEFAULT_MODEL
    if not isinstance(model, str):
        if not callable(getattr(model, "predict", None)) or not isinstance(getattr(model, "name", None), str):
            raise InputError(f"a performance model is one of {', '.join(MODELS)} or an object with a 'name' "
                             f"and a 'predict(workload, device)' method, got {model!r}.")
        return model
    found = models().get(model.strip().lower())
    if found is None:
        raise InputError(f"unknown performance model {model!r}; valid: {', '.join(MODELS)} (default "
                         f"{DEFAULT_MODEL}).")
    return found


__all__ = ["DEFAULT_MODEL", "MODELS", "Performance", "PerformanceModel", "RooflineModel", "Workload",
           "models", "performance_model"]
