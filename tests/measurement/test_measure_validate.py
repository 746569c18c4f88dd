"""Measurement files, validate and calibrate (on synthetic rows made by the estimator itself, so that the
right answers are known), and the CUDA that `warpspeed measure` generates (compiled and run on the CPU).

No GPU measurements exist in tests/data yet: the rows here are *synthetic*, computed from estimates with
known changes, and test the pipeline, not the model.
"""

import csv
import math
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from cuda_on_cpu import run_on_cpu
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from paths import HOPPER_DATA

import warpspeed
from warpspeed.errors import InputError
from warpspeed.expressions import evaluate
from warpspeed.interface.cli import main
from warpspeed.measurement.measure import cuda_source, generated_program, grid_of, measurement_rows
from warpspeed.measurement.measurements import COLUMNS, read_measurements, triple_text, write_measurements
from warpspeed.measurement.ncu import METRICS
from warpspeed.measurement.validation import ranks, spearman, validate
from warpspeed.model.footprint import folded_instructions
from warpspeed.studies.space import Configuration

A100 = warpspeed.device("A100-SXM4-40GB")
BLOCKS = [(32, 4, 8), (64, 4, 4), (128, 2, 4), (256, 2, 2), (32, 8, 4), (16, 4, 16)]


def synthetic_rows(device, kernel="star3d-r4", domain=(256, 128, 32), blocks=BLOCKS, perf=lambda e, i: 0.9 * e,
                   volume=lambda key, v: v, report_as=None):
    """Rows as `warpspeed measure` writes them, from estimates on ``device`` (not measurements)."""
    rows = []
    for i, b in enumerate(blocks):
        e = warpspeed.estimate(kernel, device, b, domain=domain).to_dict()
        v = e["volumes_B_per_lup"]
        rows.append({"device": report_as or device.id, "gpu_name": "synthetic", "driver": "none", "kernel": kernel,
                     "block": triple_text(b), "folding": "1x1x1", "domain": triple_text(domain),
                     "registers": e["registers"], "repeats": 1, "time_s": 1.0,
                     "GLup_s": perf(e["performance_GLup_s"], i),
                     **{k: volume(k, v[k]) for k in ("l1_load", "l2_load", "l2_store", "dram_load", "dram_store")}})
    return rows


# ------------------------------------------------------------------------------------------ measurement files


def test_measurement_csv_round_trip_and_errors(tmp_path):
    f = write_measurements(tmp_path / "m.csv", synthetic_rows(A100, blocks=BLOCKS[:2]))
    with f.open() as fh:
        assert next(csv.reader(fh)) == list(COLUMNS)
    write_measurements(f, synthetic_rows(A100, blocks=BLOCKS[2:3]), append=True)
    ms = read_measurements(f)
    assert [m.block for m in ms] == BLOCKS[:3]
    assert ms[0].registers == 48 and ms[0].volume("dram_load") > 0 and ms[0].volume("l1_cycles_per_warp_lup") is None
    text = f.read_text().splitlines()
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join([text[0], text[1].replace("32x4x8", "32x4")]))
    with pytest.raises(InputError, match="line 2: column block"):
        read_measurements(bad)
    bad.write_text("kernel,block\nx,1x1x1\n")
    with pytest.raises(InputError, match="missing column"):
        read_measurements(bad)
    bad.write_text("\n".join([text[0], text[1].replace(",synthetic,", ",synthetic,").replace(",1.0,", ",-1,", 1)]))
    with pytest.raises(InputError, match="time_s"):
        read_measurements(bad)


# ------------------------------------------------------------------------------------------------ validate


def test_spearman_matches_the_textbook_formula_and_ties():
    x = [1.0, 2.0, 3.0, 4.0, 5.0]
    assert spearman(x, [10, 20, 30, 40, 50]) == pytest.approx(1.0)
    assert spearman(x, [50, 40, 30, 20, 10]) == pytest.approx(-1.0)
    y = [2.0, 1.0, 3.0, 5.0, 4.0]  # d = (1, 1, 0, 1, 1)
    assert spearman(x, y) == pytest.approx(1 - 6 * 4 / (5 * 24))
    assert list(ranks([3.0, 1.0, 3.0, 2.0])) == [3.5, 1.0, 3.5, 2.0]
    scipy_stats = pytest.importorskip("scipy.stats")
    rng = np.random.default_rng(3)
    for _ in range(20):
        a, b = rng.integers(0, 5, 12).astype(float), rng.integers(0, 5, 12).astype(float)
        ref = scipy_stats.spearmanr(a, b).statistic
        got = spearman(a, b)
        assert (got is None and math.isnan(ref)) or got == pytest.approx(ref)
    assert spearman([1.0], [2.0]) is None and spearman([1.0, 1.0], [1.0, 2.0]) is None


