"""Fuzzing device files at length: N mutated copies of the shipped device files (default 10^5), each loaded with
``warpspeed.device(path)`` and, where it loads, used for an estimate of a small kernel (star3d-r1 on 40x6x4
cells, one block of up to a warp), as tests/device/test_device_fuzz.py does for a few hundred.

Prints the counts: files that loaded (with finite estimates), that were refused with an InputError, that raised
any other exception, and that loaded but gave a non-finite estimate (NaN, an infinity or zero, or JSON that is
not JSON); the last two are bugs, listed with the seed that replays them:
``device_mutations.mutant(random.Random(f"{seed}-{i}"))``. The mutator is tests/device/device_mutations.py.
Every file is written to one temporary folder (with a sub-folder ``sub`` and, for files of changes, a mutated
``other.toml`` beside it). Time is bounded: the run stops after --max-seconds, with the counts so far.

Run: nice python benchmarks/fuzz_device_files.py [--files 100000] [--seed 1] [--max-seconds 1200]
"""

from __future__ import annotations

import argparse
import collections
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "device"))
import device_mutations as dm  # noqa: E402 - the shared mutator of the fuzz test


def run(files: int, seed: int, max_seconds: float, report_every: int) -> collections.Counter:
    counts: collections.Counter = collections.Counter()
    findings: dict[str, list[str]] = collections.defaultdict(list)
    slowest = (0.0, -1)
    start = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="warpspeed-fuzz-") as tmp:
        folder = Path(tmp)
        for i in range(files):
            if time.perf_counter() - start > max_seconds:
                print(f"stopped after {max_seconds:g} s", flush=True)
                break
            t = time.perf_counter()
            path = dm.write(dm.mutant(random.Random(f"{seed}-{i}")), folder)
            outcome = dm.check(path)
            dt = time.perf_counter() - t
            slowest = max(slowest, (dt, i))
            counts[outcome.kind] += 1
            if outcome.kind == "loaded" and outcome.detail:
                counts["loaded, estimate refused (no block fits)"] += 1
            if outcome.kind in ("other", "nonfinite"):
                first = outcome.detail.splitlines()[0][:120]
                if len(findings[first]) < 3:
                    findings[first].append(f"{seed}-{i}")
            if report_every and (i + 1) % report_every == 0:
                print(f"{i + 1} files, {time.perf_counter() - start:.0f} s: {dict(counts)}", flush=True)
    elapsed = time.perf_counter() - start
    n = sum(counts[k] for k in ("loaded", "InputError", "other", "nonfinite"))
    print(f"\n{n} mutated device files in {elapsed:.0f} s ({1e3 * elapsed / max(n, 1):.2f} ms per file; slowest "
          f"{1e3 * slowest[0]:.0f} ms, case {seed}-{slowest[1]})")
    for kind in ("loaded", "loaded, estimate refused (no block fits)", "InputError", "other", "nonfinite"):
        print(f"  {kind:<42} {counts[kind]}")
    for first, cases in findings.items():
        print(f"  finding: {first}  (replay: {', '.join(cases)})")
    return counts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-seconds", type=float, default=1200.0)
    ap.add_argument("--report-every", type=int, default=10_000)
    a = ap.parse_args(argv)
    counts = run(a.files, a.seed, a.max_seconds, a.report_every)
    return 1 if counts["other"] or counts["nonfinite"] else 0


if __name__ == "__main__":
    sys.exit(main())
