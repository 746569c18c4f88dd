"""Brute-force twin of warpspeed's data-volume model: enumerate every thread of the representative wave.

Deliberately simple and independent of the estimator's internals (no footprint, l1, isl_volumes or
estimate helpers). It uses only the kernel description (``Kernel``/``Field``/``Access.linear``), the
expression evaluator and substitution, and ``make_launch`` for the occupancy (blocks per SM); the grid,
the wave, the warps, the folded instructions and every count are recomputed here from the semantics in
docs/model.md ("Stages") and docs/outputs.md (what each number counts).

Two independent routes are used on purpose:
- per-warp quantities (L1 cycles, ``l1_load``, ``l2_store``) enumerate threads, folded and
  de-duplicated instructions and warps;
- footprints (block, wave and layer-set sectors and lines) enumerate the valid *cells* of the blocks
  and evaluate the unfolded accesses on them.
Both must agree with the estimator, and therefore with each other.

Not fast: meant for small domains (up to ~64 x 32 x 16 cells) and small waves.
"""

from __future__ import annotations

import math
from collections import Counter

import numpy as np

from warpspeed.expressions import Add, Const, Mul, Var, evaluate, substitute
from warpspeed.model.launch import make_launch


def _triple(v, default=(1, 1, 1)):
    if v is None:
        return tuple(default)
    v = tuple(int(x) for x in v)
    return v + (1,) * (3 - len(v))


