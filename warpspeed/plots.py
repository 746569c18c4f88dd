"""Plots (optional extra ``warpspeed[plot]``): hierarchical roofline, ranking chart, what-if curves and
projection bars. Each function returns a matplotlib ``Figure`` (no pyplot, no global state); save it
with :func:`save` or ``fig.savefig``.

Conventions:
- Limiters have fixed colours: FP red, L1 orange, L2 green, DRAM blue (errors grey).
- Thread blocks are coloured as in Ernst et al. (sec. 5.1): RGB = (log x / log 256, log y / log 256,
  log z / log 64), clipped to [0, 1]: wide blocks are red, tall green, deep blue, cubes greyish.
- The hierarchical roofline (NERSC convention) has one arithmetic intensity per memory level; the L1
  point uses the bytes the load/store unit could move in the kernel's L1 cycles (wavefront-equivalent
  bytes), so that its roof gives exactly the L1 limiter.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

from .device import Device
from .device import device as get_device
from .errors import InputError, install_hint
from .measured import bandwidths_GB_s

__all__ = ["LIMITER_COLORS", "block_color", "roofline_plot", "ranking_plot", "whatif_plot", "projection_plot",
           "save", "FORMATS"]

LIMITER_COLORS = {"FP": "tab:red", "L1": "tab:orange", "L2": "tab:green", "DRAM": "tab:blue", "latency": "tab:brown",
                  None: "0.6"}
LEVEL_MARKERS = {"L1": "s", "L2": "^", "DRAM": "o"}
LEVEL_SIZES = {"L1": 150, "L2": 90, "DRAM": 40}  # nested, so that coinciding points stay visible
FORMATS = ("png", "svg", "pdf")


def _figure(width: float = 7.5, height: float = 4.8):
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise InputError(f"plots need matplotlib; {install_hint('plot')}.") from None
    return Figure(figsize=(width, height), layout="constrained")


def output_format(path: str | Path) -> str:
    """The file format of an output path (png, svg or pdf), checked before any work is done."""
    fmt = Path(path).suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise InputError(f"--output {str(path)!r}: the file must end in .png, .svg or .pdf.")
    return fmt


def save(fig, path: str | Path, dpi: int = 150) -> Path:
    """Write a figure as PNG, SVG or PDF (chosen by the file suffix)."""
    p = Path(path)
    fmt = output_format(p)
    try:
        fig.savefig(p, format=fmt, dpi=dpi)
    except OSError as e:
        raise InputError(f"cannot write {str(p)!r}: {e.strerror or e}.") from None
    return p


def block_color(block: Sequence[int]) -> tuple[float, float, float]:
    """The paper's block-shape colour code."""
    x, y, z = block
    return (min(math.log(x) / math.log(256), 1.0), min(math.log(y) / math.log(256), 1.0),
            min(math.log(z) / math.log(64), 1.0))


def _label(block: Sequence[int], folding: Sequence[int]) -> str:
    fold = "" if tuple(folding) == (1, 1, 1) else " f" + "x".join(map(str, folding))
    return "x".join(map(str, block)) + fold


# ----------------------------------------------------------------------------------------------- roofline


def level_bytes_per_lup(data: dict, dev: Device) -> dict[str, float]:
    """Bytes per lup at each level of the hierarchical roofline (L1: wavefront-equivalent bytes)."""
    v = data["volumes_B_per_lup"]
    return {"L1": data["l1_cycles_per_warp_lup"] / 32 * dev.l1_bytes_per_cycle,
            "L2": v["l2_load"] + v["l2_store"], "DRAM": v["dram_load"] + v["dram_store"]}


