"""`warpspeed measure` of a kernel of linear1d or gridstrided_linear1d indexing runs the configurations the model
estimates: one-dimensional blocks (N, 1, 1) by default (the ranking's), and a block of two or three dimensions,
or a folding such a kernel has not, is refused before anything runs. Its generated program reads only
blockIdx.x, blockDim.x and threadIdx.x: a (32, 4, 8) block would have run 32 threads on every cell of 32 cells
and left the rest of the domain untouched, a measurement of another program than the one estimated."""

import pytest

import warpspeed
from warpspeed import InputError
from warpspeed.interface.cli import main
from warpspeed.measurement.measure import programs_for
from warpspeed.model.launch import LaunchError
from warpspeed.studies.space import Configuration

SHAPE = [15, 9, 7]


def star(indexing: str) -> warpspeed.Kernel:
    return warpspeed.kernel_from_dict({"name": "s", "domain": [13, 7, 5], "indexing": indexing, "field": [
        {"name": "src", "element_bytes": 8, "shape": SHAPE, "loads": [["tidx+1", "tidy+1", "tidz+1"],
                                                                      ["tidx", "tidy+1", "tidz+1"]]},
        {"name": "dst", "element_bytes": 8, "shape": SHAPE, "stores": [["tidx+1", "tidy+1", "tidz+1"]]}]})


@pytest.mark.parametrize("indexing", ["linear1d", "gridstrided_linear1d"])
def test_a_block_of_more_dimensions_is_refused(indexing):
    with pytest.raises(LaunchError, match=r"one-dimensional blocks; give its threads per block as \(N, 1, 1\)"):
        programs_for(star(indexing), "s", [Configuration((32, 4, 8), (1, 1, 1))], "warpspeed")


def test_a_folding_a_linear1d_kernel_has_not_is_refused():
    with pytest.raises(InputError, match="updates one cell per thread; give the folding 1,1,1"):
        programs_for(star("linear1d"), "s", [Configuration((256, 1, 1), (2, 1, 1))], "warpspeed")
    with pytest.raises(InputError, match="give K,1,1"):
        programs_for(star("gridstrided_linear1d"), "s", [Configuration((256, 1, 1), (1, 2, 1))], "warpspeed")
    assert programs_for(star("gridstrided_linear1d"), "s", [Configuration((256, 1, 1), (4, 1, 1))], "warpspeed")


def test_measure_runs_one_dimensional_blocks_by_default(tmp_path, fake_gpu):
    path = tmp_path / "k.toml"
    path.write_text('name = "s"\nindexing = "linear1d"\ndomain = [13, 7, 5]\n[[field]]\nname = "src"\n'
                    f'element_bytes = 8\nshape = {SHAPE}\nloads = [["tidx+1", "tidy+1", "tidz+1"]]\n'
                    f'[[field]]\nname = "dst"\nelement_bytes = 8\nshape = {SHAPE}\n'
                    'stores = [["tidx+1", "tidy+1", "tidz+1"]]\n')
    assert main(["measure", str(path), "--device", "H100-SXM5-80GB", "--threads", "128", "--repeats", "1",
                 "--warmup", "0", "-o", str(tmp_path / "m.csv")]) == 0
    blocks = {launch[2] for launch in fake_gpu.launches}
    assert blocks == {(32, 1, 1), (64, 1, 1), (128, 1, 1)}
