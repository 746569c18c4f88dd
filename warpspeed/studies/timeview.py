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
from ..units import format_quantity, parse_quantity

__all__ = ["Link", "TimeView", "field_transfer_bytes", "link", "links", "time_view"]

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


def link(spec: str | float | Link) -> Link:
    """A link by id (``pcie4-x16``, ``pcie5-x16``, ``nvlink-c2c``, ...) or by bandwidth (``"24GB/s"``)."""
    if isinstance(spec, Link):
        return spec
    known = links()
    if isinstance(spec, str) and spec.strip().lower() in known:
        return known[spec.strip().lower()]
    try:
        bw = parse_quantity(spec, "bandwidth", key="--link")
    except InputError:
        raise InputError(f"--link: {spec!r} is neither a known link ({', '.join(known)}) nor a bandwidth per "
                         "direction such as 24GB/s.") from None
    if bw <= 0:
        raise InputError(f"--link: the bandwidth must be positive, got {spec!r}.")
    return Link("custom", f"{format_quantity(bw, 'bandwidth')} link", bw, "override: given by the user")


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


def time_view(kernel: Kernel, kernel_s: float, *, iterations: int = 1, link_spec: str | float | Link = DEFAULT_LINK,
              transfer_bytes: tuple[int, int] | None = None) -> TimeView:
    """Time of ``iterations`` sweeps of ``kernel_s`` each plus the copies (default: the kernel's fields)."""
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise InputError(f"--iterations must be a positive whole number, got {iterations!r}.")
    if not kernel_s >= 0 or not math.isfinite(kernel_s):
        raise InputError(f"the kernel time must be a finite non-negative number of seconds, got {kernel_s!r}.")
    in_b, out_b = field_transfer_bytes(kernel) if transfer_bytes is None else transfer_bytes
    return TimeView(kernel_s, iterations, int(in_b), int(out_b), link(link_spec))


def parse_transfer(text: str) -> tuple[int, int]:
    """``--transfer IN[,OUT]`` sizes (one value: the same both ways)."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) not in (1, 2):
        raise InputError(f"--transfer '{text}' is malformed: give IN or IN,OUT sizes such as 2GiB,1GiB.")
    sizes = [parse_quantity(p, "bytes", key="--transfer") for p in parts]
    return (sizes[0], sizes[-1])
