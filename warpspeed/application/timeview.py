"""The time view as the command line asks for it: a host link by id or bandwidth (``--link``), the sizes
copied (``--transfer IN[,OUT]``) and the sweeps (``--iterations``), read into typed values for
:func:`warpspeed.studies.timeview.time_view`."""

from __future__ import annotations

from ..errors import InputError
from ..kernel import Kernel
from ..studies import timeview as _timeview
from ..studies.timeview import DEFAULT_LINK, Link, TimeView, links
from ..units import format_quantity, parse_quantity


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


def time_view(kernel: Kernel, kernel_s: float, *, iterations: int = 1, link_spec: str | float | Link = DEFAULT_LINK,
              transfer_bytes: tuple[int, int] | None = None) -> TimeView:
    """Time of ``iterations`` sweeps of ``kernel_s`` each plus the copies (default: the kernel's fields) over the
    link ``link_spec`` names (:func:`link`)."""
    if isinstance(iterations, bool) or not isinstance(iterations, int) or iterations < 1:
        raise InputError(f"--iterations must be a positive whole number, got {iterations!r}.")
    return _timeview.time_view(kernel, kernel_s, iterations=iterations, host_link=link(link_spec),
                               transfer_bytes=transfer_bytes)


def parse_transfer(text: str) -> tuple[int, int]:
    """``--transfer IN[,OUT]`` sizes (one value: the same both ways)."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) not in (1, 2):
        raise InputError(f"--transfer '{text}' is malformed: give IN or IN,OUT sizes such as 2GiB,1GiB.")
    sizes = [parse_quantity(p, "bytes", key="--transfer") for p in parts]
    return (sizes[0], sizes[-1])
