"""What the H100 counters of the two sweeps with diagonal neighbours (box3d-r1, D3Q27 TRT; tests/data/hopper)
show about the model's misses (docs/model.md, "Assumptions and limits"): held here so that a model change
aimed at them can see which ones it explains. Deterministic: no timing, no GPU."""

import functools
from pathlib import Path

import numpy as np
import pytest

import warpspeed
from warpspeed.expressions import evaluate
from warpspeed.measurement.calibration import fit_l1_line_rule
from warpspeed.measurement.measurements import read_measurements
from warpspeed.measurement.validation import estimate_measurements, measured_value, predicted_value, spearman, validate
from warpspeed.model.estimate import l1_line_costs
from warpspeed.model.footprint import folded_instructions

DATA = Path(__file__).resolve().parents[1] / "data" / "hopper"


@functools.cache
def _pairs(name: str, kernel: str) -> list:
    return next(r for r in validate(read_measurements(DATA / name)) if r.kernel == kernel).pairs


def _box():
    return _pairs("box3d-r1-H100.csv", "box3d-r1")


def _footprint(p) -> float:
    """The block's compulsory L2 load (B/lup): the model's L2 load less its L1 capacity misses."""
    return predicted_value(p, "l2_load") - p.estimate.l1_capacity.miss_B_per_lup


def test_box_blocks_that_fit_the_l1_load_their_footprint_and_the_anchored_curve_keeps_it():
    """Where the resident blocks' lines fit the L1 (O <= 0.75: 26 blocks, all >= 2 wide) the L2 load measures
    the block's footprint (median 1.02x). The L1 curve fitted with a free level (until 2026-11-27) lost 1.1 %
    of the redundant loads at O -> 0, which box3d-r1 has 2-13x its footprint of: 3-19 % too much, 11 of the
    26 blocks off by more than 10 %. calibrate now fits the L1 curve with hit(0) = 1 (a = e^b; refitted to the
    same pooled star3d-r4 and LBM rows, box3d-r1 not among them): all 26 within 10 % (0.94-1.08x)."""
    fit = [p for p in _box() if p.estimate.l1_capacity.oversubscription <= 0.75]
    assert len(fit) == 26 and min(p.measured.block[0] for p in fit) >= 2
    measured = [measured_value(p, "l2_load") / _footprint(p) for p in fit]
    predicted = [predicted_value(p, "l2_load") / _footprint(p) for p in fit]
    assert 0.99 <= float(np.median(measured)) <= 1.03
    assert 1.0 <= min(predicted) and max(predicted) <= 1.13
    assert warpspeed.device("H100-SXM5-80GB").hit_rates.l1(0.0) == 1.0
    assert all(2 <= p.estimate.l1_capacity.potential_B_per_lup / _footprint(p) <= 14 for p in fit)
    ratios = [predicted_value(p, "l2_load") / measured_value(p, "l2_load") for p in fit]
    assert 0.93 <= min(ratios) and max(ratios) <= 1.08


def test_narrow_box_blocks_with_one_oversubscription_lose_very_different_shares():
    """1x4x64 and 1x64x4 allocate the same lines (O = 1.80) and are predicted the same L2 load; a warp of the
    first spans 8 planes, of the second one plane of 32 rows, and it loads 2.2x as much from the L2. The
    blocks 1-4 wide of one plane or 32 rows per warp keep 63-86 % of their redundant loads where the curve
    says 93-98 % (95-98 % before the L1 curve was anchored at hit(0) = 1): the oversubscription alone does not
    tell."""
    by = {p.measured.block: p for p in _box()}
    a, b = by[(1, 4, 64)], by[(1, 64, 4)]
    assert a.estimate.l1_capacity.allocated_bytes == b.estimate.l1_capacity.allocated_bytes
    assert predicted_value(a, "l2_load") == predicted_value(b, "l2_load")
    assert measured_value(b, "l2_load") / measured_value(a, "l2_load") > 2.2
    for block in ((1, 32, 8), (1, 64, 4), (1, 128, 2), (1, 256, 1), (2, 128, 1), (4, 64, 1)):
        p, c = by[block], by[block].estimate.l1_capacity
        kept = 1 - (measured_value(p, "l2_load") - _footprint(p)) / c.potential_B_per_lup
        assert 0.62 <= kept <= 0.87 < 0.92 <= c.hit_rate, block


def test_narrow_box_blocks_cost_l1_wavefronts_with_their_l1_misses():
    """Blocks 1 and 2 cells wide: the model gives one L1 cost per width (382 and 200-237 wavefronts per 32
    lups), the measured cost follows the sectors the L1 misses, about 0.65 wavefronts more per missed sector
    (1 wide: 257-475, rank correlation with the L2 load 0.96)."""
    for width, predicted in ((1, {382}), (2, {200, 237})):
        ps = [p for p in _box() if p.measured.block[0] == width]
        assert {round(predicted_value(p, "l1_cycles")) for p in ps} == predicted
        l2 = [measured_value(p, "l2_load") for p in ps]  # B/lup = missed sectors per 32 lups
        l1 = [measured_value(p, "l1_cycles") for p in ps]
        slope, _ = np.polyfit(l2, l1, 1)
        assert 0.55 <= slope <= 0.75, width
    ones = [p for p in _box() if p.measured.block[0] == 1]
    assert spearman([measured_value(p, "l1_cycles") for p in ones], [measured_value(p, "l2_load") for p in ones]) > 0.95


