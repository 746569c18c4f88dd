"""Where things are, for tests in any folder: the repository root, the tests' own data."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
HOPPER_DATA = TESTS / "data" / "hopper"  # the measured H100/H200 sweeps (their README gives the provenance)
