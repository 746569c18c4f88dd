"""How many measurements kernel_tuner needs to find a good block size: warpspeed's order vs kernel_tuner's strategies.

For every block-size sweep measured on the H100 and H200 (tests/data/hopper; not the copy bandwidth rows nor
the repeat of star3d-r4, which measures noise), the sweep is converted into a kernel_tuner cache file
(:func:`warpspeed.integrations.kernel_tuner.measurements_to_cache`: the measured median times, nothing else)
and kernel_tuner 1.5 replays it in simulation mode (``tune_kernel(..., cache=..., simulation_mode=True)``,
restricted to the measured configurations). Each strategy's distinct configurations are recorded in the order
it launched them; the table gives how many it launched until one reached >= 95 %, >= 98 % and 100 % of the
measured best GLup/s.

- ``warpspeed``: :class:`WarpspeedOrder` over the model's ranking of the sweep's configurations on the sweep's
  device (``rank_tune_params``, with the registers of the binary that ran, as ``warpspeed validate`` does);
  deterministic, one run;
- kernel_tuner's own strategies, ``--seeds`` runs each (Python's and NumPy's random generators seeded 0..N-1):
  mean and, in brackets, the worst run; ``never k/N``: k runs ended without reaching the goal (the strategy
  stopped, or made more than 100 x the space's size of evaluations); ``greedy_ils from x0`` starts greedy_ils
  at warpspeed's best-predicted configuration (:func:`x0`).

The last rows average each column over the sweeps whose ranking is not ``unvalidated`` (the array-of-structures
sweep is), then over all: a run that never got there or crashed counts as the whole space measured.

Every run gets the whole space as its budget (``max_fevals``) and is stopped once it reached the measured
best. The script runs itself with PYTHONHASHSEED=0 (kernel_tuner iterates over sets of strings), so that the runs
repeat exactly, except bayes_opt's and diff_evo's: they vary from run to run (bayes_opt times its acquisition
functions with the wall clock). About 35 s on 2 cores.
Run: python benchmarks/bench_kernel_tuner.py [--seeds N] [--strategies a,b,...] [--quick]
"""

from __future__ import annotations

import json
import os
import random
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

from warpspeed import InputError
from warpspeed.integrations import kernel_tuner as wk
from warpspeed.measurement.measurements import read_measurements
from warpspeed.measurement.validation import sweeps

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "hopper"
SKIPPED = ("bandwidth-", "repeat-")  # not block-size sweeps: copy streaming rates, and star3d-r4 measured twice
GOALS = (0.95, 0.98, 1.0)
STRATEGIES = ("random_sample", "genetic_algorithm", "bayes_opt", "greedy_ils", "simulated_annealing", "diff_evo")
CAP = 100  # a run that makes more than CAP x the space's size of evaluations is stopped (greedy_ils never stops)


class Recorded:
    """A kernel_tuner strategy run through a runner that records the distinct configurations launched, in order,
    and stops the run once the measured best is among them (or after CAP x the space's size evaluations)."""

    def __init__(self, tune, glups: dict[str, float]):
        self.strategy_tune = tune
        self.glups = glups
        self.best = max(glups.values())
        self.launched: list[str] = []

    def tune(self, searchspace, runner, tuning_options):
        from kernel_tuner.util import StopCriterionReached

        keys = list(searchspace.tune_params)
        outer = self
        seen: set[str] = set()
        calls = [0]

        class Runner:
            def __getattr__(self, name):
                return getattr(runner, name)

            def run(self, parameter_space, options):
                results = runner.run(parameter_space, options)
                for r in results:
                    calls[0] += 1
                    if r is None or "__error__" in r:
                        continue
                    key = ",".join(str(r[k]) for k in keys)
                    if key not in seen:
                        seen.add(key)
                        outer.launched.append(key)
                        if outer.glups[key] >= outer.best:
                            raise StopCriterionReached("the measured best is found")
                if calls[0] > CAP * searchspace.size:
                    raise StopCriterionReached("evaluation cap")
                return results

        try:
            return self.strategy_tune(searchspace, Runner(), tuning_options)
        except StopCriterionReached:
            return []


