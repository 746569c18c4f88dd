"""Plots: the figure objects carry the right data (points, roofs, colours, labels), and the CLI writes files."""

import pytest

import warpspeed
from warpspeed.errors import InputError
from warpspeed.interface.cli import main
from warpspeed.measurement.measured import Traffic, estimated_traffic, measured_run, project_measured

pytest.importorskip("matplotlib")
from matplotlib.colors import to_rgba  # noqa: E402

from warpspeed.application.projection import project  # noqa: E402
from warpspeed.application.whatif import whatif  # noqa: E402
from warpspeed.render import plots  # noqa: E402

A100 = warpspeed.device("A100-SXM4-40GB")
SMALL = (256, 128, 64)


def _scatter_points(ax):
    return [tuple(c.get_offsets()[0]) for c in ax.collections if len(c.get_offsets()) == 1]


def test_block_colour_code_of_the_paper():
    assert plots.block_color((256, 1, 1)) == (1.0, 0.0, 0.0)  # wide: red
    assert plots.block_color((1, 256, 1)) == (0.0, 1.0, 0.0)  # tall: green
    assert plots.block_color((1, 1, 64)) == (0.0, 0.0, 1.0)  # deep: blue
    assert plots.block_color((16, 16, 8)) == pytest.approx((0.5, 0.5, 0.5))  # cube: grey
    assert plots.block_color((1024, 1, 1))[0] == 1.0  # clipped


def test_roofline_points_sit_where_the_limiters_say():
    k = warpspeed.find_kernel("star3d-r4", domain=SMALL)
    e = warpspeed.estimate(k, A100, (32, 4, 8))
    fig = plots.roofline_plot(e, flops_per_lup=k.flops.total)
    ax = fig.axes[0]
    assert ax.get_xscale() == ax.get_yscale() == "log"
    assert "FLOP/B" in ax.get_xlabel() and "GFLOP/s" in ax.get_ylabel()
    pts = _scatter_points(ax)
    assert len(pts) == 3  # one point per level
    d = e.to_dict()
    bytes_ = plots.level_bytes_per_lup(d, A100)
    bw = {"L1": 108 * 1.41 * 128, "L2": A100.l2_bw_GB_s, "DRAM": A100.dram_bw_GB_s}
    for (x, y), level in zip(pts, ("L1", "L2", "DRAM"), strict=True):
        assert x == pytest.approx(k.flops.total / bytes_[level])
        assert y == pytest.approx(e.performance_GLup_s * k.flops.total)
        # the roof at the point's intensity is that level's limiter
        assert x * bw[level] == pytest.approx(e.limiters_GLup_s[level] * k.flops.total, rel=1e-9)
    labels = [t.get_label() for t in ax.get_lines()]
    assert sum("roof" in s for s in labels) == 3 and any("FP ceiling" in s for s in labels)
    fp = [ln for ln in ax.get_lines() if "FP ceiling" in ln.get_label()][0]
    assert fp.get_ydata()[0] == pytest.approx(e.limiters_GLup_s["FP"] * k.flops.total)
    assert "flop mix" in fp.get_label() and "not the spec peak" in fp.get_label()  # the kernel's ceiling
    assert any(t.get_text().startswith("ridge") for t in ax.texts)


def test_roofline_without_flops_uses_lups_and_has_no_fp_roof():
    e = warpspeed.estimate("copy", A100, (256, 1, 1), domain=SMALL)
    ax = plots.roofline_plot(e).axes[0]
    assert "lup/B" in ax.get_xlabel()
    assert not any("FP" in ln.get_label() for ln in ax.get_lines())
    assert [x for x, _ in _scatter_points(ax)] == pytest.approx([1 / 16] * 3)


