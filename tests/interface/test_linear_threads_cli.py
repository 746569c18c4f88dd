"""`warpspeed rank --threads N` of a kernel of one-dimensional launch (linear1d, gridstrided_linear1d) ranks the
count N as given, power of two or not (docs/kernel-format.md: "every power of two N from one warp up to the
largest --threads count, and the counts given"), as warpspeed.rank does; a linear3d kernel's ranked shapes still
need powers of two, which the CLI says naming --threads."""

import json

import pytest

from warpspeed.interface.cli import main

TOML = """name = "s"
indexing = "{indexing}"
domain = [100, 37, 11]
[[field]]
name = "src"
element_bytes = 8
shape = ["nx+2", "ny+2", "nz+2"]
loads = [["tidx+1", "tidy+1", "tidz+1"], ["tidx", "tidy+1", "tidz+1"]]
[[field]]
name = "dst"
element_bytes = 8
shape = ["nx+2", "ny+2", "nz+2"]
stores = [["tidx+1", "tidy+1", "tidz+1"]]
"""


@pytest.mark.parametrize("indexing", ["linear1d", "gridstrided_linear1d"])
def test_rank_takes_a_thread_count_that_is_no_power_of_two(indexing, tmp_path, capsys):
    path = tmp_path / "k.toml"
    path.write_text(TOML.format(indexing=indexing))
    assert main(["rank", str(path), "--device", "H100-SXM5-80GB", "--threads", "96", "--jobs", "1",
                 "--format", "json"]) == 0
    blocks = {tuple(r["block"]) for r in json.loads(capsys.readouterr().out)["results"]}
    assert blocks == {(32, 1, 1), (64, 1, 1), (96, 1, 1)}


def test_a_linear3d_kernel_still_needs_powers_of_two(tmp_path, capsys):
    path = tmp_path / "k.toml"
    path.write_text(TOML.format(indexing="linear3d"))
    assert main(["rank", str(path), "--device", "H100-SXM5-80GB", "--threads", "96", "--jobs", "1"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--threads 96: the ranked block shapes have power-of-two extents" in err


def test_the_web_ranking_takes_it_too():
    pytest.importorskip("flask")
    from warpspeed.web.app import create_app

    answer = create_app().test_client().post("/api/rank", json={
        "toml": TOML.format(indexing="linear1d"), "device": "H100-SXM5-80GB", "threads": "96"})
    assert answer.status_code == 200, answer.get_json()
    assert {tuple(r["block"]) for r in answer.get_json()["ranking"]["results"]} == {(32, 1, 1), (64, 1, 1), (96, 1, 1)}
