"""Human-readable reports of estimates: the headline first, then the tables."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

import numpy as np

from ..file_frontend import kernel_files
from ..measurement.calibration import Calibration
from ..measurement.validation import GroupReport, volume_errors
from ..model.device_validation import DeviceValidation
from ..model.estimate import DOES_NOT_FIT, Estimate
from ..model.latency import run_overhead_bytes
from ..model.levels import LEVELS, VOLUME_KEYS, VOLUME_LABELS, MemoryLevel
from ..model.roofline import LIMITERS, limiter_names

# what the two footprint rows are, and why the actual loads differ from them (docs/outputs.md has the details)
FOOTPRINT_NOTE = ("footprints: the distinct sectors each block (L2->L1) or the whole wave (DRAM->L2) loads, "
                  "per lup; L2->L1 adds the L1's capacity misses, DRAM->L2 subtracts the layer reuse that "
                  "earlier waves left in the L2 (so it can be smaller than the wave footprint)")
MODEL_NOTE = ("model {model}: the limits combine as a {norm}-norm of their times per lup (docs/model.md); the "
              "roofline column is each resource's bandwidth limit alone")
FP_NOTE = ("FP is the kernel's own ceiling: its flop mix (an FMA counts once) at the device's FMA lanes and "
           "clock, not the spec sheet's peak")


def _level_columns(volumes: Sequence) -> tuple[tuple[MemoryLevel, str, int], ...]:
    """The rank table's level columns (level, title, width), outermost first (DRAM, L1 cycles last): the levels
    whose volumes any of ``volumes`` holds (a memory-side cache only where a device has one)."""
    return tuple((lv, f"{lv.name} cyc", 8) if lv.cycles_bound else (lv, f"{lv.name} B/lup", max(10, len(lv.name) + 7))
                 for lv in reversed(LEVELS) if any(lv.present_in(v) for v in volumes))


def number_text(v: float, digits: int = 3) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    if abs(v) < 5e-4:
        return "0"
    return f"{v:.{digits}g}" if abs(v) < 1000 else f"{v:,.0f}"


def _triple(t) -> str:
    return "(" + ", ".join(str(x) for x in t) + ")"


def seconds_text(t: float) -> str:
    if not math.isfinite(t):
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if t >= scale:
            return f"{t / scale:.3g} {unit}"
    return f"{t / 1e-9:.3g} ns"


def estimate_summary(e: Estimate) -> str:
    """Performance, limiter, the margin to the next limiter and the sweep's time in one line (the web page's
    headline; the text report's first line)."""
    margin = e.margin
    tail = f"; next: {margin[0]} at {margin[1]:.2f}x" if margin else ""
    return (f"{e.kernel} on {e.device}, block {_triple(e.block)}, folding {_triple(e.folding)}: "
            f"{number_text(e.performance_GLup_s)} GLup/s, {e.limiter}-bound{tail}; "
            f"{seconds_text(e.time_s)} for {e.domain[0]}x{e.domain[1]}x{e.domain[2]} cells")


def validation_line(device: str, validation: DeviceValidation | None, measure: int | None = None) -> str:
    """The headline line of an answer on a device whose family's model data was not measured ('' on one whose
    was): a first estimate, and how many configurations to measure where given."""
    return "" if validation is None else validation.line(device, measure)


def headline(e: Estimate) -> str:
    """:func:`estimate_summary`, then a line for a domain that does not fit, one for a device whose model data
    was never measured and one for each reason the access pattern lies outside the validated ones
    (confidence.py)."""
    first = validation_line(e.device, e.device_validation)
    return (estimate_summary(e)
            + "".join(f"\n{n}" for n in e.notes if n.startswith(DOES_NOT_FIT))
            + (f"\n{first}" if first else "")
            + "".join(f"\nunvalidated: {reason}" for reason in e.unvalidated))


