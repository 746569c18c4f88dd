"""DRAM<->L2 volumes of a launch (the wave traffic): the wave's footprint, layer reuse, partial stores.

The wave (the blocks resident at once) loads at least the distinct sectors of its cells' accesses
(``dram_load_compulsory``). Part of that footprint was already loaded by the blocks before it: those in
the previous block row (the y-layer thread set) and in the previous plane (the z-layer set, less what
the y-layer already gives). Each overlap hits in the L2 at a fitted rate of the L2's oversubscription
by the lines allocated since the layer ran. Stores reach DRAM once per distinct stored sector; a sector
that no single block writes completely may leave the L2 before its neighbours complete it, and each
such miss costs one read (to merge) and one extra write. What pushes such a sector out is the wave's stored
volume, and a sector with more than two writers waits again for each further one that comes at its own time
(:func:`partial_store_waits`). Volumes are in B/lup of the wave's valid cells.
Counting the sectors is the job of a :class:`~warpspeed.model.counters.FootprintCounter`.

A device with a memory-side cache (``msc_size``, ``msc_bw``: the ``MSC`` level) puts it between the L2 and
the DRAM. The L2's misses and write-backs go to it: what the stage computes with the L2's capacity is then the
L2<->MSC traffic (``msc_load``, ``msc_store``), and the same stage with the MSC's capacity gives the DRAM
traffic. Assumed, for want of measurements: the MSC is shared by every SM (memory-side, as AMD's Infinity
Cache is by all XCDs), so the whole ``msc_size`` holds the layers of every SM's blocks; it keeps the layers and
partial stores along the L2 curves of the device's family (``l2_y``, ``l2_z``, ``l2_store``) at its own
oversubscription, with the same volumes allocated (every L2 miss allocates in it); and what the L2 keeps never
reaches it, so the capacity in front of the DRAM is at least the L2's (the DRAM moves no more than the MSC).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..device import Device, HitRateCurve
from ..kernel import Kernel
from .capacity import CacheReuse, reuse
from .cells import cell_set, linear_layers
from .counters import FootprintCounter
from .footprint import StoreSectors
from .launch import Launch


@dataclass(frozen=True)
class FieldWaveTraffic:
    """One field's wave traffic in B/lup: compulsory load, the two layer hits, unique stores."""

    dram_load_compulsory: float
    dram_layer_y_hit: float
    dram_layer_z_hit: float
    dram_store: float  # the field's unique stored sectors; the partial-store misses are in the total only


@dataclass(frozen=True)
class MemorySideTraffic:
    """The L2<->MSC volumes in B/lup of a device with a memory-side cache, and the reuse of each cause in front
    of the DRAM (the MSC's capacity)."""

    msc_load: float  # the L2's misses: MSC -> L2
    msc_store: float  # the L2's write-backs: L2 -> MSC
    layer_y: CacheReuse  # MSC reuse from the y-layer thread set
    layer_z: CacheReuse
    partial_stores: CacheReuse


@dataclass(frozen=True)
class WaveTraffic:
    """The wave's DRAM<->L2 volumes in B/lup, the reuse of each cause, and each field's share; with a memory-side
    cache (``memory_side``) the L2's misses go to it, and the DRAM volumes are what it misses."""

    dram_load_compulsory: float
    dram_load: float
    dram_store: float
    layer_y: CacheReuse  # L2 reuse from the y-layer thread set
    layer_z: CacheReuse  # L2 reuse from the z-layer thread set
    partial_stores: CacheReuse  # partially written sectors whose misses are read from DRAM (and written twice)
    fields: tuple[FieldWaveTraffic, ...]  # shares of the DRAM volumes
    memory_side: MemorySideTraffic | None = None  # None: the device has no memory-side cache

    @property
    def msc_load(self) -> float | None:
        return None if self.memory_side is None else self.memory_side.msc_load

    @property
    def msc_store(self) -> float | None:
        return None if self.memory_side is None else self.memory_side.msc_store


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


