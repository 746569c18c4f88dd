"""Analytic DRAM cases of the 3D25pt range-4 star stencil: waves of d complete xy layers.

Without z reuse a wave of d layers loads d + 2r planes for d planes of updates: (d+2r)/d values per lup
(the paper's Fig. 23: 72/40/24/16/10 B/lup for d = 1/2/4/8/32); with the layer condition met (L2 large
enough for the z-layer set) the 2r planes shared with the previous wave hit and ~1 value per lup remains.
"""

import pytest

import warpspeed
from warpspeed.model.launch import make_launch

R = 4
NX = NY = 256


def full_plane_wave(d: int, l2_size: str):
    """Estimate with a block of depth d and a GPU whose wave is exactly one plane of blocks."""
    nz = 5 * d  # odd number of block planes: the middle wave starts on a plane boundary
    k = warpspeed.find_kernel("star3d-r4").with_domain((NX, NY, nz))
    block = (32, 2, d) if 64 * d <= 1024 else (32, 1, d)
    base = warpspeed.device("A100-SXM4-40GB")
    launch = make_launch(k, base, block, registers=32)
    gx, gy, _ = launch.grid
    sms, rest = divmod(gx * gy, launch.occupancy.blocks_per_sm)
    assert rest == 0
    dev = base.with_overrides(sm_count=sms, l2_size=l2_size)
    e = warpspeed.estimate(k, dev, block, registers=32)
    assert e.wave_blocks == gx * gy and e.wave_valid_lups == NX * NY * d
    return e


def exact_compulsory_B_per_lup(d: int) -> float:
    """Sectors of d interior planes (with x and y halos, no corners) + 2r halo planes, per lup."""
    row_with_x_halo = (NX + 2 * R) * 8 // 32  # rows are sector aligned: (256 + 8) * 8 B = 66 sectors
    row = NX * 8 // 32
    plane = NY * row_with_x_halo + 2 * R * row
    sectors = d * plane + 2 * R * NY * row
    return 32 * sectors / (d * NX * NY)


@pytest.mark.parametrize("d, paper", [(1, 72), (2, 40), (4, 24), (8, 16), (32, 10)])
def test_no_z_reuse_loads_d_plus_2r_over_d_values(d, paper):
    e = full_plane_wave(d, l2_size="64KiB")  # far too small for any layer: no reuse
    v = e.volumes_B_per_lup
    assert v["dram_load_compulsory"] == pytest.approx(exact_compulsory_B_per_lup(d), rel=1e-12)
    assert v["dram_load_compulsory"] == pytest.approx(paper, rel=0.07)  # the xy halo of a 256^2 plane
    assert e.layer_y.potential_B_per_lup == 0  # a wave of whole planes has no y-layer set
    assert e.layer_z.potential_B_per_lup == pytest.approx(2 * R * 8 / d, rel=1e-12)  # 2r shared planes
    assert e.layer_z.hit_rate < 1e-6
    assert v["dram_load"] == pytest.approx(v["dram_load_compulsory"], rel=1e-6)
    assert v["dram_store"] == pytest.approx(8.0)


@pytest.mark.parametrize("d", [1, 2, 4, 8])
def test_layer_condition_met_leaves_about_one_value_per_lup(d):
    e = full_plane_wave(d, l2_size="4GiB")
    assert e.layer_z.oversubscription < 0.1
    assert e.layer_z.hit_rate > 0.99
    # what remains: one value per lup plus the xy halo of the d interior planes
    halo = exact_compulsory_B_per_lup(d) - 8 * (d + 2 * R) / d
    missed = (1 - e.layer_z.hit_rate) * e.layer_z.potential_B_per_lup  # the fit's hit rate is 0.997 at O=0
    assert e.volumes_B_per_lup["dram_load"] == pytest.approx(8 + halo + missed, rel=1e-9)
    assert e.volumes_B_per_lup["dram_load"] < 1.03 * (8 + halo)


def test_deeper_waves_need_more_cache_for_the_layer_condition():
    """The z-layer set's allocation grows with the wave depth (the paper's 'deeper blocks run out earlier')."""
    allocs = [full_plane_wave(d, "40MiB").layer_z.allocated_bytes for d in (1, 2, 4, 8)]
    assert allocs == sorted(allocs) and allocs[-1] > 2 * allocs[0]
