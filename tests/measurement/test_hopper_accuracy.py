"""Accuracy on real GPUs: the committed H100 and H200 measurements (tests/data/hopper, see its README)
against the shipped device data.

FLOORS holds, per sweep, the figures the model reached, rounded a little towards worse: the Spearman rank
correlation, top-1 (measured GLup/s of the predicted best in % of the measured best), how far the predicted /
measured GLup/s are from 1 (median, 90th percentile) and, per compared quantity, the share of configurations
within 10 % of the measurement, for the default (latency) performance model; and the roofline model's
Spearman and top-1 on the same estimates. A model change that lowers one of them fails here; one that raises
them should raise the floor. Deterministic: no timing, no GPU.
"""

import functools
import math
from pathlib import Path

import numpy as np
import pytest

import warpspeed
from warpspeed.measurement.calibration import stream_bandwidth
from warpspeed.measurement.measurements import read_measurements
from warpspeed.measurement.validation import estimate_measurements, remodel, validate
from warpspeed.studies.confidence import RELATIVE_ERROR, assess
from warpspeed.studies.ranking import RankedResult
from warpspeed.studies.space import Configuration

ROOT = Path(__file__).resolve().parents[2]  # not from paths: this file also runs as a script
DATA = ROOT / "tests" / "data" / "hopper"
DEVICES = {"H100": "H100-SXM5-80GB", "H200": "H200-SXM-141GB"}

