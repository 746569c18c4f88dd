"""GPU device descriptions: data files in ``warpspeed/devices/``, loaded into immutable :class:`Device`\\ s.

The file format, every key with its unit kind and meaning, the provenance rules and the derived values are
documented once, in docs/device-format.md; the key table itself is :data:`warpspeed.device.keys.KEY_GROUPS` (the
documentation is tested against it). Modules, each importing only those before it: ``base``, ``hitrates``
(the fitted hit-rate curves), ``keys`` (the keys, units and parsing), ``tomlfile``, ``families`` (per-architecture
data: hit-rate curves, latency-model values), ``consistency`` (the rules between values), ``overrides``
(changed values, ``--set``), ``description`` (``Device``), ``shipped`` (the shipped files' ids), ``files``
(device files, the shipped devices by id), ``builtin`` (:func:`device`), ``reported`` (the device of a GPU's
reported name). Nothing here imports the model (warpspeed.model), which takes a Device.
"""

from __future__ import annotations

from .base import PROVENANCE, SCHEMA_VERSION, DeviceFileError, FrozenMap
from .builtin import device, device_ids
from .description import Device
from .families import hit_rate_families
from .files import load_device_file
from .hitrates import HIT_RATE_CURVES, HitRateCurve, HitRates
from .keys import (
    KEY_ATTRIBUTES,
    L1_LINE_KEYS,
    LATENCY_KEYS,
    MSC_KEYS,
    OVERRIDE_KEYS,
    TLB_KEYS,
    override_kind,
)
from .overrides import parse_set_options
from .reported import detected_device, device_for_gpu_name

__all__ = [
    "SCHEMA_VERSION", "OVERRIDE_KEYS", "KEY_ATTRIBUTES", "HIT_RATE_CURVES", "LATENCY_KEYS", "MSC_KEYS", "TLB_KEYS",
    "PROVENANCE", "FrozenMap", "DeviceFileError",
    "HitRateCurve", "HitRates", "Device", "device", "device_ids", "hit_rate_families", "load_device_file",
    "parse_set_options", "override_kind", "L1_LINE_KEYS", "detected_device", "device_for_gpu_name",
]
