"""The pystencils plugin on a lent GPU (issue 48, items 2 and 3), run by ``gpu/session.sh launch`` and
``gpu/session.sh variants``; CSVs go to ``--out`` (``$OUT`` there).

``launch``: the plugin's main path as users meet it. For a 7-point stencil (``ps.fields("src, dst:
double[3D]")``, C order), D3Q19 SRT in lbmpy's ``fzyx``, D3Q19 with its fields declared as
``ps.fields("src(19), dst(19): double[3D]")`` (pystencils' default layout: a cell's populations side by side)
and D3Q27 TRT (``fzyx``): ``wp.create_kernel(rule)`` without a shape, compiled once and called on cupy arrays
of two shapes, at each until the plugin has timed its contenders and ``--calls`` times more; every call's host
time (the ranking at the first), its time until the GPU is done, the block it launched and the choice (the
block, how it was chosen, the contenders timed) go to ``launch-calls-<GPU>.csv`` and
``launch-choices-<GPU>.json``. Then every block of 128-1024 threads is timed on the same arrays (one warm-up,
``--repeats`` times ``--launches`` launches between two CUDA events), into ``launch-blocks-<GPU>.csv``: the
chosen block's share of the measured best, and the model's ranking of the same kernel and shape, can be
computed afterwards without a GPU (the registers of the compiled kernel are in the rows).

``variants``: D3Q19 SRT in every streaming pattern (pull, push, AA, esotwist) and layout (``fzyx``, ``zyxf``)
that ``wp.compare_variants`` generates, each kernel of each variant timed in every block of 128-1024 threads
(``variants-<GPU>.csv``, with the comparison's predicted factor, time per update and blocks): whether the
predicted order of the variants is the measured one.

``report`` (here, no GPU): what the CSVs of both say: the chosen block's share of the measured best, the cost of
the first and later calls, the measured factors of the variants beside the predicted ones.

Nothing here is a test: the tests run all three on tests/fake_gpu's stand-in cupy (tests/measurement/test_gpu_kit.py).
"""

from __future__ import annotations

import argparse
import copy
import csv
import json
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

THREADS = (128, 256, 512, 1024)
FILL = 0.05  # every array's value: an LBM density of about 1 (19 x 0.05), no division by zero


def _cupy() -> Any:
    import cupy

    return cupy


def _arrays(names_q: Sequence[tuple[str, int]], extents: Sequence[int], layout: str) -> dict[str, Any]:
    """Arrays for fields ``(name, populations)`` (0: no index dimension) over ``extents`` (x, y, z) in ``layout``:
    ``c`` (numpy order: z contiguous, then the populations fastest), ``fzyx`` (x contiguous, the populations
    slowest), ``zyxf`` (the populations of a cell side by side, then x)."""
    cp = _cupy()
    x, y, z = extents
    out = {}
    for name, q in names_q:
        if layout == "c":
            a = cp.zeros((x, y, z, q) if q else (x, y, z))
        elif layout == "fzyx":
            a = cp.zeros((x, y, z, q) if q else (x, y, z), order="F")
        elif layout == "zyxf":
            a = cp.zeros((z, y, x, q)).transpose(2, 1, 0, 3) if q else cp.zeros((x, y, z), order="F")
        else:
            raise ValueError(f"unknown layout {layout!r}")
        a.fill(FILL)
        out[name] = a
    return out


def _call_arguments(kernel: Any, extents: Sequence[int], layout: str) -> dict[str, Any]:
    """Arrays for every field of a pystencils kernel and 1.8 for each other parameter (``omega`` ...)."""
    from warpspeed_pystencils._launch import CallSignature

    sig = CallSignature.of(kernel)
    fields = [(f.name, (f.index or (0,))[0] if f.index_dims else 0) for f in sig.fields]
    return {**_arrays(fields, extents, layout), **{v: 1.8 for v in sig.values}}


def _timed_ms(launch: Callable[[], Any], launches: int) -> float:
    """GPU milliseconds per launch of ``launches`` launches back to back between two CUDA events (one launch alone
    would add the host's launch cost, 10-25 us, to kernels of 0.1 ms)."""
    from warpspeed_pystencils._launch import _timed_ms as timed

    def several() -> None:
        for _ in range(launches):
            launch()

    return timed(several) / launches