# (file, kernel, domain) -> floors of the default (latency) model: Spearman, top-1, the predicted / measured
# GLup/s ratio as (largest |median - 1|, largest p90 of |ratio - 1|), the share within 10 % per compared
# quantity; and the roofline's Spearman and top-1 (``--model roofline``, the same volumes)
FLOORS = {
    # the one sweep where the model misleads (issue: array of structures): recorded so that it cannot get worse
    # unnoticed; its rankings are marked unvalidated (warpspeed.studies.confidence). Its DRAM store exceeds the
    # distinct stored sectors by 15-22 % in every block (16 cells wide too, where 1 % of them are partial); until
    # 2026-11-27 the partial-store curve of the wave's lines lost every partial sector of its waves, which matched
    # the blocks 1-2 cells wide by accident (dram_store 41 %, dram_load 18 %, Spearman -0.05); the rule of the
    # wave's stored volume does not (10 %, 14 %, -0.10: docs/model.md, step 5)
    ('aos-lbm-H100.csv', 'd3q19-srt:layout=zyxf', '256x256x256'):
        dict(spearman=-0.1, top1=84.5, ratio=(0.9, 1.18),
             within=dict(l1_load=0.99, l2_load=0.5, l2_store=0.99, dram_load=0.14, dram_store=0.1, l1_cycles=0.32),
             roofline=dict(spearman=-0.37, top1=79.0)),
    # diagonal neighbours (issue 46): the L2 load and L1 cycles of narrow box3d-r1 blocks are off (docs/model.md,
    # "Assumptions and limits"); recorded so that they cannot get worse. The L1 curve anchored at hit(0) = 1
    # (2026-11-27) brought box3d-r1's L2 load from 55 to 81 %; the partial-store rule of the wave's stored volume,
    # with writers that wait again and the sectors no cell completes read once (2026-11-28), D3Q27's DRAM load
    # from 50 to 95 %
    ('box3d-r1-H100.csv', 'box3d-r1', '512x512x512'):
        dict(spearman=0.98, top1=97.0, ratio=(0.01, 0.29),
             within=dict(l1_load=0.99, l2_load=0.8, l2_store=0.99, dram_load=0.99, dram_store=0.99, l1_cycles=0.54),
             roofline=dict(spearman=0.96, top1=91.5)),
    ('d3q27-trt-H100.csv', 'lbm:stencil=D3Q27,method=trt', '256x256x256'):
        dict(spearman=0.97, top1=99.5, ratio=(0.04, 0.17),
             within=dict(l1_load=0.99, l2_load=0.83, l2_store=0.99, dram_load=0.95, dram_store=0.99, l1_cycles=0.73),
             roofline=dict(spearman=0.97, top1=99.5)),
    ('bandwidth-copy-H100.csv', 'copy', '268435456x1x1'):
        dict(top1=91.5, ratio=(0.06, 0.1),
             within=dict(l1_load=0.99, l2_load=0.99, l2_store=0.99, dram_load=0.99, dram_store=0.99, l1_cycles=0.99),
             roofline=dict(top1=98.5)),
    ('bandwidth-copy-H100.csv', 'copy', '1048576x1x1'):
        dict(top1=92.0, ratio=(0.82, 0.94),
             within=dict(l1_load=0.99, l2_load=0.99, l2_store=0.99, dram_load=0.99, l1_cycles=0.74),
             roofline=dict(top1=81.5)),
    ('bandwidth-copy-H200.csv', 'copy', '268435456x1x1'):
        dict(top1=81.5, ratio=(0.02, 0.15),
             within=dict(l1_load=0.99, l2_load=0.99, l2_store=0.99, dram_load=0.99, dram_store=0.99, l1_cycles=0.99),
             roofline=dict(top1=87.5)),
    ('bandwidth-copy-H200.csv', 'copy', '1048576x1x1'):
        dict(top1=94.0, ratio=(1.37, 1.5),
             within=dict(l1_load=0.99, l2_load=0.99, l2_store=0.99, dram_load=0.99, l1_cycles=0.74),
             roofline=dict(top1=83.5)),
    ('lbm-H100.csv', 'd3q19-srt', '256x256x256'):
        dict(spearman=0.96, top1=98.5, ratio=(0.04, 0.13),
             within=dict(l1_load=0.99, l2_load=0.85, l2_store=0.99, dram_load=0.99, dram_store=0.99, l1_cycles=0.87),
             roofline=dict(spearman=0.95, top1=99.5)),
    ('lbm-H100.csv', 'd3q15-allen-cahn', '256x256x256'):
        dict(spearman=0.97, top1=99.5, ratio=(0.04, 0.11),
             within=dict(l1_load=0.99, l2_load=0.85, l2_store=0.99, dram_load=0.97, dram_store=0.99, l1_cycles=0.79),
             roofline=dict(spearman=0.88, top1=78.0)),
    ('lbm-H200.csv', 'd3q19-srt', '256x256x256'):
        dict(spearman=0.95, top1=99.5, ratio=(0.03, 0.11),
             within=dict(l1_load=0.99, l2_load=0.85, l2_store=0.99, dram_load=0.99, dram_store=0.99, l1_cycles=0.87),
             roofline=dict(spearman=0.97, top1=96.0)),
    ('lbm-H200.csv', 'd3q15-allen-cahn', '256x256x256'):
        dict(spearman=0.97, top1=99.5, ratio=(0.02, 0.1),
             within=dict(l1_load=0.99, l2_load=0.85, l2_store=0.99, dram_load=0.99, dram_store=0.99, l1_cycles=0.75),
             roofline=dict(spearman=0.93, top1=78.5)),
    ('lbm-replica-H100.csv', 'd3q19-srt', '256x256x256'):
        dict(spearman=0.97, top1=99.5, ratio=(0.22, 0.34),
             within=dict(),
             roofline=dict(spearman=0.97, top1=99.5)),
    ('lbm-replica-H200.csv', 'd3q19-srt', '256x256x256'):
        dict(spearman=0.97, top1=99.5, ratio=(0.15, 0.26),
             within=dict(),
             roofline=dict(spearman=0.97, top1=99.5)),
    ('occupancy-lbm-H100.csv', 'd3q19-srt', '256x256x256'):
        dict(spearman=0.98, top1=99.5, ratio=(0.08, 0.16),
             within=dict(l1_load=0.99, l2_load=0.99, l2_store=0.99, dram_load=0.99, dram_store=0.99, l1_cycles=0.85),
             roofline=dict(spearman=0.94, top1=99.5)),
    ('occupancy-lbm-H100.csv', 'd3q15-allen-cahn', '256x256x256'):
        dict(spearman=0.98, top1=99.5, ratio=(0.05, 0.13),
             within=dict(l1_load=0.99, l2_load=0.99, l2_store=0.99, dram_load=0.99, dram_store=0.99, l1_cycles=0.7),
             roofline=dict(spearman=0.9, top1=97.0)),
    ('occupancy-lbm-H200.csv', 'd3q19-srt', '256x256x256'):
        dict(spearman=0.98, top1=99.5, ratio=(0.12, 0.19),
             within=dict(l1_load=0.99, l2_load=0.99, l2_store=0.99, dram_load=0.99, dram_store=0.99, l1_cycles=0.81),
             roofline=dict(spearman=0.97, top1=99.5)),
    ('occupancy-lbm-H200.csv', 'd3q15-allen-cahn', '256x256x256'):
        dict(spearman=0.98, top1=99.5, ratio=(0.08, 0.16),
             within=dict(l1_load=0.99, l2_load=0.99, l2_store=0.99, dram_load=0.99, dram_store=0.99, l1_cycles=0.69),
             roofline=dict(spearman=0.94, top1=92.0)),
    ('occupancy-star3d-r4-H100.csv', 'star3d-r4', '640x512x512'):
        dict(spearman=0.96, top1=98.5, ratio=(0.05, 0.2),
             within=dict(l1_load=0.99, l2_load=0.86, l2_store=0.99, dram_load=0.81, dram_store=0.99, l1_cycles=0.88),
             roofline=dict(spearman=0.93, top1=94.5)),
    ('occupancy-star3d-r4-H200.csv', 'star3d-r4', '640x512x512'):
        dict(spearman=0.98, top1=97.5, ratio=(0.1, 0.17),
             within=dict(l1_load=0.99, l2_load=0.87, l2_store=0.99, dram_load=0.75, dram_store=0.99, l1_cycles=0.88),
             roofline=dict(spearman=0.96, top1=91.5)),
    ('star3d-r4-H100.csv', 'star3d-r4', '640x512x512'):
        dict(spearman=0.96, top1=99.5, ratio=(0.06, 0.19),
             within=dict(l1_load=0.99, l2_load=0.81, l2_store=0.99, dram_load=0.77, dram_store=0.99, l1_cycles=0.93),
             roofline=dict(spearman=0.93, top1=99.5)),
    ('star3d-r4-H200.csv', 'star3d-r4', '640x512x512'):
        dict(spearman=0.98, top1=99.5, ratio=(0.07, 0.15),
             within=dict(l1_load=0.99, l2_load=0.85, l2_store=0.99, dram_load=0.78, dram_store=0.99, l1_cycles=0.94),
             roofline=dict(spearman=0.98, top1=94.0)),
}

