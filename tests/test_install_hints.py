"""Missing optional packages: a clear error naming this project's extra, never the unrelated PyPI 'warpspeed'."""

import pytest

import warpspeed
from warpspeed import kernels
from warpspeed.errors import InputError, install_hint
from warpspeed.interface.cli import main


def _broken_entry(module: str):
    def build(**_):
        raise ModuleNotFoundError(f"No module named '{module}'", name=module)
    return kernels.CatalogEntry("lbm-test", "needs a generator", build)


@pytest.mark.parametrize("module, extra", [("sympy", "pystencils"), ("lbmpy.creationfunctions", "pystencils")])
def test_plugin_kernel_without_its_generator_names_the_extra(monkeypatch, module, extra):
    monkeypatch.setattr(kernels, "entries", lambda: {"lbm-test": _broken_entry(module)})
    with pytest.raises(InputError) as err:
        warpspeed.find_kernel("lbm-test")
    msg = str(err.value)
    assert f"no module '{module.partition('.')[0]}'" in msg and f"pip install -e '.[{extra}]'" in msg
    assert "pip install warpspeed" not in msg and "pip install 'warpspeed" not in msg


def test_other_missing_module_is_named_without_a_wrong_extra(monkeypatch):
    monkeypatch.setattr(kernels, "entries", lambda: {"lbm-test": _broken_entry("somegen")})
    with pytest.raises(InputError, match=r"install the Python module 'somegen'") as err:
        warpspeed.find_kernel("lbm-test")
    assert "[pystencils]" not in str(err.value)


def test_cli_exits_2_with_the_hint(monkeypatch, capsys):
    monkeypatch.setattr(kernels, "entries", lambda: {"lbm-test": _broken_entry("sympy")})
    assert main(["estimate", "lbm-test", "--device", "H100-SXM5-80GB", "--block", "64,4,2"]) == 2
    err = capsys.readouterr().err
    assert "pip install -e '.[pystencils]'" in " ".join(err.split()) and "internal error" not in err


def test_install_hint_points_at_the_checkout():
    h = install_hint("plot")
    assert "pip install -e '.[plot]'" in h and "different project" in h
