"""Parameters of the pystencils plugin's catalog entries are checked before lbmpy builds anything: a wrong one
is an InputError naming the entry, the parameter and the valid values (a wrong layout was an internal
ValueError from pystencils after seconds of lbmpy)."""

import pytest

import warpspeed

catalog = pytest.importorskip("warpspeed_pystencils.catalog")


@pytest.fixture(autouse=True)
def _nothing_is_built(monkeypatch):
    def refuse(*_args, **_kwargs):
        raise AssertionError("lbmpy was asked to build a kernel with a wrong parameter")
    monkeypatch.setattr(catalog, "_rule", refuse)


@pytest.mark.parametrize("name, wrong, parameter", [
    ("d3q19-srt:layout=xyz", "'xyz'", "layout"),
    ("lbm:layout=3", "3", "layout"),
    ("lbm:stencil=D3Q27,layout=yxz", "'yxz'", "layout"),
    ("d3q15-allen-cahn:layout=abc", "'abc'", "layout"),
    ("lbm:streaming=bb", "'bb'", "streaming"),
    ("d3q19-srt:streaming=Push", "'Push'", "streaming"),
    ("lbm:method=bgk", "'bgk'", "method"),
])
def test_a_wrong_parameter_is_named_before_building(name, wrong, parameter):
    with pytest.raises(warpspeed.InputError) as err:
        warpspeed.find_kernel(name)
    msg = str(err.value)
    assert f"{parameter} must be one of" in msg and msg.endswith(f"got {wrong}.")
    assert name.partition(":")[0] in msg


@pytest.mark.parametrize("layout", ["fzyx", "zyxf", "SoA", "aos", "c", "numpy", "f", "reverse_numpy"])
def test_every_pystencils_layout_name_passes_the_check(layout):
    catalog._checked_parameters("lbm", layout, "push", "TRT")  # no error
