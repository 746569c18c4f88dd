"""DRAM<->L2 volumes of a launch (the wave traffic): the wave's footprint, layer reuse, partial stores.

The wave (the blocks resident at once) loads at least the distinct sectors of its cells' accesses
(``dram_load_compulsory``). Part of that footprint was already loaded by the blocks before it: those in
the previous block row (the y-layer thread set) and in the previous plane (the z-layer set, less what
the y-layer already gives). Each overlap hits in the L2 at a fitted rate of the L2's oversubscription
by the lines allocated since the layer ran. Stores reach DRAM once per distinct stored sector; a sector
that no single block writes completely may leave the L2 before its neighbours complete it, and each
such miss costs one read (to merge) and one extra write. Volumes are in B/lup of the wave's valid cells.
Counting the sectors is the job of a :class:`~warpspeed.counters.FootprintCounter`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .capacity import CacheReuse, reuse
from .cells import CellSet, cell_set
from .counters import FootprintCounter, FootprintSet
from .device import Device, HitRateCurve
from .kernel import Kernel
from .launch import Launch


@dataclass(frozen=True)
class FieldWaveTraffic:
    """One field's wave traffic in B/lup: compulsory load, the two layer hits, unique stores."""

    dram_load_compulsory: float
    dram_layer_y_hit: float
    dram_layer_z_hit: float
    dram_store: float  # the field's unique stored sectors; the partial-store misses are in the total only


@dataclass(frozen=True)
class WaveTraffic:
    """The wave's DRAM<->L2 volumes in B/lup, the reuse of each cause, and each field's share."""

    dram_load_compulsory: float
    dram_load: float
    dram_store: float
    layer_y: CacheReuse  # L2 reuse from the y-layer thread set
    layer_z: CacheReuse  # L2 reuse from the z-layer thread set
    partial_stores: CacheReuse  # partially written sectors whose misses are read from DRAM (and written twice)
    fields: tuple[FieldWaveTraffic, ...]


def layer_ranges(grid: tuple[int, int, int], start: int, count: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """Linear block-id ranges [a, b) of the y- and z-layer thread sets of the wave of ``count`` blocks
    from ``start`` in a grid of ``grid`` blocks (a range is empty where a >= b).

    The y-layer holds the blocks one block row before a wave block, the z-layer those one block plane
    before; a y-layer that would start in a plane's last block row (whose next row is in the next plane)
    starts at the next row."""
    s, e = start, start + count
    gx, gy, gz = grid
    ya, yb = max(0, s - gx), min(s, e - gx) if gy > 1 else 0
    if ya < yb and (ya // gx) % gy == gy - 1:
        ya = min(yb, (ya // gx + 1) * gx)
    za, zb = max(0, s - gx * gy), min(s, e - gx * gy) if gz > 1 else 0
    return (ya, yb), (za, zb)


def wave_traffic(kernel: Kernel, device: Device, launch: Launch, sectors: FootprintCounter,
                 lines: FootprintCounter, full_store_sectors: int, valid_lups: int) -> WaveTraffic:
    """DRAM<->L2 volumes of the launch's wave.

    ``sectors`` and ``lines`` count at the L2's sector and line size; ``full_store_sectors`` is the sum
    over the wave's blocks of the sectors a block writes completely by itself; ``valid_lups`` the wave's
    valid cells."""
    per_lup = 1.0 / valid_lups
    S2 = device.l2_sector_bytes
    s, e = launch.wave_start, launch.wave_start + launch.wave_blocks
    wave = cell_set(launch, s, e)
    f_wave = sectors.footprint(wave)
    comp = sectors.count_by_field(f_wave)
    stores = sectors.count_by_field(sectors.footprint(wave, loads=False, stores=True))
    cap = device.l2_effective_size_bytes
    empty = sectors.empty()
    nf = len(kernel.fields)

    def layer(first: int, stop: int, cells: CellSet, exclude: FootprintSet, curve: HitRateCurve):
        if stop <= first:
            return empty, (0,) * nf, reuse(0.0, 0.0, cap, curve)
        fp = sectors.footprint(cells)
        by_field = sectors.count_by_field(fp.intersect(f_wave).subtract(exclude))
        allocated = lines.footprint_size(cell_set(launch, first, e), stores=True) * device.l2_line_bytes
        return fp, by_field, reuse(sum(by_field) * S2 * per_lup, allocated, cap, curve)

    (ya, yb), (za, zb) = layer_ranges(launch.grid, s, launch.wave_blocks)
    y_cells = cell_set(launch, ya, yb).below_y((launch.grid[1] - 1) * launch.cells_per_block[1])
    f_y, over_y, ly = layer(ya, yb, y_cells, empty, device.hit_rates.l2_y)
    _, over_z, lz = layer(za, zb, cell_set(launch, za, zb), f_y, device.hit_rates.l2_z)

    wave_alloc = lines.footprint_size(wave, stores=True) * device.l2_line_bytes
    # partially written sectors: the wave's stored sectors that no single block writes completely; the blocks
    # that complete them run at nearly the same time, but the sector may leave the L2 before they do
    partial = max(0, sum(stores) - full_store_sectors) * S2 * per_lup
    ps = reuse(partial, wave_alloc, cap, device.hit_rates.l2_store)
    dram_comp = sum(comp) * S2 * per_lup
    fields = tuple(FieldWaveTraffic(comp[i] * S2 * per_lup, ly.hit_rate * over_y[i] * S2 * per_lup,
                                    lz.hit_rate * over_z[i] * S2 * per_lup, stores[i] * S2 * per_lup)
                   for i in range(nf))
    return WaveTraffic(
        dram_load_compulsory=dram_comp,
        dram_load=dram_comp - ly.hit_B_per_lup - lz.hit_B_per_lup + ps.miss_B_per_lup,
        # a miss of a partial sector is read (to merge) and written back, and the completed sector later again
        dram_store=sum(stores) * S2 * per_lup + ps.miss_B_per_lup,
        layer_y=ly, layer_z=lz, partial_stores=ps, fields=fields)


__all__ = ["FieldWaveTraffic", "WaveTraffic", "layer_ranges", "wave_traffic"]