def block_coords(ids, grid):
    """(bx, by, bz) of linear block ids, id = bx + gx*(by + gy*bz)."""
    gx, gy, _ = grid
    ids = np.asarray(ids, dtype=np.int64)
    return ids % gx, (ids // gx) % gy, ids // (gx * gy)


# ---------------------------------------------------------------------------------------------------
# Threads, folded instructions, warps
# ---------------------------------------------------------------------------------------------------


def folded_instructions(kernel, folding):
    """Distinct instructions of one thread: list of (field_index, kind, expr, [origins]).

    For every folding origin (a, b, c) and access, the access with tidx -> fx*tidx + a etc.;
    accesses of the same field and kind whose substituted expressions are equal are one instruction.
    """
    fx, fy, fz = folding
    instrs = {}
    for fi, f in enumerate(kernel.fields):
        for kind, accesses in (("load", f.loads), ("store", f.stores)):
            for acc in accesses:
                for c in range(fz):
                    for b in range(fy):
                        for a in range(fx):
                            m = {"tidx": Add((Mul(fx, Var("tidx")), Const(a))),
                                 "tidy": Add((Mul(fy, Var("tidy")), Const(b))),
                                 "tidz": Add((Mul(fz, Var("tidz")), Const(c)))}
                            e = substitute(acc.linear, m)
                            instrs.setdefault((fi, kind, e), []).append((a, b, c))
    return [(fi, kind, e, origins) for (fi, kind, e), origins in instrs.items()]


def block_threads(bcoords, block):
    """Global thread coordinates (nblocks, threads) of the given blocks, threads in x-y-z order."""
    bx, by, bz = (np.asarray(c, dtype=np.int64) for c in bcoords)
    Bx, By, Bz = block
    t = np.arange(Bx * By * Bz, dtype=np.int64)
    tx, ty, tz = t % Bx, (t // Bx) % By, t // (Bx * By)
    return (bx[:, None] * Bx + tx[None, :], by[:, None] * By + ty[None, :], bz[:, None] * Bz + tz[None, :])


def linear_threads(ids, threads, domain):
    """The cells (cx, cy, cz), each (nblocks, threads), of the threads of linear1d blocks ``ids``: thread t of
    the launch updates the t-th cell of the domain linearised x fastest (t past the last cell: z >= nz)."""
    nx, ny, _ = domain
    t = np.asarray(ids, dtype=np.int64)[:, None] * threads + np.arange(threads, dtype=np.int64)[None, :]
    return t % nx, (t // nx) % ny, t // (nx * ny)


def cell_valid(cx, cy, cz, domain):
    nx, ny, nz = domain
    return (cx >= 0) & (cx < nx) & (cy >= 0) & (cy < ny) & (cz >= 0) & (cz < nz)


def byte_address(field, index):
    return (field.offset + np.asarray(index, dtype=np.int64)) * field.element_bytes


def group_cycles(addresses, bank_bytes, banks, pairing_bytes):
    """L1 cycles of one lane group: runs of distinct bank words, each costing its worst bank conflict."""
    words = sorted({int(a) // bank_bytes for a in addresses})
    cost = 0
    run = []
    for w in words:
        if run and (w - run[0]) * bank_bytes >= pairing_bytes:
            cost += max(Counter(x % banks for x in run).values())
            run = []
        run.append(w)
    if run:
        cost += max(Counter(x % banks for x in run).values())
    return cost


# ---------------------------------------------------------------------------------------------------
# Cells and footprints
# ---------------------------------------------------------------------------------------------------


def block_cells(block_id, grid, cells_per_block, domain):
    """Valid cell coordinates (cx, cy, cz) of one block."""
    bx, by, bz = (int(v[0]) for v in block_coords([block_id], grid))
    X, Y, Z = cells_per_block
    cz, cy, cx = np.meshgrid(np.arange(bz * Z, (bz + 1) * Z), np.arange(by * Y, (by + 1) * Y),
                             np.arange(bx * X, (bx + 1) * X), indexing="ij")
    cx, cy, cz = cx.ravel(), cy.ravel(), cz.ravel()
    ok = cell_valid(cx, cy, cz, domain)
    return cx[ok], cy[ok], cz[ok]


def cell_keys(kernel, cells, granularity, loads=True, stores=False):
    """Set of (field_index, address // granularity) of the accesses of the given cells."""
    cx, cy, cz = cells
    out = set()
    if len(cx) == 0:
        return out
    env = {"tidx": cx, "tidy": cy, "tidz": cz}
    for fi, f in enumerate(kernel.fields):
        accesses = (f.loads if loads else ()) + (f.stores if stores else ())
        for acc in accesses:
            addr = byte_address(f, evaluate(acc.linear, env))
            out.update((fi, int(s)) for s in np.unique(addr // granularity))
    return out


def full_store_sectors(kernel, cells, sector):
    """Set of (field_index, sector) whose every element the stores of the given cells write."""
    cx, cy, cz = cells
    written = {}
    if len(cx) == 0:
        return set()
    env = {"tidx": cx, "tidy": cy, "tidz": cz}
    for fi, f in enumerate(kernel.fields):
        for acc in f.stores:
            for a in byte_address(f, evaluate(acc.linear, env)).ravel():
                written.setdefault((fi, int(a) // sector), set()).add(int(a))
    return {key for key, addrs in written.items()
            if len(addrs) * kernel.fields[key[0]].element_bytes >= sector}


def unfinished_B_per_lup(kernel, sector):
    """Per field, the stored sectors that no cell of the whole domain completes, in B per lup of the domain:
    every cell's stores listed. The model counts them where its element range counter applies (and leaves
    them among the partial stores elsewhere): a rule, so the twin asks the same question."""
    from warpspeed.model.range_volumes import ELEMENTS, applies

    if not applies(kernel, ELEMENTS) or any(sector % f.element_bytes for f in kernel.fields):
        return (0.0,) * len(kernel.fields)
    X, Y, Z = kernel.domain
    cells = tuple(a.ravel() for a in np.meshgrid(np.arange(X), np.arange(Y), np.arange(Z), indexing="ij"))
    full = full_store_sectors(kernel, cells, sector)
    touched = cell_keys(kernel, cells, sector, loads=False, stores=True)
    per_field = Counter(fi for fi, _ in touched - full)
    return tuple(per_field[i] * sector / (X * Y * Z) for i in range(len(kernel.fields)))


def cell_rows(kernel, cells, line):
    """Set of (field_index, row) touched by the loads and stores of the cells; row = element // shape[0].

    Only rows that may share a line with the next row count: fields of several dimensions whose rows
    do not all start on a line boundary.
    """
    cx, cy, cz = cells
    out = set()
    if len(cx) == 0:
        return out
    env = {"tidx": cx, "tidy": cy, "tidz": cz}
    for fi, f in enumerate(kernel.fields):
        eb = f.element_bytes
        if len(f.shape) == 1 or ((f.offset * eb) % line == 0 and (f.shape[0] * eb) % line == 0):
            continue
        for acc in f.loads + f.stores:
            rows = np.asarray(evaluate(acc.linear, env), dtype=np.int64) // f.shape[0]
            out.update((fi, int(r)) for r in np.unique(rows))
    return out


def linear_block_cells(block_id, threads, domain):
    """Valid cell coordinates of one linear1d block."""
    cx, cy, cz = (c[0] for c in linear_threads([block_id], threads, domain))
    ok = cell_valid(cx, cy, cz, domain)
    return cx[ok], cy[ok], cz[ok]


class _Blocks:
    """Footprints of single blocks (memoized): loads in sectors, loads+stores in lines, stores, rows."""

    def __init__(self, kernel, grid, cells_per_block, sector, line, linear_threads_per_block=None):
        self.k, self.grid, self.cpb = kernel, grid, cells_per_block
        self.sector, self.line = sector, line
        self.linear = linear_threads_per_block
        self._cache = {}

    def cells(self, block_id):
        if self.linear:
            return linear_block_cells(block_id, self.linear, self.k.domain)
        return block_cells(block_id, self.grid, self.cpb, self.k.domain)

    def get(self, block_id):
        if block_id not in self._cache:
            cells = self.cells(block_id)
            self._cache[block_id] = {
                "load_sectors": cell_keys(self.k, cells, self.sector, loads=True),
                "store_sectors": cell_keys(self.k, cells, self.sector, loads=False, stores=True),
                "full_store_sectors": full_store_sectors(self.k, cells, self.sector),
                "lines": cell_keys(self.k, cells, self.line, loads=True, stores=True),
                "rows": cell_rows(self.k, cells, self.line),
                "lups": len(cells[0]),
            }
        return self._cache[block_id]

    def union(self, ids, what):
        out = set()
        for i in ids:
            out |= self.get(i)[what]
        return out


# ---------------------------------------------------------------------------------------------------
# The twin
# ---------------------------------------------------------------------------------------------------


def brute_force(kernel, device, block, folding=(1, 1, 1), miss_share=None):
    """Every quantity of the volume model by explicit enumeration (see the module docstring).

    ``miss_share``: the wave's share of load sectors that miss the L1 (the capacity stage's L2 load over the
    L1 load, :func:`miss_share_of`), needed where the device prices missed lines
    (``l1_wavefronts_per_missed_line``): a formula, not a count, so it is taken from the estimate."""
    block = _triple(block)
    folding = _triple(folding)
    d = device
    bps = make_launch(kernel, d, block, folding).occupancy.blocks_per_sm  # occupancy only
    domain = kernel.domain
    if kernel.indexing in ("linear1d", "gridstrided_linear1d"):
        return _linear_brute_force(kernel, d, block[0], bps, folding[0], miss_share)
    cpb = tuple(b * f for b, f in zip(block, folding, strict=True))
    grid = tuple(-(-n // c) for n, c in zip(domain, cpb, strict=True))
    gx, gy, gz = grid
    B = gx * gy * gz
    W = bps * d.sm_count
    # the wave: the middle W blocks of the middle row when W fit in a row, of the middle plane when they fit
    # in a plane, else of the grid (a wave of the grid's middle would straddle a plane boundary)
    if W >= B:
        s = 0
    elif W <= gx:
        s = (gz // 2 * gy + gy // 2) * gx + (gx - W) // 2
    elif W <= gx * gy:
        s = gz // 2 * gx * gy + (gx * gy - W) // 2
    else:
        s = (B - W) // 2
    n = min(W, B)
    e = s + n
    wave_ids = list(range(s, e))

    # ---- per-warp quantities: threads, folded instructions, warps ---------------------------------
    instrs = folded_instructions(kernel, folding)
    tx, ty, tz = block_threads(block_coords(wave_ids, grid), block)  # (n, T)
    valid_lups, cycles, warp_load_sectors, warp_store_sectors = _warps(kernel, d, instrs, (tx, ty, tz), folding,
                                                                       miss_share)

    # ---- footprints: valid cells of blocks --------------------------------------------------------
    S1 = d.l1_sector_bytes
    S2, L2 = d.l2_sector_bytes, d.l2_line_bytes
    blocks_l1 = _Blocks(kernel, grid, cpb, S1, L2)
    blocks = blocks_l1 if S1 == S2 else _Blocks(kernel, grid, cpb, S2, L2)

    # layer sets
    if gy > 1:
        ly_ids = [i for i in range(max(0, s - gx), min(s, e - gx)) if block_coords([i], grid)[1][0] < gy - 1]
    else:
        ly_ids = []
    if gz > 1:
        lz_ids = list(range(max(0, s - gx * gy), min(s, e - gx * gy)))
    else:
        lz_ids = []
    f_y = blocks.union(ly_ids, "load_sectors")
    # start of the y-layer id range before dropping blocks of a plane's last row (for tests' coverage)
    y_start = max(0, s - gx) if gy > 1 and max(0, s - gx) < min(s, e - gx) else None
    out = _footprints(kernel, blocks_l1, blocks, wave_ids, valid_lups, ly_ids, f_y, lz_ids, gx * gy)
    out.update(_warp_values(d, grid, s, n, bps, instrs, cycles, valid_lups, warp_load_sectors, warp_store_sectors))
    out["layer_y_range_start"] = y_start
    return _with_waits(out)


def _with_waits(out):
    """The waits of the partially written sectors: one, and one more for each writer beyond two in the share
    1 - 1/blocks per SM of it (docs/model.md, "Partial stores")."""
    partial, later, bps = out["partial_sectors"], out["partial_later_writes"], out["blocks_per_sm"]
    out["partial_waits"] = 1.0 + max(0.0, later / partial - 1.0) * (1.0 - 1.0 / bps) if partial else 1.0
    return out


def _warp_values(d, grid, s, n, bps, instrs, cycles, valid_lups, warp_load_sectors, warp_store_sectors):
    per = 1.0 / valid_lups
    return {"grid": grid, "wave_start": s, "wave_blocks": n, "blocks_per_sm": bps, "instructions": len(instrs),
            "l1_cycles": cycles,
            "l1_cycles_per_warp_lup": cycles * d.warp_size * per,  # per warp of the device's lanes
            "l1_load": warp_load_sectors * d.l1_sector_bytes * per,
            "l2_store": warp_store_sectors * d.l1_sector_bytes * per}


def _linear_brute_force(kernel, d, N, bps, K=1, miss_share=None):
    """The twin of a linear1d kernel: thread t of the one-dimensional launch updates the t-th cell of the
    domain linearised x fastest; blocks of N threads hold N consecutive cells (wrapping rows and planes).

    A gridstrided_linear1d kernel with K iterations per thread launches G = cells / (N K) blocks, rounded up;
    block b in iteration i updates the cells of the linear1d block i G + b (the ids below). Its wave is its
    resident blocks, at most G; where more blocks than are resident loop more than once, the layers count only
    the wave's own blocks' previous iteration, G ids before."""
    nx, ny, nz = domain = kernel.domain
    cells = nx * ny * nz
    B = -(-cells // N)
    G = -(-cells // (N * K))
    W = min(bps * d.sm_count, G)
    # the wave's W*N cells in the middle row of cells when they fit in one, in the middle plane when they fit
    # in one, else in the middle of the domain; from the block that holds the first of them
    if W >= B:
        s = 0
    else:
        if W * N <= nx:
            first, size = ((nz // 2) * ny + ny // 2) * nx, nx
        elif W * N <= nx * ny:
            first, size = (nz // 2) * nx * ny, nx * ny
        else:
            first, size = 0, cells
        s = min((first + (size - W * N) // 2) // N, B - W)
    n = min(W, B)
    e = s + n
    wave_ids = list(range(s, e))
    instrs = folded_instructions(kernel, (1, 1, 1))
    valid_lups, cycles, warp_load_sectors, warp_store_sectors = _warps(
        kernel, d, instrs, linear_threads(wave_ids, N, domain), (1, 1, 1), miss_share)
    S1 = d.l1_sector_bytes
    S2, L2 = d.l2_sector_bytes, d.l2_line_bytes
    blocks_l1 = _Blocks(kernel, (B, 1, 1), (N, 1, 1), S1, L2, N)
    blocks = blocks_l1 if S1 == S2 else _Blocks(kernel, (B, 1, 1), (N, 1, 1), S2, L2, N)

    def holding(shift):
        """The blocks before the wave that hold a cell ``shift`` cells before one of the wave's."""
        return sorted({(c - shift) // N for c in range(s * N, min(e * N, cells)) if 0 <= c - shift} - set(wave_ids))

    rows = N // nx if N % nx == 0 else 1  # the rows of one block, where it holds whole rows
    ly_ids = holding(nx) if ny > 1 and N < nx * ny else []
    while ly_ids and (ly_ids[0] * N // nx) % ny >= ny - rows:  # starts in a plane's last rows: no row's predecessor
        ly_ids.pop(0)
    lz_ids = holding(nx * ny) if nz > 1 and N < cells else []
    plane_blocks = -(-(nx * ny) // N)
    if kernel.indexing == "gridstrided_linear1d" and K > 1 and G > n:  # the previous iteration of the wave's blocks
        ly_ids = [i for i in ly_ids if s - G <= i < s - G + n]
        lz_ids = [i for i in lz_ids if s - G <= i < s - G + n]
        plane_blocks = n
    f_y = set()
    for i in ly_ids:  # of the y layer, the cells below a plane's last rows
        cx, cy, cz = blocks.cells(i)
        below = cy < ny - rows
        f_y |= cell_keys(kernel, (cx[below], cy[below], cz[below]), S2, loads=True)
    out = _footprints(kernel, blocks_l1, blocks, wave_ids, valid_lups, ly_ids, f_y, lz_ids, plane_blocks)
    out.update(_warp_values(d, (G, 1, 1), s, n, bps, instrs, cycles, valid_lups, warp_load_sectors,
                            warp_store_sectors))
    out["layer_y_range_start"] = None
    return _with_waits(out)


def _warps(kernel, d, instrs, threads, folding, miss_share=None):
    """Valid lups, L1 cycles and the warps' load and store sectors of the threads (tx, ty, tz: (n, T) each);
    ``miss_share`` as for :func:`brute_force`."""
    tx, ty, tz = threads
    domain = kernel.domain
    n, T = tx.shape
    fx, fy, fz = folding
    valid_lups = 0
    for c in range(fz):
        for b in range(fy):
            for a in range(fx):
                valid_lups += int(cell_valid(fx * tx + a, fy * ty + b, fz * tz + c, domain).sum())

    ws = d.warp_size
    S1 = d.l1_sector_bytes
    cycles = 0
    warp_load_sectors = 0
    warp_store_sectors = 0
    line_rule = d.l1_load_lines_per_wavefront is not None  # Hopper: bank cost + 1/k per further line
    busy_warps = set()
    for fi, kind, expr, origins in instrs:
        f = kernel.fields[fi]
        addr = byte_address(f, evaluate(expr, {"tidx": tx, "tidy": ty, "tidz": tz}))
        active = np.zeros(tx.shape, dtype=bool)
        for a, b, c in origins:
            active |= cell_valid(fx * tx + a, fy * ty + b, fz * tz + c, domain)
        group = min(ws, max(1, d.lsu_bytes_per_cycle(f.element_bytes) // f.element_bytes))
        for bi in range(n):
            for w0 in range(0, T, ws):
                lanes = range(w0, min(w0 + ws, T))
                warp_addrs = [int(addr[bi, t]) for t in lanes if active[bi, t]]
                if warp_addrs:
                    busy_warps.add((bi, w0))
                sectors = len({x // S1 for x in warp_addrs})
                if kind == "load":
                    warp_load_sectors += sectors
                else:
                    warp_store_sectors += sectors
                bank = 0
                for g0 in range(w0, min(w0 + ws, T), group):
                    g_addrs = [int(addr[bi, t]) for t in range(g0, min(g0 + group, w0 + ws, T))
                               if active[bi, t]]
                    bank += group_cycles(g_addrs, d.l1_bank_bytes, d.l1_banks,
                                         float("inf") if line_rule else d.l1_pairing_distance_bytes)
                cycles += bank
                if line_rule:
                    per_line = 1 / (d.l1_load_lines_per_wavefront if kind == "load" else
                                    d.l1_store_lines_per_wavefront)
                    if kind == "load" and d.l1_wavefronts_per_missed_line is not None:
                        if miss_share is None:
                            raise ValueError(f"{d.id} prices missed L1 lines: give brute_force a miss_share")
                        per_line = (1 - miss_share) * per_line + miss_share * d.l1_wavefronts_per_missed_line
                    lines = len({x // d.l1_line_bytes for x in warp_addrs})
                    cycles += max(lines - bank, 0) * per_line

    if line_rule:
        cycles += (d.l1_wavefronts_per_warp or 0) * len(busy_warps)
    return valid_lups, cycles, warp_load_sectors, warp_store_sectors


def _footprints(kernel, blocks_l1, blocks, wave_ids, valid_lups, ly_ids, f_y, lz_ids, plane_blocks):
    """The block, wave and layer counts of the wave's blocks (``f_y``: the y layer's sectors that count)."""
    S1, S2, L2 = blocks_l1.sector, blocks.sector, blocks.line
    e = wave_ids[-1] + 1
    cell_lups = sum(blocks.get(i)["lups"] for i in wave_ids)
    assert cell_lups == valid_lups, (cell_lups, valid_lups)
    block_load_sectors = 0
    for i in wave_ids:
        block_load_sectors += len(blocks_l1.get(i)["load_sectors"])  # per field: keys carry the field
    f_wave = blocks.union(wave_ids, "load_sectors")
    wave_stores = blocks.union(wave_ids, "store_sectors")
    f_z = blocks.union(lz_ids, "load_sectors")
    over_y = f_y & f_wave
    over_z = (f_z & f_wave) - f_y

    def alloc(first, last):
        """Distinct 128 B lines (loads and stores) of the blocks [first, last), and the rows they touch."""
        ids = range(first, last)
        return len(blocks.union(ids, "lines")) * L2, len(blocks.union(ids, "rows"))

    # the y layer waits for its reuse through the row and the whole wave; the z layer through the block
    # plane from its first block on (each wave block's z neighbour is one plane before it)
    y_alloc, y_rows = alloc(min(ly_ids), e) if ly_ids else (0, 0)
    z_alloc, z_rows = alloc(min(lz_ids), min(lz_ids) + plane_blocks) if lz_ids else (0, 0)
    # the partially written sectors' writers: the blocks' stored sectors, each sector once per block
    written = sum(len(blocks.get(i)["store_sectors"]) for i in wave_ids)
    partial = max(0, len(wave_stores) - sum(len(blocks.get(i)["full_store_sectors"]) for i in wave_ids))
    unfinished = unfinished_B_per_lup(kernel, S2)

    per = 1.0 / valid_lups
    return {
        "valid_lups": valid_lups,
        "l2_load_compulsory": block_load_sectors * S1 * per,
        # the stored sectors no cell completes are read once to merge: with the compulsory load
        "dram_load_compulsory": len(f_wave) * S2 * per + sum(unfinished),
        "dram_store": len(wave_stores) * S2 * per,
        "layer_y_blocks": len(ly_ids),
        "layer_z_blocks": len(lz_ids),
        "layer_y_potential": len(over_y) * S2 * per,
        "layer_y_alloc_bytes": y_alloc,
        "layer_z_potential": len(over_z) * S2 * per,
        "layer_z_alloc_bytes": z_alloc,
        # what pushes the partial sectors out: the wave's stored volume
        "partial_alloc_bytes": len(wave_stores) * S2,
        "partial_later_writes": written - len(wave_stores),
        # detail: rows touched by each allocation range (known_deviations), the unfiltered Ly range start
        "layer_y_alloc_rows": y_rows,
        "layer_z_alloc_rows": z_rows,
        "layer_y_first": min(ly_ids) if ly_ids else None,
        "line_bytes": L2,
        # stored sectors that no block writes completely (their blocks' share of them is partial); none where
        # blocks write the same sectors completely more than once (two stores a row apart, rows of blocks)
        "partial_stores": max(0.0, partial * S2 * per - sum(unfinished)),
        "partial_sectors": partial,
    }


def miss_share_of(est):
    """The estimate's share of load sectors that miss the L1 (L2 load / L1 load, clipped to 0-1)."""
    v = est.volumes_B_per_lup
    return min(max(v["l2_load"] / v["l1_load"], 0.0), 1.0) if v["l1_load"] else 0.0


def from_estimate(est):
    """The same quantities as the estimator reports them (keys as in ``brute_force``)."""
    v = est.volumes_B_per_lup
    return {
        "grid": tuple(est.grid),
        "wave_blocks": est.wave_blocks,
        "blocks_per_sm": est.occupancy.blocks_per_sm,
        "valid_lups": est.wave_valid_lups,
        "l1_cycles_per_warp_lup": est.l1_cycles_per_warp_lup,
        "l1_load": v["l1_load"],
        "l2_store": v["l2_store"],
        "l2_load_compulsory": v["l2_load_compulsory"],
        "dram_load_compulsory": v["dram_load_compulsory"],
        # the unique stored sectors (the estimate adds the partial-store misses, tested analytically: those of
        # the memory-side cache where the device has one, tests/model/test_memory_side_cache.py)
        "dram_store": v["dram_store"] - (est.memory_side or est).partial_stores.miss_B_per_lup,
        "layer_y_potential": est.layer_y.potential_B_per_lup,
        "layer_y_alloc_bytes": est.layer_y.allocated_bytes,
        "layer_z_potential": est.layer_z.potential_B_per_lup,
        "layer_z_alloc_bytes": est.layer_z.allocated_bytes,
        "partial_alloc_bytes": est.partial_stores.allocated_bytes,
        "partial_waits": est.partial_stores.waits,
        "partial_stores": est.partial_stores.potential_B_per_lup,
    }


COMPARED = ("grid", "wave_blocks", "blocks_per_sm", "valid_lups", "l1_cycles_per_warp_lup", "l1_load",
            "l2_store", "l2_load_compulsory", "dram_load_compulsory", "dram_store", "layer_y_potential",
            "layer_y_alloc_bytes", "layer_z_potential", "layer_z_alloc_bytes", "partial_alloc_bytes",
            "partial_stores", "partial_waits")


def mismatches(bf, est_values, keys=COMPARED):
    """Keys whose values differ (relative 1e-12 for floats): {key: (brute_force, estimate)}."""
    out = {}
    for k in keys:
        a, b = bf[k], est_values[k]
        if isinstance(a, tuple) or isinstance(b, tuple):
            same = tuple(a) == tuple(b)
        else:
            same = math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)
        if not same:
            out[k] = (a, b)
    return out


ALLOC_KEYS = ("layer_y_alloc_bytes", "layer_z_alloc_bytes")

# Known, reported deviations of the estimator from the spec that are not fixed yet. The flag widens the
# comparison of the affected keys to the documented bound (see known_deviations); set it to False once
# the fix lands. The strict xfail test in test_bruteforce.py reports (XPASS) when that happens.
KNOWN_ALLOC_LINES_APPROX = True  # estimate.py: allocation lines counted with Footprints(exact=False)


def known_deviations(bf):
    """{key: (lo, hi)}: the estimator's value must lie in [lo, hi] instead of equalling bf[key].

    Allocation lines are counted without merging a 128 B line shared by two rows of a field
    (``Footprints(..., exact=False)``): such a line counts once per row, so the estimate may exceed the
    distinct lines by at most one line per row touched (rows of fields whose rows are not line aligned).
    """
    out = {}
    for key, rows in (("layer_y_alloc_bytes", "layer_y_alloc_rows"),
                      ("layer_z_alloc_bytes", "layer_z_alloc_rows")):
        if KNOWN_ALLOC_LINES_APPROX and bf[rows]:
            out[key] = (bf[key], bf[key] + bf["line_bytes"] * bf[rows])
    return out


def compare(bf, est_values, keys=COMPARED):
    """Mismatches like ``mismatches``, with known deviations checked against their bound instead."""
    known = known_deviations(bf)
    out = mismatches(bf, est_values, [k for k in keys if k not in known])
    for k, (lo, hi) in known.items():
        if k in keys and not lo <= est_values[k] <= hi:
            out[k] = (bf[k], est_values[k], f"outside the known-deviation bound [{lo}, {hi}]")
    return out