def wave_layers(launch: Launch) -> tuple[tuple[int, int], tuple[int, int], int, int]:
    """The wave's y- and z-layer block ranges (:func:`layer_ranges`), the y below which a y-layer cell counts
    and the blocks of one block plane; a ``linear1d`` launch's from its cells (``cells.linear_layers``)."""
    if launch.linear:
        return linear_layers(launch)
    y, z = layer_ranges(launch.grid, launch.wave_start, launch.wave_blocks)
    return y, z, (launch.grid[1] - 1) * launch.cells_per_block[1], launch.grid[0] * launch.grid[1]


@dataclass(frozen=True)
class WaveSectors:
    """The sector counts behind the wave traffic, per field: ``compulsory`` sectors of the wave's loads,
    ``stores`` its stored sectors, ``over_y`` / ``over_z`` the sectors the y- / z-layer already loaded (None
    where there is no such layer). With them alone the DRAM volumes are bounded below (every layer hit at
    most its overlap: :meth:`least_dram_B_per_lup`), without the costlier line counts."""

    compulsory: tuple[int, ...]
    stores: tuple[int, ...]
    over_y: tuple[int, ...] | None
    over_z: tuple[int, ...] | None

    def least_dram_B_per_lup(self, sector_bytes: int, valid_lups: int,
                             unfinished_B_per_lup: tuple[float, ...] = ()) -> tuple[float, float]:
        """Lower bounds of (dram_load, dram_store) in B/lup on any device with these counts: the layers hit
        at rate 1 and no partial-store miss; the stored sectors no cell completes (``unfinished_B_per_lup``,
        per field) are read whatever the cache keeps, as in :func:`traffic_of_counts`."""
        per_lup = sector_bytes / valid_lups
        overlap = sum(self.over_y or ()) + sum(self.over_z or ())
        return (max(0.0, (sum(self.compulsory) - overlap) * per_lup) + sum(unfinished_B_per_lup),
                sum(self.stores) * per_lup)


@dataclass(frozen=True)
class WaveCounts:
    """The sector and line counts behind the wave traffic: the same on every device with the same sector and
    line sizes and the same wave (a what-if of the L2 size or a bandwidth reuses them): the sectors and the
    lines allocated while each layer's reuse waits in the L2.

    The two layers wait differently. The y layer is the block row just before the wave: it ran in the
    tail of the previous wave, intermingled with the wave's first blocks, so everything the wave allocates
    competes with it (the y layer and the wave: ``y_allocated_lines``). The z layer is a whole block plane
    before: each block of the wave finds its z neighbour one plane of blocks earlier, and blocks start in
    order, so what lies between the two uses is the block plane from the z layer's first block on
    (``z_allocated_lines``): up to the wave, not the wave, whose blocks start alongside or after it (where the
    wave starts inside the grid's first plane, the plane reaches into it: the blocks before the first wave
    block with a z neighbour). This is the layer condition's reuse distance of one xy plane. Counting the wave
    in as well made the hit rate depend on how many blocks a wave holds against a plane: on the H100/H200
    data, star3d-r4 blocks 2 cells deep kept 75-80 % of their z overlap on the H100 at the O at which 4-deep
    ones kept 35-50 % on the H200."""

    sectors: WaveSectors
    y_allocated_lines: int
    z_allocated_lines: int


def wave_sectors(kernel: Kernel, launch: Launch, sectors: FootprintCounter) -> WaveSectors:
    """Count the wave's sectors (``sectors`` counts at the L2's sector size)."""
    s, e = launch.wave_start, launch.wave_start + launch.wave_blocks
    wave = cell_set(launch, s, e)
    f_wave = sectors.footprint(wave)
    stores = sectors.sizes_by_field(wave, loads=False, stores=True)
    (ya, yb), (za, zb), y_limit, _ = wave_layers(launch)
    # only the layers' sectors the wave loads again count: what lies too far from the wave need not be listed
    y_hits, over_y, over_z = sectors.empty(), None, None
    if ya < yb:  # the y-layer's cells below the last block row
        y_hits = sectors.meet(cell_set(launch, ya, yb).below_y(y_limit), f_wave)
        over_y = sectors.count_by_field(y_hits)
    if za < zb:
        over_z = sectors.count_by_field(sectors.meet(cell_set(launch, za, zb), f_wave).subtract(y_hits))
    return WaveSectors(sectors.count_by_field(f_wave), stores, over_y, over_z)