def test_ranking_chart_bars_colours_and_strip():
    r = warpspeed.rank("star3d-r1", A100, threads=(256,), domain=SMALL, jobs=1)
    fig = plots.ranking_plot(r, top=None)
    ax, strip = fig.axes
    bars = ax.patches
    assert len(bars) == len(r.results) == len(strip.patches)
    assert [b.get_height() for b in bars] == pytest.approx([x.performance_GLup_s for x in r.results])
    for b, s, res in zip(bars, strip.patches, r.results, strict=True):
        assert b.get_facecolor() == to_rgba(plots.LIMITER_COLORS[res.limiter])
        assert s.get_facecolor()[:3] == pytest.approx(plots.block_color(res.configuration.block))
    assert ax.get_ylabel() == "performance (GLup/s)"
    assert [t.get_text() for t in strip.get_xticklabels()][0] == "x".join(map(str, r.best.configuration.block))
    assert len(plots.ranking_plot(r, top=5).axes[0].patches) == 5


def test_whatif_curve_has_one_point_per_value():
    pts = whatif("copy", A100, "dram_bw", [1000.0, 2000.0, 4000.0], threads=(256,), domain=SMALL, jobs=1,
                 model="roofline")
    ax = plots.whatif_plot(pts).axes[0]
    xs, ys = (list(map(float, v)) for v in ax.collections[0].get_offsets().T)
    assert list(xs) == [1000.0, 2000.0, 4000.0]
    assert ys == pytest.approx([p.best.performance_GLup_s for p in pts])
    assert ys[2] == pytest.approx(4 * ys[0])  # in the roofline, DRAM-bound copy scales with the bandwidth
    assert "dram_bw (GB/s)" == ax.get_xlabel() and "GLup/s" in ax.get_ylabel()


def test_projection_bars_and_measured_interval():
    k = warpspeed.find_kernel("copy", domain=SMALL)
    p = project(k, A100, "H100-SXM5-80GB", threads=(256,), jobs=1, model="roofline")
    lups = k.valid_lups
    m = project_measured(measured_run(lups, time_s=lups / 70e9, traffic=Traffic(16.0 * lups, 16.0 * lups,
                                                                                 16.0 * lups)),
                         p.source, p.target,
                         target_traffic=estimated_traffic(p.target_best.estimate.volumes_B_per_lup, lups))
    ax = plots.projection_plot(p, m).axes[0]
    heights = [b.get_height() for b in ax.patches]
    assert len(heights) == 8  # (3 finite limiters + predicted) x 2 devices: copy's FP limit is infinite
    assert heights[3] == pytest.approx(p.source_best.performance_GLup_s)
    assert heights[7] == pytest.approx(p.target_best.performance_GLup_s)
    assert sum(1 for b in ax.patches if b.get_hatch() == "//") == 2  # the binding limiter of each device
    assert len(ax.containers) == 3  # two bar groups and the measured error bar
    # roofline, DRAM-bound copy on both: the speedup is the ratio of the bandwidths
    ratio = warpspeed.device("H100-SXM5-80GB").dram_bw_GB_s / A100.dram_bw_GB_s
    assert f"{ratio:.2f}x" in ax.get_title()


