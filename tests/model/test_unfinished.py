"""Stored sectors no cell of the domain completes (warpspeed.model.unfinished): the count taken from two small
domains per dimension and the period of the rows' alignment is the whole domain's, counted directly and, on
small domains, cell by cell (the brute-force twin)."""

import pytest
from bruteforce import unfinished_B_per_lup
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from kernel_strategies import stencil_kernels

import warpspeed
from warpspeed.model.range_volumes import ELEMENTS, applies
from warpspeed.model.unfinished import DIRECT_ROWS, _count, _outer_step, unfinished_store_sectors


@settings(max_examples=300, deadline=None)
@given(spec=stencil_kernels(max_domain=(12, 40, 8 * DIRECT_ROWS), dims=3, x_padding=(0, 9)),
       sector=st.sampled_from([32, 64, 128]))
def test_the_count_from_the_periods_is_the_whole_domains(spec, sector):
    """Random stencils (4 and 8 B, offsets, paddings, strided and transposed fields, tuple or linear indices,
    rows of one element) over domains of up to 8 times the planes counted whole: the count from two short
    domains is the direct one."""
    k = warpspeed.kernel_from_dict(spec)
    assume(applies(k, ELEMENTS))
    assert unfinished_store_sectors(k, sector) == _count(k, k.domain, sector)


@pytest.mark.parametrize("kernel, domain", [("d3q19-srt", (20, 150, 131)), ("lbm:stencil=D3Q27,method=trt",
                                                                             (9, 97, 160)),
                                            ("d3q15-allen-cahn", (33, 141, 88)), ("star3d-r1", (30, 200, 100))])
def test_lbm_and_stencil_kernels_of_many_rows(kernel, domain):
    k = warpspeed.find_kernel(kernel, domain=domain)
    d, _, margin = _outer_step(k, 32)
    assert d == 2 and domain[d] > 2 * margin + DIRECT_ROWS  # counted from two short domains along z
    assert unfinished_store_sectors(k, 32) == _count(k, k.domain, 32)
    assert sum(unfinished_store_sectors(k, 32)) > 0


@settings(max_examples=40, deadline=None)
@given(spec=stencil_kernels(max_domain=(20, 12, 6), x_padding=(0, 9)))
def test_small_domains_match_every_cell_listed(spec):
    """The brute-force twin lists every cell's stores: the same sectors, per field."""
    k = warpspeed.kernel_from_dict(spec)
    twin = unfinished_B_per_lup(k, 32)
    lups = k.domain[0] * k.domain[1] * k.domain[2]
    assert tuple(n * 32 / lups for n in unfinished_store_sectors(k, 32)) == pytest.approx(twin)


def test_a_row_of_doubles_with_one_ghost_cell_each_side():
    """star3d-r1 at 256 x 256 x 64 cells: rows of 258 doubles are 64.5 sectors, so every two rows end next to a
    ghost cell in 3 sectors (one shared by both rows), and each of the 64 planes once more where its last row
    meets the ghost rows: 1.5 per row and one per plane, in the written field only."""
    k = warpspeed.find_kernel("star3d-r1", domain=(256, 256, 64))
    assert unfinished_store_sectors(k, 32) == (0, 256 * 64 * 3 // 2 + 64)
    aligned = warpspeed.find_kernel("star3d-r4", domain=(640, 512, 512))  # rows of 648 doubles, halo of 4: none
    assert unfinished_store_sectors(aligned, 32) == (0, 0)