def wave_counts(kernel: Kernel, launch: Launch, sectors: FootprintCounter, lines: FootprintCounter,
                counted: WaveSectors | None = None) -> WaveCounts:
    """Count the wave's sectors (unless ``counted`` gives them) and lines (``sectors`` and ``lines`` count at
    the L2's sector and line size)."""
    e = launch.wave_start + launch.wave_blocks
    (ya, yb), (za, zb), _, plane = wave_layers(launch)  # plane: the z layer's first block to its wave block
    y_lines = lines.footprint_size(cell_set(launch, ya, e), stores=True) if ya < yb else 0
    z_lines = lines.footprint_size(cell_set(launch, za, za + plane), stores=True) if za < zb else 0
    return WaveCounts(counted if counted is not None else wave_sectors(kernel, launch, sectors), y_lines, z_lines)


def wave_traffic(kernel: Kernel, device: Device, launch: Launch, sectors: FootprintCounter,
                 lines: FootprintCounter, store_sectors: StoreSectors, valid_lups: int,
                 unfinished_B_per_lup: tuple[float, ...] | None = None) -> WaveTraffic:
    """DRAM<->L2 volumes of the launch's wave.

    ``sectors`` and ``lines`` count at the L2's sector and line size; ``store_sectors`` sums over the wave's
    blocks the sectors a block writes completely by itself and those it writes at all; ``valid_lups`` the
    wave's valid cells; ``unfinished_B_per_lup`` per field the stored sectors no cell completes (None: none)."""
    return traffic_of_counts(kernel, device, wave_counts(kernel, launch, sectors, lines), store_sectors,
                             valid_lups, launch.occupancy.blocks_per_sm, unfinished_B_per_lup)


def partial_store_waits(partial_sectors: int, later_writes: int, blocks_per_sm: int) -> float:
    """How many times a partially written sector must survive the L2 until its last writer: once, and where
    a sector has more than two writers (``later_writes`` / ``partial_sectors``: the writes after each sector's
    first, on average), once more for each further writer, in the share 1 - 1/``blocks_per_sm`` of it that
    comes at its own time.

    The writers are blocks next to each other in x (four blocks 1 cell wide share a 32 B sector of doubles).
    With one block per SM the wave's blocks start together and run alike, so the neighbours store the same
    rows at about the same time and a sector waits about once however many write it; with several blocks per
    SM each block runs beside others at other points of their lives, and each writer comes at its own time.
    On the H100 and H200, LBM blocks 1 cell wide (four writers) lose about what independent waits give with
    two and five blocks per SM (docs/model.md, "Partial stores")."""
    if partial_sectors <= 0:
        return 1.0
    further = max(0.0, later_writes / partial_sectors - 1.0)
    return 1.0 + further * (1.0 - 1.0 / max(1, blocks_per_sm))


