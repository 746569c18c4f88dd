"""The paper's qualitative findings for the 3D25pt range-4 stencil on A100 (640x512x512), section 5.8."""

import pytest

import warpspeed

COMPACT_DEEP = [((32, 4, 8), (1, 1, 2)), ((16, 8, 8), (1, 1, 2)), ((64, 4, 4), (1, 1, 2)), ((32, 2, 16), (1, 1, 1))]
NARROW_X = [((1, 32, 32), (1, 1, 1)), ((2, 16, 32), (1, 1, 1)), ((1, 1024, 1), (1, 1, 1)), ((2, 512, 1), (1, 1, 1))]
FLAT = [((512, 2, 1), (1, 1, 1)), ((1024, 1, 1), (1, 1, 1)), ((256, 4, 1), (1, 1, 1))]


@pytest.fixture(scope="module")
def perf():
    k = warpspeed.find_kernel("star3d-r4")
    return {(b, f): warpspeed.estimate(k, "A100-SXM4-40GB", b, f) for b, f in COMPACT_DEEP + NARROW_X + FLAT}


def test_narrow_x_blocks_rank_worst_and_are_cache_bound(perf):
    worst_good = min(perf[c].performance_GLup_s for c in COMPACT_DEEP + FLAT)
    for c in NARROW_X:
        assert perf[c].performance_GLup_s < 0.5 * worst_good
        assert perf[c].limiter in ("L1", "L2")


def test_compact_deep_blocks_beat_flat_blocks_and_are_dram_bound(perf):
    assert min(perf[c].performance_GLup_s for c in COMPACT_DEEP) > max(perf[c].performance_GLup_s for c in FLAT)
    for c in COMPACT_DEEP:
        assert perf[c].limiter == "DRAM"


def test_flat_blocks_live_on_z_layer_reuse(perf):
    """Shallow waves get most of their reuse from the z-layer set (Fig. 19), deep ones do not need it."""
    for c in FLAT:
        assert perf[c].layer_z.hit_B_per_lup > 0.3 * perf[c].volumes_B_per_lup["dram_load_compulsory"]
    assert perf[((32, 4, 8), (1, 1, 2))].volumes_B_per_lup["dram_load_compulsory"] < min(
        perf[c].volumes_B_per_lup["dram_load_compulsory"] for c in FLAT)


def test_folding_lowers_l1_cycles(perf):
    """Folding reuses values from registers: fewer L1 cycles per lup (section 5.4)."""
    k = warpspeed.find_kernel("star3d-r4").with_domain((128, 128, 128))
    plain = warpspeed.estimate(k, "A100-SXM4-40GB", (32, 4, 8))
    folded = warpspeed.estimate(k, "A100-SXM4-40GB", (32, 4, 8), (1, 1, 2))
    assert folded.l1_cycles_per_warp_lup < plain.l1_cycles_per_warp_lup
    assert plain.l1_cycles_per_warp_lup == pytest.approx(26 * 2)  # 25 loads + 1 store, 2 cycles each
    assert folded.l1_cycles_per_warp_lup == pytest.approx((42 + 2) * 2 / 2)  # 42 distinct loads + 2 stores, 2 lups