CRASHED = "crashed"


def simulate(cache: Path, doc: dict, strategy, options: dict, glups: dict[str, float]) -> list[str]:
    """The distinct configurations a strategy launched, in order, replaying the cache in kernel_tuner; a run
    that kernel_tuner aborted with an exception ends with :data:`CRASHED`."""
    import kernel_tuner

    rec = Recorded(strategy.tune if hasattr(strategy, "tune") else strategy, glups)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            kernel_tuner.tune_kernel(doc["kernel_name"], f"__global__ void {doc['kernel_name']}() {{}}",
                                 tuple(doc["problem_size"]), [], doc["tune_params"], strategy=rec,
                                     strategy_options={"max_fevals": len(glups), **options}, cache=str(cache),
                                     simulation_mode=True, restrictions=wk.cached_restriction(cache), quiet=True)
        except Exception as e:  # a strategy's own failure (kernel_tuner 1.5's greedy_ils, see the docstring)
            if isinstance(strategy, wk.WarpspeedOrder):
                raise  # warpspeed's failure is not kernel_tuner's: the benchmark stops and says so
            CRASHES.setdefault(f"{type(e).__name__}: {e}", 0)
            CRASHES[f"{type(e).__name__}: {e}"] += 1
            return [*rec.launched, CRASHED]
    return rec.launched


CRASHES: dict[str, int] = {}


def needed(launched: list[str], glups: dict[str, float]) -> list[int | str | None]:
    """Per goal: how many configurations were launched until one reached it (None: never; CRASHED: the run
    failed first)."""
    best = max(glups.values())
    crashed = bool(launched) and launched[-1] == CRASHED
    launched = launched[:-1] if crashed else launched
    out: list[int | str | None] = []
    for g in GOALS:
        n = next((i + 1 for i, k in enumerate(launched) if glups[k] >= g * best - 1e-12 * best), None)
        out.append(CRASHED if n is None and crashed else n)
    return out


def cell(runs: list[list[int | str | None]]) -> str:
    """'a / b / c' for one run; for several, the mean with the worst in brackets, and the runs that never got
    there or crashed first."""
    parts = []
    for i in range(len(GOALS)):
        got = [r[i] for r in runs if isinstance(r[i], int)]
        never = sum(r[i] is None for r in runs)
        crashed = sum(r[i] == CRASHED for r in runs)
        if len(runs) == 1:
            parts.append(str(got[0]) if got else "never" if never else "crashed")
            continue
        text = [f"{np.mean(got):.0f} ({max(got)})"] if got else []
        if never:
            text.append(f"{never}/{len(runs)} never" if got or crashed else "never")
        if crashed:
            text.append(f"{crashed}/{len(runs)} crashed" if got or never else "crashed")
        parts.append(", ".join(text))
    return " / ".join(parts)


def mean_needed(runs_by_sweep: list[tuple[int, list[list[int | str | None]]]]) -> str:
    """'a / b / c': per goal, the mean over sweeps of each sweep's mean over its runs, counting a run that never
    got there or crashed first as the whole space measured (what a user would launch to be sure)."""
    parts = []
    for i in range(len(GOALS)):
        per_sweep = [np.mean([r[i] if isinstance(r[i], int) else size for r in runs]) for size, runs in runs_by_sweep]
        parts.append(f"{np.mean(per_sweep):.1f}")
    return " / ".join(parts)


def strategy_module(name: str):
    from kernel_tuner.interface import strategy_map

    return strategy_map[name]