def test_save_formats_and_cli(tmp_path, capsys):
    fig = plots.roofline_plot(warpspeed.estimate("copy", A100, (256, 1, 1), domain=SMALL))
    for ext in ("png", "svg", "pdf"):
        out = plots.save(fig, tmp_path / f"r.{ext}")
        assert out.stat().st_size > 1000
    assert (tmp_path / "r.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(InputError, match=".png, .svg or .pdf"):
        plots.save(fig, tmp_path / "r.jpg")
    target = tmp_path / "rank.png"
    code = main(["plot", "ranking", "copy", "--device", "A100-SXM4-40GB", "--threads", "256", "--domain",
                 "256,128,64", "--jobs", "1", "-o", str(target)])
    assert code == 0 and target.read_bytes()[:4] == b"\x89PNG"
    code = main(["plot", "roofline", "copy", "--device", "A100-SXM4-40GB", "--block", "256,1,1", "-o",
                 str(tmp_path / "x.gif")])
    assert code == 2 and ".png" in capsys.readouterr().err


def test_latency_model_plots_show_the_latency_limit():
    """A what-if over the DRAM latency (ns axis, latency-bound points in the legend) and a projection with the
    latency model's limits (the request limit only on the device that has it)."""
    h100 = warpspeed.device("H100-SXM5-80GB")
    pts = whatif("copy", h100, "dram_latency", [2e-7, 8e-7, 3.2e-6], threads=(256,), domain=(1 << 22, 1, 1),
                 registers=255, jobs=1)
    ax = plots.whatif_plot(pts).axes[0]
    assert ax.get_xlabel() == "dram_latency (ns)"
    xs = [float(x) for x in ax.collections[0].get_offsets()[:, 0]]
    assert xs == pytest.approx([200.0, 800.0, 3200.0])
    assert "latency-bound" in [t.get_text() for t in ax.get_legend().get_texts()]
    p = project("copy", A100, h100, threads=(256,), domain=SMALL, jobs=1, registers=255)
    ax = plots.projection_plot(p).axes[0]
    assert [t.get_text() for t in ax.get_xticklabels()][-3:] == ["latency limit", "L2req limit", "predicted"]
    # copy has no FP limit; the A100 has no L2 request rate: (4 + 1) bars for it, (5 + 1) for the H100
    assert len(ax.patches) == 11


def test_ranking_chart_shows_the_best_n_labelled_by_default():
    """More configurations than RANKING_TOP: the best 40 are drawn, the title says so, every bar is labelled
    with its block (and its folding when it has one)."""
    r = warpspeed.rank("star3d-r1", A100, threads=(256,), folding=[(1, 1, 1), (1, 2, 1)], domain=SMALL, jobs=1)
    assert len(r.results) > plots.RANKING_TOP
    ax, strip = plots.ranking_plot(r).axes
    assert len(ax.patches) == plots.RANKING_TOP
    assert f"best {plots.RANKING_TOP} of {len(r.results)} configurations shown" in ax.get_title()
    labels = [t.get_text() for t in strip.get_xticklabels()]
    assert labels == [plots.ranking_label(x) for x in r.results[: plots.RANKING_TOP]]
    assert len(set(labels)) == len(labels)  # a label tells the configurations apart
    folded = next(x for x in r.results if x.configuration.folding != (1, 1, 1))
    assert plots.ranking_label(folded).endswith(" f" + "x".join(map(str, folded.configuration.folding)))
    assert "all" in plots.ranking_plot(r, top=None).axes[0].get_title()
    with pytest.raises(InputError, match="at least 1"):
        plots.ranking_plot(r, top=0)


def test_cli_plot_ranking_top(tmp_path, capsys):
    args = ["plot", "ranking", "copy", "--device", "A100-SXM4-40GB", "--threads", "256", "--domain", "256,128,64",
            "--jobs", "1", "-o", str(tmp_path / "r.png")]
    assert main([*args, "--top", "all"]) == 0
    assert main([*args, "--top", "0"]) == 2 and "at least 1" in capsys.readouterr().err


def test_whatif_log_sweep_gets_a_log_axis_and_the_real_device_marked():
    from warpspeed.application.whatif import sweep_values
    key, values = sweep_values("l2_size=10MiB:160MiB:5:log")
    pts = whatif("star3d-r1", A100, key, values, threads=(256,), domain=SMALL, jobs=1, model="roofline")
    ax = plots.whatif_plot(pts).axes[0]
    assert ax.get_xscale() == "log"
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert all("^" not in t for t in labels) and "10" in labels  # plain MiB numbers at the swept values
    marker = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":"]
    assert len(marker) == 1 and marker[0].get_xdata()[0] == pytest.approx(40.0)  # A100's 40 MiB of L2
    assert "A100-SXM4-40GB as it is: l2_size = 40 MiB" in [t.get_text() for t in ax.get_legend().get_texts()]
    ax.figure.canvas.draw()  # the configuration labels: none covers another, and no device label over them
    boxes = [t.get_window_extent() for t in ax.texts]
    assert len(boxes) == len(pts) and not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    # an evenly spaced sweep stays linear; log=False forces it
    lin = whatif("copy", A100, "dram_bw", [1000.0, 2000.0, 3000.0], threads=(256,), domain=SMALL, jobs=1,
                 model="roofline")
    assert plots.whatif_plot(lin).axes[0].get_xscale() == "linear"
    assert plots.whatif_plot(pts, log=False).axes[0].get_xscale() == "linear"


