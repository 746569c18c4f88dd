"""A plugin user prints a comparison as ``warpspeed compare`` does: ``warpspeed.plugin_api.comparison_text`` and
the pystencils plugin's ``VariantComparison.text()``."""

import os
import tempfile
from pathlib import Path

import pytest

import warpspeed
import warpspeed.plugin_api as api
from warpspeed.interface.cli import main
from warpspeed.render import compare_report

H100 = "H100-SXM5-80GB"


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPSPEED_CACHE_DIR", str(tmp_path / "cache"))


def test_plugin_api_comparison_text_is_what_warpspeed_compare_prints(capsys):
    names = ["star3d-r1", "star3d-r1+star3d-r1@1", "box3d-r1"]
    assert main(["compare", *names, "--device", H100, "--domain", "128,128,128"]) == 0
    printed = capsys.readouterr().out
    c = warpspeed.compare([warpspeed.Candidate(("star3d-r1",)),
                           warpspeed.Candidate(("star3d-r1", "star3d-r1"), 1),
                           warpspeed.Candidate(("box3d-r1",))], H100, domain=(128, 128, 128))
    text = api.comparison_text(c)
    assert text == compare_report.comparison_text(c)
    assert printed.rstrip("\n") == text
    # the twice-the-launches twin is 2x slower, and the table says so
    assert c.candidates[0].name == "star3d-r1" and "star3d-r1+star3d-r1@1" in text and " 2.00  " in text


def test_variant_comparison_text_is_its_comparisons_text():
    pytest.importorskip("lbmpy")
    os.environ.setdefault("PYSTENCILS_CACHE_DIR",
                          str(Path(tempfile.gettempdir()) / "warpspeed-tests-pystencils-cache"))
    import warpspeed_pystencils as wp

    vc = wp.compare_variants("lbm:stencil=D2Q9,method=srt", H100, shape=(34, 34), streaming="pull",
                             dtype=["float64", "float32"], layout="fzyx", registers=48, threads=256)
    text = vc.text()
    assert text == api.comparison_text(vc.comparison)
    assert text.splitlines()[0].startswith(f"on {H100}, per update of 32x32x1 cells: dtype=float32 is fastest")
    assert "dtype=float64" in text and "kernels: best block" in text