def test_validate_figures_on_known_deviations():
    from warpspeed.measurement.measurements import Measurement
    rows = synthetic_rows(A100, volume=lambda k, v: v / 1.25 if k == "dram_load" else v)
    ms = [Measurement(r["device"], r["kernel"], tuple(map(int, r["block"].split("x"))), (1, 1, 1),
                      tuple(map(int, r["domain"].split("x"))), r["GLup_s"], r["registers"],
                      {k: float(v) for k, v in r.items() if k in ("l2_load", "dram_load", "l2_store")})
          for r in rows]
    (rep,) = validate(ms)
    assert rep.spearman == pytest.approx(1.0) and rep.top1_percent == pytest.approx(100.0)
    assert rep.volume_errors["dram_load"].median == pytest.approx(0.25)
    assert rep.volume_errors["l2_load"].median == pytest.approx(0.0, abs=1e-12)
    # the measured best is another configuration: top-1 is the predicted best's share of it
    pred = [p.estimate.performance_GLup_s for p in rep.pairs]
    best, other = int(np.argmax(pred)), int(np.argmin(pred))
    ms2 = [m if i != other else type(m)(m.device, m.kernel, m.block, m.folding, m.domain, 2 * max(pred), m.registers,
                                        m.values) for i, m in enumerate(ms)]
    (rep2,) = validate(ms2)
    assert rep2.top1_percent == pytest.approx(100 * ms[best].GLup_s / (2 * max(pred)))
    assert rep2.spearman < 1
    # within 10 %: every dram_load is 25 % off, every l2_load exact; the rows ran at 0.9 x the prediction
    assert rep.volume_errors["dram_load"].within == 0.0 and rep.volume_errors["l2_load"].within == 1.0
    assert rep.ratio.median == pytest.approx(1 / 0.9) and rep.ratio.p90_abs_deviation == pytest.approx(1 / 0.9 - 1)
    d = rep.to_dict()
    assert d["volumes"]["dram_load"]["within_10_percent"] == 0.0
    assert d["performance_ratio"]["median"] == rep.ratio.median


def test_volume_error_within_counts_the_share_inside_ten_percent():
    from warpspeed.measurement.validation import VolumeError
    e = VolumeError.of([0.0, -0.05, 0.1, 0.1000001, -0.3])
    assert e.n == 5 and e.within == pytest.approx(3 / 5) and e.median == pytest.approx(0.1)


def test_validate_on_another_device_than_the_rows_name(tmp_path, capsys):
    """validate --device: a calibrated (or any) device file estimates every row of the file."""
    f = write_measurements(tmp_path / "m.csv", synthetic_rows(A100, blocks=BLOCKS[:3]))
    slow = tmp_path / "slow.toml"
    slow.write_text('schema_version = 1\nbase = "A100-SXM4-40GB"\nid = "A100-slow"\nname = "slow A100"\n'
                    'dram_bw.value = "700GB/s"\ndram_bw.source = "assumed: a test"\n')
    (same,) = validate(read_measurements(f))
    (other,) = validate(read_measurements(f), device=warpspeed.device(str(slow)))
    assert other.estimated_on == "A100-slow" and same.estimated_on == ""
    assert other.ratio.median < same.ratio.median  # half the bandwidth: lower predictions
    assert main(["validate", str(f), "--device", str(slow)]) == 0
    assert "star3d-r4 on A100-SXM4-40GB (256x128x32, estimated as A100-slow)" in capsys.readouterr().out
    two = write_measurements(tmp_path / "two.csv", synthetic_rows(A100, blocks=BLOCKS[:2])
                             + synthetic_rows(A100, blocks=BLOCKS[2:4], report_as="H100-SXM5-80GB"))
    assert main(["validate", str(two), "--device", "A100-SXM4-40GB"]) == 2
    assert "measured on 2 devices" in capsys.readouterr().err


