"""The TLB-page stage: the address-translation pages a wave walks, per lup (the TLB-page limiter's cost).

Off unless the device gives ``tlb_page``, ``tlb_reach`` and ``tlb_walk_rate`` (no shipped device does: the
limiter shows how a limiter is added, and lets a user test the hypothesis that translation limits a kernel
with many arrays). The model is the cache model's simplest case, one level with a hit rate of 1 or 0: a
wave whose distinct pages (loads and stores, every field) fit in the TLBs' reach translates them once and
keeps them for the next waves (cost 0); a wave that needs more than the reach walks every page it touches
again (cost = its distinct pages / its valid lups). The limit is ``tlb_walk_rate`` / that cost.
"""

from __future__ import annotations

from ..device import Device
from .cells import cell_set
from .counters import FootprintCounter
from .launch import Launch


def wave_pages(launch: Launch, pages: FootprintCounter) -> int:
    """Distinct pages the launch's wave touches (``pages`` counts at the device's page size)."""
    wave = cell_set(launch, launch.wave_start, launch.wave_start + launch.wave_blocks)
    return pages.footprint_size(wave, loads=True, stores=True)


def pages_per_lup(device: Device, launch: Launch, pages: FootprintCounter, valid_lups: int) -> float:
    """Page walks per lup: 0 while the wave's pages fit in ``tlb_reach``, else all of them per wave."""
    assert device.tlb_page_bytes is not None and device.tlb_reach_bytes is not None, "the TLB-page limiter's keys"
    n = wave_pages(launch, pages)
    if n * device.tlb_page_bytes <= device.tlb_reach_bytes or valid_lups <= 0:
        return 0.0
    return n / valid_lups


__all__ = ["pages_per_lup", "wave_pages"]