# rows per file, as the data's README lists them: the committed files are complete
ROWS = {"star3d-r4": 168, "repeat-star3d-r4": 56, "lbm": 98, "lbm-replica": 49, "occupancy-star3d-r4": 91,
        "occupancy-lbm": 154, "bandwidth-copy": 8, "aos-lbm": 49, "box3d-r1": 42, "d3q27-trt": 42}
# files measured on one of the two GPUs (here)
ONE_GPU = {"repeat-star3d-r4": "H200", "aos-lbm": "H100", "box3d-r1": "H100", "d3q27-trt": "H100"}


@functools.cache
def _reports(name: str) -> dict:
    return {(r.kernel, "x".join(map(str, r.domain))): r for r in validate(read_measurements(DATA / name))}


@functools.cache
def _roofline_reports(name: str) -> dict:
    return {key: r for key, r in zip(_reports(name), remodel(list(_reports(name).values()), "roofline"),
                                     strict=True)}


def test_the_committed_measurements_are_complete():
    for stem, n in ROWS.items():
        for gpu in ("H100", "H200"):
            if ONE_GPU.get(stem, gpu) != gpu:
                continue
            rows = read_measurements(DATA / f"{stem}-{gpu}.csv")
            assert len(rows) == n, f"{stem}-{gpu}.csv"
            assert {m.device for m in rows} == {DEVICES[gpu]}
            assert all(m.values.get("driver") == "580.159.04" for m in rows)


@pytest.mark.parametrize("name, kernel, domain", list(FLOORS))
def test_accuracy_does_not_fall_below_what_was_reached(name, kernel, domain):
    r = _reports(name)[(kernel, domain)]
    floor = FLOORS[(name, kernel, domain)]
    assert r.model == "latency"
    if "spearman" in floor:
        assert r.spearman >= floor["spearman"], f"Spearman {r.spearman:.3f}"
    assert r.top1_percent >= floor["top1"], f"top-1 {r.top1_percent:.1f} %"
    median_off, p90 = floor["ratio"]
    assert abs(r.ratio.median - 1) <= median_off, f"predicted / measured median {r.ratio.median:.3f}"
    assert r.ratio.p90_abs_deviation <= p90, f"p90 of |ratio - 1| {r.ratio.p90_abs_deviation:.3f}"
    for key, share in floor["within"].items():
        got = r.volume_errors[key].within
        assert got >= share, f"{key}: {100 * got:.1f} % within 10 %, floor {100 * share:.0f} %"


@pytest.mark.parametrize("name, kernel, domain", list(FLOORS))
def test_the_roofline_model_keeps_its_ranking(name, kernel, domain):
    r = _roofline_reports(name)[(kernel, domain)]
    floor = FLOORS[(name, kernel, domain)]["roofline"]
    assert r.model == "roofline"
    if "spearman" in floor:
        assert r.spearman >= floor["spearman"], f"Spearman {r.spearman:.3f}"
    assert r.top1_percent >= floor["top1"], f"top-1 {r.top1_percent:.1f} %"


def test_the_latency_model_predicts_lbm_within_a_third_where_the_roofline_is_off_twofold():
    """The point of the latency model: absolute GLup/s of the low-occupancy LBM kernels."""
    for name in ("lbm-H100.csv", "lbm-H200.csv"):
        for key, r in _reports(name).items():
            roof = _roofline_reports(name)[key]
            assert roof.ratio.median > 1.8 and 0.85 < r.ratio.median < 1.15, (name, key)


def test_every_sweep_has_a_floor():
    sweeps = {(f.name, *key) for f in DATA.glob("*.csv") if not f.name.startswith("repeat")
              for key in _reports(f.name)}
    assert sweeps == set(FLOORS)


@pytest.mark.parametrize("gpu", ["H100", "H200"])
def test_shipped_dram_bandwidth_is_the_measured_streaming_rate(gpu):
    """dram_bw of the H100/H200 files is what `copy` reached on them (read + write bytes per second)."""
    dev = warpspeed.device(DEVICES[gpu])
    rows = read_measurements(DATA / f"bandwidth-copy-{gpu}.csv")
    bw = stream_bandwidth(estimate_measurements(rows), dev, "test")
    assert bw.rows == 4  # the large domain only: the small one fits in the L2
    best = max((m for m in rows if math.prod(m.domain) > 10**8),
               key=lambda m: m.GLup_s * (m.volume("dram_load") + m.volume("dram_store")))
    assert bw.GB_s == pytest.approx(best.GLup_s * (best.volume("dram_load") + best.volume("dram_store")))
    assert dev.dram_bw_GB_s == pytest.approx(bw.GB_s, abs=0.5)
    assert dev.sources["dram_bw"].startswith("measured:")


