"""Fuzzing device files: mutated copies of the shipped files (tests/device/device_mutations.py: values, types,
keys, units, base references, huge numbers, unicode, truncation), seeded so that every case can be replayed.

Every mutant must load or be refused with one InputError; every one that loads must give a finite estimate of a
small kernel (finite, positive numbers, JSON without NaN or Infinity). The CLI's ``devices validate`` must answer
every mutant with exit status 0 or 2, never an internal error. benchmarks/fuzz_device_files.py runs the same
over 10^5 files.
"""

from __future__ import annotations

import random

import device_mutations as dm
import pytest

from warpspeed.interface.cli import main

SEED = 20261127


def _outcomes(n: int, seed: int, folder) -> dict[str, list[tuple[int, str]]]:
    out: dict[str, list[tuple[int, str]]] = {"loaded": [], "InputError": [], "other": [], "nonfinite": []}
    for i in range(n):
        path = dm.write(dm.mutant(random.Random(f"{seed}-{i}")), folder)
        o = dm.check(path)
        out[o.kind].append((i, o.detail))
    return out


PARTS = 3
MUTANTS_PER_PART = 150


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory) -> list[dict[str, list[tuple[int, str]]]]:
    """The outcomes of every part's mutants, loaded once for the tests below."""
    return [_outcomes(MUTANTS_PER_PART, SEED + part, tmp_path_factory.mktemp(f"part{part}")) for part in range(PARTS)]


@pytest.mark.parametrize("part", range(PARTS))
def test_every_mutated_device_file_loads_with_finite_estimates_or_is_an_input_error(outcomes, part):
    got = outcomes[part]
    seed = SEED + part
    assert got["other"] == [], f"replay with random.Random(f'{seed}-{{i}}'): " + repr(got["other"][:3])
    assert got["nonfinite"] == [], got["nonfinite"][:3]
    assert len(got["loaded"]) >= 15 and len(got["InputError"]) >= 50  # the mutants reach both ends


def test_the_mutants_reach_every_check_of_the_loader(outcomes):
    """Over all parts (the shipped files a mutant starts from change as devices are added, so one part alone
    may miss a check by chance)."""
    refused = " ".join(d for got in outcomes for _, d in got["InputError"])
    for word in ("is a directory", "does not exist", "beyond any quantity", "outside what a GPU has",
                 "unknown key", "not valid TOML"):
        assert word in refused, word  # the mutations reach these checks


def test_the_mutants_cover_what_they_claim():
    rng = random.Random(SEED)
    texts = [dm.mutant(rng) for _ in range(2000)]
    joined = b"\n".join(m.data for m in texts)
    for needle in (b"base = ", b"1e10000000", b"9" * 4400, b"\xff", b"[hit_rates.", b"1979-05-27", b"true",
                   b"nan", b"sub/"):
        assert needle in joined, needle
    assert "١".encode() in joined or b"\\u0661" in joined  # unicode digits, as UTF-8 or as a TOML escape
    assert sum(bool(m.extra) for m in texts) > 200  # a file of changes beside a mutated base


def test_devices_validate_answers_every_mutant_with_0_or_2(tmp_path, capsys):
    rng = random.Random(SEED + 10)
    for i in range(60):
        path = dm.write(dm.mutant(rng), tmp_path)
        code = main(["devices", "validate", str(path)])
        captured = capsys.readouterr()
        assert code in (0, 2), (i, captured.err[-500:])
        assert "internal error" not in captured.err
        assert (code == 0) == ("valid" in captured.out), i