def text_report(e: Estimate) -> str:
    occ = e.occupancy
    lines = [headline(e), ""]
    lines.append(f"launch     grid {_triple(e.grid)}, {occ.blocks_per_sm} blocks/SM (limited by "
                 f"{occ.limited_by}), wave of {e.wave_blocks} blocks, {occ.registers} registers "
                 f"({occ.registers_source})")
    lines.append("")
    model_limits = e.performance.limits_GLup_s if e.performance is not None else e.limiters_GLup_s
    own = e.model != "roofline"
    lines.append(f"{'limiter':<8}{'GLup/s':>12}{'x best':>9}" + (f"{'roofline':>10}" if own else ""))
    for k in limiter_names([*e.limiters_GLup_s, *model_limits]):
        v = model_limits.get(k, math.inf)
        rel = v / e.performance_GLup_s if math.isfinite(v) and e.performance_GLup_s > 0 else math.inf
        mark = "  <- limiter" if k == e.limiter else ""
        roof = f"{number_text(e.limiters_GLup_s[k]) if k in e.limiters_GLup_s else '':>10}" if own else ""
        lines.append(f"{k:<8}{number_text(v):>12}{number_text(rel):>9}{roof}{mark}".rstrip())
    if own:
        norm = e.performance.detail.get("overlap_exponent", "p")
        lines += textwrap.wrap(MODEL_NOTE.format(model=e.model, norm=f"{norm:g}" if isinstance(norm, int | float)
                                                 else norm), 100)
        for reason in e.performance.reasons:
            lines += textwrap.wrap(reason, 100, subsequent_indent="  ")
    if math.isfinite(e.limiters_GLup_s["FP"]):
        lines += textwrap.wrap(FP_NOTE, 100)
    lines.append("")
    lines.append(f"{'volume':<30}{'B/lup':>8}")
    for k, label in VOLUME_LABELS.items():
        if k in e.volumes_B_per_lup:  # the device's levels (a memory-side cache only where it has one)
            lines.append(f"{label:<30}{number_text(e.volumes_B_per_lup[k]):>8}")
    lines.append(f"{'L1 cycles per warp-lup':<30}{number_text(e.l1_cycles_per_warp_lup):>8}")
    lines += textwrap.wrap(FOOTPRINT_NOTE, 100)
    lines.append("")
    lines.append("causes (B/lup)                potential    O     hit rate   hit")
    causes = [("L1 redundant loads", e.l1_capacity), ("L2 y-layer reuse", e.layer_y),
              ("L2 z-layer reuse", e.layer_z), ("L2 partial stores", e.partial_stores)]
    if e.memory_side is not None:  # in front of the DRAM: the memory-side cache's capacity
        m = e.memory_side
        causes += [("MSC y-layer reuse", m.layer_y), ("MSC z-layer reuse", m.layer_z),
                   ("MSC partial stores", m.partial_stores)]
    for label, c in causes:
        lines.append(f"{label:<28}{number_text(c.potential_B_per_lup):>11}{number_text(c.oversubscription):>8}"
                     f"{number_text(c.hit_rate):>10}{number_text(c.hit_B_per_lup):>8}")
    for label, c in causes:
        if c.waits > 1:  # sectors with writers beyond two wait again: the curve's rate to that power
            lines.append(f"{label}: {number_text(c.waits)} waits (hit rate = the curve's at O to that power)")
    lines.append("")
    width = max([16] + [len(f.name) + 1 for f in e.fields])  # columns keep a blank between them
    lines.append(f"{'field':<{width}}{'L2 comp':>9}{'DRAM comp':>11}{'y hit':>9}{'z hit':>9}{'store':>9}")
    for f in e.fields:
        lines.append(f"{f.name:<{width}}{number_text(f.l2_load_compulsory):>9}{number_text(f.dram_load_compulsory):>11}"
                     f"{number_text(f.dram_layer_y_hit):>9}{number_text(f.dram_layer_z_hit):>9}{number_text(f.dram_store):>9}")
    for n in e.notes:
        if not n.startswith(DOES_NOT_FIT):  # the headline says it
            lines.append(f"note: {n}")
    return "\n".join(lines)


