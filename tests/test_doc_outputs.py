"""Every command output a document shows is what the command prints today.

The ```console blocks of README.md and docs/*.md show `$ warpspeed ...` commands, some with their output.
Each shown output is compared, line by line, with the first lines the command prints now, so a model
change that moves a number fails here until the document is updated (run the command, paste its lines).
A shown line ``...`` stands for lines left out; a line ending in ``(...)`` for the rest of that line.
"""

import re
import shlex
from pathlib import Path

import pytest

from warpspeed.interface.cli import main

ROOT = Path(__file__).resolve().parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def shown_outputs() -> list[tuple[str, str, list[str]]]:
    """(document, command, shown output lines) of every `$ warpspeed` command shown with output."""
    out = []
    for doc in DOCUMENTS:
        for block in re.findall(r"^```console\n(.*?)^```", doc.read_text(), flags=re.S | re.M):
            lines = block.splitlines()
            for i, line in enumerate(lines):
                if not line.startswith("$ warpspeed "):
                    continue
                shown = []
                for follow in lines[i + 1:]:
                    if follow.startswith("$ "):
                        break
                    shown.append(follow)
                while shown and not shown[-1].strip():
                    shown.pop()
                if shown:
                    out.append((doc.name, line[2:], shown))
    return out


def test_the_documents_show_outputs():
    assert len(shown_outputs()) >= 6


@pytest.mark.parametrize(("doc", "command", "shown"), shown_outputs(), ids=lambda v: v if isinstance(v, str) else "")
def test_a_shown_output_is_what_the_command_prints(doc, command, shown, capsys, monkeypatch):
    args = shlex.split(command)
    assert not {"|", ">", "<"} & set(args), f"{doc}: a shown output needs a plain command: {command}"
    monkeypatch.chdir(ROOT)
    assert main(args[1:]) == 0
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    missing = unmatched(shown, printed)
    assert missing is None, (f"{doc}: `{command}` does not print the shown line {missing!r}; paste what it "
                             "prints now")


def _matches(shown: str, printed: str) -> bool:
    if shown.endswith("(...)"):
        return printed.startswith(shown[:-len("(...)")])
    return printed == shown


def unmatched(shown: list[str], printed: list[str]) -> str | None:
    """The first shown line the printed lines do not have in its place (None: all there): shown lines match
    printed ones in order from the first; after ``...`` the next shown line may come any number of lines later."""
    pos, skipping = 0, False
    for line in (s.rstrip() for s in shown):
        if line == "...":
            skipping = True
            continue
        while skipping and pos < len(printed) and not _matches(line, printed[pos]):
            pos += 1
        if pos >= len(printed) or not _matches(line, printed[pos]):
            return line
        pos, skipping = pos + 1, False
    return None


def test_the_matching_of_shown_lines():
    printed = ["a", "b", "c long line", "d"]
    assert unmatched(["a", "b"], printed) is None
    assert unmatched(["a", "...", "d"], printed) is None
    assert unmatched(["a", "...", "c long (...)", "d"], printed) is None
    assert unmatched(["b"], printed) == "b"  # shown output starts at the first printed line
    assert unmatched(["a", "c long line"], printed) == "c long line"
    assert unmatched(["a", "...", "e"], printed) == "e"


def python_outputs() -> list[tuple[str, str, list[str]]]:
    """(document, code, the output its comments show) of every ```python block in docs/ whose ``print(...)``
    lines are followed by ``# output`` comment lines."""
    out = []
    for doc in sorted((ROOT / "docs").glob("*.md")):
        for block in re.findall(r"^```python\n(.*?)^```", doc.read_text(), flags=re.S | re.M):
            lines = block.splitlines()
            shown = [lines[i + 1][2:] for i in range(len(lines) - 1)
                     if lines[i].lstrip().startswith("print(") and lines[i + 1].startswith("# ")]
            if shown:
                out.append((doc.name, block, shown))
    return out


@pytest.mark.parametrize(("doc", "code", "shown"), python_outputs(), ids=lambda v: v if isinstance(v, str) and
                         v.endswith(".md") else "")
def test_a_python_example_prints_what_its_comments_show(doc, code, shown, capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    exec(compile(code, f"<{doc} example>", "exec"), {})  # the documentation's own code, not user input
    printed = [line.rstrip() for line in capsys.readouterr().out.splitlines()]
    assert printed == shown, f"{doc}: the example prints {printed}, its comments show {shown}"


def test_the_worked_kernel_examples_prose_numbers():
    """kernel-format.md's prose around its worked example: the DRAM volume of the ranking it shows and the FP
    limit of the full report, as the tool computes them."""
    import warpspeed

    text = " ".join((ROOT / "docs" / "kernel-format.md").read_text().split())
    kernel = warpspeed.load_kernel(ROOT / "docs" / "examples" / "varcoef3d-fp32.toml")
    best = warpspeed.rank(kernel, "H100-SXM5-80GB", threads=(256,), jobs=1).best
    volumes = best.data["volumes_B_per_lup"]
    assert f"The ranking below reports {volumes['dram_load'] + volumes['dram_store']:.1f} B/lup" in text
    fp = warpspeed.estimate(kernel, "H100-SXM5-80GB", (64, 4, 4)).limiters_GLup_s["FP"]
    assert f"The FP limit in the full report is {fp:,.0f} GLup/s" in text
