"""The programs `warpspeed measure` generates for kernels of linear1d and gridstrided_linear1d indexing, run on the
CPU: every cell is updated once, as by the linear3d program of the same accesses (so a GPU measures the model's
mapping), with the grid the model assumes; a grid one block short misses cells (linear1d) or, for a grid-stride
loop, still covers them."""

import shutil

import numpy as np
import pytest
from cuda_on_cpu import run_on_cpu

import warpspeed
from warpspeed.measurement.measure import grid_of, programs_for
from warpspeed.studies.space import Configuration

pytestmark = pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")


def star(domain, indexing):
    nx, ny, nz = domain
    shape = [nx + 2, ny + 2, nz + 2]
    offs = [(0, 0, 0), (-1, 0, 0), (1, 0, 0), (0, -1, 0), (0, 1, 0), (0, 0, -1), (0, 0, 1)]
    loads = [[f"tidx+{1 + o[0]}", f"tidy+{1 + o[1]}", f"tidz+{1 + o[2]}"] for o in offs]
    return warpspeed.kernel_from_dict({
        "name": "star", "domain": list(domain), "indexing": indexing, "field": [
            {"name": "src", "element_bytes": 8, "shape": shape, "offset": 3, "loads": loads},
            {"name": "dst", "element_bytes": 8, "shape": shape, "offset": 1,
             "stores": [["tidx+1", "tidy+1", "tidz+1"]]}]})


def run(kernel, block, folding, tmp_path, short=False):
    c = Configuration(block, folding)
    (program,) = programs_for(kernel, "star", [c], "warpspeed").values()
    grid = grid_of(kernel, c)
    if short:
        grid = (grid[0] - 1, grid[1], grid[2])
    tmp_path.mkdir()
    rng = np.random.default_rng(3)
    inputs = [rng.uniform(0.5, 1.5, a.elements + a.offset) for a in program.arrays]
    (out,) = run_on_cpu(program, grid, block, inputs, tmp_path)
    return out, grid


@pytest.mark.parametrize("indexing, block, folding", [("linear1d", (32, 1, 1), (1, 1, 1)),
                                                      ("linear1d", (96, 1, 1), (1, 1, 1)),
                                                      ("gridstrided_linear1d", (32, 1, 1), (3, 1, 1)),
                                                      ("gridstrided_linear1d", (64, 1, 1), (1, 1, 1))])
def test_a_linear_program_updates_the_cells_of_the_linear3d_program(indexing, block, folding, tmp_path):
    domain = (13, 7, 5)  # rows of 13: blocks of 32 and 96 threads wrap rows and planes
    want, _ = run(star(domain, "linear3d"), (8, 4, 2), (1, 1, 1), tmp_path / "3d")
    kernel = star(domain, indexing)
    got, grid = run(kernel, block, folding, tmp_path / "1d")
    assert grid == (-(-455 // (block[0] * folding[0])), 1, 1)
    assert grid == warpspeed.estimate(kernel, "H100-SXM5-80GB", block, folding).grid
    for g, w in zip(got, want, strict=True):
        np.testing.assert_allclose(g, w, rtol=1e-12)
    short, _ = run(kernel, block, folding, tmp_path / "short", short=True)
    missed = not np.allclose(short[1], want[1])
    assert missed == (indexing == "linear1d")  # a grid-stride loop covers the cells with any grid