@functools.cache
def _star3d_only_calibration():
    """The H100 with the A100-era curves (where every Hopper device started), then the curves fitted to the
    star3d-r4 H100 rows alone: (before, after) devices."""
    import dataclasses

    pytest.importorskip("scipy")
    from warpspeed.measurement.calibration import calibrate
    h100 = warpspeed.device(DEVICES["H100"])
    ampere = warpspeed.device("A100-SXM4-40GB").hit_rates
    before = h100.with_overrides(**{f"hit_rates.{c}.{p}": getattr(getattr(ampere, c), p)
                                    for c in ("l1", "l2_y", "l2_z", "l2_store") for p in "abc"})
    rows = [dataclasses.replace(m, device=before.id) for m in read_measurements(DATA / "star3d-r4-H100.csv")]
    cal = calibrate(rows, before, "star3d-r4-H100.csv", date="test")
    fitted = {f"hit_rates.{f.curve}.{p}": getattr(f.fitted, p) for f in cal.fits if f.fitted for p in "abc"}
    assert {f.curve for f in cal.fits if f.fitted} == {"l1", "l2_y", "l2_z", "l2_store"}
    return before, before.with_overrides(**fitted)


@pytest.mark.parametrize("name", ["lbm-H100.csv", "occupancy-star3d-r4-H100.csv"])
def test_curves_fitted_on_star3d_alone_carry_over_to_other_kernels_on_that_gpu(name):
    """Overfitting check: curves fitted to the star3d-r4 H100 rows only improve the L2 load of the LBM kernels
    and every volume of star3d-r4 at other block sizes. They do not carry the partial stores over: star3d-r4
    keeps its partially written sectors in the L2, the LBM kernels lose many (README, known limits), so its
    DRAM store curve makes the LBM DRAM volumes worse; the shipped curves are fitted to both kinds of rows."""
    before, after = _star3d_only_calibration()
    rows = read_measurements(DATA / name)
    shown = {}
    for b, a in zip(validate(rows, device=before), validate(rows, device=after), strict=True):
        assert a.volume_errors["l2_load"].median <= b.volume_errors["l2_load"].median + 1e-3, b.kernel
        assert a.volume_errors["l2_load"].within >= b.volume_errors["l2_load"].within, b.kernel
        if b.kernel == "star3d-r4":
            for key in ("dram_load", "dram_store"):
                # the same within 0.2 points at the median (the occupancy sweep's DRAM load: 4.0 % against 3.9 %
                # with the A100-era curves since the partial stores take the wave's stored volume as O)
                assert a.volume_errors[key].median <= b.volume_errors[key].median + 2e-3, key
                assert a.volume_errors[key].within >= b.volume_errors[key].within, key
        else:  # the partial stores do not carry over (the docstring): what this test records
            assert a.volume_errors["dram_store"].median > b.volume_errors["dram_store"].median
        shown[b.kernel] = (b, a)
    if name == "lbm-H100.csv":  # the README quotes two of the changes
        text = " ".join(README.read_text().split())

        def change(kernel: str, key: str, digits: int) -> str:
            b, a = shown[kernel]
            return (f"{100 * b.volume_errors[key].median:.{digits}f} % -> "
                    f"{100 * a.volume_errors[key].median:.{digits}f} %")

        assert f"(median error {change('d3q15-allen-cahn', 'l2_load', 0)} for d3q15-allen-cahn)" in text
        assert f"(d3q19-srt DRAM load median error {change('d3q19-srt', 'dram_load', 1)})" in text


CALIBRATED = ("star3d-r4", "occupancy-star3d-r4", "lbm", "occupancy-lbm")  # the files the Hopper curves are fitted to


def test_the_shipped_z_layer_curve_is_the_best_fit_from_any_start():
    """The Hopper l2_z curve is what calibration fits to the pooled rows of both GPUs, whatever curve it starts
    from: from the curve shipped before the z layer's O changed (2026-11-26), one local fit stops on a shoulder
    of the objective (b and c trade against each other); the fit's further starts find the shipped curve."""
    pytest.importorskip("scipy")
    from warpspeed.device import HitRateCurve
    from warpspeed.measurement import calibration
    pairs = [p for stem in CALIBRATED for gpu in DEVICES for r in _reports(f"{stem}-{gpu}.csv").values()
             for p in r.pairs]
    points = calibration.observed_points(pairs)["l2_z"]
    pts, weights = [(o, h) for o, h, _ in points], [w for _, _, w in points]
    shipped = warpspeed.device(DEVICES["H100"]).hit_rates.l2_z
    earlier = HitRateCurve(0.9984, 0.0002087, 5.088, "the curve of the wave-inclusive O")
    grid = [0.05 * i for i in range(61)]
    for start in (shipped, earlier):
        fitted, _ = calibration.fit_curve(pts, start, "test", weights)
        assert max(abs(fitted(o) - shipped(o)) for o in grid) < 5e-3, start.source
    one_start = pytest.MonkeyPatch()
    one_start.setattr(calibration, "FIT_STEEPNESSES", ())
    try:
        stuck, _ = calibration.fit_curve(pts, earlier, "test", weights)
    finally:
        one_start.undo()
    assert max(abs(stuck(o) - shipped(o)) for o in grid) > 0.05


