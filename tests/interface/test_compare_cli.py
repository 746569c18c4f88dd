"""`warpspeed compare`: the candidate syntax on the command line, the text (headline, confidence, table), the
JSON against warpspeed/schemas/compare.schema.json, the CSV columns, and bad input as one clear error."""

import csv
import io
import json
import re

import jsonschema
import pytest
from paths import ROOT
from test_schemas import undescribed_keys

from warpspeed import schemas
from warpspeed.interface.cli import main
from warpspeed.render.compare_report import COMPARE_CSV_COLUMNS

A100 = "A100-SXM4-40GB"
SMALL = ["--domain", "128,128,64"]


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def twin(tmp_path_factory):
    """copy with every field doubled (src2, dst2): the same accesses, twice the bytes per lup, as a TOML file."""
    text = (ROOT / "kernels" / "copy.toml").read_text()
    fields = text[text.index("[[field]]"):]
    doubled = text.replace('name = "copy"', 'name = "copy-x2"') + "\n" + re.sub(
        r'name = "(\w+)"', r'name = "\g<1>2"', fields)
    path = tmp_path_factory.mktemp("kernels") / "copy-x2.toml"
    path.write_text(doubled)
    return path


def test_text_headline_names_the_fastest_and_how_much_slower_the_others_are(capsys, twin):
    code, out, err = run(capsys, "compare", str(twin), "copy", "--device", A100, "--threads", "256", "--model",
                         "roofline", *SMALL)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"on {A100}, per update of 128x128x64 cells: copy is fastest (")
    assert lines[0].endswith(f"GLup/s, DRAM-bound); {twin} 2x slower")  # twice the bytes where DRAM binds
    assert lines[1] == (f"{A100}: model data published, partly assumed from hopper, never measured on ampere -- a "
                        "first estimate")
    assert lines[2].startswith("confidence: confident: the next candidate")
    table = lines[lines.index("") + 1:]
    assert table[0].split()[:4] == ["#", "candidate", "updates", "time/update"]
    assert table[1].split()[:2] == ["1", "copy"] and table[2].split()[:2] == ["2", str(twin)]
    assert table[2].split()[6:9] == ["DRAM", "2.00", str(twin)]  # limiter, x best, kernels


def test_text_of_a_tie_says_close_and_what_to_measure(capsys):
    code, out, err = run(capsys, "compare", "copy", "copy", "--device", A100, "--threads", "256", *SMALL)
    assert code == 0, err
    assert "copy is fastest" in out and "copy #2 1x slower" in out
    # the A100's model data was never measured: its share is 20 %
    assert "confidence: close: 2 candidates are predicted within the model's 20 % of the fastest: copy, copy #2" in out
    assert re.search(r"^  measure copy: \d+x\d+x\d+", out, re.M) and re.search(r"^  measure copy #2: ", out, re.M)


def test_a_sequence_is_one_row_with_its_second_kernel_below(capsys):
    code, out, err = run(capsys, "compare", "copy+star3d-r1@2", "star3d-r1", "--device", A100, "--threads", "256",
                         *SMALL)
    assert code == 0, err
    rows = out.splitlines()
    i = next(n for n, line in enumerate(rows) if "copy+star3d-r1@2" in line and line.split()[0] in "12")
    assert " 2 " in rows[i] and "copy " in rows[i] and "% of the time" in rows[i]
    assert rows[i + 1].lstrip().startswith("star3d-r1 ") and "% of the time" in rows[i + 1]


# ---------------------------------------------------------------------------------------------------- JSON

@pytest.fixture(scope="module")
def doc():
    buf = io.StringIO()
    import contextlib

    with contextlib.redirect_stdout(buf):
        assert main(["compare", "copy+star3d-r1@2", "star3d-r1", "copy", "--device", A100, "--threads", "128,256",
                     "--folding", "1,1,1", "1,2,1", "--format", "json", *SMALL]) == 0
    return json.loads(buf.getvalue())