def test_the_dram_excess_of_narrow_lbm_blocks_came_with_256_threads_not_with_diagonals():
    """With the partial-store curve of the wave's lines (until 2026-11-27), D3Q27's DRAM load was 15-16 % above
    the model in blocks 1-2 cells wide, and so was that of D3Q19 and D3Q15 (no diagonal populations) in blocks of
    256 threads (12-16 %), while their blocks of 512 threads were within 2 % and of 128 threads 5-8 %: a
    block-size effect that the diagonal neighbours share. With the wave's stored volume as O, writers that wait
    again and the sectors no cell completes read once, the median of those blocks is within 10 % in every sweep
    (D3Q27 1.10, the 256-thread D3Q19 and D3Q15 on both GPUs 1.05-1.07)."""
    def excess(name, kernel, threads=None):
        ps = [p for p in _pairs(name, kernel) if p.measured.block[0] <= 2
              and (threads is None or int(np.prod(p.measured.block)) == threads)]
        return float(np.median([measured_value(p, "dram_load") / predicted_value(p, "dram_load") for p in ps]))

    assert 1.08 <= excess("d3q27-trt-H100.csv", "lbm:stencil=D3Q27,method=trt") <= 1.1
    for gpu in ("H100", "H200"):
        for kernel in ("d3q19-srt", "d3q15-allen-cahn"):
            assert 1.04 <= excess(f"occupancy-lbm-{gpu}.csv", kernel, 256) <= 1.08, (gpu, kernel)
            assert 0.98 <= excess(f"occupancy-lbm-{gpu}.csv", kernel, 128) <= 1.04, (gpu, kernel)
            assert 0.98 <= excess(f"lbm-{gpu}.csv", kernel) <= 1.09, (gpu, kernel)


