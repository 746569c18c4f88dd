"""Partially written sectors: what a premature eviction from the L2 costs in DRAM traffic."""

import pytest

import warpspeed
from warpspeed.model.capacity import CacheReuse, reuse
from warpspeed.model.dram import partial_store_waits

A100 = warpspeed.device("A100-SXM4-40GB")


def _estimate(store_hit: float):
    dev = A100.with_overrides(**{"hit_rates.l2_store.a": store_hit, "hit_rates.l2_store.b": 1e-12})
    return warpspeed.estimate("star3d-r1", dev, (1, 32, 8), domain=(256, 256, 64))


def test_every_partial_sector_evicted_costs_a_read_and_a_write_once():
    """Blocks one cell wide: no block writes any of its 32 B store sectors completely (its 8 B and those of
    the three blocks beside it make one). If no such sector survives in the L2 until they are complete,
    each costs one read (to merge) and one extra write, once per sector, however many blocks wrote to it.
    The sectors at a row's ends, which hold ghost cells no block writes, are never complete: they are read
    once whatever the L2 keeps, with the compulsory load, and are no partial stores."""
    kept, lost = _estimate(1.0), _estimate(0.0)
    ps_kept, ps_lost = kept.to_dict()["causes"]["partial_stores"], lost.to_dict()["causes"]["partial_stores"]
    assert ps_kept["miss_B_per_lup"] == pytest.approx(0.0, abs=1e-6)
    assert ps_lost["miss_B_per_lup"] == pytest.approx(ps_lost["potential_B_per_lup"])
    v_kept, v_lost = kept.volumes_B_per_lup, lost.volumes_B_per_lup
    assert v_kept["dram_store"] == pytest.approx(8.0, rel=0.02)  # the unique stores: 8 B per cell (+ halo rows)
    # every stored sector is partial; those no cell completes are not in the potential: rows of 256 cells and
    # 2 ghost cells, 64.5 sectors of doubles, so every two rows end next to a ghost in 3 sectors (one shared by
    # the two rows), and each of the 64 planes once more where its last row meets the ghost rows
    unfinished = v_kept["dram_store"] - ps_lost["potential_B_per_lup"]
    assert unfinished == pytest.approx((256 * 64 * 1.5 + 64) * 32 / (256 * 256 * 64))
    # four writers per sector, eight blocks per SM: each writer beyond the second waits again in the share 7/8
    # (a little less on average: the sectors at the rows' ends, next to ghost cells, have fewer writers)
    assert lost.occupancy.blocks_per_sm == 8
    assert 1 + 2 * (1 - 1 / 8) - 0.06 < lost.partial_stores.waits <= 1 + 2 * (1 - 1 / 8)
    assert v_lost["dram_store"] == pytest.approx(2 * v_kept["dram_store"] - unfinished)
    extra = ps_lost["potential_B_per_lup"]
    assert v_lost["dram_store"] - v_kept["dram_store"] == pytest.approx(extra)
    assert v_lost["dram_load"] - v_kept["dram_load"] == pytest.approx(extra)
    # the per-field DRAM store stays the unique stored sectors
    assert [f.dram_store for f in lost.fields] == [f.dram_store for f in kept.fields]


@pytest.mark.parametrize("block", [(32, 4, 2), (64, 2, 2), (8, 8, 4), (4, 16, 4)])
def test_only_the_sectors_a_block_leaves_incomplete_are_partial(block):
    """star3d-r1 over 256 cells per row stores 2048 B starting 8 or 24 B into a sector: 65 sectors per row.
    A block x cells wide leaves incomplete only the sectors at its two ends, which it shares with the blocks
    beside it (or, at the domain's ends, with nobody): between the 256/x - 1 interior block boundaries and
    all 256/x + 1 of the 65 sectors per row are partial (the brute-force twin counts them exactly)."""
    e = warpspeed.estimate("star3d-r1", A100, block, domain=(256, 256, 64))
    share = e.to_dict()["causes"]["partial_stores"]["potential_B_per_lup"] / sum(f.dram_store for f in e.fields)
    blocks_per_row = 256 // block[0]
    assert (blocks_per_row - 1) / 65 <= share <= min(1.0, (blocks_per_row + 1) / 65) + 1e-12


@pytest.mark.parametrize("partial, later, blocks_per_sm, waits", [
    (0, 0, 4, 1.0),  # nothing partial: one wait, unused
    (100, 100, 4, 1.0),  # two writers per sector: the second comes once
    (100, 300, 1, 1.0),  # four writers, one block per SM: they store the same rows about together
    (100, 300, 2, 2.0),  # four writers, two blocks per SM: each further writer half on its own
    (100, 300, 8, 1 + 2 * 7 / 8),
    (100, 200, 5, 1 + 1 * 4 / 5),  # three writers
    (100, 50, 5, 1.0),  # fewer later writes than partial sectors (some complete beyond the wave): one wait
])
def test_partial_store_waits(partial, later, blocks_per_sm, waits):
    assert partial_store_waits(partial, later, blocks_per_sm) == pytest.approx(waits)


def test_a_sector_keeps_the_curve_once_per_wait():
    """The hit rate is the curve's at O to the power of the waits, the misses what is left; one wait is the
    curve itself (bit for bit: every other cause)."""
    curve = warpspeed.device("H100-SXM5-80GB").hit_rates.l2_store
    once, twice = reuse(10.0, 30e6, 25e6, curve), reuse(10.0, 30e6, 25e6, curve, waits=2.5)
    assert once.hit_rate == curve(1.2) and once.waits == 1.0
    assert twice.hit_rate == pytest.approx(curve(1.2) ** 2.5) and twice.waits == 2.5
    assert twice.miss_B_per_lup == pytest.approx(10.0 * (1 - curve(1.2) ** 2.5))
    assert CacheReuse.from_dict(twice.to_dict()) == twice
    assert CacheReuse.from_dict({k: v for k, v in once.to_dict().items() if k != "waits"}) == once


def test_the_wave_stored_volume_pushes_partial_sectors_out_not_its_loads():
    """O of the partial stores is the wave's stored volume over the L2 capacity an SM sees: a kernel that loads
    eight times what it stores has the O of its stores alone."""
    h100 = warpspeed.device("H100-SXM5-80GB")
    e = warpspeed.estimate("star3d-r4", h100, (1, 256, 1), domain=(640, 512, 512))
    ps = e.partial_stores
    stored = sum(f.dram_store for f in e.fields) * e.wave_valid_lups
    assert e.volumes_B_per_lup["dram_load_compulsory"] > 8 * sum(f.dram_store for f in e.fields)
    assert ps.allocated_bytes == pytest.approx(stored)
    assert ps.oversubscription == pytest.approx(stored / h100.l2_effective_size_bytes)


def test_the_report_says_how_many_times_partial_sectors_wait():
    from warpspeed.render.report import text_report

    text = text_report(warpspeed.estimate("star3d-r1", A100, (1, 32, 8), domain=(256, 256, 64)))
    assert "L2 partial stores: 2.7 waits (hit rate = the curve's at O to that power)" in text
    wide = text_report(warpspeed.estimate("star3d-r1", A100, (32, 4, 2), domain=(256, 256, 64)))
    assert "waits" not in wide