def test_projection_draws_no_bar_for_a_limit_that_does_not_limit():
    """copy has no flops: its FP limit is infinite, so the FP group has no bars (never a 0 bar) but a note;
    all bar labels share one number format."""
    p = project("copy", A100, "H100-SXM5-80GB", threads=(256,), domain=SMALL, jobs=1, model="roofline")
    ax = plots.projection_plot(p).axes[0]
    assert len(ax.patches) == 8  # (3 finite limits + predicted) x 2 devices
    assert min(b.get_height() for b in ax.patches) > 0
    notes = [t.get_text() for t in ax.texts if "no limit" in t.get_text()]
    assert len(notes) == 2
    values = [t.get_text() for t in ax.texts if "no limit" not in t.get_text()]
    decimals = {len(v.partition(".")[2]) for v in values}
    assert len(values) == 8 and len(decimals) == 1  # one format for all labels
    assert [t.get_text() for t in ax.get_xticklabels()][0] == "FP limit"


def test_value_format_and_log_ticks():
    fmt = plots.value_format([1218.4, 294.2, 85.7])
    assert [fmt(v) for v in (1218.4, 294.2, 85.7)] == ["1,218", "294", "86"]
    assert plots.value_format([3.14159, 0.5])(3.14159) == "3.14"
    assert plots.log_ticks(1, 1000, most=6) == [1.0, 10.0, 100.0, 1000.0]
    assert plots.log_ticks(1, 10, most=6) == [1.0, 2.0, 5.0, 10.0]
    assert len(plots.log_ticks(1e-3, 1e9, most=6)) <= 6
    with pytest.raises(ValueError):
        plots.log_ticks(0, 1)


def test_a_models_own_limit_flows_through_counts_table_and_plot():
    """A limiter none of the consumers names (a future model's or level's, here "TLB") is counted, shown as a
    column and coloured, after the roofline's four: adding a limit needs no change to them."""
    from dataclasses import replace

    from warpspeed.render.report import ranking_table
    from warpspeed.studies.ranking import Ranking

    r = warpspeed.rank("star3d-r1", A100, threads=(256,), domain=SMALL, jobs=1)
    results = []
    for i, res in enumerate(r.results[:4]):
        e = res.estimate
        perf = replace(e.performance, limits_GLup_s={**e.performance.limits_GLup_s, "TLB": 1.5},
                       limiter="TLB" if i % 2 else e.performance.limiter)
        results.append(replace(res, estimate=replace(e, performance=perf)))
    ranking = Ranking(r.kernel, r.device, tuple(results))
    assert list(ranking.limiter_counts)[-2:] == ["TLB", "error"] and ranking.limiter_counts["TLB"] == 2
    table = ranking_table(ranking)
    assert " DRAM latency TLB DRAM B/lup " in " ".join(table.splitlines()[0].split()) + " "
    assert "TLB: 2" in table.splitlines()[-1]
    fig = plots.ranking_plot(ranking)
    colours = {to_rgba(plots.limiter_color(x.limiter)) for x in results}
    assert {b.get_facecolor() for b in fig.axes[0].patches} == colours and len(colours) == 2
    assert "TLB-bound" in [t.get_text() for t in fig.legends[0].get_texts()]
    assert plots.limiter_color("TLB") not in plots.LIMITER_COLORS.values()