def test_validate_groups_sweeps_by_domain_and_splits_codes_only_when_a_configuration_repeats(tmp_path):
    def rows(code, blocks, domain=(256, 128, 32), slower=1.0):
        return [dict(r, code=code, GLup_s=r["GLup_s"] / slower)
                for r in synthetic_rows(A100, blocks=blocks, domain=domain)]

    f = tmp_path / "m.csv"
    # one --code auto sweep mixes codes over distinct configurations: one group, code as measured
    write_measurements(f, rows("pystencils", BLOCKS[:2]) + rows("warpspeed", BLOCKS[2:4]))
    (rep,) = validate(read_measurements(f))
    assert len(rep.pairs) == 4 and rep.code == "" and rep.domain == (256, 128, 32)
    assert rep.to_dict()["domain"] == "256x128x32" and rep.to_dict()["code"] is None
    # the replica's code over the same configurations, 2x slower: split by code, each group ranks its own rows
    write_measurements(f, rows("warpspeed", BLOCKS[:2], slower=2.0), append=True)
    reps = validate(read_measurements(f))
    assert [(r.code, len(r.pairs)) for r in reps] == [("pystencils", 2), ("warpspeed", 4)]
    assert all(r.spearman is not None for r in reps)
    assert "(256x128x32, warpspeed code)" in reps[1].title
    # another domain is another sweep, whatever its kernel and device
    write_measurements(f, rows("warpspeed", BLOCKS[:3], domain=(128, 128, 64)), append=True)
    reps = validate(read_measurements(f))
    assert [(r.domain, r.code, len(r.pairs)) for r in reps] == [
        ((256, 128, 32), "pystencils", 2), ((256, 128, 32), "warpspeed", 4), ((128, 128, 64), "", 3)]
    # the same configuration twice with the same code: two runs in one file, named by their lines
    write_measurements(f, rows("warpspeed", BLOCKS[:1], domain=(128, 128, 64)), append=True)
    with pytest.raises(InputError, match=r"block 32x4x8 folding 1x1x1 is measured twice with warpspeed code "
                                         r"\(lines 8 and 11\)"):
        validate(read_measurements(f))


