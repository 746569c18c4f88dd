"""The reference block of a ranking of a one-dimensional launch (``linear1d`` and ``gridstrided_linear1d``
indexing) is pystencils' Linear1D default (256, 1, 1), in the CLI's headline, its ranking plot and the web
page's: the front end's three-dimensional block (8x8x4 for a 3-D kernel file) cannot launch such a kernel."""

from __future__ import annotations

import pytest

import warpspeed
from warpspeed.application.ranking import reference_estimate
from warpspeed.interface.cli import main

H100 = "H100-SXM5-80GB"
TOML = """name = "star-linear"
indexing = "{indexing}"
domain = [100, 37, 11]
[flops]
add = 6
[[field]]
name = "src"
element_bytes = 8
shape = ["nx+2", "ny+2", "nz+2"]
loads = [["tidx+1", "tidy+1", "tidz+1"], ["tidx", "tidy+1", "tidz+1"], ["tidx+1", "tidy+1", "tidz"]]
[[field]]
name = "dst"
element_bytes = 8
shape = ["nx+2", "ny+2", "nz+2"]
stores = [["tidx+1", "tidy+1", "tidz+1"]]
"""


@pytest.fixture(params=["linear1d", "gridstrided_linear1d"])
def kernel_file(request, tmp_path):
    path = tmp_path / "k.toml"
    path.write_text(TOML.format(indexing=request.param))
    return path


def test_reference_of_a_one_dimensional_launch_is_256_threads(kernel_file):
    ranking = warpspeed.rank(str(kernel_file), H100, threads=(128,), jobs=1)
    ref = reference_estimate(ranking, str(kernel_file), H100)
    assert ref.configuration.block == (256, 1, 1) and ref.configuration.folding == (1, 1, 1)
    assert ref.error is None and ref.performance_GLup_s > 0


def test_the_cli_headline_compares_with_256_threads(kernel_file, capsys):
    assert main(["rank", str(kernel_file), "--device", H100, "--threads", "128", "--jobs", "1"]) == 0
    headline = capsys.readouterr().out.splitlines()[0]
    assert "cannot launch" not in headline and "8x8x4" not in headline
    assert "default 256x1x1" in headline


def test_the_web_ranking_plot_marks_256_threads(kernel_file, monkeypatch):
    pytest.importorskip("flask")
    pytest.importorskip("matplotlib")
    from warpspeed.render import plots
    from warpspeed.web.app import create_app

    marked = {}

    def spy(ranking, **kw):
        marked.update(kw)
        return real(ranking, **kw)

    real = plots.ranking_plot
    monkeypatch.setattr(plots, "ranking_plot", spy)
    answer = create_app().test_client().post("/api/plot", json={
        "toml": kernel_file.read_text(), "device": H100, "threads": "128", "plot": "ranking"})
    assert answer.status_code == 200, answer.get_json()
    assert marked["reference"].configuration.block == (256, 1, 1) and marked["reference"].error is None
