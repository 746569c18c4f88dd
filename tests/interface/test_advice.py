"""The model's words are neutral; the command line (and the page, next to its command lines) adds which option
gives what the model assumed or lacks (warpspeed.render.advice)."""

import ast
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

import warpspeed
from warpspeed.interface.cli import main
from warpspeed.render.advice import advised_notes, command_line_words

A100 = "A100-SXM4-40GB"
PACKAGE = Path(warpspeed.__file__).parent
CORE = sorted([*(PACKAGE / "model").rglob("*.py"), *(PACKAGE / "studies").rglob("*.py")])
FLAG = re.compile(r"(?<![\w-])--[a-z][\w-]*")


def _words(path: Path) -> list[tuple[int, str]]:
    """(line, text) of every string in ``path`` that is not a docstring (f-strings' literal parts included)."""
    tree = ast.parse(path.read_text())
    docs = {id(n.body[0].value) for n in ast.walk(tree)
            if isinstance(n, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
    return [(n.lineno, n.value) for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


@pytest.mark.parametrize("path", CORE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_words_of_the_model_and_the_studies_name_no_command_line_option(path):
    flags = [(line, FLAG.findall(text)) for line, text in _words(path) if FLAG.search(text)]
    assert not flags, f"{path.name}: {flags}; say it neutrally and let the CLI add its option (render/advice.py)"


def test_the_word_check_sees_flags_in_f_strings_but_not_in_docstrings(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text('"""Use --model."""\n\ndef f(n):\n    """--registers"""\n'
                     '    return f"assumed {n} (give --registers)"\n')
    assert [FLAG.findall(t) for _, t in _words(probe) if FLAG.search(t)] == [["--registers"]]


def test_the_note_is_neutral_in_python_and_advised_on_the_command_line_and_the_page(capsys):
    e = warpspeed.estimate("copy", A100, (256, 1, 1), domain=(65536, 64, 8))
    assert "registers per thread unknown: assumed 32" in e.notes  # the model's words, whole
    assert main(["estimate", "copy", "--device", A100, "--block", "256,1,1", "--domain", "65536,64,8"]) == 0
    assert "note: registers per thread unknown: assumed 32 (give --registers)" in capsys.readouterr().out
    assert main(["estimate", "copy", "--device", A100, "--block", "256,1,1", "--domain", "65536,64,8",
                 "--format", "json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    assert "registers per thread unknown: assumed 32 (give --registers)" in cli["notes"]
    assert advised_notes(e.to_dict())["notes"] == cli["notes"]


def test_a_device_without_latency_values_is_told_the_option_on_the_command_line(tmp_path, capsys):
    text = open(warpspeed.device("H100-SXM5-80GB").file).read().replace('architecture = "hopper"',
                                                                          'architecture = "newarch"')
    curves = "".join(f'\n[hit_rates.{c}]\na = 1.0\nb = 0.01\nc = 3.0\nsource = "assumed: test"\n'
                     for c in ("l1", "l2_y", "l2_z", "l2_store"))
    f = tmp_path / "NEW.toml"
    f.write_text(text.replace('id = "H100-SXM5-80GB"', 'id = "NEW"') + curves)
    with pytest.raises(warpspeed.InputError, match=r"\(docs/device-format.md\) or use the roofline model\.$"):
        warpspeed.estimate("copy", str(f), (256, 1, 1), domain=(65536, 1, 1))
    assert main(["estimate", "copy", "--device", str(f), "--block", "256,1,1", "--domain", "65536,1,1"]) == 2
    assert " ".join(capsys.readouterr().err.split()).endswith("(docs/device-format.md) or use --model roofline.")


@given(st.integers(0, 10**6), st.sampled_from(["", " (give --registers)"]))
def test_advice_is_added_once(registers, already):
    note = f"registers per thread unknown: assumed {registers}{already}"
    advised = f"registers per thread unknown: assumed {registers} (give --registers)"
    assert command_line_words(note) == advised == command_line_words(command_line_words(note))
    assert advised_notes({"results": [{"notes": [note, "other"]}]}) == {"results": [{"notes": [advised, "other"]}]}


def test_a_studys_message_is_neutral_in_python_and_names_the_option_on_the_command_line_and_the_page(capsys):
    from warpspeed.web.service import page_words

    with pytest.raises(warpspeed.InputError, match=r"^screen must be a positive number of best configurations"):
        warpspeed.rank("copy", A100, (256,), domain=(4096, 64, 8), screen=0)
    assert main(["rank", "copy", "--device", A100, "--threads", "256", "--domain", "4096,64,8", "--screen", "0"]) == 2
    assert capsys.readouterr().err.startswith("error: screen (--screen) must be a positive number of best")
    with pytest.raises(warpspeed.InputError, match=r"Try fewer threads per block or fewer registers\.$"):
        warpspeed.compare(["d3q19-srt", "copy"], A100, 1024, domain=(64, 64, 64), registers=200)
    assert page_words("empty: check the thread counts, block extents") == ("empty: check the rank threads field, "
                                                                          "block extents")
    assert page_words("or use the roofline model.") == "or use the model field roofline."