def test_validate_cli_summary_last_line_and_plot(tmp_path, capsys):
    f = write_measurements(tmp_path / "m.csv", synthetic_rows(A100, blocks=BLOCKS[:4]))
    png = tmp_path / "v.png"
    assert main(["validate", str(f), "--plot", str(png)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith("summary: 4 configurations in 1 group; Spearman 1.000; top-1 100.0 %")
    assert "dram_load error median 0.0 %" in out[-1]
    assert png.read_bytes()[:4] == b"\x89PNG"
    assert main(["validate", str(tmp_path / "missing.csv")]) == 2


# ----------------------------------------------------------------------------------------------- calibrate

TRUE_Z = {"hit_rates.l2_z.b": 0.02, "hit_rates.l2_z.c": 2.2}


def _z_rows():
    """DRAM volumes of a 'GPU' whose z-layer hit rate follows another curve than the A100 default."""
    truth = A100.with_overrides(**TRUE_Z)
    rows = []
    for n in (160, 256, 384, 512, 768):
        rows += synthetic_rows(truth, domain=(n, n, 48), blocks=BLOCKS[:3], report_as=A100.id)
    return rows


def test_calibrate_recovers_a_known_z_layer_curve(tmp_path, capsys):
    pytest.importorskip("scipy")
    from warpspeed.measurement.calibration import calibrate
    f = write_measurements(tmp_path / "z.csv", _z_rows())
    cal = calibrate(read_measurements(f), A100, f, date="2026-11-21")
    fits = {fit.curve: fit for fit in cal.fits}
    z = fits["l2_z"].fitted
    assert (z.a, z.b, z.c) == pytest.approx((1.0, 0.02, 2.2), rel=1e-3)
    assert fits["l2_z"].rms < 1e-6
    # the L1 curve is fitted with hit(0) = 1 (calibration.ANCHORED_CURVES): the A100's assumed curve (hit(0) =
    # 0.98) is not of that form, the fit follows its points over their O and keeps a number a file can hold
    l1 = fits["l1"]
    assert l1.anchored and l1.fitted(0.0) == 1.0 and l1.fitted.a < 1e9
    assert max(abs(l1.fitted(o) - h) for o, h in l1.points) < 5e-3
    assert fits["l2_store"].fitted is None  # no partial stores in these blocks
    # the written device file loads and reproduces the synthetic DRAM volumes
    out = tmp_path / "A100-cal.toml"
    assert main(["calibrate", str(f), "--device", "A100-SXM4-40GB", "-o", str(out), "--plot",
                 str(tmp_path / "c.png")]) == 0
    text = capsys.readouterr().out
    assert "l2_z" in text and "wrote" in text and (tmp_path / "c.png").exists()
    dev = warpspeed.device(str(out))
    assert dev.id == "A100-cal" and dev.hit_rates.l2_z.source.startswith("measured: warpspeed calibrate")
    assert "synthetic, driver none, data z.csv" in dev.hit_rates.l2_z.source
    e = warpspeed.estimate("star3d-r4", dev, BLOCKS[0], domain=(512, 512, 48))
    truth = warpspeed.estimate("star3d-r4", A100.with_overrides(**TRUE_Z), BLOCKS[0], domain=(512, 512, 48))
    assert e.volumes_B_per_lup["dram_load"] == pytest.approx(truth.volumes_B_per_lup["dram_load"], rel=1e-3)


def _anchored(b: float, c: float):
    from warpspeed.device import HitRateCurve
    return HitRateCurve(math.exp(b), b, c, "truth")


def test_an_anchored_curve_keeps_every_redundant_load_at_no_oversubscription():
    """a = e^b in the shared form (clipped to 1) is exp(-b (exp(c O) - 1)): hit(0) = 1, falling like the Gompertz
    curve beyond; the published forms stay as they were (the A100's l2_y: 1.0 e^(-0.003 e^(3.99 O)))."""
    curve = _anchored(0.17, 0.107)
    assert curve(0.0) == 1.0
    for o in (0.5, 2.0, 8.0):
        assert curve(o) == pytest.approx(math.exp(-0.17 * math.expm1(0.107 * o)), rel=1e-12)
    assert A100.hit_rates.l2_y(0.0) == pytest.approx(math.exp(-0.003))


@settings(max_examples=15, deadline=None)
@given(b=st.floats(0.01, 2.0), c=st.floats(0.05, 3.0))
def test_the_anchored_fit_recovers_an_anchored_curve(b, c):
    """fit_curve(anchored=True) on points of exp(-b (exp(c O) - 1)) over O = 0.2-8 (where the curve has not
    vanished) gives that curve back, hit(0) = 1 included."""
    pytest.importorskip("scipy")
    from warpspeed.measurement.calibration import fit_curve
    truth = _anchored(b, c)
    grid = [0.2 + 0.13 * i for i in range(60)]
    pts = [(o, truth(o)) for o in grid if truth(o) > 0.05]
    assume(len(pts) >= 8 and max(h for _, h in pts) - min(h for _, h in pts) > 0.05)
    fitted, rms = fit_curve(pts, A100.hit_rates.l1, "test", anchored=True)
    assert fitted(0.0) == 1.0 and fitted.a == pytest.approx(math.exp(fitted.b), rel=1e-12)
    assert rms < 2e-3
    assert max(abs(fitted(o) - truth(o)) for o in [0.0, *grid]) < 5e-3


def test_calibrate_errors(tmp_path):
    f = write_measurements(tmp_path / "m.csv", synthetic_rows(A100, blocks=BLOCKS[:2]))
    assert main(["calibrate", str(f), "--device", "H100-SXM5-80GB", "-o", str(tmp_path / "x.toml")]) == 2
    from warpspeed.measurement.calibration import calibrate
    cal = calibrate(read_measurements(f), A100, f)
    assert all(fit.fitted is None for fit in cal.fits)  # two rows determine nothing: curves kept



def test_calibrated_file_names_a_shipped_base_by_id_and_carries_the_streaming_bandwidth(tmp_path):
    """The file works on every machine (base = the device id); copy rows over a domain far larger than the
    L2 give dram_bw, the best row's measured (read + write) bytes per second; small domains are ignored."""
    from warpspeed.measurement.calibration import calibrate, stream_bandwidth
    from warpspeed.measurement.validation import estimate_measurements
    big, small = (1 << 28, 1, 1), (1 << 20, 1, 1)
    gl = {(128, 1, 1): 100.0, (256, 1, 1): 110.0, (512, 1, 1): 105.0}
    rows = [*synthetic_rows(A100, "copy", big, list(gl), perf=lambda e, i: list(gl.values())[i]),
            *synthetic_rows(A100, "copy", small, list(gl), perf=lambda e, i: 500.0)]  # L2-resident: not DRAM
    f = write_measurements(tmp_path / "copy.csv", rows)
    bw = stream_bandwidth(estimate_measurements(read_measurements(f)), A100, "test")
    assert bw.rows == 3 and bw.configuration == "block 256x1x1 f1x1x1"
    assert bw.GB_s == pytest.approx(110.0 * 16.0, rel=1e-3)  # copy moves 8 B in and 8 B out per cell
    cal = calibrate(read_measurements(f), A100, f, date="2026-11-23")
    text = cal.device_toml()
    assert 'base = "A100-SXM4-40GB"' in text and str(Path(warpspeed.__file__).parent) not in text
    dev = warpspeed.device(str(_write(tmp_path / "cal.toml", text)))
    assert dev.dram_bw_GB_s == pytest.approx(1760.0, abs=0.5) and dev.sources["dram_bw"].startswith("measured: copy")
    # a device from a user's file stays based on that file
    mine = _write(tmp_path / "mine.toml", 'schema_version = 1\nbase = "A100-SXM4-40GB"\nid = "mine"\nname = "m"\n')
    g = write_measurements(tmp_path / "mine.csv", synthetic_rows(A100, "copy", big, list(gl), report_as="mine"))
    own = calibrate(read_measurements(g), warpspeed.device(str(mine)), g).device_toml()
    assert f'base = "{mine}"' in own


def _write(path, text):
    path.write_text(text)
    return path


def test_level_curve_for_points_that_do_not_reach_the_drop():
    """The drop lies beyond the largest observed O (the curve still 0.95 of its level there); the level is the
    least-squares scale of that shape: points on the shape give their level back."""
    from warpspeed.measurement.calibration import level_curve
    start = A100.hit_rates.l2_store
    o = [0.2, 0.5, 0.8, 1.0]
    probe, _ = level_curve([(x, 0.5) for x in o], start, "probe")
    shape = [probe(x) / probe.a for x in o]  # the shape whose scale the level is (independent of the points' level)
    curve, rms = level_curve([(x, 0.97 * s) for x, s in zip(o, shape, strict=True)], start, "test")
    assert curve.a == pytest.approx(0.97) and curve.c == start.c and rms < 1e-9
    assert curve(1.0) == pytest.approx(0.95 * 0.97)  # still on the plateau at the largest observed O
    pts = [(0.2, 0.96), (0.5, 0.98), (0.8, 0.97), (1.0, 0.97)]
    curve, rms = level_curve(pts, start, "test")
    scale = sum(h * s for (_, h), s in zip(pts, shape, strict=True)) / sum(s * s for s in shape)
    assert curve.a == pytest.approx(scale)
    assert curve.a > sum(h for _, h in pts) / len(pts)  # above the points' mean, which the slope pulls down
    assert curve(0.0) > curve(1.0) > curve(3.0) and rms < 0.05
    # no weight at all: the points' mean, not a level of nothing
    assert level_curve(pts, start, "test", [0.0] * len(pts))[0].a == pytest.approx(sum(h for _, h in pts) / len(pts))


def test_a_fit_weighs_each_point_by_its_share_of_the_measured_volume():
    """Points on a known curve, plus outliers with a tiny reusable share (noisy hit rates of rows whose reuse
    is a sliver of their traffic): the weighted fit keeps the curve, the unweighted one is pulled off it."""
    pytest.importorskip("scipy")
    from warpspeed.device import HitRateCurve
    from warpspeed.measurement.calibration import fit_curve, level_curve
    truth = HitRateCurve(1.0, 0.01, 3.0, "truth")
    o = [0.2 * i for i in range(1, 13)]
    pts = [(x, truth(x)) for x in o] + [(x, 0.0) for x in (0.3, 0.5, 0.7)]
    weights = [0.5] * len(o) + [0.005] * 3
    start = HitRateCurve(1.0, 0.05, 2.0, "start")
    weighted, _ = fit_curve(pts, start, "w", weights)
    plain, _ = fit_curve(pts, start, "p")
    assert max(abs(weighted(x) - truth(x)) for x in o) < 0.02
    assert max(abs(plain(x) - truth(x)) for x in o) > 0.05
    # a level curve weighs its points likewise: the sliver row does not drag the level down
    pts = [(0.2, 0.95), (0.4, 0.96), (0.6, 0.1)]
    level, _ = level_curve(pts, start, "l", [1.0, 1.0, 0.01])
    without, _ = level_curve(pts, start, "l", [1.0, 1.0, 0.0])
    assert level.a == pytest.approx(without.a, abs=1e-3) and without.a > 0.95


def test_observed_points_weigh_by_reuse_over_the_measured_volume(tmp_path):
    """l2_store: the partial stores' potential / the measured DRAM store; the (O, hit) pairs are those of
    observed_hit_rates."""
    from warpspeed.measurement.calibration import observed_hit_rates, observed_points
    from warpspeed.measurement.validation import estimate_measurements
    f = write_measurements(tmp_path / "z.csv", _z_rows())
    pairs = estimate_measurements(read_measurements(f))
    pts, plain = observed_points(pairs), observed_hit_rates(pairs)
    assert {c: [(o, h) for o, h, _ in v] for c, v in pts.items()} == plain
    for p in pairs:
        z, m = p.estimate.layer_z, p.measured
        share = z.potential_B_per_lup / m.volume("dram_load")
        if z.oversubscription in [o for o, _, _ in pts["l2_z"]]:
            assert share in [w for _, _, w in pts["l2_z"]]


def test_calibrate_pools_the_rows_of_several_devices_into_one_curve(tmp_path, capsys):
    """Two GPUs with the same (unknown) z-layer curve but different L2 sizes: the pooled fit recovers it,
    every device gets its own file."""
    pytest.importorskip("scipy")
    from warpspeed.measurement.calibration import calibrate
    a80 = warpspeed.device("A100-SXM4-80GB")
    rows = _z_rows()
    for n in (256, 512, 768):
        rows += synthetic_rows(a80.with_overrides(**TRUE_Z), domain=(n, n, 48), blocks=BLOCKS[:3], report_as=a80.id)
    f = write_measurements(tmp_path / "two.csv", rows)
    cal = calibrate(read_measurements(f), [A100, a80], f, date="2026-11-23")
    z = {fit.curve: fit for fit in cal.fits}["l2_z"]
    assert (z.fitted.a, z.fitted.b, z.fitted.c) == pytest.approx((1.0, 0.02, 2.2), rel=1e-3)
    assert len(z.points) > len({fit.curve: fit for fit in calibrate(read_measurements(f), A100, f).fits}["l2_z"].points)
    out = tmp_path / "out"
    out.mkdir()
    assert main(["calibrate", str(f), "--device", A100.id, "--device", a80.id, "-o", str(out)]) == 0
    assert "curves fitted to the pooled rows" in capsys.readouterr().out
    for d in (A100, a80):
        dev = warpspeed.device(str(out / f"{d.id}-calibrated.toml"))
        assert dev.l2_size_bytes == d.l2_size_bytes and dev.hit_rates.l2_z.c == pytest.approx(2.2, rel=1e-3)
    assert main(["calibrate", str(f), "--device", A100.id, "--device", a80.id, "-o", str(out / "x.toml")]) == 2
    assert "names an existing folder" in capsys.readouterr().err

# ------------------------------------------------------------------------------------------ measure (no GPU)

def _inputs(kernel):
    return [((np.arange(math.prod(f.shape) + f.offset) * 7 + i) % 1000).astype(float)
            for i, f in enumerate(kernel.fields)]


def _reference(kernel, config):
    """The same launch in numpy, from the model's folded instructions and validity semantics."""
    arrays = [x[f.offset:] for x, f in zip(_inputs(kernel), kernel.fields, strict=True)]
    grid = grid_of(kernel, config)
    t = np.indices(tuple(g * b for g, b in zip(grid, config.block, strict=True))[::-1]).reshape(3, -1)[::-1]
    env = {"tidx": t[0], "tidy": t[1], "tidz": t[2]}
    fx, fy, fz = config.folding
    nx, ny, nz = kernel.domain

    def valid(o):
        return (fx * t[0] + o[0] < nx) & (fy * t[1] + o[1] < ny) & (fz * t[2] + o[2] < nz)

    instrs = folded_instructions(kernel, config.folding)
    acc = np.zeros(t.shape[1])
    for ins in instrs:
        if not ins.store:
            on = np.any([valid(o) for o in ins.origins], axis=0)
            addr = np.broadcast_to(evaluate(ins.thread_expr, env), on.shape)
            acc[on] += arrays[ins.field][addr[on]]
    out = [a.copy() for a in arrays]
    for ins in instrs:
        if ins.store:
            on = np.any([valid(o) for o in ins.origins], axis=0)
            addr = np.broadcast_to(evaluate(ins.thread_expr, env), on.shape)
            out[ins.field][addr[on]] = acc[on]
    return out


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++")
@pytest.mark.parametrize(("kernel", "domain", "config"), [
    ("star3d-r1", (13, 7, 5), Configuration((8, 4, 2), (1, 1, 1))),
    ("star3d-r4", (11, 6, 9), Configuration((4, 2, 2), (1, 1, 2))),
    ("star2d-r1", (21, 9, 1), Configuration((8, 2, 1), (2, 2, 1))),
    ("box3d-r1", (6, 5, 4), Configuration((4, 4, 2), (1, 2, 1))),
])
def test_generated_cuda_runs_the_model_access_pattern(kernel, domain, config, tmp_path):
    k = warpspeed.find_kernel(kernel, domain=domain)
    program = generated_program(k, config.folding)
    (got,) = run_on_cpu(program, grid_of(k, config), config.block, _inputs(k), tmp_path)
    for g, ref, f in zip(got, _reference(k, config), k.fields, strict=True):
        np.testing.assert_array_equal(g[f.offset:], ref)


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_generated_cuda_compiles_with_nvcc(tmp_path):
    k = warpspeed.find_kernel("star3d-r4")
    cu = tmp_path / "k.cu"
    cu.write_text(cuda_source(k, (1, 1, 2), "ws_star"))
    r = subprocess.run(["nvcc", "-arch=sm_80", "-c", str(cu), "-o", str(tmp_path / "k.o")], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr


def test_measurement_rows_from_timings_and_ncu_rows():
    k = warpspeed.find_kernel("copy", domain=(1024, 512, 8))
    lups = k.valid_lups
    c = Configuration((256, 1, 1))
    ncu_rows = [{"Kernel Name": "ws_copy", METRICS["dram_read_bytes"]: 8.0 * lups,
                 METRICS["dram_write_bytes"]: 8.5 * lups,
                 METRICS["l2_load_sectors"]: lups / 4, METRICS["l2_store_sectors"]: lups / 4,
                 METRICS["l1_wavefronts"]: lups / 16, METRICS["l1_load_sectors"]: lups / 4,
                 METRICS["l1_store_sectors"]: None, METRICS["cycles"]: 1000.0}]
    (row,) = measurement_rows(k, "copy", "A100-SXM4-40GB", [c], [{"registers": 16, "time_s": 1e-3,
                                                                  "time_min_s": 9e-4, "repeats": 20}],
                              {"gpu_name": "x", "driver": "1"}, {c: ncu_rows})
    assert row["GLup_s"] == pytest.approx(lups / 1e-3 / 1e9)
    assert (row["dram_load"], row["dram_store"], row["l2_load"], row["l2_store"]) == pytest.approx((8, 8.5, 8, 8))
    assert row["l1_cycles_per_warp_lup"] == pytest.approx(2.0) and row["cycles"] == 1000.0
    assert set(row) <= set(COLUMNS) and row["block"] == "256x1x1"


def test_measure_without_a_gpu_is_a_clear_error(capsys, tmp_path):
    # cupy is not a dependency; without it (or without a GPU) measure exits 2 and writes nothing
    try:
        import cupy  # noqa: F401
        pytest.skip("cupy is installed here")
    except ImportError:
        pass
    assert main(["measure", "copy", "--device", "A100-SXM4-40GB", "-o", str(tmp_path / "m.csv")]) == 2
    assert "cupy" in capsys.readouterr().err
    assert not (tmp_path / "m.csv").exists()


def test_validation_plot_log_axes_have_readable_ticks():
    """Log axes carry plain labels at 1, 2, 5 x 10^k and no minor labels (none overlap)."""
    pytest.importorskip("matplotlib")
    from matplotlib.ticker import NullFormatter

    from warpspeed.render.plots import validation_plot
    rows = synthetic_rows(A100, blocks=BLOCKS[:4])
    from warpspeed.measurement.measurements import Measurement
    ms = [Measurement(r["device"], r["kernel"], tuple(map(int, r["block"].split("x"))), (1, 1, 1),
                      tuple(map(int, r["domain"].split("x"))), r["GLup_s"], r["registers"],
                      {k: float(r[k]) for k in ("l2_load", "dram_load")}) for r in rows]
    fig = validation_plot(validate(ms))
    ax = fig.axes[0]
    fig.canvas.draw()
    assert ax.get_xscale() == "log" and isinstance(ax.xaxis.get_minor_formatter(), NullFormatter)
    labels = [t.get_text() for t in ax.get_yticklabels() if t.get_text()]
    assert labels and all("^" not in t and "times" not in t for t in labels)
    assert ax.get_title().startswith("performance\n") and ax.get_xlabel() == "measured (GLup/s)"
    assert ax.get_xlim() == ax.get_ylim()  # y = x is the diagonal
    for axis in (ax.xaxis, ax.yaxis):  # at most 6 labels, and no two of them overlap
        shown = [t for t in axis.get_ticklabels() if t.get_text()]
        assert 1 <= len(shown) <= 6
        boxes = sorted((t.get_window_extent() for t in shown), key=lambda b: (b.x0, b.y0))
        assert not any(a.overlaps(b) for a, b in zip(boxes, boxes[1:], strict=False))


def test_calibrate_recovers_the_latency_models_parallelism(tmp_path, capsys):
    """Rows timed as the latency model predicts them on a GPU with 6 sectors in flight per warp, 0.04 ns of DRAM
    time per run, an efficiency exponent of 0.5 and 40 L2 requests per ns: calibrate (which starts from the
    shipped Hopper values) finds those numbers again."""
    pytest.importorskip("scipy")
    from warpspeed.measurement.calibration import MIN_POINTS, calibrate
    from warpspeed.render.report import calibration_text
    h100 = warpspeed.device("H100-SXM5-80GB")
    truth = h100.with_overrides(sectors_in_flight_per_warp=6, dram_run_time="0.04ns", dram_run_exponent=0.5,
                                l2_request_rate="40GHz")
    rows = []
    for kernel, domain in (("star3d-r1", (512, 256, 128)), ("copy", (1 << 25, 1, 1))):
        for b in ((1, 16, 16), (4, 8, 8), (16, 4, 4), (64, 4, 1), (256, 1, 1)):
            block = b if kernel != "copy" else (b[0] * b[1] * b[2], 1, 1)
            for regs in (32, 128, 255):
                e = warpspeed.estimate(kernel, truth, block, domain=domain, registers=regs).to_dict()
                v = e["volumes_B_per_lup"]
                rows.append({"device": h100.id, "gpu_name": "synthetic", "driver": "none", "kernel": kernel,
                             "block": triple_text(block), "folding": "1x1x1", "domain": triple_text(domain),
                             "registers": regs, "repeats": 1, "time_s": e["time_s"], "GLup_s": e["performance_GLup_s"],
                             **{k: v[k] for k in ("l1_load", "l2_load", "l2_store", "dram_load", "dram_store")}})
    f = write_measurements(tmp_path / "lat.csv", rows)
    cal = calibrate(read_measurements(f), h100, f, date="2026-11-23")
    pf = cal.parallelism
    assert pf.sectors_in_flight_per_warp == 6
    assert pf.dram_run_time_s == pytest.approx(0.04e-9, rel=0.02)
    assert pf.dram_run_exponent == pytest.approx(0.5, abs=0.01)
    assert pf.l2_requests_per_ns == pytest.approx(40, rel=0.02)
    # the rows one cell wide are bound by their L2 requests: that is what pins the rate down
    narrow = warpspeed.estimate("star3d-r1", truth, (1, 16, 16), domain=(512, 256, 128), registers=32)
    assert narrow.limiter == "L2req" and narrow.performance.detail["l2_requests_per_lup"] > 0
    # the JSON keeps the bytes per run too (at the calibrated device's dram_bw), beside the time and exponent
    d = pf.to_dict()
    assert d["dram_run_overhead_bytes"] == pytest.approx(0.04 * h100.dram_bw_GB_s, rel=0.02)
    assert d["dram_run_time_ns"] == pytest.approx(0.04, rel=0.02) and d["sectors_in_flight_per_warp"] == 6
    # these exact volumes do not pin every hit-rate curve down: such a curve is kept, not an error
    kept = [fit for fit in cal.fits if fit.fitted is None and len(fit.points) >= MIN_POINTS]
    assert all(f"{fit.curve:<9} {len(fit.points)} points: the fit did not converge; kept" in calibration_text(cal)
               for fit in kept)
    assert pf.rows == 30 and pf.rms_log_ratio < 1e-3
    assert main(["calibrate", str(f), "--device", h100.id, "-o", str(tmp_path / "c.toml")]) == 0
    assert ("sectors_in_flight_per_warp 6, dram_run_time 0.04 ns, dram_run_exponent 0.5, L2 requests 40 per ns "
            "from 30 timed rows") in capsys.readouterr().out
    dev = warpspeed.device(str(tmp_path / "c.toml"))
    assert dev.sectors_in_flight_per_warp == 6 and dev.dram_run_overhead_bytes is None
    assert dev.dram_run_time_s == pytest.approx(0.04e-9, rel=0.02)
    assert dev.dram_run_exponent == pytest.approx(0.5, abs=0.01)
    assert dev.l2_requests_per_ns == pytest.approx(40, rel=0.02)
    assert dev.sources["sectors_in_flight_per_warp"].startswith("measured: fitted with the latency model to 30")


def test_validation_plot_has_band_statistics_title_and_one_legend():
    """Each panel shades +-10 % around y = x and states its median error and share within 10 % (the numbers
    of the text report); the figure has a title, one legend and no empty slots."""
    pytest.importorskip("matplotlib")
    from matplotlib.collections import PolyCollection

    from warpspeed.measurement.measurements import read_measurements
    from warpspeed.render.plots import validation_plot

    reports = validate(read_measurements(HOPPER_DATA / "star3d-r4-H100.csv"))
    fig = validation_plot(reports)
    keys = ["GLup_s", *reports[0].volume_errors]
    assert len(fig.axes) == len(keys) == 7 and all(ax.get_visible() for ax in fig.axes)
    for ax in fig.axes:
        assert any(isinstance(c, PolyCollection) for c in ax.collections), ax.get_title()
        assert "% within 10 %" in ax.get_title()
    dram = next(ax for ax in fig.axes if ax.get_title().startswith("dram_load"))
    err = reports[0].volume_errors["dram_load"]
    assert f"{100 * err.within:.0f} % within 10 %" in dram.get_title()
    assert fig.get_suptitle().startswith("predicted vs measured: 168 configurations, star3d-r4 on H100-SXM5-80GB")
    assert len(fig.legends) == 1 and not any(ax.get_legend() for ax in fig.axes)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert labels[1:] == ["within 10 %", "predicted = measured"]


def test_calibration_plot_draws_a_fit_solid_only_where_observations_support_it():
    pytest.importorskip("matplotlib")
    pytest.importorskip("scipy")
    from warpspeed.measurement.calibration import calibrate
    from warpspeed.measurement.measurements import read_measurements
    from warpspeed.render.plots import calibration_plot

    f = HOPPER_DATA / "star3d-r4-H100.csv"
    cal = calibrate(read_measurements(f), warpspeed.device("H100-SXM5-80GB"), f, date="2026-11-25")
    fig = calibration_plot(cal)
    for ax, fit in zip(fig.axes, cal.fits, strict=True):
        if fit.fitted is None or not fit.points:
            continue
        observed = [o for o, _ in fit.points]
        solid = [ln for ln in ax.get_lines() if ln.get_label() == "fitted"]
        assert len(solid) == 1, fit.curve
        assert (min(solid[0].get_xdata()), max(solid[0].get_xdata())) == pytest.approx((min(observed), max(observed)))
        beyond = [ln for ln in ax.get_lines() if ln.get_linestyle() == ":" and len(ln.get_xdata())]
        assert beyond and all(max(ln.get_xdata()) <= min(observed) or min(ln.get_xdata()) >= max(observed)
                              for ln in beyond)
