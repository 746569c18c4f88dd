"""Kernels of linear1d indexing (pystencils' Linear1D): thread t of a one-dimensional launch updates the t-th cell
of the iteration space linearised x fastest, so a block of N threads holds N consecutive cells and wraps rows and
planes. The estimate must match the brute-force twin (tests/bruteforce.py, which enumerates every thread of the
wave) on a table of cases and on random kernels, and equal the linear3d estimate of the same blocks wherever the
blocks are boxes that tile the domain in the same order (N dividing nx; N a multiple of nx dividing a plane)."""

from __future__ import annotations

import math

import pytest
from bruteforce import brute_force, compare, from_estimate
from hypothesis import assume, given
from hypothesis import strategies as st
from kernel_strategies import PROFILE, population_kernels, stencil_kernels

import warpspeed
from warpspeed import InputError
from warpspeed.model.launch import LaunchError, make_launch

A100 = warpspeed.device("A100-SXM4-40GB")
H100 = warpspeed.device("H100-SXM5-80GB")


def linear(spec: dict, indexing: str = "linear1d") -> warpspeed.Kernel:
    return warpspeed.kernel_from_dict({**spec, "indexing": indexing})


def star_spec(domain, r=1, eb=8, offset=0, pad=0, registers=64) -> dict:
    """A 3-D star of radius r over ``domain``, src and dst padded by r (and ``pad`` more elements per row)."""
    shape = [domain[0] + 2 * r + pad, domain[1] + 2 * r, domain[2] + 2 * r]
    offs = [(0, 0, 0)] + [tuple(k if i == d else 0 for i in range(3)) for d in range(3) for k in (-r, r)]
    loads = [[f"tidx+{r + o[0]}", f"tidy+{r + o[1]}", f"tidz+{r + o[2]}"] for o in offs]
    return {"name": "star", "domain": list(domain), "registers": registers, "flops_per_lup": 8, "field": [
        {"name": "src", "element_bytes": eb, "shape": shape, "offset": offset, "loads": loads},
        {"name": "dst", "element_bytes": eb, "shape": shape, "offset": offset,
         "stores": [[f"tidx+{r}", f"tidy+{r}", f"tidz+{r}"]]}]}


def _compare(kernel, dev, threads):
    bf = brute_force(kernel, dev, (threads, 1, 1))
    est = from_estimate(warpspeed.estimate(kernel, dev, (threads, 1, 1)))
    bad = compare(bf, est)
    assert not bad, f"linear1d estimate differs from brute force (brute_force, estimate): {bad}"
    return bf


# (id, kernel spec, threads per block, sm_count): blocks that wrap rows (N not dividing nx) and planes, rows
# shorter than a warp, whole planes per block, misaligned rows, 4 B elements, an array of structures
CASES = [
    ("wrap-rows", star_spec((30, 14, 12), offset=1, registers=255), 32, 1),
    ("wrap-planes", star_spec((13, 5, 30), eb=4, offset=3, registers=255), 64, 1),
    ("rows-of-whole-blocks", star_spec((64, 8, 12), registers=255), 32, 1),
    ("blocks-of-whole-rows", star_spec((16, 8, 24), r=2, registers=255), 64, 1),
    ("block-wider-than-plane", star_spec((7, 3, 40), pad=1, registers=255), 96, 1),
    ("wrap-rows-many-sms", star_spec((30, 14, 12), offset=1), 32, 3),
    ("tiny", star_spec((5, 3, 4), eb=4, offset=1), 32, 1),
]


