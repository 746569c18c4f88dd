"""Plots (optional extra ``warpspeed[plot]``): hierarchical roofline, ranking chart, what-if curves,
projection bars, the devices for a kernel (which GPU), and the model against measurements (validation,
calibration). Each function returns a matplotlib ``Figure`` (no pyplot, no global state); save it with
:func:`save` or ``fig.savefig``.

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
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..device import Device
from ..device import device as get_device
from ..errors import InputError, install_hint
from ..measurement.measurements import VOLUME_COLUMNS
from ..measurement.validation import L1_CYCLES, WITHIN, measured_value, predicted_value
from ..model.levels import bandwidths_GB_s, level, levels_in
from ..model.roofline import limiter_names
from ..studies.space import Configuration

if TYPE_CHECKING:
    from ..measurement.calibration import Calibration
    from ..measurement.validation import GroupReport

__all__ = ["LIMITER_COLORS", "block_color", "roofline_plot", "ranking_plot", "ranking_label", "RANKING_TOP",
           "whatif_plot", "device_value", "projection_plot", "limiter_color", "log_ticks", "plain_log_ticks", "save",
           "FORMATS", "new_figure", "validation_plot", "calibration_plot", "devices_plot"]

LIMITER_COLORS = {"FP": "tab:red", "L1": "tab:orange", "L2": "tab:green", "MSC": "teal", "DRAM": "tab:blue",
                  "latency": "tab:brown", None: "0.6"}
_SPARE_COLORS = ("tab:purple", "tab:pink", "tab:olive", "tab:cyan")


def limiter_color(name: str | None) -> str:
    """The colour of a limiter: LIMITER_COLORS, else a spare colour fixed by the name (a model's own limit)."""
    if name in LIMITER_COLORS:
        return LIMITER_COLORS[name]
    return _SPARE_COLORS[sum(map(ord, name or "")) % len(_SPARE_COLORS)]
LEVEL_MARKERS = {"L1": "s", "L2": "^", "MSC": "D", "DRAM": "o"}
LEVEL_SIZES = {"L1": 150, "L2": 90, "MSC": 60, "DRAM": 40}  # nested, so that coinciding points stay visible
FORMATS = ("png", "svg", "pdf")


def new_figure(width: float = 7.5, height: float = 4.8):
    """A matplotlib Figure of ``width`` x ``height`` inches, constrained layout, not attached to pyplot (so
    no display is needed); a clear error naming the ``plot`` extra when matplotlib is missing."""
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
    return Configuration(tuple(block), tuple(folding)).label  # type: ignore[arg-type]


# ----------------------------------------------------------------------------------------------- roofline


def level_bytes_per_lup(data: dict, dev: Device) -> dict[str, float]:
    """Bytes per lup at each level of the hierarchical roofline (L1: wavefront-equivalent bytes)."""
    v, cycles = data["volumes_B_per_lup"], data["l1_cycles_per_warp_lup"]
    return {lv.name: cycles / dev.warp_size * dev.l1_bytes_per_cycle if lv.cycles_bound else lv.traffic_B_per_lup(v)
            for lv in levels_in(v)}  # the levels of the estimate's device (a memory-side cache only where it has one)


def roofline_plot(estimate, device: Device | str | None = None, *, flops_per_lup: float = 0.0):
    """Hierarchical roofline of one estimate (an :class:`~warpspeed.Estimate` or its JSON dict).

    With ``flops_per_lup`` the axes are GFLOP/s over FLOP/B, otherwise GLup/s over lup/B. The FP roof is
    the kernel's own FP ceiling (its instruction mix at the device's FMA rate), absent without flops.
    """
    data = estimate if isinstance(estimate, dict) else estimate.to_dict()
    dev = get_device(device if device is not None else data["device"])
    work = flops_per_lup if flops_per_lup > 0 else 1.0
    unit = "FLOP" if flops_per_lup > 0 else "lup"
    per_lup = level_bytes_per_lup(data, dev)
    bw = {k: b for k, b in bandwidths_GB_s(dev).items() if k in per_lup}  # the roofs of the estimate's levels
    perf = data["performance_GLup_s"] * work
    oi = {lvl: work / b for lvl, b in per_lup.items() if b > 0}
    fp = data["limiters_GLup_s"]["FP"]
    peak = None if fp is None else fp * work

    fig = new_figure()
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
    _model_limits(ax, data, bw, work, peak, xs)
    for lvl, x in oi.items():
        ax.scatter([x], [perf], marker=LEVEL_MARKERS[lvl], s=LEVEL_SIZES[lvl], color=LIMITER_COLORS[lvl],
                   edgecolor="black", zorder=3, label=f"kernel at {lvl}: {x:.3g} {unit}/B")
    _level_labels(ax, oi, perf)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(f"operational intensity ({unit}/B)")
    ax.set_ylabel(f"performance (G{unit}/s)")
    if flops_per_lup > 0:  # the rest of the tool speaks GLup/s: the same height in both units
        right = ax.secondary_yaxis("right", functions=(lambda y: y / work, lambda y: y * work))
        right.set_ylabel("performance (GLup/s)")
    ax.set_title(f"{data['kernel']} on {dev.id}, block {_label(data['block'], data['folding'])}: "
                 f"{data['performance_GLup_s']:.3g} GLup/s, {data['limiter']}-bound", fontsize=10)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    return fig


def _model_limits(ax, data: dict, bw: dict[str, float], work: float, peak: float | None, xs: list[float]) -> None:
    """What the performance model adds to the roofs, dotted: the DRAM roof at the streaming efficiency of the
    kernel's runs (under the FP ceiling), and every limit that is not a roof (latency, L2 requests, TLB) as a
    ceiling."""
    model = data.get("performance_model") or {}
    limits = model.get("limits_GLup_s") or {}
    eff = model.get("dram_efficiency")
    if isinstance(eff, int | float) and 0 < eff < 0.999:
        rate = bw["DRAM"] * eff
        pts = sorted({*xs, *([peak / rate] if peak and xs[0] < peak / rate < xs[-1] else [])})
        ax.plot(pts, [min(x * rate, peak) if peak else x * rate for x in pts], color=LIMITER_COLORS["DRAM"], lw=1,
                ls=":",
                label=f"DRAM at {100 * eff:.0f} % streaming (runs of {model.get('load_run_bytes', 0):.0f} B)")
    for name, value in limits.items():
        if name in ("FP", *bw) or not isinstance(value, int | float) or not 0 < value < math.inf:
            continue
        ax.axhline(value * work, color=limiter_color(name), lw=1, ls=":",
                   label=f"{name} limit {value:.3g} GLup/s ({data.get('model', 'model')} model)")


def _level_labels(ax, oi: dict[str, float], perf: float) -> None:
    """Name each level's marker above it; markers closer than a factor 1.6 in intensity (which the names would
    cover) get their names stacked, one line each."""
    last_x, line = None, 0
    for lvl, x in sorted(oi.items(), key=lambda kv: kv[1]):
        line = line + 1 if last_x is not None and x / last_x < 1.6 else 0
        ax.annotate(lvl, (x, perf), textcoords="offset points", xytext=(0, 11 + 11 * line), ha="center",
                    va="bottom", fontsize=8, color=LIMITER_COLORS[lvl])
        last_x = x


# ----------------------------------------------------------------------------------------------- ranking


RANKING_TOP = 40
"""Bars of :func:`ranking_plot` by default: few enough that every bar can carry its configuration label."""


def ranking_plot(ranking, *, top: int | None = RANKING_TOP, reference=None, reference_label: str | None = None):
    """GLup/s per configuration, best first: bars coloured by limiter, a strip below in the block colour (with
    a key), every bar labelled with its block (and folding, and domain when the ranking has several).

    ``top``: the best ``top`` configurations are shown (default :data:`RANKING_TOP`; the title then says
    "best N of M shown"); ``None`` shows all of them (the figure widens with their number). ``reference``:
    a ranked result to mark, such as a code generator's default block (``ranking.reference_estimate``), named
    ``reference_label`` (None: the kernel-file front end's label): its bar is hatched, or, when it is not among
    the bars shown, a dashed line marks its performance.
    """
    if top is not None and top < 1:
        raise InputError(f"ranking plot: top must be at least 1 (or None for all), got {top}.")
    results = list(ranking.results)[:top]
    if not results:
        raise InputError("the ranking is empty: nothing to plot.")
    n, total = len(results), len(ranking.results)
    fig = new_figure(max(7.5, 0.16 * n + 2), 5.6)
    ax, strip = fig.subplots(2, 1, sharex=True, height_ratios=[12, 1])
    xs = range(n)
    ax.bar(xs, [r.performance_GLup_s for r in results], color=[limiter_color(r.limiter) for r in results],
           width=0.85)
    strip.bar(xs, [1] * n, color=[block_color(r.configuration.block) for r in results], width=1.0)
    strip.set_yticks([])
    strip.set_ylabel("block", rotation=0, ha="right", va="center", fontsize=8)
    ax.set_ylabel("performance (GLup/s)")
    shown = f"best {n} of {total} configurations shown" if n < total else f"all {total} configurations"
    ax.set_title(f"{ranking.kernel} on {ranking.device}: {shown}", fontsize=10)
    from matplotlib.patches import Patch
    present = [k for k in limiter_names(r.limiter for r in results) if any(r.limiter == k for r in results)]
    handles = [Patch(color=limiter_color(k), label=f"{k}-bound") for k in present]
    if any(r.error for r in results):
        handles.append(Patch(color=LIMITER_COLORS[None], label="cannot launch"))
    if reference is not None and not reference.error:
        from ..file_frontend import kernel_files

        name = reference_label if reference_label is not None else kernel_files().reference.label
        label = f"{name} {ranking_label(reference)}: {reference.performance_GLup_s:.3g} GLup/s"
        at = next((i for i, r in enumerate(results) if r.configuration == reference.configuration), None)
        if at is not None:
            ax.bar([at], [reference.performance_GLup_s], width=0.85, fill=False, hatch="//", edgecolor="black")
            handles.append(Patch(facecolor="white", edgecolor="black", hatch="//", label=label))
        else:
            from matplotlib.lines import Line2D

            ax.axhline(reference.performance_GLup_s, color="black", lw=1, ls="--")
            handles.append(Line2D([], [], color="black", lw=1, ls="--", label=label + " (not shown)"))
    fig.legend(handles=handles, fontsize=8, loc="outside right upper", frameon=False)  # beside: no bar hidden
    fig.legend(handles=[Patch(color=block_color(b), label=text) for b, text in _BLOCK_KEY], fontsize=7,
               loc="outside right lower", title="strip: block colour", title_fontsize=7, frameon=False)
    ax.grid(True, axis="y", alpha=0.3)
    ax.tick_params(axis="x", bottom=False)
    several_domains = len({r.configuration.domain for r in results}) > 1
    strip.set_xticks(list(xs))
    strip.set_xticklabels([ranking_label(r, domain=several_domains) for r in results], rotation=90, fontsize=7)
    strip.set_xlabel("configuration, best first (block XxYxZ" + (", domain" if several_domains else "")
                     + ", folding fXxYxZ when not 1x1x1)", fontsize=8)
    strip.set_xlim(-0.5, n - 0.5)
    return fig


_BLOCK_KEY = (((256, 1, 1), "wide in x"), ((1, 256, 1), "long in y"), ((1, 1, 64), "deep in z"),
              ((16, 16, 4), "mixed"))


def ranking_label(result, *, domain: bool = False) -> str:
    """The tick label of one ranked configuration: ``32x8x4``, ``32x8x4 f1x2x1``, with ``domain``
    ``32x8x4 @640x512x512``."""
    c = result.configuration
    text = c.label
    if domain and c.domain:
        text += " @" + "x".join(map(str, c.domain))
    return text


# ----------------------------------------------------------------------------------------------- what-if


def device_value(dev: Device, key: str) -> float | None:
    """The value of the numeric device key ``key`` (``"l2_size"``, ``"dram_bw"``, ...) on ``dev``, in the key's
    canonical unit (bytes, GB/s, GHz, seconds, a count); ``None`` where the device leaves it unset."""
    from ..device import KEY_ATTRIBUTES, override_kind

    override_kind(key)  # an unknown or non-numeric key is an InputError
    value = getattr(dev, KEY_ATTRIBUTES[key])
    return None if value is None else float(value)


def _geometric(values: Sequence[float]) -> bool:
    """Three or more positive values with a constant ratio (a ``:log`` sweep; counts and bytes are rounded)."""
    if len(values) < 3 or min(values) <= 0 or _evenly_spaced(values):
        return False
    ratios = [b / a for a, b in zip(values, values[1:], strict=False)]
    return all(r > 1.0 for r in ratios) and all(math.isclose(r, ratios[0], rel_tol=0.05) for r in ratios)


def whatif_plot(points, *, kind: str | None = None, log: bool | None = None,
                reference: Device | str | None = None):
    """Best GLup/s over the swept value (markers coloured by limiter) and DRAM B/lup on a second axis.

    ``log``: a logarithmic value axis; by default when the values are geometrically spaced (a ``:log``
    sweep) or span more than a factor 20 without being evenly spaced. ``reference``: the real device (or its
    id), whose value of the swept key is marked by a vertical line; by default the device the points' ids
    name without their ``+key=value`` suffixes, when it loads.
    """
    from ..device import override_kind
    from ..units import format_quantity

    if not points:
        raise InputError("the what-if sweep has no points: nothing to plot.")
    key = points[0].key
    kind = kind or override_kind(key)
    scale, unit = {"bytes": (2**20, "MiB"), "bandwidth": (1.0, "GB/s"), "frequency": (1.0, "GHz"),
                   "time": (1e-9, "ns")}.get(kind, (1.0, ""))
    xs = [p.value / scale for p in points]
    perf = [p.best.performance_GLup_s for p in points]
    dram = [None if p.best.error else level("DRAM").traffic_B_per_lup(p.best.estimate.volumes_B_per_lup)
            for p in points]
    fig = new_figure()
    ax = fig.add_subplot()
    ax.plot(xs, perf, color="0.3", lw=1, zorder=1)
    ax.scatter(xs, perf, c=[limiter_color(p.best.limiter) for p in points], s=50, edgecolor="black", zorder=2)
    ax2 = ax.twinx()
    ax2.plot(xs, [d if d is not None else math.nan for d in dram], color="tab:purple", ls="--", marker="x",
             label="DRAM volume of the best")
    ax2.set_ylabel("DRAM volume (B/lup)", color="tab:purple")
    ax2.set_ylim(bottom=0)
    ax.set_ylim(0, 1.15 * max(perf + [1e-9]))  # room for the block labels
    ax.set_xlabel(f"{key}" + (f" ({unit})" if unit else ""))
    ax.set_ylabel("best performance (GLup/s)")
    values = sorted(set(xs))
    if log is None:
        ratio = max(xs) / min(xs) if min(xs) > 0 else 1
        log = _geometric(values) or (ratio > 20 and not _evenly_spaced(values))
    if log:
        if min(xs) <= 0:
            raise InputError(f"what-if plot: a log axis needs positive values of {key}.")
        _log_value_axis(ax, values)
    real = _reference_value(points, key, reference)
    if real is not None:
        name, value = real
        x = value / scale
        ax.axvline(x, color="black", ls=":", lw=1.2, zorder=0)  # named in the legend: no text over the data
    for p, x, y in zip(points, xs, perf, strict=True):
        if not p.best.error:
            ax.annotate(p.best.configuration.label, (x, y),
                        textcoords="offset points", xytext=(0, 7), ha="center", fontsize=6)
    from matplotlib.lines import Line2D
    present = [k for k in limiter_names(p.best.limiter for p in points) if any(p.best.limiter == k for p in points)]
    handles = [Line2D([], [], marker="o", ls="", color=limiter_color(k), markeredgecolor="black",
                      label=f"{k}-bound") for k in present]
    handles.append(Line2D([], [], color="tab:purple", ls="--", marker="x", label="DRAM volume of the best"))
    if real is not None:
        handles.append(Line2D([], [], color="black", ls=":", lw=1.2,
                              label=f"{real[0]} as it is: {key} = {format_quantity(real[1], kind)}"))
    ax.legend(handles=handles, fontsize=8, loc="lower right")
    ax.grid(True, alpha=0.3)
    first = points[0]
    ax.set_title(f"what if {key} were {format_quantity(first.value, kind)} ... "
                 f"{format_quantity(points[-1].value, kind)} ({first.device.split('+')[0]})", fontsize=10)
    return fig


def _evenly_spaced(values: Sequence[float]) -> bool:
    steps = [b - a for a, b in zip(values, values[1:], strict=False)]
    return len(values) >= 3 and all(math.isclose(d, steps[0], rel_tol=0.02) for d in steps)


def _log_value_axis(ax, values: Sequence[float]) -> None:
    """Log x axis labelled in plain numbers: at the swept values when they are few, else at :func:`log_ticks`."""
    ax.set_xscale("log")
    plain_log_ticks(ax.xaxis, list(values) if len(values) <= 8 else log_ticks(min(values), max(values), 8),
                    digits=3)


_LOG_SUBS = ((1.0,), (1.0, 2.0, 5.0), (1.0, 1.5, 2.0, 3.0, 5.0, 7.0),
             (1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0))


def log_ticks(lo: float, hi: float, most: int = 6) -> list[float]:
    """Major ticks of a log axis from ``lo`` to ``hi`` that leave room for plain-number labels: the densest of
    10^k x (1), (1, 2, 5), (1, 1.5, 2, 3, 5, 7), (1, 1.2, 1.5, 2, 2.5, 3, 4, ..., 8) with at most ``most`` ticks
    in the range; every n-th decade where even the decades are too many."""
    if not 0 < lo <= hi:
        raise ValueError(f"log_ticks needs 0 < lo <= hi, got {lo}, {hi}")
    first, last = math.floor(math.log10(lo)), math.floor(math.log10(hi))
    chosen: list[float] = []
    for subs in _LOG_SUBS:
        ticks = [float(f"{m * 10.0**k:.6g}") for k in range(first, last + 1) for m in subs]
        ticks = [t for t in ticks if lo * (1 - 1e-9) <= t <= hi * (1 + 1e-9)]
        if len(ticks) > most:
            break
        chosen = ticks
    if not chosen or len(chosen) > most:  # more decades than labels: every step-th decade
        decades = list(range(math.ceil(math.log10(lo) - 1e-9), last + 1))
        step = max(1, math.ceil(len(decades) / most))
        chosen = [10.0**k for k in decades[::step]]
    return chosen


def plain_log_ticks(axis, ticks: Sequence[float], digits: int | None = None) -> None:
    """Major ticks of a log ``axis`` at ``ticks``, labelled as plain numbers (no 10^k, no minor labels)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullFormatter

    axis.set_major_locator(FixedLocator(list(ticks)))
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:.{digits}g}" if digits else f"{v:g}"))
    axis.set_minor_formatter(NullFormatter())


def _reference_value(points, key: str, reference) -> tuple[str, float] | None:
    """(device id, value of ``key``) of the real device; ``None`` when it is unknown or has no value."""
    if reference is None:
        try:
            reference = get_device(points[0].device.split("+")[0])
        except InputError:
            return None  # e.g. a device file's own id: the caller can pass the device
    dev = reference if isinstance(reference, Device) else get_device(reference)
    value = device_value(dev, key)
    return None if value is None else (dev.id, value)


# ----------------------------------------------------------------------------------------------- projection


def _limit(value) -> float | None:
    """A limiter's GLup/s, or ``None`` where it does not limit (absent, ``None``, infinite, not positive)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) and value > 0 else None


def value_format(values: Sequence[float]):
    """One number format for all ``values`` (bar labels): thousands separators and as many decimals as the
    largest needs for three significant digits (1,218 / 294 / 85.7 -> "1,218", "294", "86")."""
    top = max((abs(v) for v in values if v and math.isfinite(v)), default=1.0)
    decimals = max(0, 2 - math.floor(math.log10(top)))
    return lambda v: f"{v:,.{decimals}f}"


LOG_RATIO = 20
"""A projection chart whose largest bar is more than this many times its smallest uses a log axis."""


def projection_plot(projection, measured=None):
    """Per-limiter GLup/s of both devices at their best configurations (the bound one hatched), the two
    predictions, and the measured-source interval when given. A limiter that does not limit a device (the FP
    limit of a kernel without flops: ``None`` or infinite) gets no bar but a "no limit" note; one the device
    does not model (no L2 request rate) a "not modelled here" note. Bars spanning more than
    :data:`LOG_RATIO` are drawn on a log axis."""
    import numpy as np

    s, t = projection.source_best.estimate, projection.target_best.estimate
    limits = {key: {k: _limit(v) for k, v in e.limits_GLup_s.items()} for key, e in (("s", s), ("t", t))}
    keys = limiter_names(k for lim in limits.values() for k in lim)
    fig = new_figure(8.5, 4.8)
    ax = fig.add_subplot()
    labels = list(keys) + ["predicted"]
    x = np.arange(len(labels))
    width = 0.38
    finite = [v for lim in limits.values() for v in lim.values() if v is not None]
    shown = [v for v in finite + [s.performance_GLup_s, t.performance_GLup_s] if v > 0]
    top = 1.25 * max(shown)
    log = max(shown) / min(shown) > LOG_RATIO  # tall L1 bars must not flatten the DRAM bars that decide
    bottom = min(shown) / 2 if log else 0.0
    fmt = value_format(shown)
    for off, d, lim, dev, color in ((-width / 2, s, limits["s"], projection.source.id, "tab:gray"),
                                    (width / 2, t, limits["t"], projection.target.id, "tab:cyan")):
        vals = [lim.get(k) for k in keys] + [d.performance_GLup_s]
        drawn = [i for i, v in enumerate(vals) if v is not None]
        bars = ax.bar(x[drawn] + off, [vals[i] for i in drawn], width, color=color, edgecolor="black",
                      label=f"{dev} (block {_label(d.block, d.folding)})")
        for i, b in zip(drawn, bars, strict=True):
            if i < len(keys) and keys[i] == d.limiter:
                b.set_hatch("//")
            ax.annotate(fmt(vals[i]), (b.get_x() + b.get_width() / 2, vals[i]), textcoords="offset points",
                        xytext=(0, 2), ha="center", fontsize=7)
        for i, v in enumerate(vals):
            if v is None:  # no bar: a 0 would read as "limits to zero"
                why = "no limit (\u221e)" if i >= len(keys) or keys[i] in lim else "not modelled here"
                ax.annotate(why, (x[i] + off, bottom * 1.15 if log else 0.02 * top), ha="center", va="bottom",
                            rotation=90, fontsize=8, color="0.25")
    if measured is not None:
        md = measured.to_dict()
        lo, hi = md.get("interval_GLup_s", md["interval"])
        xm = len(labels) - 1 + width / 2
        ax.errorbar([xm], [(lo + hi) / 2], yerr=[[(lo + hi) / 2 - lo], [hi - (lo + hi) / 2]], fmt="D",
                    color="black", capsize=6, label=f"{measured.mode} projection of the measured run")
        top = max(top, 1.1 * hi)
    if log:
        ax.set_yscale("log")
        ax.set_ylim(bottom, top * 1.6)
        plain_log_ticks(ax.yaxis, log_ticks(bottom, top * 1.6, most=8))
    else:
        ax.set_ylim(0, top)
    ax.set_xlim(-0.6, len(labels) - 0.4)  # groups without bars (no limit) stay on the chart
    ax.set_xticks(x)
    ax.set_xticklabels([f"{k} limit" for k in keys] + ["predicted"])
    ax.set_ylabel("performance (GLup/s, log scale)" if log else "performance (GLup/s)")
    ax.set_title(f"{projection.kernel}: {projection.target.id} / {projection.source.id} = "
                 f"{projection.speedup:.2f}x (hatched: the binding limiter)", fontsize=10)
    ax.legend(fontsize=8, loc="best")
    ax.grid(True, axis="y", alpha=0.3)
    return fig


def devices_plot(result):
    """Which GPU for a kernel (a :class:`~warpspeed.studies.device_ranking.DeviceRanking`): one horizontal bar per
    device, fastest on top, its length the best configuration's GLup/s, coloured by limiter, labelled with the
    factor to the fastest and the best block. A device whose family's model data was not measured here is
    hatched (a first estimate); one that cannot run the kernel has no bar, its reason in its place."""
    devices = list(result.devices)
    if not devices:
        raise InputError("the device ranking is empty: nothing to plot.")
    from matplotlib.patches import Patch

    n = len(devices)
    fig = new_figure(9.0, max(3.0, 0.32 * n + 1.6))
    ax = fig.add_subplot()
    ys = list(range(n))[::-1]  # the fastest on top
    top = max((d.performance_GLup_s for d in devices), default=0.0) or 1.0
    for y, d in zip(ys, devices, strict=True):
        if not d.runs:
            ax.annotate(f"cannot run: {d.reason}"[:110], (0.01 * top, y), va="center", fontsize=7, color="0.3")
            continue
        ax.barh([y], [d.performance_GLup_s], color=limiter_color(d.limiter), height=0.75,
                hatch=None if d.family.measured else "//", edgecolor="white" if d.family.measured else "0.15",
                linewidth=0.5)
        ax.annotate(f" {d.performance_GLup_s:.3g}  x{d.factor:.2f}  {d.best.configuration.label}",
                    (d.performance_GLup_s, y), va="center", fontsize=7)
    ax.set_yticks(ys)
    ax.set_yticklabels([d.device.id for d in devices], fontsize=8)
    ax.set_xlim(0, 1.35 * top)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlabel("performance at the best configuration (GLup/s); label: GLup/s, x fastest's time, best block")
    dom = "x".join(map(str, result.domain))
    ax.set_title(f"{result.kernel} ({dom} cells, {result.model} model) on {n} devices", fontsize=10)
    running = [d for d in devices if d.runs]
    present = [k for k in limiter_names(d.limiter for d in running) if any(d.limiter == k for d in running)]
    handles = [Patch(color=limiter_color(k), label=f"{k}-bound") for k in present]
    handles.append(Patch(facecolor="white", edgecolor="0.15", hatch="//",
                         label="model data not measured on\nthis family (first estimate)"))
    fig.legend(handles=handles, fontsize=8, loc="outside right upper", frameon=False)
    ax.grid(True, axis="x", alpha=0.3)
    return fig


# ----------------------------------------------------------------------------- measurements against the model
def _panel_grid(n: int) -> tuple[int, int]:
    """(rows, columns) for n panels, 3 or 4 columns, whichever leaves fewer empty slots (3 on a tie)."""
    if n <= 3:
        return 1, n
    cols = min((3, 4), key=lambda c: (math.ceil(n / c) * c - n, c))
    return math.ceil(n / cols), cols


def validation_plot(reports: Sequence[GroupReport]):
    """Predicted vs measured per level (GLup/s and each measured volume), log-log with the y = x line and a
    shaded +-10 % band; each panel's title gives the median error and the share within 10 %, the figure's
    title the groups, one legend for the figure."""
    keys = ["GLup_s"] + [k for k in (*VOLUME_COLUMNS, L1_CYCLES) if any(k in r.volume_errors for r in reports)]
    rows, cols = _panel_grid(len(keys))
    fig = new_figure(4.0 * cols, 3.6 * rows + 0.6)
    axes = fig.subplots(rows, cols, squeeze=False).ravel()
    for ax, key in zip(axes, keys, strict=False):
        lo, hi = math.inf, 0.0
        errors: list[float] = []
        for r in reports:
            pts = [(p.measured.GLup_s, p.estimate.performance_GLup_s) if key == "GLup_s" else
                   (measured_value(p, key), predicted_value(p, key)) for p in r.pairs]
            pts = [(m, e) for m, e in pts if m is not None and m > 0 and e > 0]
            if not pts:
                continue
            m, e = zip(*pts, strict=True)
            ax.scatter(m, e, s=14, alpha=0.8, label=r.title, zorder=3)
            errors += [abs(b / a - 1) for a, b in pts]
            lo, hi = min(lo, *m, *e), max(hi, *m, *e)
        if hi > 0:
            lims = (lo * 0.8, hi * 1.25)
            ax.fill_between(lims, [v * (1 - WITHIN) for v in lims], [v * (1 + WITHIN) for v in lims], color="0.5",
                            alpha=0.15, lw=0, label=f"within {100 * WITHIN:.0f} %", zorder=1)
            ax.plot(lims, lims, color="0.4", lw=1, ls="--", label="predicted = measured", zorder=2)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlim(*lims)  # the same range on both axes: y = x is the diagonal
            ax.set_ylim(*lims)
            ticks = log_ticks(*lims, most=6)  # plain numbers, at most 6 per axis: labels never collide
            for axis in (ax.xaxis, ax.yaxis):
                plain_log_ticks(axis, ticks)
        unit = {"GLup_s": "GLup/s", L1_CYCLES: "cycles/warp-lup"}.get(key, "B/lup")
        title = {"GLup_s": "performance", L1_CYCLES: "L1 cycles"}.get(key, key)
        if errors:
            within = 100 * sum(e <= WITHIN + 1e-12 for e in errors) / len(errors)
            title += (f"\nmedian |err| {100 * statistics.median(errors):.1f} %, {within:.0f} % within "
                      f"{100 * WITHIN:.0f} %")
        ax.set_title(title, fontsize=9)
        ax.set_xlabel(f"measured ({unit})")
        ax.set_ylabel(f"predicted ({unit})")
        ax.grid(True, which="both", alpha=0.3)
    for ax in axes[len(keys):]:
        ax.remove()
    n = sum(len(r.pairs) for r in reports)
    fig.suptitle(f"predicted vs measured: {n} configurations, "
                 + "; ".join(r.title for r in reports[:3]) + (" ..." if len(reports) > 3 else ""), fontsize=10)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=min(4, len(labels)), fontsize=8)
    return fig


