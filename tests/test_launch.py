"""Occupancy, grid and wave selection."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import warpspeed
from warpspeed.launch import LaunchError, id_range_boxes, make_launch, occupancy, wave_start

A100 = warpspeed.device("A100-SXM4-40GB")


@pytest.mark.parametrize("regs, threads, blocks, limiter", [
    (32, 1024, 2, "threads"),      # the case: 32 registers x 1024 threads -> 2 blocks/SM
    (48, 1024, 1, "registers"),    # 48 registers -> 1
    (32, 64, 32, "threads"),       # 2 warps per block: 32 by warps and by the block limit (first wins)
    (64, 256, 4, "registers"),     # 64*32 = 2048 regs/warp -> 8 warps per sub-partition -> 32 warps
    (255, 128, 2, "registers"),    # 8192 regs/warp -> 2 warps per sub-partition -> 8 warps / 4
    (40, 256, 6, "registers"),     # 1280 regs/warp -> 12 warps per sub-partition -> 48 warps / 8
])
def test_a100_occupancy(regs, threads, blocks, limiter):
    occ = occupancy(A100, threads, regs)
    assert occ.blocks_per_sm == blocks
    assert occ.limited_by == limiter
    assert dict(occ.limits)["shared_memory"] == 164 * 1024 // 1024  # 1 KiB reserved per block


def test_shared_memory_limits_and_cannot_launch():
    assert occupancy(A100, 128, 32, shared_bytes=48 * 1024).limited_by == "shared_memory"
    assert occupancy(A100, 128, 32, shared_bytes=48 * 1024).blocks_per_sm == 164 // 49
    with pytest.raises(LaunchError, match="cannot launch"):
        occupancy(A100, 1024, 255)  # 255 registers x 1024 threads need more than 64 K registers


@pytest.mark.parametrize("block, match", [
    ((64, 32, 1), "2048 threads"), ((1, 1, 128), "z extent 128"), ((0, 1, 1), "positive"),
])
def test_invalid_blocks_are_input_errors(block, match):
    k = warpspeed.find_kernel("star3d-r1")
    with pytest.raises(warpspeed.InputError, match=match):
        make_launch(k, A100, block)


def test_registers_over_the_device_limit():
    k = warpspeed.find_kernel("star3d-r1")
    with pytest.raises(LaunchError, match="256 registers"):
        make_launch(k, A100, (32, 4, 1), registers=256)


def test_grid_and_middle_wave():
    k = warpspeed.find_kernel("star3d-r4")  # 640 x 512 x 512, 48 registers
    launch = make_launch(k, A100, (32, 4, 8), (1, 1, 2))
    assert launch.grid == (20, 128, 32)
    assert launch.occupancy.blocks_per_sm == 1 and launch.wave_blocks == 108
    # 108 blocks fit in one plane of 20 x 128: the wave is centred in the middle plane (z = 16)
    assert launch.wave_start == 16 * 20 * 128 + (20 * 128 - 108) // 2
    small = make_launch(k.with_domain((64, 8, 8)), A100, (32, 4, 8))
    assert small.grid == (2, 2, 1) and small.wave_start == 0 and small.wave_blocks == 4


@pytest.mark.parametrize("grid, wave, start", [
    ((40, 8, 6), 10, (3 * 8 + 4) * 40 + 15),   # fits in a row: middle row of the middle plane
    ((40, 8, 6), 40, (3 * 8 + 4) * 40),        # exactly one row
    ((40, 8, 6), 100, 3 * 320 + 110),          # fits in a plane: middle of the middle plane
    ((40, 8, 6), 700, (1920 - 700) // 2),      # more than a plane: middle of the grid
    ((1, 1, 9), 3, 3),                         # one block per plane: the middle blocks
])
def test_wave_start_places_the_wave_inside_one_row_or_plane(grid, wave, start):
    assert wave_start(grid, wave) == start
    gx, gy, gz = grid
    first, last = start, start + wave - 1
    if wave <= gx:  # never straddles a row (hence never a plane) boundary
        assert first // gx == last // gx
    elif wave <= gx * gy:
        assert first // (gx * gy) == last // (gx * gy)
    assert 0 <= first and last < gx * gy * gz


@given(st.integers(1, 30), st.integers(1, 30), st.integers(1, 30), st.data())
def test_wave_start_is_a_valid_range_and_never_crosses_a_plane_it_fits_in(gx, gy, gz, data):
    total = gx * gy * gz
    wave = data.draw(st.integers(1, total))
    s = wave_start((gx, gy, gz), wave)
    assert 0 <= s and s + wave <= total
    if wave <= gx * gy:
        assert s // (gx * gy) == (s + wave - 1) // (gx * gy)
    if wave <= gx:
        assert s // gx == (s + wave - 1) // gx


@pytest.mark.parametrize("start, stop", [(0, 1), (5, 77), (3, 240), (0, 240), (17, 18), (40, 200), (119, 121)])
def test_id_range_boxes_cover_exactly_the_range(start, stop):
    grid = (4, 6, 10)
    boxes = id_range_boxes(start, stop, grid)
    assert len(boxes) <= 5
    ids = []
    for lo, hi in boxes:
        for z in range(lo[2], hi[2]):
            for y in range(lo[1], hi[1]):
                for x in range(lo[0], hi[0]):
                    ids.append(x + 4 * (y + 6 * z))
    assert sorted(ids) == list(range(start, stop))