@pytest.mark.parametrize("case_id", [c[0] for c in CASES])
@pytest.mark.parametrize("device", ["A100", "H100"])
def test_linear1d_matches_brute_force(case_id, device):
    _, spec, threads, sm = next(c for c in CASES if c[0] == case_id)
    dev = (A100 if device == "A100" else H100).with_overrides(sm_count=sm)
    bf = _compare(linear(spec), dev, threads)
    assert bf["grid"] == (-(-math.prod(spec["domain"]) // threads), 1, 1)


def test_table_has_layers_and_wrapped_waves():
    """The cases exercise what they claim: waves inside the grid, with y and z layers."""
    seen = {"y": 0, "z": 0, "inside": 0}
    for _, spec, threads, sm in CASES:
        bf = brute_force(linear(spec), A100.with_overrides(sm_count=sm), (threads, 1, 1))
        seen["y"] += bf["layer_y_blocks"] > 0
        seen["z"] += bf["layer_z_blocks"] > 0
        seen["inside"] += 0 < bf["wave_start"] and bf["wave_start"] + bf["wave_blocks"] < bf["grid"][0]
    assert seen["y"] >= 3 and seen["z"] >= 3 and seen["inside"] >= 4, seen


@st.composite
def linear_configurations(draw):
    threads = draw(st.sampled_from([32, 33, 64, 96, 128, 256]))
    sm_count = draw(st.integers(1, 4)) * draw(st.sampled_from([1, -1]))  # negative: on the H100
    return threads, sm_count


def _random_compare(spec, config):
    threads, sm_count = config
    kernel = linear(spec)
    dev = (A100 if sm_count > 0 else H100).with_overrides(sm_count=abs(sm_count))
    try:
        make_launch(kernel, dev, (threads, 1, 1))
    except LaunchError:
        assume(False)
    _compare(kernel, dev, threads)


@PROFILE
@given(spec=stencil_kernels(max_domain=(40, 16, 8)), config=linear_configurations())
def test_random_linear1d_stencils_match_brute_force(spec, config):
    _random_compare(spec, config)


@PROFILE
@given(spec=population_kernels(), config=linear_configurations())
def test_random_linear1d_populations_match_brute_force(spec, config):
    _random_compare(spec, config)


def _same_estimates(a, b):
    ea, eb = a.to_dict(), b.to_dict()
    for key in ("volumes_B_per_lup", "limiters_GLup_s"):
        for name, v in ea[key].items():
            w = eb[key][name]
            assert (v is None and w is None) or math.isclose(v, w, rel_tol=1e-12), (key, name, v, w)
    assert math.isclose(a.performance_GLup_s, b.performance_GLup_s, rel_tol=1e-12)
    assert (a.wave_blocks, a.wave_valid_lups) == (b.wave_blocks, b.wave_valid_lups)


@PROFILE
@given(nx_blocks=st.integers(1, 4), threads=st.sampled_from([32, 64, 128]), ny=st.integers(1, 12),
       nz=st.integers(1, 10), r=st.integers(0, 2), eb=st.sampled_from([4, 8]), sm=st.integers(1, 8),
       rows=st.sampled_from([0, 1, 2, 4]))
def test_linear1d_equals_linear3d_where_blocks_are_boxes(nx_blocks, threads, ny, nz, r, eb, sm, rows):
    """N dividing nx: a linear1d block is the linear3d block (N, 1, 1) at the same place, and the grids' blocks
    run in the same order; N = k nx with k dividing ny: the block (nx, k, 1). The estimates are the same."""
    if rows:  # blocks of whole rows
        assume(ny % rows == 0)
        nx, block3 = threads // rows, (threads // rows, rows, 1)
    else:
        nx, block3 = nx_blocks * threads, (threads, 1, 1)
    spec = star_spec((nx, ny, nz), r=r, eb=eb, offset=1)
    dev = H100.with_overrides(sm_count=sm)
    _same_estimates(warpspeed.estimate(linear(spec), dev, (threads, 1, 1)),
                    warpspeed.estimate(linear(spec, "linear3d"), dev, block3))


def test_active_warps_of_linear_blocks():
    """100 cells in blocks of 64: the second block's last 28 threads have no cell, one of its warps idles."""
    launch = make_launch(linear(star_spec((10, 5, 2))), A100, (64, 1, 1))
    assert launch.grid == (2, 1, 1)
    assert launch.active_warps_per_block(32) == (2 + 2) / 2
    launch = make_launch(linear(star_spec((10, 5, 1))), A100, (64, 1, 1))  # 50 cells: 18 idle, one warp
    assert launch.active_warps_per_block(32) == 2


def test_linear1d_wrapping_rows_costs_more_than_row_aligned_blocks():
    """A 7-point star on 254 cells per row: blocks of 256 threads wrap a row each, their warps straddle two rows
    (more sectors per warp than on 256-wide rows); the L1 requests grow, the DRAM traffic does not."""
    wrapped = warpspeed.estimate(linear(star_spec((254, 64, 64), offset=15)), H100, (256, 1, 1))
    aligned = warpspeed.estimate(linear(star_spec((256, 64, 64), offset=15)), H100, (256, 1, 1))
    assert wrapped.volumes_B_per_lup["l1_load"] > aligned.volumes_B_per_lup["l1_load"]
    assert wrapped.volumes_B_per_lup["dram_load"] == pytest.approx(aligned.volumes_B_per_lup["dram_load"], rel=0.03)


def test_linear1d_refuses_other_blocks_and_folding():
    k = linear(star_spec((32, 8, 8)))
    with pytest.raises(LaunchError, match=r"one-dimensional blocks; give its threads per block as \(N, 1, 1\), "
                                          r"such as \(256, 1, 1\)"):
        warpspeed.estimate(k, A100, (64, 4, 1))
    with pytest.raises(InputError, match="updates one cell per thread; give the folding 1,1,1"):
        warpspeed.estimate(k, A100, (64, 1, 1), folding=(2, 1, 1))


@pytest.mark.parametrize("value", ["Linear1D", "blockwise4d", 1, None])
def test_unknown_indexing_is_refused(value):
    with pytest.raises(InputError, match=r"'indexing' must be one of \['linear3d', 'linear1d', "
                                         r"'gridstrided_linear1d'\]"):
        warpspeed.kernel_from_dict({**star_spec((8, 8, 8)), "indexing": value})


def test_ranking_of_a_linear1d_kernel_has_one_dimensional_blocks():
    """Its blocks hold consecutive cells whatever their shape: the ranking takes (N, 1, 1), every power of two
    from one warp to the largest thread count, and the counts given; it is compared with pystencils' Linear1D
    default block (256, 1, 1)."""
    k = linear(star_spec((126, 64, 32)))
    r = warpspeed.rank(k, H100, jobs=1)
    assert sorted(x.configuration.block for x in r.results) == [(n, 1, 1) for n in (32, 64, 128, 256, 512, 1024)]
    assert all(x.error is None for x in r.results)
    r = warpspeed.rank(k, H100, threads=(96,), jobs=1)
    assert sorted(x.configuration.block for x in r.results) == [(32, 1, 1), (64, 1, 1), (96, 1, 1)]
    from warpspeed.application.ranking import reference_estimate
    assert reference_estimate(r, k, H100).configuration.block == (256, 1, 1)


# grid-strided kernels: block N, K iterations per thread (the folding in x), G = cells / (N K) blocks
STRIDED_CASES = [  # (id, spec, threads, iterations, sm_count)
    ("strided-more-blocks-than-resident", star_spec((30, 14, 12), offset=1, registers=255), 32, 3, 1),
    ("strided-all-resident", star_spec((30, 14, 12), offset=1, registers=255), 32, 40, 1),
    ("strided-planes", star_spec((13, 5, 30), eb=4, offset=3, registers=255), 64, 2, 1),
    ("strided-one-iteration", star_spec((64, 8, 12), registers=255), 32, 1, 1),
]


@pytest.mark.parametrize("case_id", [c[0] for c in STRIDED_CASES])
@pytest.mark.parametrize("device", ["A100", "H100"])
def test_gridstrided_linear1d_matches_brute_force(case_id, device):
    _, spec, threads, iterations, sm = next(c for c in STRIDED_CASES if c[0] == case_id)
    kernel = linear(spec, "gridstrided_linear1d")
    dev = (A100 if device == "A100" else H100).with_overrides(sm_count=sm)
    bf = brute_force(kernel, dev, (threads, 1, 1), (iterations, 1, 1))
    est = warpspeed.estimate(kernel, dev, (threads, 1, 1), (iterations, 1, 1))
    bad = compare(bf, from_estimate(est))
    assert not bad, f"grid-strided estimate differs from brute force: {bad}"
    assert est.grid == (-(-math.prod(spec["domain"]) // (threads * iterations)), 1, 1)


@PROFILE
@given(spec=stencil_kernels(max_domain=(40, 16, 8)), config=linear_configurations(),
       iterations=st.sampled_from([1, 2, 3, 8, 64]))
def test_random_gridstrided_stencils_match_brute_force(spec, config, iterations):
    threads, sm_count = config
    kernel = linear(spec, "gridstrided_linear1d")
    dev = (A100 if sm_count > 0 else H100).with_overrides(sm_count=abs(sm_count))
    try:
        make_launch(kernel, dev, (threads, 1, 1), (iterations, 1, 1))
    except LaunchError:
        assume(False)
    bad = compare(brute_force(kernel, dev, (threads, 1, 1), (iterations, 1, 1)),
                  from_estimate(warpspeed.estimate(kernel, dev, (threads, 1, 1), (iterations, 1, 1))))
    assert not bad, f"grid-strided estimate differs from brute force: {bad}"


def test_one_iteration_per_thread_is_linear1d_and_a_resident_grid_keeps_the_layers():
    """K = 1: the grid covers the cells, every thread's loop runs once: the linear1d estimate. A grid of more
    blocks than are resident, looping (K = 2): each resident block's previous iteration is a grid of cells
    before, so the row and plane before the wave ran long ago and nothing of them is reused; a grid that is all
    resident (K = 64 here) reuses them again, as linear1d does."""
    spec = star_spec((254, 126, 64), offset=15)
    one, strided = linear(spec), linear(spec, "gridstrided_linear1d")
    _same_estimates(warpspeed.estimate(one, H100, (256, 1, 1)), warpspeed.estimate(strided, H100, (256, 1, 1)))
    looping = warpspeed.estimate(strided, H100, (256, 1, 1), (2, 1, 1))
    resident = warpspeed.estimate(strided, H100, (256, 1, 1), (64, 1, 1))
    assert looping.layer_z.potential_B_per_lup == 0 < resident.layer_z.potential_B_per_lup
    assert resident.grid[0] <= resident.wave_blocks < looping.wave_blocks
    assert looping.volumes_B_per_lup["dram_load"] > 1.3 * resident.volumes_B_per_lup["dram_load"]


def test_ranking_of_a_gridstrided_kernel_takes_its_grids():
    """Blocks (N, 1, 1) times 1 to 64 iterations per thread (the grid), unless foldings are given."""
    k = linear(star_spec((126, 64, 32)), "gridstrided_linear1d")
    r = warpspeed.rank(k, H100, threads=(256,), jobs=1)
    assert {x.configuration.folding for x in r.results} == {(1 << i, 1, 1) for i in range(7)}
    assert {x.estimate.grid for x in r.results if x.configuration.block == (256, 1, 1)} == {
        (-(-126 * 64 * 32 // (256 << i)), 1, 1) for i in range(7)}
    with pytest.raises(InputError, match="iterations per thread as the folding in x; give K,1,1"):
        warpspeed.estimate(k, H100, (256, 1, 1), (1, 2, 1))


def test_a_gridstrided_estimate_reports_the_folding_it_was_given():
    """Its folding in x is the loop's iterations: the estimate says (K, 1, 1), and estimating its configuration
    again gives the same numbers."""
    k = linear(star_spec((126, 64, 32)), "gridstrided_linear1d")
    e = warpspeed.estimate(k, H100, (256, 1, 1), (4, 1, 1))
    assert e.folding == (4, 1, 1) and e.grid == (-(-126 * 64 * 32 // 1024), 1, 1)
    again = warpspeed.estimate(k, H100, e.block, e.folding)
    assert again.performance_GLup_s == e.performance_GLup_s
