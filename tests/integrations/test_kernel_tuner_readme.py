"""The README's kernel_tuner example runs as written: its python block, taken from the README by its heading,
runs in a folder laid out like the repository (the committed cache of measured H100 times at the relative path
the example names), prints what the text says it does, and writes its predicted cache there (not into the
checkout)."""

import ast
import json
import re
import shutil

import pytest
from paths import ROOT, TESTS

from warpspeed.integrations import kernel_tuner as wk
from warpspeed.measurement.validation import validate

kernel_tuner = pytest.importorskip("kernel_tuner")

CACHE = "tests/data/kernel_tuner/star3d-r4-H100.star3d_r4.json"


def readme_example() -> str:
    """The first python block of the README's section "## kernel_tuner"."""
    text = (ROOT / "README.md").read_text()
    section = re.search(r"^## kernel_tuner\n(.*?)^## ", text, flags=re.S | re.M)
    assert section, "README.md has no section '## kernel_tuner'"
    block = re.search(r"^```python\n(.*?)^```", section.group(1), flags=re.S | re.M)
    assert block, "the README's kernel_tuner section has no python block"
    return block.group(1)


def test_the_readmes_kernel_tuner_example_runs_and_prints_the_measured_best(tmp_path, monkeypatch, capsys):
    code = readme_example()
    assert CACHE in code  # the layout below is what the example reads
    # kernel_tuner 1.5's greedy_ils, started at a good x0, loops forever in about one run of four without it
    assert '"no_improvement": 0' in code
    (tmp_path / CACHE).parent.mkdir(parents=True)
    shutil.copy(TESTS / "data" / "kernel_tuner" / "star3d-r4-H100.star3d_r4.json", tmp_path / CACHE)
    written = set(ROOT.iterdir())
    monkeypatch.chdir(tmp_path)
    namespace: dict = {}
    exec(compile(code, "<README.md kernel_tuner example>", "exec"), namespace)  # the README's own code
    assert set(ROOT.iterdir()) == written  # nothing written into the checkout
    (line,) = capsys.readouterr().out.splitlines()
    ranking = namespace["ranking"]
    # "<best time> ms: [5 blocks]": the 5 measured first, the best predicted among them, the best time theirs
    m = re.fullmatch(r"([0-9.e+-]+) ms: (\[.*\])", line)
    assert m, line
    blocks = ast.literal_eval(m.group(2))
    assert len(blocks) == 5 and ranking.best.configuration.block in blocks
    measured = json.loads((tmp_path / CACHE).read_text())["cache"]
    times = [e["time"] for e in measured.values() if (e["block_size_x"], e["block_size_y"], e["block_size_z"])
             in blocks]
    assert float(m.group(1)) == min(times)
    # the exported cache: in the working folder, reading back to the ranked kernel and device
    predicted = next(p for p in tmp_path.iterdir() if p.suffix == ".json")
    rows = wk.read_kernel_tuner(predicted)
    (report,) = validate(rows)
    assert report.spearman == pytest.approx(1.0) and report.ratio.median == pytest.approx(1.0)
