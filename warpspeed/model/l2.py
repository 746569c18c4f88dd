"""L2<->L1 volumes of a launch (the block traffic), from the explicit counts of the wave's blocks.

Loads: every warp instruction requests its distinct sectors from the L1 (``l1_load``). What a block
needs at least is its own footprint (``l2_load_compulsory``: the distinct sectors of each field over
the block); the rest is redundant and hits in the L1 unless the L1 is too small for the lines that the
resident blocks allocate meanwhile (a fitted hit-rate curve of that oversubscription turns the
redundant volume into capacity misses). Stores write through to the L2 sector by sector
(``l2_store``). All volumes are in B/lup of the wave's valid cells.

The L1 sends its misses to the L2 as requests: one per warp instruction and 128 B line, carrying the
line's 1-4 missed sectors. A warp instruction whose lanes touch one sector per line (a block one cell
wide) makes one request per sector, a coalesced one one per four. The requests per byte of L2 traffic
are taken from the warps' requests (lines over sectors, loads and stores apart); the latency model
limits the requests per second (``l2_request_rate``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..device import Device
from ..kernel import Kernel
from .capacity import CacheReuse, reuse
from .footprint import BlockCounts
from .launch import Launch


@dataclass(frozen=True)
class BlockTraffic:
    """The wave's L2<->L1 volumes in B/lup, per cause, and each field's compulsory L2 load."""

    l1_load: float
    l2_load_compulsory: float
    l2_load: float
    l2_store: float
    l1_capacity: CacheReuse  # the L1's redundant loads -> capacity misses that load from the L2
    field_l2_load_compulsory: tuple[float, ...]
    load_requests_per_byte: float = 0.0  # L1 -> L2 requests per byte of L2 load (lines per sector / sector bytes)
    store_requests_per_byte: float = 0.0  # the same for the stores


def block_traffic(kernel: Kernel, device: Device, launch: Launch, counts: BlockCounts) -> BlockTraffic:
    """L2<->L1 volumes of the wave whose blocks ``counts`` summarises."""
    S = device.l1_sector_bytes
    per_lup = 1.0 / counts.valid_lups
    l1_load = counts.warp_load_sectors * S * per_lup
    l2_comp = sum(counts.block_load_sectors) * S * per_lup
    bps = launch.occupancy.blocks_per_sm
    allocated = bps * sum(counts.block_load_lines) * device.l1_line_bytes / counts.wave_blocks
    shared = bps * (kernel.shared_bytes_per_block + device.shared_reserved_per_block_bytes)
    l1 = reuse(l1_load - l2_comp, allocated, max(device.l1_size_bytes - shared, 0), device.hit_rates.l1)
    return BlockTraffic(
        l1_load=l1_load, l2_load_compulsory=l2_comp, l2_load=l2_comp + l1.miss_B_per_lup,
        l2_store=counts.warp_store_sectors * S * per_lup, l1_capacity=l1,
        field_l2_load_compulsory=tuple(n * S * per_lup for n in counts.block_load_sectors),
        load_requests_per_byte=_per_byte(counts.warp_load_lines, counts.warp_load_sectors * S),
        store_requests_per_byte=_per_byte(counts.warp_store_lines, counts.warp_store_sectors * S))


def _per_byte(requests: int, nbytes: int) -> float:
    return requests / nbytes if nbytes else 0.0


__all__ = ["BlockTraffic", "block_traffic"]