def test_ranking_chart_marks_pystencils_default_and_keys_the_strip():
    from warpspeed.application.ranking import reference_estimate

    r = warpspeed.rank("star3d-r1", A100, threads=(256,), domain=SMALL, jobs=1)
    ref = reference_estimate(r, "star3d-r1", A100, domain=SMALL)
    assert ref.configuration.block == (8, 8, 4) and ref in r.results  # 256 threads: among the bars
    fig = plots.ranking_plot(r, top=None, reference=ref)
    ax = fig.axes[0]
    at = r.results.index(ref)
    hatched = [p for p in ax.patches if p.get_hatch() == "//"]
    assert len(hatched) == 1 and hatched[0].get_x() + hatched[0].get_width() / 2 == pytest.approx(at)
    legend_texts = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
    assert any(t.startswith("pystencils default 8x8x4:") for t in legend_texts)
    assert {"wide in x", "long in y", "deep in z"} <= set(legend_texts)
    assert any(lg.get_title().get_text() == "strip: block colour" for lg in fig.legends)
    r1024 = warpspeed.rank("star3d-r1", A100, threads=(1024,), domain=SMALL, jobs=1)  # 8x8x4 is not ranked
    fig = plots.ranking_plot(r1024, reference=ref)
    dashed = [ln for ln in fig.axes[0].get_lines() if ln.get_linestyle() == "--"]
    assert len(dashed) == 1 and dashed[0].get_ydata()[0] == pytest.approx(ref.performance_GLup_s)
    assert any(t.get_text().endswith("(not shown)") for lg in fig.legends for t in lg.get_texts())


def test_roofline_shows_the_models_own_limits_a_glups_axis_and_separate_level_names():
    e = warpspeed.estimate("copy", A100, (256, 1, 1), domain=SMALL)  # L2 and DRAM at the same intensity
    fig = plots.roofline_plot(e)
    ax = fig.axes[0]
    d = e.to_dict()
    model = d["performance_model"]
    lines = {ln.get_label(): ln for ln in ax.get_lines()}
    latency = next(ln for label, ln in lines.items() if label.startswith("latency limit"))
    assert latency.get_ydata()[0] == pytest.approx(model["limits_GLup_s"]["latency"])
    eff = model["dram_efficiency"]
    dram_eff = next(ln for label, ln in lines.items() if label.startswith(f"DRAM at {100 * eff:.0f} % streaming"))
    x, y = dram_eff.get_xdata()[0], dram_eff.get_ydata()[0]
    assert y == pytest.approx(x * A100.dram_bw_GB_s * eff)
    fig.canvas.draw()
    names = [t for t in ax.texts if t.get_text() in ("L1", "L2", "DRAM")]
    assert len(names) == 3
    boxes = [t.get_window_extent() for t in names]
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
    k = warpspeed.find_kernel("star3d-r4", domain=SMALL)
    flops = plots.roofline_plot(warpspeed.estimate(k, A100, (32, 4, 8)), flops_per_lup=k.flops.total)
    assert any(a.get_ylabel() == "performance (GLup/s)" for a in flops.axes[0].child_axes)


def test_projection_spanning_orders_of_magnitude_is_log_and_names_what_a_gpu_does_not_model():
    p = project("star3d-r4", "V100-PCIe-32GB", "H100-SXM5-80GB", threads=(1024,), jobs=1)
    ax = plots.projection_plot(p).axes[0]
    heights = [b.get_height() for b in ax.patches]
    assert max(heights) / min(heights) > plots.LOG_RATIO and ax.get_yscale() == "log"
    assert "log scale" in ax.get_ylabel()
    dram = [b for b in ax.patches if b.get_hatch() == "//"]  # the binding limits stay tall enough to read
    assert all(b.get_height() > ax.get_ylim()[0] * 1.5 for b in dram)
    notes = [t.get_text() for t in ax.texts if not t.get_text()[0].isdigit()]
    assert notes == ["not modelled here"]  # the V100 has no L2 request rate; not "no limit"
