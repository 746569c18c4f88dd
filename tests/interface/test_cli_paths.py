"""Paths are checked before any work: a missing input, an output in a folder that does not exist, or a
--cache that is not a ranking cache stop the command at once, with no estimate run."""

import importlib

import pytest
from paths import ROOT

from warpspeed.interface.cli import main

SWEEP = "tests/data/hopper/star3d-r4-H200.csv"


@pytest.fixture
def no_work(monkeypatch):
    """Any estimate, ranking or validation fails the test."""
    def refuse(*a, **k):
        raise AssertionError("work started before the paths were checked")

    for module, name in (("warpspeed.model.estimate", "estimate"), ("warpspeed.studies.ranking", "evaluate"),
                         ("warpspeed.measurement.validation", "validate")):
        monkeypatch.setattr(importlib.import_module(module), name, refuse)


@pytest.mark.parametrize(("args", "message"), [
    (["validate", SWEEP, "--plot", "{missing}/v.png"], "--plot '{missing}/v.png': the folder"),
    (["rank", "star3d-r1", "--device", "H100-SXM5-80GB", "--cache", "{missing}/c.jsonl"],
     "--cache '{missing}/c.jsonl': the folder"),
    (["rank", "star3d-r1", "--device", "H100-SXM5-80GB", "--cache", SWEEP], "is not a ranking cache"),
    (["rank", "star3d-r1", "--device", "H100-SXM5-80GB", "--cache", "{tmp}"], "is a folder"),
    (["validate", "{missing}/sweep.csv"], "validate FILE '{missing}/sweep.csv': no such file"),
    (["calibrate", SWEEP, "{missing}/sweep.csv", "--device", "H200-SXM-141GB"],
     "calibrate FILE '{missing}/sweep.csv': no such file"),
    (["project", "star3d-r4", "--from", "H100-SXM5-80GB", "--to", "A100-SXM4-40GB", "--ncu", "{missing}/n.csv"],
     "--ncu '{missing}/n.csv': no such file"),
    (["plot", "ranking", "star3d-r1", "--device", "H100-SXM5-80GB", "-o", "{missing}/r.png"],
     "--output '{missing}/r.png': the folder"),
])
def test_bad_paths_stop_the_command_before_any_work(args, message, tmp_path, capsys, no_work, monkeypatch):
    monkeypatch.chdir(ROOT)
    fill = {"missing": str(tmp_path / "no-such-folder"), "tmp": str(tmp_path)}
    assert main([a.format(**fill) for a in args]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert message.format(**fill) in err


def test_a_ranking_cache_is_still_resumed(tmp_path, capsys):
    cache = tmp_path / "c.jsonl"
    args = ["rank", "star2d-r1", "--device", "H100-SXM5-80GB", "--threads", "256", "--cache", str(cache)]
    assert main(args) == 0 and cache.read_text().count("\n") == 9
    first = capsys.readouterr().out
    assert main(args) == 0 and capsys.readouterr().out == first
    assert cache.read_text().count("\n") == 9  # nothing estimated again
