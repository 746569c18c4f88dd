"""Partially written sectors: what a premature eviction from the L2 costs in DRAM traffic."""

import pytest

import warpspeed

A100 = warpspeed.device("A100-SXM4-40GB")


def _estimate(store_hit: float):
    dev = A100.with_overrides(**{"hit_rates.l2_store.a": store_hit, "hit_rates.l2_store.b": 1e-12})
    return warpspeed.estimate("star3d-r1", dev, (1, 32, 8), domain=(256, 256, 64))


def test_every_partial_sector_evicted_costs_a_read_and_a_write():
    """Blocks one cell wide: each 8 B store leaves its 32 B sector incomplete. If no such sector survives in
    the L2 until its neighbours complete it, every store instruction writes a whole sector to DRAM (the DRAM
    store equals the L2 store volume) and reads it once to merge."""
    kept, lost = _estimate(1.0), _estimate(0.0)
    ps_kept, ps_lost = kept.to_dict()["causes"]["partial_stores"], lost.to_dict()["causes"]["partial_stores"]
    assert ps_kept["miss_B_per_lup"] == pytest.approx(0.0, abs=1e-6)
    assert ps_lost["miss_B_per_lup"] == pytest.approx(ps_lost["potential_B_per_lup"])
    v_kept, v_lost = kept.volumes_B_per_lup, lost.volumes_B_per_lup
    assert v_kept["dram_store"] == pytest.approx(8.0, rel=0.02)  # the unique stores: 8 B per cell (+ halo rows)
    assert v_lost["dram_store"] == pytest.approx(v_lost["l2_store"]) == pytest.approx(32.0)
    extra = ps_lost["potential_B_per_lup"]
    assert v_lost["dram_store"] - v_kept["dram_store"] == pytest.approx(extra)
    assert v_lost["dram_load"] - v_kept["dram_load"] == pytest.approx(extra)
    # the per-field DRAM store stays the unique stored sectors
    assert [f.dram_store for f in lost.fields] == [f.dram_store for f in kept.fields]