def test_the_shipped_l1_curve_is_the_anchored_fit_to_the_pooled_rows():
    """The Hopper l1 curve is what calibration fits, with hit(0) = 1, to the pooled star3d-r4 and LBM rows of both
    GPUs (box3d-r1 and D3Q27 are not among them: they check it), from the curve shipped before (fitted with a
    free level: hit(0) = 0.989) or the shipped one; it fits those rows better than the free level did."""
    pytest.importorskip("scipy")
    from warpspeed.device import HitRateCurve
    from warpspeed.measurement import calibration
    pairs = [p for stem in CALIBRATED for gpu in DEVICES for r in _reports(f"{stem}-{gpu}.csv").values()
             for p in r.pairs]
    points = calibration.observed_points(pairs)["l1"]
    pts, weights = [(o, h) for o, h, _ in points], [w for _, _, w in points]
    shipped = warpspeed.device(DEVICES["H100"]).hit_rates.l1
    assert shipped(0.0) == 1.0 and "l1" in calibration.ANCHORED_CURVES
    free = HitRateCurve(1.0, 0.01124, 0.4319, "the curve shipped before 2026-11-27")
    grid = [0.1 * i for i in range(100)]
    for start in (shipped, free):
        fitted, _ = calibration.fit_curve(pts, start, "test", weights, anchored=True)
        assert max(abs(fitted(o) - shipped(o)) for o in grid) < 1e-3, start.source
    h = np.array([p[1] for p in pts])

    def rms(curve) -> float:
        return float(np.sqrt(np.mean((np.array([curve(o) for o, _ in pts]) - h) ** 2)))

    assert rms(shipped) < 0.049 < 0.055 < rms(free)


def test_the_shipped_layer_curves_are_where_calibration_settles_from_any_start():
    """calibrate refits the y- and z-layer curves, each with the other's last curve, until they settle: from the
    shipped curves they stay, and from the curves shipped before 2026-11-26 (fitted with the z layer's O
    counting the wave in) they arrive at the shipped ones."""
    pytest.importorskip("scipy")
    from warpspeed.device import HitRateCurve
    from warpspeed.measurement import calibration
    pairs = [p for stem in CALIBRATED for gpu in DEVICES for r in _reports(f"{stem}-{gpu}.csv").values()
             for p in r.pairs]
    shipped = warpspeed.device(DEVICES["H100"]).hit_rates
    now = {c: getattr(shipped, c) for c in ("l1", "l2_y", "l2_z", "l2_store")}
    before = {**now, "l2_y": HitRateCurve(0.9745, 9.407e-07, 9.801, "before"),
              "l2_z": HitRateCurve(0.9984, 0.0002087, 5.088, "before")}  # a device that still carries those
    grid = [0.05 * i for i in range(81)]
    for olds in (now, before):
        fits = calibration.fit_layers(pairs, shipped.l2_store, olds, "test")
        for c in ("l2_y", "l2_z"):
            assert max(abs(fits[c].fitted(o) - now[c](o)) for o in grid) < 5e-3, (c, olds[c].source)
            assert fits[c].old is olds[c]  # reported as the device's curve, not the last pass's start
            assert "not settled" not in fits[c].fitted.source
    hurried = pytest.MonkeyPatch()
    hurried.setattr(calibration, "LAYER_PASSES", 1)  # one pass from the earlier curves cannot settle: it says so
    try:
        fits = calibration.fit_layers(pairs, shipped.l2_store, before, "test")
    finally:
        hurried.undo()
    assert all("had not settled after 1 passes" in fits[c].fitted.source for c in ("l2_y", "l2_z"))


# ----------------------------------------------------------------------------- how sure a ranking is
def _ranked(report) -> list[RankedResult]:
    """A sweep's estimates as a ranking's results, best first."""
    results = [RankedResult(Configuration(p.measured.block, p.measured.folding), p.estimate) for p in report.pairs]
    return sorted(results, key=RankedResult.sort_key)


def _measured(report) -> dict[Configuration, float]:
    return {Configuration(p.measured.block, p.measured.folding): p.measured.GLup_s for p in report.pairs}


def _validated_sweeps():
    return [key for key in FLOORS if not any(r.estimate.unvalidated for r in _ranked(_reports(key[0])[key[1:]]))]


def test_the_models_resolution_is_the_median_spread_of_predicted_over_measured_within_a_sweep():
    """confidence.RELATIVE_ERROR: the median |log(predicted / measured) - the sweep's median| over every
    configuration of every validated sweep (5.2 % on the committed data)."""
    spread = []
    for name, kernel, domain in _validated_sweeps():
        pairs = _reports(name)[(kernel, domain)].pairs
        ratio = np.log([p.estimate.performance_GLup_s / p.measured.GLup_s for p in pairs])
        spread += list(np.abs(ratio - np.median(ratio)))
    assert len(_validated_sweeps()) == len(FLOORS) - 1  # all but the array-of-structures sweep
    assert abs(float(np.median(spread)) - RELATIVE_ERROR) <= 0.005


@pytest.mark.parametrize("name, kernel, domain", list(FLOORS))
def test_measuring_what_the_confidence_names_reaches_the_measured_best(name, kernel, domain):
    """Launching the configurations a ranking's confidence says to measure (its contenders; for an unvalidated
    pattern also the best-predicted block of every x-extent) reaches >= 98 % of the measured best in every
    committed sweep, with at most 8 launches where the pattern is validated."""
    report = _reports(name)[(kernel, domain)]
    conf = assess(_ranked(report))
    measured = _measured(report)
    reached = max(measured[c] for c in conf.measure) / max(measured.values())
    assert reached >= 0.98, f"{100 * reached:.1f} % with {len(conf.measure)} launches"
    if conf.level == "unvalidated":
        assert name == "aos-lbm-H100.csv"
    else:
        assert 1 <= len(conf.measure) <= 8
        assert (conf.level == "confident") == (len(conf.measure) == 1)