def roofline_plot(estimate, device: Device | str | None = None, *, flops_per_lup: float = 0.0):
    """Hierarchical roofline of one estimate (an :class:`~warpspeed.Estimate` or its JSON dict).

    With ``flops_per_lup`` the axes are GFLOP/s over FLOP/B, otherwise GLup/s over lup/B. The FP roof is
    the kernel's own FP ceiling (its instruction mix at the device's FMA rate), absent without flops.
    """
    data = estimate if isinstance(estimate, dict) else estimate.to_dict()
    dev = get_device(device if device is not None else data["device"])
    work = flops_per_lup if flops_per_lup > 0 else 1.0
    unit = "FLOP" if flops_per_lup > 0 else "lup"
    bw = bandwidths_GB_s(dev)
    per_lup = level_bytes_per_lup(data, dev)
    perf = data["performance_GLup_s"] * work
    oi = {lvl: work / b for lvl, b in per_lup.items() if b > 0}
    fp = data["limiters_GLup_s"]["FP"]
    peak = None if fp is None else fp * work

    fig = _figure()
    ax = fig.add_subplot()
    lo = min(list(oi.values()) + [0.01]) / 4
    hi = max(list(oi.values()) + [(peak or 0) / bw["DRAM"]]) * 8
    xs = [lo, hi]
    for lvl, b in bw.items():
        ys = [min(x * b, peak) if peak else x * b for x in xs]
        if peak:
            ridge = peak / b
            if lo < ridge < hi:
                xs_l = [lo, ridge, hi]
                ys = [min(x * b, peak) for x in xs_l]
                ax.plot(xs_l, ys, color=LIMITER_COLORS[lvl], lw=1.5, label=f"{lvl} roof {b:,.0f} GB/s")
                ax.annotate(f"ridge {ridge:.2g}", (ridge, peak), textcoords="offset points", xytext=(0, 6),
                            ha="center", fontsize=7, color=LIMITER_COLORS[lvl])
                continue
        ax.plot(xs, ys, color=LIMITER_COLORS[lvl], lw=1.5, label=f"{lvl} roof {b:,.0f} GB/s")
    if peak:
        ax.axhline(peak, color=LIMITER_COLORS["FP"], lw=1.5, ls="--",
                   label=f"FP ceiling of this kernel's flop mix {peak:,.0f} G{unit}/s (not the spec peak)")
    for lvl, x in oi.items():
        ax.scatter([x], [perf], marker=LEVEL_MARKERS[lvl], s=LEVEL_SIZES[lvl], color=LIMITER_COLORS[lvl],
                   edgecolor="black", zorder=3, label=f"kernel at {lvl}: {x:.3g} {unit}/B")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(f"operational intensity ({unit}/B)")
    ax.set_ylabel(f"performance (G{unit}/s)")
    ax.set_title(f"{data['kernel']} on {dev.id}, block {_label(data['block'], data['folding'])}: "
                 f"{data['performance_GLup_s']:.3g} GLup/s, {data['limiter']}-bound", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    return fig


# ----------------------------------------------------------------------------------------------- ranking


def ranking_plot(ranking, *, top: int | None = None):
    """GLup/s per configuration, best first: bars coloured by limiter, a strip below in the block colour."""
    results = list(ranking.results)[: top or None]
    if not results:
        raise InputError("the ranking is empty: nothing to plot.")
    n = len(results)
    fig = _figure(max(7.5, min(0.16 * n + 2, 16)), 5.2)
    ax, strip = fig.subplots(2, 1, sharex=True, height_ratios=[12, 1])
    xs = range(n)
    ax.bar(xs, [r.performance_GLup_s for r in results], color=[LIMITER_COLORS[r.limiter] for r in results],
           width=0.85)
    strip.bar(xs, [1] * n, color=[block_color(r.configuration.block) for r in results], width=1.0)
    strip.set_yticks([])
    strip.set_ylabel("block", rotation=0, ha="right", va="center", fontsize=8)
    ax.set_ylabel("performance (GLup/s)")
    ax.set_title(f"{ranking.kernel} on {ranking.device}: {len(ranking.results)} configurations"
                 + (f" (best {n} shown)" if n < len(ranking.results) else ""), fontsize=10)
    from matplotlib.patches import Patch
    present = [k for k in LIMITER_COLORS if k is not None and any(r.limiter == k for r in results)]
    handles = [Patch(color=LIMITER_COLORS[k], label=f"{k}-bound") for k in present]
    if any(r.error for r in results):
        handles.append(Patch(color=LIMITER_COLORS[None], label="cannot launch"))
    ax.legend(handles=handles, fontsize=8, loc="upper right")
    ax.grid(True, axis="y", alpha=0.3)
    if n <= 60:
        strip.set_xticks(list(xs))
        strip.set_xticklabels([_label(r.configuration.block, r.configuration.folding) for r in results],
                              rotation=90, fontsize=7)
    else:
        strip.set_xticks([])
    strip.set_xlabel("configuration (block XxYxZ, folding), best first; strip: block colour RGB(log x/log 256, "
                     "log y/log 256, log z/log 64)", fontsize=8)
    strip.set_xlim(-0.5, n - 0.5)
    return fig


# ----------------------------------------------------------------------------------------------- what-if


def whatif_plot(points, *, kind: str | None = None):
    """Best GLup/s over the swept value (markers coloured by limiter) and DRAM B/lup on a second axis."""
    from .device import override_kind
    from .units import format_quantity

    if not points:
        raise InputError("the what-if sweep has no points: nothing to plot.")
    key = points[0].key
    kind = kind or override_kind(key)
    scale, unit = {"bytes": (2**20, "MiB"), "bandwidth": (1.0, "GB/s"), "frequency": (1.0, "GHz"),
                   "time": (1e-9, "ns")}.get(kind, (1.0, ""))
    xs = [p.value / scale for p in points]
    perf = [p.best.performance_GLup_s for p in points]
    dram = [None if p.best.error else p.best.data["volumes_B_per_lup"]["dram_load"]
            + p.best.data["volumes_B_per_lup"]["dram_store"] for p in points]
    fig = _figure()
    ax = fig.add_subplot()
    ax.plot(xs, perf, color="0.3", lw=1, zorder=1)
    ax.scatter(xs, perf, c=[LIMITER_COLORS[p.best.limiter] for p in points], s=50, edgecolor="black", zorder=2)
    ax2 = ax.twinx()
    ax2.plot(xs, [d if d is not None else math.nan for d in dram], color="tab:purple", ls="--", marker="x",
             label="DRAM volume of the best")
    ax2.set_ylabel("DRAM volume (B/lup)", color="tab:purple")
    ax2.set_ylim(bottom=0)
    ax.set_ylim(0, 1.15 * max(perf + [1e-9]))  # room for the block labels
    ax.set_xlabel(f"{key}" + (f" ({unit})" if unit else ""))
    ax.set_ylabel("best performance (GLup/s)")
    ratio = max(xs) / min(xs) if min(xs) > 0 else 1
    if ratio > 20:
        ax.set_xscale("log")
    for p, x, y in zip(points, xs, perf, strict=True):
        if not p.best.error:
            ax.annotate(_label(p.best.configuration.block, p.best.configuration.folding), (x, y),
                        textcoords="offset points", xytext=(0, 7), ha="center", fontsize=6)
    from matplotlib.lines import Line2D
    present = [k for k in LIMITER_COLORS if k is not None and any(p.best.limiter == k for p in points)]
    handles = [Line2D([], [], marker="o", ls="", color=LIMITER_COLORS[k], markeredgecolor="black",
                      label=f"{k}-bound") for k in present]
    handles.append(Line2D([], [], color="tab:purple", ls="--", marker="x", label="DRAM volume of the best"))
    ax.legend(handles=handles, fontsize=8, loc="lower right")
    ax.grid(True, alpha=0.3)
    first = points[0]
    ax.set_title(f"what if {key} were {format_quantity(first.value, kind)} ... "
                 f"{format_quantity(points[-1].value, kind)} ({first.device.split('+')[0]})", fontsize=10)
    return fig


# ----------------------------------------------------------------------------------------------- projection


def projection_plot(projection, measured=None):
    """Per-limiter GLup/s of both devices at their best configurations (the bound one hatched), the two
    predictions, and the measured-source interval when given."""
    import numpy as np

    from .roofline import LIMITERS

    s, t = projection.source_best.data, projection.target_best.data
    limits = {key: d.get("performance_model", {}).get("limits_GLup_s") or d["limiters_GLup_s"]
              for key, d in (("s", s), ("t", t))}
    keys = tuple(LIMITERS) + (("latency",) if any("latency" in v for v in limits.values()) else ())
    fig = _figure(8.5, 4.8)
    ax = fig.add_subplot()
    labels = list(keys) + ["predicted"]
    x = np.arange(len(labels))
    width = 0.38
    for off, d, lim, dev, color in ((-width / 2, s, limits["s"], projection.source.id, "tab:gray"),
                                    (width / 2, t, limits["t"], projection.target.id, "tab:cyan")):
        vals = [lim.get(k) or 0.0 for k in keys] + [d["performance_GLup_s"]]
        bars = ax.bar(x + off, vals, width, color=color, edgecolor="black", label=f"{dev} (block "
                      f"{_label(d['block'], d['folding'])})")
        bars[keys.index(d["limiter"])].set_hatch("//")
        for b, v in zip(bars, vals, strict=True):
            ax.annotate(f"{v:.3g}", (b.get_x() + b.get_width() / 2, v), textcoords="offset points",
                        xytext=(0, 2), ha="center", fontsize=7)
    if measured is not None:
        md = measured.to_dict()
        lo, hi = md.get("interval_GLup_s", md["interval"])
        xm = len(labels) - 1 + width / 2
        ax.errorbar([xm], [(lo + hi) / 2], yerr=[[(lo + hi) / 2 - lo], [hi - (lo + hi) / 2]], fmt="D",
                    color="black", capsize=6, label=f"{measured.mode} projection of the measured run")
    finite = [v for lim in limits.values() for v in lim.values() if v]
    ax.set_ylim(0, 1.25 * max(finite + [t["performance_GLup_s"]]))
    ax.set_xticks(x)
    ax.set_xticklabels([f"{k} limit" for k in keys] + ["predicted"])
    ax.set_ylabel("performance (GLup/s)")
    ax.set_title(f"{projection.kernel}: {projection.target.id} / {projection.source.id} = "
                 f"{projection.speedup:.2f}x (hatched: the binding limiter)", fontsize=10)
    ax.legend(fontsize=8, loc="upper left")
    ax.grid(True, axis="y", alpha=0.3)
    return fig