def calibration_plot(cal: Calibration):
    """Observed hit rates over O per curve with the old and the fitted curve."""
    import numpy as np

    fig = new_figure(11, 3.4)
    axes = fig.subplots(1, len(cal.fits), squeeze=False).ravel()
    for ax, f in zip(axes, cal.fits, strict=True):
        pts = np.array(f.points) if f.points else np.zeros((0, 2))
        top = max([3.0] + ([float(pts[:, 0].max()) * 1.1] if len(pts) else []))
        xs = np.linspace(0, top, 200)
        if len(pts):
            ax.scatter(pts[:, 0], pts[:, 1], s=12, color="tab:blue", label="observed")
        ax.plot(xs, [f.old(x) for x in xs], color="0.5", ls="--", label="before")
        if f.fitted is not None:  # solid where observations support the fit, dotted beyond them
            lo, hi = (float(pts[:, 0].min()), float(pts[:, 0].max())) if len(pts) else (0.0, 0.0)
            inside = [lo, *xs[(xs > lo) & (xs < hi)], hi]
            if hi > lo:
                ax.plot(inside, [f.fitted(x) for x in inside], color="tab:red", label="fitted")
            for part in ([*xs[xs < lo], lo], [hi, *xs[xs > hi]]):
                if len(part) > 1:
                    ax.plot(part, [f.fitted(x) for x in part], color="tab:red", ls=":", lw=1)
            ax.plot([], [], color="tab:red", ls=":", lw=1, label="fitted, beyond the data")
        ax.set_title(f"{f.curve} ({len(f.points)} points)", fontsize=10)
        ax.set_xlabel("oversubscription O")
        ax.set_ylabel("hit rate of the reusable volume")
        ax.set_ylim(-0.05, 1.05)
        ax.grid(True, alpha=0.3)
    axes[0].legend(fontsize=7)
    return fig