# ----------------------------------------------------------------------------- docs/model.md's numbers
def _lbm(gpu: str, kernel: str = "d3q19-srt"):
    return _reports(f"lbm-{gpu}.csv")[(kernel, _LBM)]


def _dram_TB_s(p) -> float:
    m = p.measured
    return m.GLup_s * (m.volume("dram_load") + m.volume("dram_store")) / 1000


def _pct_range(values) -> str:
    return f"{round(100 * min(values))}-{round(100 * max(values))} %"


def model_doc_phrases() -> list[str]:
    """The phrases of docs/model.md that quote figures of the committed data or the shipped device data, as
    the data give them now."""
    import dataclasses

    from warpspeed.model.latency import OVERLAP_EXPONENT

    h100, h200 = (warpspeed.device(DEVICES[g]) for g in ("H100", "H200"))
    out = []
    # the roofline's miss that the latency model fixes: D3Q19 in 1-cell-wide blocks on the H100
    one = [p for p in _roofline_reports("lbm-H100.csv")[("d3q19-srt", _LBM)].pairs if p.measured.block[0] == 1]
    out.append(f"D3Q19 with 1-cell-wide blocks is predicted at "
               f"{np.median([p.estimate.performance_GLup_s for p in one]):.0f} GLup/s and measures "
               f"{np.median([p.measured.GLup_s for p in one]):.1f}")
    wide = {g: next(p for p in _lbm(g).pairs if p.measured.block == (512, 1, 1)) for g in DEVICES}
    narrow = {g: [p for p in _lbm(g).pairs if p.measured.block[0] == 1] for g in DEVICES}
    out.append(f"{np.median([_dram_TB_s(p) for p in narrow['H100']]):.1f} TB/s for 1-cell-wide blocks, "
               f"{_dram_TB_s(wide['H100']):.1f} TB/s for 512-cell-wide ones")
    speed = {p.measured.block: p.measured.GLup_s for p in _lbm("H100").pairs}
    up = [p.measured.GLup_s / speed[p.measured.block] - 1 for p in narrow["H200"]]
    out.append(f"speeds narrow blocks up by {100 * np.median(up):.0f} %, wide ones by "
               f"{100 * (wide['H200'].measured.GLup_s / wide['H100'].measured.GLup_s - 1):.0f} %")
    # DRAM efficiency by run length at 16 working warps per SM, on each GPU
    eff = {}
    for g, dev in (("H100", h100), ("H200", h200)):
        for run in (8, 64, 256, 2048):
            rows = [p for p in _lbm(g).pairs if p.estimate.workload.load_run_bytes == run
                    and p.estimate.performance.detail["active_warps_per_sm"] == 16]
            eff[g, run] = np.median([_dram_TB_s(p) * 1000 / dev.dram_bw_GB_s for p in rows])
    assert max(abs(eff["H100", r] - eff["H200", r]) for r in (8, 64, 256, 2048)) <= 0.05  # "within a few percent"
    out.append(f"16 warps/SM: {100 * eff['H100', 8]:.0f} % at 8 B runs, {100 * eff['H100', 64]:.0f} % at 64 B, "
               f"{100 * eff['H100', 256]:.0f} % at 256 B, {100 * eff['H100', 2048]:.0f} % at 2 KiB")
    out.append(f"two equal ones cost {100 * (2 ** (1 / OVERLAP_EXPONENT) - 1):.0f} % more than either")
    out.append(f"the fitted k is {h100.dram_run_exponent:g}")
    out.append(f"about {h100.sectors_in_flight_per_warp:g} sectors in flight per warp")
    out.append(f"fitted rate is {h100.l2_requests_per_ns:g} per ns")
    # the request-bound star3d-r4 blocks 1-4 cells wide, and what coalesced blocks move through the L2
    bound = [p for f in ("star3d-r4-H100.csv", "occupancy-star3d-r4-H100.csv") for p in _reports(f)[_STAR].pairs
             if p.estimate.limiter == "L2req" and p.measured.block[0] <= 4]
    rates = [p.measured.GLup_s * p.estimate.performance.detail["l2_requests_per_lup"] for p in bound]
    l2 = [p.measured.GLup_s * (p.measured.volume("l2_load") + p.measured.volume("l2_store")) / 1000 for p in bound]
    coalesced = [p.measured.GLup_s * (p.measured.volume("l2_load") + p.measured.volume("l2_store")) / 1000
                 for p in _reports("star3d-r4-H100.csv")[_STAR].pairs if p.measured.block[0] >= 32]
    out.append(f"star3d-r4 blocks 1-4 cells wide that the requests bind measure {np.median(rates):.0f} G requests/s "
               f"at the median ({min(rates):.0f}-{max(rates):.0f}, counted as the model counts them; "
               f"{min(l2):.1f}-{max(l2):.1f} TB/s of single sectors) while coalesced blocks move "
               f"{np.percentile(coalesced, 90):.0f} TB/s in full lines")
    # the 512x1x1 blocks with 8 working warps
    ratio = [wide[g].estimate.performance_GLup_s / wide[g].measured.GLup_s for g in DEVICES]
    out.append(f"run as fast as 16-warp blocks, and are predicted {min(ratio):.2f}-{max(ratio):.2f}x")
    # the L1 rules against ncu's wavefronts
    star = [_reports(f"star3d-r4-{g}.csv")[_STAR] for g in DEVICES]
    lbm = [_reports(f"{f}-{g}.csv")[(k, _LBM)] for f in ("lbm", "occupancy-lbm") for g in DEVICES
           for k in ("d3q19-srt", "d3q15-allen-cahn")]
    pairing = {g: dataclasses.replace(d, l1_load_lines_per_wavefront=None, l1_store_lines_per_wavefront=None,
                                      l1_wavefronts_per_warp=None) for g, d in (("H100", h100), ("H200", h200))}
    paired = [r for g in DEVICES for f in (f"star3d-r4-{g}.csv", f"lbm-{g}.csv")
              for r in validate(read_measurements(DATA / f), device=pairing[g])]
    out.append(f"puts {_pct_range([r.volume_errors['l1_cycles'].within for r in star])} of the star3d-r4 "
               f"configurations and {_pct_range([r.volume_errors['l1_cycles'].within for r in lbm])} of the LBM "
               f"ones within 10 % of ncu's wavefronts (the pairing rule: "
               f"{_pct_range([r.volume_errors['l1_cycles'].within for r in paired])})")
    by_width = {x: [p.measured.values["l1_cycles_per_warp_lup"] / p.estimate.l1_cycles_per_warp_lup - 1
                    for r in lbm for p in r.pairs if p.measured.block[0] == x] for x in (4, 16)}
    out.append(f"LBM blocks 4 cells wide cost {_pct_range(by_width[4])} more than predicted, 16 wide "
               f"{_pct_range([-v for v in by_width[16]])} less")
    return out + aos_phrases()[:1]