def _launched_block(wrapper: Any, args: dict[str, Any]) -> tuple[int, ...] | None:
    """The block pystencils' cupy wrapper launches these arguments with (after trimming to the domain)."""
    try:
        return tuple(int(b) for b in wrapper._get_cached_args(**args)[1].block)
    except Exception:  # another pystencils: not recorded
        return None


def _time_blocks(wrapper: Any, args: dict[str, Any], repeats: int, launches: int) -> list[dict[str, Any]]:
    """Every block of 128-1024 threads on a compiled pystencils kernel: one warm-up launch, then ``repeats`` times
    ``launches`` launches between two events (median and least time per launch; a block pystencils trims to one
    already timed is timed once); a block that cannot launch gets its error."""
    from warpspeed_pystencils._internals import forget_launch_grids

    import warpspeed

    rows, seen = [], set()
    for block in warpspeed.block_shapes(THREADS):
        forget_launch_grids(wrapper)
        wrapper.launch_config.trim_block_size(block)
        launched = _launched_block(wrapper, args)
        if launched is not None and launched in seen:
            continue
        seen.add(launched)
        row: dict[str, Any] = {"block": "x".join(map(str, block)),
                               "launched_block": "x".join(map(str, launched)) if launched else ""}
        try:
            wrapper(**args)
            times = [_timed_ms(lambda: wrapper(**args), launches) for _ in range(repeats)]
            row.update(time_ms=statistics.median(times), time_min_ms=min(times), error="")
        except Exception as e:  # too many registers for the block, say: recorded, the sweep goes on
            row.update(time_ms="", time_min_ms="", error=f"{type(e).__name__}: {e}"[:200])
        rows.append(row)
    return rows