def ranking_headline(ranking, reference=None, reference_label: str | None = None) -> str:
    """Best configuration, its performance and limiter, and how far the next best and the reference lag;
    ``reference_label`` names the reference (its front end's label; None: the kernel-file front end's)."""
    best = ranking.best
    if best.error:
        return f"{ranking.kernel} on {ranking.device}: no configuration can launch ({best.error})"
    p = best.performance_GLup_s
    parts = [f"{ranking.kernel} on {ranking.device}: best block {_triple(best.configuration.block)}, folding "
             f"{_triple(best.configuration.folding)}: {number_text(p)} GLup/s, {best.limiter}-bound"]
    if len(ranking.results) > 1 and not ranking.results[1].error:
        nxt = ranking.results[1]
        parts.append(f"next best {nxt.configuration.label} {100 * (1 - nxt.performance_GLup_s / p):.1f} % behind")
    if reference is not None and reference is not best:
        name = reference_label if reference_label is not None else kernel_files().reference.label
        if reference.error:
            parts.append(f"{name} {reference.configuration.label} cannot launch")
        else:
            behind = 100 * (1 - reference.performance_GLup_s / p)
            where = (f"{behind:.1f} % behind" if behind >= 0 else
                     f"{-behind:.1f} % ahead of the ranked blocks: rank its thread count too, --threads")
            parts.append(f"{name} {reference.configuration.label} {number_text(reference.performance_GLup_s)} "
                         f"GLup/s ({where})")
    notes = [f"note: {n}" for n in best.estimate.notes if not n.startswith("registers per thread")]
    conf = ranking.confidence
    first = validation_line(ranking.device, ranking.device_validation, len(conf.measure))
    trust = [f"confidence: {conf.level}: {conf.reasons[0]}", *(f"  {r}" for r in conf.reasons[1:])]
    return "\n".join(["; ".join(parts), *([first] if first else []), *trust, *notes])


def ranking_table(ranking, top: int = 10) -> str:
    """The best ``top`` rows: performance, limiter, the model's limits (latency model: DRAM with its run cost,
    and the latency limit), volumes and L1 cycles; the last line counts the limiters."""
    shown = [r for r in ranking.results[:top] if not r.error]
    keys = limiter_names(k for r in shown for k in r.estimate.limits_GLup_s)
    columns = _level_columns([r.estimate.volumes_B_per_lup for r in shown])
    head = (f"{'#':>3} {'block':<14}{'fold':<7}{'GLup/s':>8} {'limiter':<8}" + "".join(f"{k:>8}" for k in keys)
            + "".join(f"{title:>{width}}" for _, title, width in columns))
    rows = [head]
    for i, r in enumerate(ranking.results[:top], start=1):
        c = r.configuration
        if r.error:
            rows.append(f"{i:>3} {'x'.join(map(str, c.block)):<14}{'x'.join(map(str, c.folding)):<7}"
                        f"{0:>8} {'-':<8}{r.error}")
            continue
        e = r.estimate
        lim = e.limits_GLup_s
        rows.append(f"{i:>3} {'x'.join(map(str, c.block)):<14}{'x'.join(map(str, c.folding)):<7}"
                    f"{number_text(e.performance_GLup_s):>8} {e.limiter:<8}"
                    + "".join(f"{number_text(lim.get(k)):>8}" for k in keys)
                    + "".join(f"{number_text(lv.cost(e.volumes_B_per_lup, e.l1_cycles_per_warp_lup)):>{width}}"
                              for lv, _, width in columns))
    counts = ", ".join(f"{k}: {n}" for k, n in ranking.limiter_counts.items() if n)
    rows.append(f"{len(ranking.results)} configurations; limiters: {counts}")
    if ranking.bounded:
        top_bound = ranking.bounded[0].bound_GLup_s
        rows.append(f"{len(ranking.bounded)} more only bounded: at most {number_text(top_bound)} GLup/s, below the "
                    f"{ranking.screen} best (--screen {ranking.screen}); not estimated in full")
    return "\n".join(rows)


CSV_COLUMNS = ("rank", "kernel", "device", "block_x", "block_y", "block_z", "folding_x", "folding_y", "folding_z",
               "domain_x", "domain_y", "domain_z", "performance_GLup_s", "limiter",
               *(f"{k}_GLup_s" for k in LIMITERS), *(f"{lv.name}_GLup_s" for lv in LEVELS if lv.optional),
               "l1_cycles_per_warp_lup", *VOLUME_KEYS, "blocks_per_sm",
               "wave_blocks", "occupancy_limited_by", "time_s", "error", "model", "latency_GLup_s", "dram_efficiency")
