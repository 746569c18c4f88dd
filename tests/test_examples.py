"""Every example runs (fast mode) and prints what it promises."""

import runpy
import sys
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parent.parent / "examples").glob("*.py"))


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_example_runs(path, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(path), "--fast"])
    runpy.run_path(str(path), run_name="__main__")
    out = capsys.readouterr().out
    assert "GLup/s" in out and "bound" in out


def test_there_are_examples():
    assert EXAMPLES
