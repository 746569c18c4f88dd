"""Partially written sectors: what a premature eviction from the L2 costs in DRAM traffic."""

import pytest

import warpspeed

A100 = warpspeed.device("A100-SXM4-40GB")


def _estimate(store_hit: float):
    dev = A100.with_overrides(**{"hit_rates.l2_store.a": store_hit, "hit_rates.l2_store.b": 1e-12})
    return warpspeed.estimate("star3d-r1", dev, (1, 32, 8), domain=(256, 256, 64))


def test_every_partial_sector_evicted_costs_a_read_and_a_write_once():
    """Blocks one cell wide: no block writes any of its 32 B store sectors completely (its 8 B and those of
    the three blocks beside it make one). If no such sector survives in the L2 until they are complete,
    each costs one read (to merge) and one extra write, once per sector, however many blocks wrote to it."""
    kept, lost = _estimate(1.0), _estimate(0.0)
    ps_kept, ps_lost = kept.to_dict()["causes"]["partial_stores"], lost.to_dict()["causes"]["partial_stores"]
    assert ps_kept["miss_B_per_lup"] == pytest.approx(0.0, abs=1e-6)
    assert ps_lost["miss_B_per_lup"] == pytest.approx(ps_lost["potential_B_per_lup"])
    v_kept, v_lost = kept.volumes_B_per_lup, lost.volumes_B_per_lup
    assert v_kept["dram_store"] == pytest.approx(8.0, rel=0.02)  # the unique stores: 8 B per cell (+ halo rows)
    assert ps_lost["potential_B_per_lup"] == pytest.approx(v_kept["dram_store"])  # every stored sector is partial
    assert v_lost["dram_store"] == pytest.approx(2 * v_kept["dram_store"])
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