def _registers(wrapper: Any) -> int | str:
    """The compiled kernel's registers per thread, as the plugin reads them ("" where unknown)."""
    from warpspeed_pystencils._launch import _compiled_registers

    n = _compiled_registers(wrapper)
    return "" if n is None else n


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    if not rows:
        return
    new = not path.exists()
    with path.open("a", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        if new:
            w.writeheader()
        w.writerows(rows)
    print(f"  {len(rows)} rows -> {path}", flush=True)


# ----------------------------------------------------------------------------------------------------- launch

def _d3q19_declared() -> Any:
    """D3Q19 SRT whose fields the user declared with pystencils' default layout."""
    import dataclasses

    import pystencils as ps
    from lbmpy import LBMOptimisation, create_lb_update_rule
    from warpspeed_pystencils.catalog import lbm_method_config

    src, dst = ps.fields("src(19), dst(19): double[3D]")
    cfg = dataclasses.replace(lbm_method_config("D3Q19", "srt"), compressible=True)
    opt = LBMOptimisation(cse_global=True, symbolic_field=src, symbolic_temporary_field=dst)
    return create_lb_update_rule(lbm_config=cfg, lbm_optimisation=opt)


def _launch_cases(size: int) -> list[tuple[str, Callable[[], Any], str, list[tuple[int, int, int]]]]:
    """(name, rule, array layout, two extents x, y, z with the ghost layers); ``size`` scales them (258: 256^3
    cells and a long contiguous axis of 512)."""
    import warpspeed_pystencils as wp

    n, long, short = size, 2 * size - 2, size // 2 + 1
    return [
        # the catalog's star of range 1, its fields in numpy (C) order, as most pystencils scripts declare them
        ("7-point c", lambda: wp.star_stencil(1, layout="numpy"), "c", [(n, n, n), (short, n, long)]),
        ("d3q19-srt fzyx", wp.lbm_d3q19_srt, "fzyx", [(n, n, n), (long, short, short)]),
        ("d3q19-srt declared f(19)", _d3q19_declared, "c", [(n, n, n), (short, short, long)]),
        ("d3q27-trt fzyx", lambda: wp.lbm_update_rule("D3Q27", "trt"), "fzyx", [(n, n, n), (long, short, short)]),
    ]


def launch(out: Path, tag: str, size: int, calls: int, repeats: int, launches: int, only: str | None) -> None:
    """Each case's kernel created once (as a user's program creates it) and called on arrays of each shape: until
    the plugin has timed its contenders (at most 40 calls), then ``calls`` more. A call's ``host_s`` is the time
    until it returns (launches are asynchronous: the ranking at the first call, the plugin's and pystencils' work
    at later ones), ``wall_s`` until the GPU has finished it; the kernel's own time is that of its block in
    launch-blocks."""
    import pystencils as ps
    import warpspeed_pystencils as wp

    cp = _cupy()
    choices = {}
    for name, rule, layout, shapes in _launch_cases(size):
        if only and only not in name:
            continue
        t0 = time.perf_counter()
        run = wp.create_kernel(rule(), ps.CreateKernelConfig(target=ps.Target.CUDA)).compile()
        print(f"+ {name}: rule and create_kernel {time.perf_counter() - t0:.1f} s", flush=True)
        for extents in shapes:
            label = "x".join(map(str, extents))
            print(f"+ {name} on {label} arrays ({layout})", flush=True)
            args = _call_arguments(run.kernel, extents, layout)
            cp.cuda.Device().synchronize()
            rows: list[dict[str, Any]] = []
            extra, final = calls, False
            while extra > 0 and len(rows) < 40 + calls:
                t0 = time.perf_counter()
                run(**args)
                host = time.perf_counter() - t0
                cp.cuda.Device().synchronize()
                wall = time.perf_counter() - t0
                c = run.choice_for(**args)
                rows.append({"case": name, "extents": label, "call": len(rows) + 1, "host_s": host, "wall_s": wall,
                             "launched_block": "x".join(map(str, _launched_block(run.compiled, args) or ())),
                             "chosen_block": "x".join(map(str, c.block)),
                             "chosen_by": c.summary.get("chosen_by", "pystencils"),
                             "candidates_left": len(c.candidates), "registers": _registers(run.compiled)})
                extra -= final  # the calls after the one that made the choice final
                final = not c.candidates
            _write_csv(out / f"launch-calls-{tag}.csv", rows)
            c = run.choice_for(**args)
            choices[f"{name} {label}"] = {"block": list(c.block), "device": c.device, "summary": c.summary}
            blocks = _time_blocks(run.compiled, args, repeats, launches)
            _write_csv(out / f"launch-blocks-{tag}.csv",
                       [{"case": name, "extents": label, "registers": _registers(run.compiled), **r} for r in blocks])
            (out / f"launch-choices-{tag}.json").write_text(json.dumps(choices, indent=1, default=str))


# --------------------------------------------------------------------------------------------------- variants

def variants(out: Path, tag: str, device: str, size: int, repeats: int, launches: int) -> None:
    import pystencils as ps
    import warpspeed_pystencils as wp

    shape = (size, size, size)
    t0 = time.perf_counter()
    r = wp.compare_variants("d3q19-srt", device, shape=shape)
    print(f"+ compare_variants d3q19-srt on {device}, {shape}: {time.perf_counter() - t0:.1f} s", flush=True)
    print(r.text(), flush=True)
    predicted = {c.name: c for c in r.comparison.candidates}
    for v in r.variants:
        c = predicted[v.name]
        cfg = copy.deepcopy(v.config)
        cfg.jit = None  # pystencils' cupy JIT
        for j, (rule, kc) in enumerate(zip(v.rules, c.kernels, strict=True)):
            print(f"+ {v.name} kernel {j + 1} of {len(v.rules)}", flush=True)
            wrapper = ps.create_kernel(rule, cfg).compile()
            args = _call_arguments(wrapper.kernel, shape, v.layout or "fzyx")
            best = kc.best.configuration.block if kc.best is not None else ()
            rows = [{"variant": v.name, "kernel": j + 1, "kernels": len(v.rules), "updates": v.updates,
                     "predicted_factor": c.factor, "predicted_time_per_update_s": c.time_per_update_s,
                     "predicted_block": "x".join(map(str, best)), "registers": _registers(wrapper), **row}
                    for row in _time_blocks(wrapper, args, repeats, launches)]
            _write_csv(out / f"variants-{tag}.csv", rows)


# ----------------------------------------------------------------------------------------------------- report

def _best_ms(rows: list[dict[str, str]]) -> tuple[str, float] | None:
    """The fastest of the timed rows: (the block launched, ms per launch); None where none ran."""
    ran = [(r["launched_block"] or r["block"], float(r["time_ms"])) for r in rows if not r["error"]]
    return min(ran, key=lambda bt: bt[1]) if ran else None


def report(out: Path, tag: str) -> list[str]:
    """What the CSVs of ``launch`` and ``variants`` say (no GPU needed): per launch case the block the last call
    launched, its measured time against the fastest block measured (share of the best), the first call's host
    time (ranking included) and the median host time of the calls after the choice was final; per variant its
    measured time per update (each kernel in its fastest block, summed, over the updates) and factor to the
    fastest, beside the predicted factor."""
    lines = []
    calls_path, blocks_path = out / f"launch-calls-{tag}.csv", out / f"launch-blocks-{tag}.csv"
    if calls_path.exists() and blocks_path.exists():
        calls = list(csv.DictReader(calls_path.open()))
        blocks = list(csv.DictReader(blocks_path.open()))
        lines.append("case | arrays | launched at the end (chosen by) | its ms | fastest measured | share of best | "
                     "first call s | later calls ms")
        for case, extents in dict.fromkeys((c["case"], c["extents"]) for c in calls):
            mine = [c for c in calls if (c["case"], c["extents"]) == (case, extents)]
            timed = [b for b in blocks if (b["case"], b["extents"]) == (case, extents) and not b["error"]]
            last, best = mine[-1], _best_ms(timed)
            chosen = [float(b["time_ms"]) for b in timed if b["launched_block"] == last["launched_block"]]
            final = [1e3 * float(c["host_s"]) for c in mine if c["candidates_left"] == "0"][1:]
            share = f"{best[1] / chosen[0]:.1%}" if best and chosen else "n/a"
            lines.append(f"{case} | {extents} | {last['launched_block']} ({last['chosen_by']}) | "
                         f"{f'{chosen[0]:.4g}' if chosen else 'n/a'} | "
                         f"{f'{best[0]} {best[1]:.4g}' if best else 'n/a'} | {share} | "
                         f"{float(mine[0]['host_s']):.2f} | "
                         f"{f'{statistics.median(final):.3f}' if final else 'n/a'}")
    variants_path = out / f"variants-{tag}.csv"
    if variants_path.exists():
        rows = list(csv.DictReader(variants_path.open()))
        measured: dict[str, float] = {}
        predicted: dict[str, float] = {}
        for name in dict.fromkeys(r["variant"] for r in rows):
            mine = [r for r in rows if r["variant"] == name]
            bests = [_best_ms([r for r in mine if r["kernel"] == k]) for k in dict.fromkeys(r["kernel"] for r in mine)]
            predicted[name] = float(mine[0]["predicted_factor"])
            if all(bests):
                measured[name] = sum(b[1] for b in bests if b) / int(mine[0]["updates"])
        fastest = min(measured.values()) if measured else float("nan")
        lines.append("variant | measured ms per update | measured factor | predicted factor")
        for name in sorted(predicted, key=predicted.__getitem__):
            m = measured.get(name)
            lines.append(f"{name} | {m if m is not None else 'n/a'} | "
                         f"{m / fastest if m is not None else float('nan'):.2f} | {predicted[name]:.2f}")
    for line in lines:
        print(line)
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("mode", choices=("launch", "variants", "report"))
    p.add_argument("--out", type=Path, required=True)
    p.add_argument("--tag", required=True, help="the GPU's short name in the file names (H100, H200)")
    p.add_argument("--device", default="H100-SXM5-80GB", help="variants: the warpspeed device compared on")
    p.add_argument("--size", type=int, default=258, help="allocated extent per axis, ghost layers included")
    p.add_argument("--calls", type=int, default=3,
                   help="launch: calls of a launch-time kernel after its choice is final")
    p.add_argument("--repeats", type=int, default=3, help="timings per block")
    p.add_argument("--launches", type=int, default=4, help="launches back to back per timing")
    p.add_argument("--only", help="launch: only the cases whose name contains this")
    a = p.parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    if a.mode == "launch":
        launch(a.out, a.tag, a.size, a.calls, a.repeats, a.launches, a.only)
    elif a.mode == "report":
        report(a.out, a.tag)
    else:
        variants(a.out, a.tag, a.device, a.size, a.repeats, a.launches)
    return 0


if __name__ == "__main__":
    sys.exit(main())
