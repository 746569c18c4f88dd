"""Occupancy, grid and wave selection."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import warpspeed
from warpspeed.measurement import measurements
from warpspeed.model.launch import (
    MAX_CELLS,
    MAX_EXTENT,
    MAX_FOLDING,
    MAX_GRID,
    LaunchError,
    id_range_boxes,
    make_launch,
    occupancy,
    triple,
    wave_start,
)

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


# ------------------------------------------------------------------- limits: the measurement reader's, in one place

def test_the_limits_are_the_measurement_readers():
    assert (MAX_EXTENT, MAX_GRID, MAX_CELLS, MAX_FOLDING) == (2**31 - 1, (2**31 - 1, 65535, 65535), 2**40, 64)
    assert (measurements.MAX_EXTENT, measurements.MAX_GRID, measurements.MAX_CELLS, measurements.MAX_FOLDING) == (
        MAX_EXTENT, MAX_GRID, MAX_CELLS, MAX_FOLDING)


@pytest.mark.parametrize("what", ["block", "folding", "domain"])
@pytest.mark.parametrize("axis", [0, 1, 2])
def test_extents_up_to_2_31_minus_1(what, axis):
    at = [1, 1, 1]
    at[axis] = MAX_EXTENT
    if what == "folding":  # a folding has at most 64 cells per thread: its extent limit is checked first
        with pytest.raises(warpspeed.InputError, match="folding"):
            triple(at, what)
    else:
        assert triple(at, what) == tuple(at)
    past = [1, 1, 1]
    past[axis] = MAX_EXTENT + 1
    with pytest.raises(warpspeed.InputError, match=rf"^{what} .*{'xyz'[axis]} extent 2147483648 .*1\.\.2147483647"):
        triple(past, what)


@pytest.mark.parametrize("folding", [(64, 1, 1), (1, 64, 1), (1, 1, 64), (4, 4, 4), (2, 2, 16)])
def test_a_folding_of_64_cells_per_thread_launches(folding):
    k = warpspeed.find_kernel("star3d-r4", domain=(128, 128, 128))
    assert make_launch(k, A100, (32, 4, 8), folding).folding == folding


@pytest.mark.parametrize("folding", [(65, 1, 1), (1, 1, 65), (1, 5, 13), (1, 1, 4096), (1, 1, MAX_EXTENT)])
def test_a_folding_of_more_than_64_cells_per_thread_is_an_input_error(folding):
    k = warpspeed.find_kernel("star3d-r4", domain=(128, 128, 128))
    with pytest.raises(warpspeed.InputError, match=r"^folding .* cells per thread; give a folding of 1 to 64 ") as e:
        make_launch(k, A100, (32, 4, 8), folding)
    assert not isinstance(e.value, LaunchError)  # a limit of the model, not of the device


def test_a_domain_of_2_40_cells_launches_and_its_wave_has_coordinates():
    k = warpspeed.find_kernel("star3d-r4", domain=(2**14, 2**13, 2**13))
    launch = make_launch(k, A100, (32, 4, 8))
    assert math.prod(launch.domain) == MAX_CELLS and launch.grid == (512, 2048, 1024)
    coords = launch.wave_block_coords()
    assert coords.shape == (launch.wave_blocks, 3) and (coords < launch.grid).all()


@pytest.mark.parametrize("domain", [(2**14 + 1, 2**13, 2**13), (2**20 + 1, 2**20, 1),
                                    (MAX_EXTENT, MAX_EXTENT, MAX_EXTENT)])
def test_a_domain_of_more_than_2_40_cells_is_an_input_error(domain):
    k = warpspeed.find_kernel("star3d-r4")
    pattern = r"^domain .* cells; give a domain of 1 to 2\^40 = 1099511627776 cells"
    with pytest.raises(warpspeed.InputError, match=pattern):  # a domain given to estimate (or rank), up front
        warpspeed.estimate("star3d-r4", A100, (32, 4, 8), domain=domain)
    with pytest.raises(warpspeed.InputError, match=pattern) as e:  # a kernel's own domain, in make_launch
        make_launch(k.with_domain(domain), A100, (32, 4, 8))
    assert not isinstance(e.value, LaunchError)


@pytest.mark.parametrize("axis", [1, 2])
@pytest.mark.parametrize("folding", [(1, 1, 1), (1, 2, 2)])
def test_grid_y_and_z_up_to_65535_blocks(axis, folding):
    k = warpspeed.find_kernel("copy")
    block = (32, 4, 2)
    cells = [b * f for b, f in zip(block, folding, strict=True)]
    at = [32, cells[1], cells[2]]
    at[axis] = 65535 * cells[axis]
    launch = make_launch(k.with_domain(at), A100, block, folding)
    assert launch.grid[axis] == 65535
    past = list(at)
    past[axis] += 1  # one more cell: one more block
    with pytest.raises(LaunchError, match=rf"^grid .* has 65536 blocks in {'xyz'[axis]}; CUDA launches at most 65535 "):
        make_launch(k.with_domain(past), A100, block, folding)


def test_grid_x_up_to_2_31_minus_1_blocks_is_estimated_without_overflow():
    """The x extent limit is the grid's x limit: one-thread blocks over the widest domain still launch."""
    launch = make_launch(warpspeed.find_kernel("copy", domain=(MAX_EXTENT, 512, 1)), A100, (1, 1, 1))
    assert launch.grid == (MAX_EXTENT, 512, 1)
    e = warpspeed.estimate("copy", A100, (1, 1, 1), domain=(MAX_EXTENT, 512, 1))
    assert e.grid == (MAX_EXTENT, 512, 1) and e.performance_GLup_s > 0