def aos_phrases() -> list[str]:
    """How the array-of-structures sweep measures and is predicted, as docs/model.md and docs/outputs.md say."""
    pairs = _reports("aos-lbm-H100.csv")[("d3q19-srt:layout=zyxf", _LBM)].pairs
    measured = [p.measured.GLup_s for p in pairs]
    predicted = [p.estimate.performance_GLup_s for p in pairs]
    dram = [_dram_TB_s(p) for p in pairs]
    span = f"{min(measured):.1f}-{max(measured):.1f} GLup/s"
    spread = f"{min(predicted):.1f}-{max(predicted):.1f}"
    return [f"runs at {span} in every block, while the model spreads the blocks over {spread} and ranks the "
            f"measured best last (README, accuracy table). What caps it is not known from the counters measured "
            f"(the DRAM moves {min(dram):.1f}-{max(dram):.1f} TB/s",
            f"every block ran at {span} while the model spread them over {spread} and ranked the measured best last"]


def device_doc_phrases() -> list[str]:
    """The latency model's fitted Hopper values as docs/device-format.md quotes them."""
    h100 = warpspeed.device(DEVICES["H100"])
    return [f"`sectors_in_flight_per_warp` ({h100.sectors_in_flight_per_warp:g}), `dram_run_time` "
            f"({h100.dram_run_time_s * 1e9:g} ns: {h100.dram_run_time_s * h100.dram_bw_GB_s * 1e9:.0f} B per run at "
            f"the H100's {h100.dram_bw_GB_s:.0f} GB/s), `dram_run_exponent` ({h100.dram_run_exponent:g}) and "
            f"`l2_request_rate` ({h100.l2_requests_per_ns:g} per ns)"]


def readme_phrases() -> list[str]:
    """The README's figures beside its accuracy table (the table itself: accuracy_table)."""
    h100, h200 = (warpspeed.device(DEVICES[g]) for g in ("H100", "H200"))
    lbm = {(f, g, k): _reports(f"{f}-{g}.csv")[(k, _LBM)] for f in ("lbm", "occupancy-lbm") for g in DEVICES
           for k in ("d3q19-srt", "d3q15-allen-cahn")}
    off = {key: abs(r.ratio.median - 1) for key, r in lbm.items()}
    worst = max(off, key=off.get)
    assert all(v <= 0.1 for v in off.values())
    threads = "128 and 256 threads" if worst[0] == "occupancy-lbm" else "512 threads"
    shared = model_doc_phrases()
    return [f"brings them within 10 % at the median (at most {100 * off[worst]:.0f} %: {worst[2]} on the {worst[1]} "
            f"with {threads})",
            *(p for p in shared if p.startswith(("run as fast as", "star3d-r4 blocks 1-4", "LBM blocks 4 cells"))),
            f"the DRAM bandwidth of the H100 and H200 ({h100.dram_bw_GB_s:.0f} and {h200.dram_bw_GB_s:.0f} GB/s",
            f"{h100.sectors_in_flight_per_warp:g} sectors in flight per warp that has cells, "
            f"{h100.dram_run_time_s * 1e9:g} ns of DRAM time per contiguous run, i.e. "
            f"{h100.dram_run_time_s * h100.dram_bw_GB_s * 1e9:.0f} B of streaming on the H100 and "
            f"{h200.dram_run_time_s * h200.dram_bw_GB_s * 1e9:.0f} B on the H200, the efficiency exponent "
            f"{h100.dram_run_exponent:g}, and {h100.l2_requests_per_ns:g} L2 requests per ns",
            f"The latencies ({h100.l2_latency_s * 1e9:.0f} ns L2, {h100.dram_latency_s * 1e9:.0f} ns DRAM)"]