"""A ranking's CSV columns: a column per paper limiter (LIMITERS) and per volume of the memory levels (VOLUME_KEYS,
model/levels.py), so that a new level's volumes reach the CSV without an edit here; an optional level (the
memory-side cache) has its limit's column too. A CSV leaves out the columns of an optional level that none of its
devices has (:func:`ranking_csv_table`)."""
_OPTIONAL_COLUMNS = tuple((f"{lv.name}_GLup_s", *lv.volume_keys) for lv in LEVELS if lv.optional)


def ranking_csv_table(rankings: Sequence) -> tuple[tuple[str, ...], list[dict]]:
    """The CSV of ``rankings``: its columns (:data:`CSV_COLUMNS` less those of an optional level no ranking's
    device has: an H100's CSV has no MSC column) and its rows (:func:`ranking_csv_rows`, in those columns)."""
    rows = [row for r in rankings for row in ranking_csv_rows(r)]
    unused = {c for cols in _OPTIONAL_COLUMNS if not any(row[cols[1]] != "" for row in rows) for c in cols}
    columns = tuple(c for c in CSV_COLUMNS if c not in unused)
    return columns, [{c: row[c] for c in columns} for row in rows]


def ranking_csv_rows(ranking) -> list[dict]:
    """One flat row per configuration (CSV_COLUMNS); volumes in B/lup, limiters in GLup/s."""
    rows = []
    for d in ranking.to_dicts():
        row = dict.fromkeys(CSV_COLUMNS, "")
        row.update(rank=d["rank"], kernel=d["kernel"], device=d["device"], performance_GLup_s=d["performance_GLup_s"],
                   limiter=d.get("limiter") or "", error=d.get("error") or "")
        for key, axis in (("block", "block"), ("folding", "folding"), ("domain", "domain")):
            for name, val in zip("xyz", d[key], strict=True):
                row[f"{axis}_{name}"] = val
        if not d.get("error"):
            for k in LIMITERS:
                v = d["limiters_GLup_s"][k]
                row[f"{k}_GLup_s"] = "" if v is None else v
            for cols in _OPTIONAL_COLUMNS:  # the limit of a level the device has (empty as the others: no load)
                v = d["limiters_GLup_s"].get(cols[0].removesuffix("_GLup_s"))
                row[cols[0]] = "" if v is None else v
            row.update(d["volumes_B_per_lup"])
            row.update(l1_cycles_per_warp_lup=d["l1_cycles_per_warp_lup"], time_s=d["time_s"],
                       blocks_per_sm=d["occupancy"]["blocks_per_sm"], wave_blocks=d["occupancy"]["wave_blocks"],
                       occupancy_limited_by=d["occupancy"]["limited_by"], model=d.get("model", "roofline"))
            pm = d.get("performance_model", {})
            latency = pm.get("limits_GLup_s", {}).get("latency")
            row.update(latency_GLup_s="" if latency is None else latency,
                       dram_efficiency=pm.get("dram_efficiency", ""))
        rows.append(row)
    return rows


# ----------------------------------------------------------------- validation and calibration
def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def report_text(reports: Sequence[GroupReport]) -> str:
    """Per group: the figures and a volume error table; the last line is the one-line summary."""
    lines = []
    for r in reports:
        rho = "n/a" if r.spearman is None else f"{r.spearman:.3f}"
        lines.append(f"{r.title}: {len(r.pairs)} configurations, Spearman {rho}, predicted best "
                     f"{r.predicted_best.label} reaches {r.top1_percent:.1f} % of the measured best "
                     f"{r.measured_best.label}")
        if r.ratio is not None:
            lines.append(f"  predicted ({r.model} model) / measured GLup/s: median {r.ratio.median:.2f}, p90 of "
                         f"|ratio - 1| {r.ratio.p90_abs_deviation:.2f}")
        if r.volume_errors:
            lines.append(f"  {'volume':<12}{'n':>5}{'median |err|':>14} {'p90 |err|':>11} {'within 10 %':>12}")
            for k, v in r.volume_errors.items():
                lines.append(f"  {k:<12}{v.n:>5}{_pct(v.median):>14} {_pct(v.p90):>11} {_pct(v.within):>12}")
    lines.append(summary_line(reports))
    return "\n".join(lines)