def _active_warps_brute_force(launch, warp_size):
    """Every thread of every block: a warp works if one of its threads has a cell of its folding in the domain."""
    total = 0
    bx, by, bz = launch.block
    for gz in range(launch.grid[2]):
        for gy in range(launch.grid[1]):
            for gx in range(launch.grid[0]):
                working = set()
                for tz in range(bz):
                    for ty in range(by):
                        for tx in range(bx):
                            origin = [g * b * f + t * f for g, b, f, t in
                                      zip((gx, gy, gz), launch.block, launch.folding, (tx, ty, tz), strict=True)]
                            if all(o < n for o, n in zip(origin, launch.domain, strict=True)):
                                working.add((tx + bx * (ty + by * tz)) // warp_size)
                total += len(working)
    return total / launch.grid_blocks


@settings(deadline=None)  # the twin walks every thread of the grid: tens of thousands for a 40^3 domain
@given(st.tuples(*[st.integers(1, 40)] * 3), st.sampled_from([(32, 1, 1), (64, 2, 1), (8, 4, 2), (48, 1, 1),
                                                               (1, 64, 1), (96, 1, 1), (16, 2, 4), (5, 7, 3)]),
       st.tuples(st.integers(1, 3), st.integers(1, 2), st.integers(1, 2)), st.sampled_from([32, 64]))
def test_active_warps_per_block_agrees_with_every_thread(domain, block, folding, warp_size):
    launch = make_launch(warpspeed.find_kernel("copy", domain=domain), A100, block, folding)
    assert launch.active_warps_per_block(warp_size) == pytest.approx(_active_warps_brute_force(launch, warp_size))


@pytest.mark.parametrize("domain, block, folding, active", [
    ((256, 64, 64), (512, 1, 1), (1, 1, 1), 8),        # half of a block wider than the domain has no cell
    ((640, 8, 8), (1024, 1, 1), (1, 1, 1), 20),        # 640 of 1024 threads
    ((640, 8, 8), (256, 4, 1), (1, 1, 1), 80 / 3),     # two full blocks of 32 warps and one of 16 per row
    ((640, 8, 8), (128, 1, 1), (4, 1, 1), 2.5),        # 512 cells per block: the second block's 128 cells, one warp
    ((256, 64, 64), (32, 4, 2), (1, 2, 2), 8),         # the domain a multiple of the block: every warp works
])
def test_active_warps_per_block_analytic(domain, block, folding, active):
    launch = make_launch(warpspeed.find_kernel("copy", domain=domain), A100, block, folding)
    assert launch.active_warps_per_block(32) == pytest.approx(active)
