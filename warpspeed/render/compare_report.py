"""The comparison of candidate kernels as text (a headline, the confidence, a table) and as CSV rows
(`warpspeed compare`; docs/outputs.md describes the columns)."""

from __future__ import annotations

import textwrap
from collections import Counter

from ..studies.comparison import SEQUENCE_SEPARATOR, CandidateResult, Comparison, KernelChoice
from .report import number_text, seconds_text, validation_line

MEASURE_SHOWN = 8
"""Configurations listed per kernel on the text's measure lines (the JSON lists them all)."""


def comparison_headline(c: Comparison) -> str:
    """``X is fastest; Y 3.4x slower, ...`` with the device and the domain, a line where the device's model data
    was never measured, then the confidence's lines."""
    best, rest = c.best, c.candidates[1:]
    d = "x".join(map(str, c.domain))
    slower = ", ".join(f"{r.name} {r.factor:.3g}x slower" for r in rest)
    head = (f"on {c.device}, per update of {d} cells: {best.name} is fastest "
            f"({number_text(best.performance_GLup_s)} GLup/s, {best.limiter}-bound)"
            + (f"; {slower}" if slower else ""))
    conf = c.confidence
    launches = sum(len(m.configurations) for m in conf.measure)
    first = validation_line(c.device, c.device_validation, launches)
    lines = [head, *([first] if first else []), f"confidence: {conf.level}: {conf.reasons[0]}",
             *(f"  {r}" for r in conf.reasons[1:])]
    per_candidate = Counter(m.candidate for m in conf.measure)
    for m in conf.measure:
        labels = [x.label for x in m.configurations]
        more = f" and {len(labels) - MEASURE_SHOWN} more" if len(labels) > MEASURE_SHOWN else ""
        who = m.candidate if per_candidate[m.candidate] == 1 else f"{m.candidate}, kernel {m.kernel}"
        lines.append(f"  measure {who}: {', '.join(labels[:MEASURE_SHOWN])}{more}")
    return "\n".join(lines)


def _kernel_cell(k: KernelChoice, r: CandidateResult) -> str:
    e = k.best.estimate
    share = f" ({100 * k.time_s / r.time_s:.0f} % of the time)" if len(r.kernels) > 1 else ""
    return f"{k.label} {k.best.configuration.label}: {number_text(e.performance_GLup_s)} GLup/s {e.limiter}{share}"


def comparison_table(c: Comparison) -> str:
    """One row per candidate, fastest first; a sequence's further kernels on rows of their own."""
    width = max(len("candidate"), *(len(r.name) for r in c.candidates)) + 2
    rows = [f"{'#':>2}  {'candidate':<{width}}{'updates':>8}{'time/update':>13}{'GLup/s':>9}  {'limiter':<8}"
            f"{'x best':>7}  kernels: best block, GLup/s, limiter"]
    pad = " " * (2 + 2 + width + 8 + 13 + 9 + 2 + 8 + 7 + 2)
    for i, r in enumerate(c.candidates, start=1):
        rows.append(f"{i:>2}  {r.name:<{width}}{r.updates:>8g}{seconds_text(r.time_per_update_s):>13}"
                    f"{number_text(r.performance_GLup_s):>9}  {r.limiter:<8}{r.factor:>7.2f}  "
                    f"{_kernel_cell(r.kernels[0], r)}")
        rows += [pad + _kernel_cell(k, r) for k in r.kernels[1:]]
    rows += textwrap.wrap("time/update: the candidate's kernels' best times added, divided by the updates of the "
                          "domain they make; GLup/s: cells of the domain per time/update; limiter: that of the "
                          "kernel taking the most time; x best: time/update over the fastest's.", 100)
    return "\n".join(rows)


def comparison_text(c: Comparison) -> str:
    return comparison_headline(c) + "\n\n" + comparison_table(c)


COMPARE_CSV_COLUMNS = ("rank", "candidate", "device", "domain_x", "domain_y", "domain_z", "updates", "updates_given",
                       "time_s", "time_per_update_s", "updates_per_s", "performance_GLup_s", "limiter",
                       "dominant_kernel", "factor", "confidence_level", "kernels", "blocks", "foldings",
                       "kernel_GLup_s", "kernel_limiters", "kernel_time_s", "model")


def comparison_csv_rows(c: Comparison) -> list[dict]:
    """One flat row per candidate (COMPARE_CSV_COLUMNS), fastest first; a sequence's kernels, blocks, foldings
    and their figures joined by '+' in launch order."""

    def joined(values) -> str:
        return SEQUENCE_SEPARATOR.join(str(v) for v in values)

    rows = []
    for i, r in enumerate(c.candidates, start=1):
        ks = r.kernels
        rows.append({"rank": i, "candidate": r.name, "device": c.device,
                     "domain_x": c.domain[0], "domain_y": c.domain[1], "domain_z": c.domain[2],
                     "updates": r.updates, "updates_given": str(r.updates_given).lower(), "time_s": r.time_s,
                     "time_per_update_s": r.time_per_update_s, "updates_per_s": r.updates_per_s,
                     "performance_GLup_s": r.performance_GLup_s, "limiter": r.limiter,
                     "dominant_kernel": r.dominant.label, "factor": r.factor, "confidence_level": r.level,
                     "kernels": joined(k.label for k in ks),
                     "blocks": joined("x".join(map(str, k.best.configuration.block)) for k in ks),
                     "foldings": joined("x".join(map(str, k.best.configuration.folding)) for k in ks),
                     "kernel_GLup_s": joined(repr(k.best.performance_GLup_s) for k in ks),
                     "kernel_limiters": joined(k.best.limiter for k in ks),
                     "kernel_time_s": joined(repr(k.time_s) for k in ks), "model": c.model})
    return rows
