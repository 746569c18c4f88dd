"""The package type-checks: ``python -m mypy`` with the configuration in pyproject.toml ([tool.mypy]: the
model, the studies and the device data) reports no error. mypy keeps its cache in .mypy_cache, so a run after
the first rechecks only what changed."""

import importlib.util
import subprocess
import sys

import pytest
from paths import ROOT


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None,
                    reason="mypy is not installed (pip install -e '.[test]' brings it)")
def test_mypy_passes_on_the_checked_packages():
    done = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"mypy found type errors:\n{done.stdout}{done.stderr}"
    assert "Success" in done.stdout