def traffic_of_counts(kernel: Kernel, device: Device, counts: WaveCounts, store_sectors: StoreSectors,
                      valid_lups: int, blocks_per_sm: int,
                      unfinished_B_per_lup: tuple[float, ...] | None = None) -> WaveTraffic:
    """The wave traffic on ``device`` from its counts: the L2's hit rates turn the layers' overlap into hits
    and the partially written sectors into misses (``store_sectors``: the blocks' stored sectors, complete and
    all; ``blocks_per_sm``: the launch's resident blocks per SM; ``unfinished_B_per_lup``: per field, the
    stored sectors that no cell of the domain completes, B per lup, each read once to merge: they count with
    the compulsory load, not as partial stores); with a memory-side cache, the L2's misses are the MSC's
    traffic and the DRAM's come from the same counts at the MSC's capacity."""
    unfinished = unfinished_B_per_lup or (0.0,) * len(kernel.fields)
    at = (kernel, device, counts, store_sectors, valid_lups, blocks_per_sm, unfinished)
    l2 = _traffic_at(*at, device.l2_effective_size_bytes)
    if device.msc_size_bytes is None:
        return l2
    # what the L2 keeps never reaches the MSC: in front of the DRAM, at least the L2's capacity
    msc = _traffic_at(*at, max(device.msc_size_bytes, device.l2_effective_size_bytes))
    side = MemorySideTraffic(l2.dram_load, l2.dram_store, msc.layer_y, msc.layer_z, msc.partial_stores)
    return WaveTraffic(l2.dram_load_compulsory, msc.dram_load, msc.dram_store, l2.layer_y, l2.layer_z,
                       l2.partial_stores, msc.fields, side)


def _traffic_at(kernel: Kernel, device: Device, counts: WaveCounts, store_sectors: StoreSectors, valid_lups: int,
                blocks_per_sm: int, unfinished: tuple[float, ...], cap: int) -> WaveTraffic:
    """The traffic that misses a cache of ``cap`` bytes in front of the DRAM (the L2 capacity an SM sees,
    ``l2_effective_size``, or the memory-side cache), along the device's L2 hit-rate curves."""
    per_lup = 1.0 / valid_lups
    S2 = device.l2_sector_bytes
    nf = len(kernel.fields)

    def layer(over: tuple[int, ...] | None, allocated_lines: int, curve: HitRateCurve):
        if over is None:
            return (0,) * nf, reuse(0.0, 0.0, cap, curve)
        return over, reuse(sum(over) * S2 * per_lup, allocated_lines * device.l2_line_bytes, cap, curve)

    ws = counts.sectors
    over_y, ly = layer(ws.over_y, counts.y_allocated_lines, device.hit_rates.l2_y)
    over_z, lz = layer(ws.over_z, counts.z_allocated_lines, device.hit_rates.l2_z)
    comp, stores = ws.compulsory, ws.stores
    # partially written sectors: the wave's stored sectors that no single block writes completely. The blocks
    # that complete them run at nearly the same time, but the sector may leave the L2 before they do. What
    # pushes it out is the wave's stored (dirty) volume, not its loads: star3d-r4 waves that load as much as
    # the L2 holds keep their partial sectors, LBM waves whose stores fill a third of it lose 15-30 %
    # (a sector that no cell of the domain completes, next to a ghost layer or padding, is read once to merge
    # whenever it leaves: with the compulsory load, not among them)
    stored = sum(stores)
    partial = max(0, stored - store_sectors.full)
    waits = partial_store_waits(partial, store_sectors.written - stored, blocks_per_sm)
    ps = reuse(max(0.0, partial * S2 * per_lup - sum(unfinished)), stored * S2, cap, device.hit_rates.l2_store,
               waits)
    dram_comp = sum(comp) * S2 * per_lup + sum(unfinished)
    fields = tuple(FieldWaveTraffic(comp[i] * S2 * per_lup + unfinished[i], ly.hit_rate * over_y[i] * S2 * per_lup,
                                    lz.hit_rate * over_z[i] * S2 * per_lup, stores[i] * S2 * per_lup)
                   for i in range(nf))
    return WaveTraffic(
        dram_load_compulsory=dram_comp,
        dram_load=dram_comp - ly.hit_B_per_lup - lz.hit_B_per_lup + ps.miss_B_per_lup,
        # a miss of a partial sector is read (to merge) and written back, and the completed sector later again
        dram_store=stored * S2 * per_lup + ps.miss_B_per_lup,
        layer_y=ly, layer_z=lz, partial_stores=ps, fields=fields)


__all__ = ["FieldWaveTraffic", "MemorySideTraffic", "WaveCounts", "WaveSectors", "WaveTraffic", "layer_ranges",
           "partial_store_waits", "traffic_of_counts", "wave_counts", "wave_sectors", "wave_traffic"]