def _reuse_gaps(kernel: str, domain: tuple[int, int, int], block: tuple[int, int, int]) -> dict[str, float]:
    """How many instructions apart a warp re-reads its sectors, counted lane by lane (no model stage): the shares
    of the L1 requests (sectors per warp instruction) that re-read a sector the same warp read at most 1, or
    2-3 instructions before, and those whose sector another warp of the block read first; averaged over 16
    x positions of the block in a line."""
    k = warpspeed.find_kernel(kernel, domain=domain)
    loads = [ins for ins in folded_instructions(k, (1, 1, 1)) if not ins.store]
    t = np.arange(int(np.prod(block)))
    lanes = {"tidx": t % block[0], "tidy": (t // block[0]) % block[1], "tidz": t // (block[0] * block[1])}
    counts = {"next": 0, "gap2-3": 0, "other warp": 0, "requests": 0}
    for x in range(16):
        env = {**lanes, "tidx": lanes["tidx"] + x, "tidy": lanes["tidy"] + 8, "tidz": lanes["tidz"] + 8}
        sectors = [np.broadcast_to(evaluate(ins.thread_expr, env), t.shape) * ins.element_bytes // 32
                   for ins in loads]
        block_seen: set[int] = set()
        for w in range(len(t) // 32):
            last: dict[int, int] = {}
            for i, s in enumerate(sectors):
                warp = set(s[32 * w:32 * w + 32].tolist())
                counts["requests"] += len(warp)
                for sector in warp:
                    gap = i - last.get(sector, -99)
                    counts["next"] += gap <= 1
                    counts["gap2-3"] += 2 <= gap <= 3
                    counts["other warp"] += sector not in last and sector in block_seen
                    last[sector] = i
            block_seen |= set(last)
    return {key: n / counts["requests"] for key, n in counts.items() if key != "requests"}


def test_narrow_blocks_keep_what_their_warps_reread_at_the_next_instruction():
    """What separates the narrow blocks that lose redundant loads (not yet in the model): how many instructions
    apart a warp re-reads a sector. Each instruction of a warp one cell wide touches 32 lines; box3d-r1 loads
    its 27 neighbours z fastest, so warps spanning one plane (1x32x8 ... 1x256x1) re-read every sector 3
    instructions later and keep 63-85 % of their redundant loads, while 1x4x64 and 1x8x32 (8 and 4 planes per
    warp) re-read 62-73 % of their requests at the next instruction and keep 96.5 %. star3d-r4's warps one
    cell wide re-read theirs 1-3 instructions apart, and its 1x256x1 blocks (no plane shared by two warps)
    keep 95 % at O = 9.8, where box3d-r1's keep 63 % at O = 3.5: the oversubscription of the resident blocks
    does not tell, the lines the SM's warps touch between two reads of a sector may (about the instructions
    apart x 32 lines x the warps interleaved; both kernels have 64 resident warps per SM there)."""
    by = {p.measured.block: p for p in _box()}

    def kept(p) -> float:
        return 1 - (measured_value(p, "l2_load") - _footprint(p)) / p.estimate.l1_capacity.potential_B_per_lup

    for block in ((1, 32, 8), (1, 256, 1)):
        gaps = _reuse_gaps("box3d-r1", (512, 512, 512), block)
        assert gaps["next"] == 0 and gaps["gap2-3"] > 0.78, block
        assert kept(by[block]) < 0.85
    for block in ((1, 4, 64), (1, 8, 32)):
        assert _reuse_gaps("box3d-r1", (512, 512, 512), block)["next"] > 0.6, block
        assert kept(by[block]) > 0.96
    star = _reuse_gaps("star3d-r4", (640, 512, 512), (1, 256, 1))
    assert star["next"] > 0.29 and star["other warp"] < 0.01
    (s,) = [p for p in _pairs("occupancy-star3d-r4-H100.csv", "star3d-r4") if p.measured.block == (1, 256, 1)]
    assert kept(s) > 0.95 and s.estimate.l1_capacity.oversubscription > 9.5
    assert kept(by[(1, 256, 1)]) < 0.65 and by[(1, 256, 1)].estimate.l1_capacity.oversubscription < 3.6


def _partial_miss(p) -> float:
    """The measured share of the partially written sectors lost from the L2 before their last writer: the DRAM
    store beyond the unique stored sectors, over the partial sectors (both as the model counts them)."""
    ps = p.estimate.partial_stores
    unique = predicted_value(p, "dram_store") - ps.miss_B_per_lup
    return (measured_value(p, "dram_store") - unique) / ps.potential_B_per_lup


def _median_miss(name, kernel, width, threads=None) -> float:
    ps = [p for p in _pairs(name, kernel) if p.measured.block[0] == width and p.measured.folding == (1, 1, 1)
          and (threads is None or int(np.prod(p.measured.block)) == threads)]
    return float(np.median([_partial_miss(p) for p in ps]))


def test_the_dram_excess_of_narrow_lbm_blocks_is_their_partial_stores_lost():
    """The DRAM load beyond the model's without partial-store misses, in LBM blocks 1-2 cells wide, is the read
    that merges a partially written sector lost from the L2 (every sector of such a block's rows is written by 3-4
    blocks): of the 50-87 B/lup that the DRAM load exceeds that model by (256 threads per block), the DRAM store,
    which such a miss writes once more, exceeds it by all but -2 to 10 B/lup. D3Q27 loses 23-24 % of its
    partial sectors where the model says 15-16 % (12 % with the partial-store curve of the wave's lines, until
    2026-11-27; with one block per SM its four-writer sectors wait once: docs/model.md, step 5)."""
    cases = [("d3q27-trt-H100.csv", "lbm:stencil=D3Q27,method=trt", None),
             ("occupancy-lbm-H100.csv", "d3q19-srt", 256), ("occupancy-lbm-H100.csv", "d3q15-allen-cahn", 256)]
    for name, kernel, threads in cases:
        for p in _pairs(name, kernel):
            if p.measured.block[0] > 2 or (threads and int(np.prod(p.measured.block)) != threads):
                continue
            ps = p.estimate.partial_stores
            load_excess = measured_value(p, "dram_load") - (predicted_value(p, "dram_load") - ps.miss_B_per_lup)
            store_excess = measured_value(p, "dram_store") - (predicted_value(p, "dram_store") - ps.miss_B_per_lup)
            assert 50 <= load_excess <= 88 and -2 <= load_excess - store_excess <= 10, (kernel, p.measured.block)
            assert ps.potential_B_per_lup > 0.95 * (predicted_value(p, "dram_store") - ps.miss_B_per_lup)
    d3q27 = ("d3q27-trt-H100.csv", "lbm:stencil=D3Q27,method=trt")
    for width in (1, 2):
        assert 0.22 <= _median_miss(*d3q27, width) <= 0.25
        p = next(p for p in _pairs(*d3q27) if p.measured.block[0] == width)
        assert 0.15 <= 1 - p.estimate.partial_stores.hit_rate <= 0.16 and p.estimate.partial_stores.waits == 1.0


def test_partial_sectors_are_lost_to_stores_not_to_loads():
    """star3d-r4 blocks 1 cell wide (four blocks write a sector) keep 95-100 % of their partial sectors in every
    wave, also those 2 wide whose waves load 0.85-1.02x the L2 (a thin block reads 9 planes): the wave's loaded
    lines do not push them out. LBM waves, half of whose lines are stored, lose 16-25 % of the two-writer
    sectors of blocks 8 wide with one block per SM."""
    for name in ("star3d-r4-H100.csv", "star3d-r4-H200.csv"):
        for p in _pairs(name, "star3d-r4"):
            if p.measured.block[0] * p.measured.folding[0] <= 2 and p.estimate.partial_stores.potential_B_per_lup > 0:
                assert _partial_miss(p) <= 0.16, p.label
        thin = [p for p in _pairs(name, "star3d-r4") if p.measured.block in ((2, 512, 1), (2, 256, 2))]
        assert thin and all(abs(_partial_miss(p)) <= 0.02 for p in thin)
    for name, kernel in (("lbm-H100.csv", "d3q19-srt"), ("lbm-H100.csv", "d3q15-allen-cahn"),
                         ("d3q27-trt-H100.csv", "lbm:stencil=D3Q27,method=trt")):
        assert 0.15 <= _median_miss(name, kernel, 8) <= 0.26, kernel


def test_with_several_blocks_per_sm_each_further_writer_waits_again():
    """LBM blocks 1 cell wide (four writers per sector) against 8 wide (two writers), at the same wave: with two
    or five blocks per SM the four-writer sectors lose about what three independent waits lose, 1 - (1 - m8)^3
    (within 0.11); with one block per SM D3Q19 loses no more than with two writers (both GPUs), while D3Q15 and
    D3Q27 lose 1.4-3x as much: no rule of the blocks per SM alone holds for both."""
    for gpu in ("H100", "H200"):
        for kernel in ("d3q19-srt", "d3q15-allen-cahn"):
            for threads in (128, 256):
                m1 = _median_miss(f"occupancy-lbm-{gpu}.csv", kernel, 1, threads)
                m8 = _median_miss(f"occupancy-lbm-{gpu}.csv", kernel, 8, threads)
                assert m1 > 1.5 * m8 and abs(m1 - (1 - (1 - m8) ** 3)) <= 0.11, (gpu, kernel, threads)
        m1, m8 = _median_miss(f"lbm-{gpu}.csv", "d3q19-srt", 1), _median_miss(f"lbm-{gpu}.csv", "d3q19-srt", 8)
        assert m1 <= 1.15 * m8, gpu
    for name, kernel in (("lbm-H100.csv", "d3q15-allen-cahn"), ("lbm-H200.csv", "d3q15-allen-cahn"),
                         ("d3q27-trt-H100.csv", "lbm:stencil=D3Q27,method=trt")):
        assert 1.35 <= _median_miss(name, kernel, 1) / _median_miss(name, kernel, 8) <= 3.2, (name, kernel)


# the missed-line price that the counters point to (docs/model.md, "Diagonal neighbours"): a further load line
# costs 1/7 wavefront, 0.84 where it misses the L1, a further store line 1/32, every warp 4
PRICED = dict(l1_load_lines_per_wavefront=7, l1_store_lines_per_wavefront=32, l1_wavefronts_per_warp=4,
              l1_wavefronts_per_missed_line=0.84)
SWEEP_FILES = ("star3d-r4-H100.csv", "star3d-r4-H200.csv", "occupancy-star3d-r4-H100.csv",
               "occupancy-star3d-r4-H200.csv", "lbm-H100.csv", "lbm-H200.csv", "occupancy-lbm-H100.csv",
               "occupancy-lbm-H200.csv", "box3d-r1-H100.csv", "d3q27-trt-H100.csv")


@functools.cache
def _priced(name: str) -> dict:
    """Per sweep of a file, the share of configurations within 10 % of ncu's wavefronts: today, and with the
    L1 cycles of PRICED at the predicted and at the measured share of missed load sectors (L2 / L1 load)."""
    rows = read_measurements(DATA / name)
    base = {m.device: warpspeed.device(m.device) for m in rows}
    runs = [validate(rows, devices={k: d.with_overrides(**over) for k, d in base.items()})
            for over in ({}, PRICED, {**PRICED, "l1_wavefronts_per_missed_line": 1 / 7})]
    out = {}
    for today, priced, unpriced in zip(*runs, strict=True):
        shares = {"today": [], "predicted": [], "measured": []}
        for p, q, u in zip(today.pairs, priced.pairs, unpriced.pairs, strict=True):
            measured = measured_value(p, "l1_cycles")
            f_pred = min(predicted_value(q, "l2_load") / predicted_value(q, "l1_load"), 1.0)
            f_meas = min(measured_value(p, "l2_load") / measured_value(p, "l1_load"), 1.0)
            hit, at_pred = predicted_value(u, "l1_cycles"), predicted_value(q, "l1_cycles")
            at_meas = hit + (at_pred - hit) * f_meas / f_pred if f_pred else hit
            for key, cycles in (("today", predicted_value(p, "l1_cycles")), ("predicted", at_pred),
                                ("measured", at_meas)):
                shares[key].append(abs(cycles / measured - 1) <= 0.1)
        out[today.kernel] = {k: float(np.mean(v)) for k, v in shares.items()}
    return out


def test_further_load_lines_that_miss_the_l1_cost_most_of_the_diagonal_sweeps_wavefronts():
    """Priced per missed line (PRICED) with the measured share of missed load sectors, box3d-r1 and D3Q27 come
    within 10 % of ncu's wavefronts for 88 % of their blocks (55 and 74 % today) and no other sweep of either
    GPU loses more than a point. With the capacity stage's predicted misses they reach 76 and 67 %, and
    d3q15-allen-cahn with 512 threads drops from 76-80 % to 65-67 %: that stage counts every sector of a
    narrow LBM block a miss where 83-96 % miss, which is why no Hopper file gives the price yet."""
    shares = {(name, kernel): s for name in SWEEP_FILES for kernel, s in _priced(name).items()}
    for (name, kernel), s in shares.items():
        if name.startswith(("box3d", "d3q27")):
            assert s["today"] <= 0.75 and s["measured"] >= 0.87, (name, kernel, s)
        else:
            assert s["measured"] >= s["today"] - 0.015, (name, kernel, s)
    box, d3q27 = shares["box3d-r1-H100.csv", "box3d-r1"], shares["d3q27-trt-H100.csv", "lbm:stencil=D3Q27,method=trt"]
    assert 0.74 <= box["predicted"] <= 0.78 and 0.65 <= d3q27["predicted"] <= 0.69
    for gpu in ("H100", "H200"):
        s = shares[f"lbm-{gpu}.csv", "d3q15-allen-cahn"]
        assert s["predicted"] <= 0.68 < 0.75 <= s["today"]
    narrow = [p for p in _pairs("lbm-H100.csv", "d3q19-srt") if p.measured.block[0] <= 2]
    kept = [measured_value(p, "l2_load") / predicted_value(p, "l1_load") for p in narrow]
    assert 0.82 <= min(kept) and max(kept) <= 0.97
    assert all(predicted_value(p, "l2_load") == pytest.approx(predicted_value(p, "l1_load")) for p in narrow)


def test_a_cost_per_missed_sector_helps_no_sweep():
    """Added to today's line rule over whole sweeps, 0.1 wavefront per sector of the predicted L2 load takes
    star3d-r4 (H100) from 94 % of the configurations within 10 % of ncu's wavefronts to under 80 % and
    d3q19-srt to under 20 %; and box3d-r1 stays at or below today's 55 % whatever the cost per sector
    (0.05-0.65), even with the measured misses in place of the predicted ones (its L2 load, or the part beyond
    its footprint): no capacity stage could make this term fit."""
    def share(name, kernel, c, missed):
        ps = _pairs(name, kernel)
        return float(np.mean([abs((predicted_value(p, "l1_cycles") + c * missed(p)) / measured_value(p, "l1_cycles")
                                  - 1) <= 0.1 for p in ps]))

    def predicted(p):
        return predicted_value(p, "l2_load")

    def measured(p):
        return measured_value(p, "l2_load")

    def beyond_footprint(p):
        return max(measured_value(p, "l2_load") - _footprint(p), 0.0)

    assert share("star3d-r4-H100.csv", "star3d-r4", 0.0, predicted) >= 0.93
    assert share("star3d-r4-H100.csv", "star3d-r4", 0.1, predicted) < 0.8
    assert share("lbm-H100.csv", "d3q19-srt", 0.1, predicted) < 0.2
    today = share("box3d-r1-H100.csv", "box3d-r1", 0.0, measured)
    assert 0.54 <= today <= 0.56
    for missed in (predicted, measured, beyond_footprint):
        assert all(share("box3d-r1-H100.csv", "box3d-r1", c, missed) <= today for c in (0.05, 0.1, 0.2, 0.4, 0.65))


def test_the_fit_of_the_line_rule_prices_a_missed_line_several_times_a_hit_one():
    """warpspeed's own fit of the line rule (calibration.fit_l1_line_rule, the measured share of missed load
    sectors) on box3d-r1 and the LBM sweep of the H100: a further load line costs 0.1-0.2 wavefront where it
    hits, 0.7-0.95 where it misses, a further store line at most 0.1 (the cost per warp is not determined by
    these sweeps: every block has one warp per 32 lups). (On every sweep of both GPUs,
    1,122 rows, it gives 0.140, 0.82, 0.00 and 4.4; rounded to the keys, 7 load lines and 1024 store lines per
    wavefront, d3q19-srt loses 12 points of its L1 share, as its 4-cells-wide blocks, already 7-14 % above the
    model, cross the 10 % bound: PRICED keeps 32 store lines and 0.84 per missed line, which hold every
    sweep.)"""
    rows = [m for name in ("box3d-r1-H100.csv", "lbm-H100.csv") for m in read_measurements(DATA / name)]
    fit = fit_l1_line_rule(estimate_measurements(rows))
    assert fit is not None and fit.rows == len(rows)
    assert 0.1 <= fit.load_line <= 0.2 and 0.7 <= fit.missed_line <= 0.95
    assert fit.store_line <= 0.1 and fit.per_warp <= 6


# the rows the line rule was fitted to (families.toml, hopper l1_rule.files): star3d-r4 and the LBM sweeps of both
# GPUs; box3d-r1 and D3Q27 are left out to check the fit
LINE_RULE_FILES = ("star3d-r4-H100.csv", "star3d-r4-H200.csv", "occupancy-star3d-r4-H100.csv",
                   "occupancy-star3d-r4-H200.csv", "lbm-H100.csv", "lbm-H200.csv", "occupancy-lbm-H100.csv",
                   "occupancy-lbm-H200.csv")


def _l1_share(name: str, kernel: str, domain: tuple[int, int, int], over: dict) -> float:
    rows = read_measurements(DATA / name)
    devs = {m.device: warpspeed.device(m.device).with_overrides(**over) for m in rows}
    (r,) = [r for r in validate(rows, devices=devs) if r.kernel == kernel and r.domain == domain]
    return r.volume_errors["l1_cycles"].within


def test_the_line_rule_that_calibrate_fits_to_the_star_and_lbm_rows_fails_the_guard():
    """`warpspeed calibrate` fits the line rule's prices (calibration.fit_l1_line_rule) to the pooled star3d-r4 and
    LBM rows of both GPUs (1,022 rows): a further load line costs 0.25 wavefront where it hits, 0.73 where it
    misses, a further store line 0.10 and a warp nothing (every one of these rows has one busy warp per 32 lups,
    so the cost per warp is an intercept the other prices absorb). As the keys hold it (4 and 10 lines per
    wavefront, 0 per warp, 0.728 per missed line) with the predicted misses, box3d-r1 comes within 10 % of ncu's
    wavefronts for 74 % of its blocks (55 % today; the issue asks 80) and D3Q27 for 86 % (74 %), but d3q19-srt
    falls from 88 to 76 % (its blocks 4 cells wide, whose misses the model predicts exactly: every load sector,
    as measured, sit 6-10 % under and cross the bound as the store price falls from 1/2 to 1/10) and copy from
    100 to 0 % (its 8 wavefronts per warp-lup, 4 from its addresses, need the cost per warp). So no device takes
    the fit; calibrate reports it without writing it (Calibration.device_toml)."""
    rows = [m for name in LINE_RULE_FILES for m in read_measurements(DATA / name)]
    fit = fit_l1_line_rule(estimate_measurements(rows))
    assert fit is not None and fit.rows == len(rows) == 1022
    assert 0.24 <= fit.load_line <= 0.27 and 0.70 <= fit.missed_line <= 0.76 and 0.08 <= fit.store_line <= 0.12
    assert fit.per_warp < 0.5
    over = fit.device_values()
    assert over == {"l1_load_lines_per_wavefront": 4, "l1_store_lines_per_wavefront": 10, "l1_wavefronts_per_warp": 0,
                    "l1_wavefronts_per_missed_line": pytest.approx(0.728, abs=0.005)}
    box, d3q27 = ("box3d-r1-H100.csv", "box3d-r1", (512,) * 3), ("d3q27-trt-H100.csv", "lbm:stencil=D3Q27,method=trt",
                                                                   (256,) * 3)
    assert _l1_share(*box, {}) < 0.56 and 0.73 <= _l1_share(*box, over) < 0.8
    assert _l1_share(*d3q27, {}) < 0.75 and _l1_share(*d3q27, over) >= 0.85
    d3q19 = ("lbm-H100.csv", "d3q19-srt", (256,) * 3)
    assert _l1_share(*d3q19, {}) >= 0.87 and _l1_share(*d3q19, over) <= 0.76
    copy = ("bandwidth-copy-H100.csv", "copy", (268435456, 1, 1))
    assert _l1_share(*copy, {}) == 1.0 and _l1_share(*copy, over) == 0.0
    four = [p for p in _pairs(*d3q19[:2]) if p.measured.block[0] == 4]
    assert all(0.9 <= predicted_value(p, "l1_cycles") / measured_value(p, "l1_cycles") <= 0.94 for p in four)
    assert all(predicted_value(p, "l2_load") == pytest.approx(predicted_value(p, "l1_load")) for p in four)
    assert all(measured_value(p, "l2_load") / measured_value(p, "l1_load") > 0.99 for p in four)


_LBM_SWEEPS = [(f"{name}-{gpu}.csv", kernel) for name in ("lbm", "occupancy-lbm") for gpu in ("H100", "H200")
               for kernel in ("d3q19-srt", "d3q15-allen-cahn")]
_LBM_SWEEPS.append(("d3q27-trt-H100.csv", "lbm:stencil=D3Q27,method=trt"))


def _l1_ratios(name: str, kernel: str, width: int) -> list[float]:
    return [predicted_value(p, "l1_cycles") / measured_value(p, "l1_cycles") for p in _pairs(name, kernel)
            if p.measured.block[0] == width]


def test_the_l1_line_rule_errs_by_block_width_the_same_way_in_every_lbm_sweep():
    """What D3Q27's L1 misses are (26 % of its blocks beyond 10 %: its blocks 2 and 16 cells wide), every LBM
    sweep shows, with or without diagonal populations (predicted over measured, D3Q27 included): the line rule
    gives blocks 4 cells wide 0.5-15 % fewer wavefronts than ncu counts, 16 wide 10-25 % more, 8 and 32 wide
    -1 to +10 %. A 16x2 warp of doubles touches 4 lines (2 per half-warp row, the rows misaligned by the ghost
    layer) where a 32x1 warp touches 3: beyond its 2 bank slots the rule counts 2 further lines against 1, while
    ncu counts 16-wide blocks 2-4 % above 32-wide ones. In D3Q19's wavefronts per instruction beyond the bank
    cost and the warp's 4: 0.26 (16 wide), 0.22 (32 wide), but 3.0 for a 4x8 warp (9-10 lines in 8 rows) and
    10.8 for a 1x32 warp (32 lines): a line that continues a row costs less than a line of another row.

    Counted so (a prototype, not shipped: the last test computes it), per lane group: a line holding the start
    of a contiguous run of the group's addresses is a further line beyond the group's bank cost, at 1/3 (load)
    or 1/2 (store) as now; a line a run only continues into costs 1/5 (the least-squares price, the others
    kept). Within 10 % of ncu's wavefronts: D3Q27 74 -> 86 %, box3d-r1 55 -> 64 % (asserted there); with the
    whole model run under it on 2026-12-07, d3q15-allen-cahn 80/76 -> 86/84 % (512 threads, H100/H200) and
    71/70 -> 79/79 % (128 and 256), star3d-r4 within two points, d3q19-srt 88 -> 86 % (512 threads) and 86 ->
    82 % (128 and 256, H100). The rankings move: in the H100 sweep of 256- and 512-thread blocks, star3d-r4's
    best-predicted block becomes 16x2x16 (L1 cycles 73 -> 66, measured 67), which measures 96 % of the best
    (top-1 99 -> 96 %), and the roofline's top-1 falls on star3d-r4 (H100 99.8 -> 94.2 %, H200 94.5 -> 90.2 %)
    and box3d-r1 (92 -> 86 %): the old count had hidden a DRAM error (the last test but one). Pricing missed
    lines on top (docs/model.md, "Diagonal neighbours" (2)) lifts box3d-r1 to 73-76 % with the model's misses
    (83 % with the measured ones, prices fitted to them) but takes the 512-thread d3q15-allen-cahn sweeps 8-12
    points down through the misses of the next test, and moves D3Q27 between 69 and 85 % for a missed-line
    price of 0.70 or 0.68: no rule tried is safe to ship."""
    for name, kernel in _LBM_SWEEPS:
        four, eight, sixteen, wide = (_l1_ratios(name, kernel, w) for w in (4, 8, 16, 32))
        assert 0.85 <= min(four) and max(four) < 1.0, (name, kernel)
        assert 1.10 <= min(sixteen) and max(sixteen) <= 1.25, (name, kernel)
        assert 0.99 <= min(eight + wide) and max(eight + wide) <= 1.1, (name, kernel)
        pairs = _pairs(name, kernel)
        by = {w: [p for p in pairs if p.measured.block[0] == w] for w in (16, 32)}
        measured = [float(np.median([measured_value(p, "l1_cycles") for p in by[w]])) for w in (16, 32)]
        assert 1.01 <= measured[0] / measured[1] <= 1.05, (name, kernel)
        k = warpspeed.find_kernel(kernel, domain=pairs[0].measured.domain)
        lines = []
        for w in (16, 32):
            m = by[w][0].measured
            c = l1_line_costs(k, by[w][0].device, m.block, m.folding, registers=m.registers)
            lines.append(c.load_lines + c.store_lines)
        assert lines[0] / lines[1] == pytest.approx(2.0, abs=0.01), (name, kernel)


def test_lbm_blocks_one_cell_wide_hit_across_blocks_only_with_one_block_per_sm():
    """The line rule's L1 price of a missed line needs the L1 misses, and the model's are too many for LBM
    blocks one cell wide with one block per SM: there they load 0.80-0.94 of their footprint from the L2
    (D3Q19 and D3Q15 with 512 threads at 82-92 registers, D3Q27 with 256 threads at 150), with two and five
    blocks per SM (256 and 128 threads) 0.99-1.04. D3Q19 and D3Q27 read no sector twice inside such a block
    (each population once per cell, fzyx: the footprint is the L1 load): the hits are of sectors that
    neighbouring blocks (x +- 1..3) read, and only where each SM runs one block. Priced at what the fits of a
    missed line give (0.63-0.84 wavefront, 0.14-0.24 for one that hits), the model's misses put these blocks up
    to 10-15 % above ncu's wavefronts, the measured misses within 9 % (the fits of docs/model.md, "Diagonal
    neighbours" (2))."""
    one_per_sm = 0
    for name, kernel in _LBM_SWEEPS:
        ones = [p for p in _pairs(name, kernel) if p.measured.block[0] == 1]
        assert len(ones) == (14 if name.startswith("occupancy") else 7), (name, kernel)
        for p in ones:
            share = measured_value(p, "l2_load") / _footprint(p)
            if "d3q15" not in kernel:
                assert _footprint(p) == pytest.approx(predicted_value(p, "l1_load"), rel=1e-9)
            if p.estimate.occupancy.blocks_per_sm == 1:
                one_per_sm += 1
                assert 0.80 <= share <= 0.94, (name, kernel, p.measured.block)
            else:
                assert p.estimate.occupancy.blocks_per_sm in (2, 5) and 0.99 <= share <= 1.04, (name, kernel)
    assert one_per_sm == 5 * 7  # the four 512-thread sweeps and D3Q27


def test_two_plane_deep_star_blocks_load_from_dram_by_their_width_which_the_model_does_not_see():
    """What the L1 rule of lines that continue a row (first test above) runs into: star3d-r4 blocks two planes
    deep reuse 8 of their 10 planes from the block plane before, and the model predicts the same DRAM load for
    every width (17.5-18.4 B/lup on the H100, 11.3-11.8 on the H200), while the H100 measures 13-16 B/lup for
    blocks 32 cells wide or more and 24-31 for blocks 1-4 wide (the H200, with 20 % more L2, 10.6-11.4 and 13-16).
    The z-layer curve takes one hit rate per oversubscription, so it is 11-30 % high for the wide blocks and 29-41 %
    low for the narrow ones on the H100 (docs/model.md, "Caches are smooth curves of one number"). The rule
    above prices 16x2x16 (star3d-r4, 256 and 512 threads, H100) as ncu counts it (66 wavefronts, 67 measured;
    73 now) and so ranks it ahead of 64x4x2, whose DRAM load is predicted 17.5 B/lup and measures 14.7: the
    L1 cycles the line rule overcounts for blocks 16 cells wide had hidden this DRAM error from the ranking."""
    for name, low, high in (("star3d-r4-H100.csv", 17.4, 18.5), ("occupancy-star3d-r4-H100.csv", 17.4, 18.5),
                            ("star3d-r4-H200.csv", 11.2, 11.9), ("occupancy-star3d-r4-H200.csv", 11.2, 11.9)):
        deep2 = [p for p in _pairs(name, "star3d-r4") if p.measured.block[2] == 2 and p.measured.folding == (1, 1, 1)]
        assert len(deep2) >= 10
        assert all(low <= predicted_value(p, "dram_load") <= high for p in deep2), name
        narrow = [measured_value(p, "dram_load") for p in deep2 if p.measured.block[0] <= 4]
        wide = [measured_value(p, "dram_load") for p in deep2 if p.measured.block[0] >= 32]
        if "H100" in name:
            assert min(narrow) >= 24 and max(narrow) <= 31 and 13 <= min(wide) and max(wide) <= 16, name
        else:
            assert min(narrow) >= 13 and max(narrow) <= 16 and 10.5 <= min(wide) and max(wide) <= 11.5, name
    (rival,) = [p for p in _pairs("occupancy-star3d-r4-H100.csv", "star3d-r4") if p.measured.block == (64, 4, 2)]
    assert predicted_value(rival, "dram_load") == pytest.approx(17.5, abs=0.1)
    assert measured_value(rival, "dram_load") == pytest.approx(14.7, abs=0.1)


STAR_SWEEPS = ("star3d-r4-H100.csv", "occupancy-star3d-r4-H100.csv", "star3d-r4-H200.csv",
               "occupancy-star3d-r4-H200.csv")


def _z_kept(p) -> float:
    """The share of its z-layer overlap a configuration keeps in the L2, as measured: the model's z hit plus what the
    DRAM load measures below the model's, over the overlap (the y layer and partial stores as the model has them)."""
    z = p.estimate.layer_z
    return (z.hit_B_per_lup + predicted_value(p, "dram_load") - measured_value(p, "dram_load")) / z.potential_B_per_lup


def _z_hits_by_width() -> dict[tuple[float, int], list[tuple[str, float, float]]]:
    """The share of the z-layer overlap each star3d-r4 configuration keeps in the L2 (:func:`_z_kept`; rows whose
    z overlap is under 10 B/lup left out). Keyed by (O rounded to 0.1, block
    width); each value (GPU, measured share, the model's hit rate)."""
    out: dict[tuple[float, int], list[tuple[str, float, float]]] = {}
    for name in STAR_SWEEPS:
        for p in _pairs(name, "star3d-r4"):
            z = p.estimate.layer_z
            if z.potential_B_per_lup < 10:
                continue
            out.setdefault((round(z.oversubscription, 1), p.measured.block[0]), []).append(
                (name.split("-")[-1][:4], _z_kept(p), z.hit_rate))
    return out


def test_narrow_star_blocks_keep_the_z_layer_along_a_steeper_curve_the_same_on_both_gpus():
    """What the z-layer curve of one number misses (previous test), over every star3d-r4 sweep: at each O the
    share of the z overlap kept rises with the block's width up to 64 cells and stays there (64-512 wide within
    0.04), and each width keeps about the same share on both GPUs (O 1.03: the H100's blocks one plane deep and
    the H200's two planes deep, different configurations; within 0.08, the H200's blocks 1-8 wide 0.06-0.08
    lower). Blocks 1-2 cells wide follow a steep curve (1.00 at O 0.86, 0.8-0.87
    at 1.03, 0.31-0.40 at 1.23, 0.13-0.16 at 1.4, 0 at 1.65), blocks >= 64 wide a flat one (0.96, 0.91-0.92,
    0.77-0.80, 0.47-0.51, 0.10-0.13), crossing below O = 1: the narrow blocks keep everything where the L2 holds
    the plane, then lose more. Not the number of blocks that read a line, which would order the shapes otherwise:
    16x16x2 blocks (a row read by 1.5 blocks per block plane) keep 0.68, 64x4x2 ones (3 blocks) 0.80. The model
    takes one curve (0.96, 0.90, 0.70, 0.44, 0.02). Which hardware behaviour gives the per-width curves is not in
    the counters measured (volumes only; see the note of issue 46 for the L2 counters that would tell)."""
    hits = _z_hits_by_width()

    def median(o: float, widths, gpu: str | None = None) -> float:
        v = [k for w in widths for g, k, _ in hits.get((o, w), []) if gpu in (None, g)]
        assert len(v) >= 3, (o, widths, gpu)
        return float(np.median(v))

    narrow, wide = (1, 2), (64, 128, 256, 512)
    for o, (n_low, n_high), (w_low, w_high), model in ((0.9, (0.99, 1.0), (0.95, 0.97), 0.96),
                                                       (1.0, (0.8, 0.87), (0.9, 0.93), 0.9),
                                                       (1.2, (0.3, 0.41), (0.77, 0.81), 0.7),
                                                       (1.4, (0.12, 0.17), (0.46, 0.52), 0.44),
                                                       (1.6, (0.0, 0.02), (0.09, 0.14), 0.02)):
        assert n_low <= median(o, narrow) <= n_high and w_low <= median(o, wide) <= w_high, o
        rates = [r for w in narrow + wide for _, _, r in hits[(o, w)]]
        assert max(rates) - min(rates) <= 0.02 and abs(min(rates) - model) <= 0.02, o
        if 1.0 <= o <= 1.4:  # above the crossing, every doubling of the width keeps as much (within 0.03) up to 64
            by_width = [median(o, (w,)) for w in (1, 2, 4, 8, 16, 32, 64)]
            assert all(b >= a - 0.03 for a, b in zip(by_width, by_width[1:], strict=False)), o
            assert by_width[-1] - by_width[0] >= 0.05, o
    for o in (1.0, 1.2, 1.4):
        flat = [median(o, (w,)) for w in (64, 128, 256)]
        assert max(flat) - min(flat) <= 0.04, o
    for w in (1, 2, 4, 8, 16, 32, 64, 128, 256):
        assert abs(median(1.0, (w,), "H100") - median(1.0, (w,), "H200")) <= 0.08, w
    by = {p.measured.block: p for p in _pairs("occupancy-star3d-r4-H100.csv", "star3d-r4")}
    assert _z_kept(by[(16, 16, 2)]) == pytest.approx(0.68, abs=0.01)
    assert _z_kept(by[(64, 4, 2)]) == pytest.approx(0.80, abs=0.01)


def _continued_line_cycles(p) -> float:
    """The L1 cycles per warp-lup of the prototype of the first test's docstring (not the shipped rule): per lane
    group, the bank cost, a line holding the start of a contiguous run of the group's addresses beyond the
    group's bank cost at the device's load or store price, a line a run only continues into at 1/5; 4 per warp."""
    from warpspeed.application.resolve import resolve_kernel
    from warpspeed.model.estimate import make_launch, shared_analysis
    from warpspeed.model.footprint import count_distinct
    from warpspeed.model.l1 import NO_SPLIT, group_cycles

    dev, m = p.device, p.measured
    k = resolve_kernel(m.kernel, m.domain)
    an = shared_analysis(k)
    launch = make_launch(k, dev, m.block, m.folding, m.registers)
    blocks, instrs = an.block_stage(launch, dev), an.instructions(launch.folding)
    pat = blocks.patterns
    eb = np.array([instrs[i].element_bytes for i in pat.kinds.tolist()])
    store = np.array([instrs[i].store for i in pat.kinds.tolist()])
    per_pattern = np.zeros(len(eb))
    for b in np.unique(eb).tolist():
        lanes = max(1, min(dev.warp_size, dev.lsu_bytes_per_cycle(b) // b))
        sel = eb == b
        o = pat.offsets[sel].reshape(-1, lanes)  # one row per lane group
        a = o >= 0
        bank = group_cycles(o // dev.l1_bank_bytes, a, dev.l1_banks, NO_SPLIT)
        v = np.sort(np.where(a, o, np.iinfo(np.int64).max // 2), axis=1)
        valid = a.sum(axis=1)[:, None] > np.arange(lanes)[None, :]
        prev = np.concatenate([np.full((len(v), 1), -(1 << 40)), v[:, :-1]], axis=1)
        start = valid & (v - prev > b)  # a run starts where the next address is more than one element on
        heads = count_distinct(v // dev.l1_line_bytes, start)
        lines = count_distinct(v // dev.l1_line_bytes, valid)
        groups = -(-dev.warp_size // lanes)
        price = np.where(store[sel], 1 / dev.l1_store_lines_per_wavefront, 1 / dev.l1_load_lines_per_wavefront)
        beyond = np.maximum(heads - bank, 0).reshape(-1, groups).sum(axis=1)
        per_pattern[sel] = (bank.reshape(-1, groups).sum(axis=1) + beyond * price
                            + (lines - heads).reshape(-1, groups).sum(axis=1) / 5)
    total = (pat.gather(per_pattern).sum(axis=(1, 2)) * blocks.weights).sum()
    warps = (blocks.busy_warps * blocks.weights).sum()
    return float((total + dev.l1_wavefronts_per_warp * warps) * dev.warp_size / blocks.counts.valid_lups)


def test_lines_that_continue_a_row_priced_apart_fit_d3q27_and_box3d_better_the_prototype():
    """The prototype of the first test, its L1 cycles counted here from the same warp patterns as the shipped
    rule's: within 10 % of ncu's wavefronts for 86 % of D3Q27's blocks (74 % with the shipped rule) and 64 % of
    box3d-r1's (55 %); its 16-wide LBM blocks come within -4 to +7 % (10-25 % over with the shipped rule), its
    4-wide ones stay 8-19 % under. What it did to the rankings (first test's docstring) was measured with the whole
    model under it (2026-12-07), not here."""
    def share(name, kernel):
        ps = _pairs(name, kernel)
        return sum(abs(_continued_line_cycles(p) / measured_value(p, "l1_cycles") - 1) <= 0.1 for p in ps) / len(ps)

    assert share("d3q27-trt-H100.csv", "lbm:stencil=D3Q27,method=trt") == pytest.approx(36 / 42)
    assert share("box3d-r1-H100.csv", "box3d-r1") == pytest.approx(27 / 42)
    for name, kernel in _LBM_SWEEPS:
        by = {w: [_continued_line_cycles(p) / measured_value(p, "l1_cycles") for p in _pairs(name, kernel)
                  if p.measured.block[0] == w] for w in (4, 16)}
        assert 0.8 <= min(by[4]) and max(by[4]) <= 0.93, (name, kernel)
        assert 0.96 <= min(by[16]) and max(by[16]) <= 1.07, (name, kernel)
