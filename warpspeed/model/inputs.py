"""What the model and the studies take: a :class:`~warpspeed.kernel.Kernel` and a
:class:`~warpspeed.device.Device`, never their names.

Turning a catalog name or kernel file into a Kernel, and a device id, file or overrides into a Device, is the
application's (:mod:`warpspeed.application.resolve`; ``warpspeed.estimate`` and the other functions of the
package's face resolve, then call the model). A name given here is a caller's mistake, said as such.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..device import Device
from ..kernel import Kernel
from .launch import triple


def kernel_for(kernel: object, domain: Sequence[int] | None = None) -> Kernel:
    """``kernel`` (checked to be a Kernel) over ``domain`` (checked as a triple; None: its own domain)."""
    if not isinstance(kernel, Kernel):
        raise TypeError(f"kernel: the model takes a warpspeed Kernel, got {type(kernel).__name__} {kernel!r:.80}; "
                        "resolve a catalog name or kernel file first (warpspeed.application.resolve.resolve_kernel), "
                        "or call warpspeed.estimate / warpspeed.rank, which resolve it.")
    return kernel.with_domain(None if domain is None else triple(domain, "domain"))


def device_given(device: Device, what: str = "device") -> Device:
    """``device``, checked to be a Device (not an id or a file)."""
    if not isinstance(device, Device):
        raise TypeError(f"{what}: the model takes a warpspeed Device, got {type(device).__name__} {device!r:.80}; "
                        "resolve a device id or file first (warpspeed.application.resolve.resolve_device, or "
                        "warpspeed.device), or call warpspeed.estimate / warpspeed.rank, which resolve it.")
    return device
