"""Every optional extra written anywhere a user copies it from (README, docs, CI, install hints) is one the
package declares, spelled in its normalized form: pip before 23.3 (the one a fresh Python 3.11 venv brings)
matches an extra by its exact text against the metadata's normalized name, warns that the package "does not
provide the extra", exits 0 and installs nothing for it."""

import re
import tomllib
from pathlib import Path

import pytest

from warpspeed.errors import install_hint

ROOT = Path(__file__).resolve().parents[1]
DECLARED = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["optional-dependencies"])
# ".[a,b]" or '.[a]' after a pip install, as the README, the docs and the hints write it
EXTRAS = re.compile(r"""pip install[^\n]*?-e\s+["']?\.\[([^\]]+)\]""")


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _places() -> list[Path]:
    found = [ROOT / "README.md", ROOT / ".ci" / "run", *sorted((ROOT / "docs").glob("*.md")),
             *sorted((ROOT / "plugins").rglob("*.md"))]
    for folder in ("warpspeed", "plugins", "examples", "benchmarks"):
        found += sorted((ROOT / folder).rglob("*.py"))
    return found


def test_declared_extras_are_normalized():
    assert DECLARED, "pyproject.toml declares no extras"
    assert {name for name in DECLARED if _normalized(name) != name} == set()
    assert "kernel-tuner" in DECLARED


def test_every_written_extra_is_declared_as_written():
    written = {}
    for path in _places():
        for match in EXTRAS.finditer(path.read_text(encoding="utf-8")):
            for extra in match.group(1).split(","):
                if "{" in extra:  # a template, such as install_hint's own
                    continue
                written.setdefault(extra.strip(), []).append(str(path.relative_to(ROOT)))
    assert written, "no pip install -e '.[...]' found: the pattern no longer matches the docs"
    assert {extra: where for extra, where in written.items() if extra not in DECLARED} == {}


@pytest.mark.parametrize("asked, written", [("kernel_tuner", "kernel-tuner"), ("Kernel.Tuner", "kernel-tuner"),
                                            ("web", "web")])
def test_install_hint_writes_the_normalized_extra(asked, written):
    assert f"pip install -e '.[{written}]'" in install_hint(asked)