def test_json_validates_against_the_compare_schema_and_every_key_is_described(doc):
    root = schemas.load("compare")
    v = jsonschema.Draft202012Validator(root)
    assert not list(v.iter_errors(doc))
    assert undescribed_keys(doc, root, root) == []
    assert list(doc)[-1] == "schema_version" and doc["schema_version"] == 1
    assert [c["rank"] for c in doc["candidates"]] == [1, 2, 3] and doc["best"] == doc["candidates"][0]["name"]
    assert doc["cells"] == 128 * 128 * 64 and doc["domain"] == [128, 128, 64]
    seq = next(c for c in doc["candidates"] if c["name"] == "copy+star3d-r1@2")
    assert seq["updates"] == 2 and seq["updates_given"] is True
    assert seq["time_per_update_s"] == pytest.approx(sum(k["time_s"] for k in seq["kernels"]) / 2)
    assert all(k["threads"] == [128, 256] for c in doc["candidates"] for k in c["kernels"])


@pytest.mark.parametrize("path, value", [
    (["candidates", 0, "factor"], 0.5), (["candidates", 0, "kernels"], []), (["candidates"], []),
    (["confidence", "level"], "sure"), (["candidates", 0, "kernels", 0, "best", "limiter"], "GPU"),
    (["candidates", 0, "updates"], 0), (["schema_version"], 2), (["confidence", "measure"], "all"),
])
def test_broken_comparison_documents_fail_validation(doc, path, value):
    import copy

    d = copy.deepcopy(doc)
    target = d
    for k in path[:-1]:
        target = target[k]
    target[path[-1]] = value
    assert not jsonschema.Draft202012Validator(schemas.load("compare")).is_valid(d)


# ----------------------------------------------------------------------------------------------------- CSV

def test_csv_has_one_row_per_candidate_with_the_documented_columns(capsys, doc):
    code, out, err = run(capsys, "compare", "copy+star3d-r1@2", "star3d-r1", "copy", "--device", A100, "--threads",
                         "128,256", "--folding", "1,1,1", "1,2,1", "--format", "csv", *SMALL)
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    assert out.splitlines()[0].split(",") == list(COMPARE_CSV_COLUMNS)
    assert [r["candidate"] for r in rows] == [c["name"] for c in doc["candidates"]]
    for r, c in zip(rows, doc["candidates"], strict=True):
        assert float(r["time_per_update_s"]) == c["time_per_update_s"] and float(r["factor"]) == c["factor"]
        assert r["limiter"] == c["limiter"] and r["updates_given"] == str(c["updates_given"]).lower()
        assert r["kernels"] == "+".join(k["kernel"] for k in c["kernels"])
        assert r["blocks"] == "+".join("x".join(map(str, k["best"]["block"])) for k in c["kernels"])
        assert [float(t) for t in r["kernel_time_s"].split("+")] == [k["time_s"] for k in c["kernels"]]
    documented = set(re.findall(r"`([A-Za-z0-9_]+)`", (ROOT / "docs" / "outputs.md").read_text()))
    assert set(COMPARE_CSV_COLUMNS) <= documented


# ------------------------------------------------------------------------------------------------ bad input

@pytest.mark.parametrize("argv, words", [
    (["copy", "star3d-r4"], ["'copy' and 'star3d-r4' do not do the same work", "star3d-r4@N", "--domain"]),
    (["copy"], ["at least two candidates"]),
    (["copy", "copy@x"], ["candidate 'copy@x'", "after '@'"]),
    (["copy", "copy+"], ["empty kernel"]),
    (["copy", "nosuch"], ["nosuch"]),
    (["copy", "copy", "--threads", "300"], ["--threads 300"]),
    (["copy", "copy", "--folding", "1,0,1"], ["--folding"]),
])
def test_bad_input_is_one_clear_error(capsys, argv, words):
    code, out, err = run(capsys, "compare", *argv, "--device", A100)
    assert code == 2 and out == "" and err.startswith("error: ")
    flat = " ".join(err.split())
    assert all(w in flat for w in words), flat
    assert "Traceback" not in err
