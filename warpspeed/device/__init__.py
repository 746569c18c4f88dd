"""GPU device descriptions: data files in ``warpspeed/devices/``, loaded into immutable :class:`Device`\\ s.

Device file schema (version 1)
==============================

One TOML file per GPU, named ``<id>.toml``. Identity keys are plain strings; every number is a table
with the value and where it comes from, written with dotted keys::

    schema_version = 1                 # required; this module reads version 1
    id = "A100-SXM4-40GB"              # must equal the file name for the shipped files
    name = "NVIDIA A100-SXM4-40GB"
    vendor = "NVIDIA"
    architecture = "ampere"            # family: selects the hit-rate curves in hit_rates.toml
    compute_capability = "8.0"

    sm_count.value = 108
    sm_count.source = "spec: ..."

    dram_bw.value = "1375GB/s"         # what the model uses (measured where known)
    dram_bw.source = "measured: ..."
    dram_bw.peak = "1555GB/s"          # optional, bandwidths only: vendor/theoretical peak
    dram_bw.peak_source = "spec: ..."

    [hit_rates.l2_z]                   # optional: replaces the family's curve for this device
    a = 1.0
    b = 0.0029
    c = 3.61
    source = "measured: warpspeed calibrate ..."

An inline table is the same thing in TOML: ``sm_count = { value = 108, source = "spec: ..." }``.

The numeric keys (also the keys of ``--set``, :meth:`Device.with_overrides` and the base-file form),
with their unit kinds (see :mod:`warpspeed.units`)::

    key                        Device attribute              kind        meaning
    sm_count                   sm_count                      count       streaming multiprocessors
    clock_GHz                  clock_GHz                     frequency   SM clock the model uses
    warp_size                  warp_size                     count       threads per warp
    l1_size                    l1_size_bytes                 bytes       unified L1/shared capacity per SM
    l1_line                    l1_line_bytes                 bytes       L1 allocation granularity
    l1_sector                  l1_sector_bytes               bytes       L1 <-> L2 transfer granularity
    l1_bytes_per_cycle         l1_bytes_per_cycle            bytes       LSU bytes per cycle per SM
    l1_bytes_per_cycle_8B      l1_bytes_per_cycle_8B         bytes       optional; the same for 8 B
                                                                         accesses where they are slower
                                                                         (A40, CDNA2); default: the above
    l1_banks                   l1_banks                      count       L1 banks
    l1_bank_width              l1_bank_bytes                 bytes       bytes per bank per cycle
    l1_pairing_distance        l1_pairing_distance_bytes     bytes       addresses this far apart never
                                                                         share a wavefront (pairing rule)
    l1_load_lines_per_wavefront, l1_store_lines_per_wavefront            count       optional: the L1 line
                                                                         rule (warpspeed.l1): lines that
                                                                         share a wavefront beyond the bank
                                                                         cost, for loads and stores
    l1_wavefronts_per_warp     l1_wavefronts_per_warp        count       optional (line rule): fixed
                                                                         wavefronts of every warp
    l2_size                    l2_size_bytes                 bytes       total L2 capacity
    l2_partitions              l2_partitions                 count       L2 partitions (an SM sees one)
    l2_effective_size          l2_effective_size_bytes       bytes       optional; default l2_size //
                                                                         l2_partitions
    l2_line, l2_sector         l2_line_bytes, l2_sector_bytes bytes      L2 allocation / transfer sizes
    l2_bw  (+ peak)            l2_bw_GB_s (l2_bw_peak_GB_s)  bandwidth   L2 <-> L1 bandwidth
    dram_bw (+ peak)           dram_bw_GB_s (..._peak_GB_s)  bandwidth   DRAM <-> L2 bandwidth
    dram_size                  dram_size_bytes               bytes       optional: device memory capacity
                                                                         (a domain that does not fit gets
                                                                         a note)
    fp32_lanes, fp64_lanes     fp32/fp64_lanes_per_sm        count       FMA lanes per SM per cycle
    max_threads_per_sm, max_blocks_per_sm, max_threads_per_block         count       occupancy limits
    max_block_dims             max_block_dims                three counts  [x, y, z] block limits
    registers_per_sm, max_registers_per_thread                           count       32-bit registers
    register_alloc_unit        register_alloc_unit           count       registers per warp granule
    register_subpartitions     register_subpartitions        count       register-file sub-partitions
    shared_per_sm, shared_per_block, shared_alloc_unit,
    shared_reserved_per_block  shared_*_bytes                bytes       shared-memory limits
    l2_latency                 l2_latency_s                  time        mean L2 hit latency (latency model)
    dram_latency               dram_latency_s                time        DRAM access latency (latency model)
    sectors_in_flight_per_warp sectors_in_flight_per_warp    count       32 B sectors one warp keeps in
                                                                         flight on average (latency model)
    dram_run_overhead          dram_run_overhead_bytes       bytes       DRAM time lost per contiguous run
                                                                         of bytes, in bytes of streaming
                                                                         (latency model; given, it wins
                                                                         over dram_run_time)
    dram_run_time              dram_run_time_s               time        the same loss as a time: bytes =
                                                                         dram_run_time x dram_bw
    dram_run_exponent          dram_run_exponent             number      how fast longer runs approach the
                                                                         full bandwidth (latency model)
    l2_request_rate            l2_request_rate_GHz           frequency   L1 -> L2 requests (one per warp
                                                                         instruction and 128 B line, 1-4
                                                                         sectors each) per ns the GPU
                                                                         serves (latency model; optional:
                                                                         no request limit without it)
    tlb_page, tlb_reach        tlb_page_bytes, tlb_reach_bytes  bytes    TLB-page limiter (optional, off
    tlb_walk_rate              tlb_walk_rate_GHz             frequency   unless all three are given):
                                                                         page size, the pages the TLBs
                                                                         hold, page walks per ns

``--set``/:meth:`~Device.with_overrides` also take ``l2_bw_peak``, ``dram_bw_peak`` and
``hit_rates.<curve>.<a|b|c>`` (curve one of ``l1, l2_y, l2_z, l2_store``).

Rules: every key above is required except ``l1_bytes_per_cycle_8B``, ``l2_effective_size``, the
peaks and the latency-model keys, which default to the family's values in
``devices/latency.toml``; unknown keys (top level or inside a value table) are errors; every value
needs a non-empty ``source``. A source starts with its provenance: ``spec:`` (vendor or spec sheet), ``measured:``
(benchmark, with tool and settings), ``derived:`` (arithmetic on cited values), ``assumed:`` (a stated assumption) or
``model:`` (a value taken from another model); ``override`` marks values changed by a user.

**Base files** describe a hypothetical GPU as a change to another one::

    schema_version = 1
    base = "H100-SXM5-80GB"            # a built-in id (unique prefix ok), or a path relative to this
                                       # file (it must contain "/" or end in ".toml")
    id = "H100-bigL2"                  # optional; default: base id + "+key=value" suffixes
    name = "H100 with 100 MiB L2"      # optional
    l2_size = "100MiB"                 # a bare value (source "override (<file>)") ...
    dram_bw.value = "4TB/s"            # ... or a table with its own source
    dram_bw.source = "assumed: HBM3e"

Changed keys follow :meth:`Device.with_overrides` semantics (derived values follow them). A changed
``architecture`` brings that family's hit-rate curves; ``[hit_rates.<curve>]`` tables replace single
curves. Without ``name`` the device is called "<base name> (modified)" (or its ``id`` when given).

Hit-rate coefficients live in ``devices/hit_rates.toml``: one table per family and curve
(``[ampere.l2_y]`` with ``a``, ``b``, ``c``, ``source``), for the families ``volta, ampere, ada,
hopper, cdna2, cdna3``. hit(O) = a * exp(-b * exp(c * O)), O = oversubscription (allocated volume / capacity).

Migration notes: version 1 is the first schema; a later version must say here what changed and the
loader must keep reading version 1 files.
"""

from __future__ import annotations

from ..capacity import HIT_RATE_CURVES, HitRateCurve, HitRates
from .base import _IDENTITY, PROVENANCE, SCHEMA_VERSION, DeviceFileError, FrozenMap  # noqa: F401 (docs check)
from .builtin import device, device_ids
from .families import hit_rate_families
from .files import load_device_file
from .keys import (  # noqa: F401 (_KEYS: docs check)
    _KEYS,
    KEY_ATTRIBUTES,
    L1_LINE_KEYS,
    LATENCY_KEYS,
    OVERRIDE_KEYS,
    TLB_KEYS,
    override_kind,
)
from .model import Device
from .overrides import parse_set_options
from .reported import detected_device, device_for_gpu_name

__all__ = [
    "SCHEMA_VERSION", "OVERRIDE_KEYS", "KEY_ATTRIBUTES", "HIT_RATE_CURVES", "LATENCY_KEYS", "TLB_KEYS", "PROVENANCE",
    "FrozenMap", "DeviceFileError",
    "HitRateCurve", "HitRates", "Device", "device", "device_ids", "hit_rate_families", "load_device_file",
    "parse_set_options", "override_kind", "L1_LINE_KEYS", "detected_device", "device_for_gpu_name",
]