@pytest.mark.parametrize("doc, phrases", [("model.md", model_doc_phrases), ("outputs.md", lambda: aos_phrases()[1:]),
                                          ("device-format.md", device_doc_phrases), ("README.md", readme_phrases)])
def test_the_numbers_the_docs_give_are_what_the_data_give(doc, phrases):
    root = ROOT
    text = " ".join((root / doc if doc == "README.md" else root / "docs" / doc).read_text().split())
    missing = [phrase for phrase in phrases() if phrase not in text]
    assert not missing, (f"docs/{doc} does not say (print them: python tests/measurement/test_hopper_accuracy.py): "
                         f"{missing}")


# ----------------------------------------------------------------------------- the README's accuracy table
README = ROOT / "README.md"
_STAR, _LBM = ("star3d-r4", "640x512x512"), "256x256x256"
# the table's rows: (label, the sweeps of its cells: one, or the H100's and the H200's)
TABLE = (
    ("star3d-r4 H100, 168 configurations", [("star3d-r4-H100.csv", *_STAR)]),
    ("star3d-r4 H200, 168", [("star3d-r4-H200.csv", *_STAR)]),
    ("star3d-r4 H100 / H200, 256 and 512 threads, 91 each",
     [("occupancy-star3d-r4-H100.csv", *_STAR), ("occupancy-star3d-r4-H200.csv", *_STAR)]),
    ("d3q19-srt H100 / H200, 512 threads, 49 each",
     [("lbm-H100.csv", "d3q19-srt", _LBM), ("lbm-H200.csv", "d3q19-srt", _LBM)]),
    ("d3q15-allen-cahn H100 / H200, 49 each",
     [("lbm-H100.csv", "d3q15-allen-cahn", _LBM), ("lbm-H200.csv", "d3q15-allen-cahn", _LBM)]),
    ("d3q19-srt H100 / H200, 128 and 256 threads, 77 each",
     [("occupancy-lbm-H100.csv", "d3q19-srt", _LBM), ("occupancy-lbm-H200.csv", "d3q19-srt", _LBM)]),
    ("d3q15-allen-cahn H100 / H200, 128 and 256 threads, 77 each",
     [("occupancy-lbm-H100.csv", "d3q15-allen-cahn", _LBM), ("occupancy-lbm-H200.csv", "d3q15-allen-cahn", _LBM)]),
    ("d3q19-srt, array of structures (`layout=zyxf`), H100, 49: unvalidated",
     [("aos-lbm-H100.csv", "d3q19-srt:layout=zyxf", _LBM)]),
    # diagonal neighbours
    ("box3d-r1 (27-point box), H100, 256 threads, 42", [("box3d-r1-H100.csv", "box3d-r1", "512x512x512")]),
    ("D3Q27 TRT, H100, 256 threads, 42", [("d3q27-trt-H100.csv", "lbm:stencil=D3Q27,method=trt", _LBM)]),
)
TABLE_HEAD = ("| sweep | Spearman | top-1 | predicted / measured GLup/s | L1 cycles within 10 % | within 10 %: "
              "l2_load / dram_load / dram_store |\n| --- | --- | --- | --- | --- | --- |")


def accuracy_table(table=TABLE) -> str:
    """The README's accuracy table (or another list of sweeps), computed: the default model's figures, the
    roofline's in brackets."""
    lines = [TABLE_HEAD]
    for label, sweeps in table:
        lat = [_reports(f)[(k, d)] for f, k, d in sweeps]
        roof = [_roofline_reports(f)[(k, d)] for f, k, d in sweeps]

        def both(values, fmt):
            return " / ".join(fmt(v) for v in values)

        def pct(r, key):
            return f"{100 * r.volume_errors[key].within:.0f}"

        one = len(sweeps) == 1
        top = (lambda v: f"{v:.1f}") if one else (lambda v: f"{v:.0f}")
        vols = " / ".join(", ".join(pct(r, key) for r in lat) for key in ("l2_load", "dram_load", "dram_store"))
        cells = [label,
                 f"{both([r.spearman for r in lat], lambda v: f'{v:.2f}')} "
                 f"({both([r.spearman for r in roof], lambda v: f'{v:.2f}')})",
                 f"{both([r.top1_percent for r in lat], top)} % ({both([r.top1_percent for r in roof], top)})",
                 f"{both([r.ratio.median for r in lat], lambda v: f'{v:.2f}')}, p90 "
                 f"{both([r.ratio.p90_abs_deviation for r in lat], lambda v: f'{v:.2f}')} "
                 f"({both([r.ratio.median for r in roof], lambda v: f'{v:.2f}')})",
                 f"{both(lat, lambda r: pct(r, 'l1_cycles'))} %",
                 f"{vols} %"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def test_the_readme_accuracy_table_is_what_the_data_give():
    """Every figure of the README's table comes from the committed data: regenerate it with
    `python tests/measurement/test_hopper_accuracy.py` after a model change."""
    assert accuracy_table() in README.read_text()


if __name__ == "__main__":
    print(accuracy_table())
    for doc, phrases in (("docs/model.md", model_doc_phrases), ("docs/outputs.md", lambda: aos_phrases()[1:]),
                         ("docs/device-format.md", device_doc_phrases), ("README.md", readme_phrases)):
        print("", f"{doc}:", *phrases(), sep="\n")
