"""Progress of long work: callbacks reach the end, bars appear on a terminal only."""

import io

import pytest
from paths import HOPPER_DATA

from warpspeed.application.projection import project
from warpspeed.application.whatif import whatif
from warpspeed.interface.cli import main
from warpspeed.measurement.measurements import read_measurements
from warpspeed.measurement.validation import validate
from warpspeed.progress import progress_bar, scaled

DATA = HOPPER_DATA


class Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, done, total):
        self.calls.append((done, total))


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_scaled_maps_each_step_onto_the_whole():
    r = Recorder()
    scaled(r, 1, 4)(3, 10)
    scaled(r, 3, 4)(10, 10)
    assert r.calls == [(13, 40), (40, 40)]
    assert scaled(None, 0, 2) is None


def test_bar_draws_on_a_terminal_and_nothing_elsewhere():
    term, pipe = Terminal(), io.StringIO()
    with progress_bar("rank on X", stream=term) as bar:
        bar(5, 10)
        bar(10, 10)
    assert "rank on X" in term.getvalue() and "10/10" in term.getvalue()
    with progress_bar("rank on X", stream=pipe) as bar:
        assert bar is None
    assert pipe.getvalue() == ""


def test_whatif_and_project_report_progress_to_the_end():
    r = Recorder()
    whatif("copy", "A100-SXM4-40GB", "l2_size", [20 * 2**20, 40 * 2**20], threads=(256,), domain=(128, 64, 64),
           jobs=1, progress=r)
    assert r.calls[-1][0] == r.calls[-1][1] > 0
    assert [d for d, _ in r.calls] == sorted(d for d, _ in r.calls)
    assert len({t for _, t in r.calls}) == 1
    r = Recorder()
    project("copy", "A100-SXM4-40GB", "H100-SXM5-80GB", threads=(256,), domain=(128, 64, 64), jobs=1, progress=r)
    done, total = r.calls[-1]
    assert done == total and r.calls[0][0] < total / 2 + 1


def test_validate_reports_every_row():
    rows = read_measurements(DATA / "bandwidth-copy-H100.csv")
    r = Recorder()
    validate(rows, progress=r)
    assert r.calls[-1] == (len(rows), len(rows)) and len(r.calls) == len(rows)


@pytest.mark.parametrize("tty", [True, False])
def test_cli_rank_shows_a_bar_only_on_a_terminal(monkeypatch, capsys, tty):
    err = Terminal() if tty else io.StringIO()
    monkeypatch.setattr("sys.stderr", err)
    assert main(["rank", "copy", "--device", "A100-SXM4-40GB", "--threads", "256", "--domain", "128,64,64",
                 "--jobs", "1"]) == 0
    assert capsys.readouterr().out.startswith("copy on A100-SXM4-40GB")
    assert ("rank on A100-SXM4-40GB" in err.getvalue()) is tty