def summary_line(reports: Sequence[GroupReport]) -> str:
    """One line: configurations, groups, median Spearman, worst top-1, pooled DRAM and L2 load errors."""
    n = sum(len(r.pairs) for r in reports)
    rhos = [r.spearman for r in reports if r.spearman is not None]
    parts = [f"summary: {n} configurations in {len(reports)} group{'s' if len(reports) != 1 else ''}",
             "Spearman " + (f"{float(np.median(rhos)):.3f}" if rhos else "n/a")
             + (" (median)" if len(rhos) > 1 else ""),
             f"top-1 {min(r.top1_percent for r in reports):.1f} %" + (" (worst)" if len(reports) > 1 else "")]
    pooled = volume_errors([p for r in reports for p in r.pairs])
    for key in ("dram_load", "l2_load"):
        if key in pooled:
            parts.append(f"{key} error median {_pct(pooled[key].median)}, p90 {_pct(pooled[key].p90)}")
    return "; ".join(parts)


def calibration_text(cal: Calibration) -> str:
    """What a calibration fitted and what it kept, one line per bandwidth, latency fit and curve."""
    ids = ", ".join(d.id for d in cal.devices)
    pooled = " (curves fitted to the pooled rows)" if len(cal.devices) > 1 else ""
    lines = [f"calibrating {ids} from {cal.data_file} ({cal.gpu_name}, driver {cal.driver}){pooled}"]
    for d, b in zip(cal.devices, cal.bandwidths, strict=True):
        if b is not None:
            who = f" of {d.id}" if len(cal.devices) > 1 else ""
            lines.append(f"  dram_bw   {b.GB_s:.0f} GB/s{who} from {b.rows} streaming {b.kernel} rows (best: "
                         f"{b.configuration}; was {d.dram_bw_GB_s:.0f} GB/s)")
    pf = cal.parallelism
    if pf is not None:
        d = cal.device
        was = run_overhead_bytes(d)
        was_time = f"{was / d.dram_bw_GB_s:.3g} ns" if was is not None else "none"
        rate = "none" if pf.l2_requests_per_ns is None else f"{pf.l2_requests_per_ns:g} per ns"
        was_rate = "none" if d.l2_requests_per_ns is None else f"{d.l2_requests_per_ns:g} per ns"
        lines.append(f"  latency   sectors_in_flight_per_warp {pf.sectors_in_flight_per_warp}, dram_run_time "
                     f"{pf.dram_run_time_s * 1e9:g} ns, dram_run_exponent {pf.dram_run_exponent:g}, L2 requests "
                     f"{rate} from {pf.rows} timed rows of {pf.sweeps} sweeps (rms log ratio {pf.rms_log_ratio:.3f}; "
                     f"was {d.sectors_in_flight_per_warp}, {was_time}, {d.dram_run_exponent} and {was_rate})")
    lr = cal.l1_rule
    if lr is not None:
        v = lr.device_values()
        lines.append(f"  l1 rule   a further load line {lr.load_line:.3g} wavefront where it hits, "
                     f"{lr.missed_line:.3g} where it misses, a further store line {lr.store_line:.3g}, a warp "
                     f"{lr.per_warp:.3g} from {lr.rows} rows (rms {lr.rms:.3f}; as keys "
                     f"{v['l1_load_lines_per_wavefront']} and {v['l1_store_lines_per_wavefront']} lines per "
                     f"wavefront, {v['l1_wavefronts_per_warp']} per warp, {v['l1_wavefronts_per_missed_line']:g} "
                     "per missed line; reported, not written)")
    for f in cal.fits:
        if f.fitted is None:
            lines.append(f"  {f.curve:<9} {len(f.points)} points: {f.kept_because}; kept "
                         f"a={f.old.a:.4g} b={f.old.b:.4g} c={f.old.c:.4g}")
        else:
            c = f.fitted
            how = " (level only: no point past the drop)" if f.level_only else ""
            lines.append(f"  {f.curve:<9} {len(f.points)} points: a={c.a:.4g} b={c.b:.4g} c={c.c:.4g} "
                         f"(was a={f.old.a:.4g} b={f.old.b:.4g} c={f.old.c:.4g}), rms {f.rms:.3f}{how}")
    return "\n".join(lines)