def main() -> int:
    if os.environ.get("PYTHONHASHSEED") != "0":  # kernel_tuner iterates over sets of strings: fix their order
        os.execve(sys.executable, [sys.executable, *sys.argv], {**os.environ, "PYTHONHASHSEED": "0"})
    seeds = int(sys.argv[sys.argv.index("--seeds") + 1]) if "--seeds" in sys.argv else 5
    names = (sys.argv[sys.argv.index("--strategies") + 1].split(",") if "--strategies" in sys.argv
             else list(STRATEGIES))
    quick = "--quick" in sys.argv  # the two star3d-r4 sweeps only
    columns = ["warpspeed", *names, "greedy_ils from x0"]
    start = time.perf_counter()
    rows_out = []
    runs_of: dict[str, list] = {c: [] for c in columns}  # per column: (space size, runs) of each validated sweep
    runs_all: dict[str, list] = {c: [] for c in columns}  # ... of every sweep
    with tempfile.TemporaryDirectory() as tmp:
        for csv in sorted(DATA.glob("*.csv")):
            if csv.name.startswith(SKIPPED) or (quick and not csv.name.startswith("star3d")):
                continue
            for (kernel, dev, domain, code), rows in sweeps(read_measurements(csv)).items():
                label = f"{csv.name}: {kernel}" + (f" ({code})" if code else "")
                cache = wk.measurements_to_cache(rows, Path(tmp) / f"{csv.stem}.{wk.kernel_name_of(kernel)}.json",
                                                 source=f"tests/data/hopper/{csv.name}")
                doc = json.loads(cache.read_text())
                by_config = {(m.block, m.folding): m.GLup_s for m in rows}  # measured, per cache entry:
                glups = {}
                for key, e in doc["cache"].items():
                    c = wk.NAMES.configuration(e)
                    glups[key] = by_config[(c.block, c.folding)]
                regs = {m.registers for m in rows}
                t0 = time.perf_counter()
                try:
                    ranking = wk.rank_tune_params(kernel, dev, doc["tune_params"],
                                                  restrictions=wk.cached_restriction(cache), domain=domain,
                                                  registers=regs.pop() if len(regs) == 1 else None, jobs=None)
                except InputError as e:
                    print(f"{label}: skipped ({e})", file=sys.stderr)
                    continue
                t_rank = time.perf_counter() - t0
                column_runs = {"warpspeed": [needed(simulate(cache, doc, wk.WarpspeedOrder(ranking), {}, glups),
                                                    glups)]}
                for name in names:
                    runs = []
                    for s in range(seeds):
                        random.seed(s)
                        np.random.seed(s)
                        runs.append(needed(simulate(cache, doc, strategy_module(name), {}, glups), glups))
                    column_runs[name] = runs
                x = wk.x0(ranking, doc["tune_params"], restrictions=wk.cached_restriction(cache))
                runs = []
                for s in range(seeds):
                    random.seed(s)
                    np.random.seed(s)
                    runs.append(needed(simulate(cache, doc, strategy_module("greedy_ils"), {"x0": x}, glups), glups))
                column_runs["greedy_ils from x0"] = runs
                cells = [cell(column_runs[c]) for c in columns]
                validated = ranking.confidence.level != "unvalidated"
                for c in columns:
                    runs_all[c].append((len(glups), column_runs[c]))
                    if validated:
                        runs_of[c].append((len(glups), column_runs[c]))
                name = csv.stem + ("" if kernel in csv.stem else f" {kernel}") + (f" ({code} code)" if code else "")
                rows_out.append([f"{name}, {len(glups)}", *cells])
                print(f"  {label}: ranked in {t_rank:.1f} s; {time.perf_counter() - start:.0f} s so far",
                      file=sys.stderr, flush=True)
    print(f"Measurements (distinct configurations launched) until >= 95 % / >= 98 % / 100 % of the measured best "
          f"GLup/s; kernel_tuner strategies: mean (worst) of {seeds} seeds\n")
    print("| sweep, configurations | " + " | ".join(columns) + " |")
    print("| --- " * (len(columns) + 1) + "|")
    for r in rows_out:
        print("| " + " | ".join(r) + " |")
    n_valid, n_all = len(runs_of["warpspeed"]), len(runs_all["warpspeed"])
    if n_valid:
        print(f"| mean of the {n_valid} validated sweeps | " + " | ".join(mean_needed(runs_of[c]) for c in columns)
              + " |")
    if n_all > n_valid:
        print(f"| mean of all {n_all} sweeps | " + " | ".join(mean_needed(runs_all[c]) for c in columns) + " |")
    for what, n in CRASHES.items():
        print(f"crashed {n} time(s) inside kernel_tuner: {what}")
    print(f"\n{len(rows_out)} sweeps in {time.perf_counter() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
