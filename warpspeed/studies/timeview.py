"""Time view (Nugteren & Corporaal, boat hull model): whole-run time with host <-> device transfers.

Users decide whether a GPU is worth it end to end, not per lattice update: the run time is
``iterations x (domain lups / performance)`` plus the copy-in of every field the kernel reads and the
copy-out of every field it writes, each over the host link at its bandwidth per direction:

    total_s = iterations * kernel_s + (in_bytes + out_bytes) / link bandwidth

Transfers and kernels are assumed not to overlap (one copy in, N sweeps, one copy out).
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass
from functools import cache
from importlib import resources

from ..errors import InputError
from ..kernel import Kernel
from ..units import parse_quantity

__all__ = ["DEFAULT_LINK", "Link", "TimeView", "field_transfer_bytes", "links", "time_view"]

DEFAULT_LINK = "pcie4-x16"


@dataclass(frozen=True)
class Link:
    """A host <-> device link; ``bandwidth_GB_s`` is per direction."""

    id: str
    name: str
    bandwidth_GB_s: float
    source: str

    def to_dict(self) -> dict:
        return {"id": self.id, "name": self.name, "bandwidth_GB_s": self.bandwidth_GB_s, "source": self.source}


@cache
def links() -> dict[str, Link]:
    """The shipped links (``warpspeed/devices/links.toml``) by id."""
    doc = tomllib.loads(resources.files("warpspeed.devices").joinpath("links.toml").read_text())
    return {k: Link(k, v["name"], parse_quantity(v["bandwidth"], "bandwidth", key=f"links.{k}.bandwidth"),
                    v["source"])
            for k, v in doc.items() if isinstance(v, dict)}


def field_transfer_bytes(kernel: Kernel) -> tuple[int, int]:
    """Bytes copied in (fields the kernel loads) and out (fields it stores), whole allocations."""
    def size(f) -> int:
        return math.prod(f.shape) * f.element_bytes
    return (sum(size(f) for f in kernel.fields if f.loads), sum(size(f) for f in kernel.fields if f.stores))


@dataclass(frozen=True)
class TimeView:
    kernel_s: float  # one sweep over the domain
    iterations: int
    in_bytes: int
    out_bytes: int
    link: Link

    @property
    def compute_s(self) -> float:
        return self.iterations * self.kernel_s

    @property
    def transfer_s(self) -> float:
        return (self.in_bytes + self.out_bytes) / (self.link.bandwidth_GB_s * 1e9)

    @property
    def total_s(self) -> float:
        return self.compute_s + self.transfer_s

    @property
    def transfer_fraction(self) -> float:
        return self.transfer_s / self.total_s if self.total_s > 0 else 0.0

    def to_dict(self) -> dict:
        return {"iterations": self.iterations, "kernel_s": self.kernel_s, "compute_s": self.compute_s,
                "transfer_in_bytes": self.in_bytes, "transfer_out_bytes": self.out_bytes,
                "link": self.link.to_dict(), "transfer_s": self.transfer_s, "total_s": self.total_s,
                "transfer_fraction": self.transfer_fraction}

    def summary(self) -> str:
        return (f"{self.iterations} iteration{'s' if self.iterations != 1 else ''}: {self.compute_s:.4g} s on the GPU"
                f" + {self.transfer_s:.4g} s copying {self.in_bytes / 1e9:.4g} GB in and "
                f"{self.out_bytes / 1e9:.4g} GB out over {self.link.name} = {self.total_s:.4g} s "
                f"({100 * self.transfer_fraction:.1f} % transfer)")


def time_view(kernel: Kernel, kernel_s: float, *, iterations: int = 1, host_link: Link | None = None,
              transfer_bytes: tuple[int, int] | None = None) -> TimeView:
    """Time of ``iterations`` sweeps of ``kernel_s`` each plus the copies (default: the kernel's fields) over
    ``host_link`` (default: :data:`DEFAULT_LINK`; a link named or given by bandwidth is read by
    :func:`warpspeed.application.timeview.link`)."""
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise InputError(f"iterations must be a positive whole number, got {iterations!r}.")
    if not kernel_s >= 0 or not math.isfinite(kernel_s):
        raise InputError(f"the kernel time must be a finite non-negative number of seconds, got {kernel_s!r}.")
    in_b, out_b = field_transfer_bytes(kernel) if transfer_bytes is None else transfer_bytes
    return TimeView(kernel_s, iterations, int(in_b), int(out_b), links()[DEFAULT_LINK] if host_link is None
                    else host_link)
