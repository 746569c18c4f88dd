"""No function above cyclomatic complexity 20, by ruff's McCabe check (C901), in the folders listed in CHECKED.

Why: a function of many branches is where a change breaks what it did not mean to touch (``read_kernel_tuner`` had
21 before it was broken up). The check runs ruff as the linter runs it, so that the number is ruff's own.
"""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MAX_COMPLEXITY = 20
CHECKED = [ROOT / "warpspeed", ROOT / "plugins"]
"""The folders checked: the whole package and the shipped plugins."""


def c901(paths: list[Path], limit: int) -> subprocess.CompletedProcess:
    """ruff's C901 check of ``paths`` with the given maximum complexity, its findings one a line."""
    if importlib.util.find_spec("ruff") is None:
        pytest.fail("ruff is a test dependency (pip install -e \".[test]\")")
    return subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "--select", "C901", "--config",
                           f"lint.mccabe.max-complexity={limit}", "--output-format", "concise",
                           *map(str, paths)], capture_output=True, text=True, cwd=ROOT)


def test_no_function_is_above_the_complexity_limit():
    run = c901(CHECKED, MAX_COMPLEXITY)
    assert run.returncode == 0, f"above complexity {MAX_COMPLEXITY} (break them up):\n{run.stdout}{run.stderr}"


def test_the_check_finds_a_function_over_a_lower_limit():
    """The check measures: with a limit of 5 it names functions of these folders (read_kernel_tuner has 6), in
    the package's subfolders and in the plugins (``create_app``, whose routes were its nested functions, had 28)."""
    run = c901(CHECKED, 5)
    assert run.returncode == 1 and "C901 `read_kernel_tuner` is too complex" in run.stdout, run.stdout + run.stderr
    assert "warpspeed/web/" in run.stdout and "plugins/warpspeed_pystencils/" in run.stdout, run.stdout
