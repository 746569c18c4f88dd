"""Fixtures shared by the test modules."""

import os
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# no wall-clock limit on a hypothesis example: on a loaded 2-core machine a brute-force twin may take
# longer than hypothesis's default 200 ms, which says nothing about the code under test
settings.register_profile("warpspeed", deadline=None)
settings.load_profile("warpspeed")

FAKE_GPU = Path(__file__).parent / "fake_gpu"  # stand-ins for cupy, ncu and nvidia-smi


@pytest.fixture
def fake_gpu(monkeypatch):
    """The stand-in cupy importable for this test only (its launches logged to a file the fake nvidia-smi
    reads), and the stand-in GPU tools (ncu, nvidia-smi) first on PATH."""
    saved = sys.modules.pop("cupy", None)
    monkeypatch.syspath_prepend(str(FAKE_GPU))
    monkeypatch.setenv("PATH", f"{FAKE_GPU}{os.pathsep}{os.environ['PATH']}")
    import cupy

    assert cupy.__file__.startswith(str(FAKE_GPU))
    try:
        yield cupy
    finally:
        sys.modules.pop("cupy", None)
        if saved is not None:
            sys.modules["cupy"] = saved
