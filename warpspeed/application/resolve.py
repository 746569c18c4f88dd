"""From what a user names to the objects the model takes: a catalog name or kernel TOML path to a
:class:`~warpspeed.kernel.Kernel`, a device id, device TOML path or ``Device`` (with overrides) to a
:class:`~warpspeed.device.Device`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from ..device import Device, device
from ..kernel import Kernel
from ..model.launch import triple


def resolve_kernel(kernel: Kernel | str | Path, domain: Sequence[int] | None = None) -> Kernel:
    """A Kernel, a kernel TOML path or a catalog name (with parameters: ``star:r=2``), resolved for ``domain``
    (the kernel's own when None)."""
    dom = None if domain is None else triple(domain, "domain")
    if isinstance(kernel, Kernel):
        return kernel.with_domain(dom)
    from ..kernels import find_kernel  # plugins behind the catalog may import warpspeed: import lazily

    return find_kernel(str(kernel), domain=dom)


def resolve_device(dev: Device | str | Path, overrides: Mapping[str, object] | None = None) -> Device:
    """A Device, a built-in id (with ``+key=value`` suffixes) or a device TOML path, with ``overrides`` (device
    keys to values such as ``{"l2_size": "80MiB"}``) applied."""
    return device(dev, **(overrides or {}))
