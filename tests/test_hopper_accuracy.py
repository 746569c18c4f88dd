"""Accuracy on real GPUs: the committed H100 and H200 measurements (tests/data/hopper, see its README)
against the shipped device data.

FLOORS holds, per sweep, the figures the model reached when the data landed, rounded down a little: the
Spearman rank correlation, top-1 (measured GLup/s of the predicted best in % of the measured best) and, per
compared quantity, the share of configurations within 10 % of the measurement. A model change that lowers
one of them fails here; one that raises them should raise the floor. Deterministic: no timing, no GPU.
"""

import functools
import math
from pathlib import Path

import pytest

import warpspeed
from warpspeed.calibration import stream_bandwidth
from warpspeed.measurements import read_measurements
from warpspeed.validation import estimate_measurements, validate

DATA = Path(__file__).parent / "data" / "hopper"
DEVICES = {"H100": "H100-SXM5-80GB", "H200": "H200-SXM-141GB"}

# (file, kernel, domain) -> floors
FLOORS = {
    ('bandwidth-copy-H100.csv', 'copy', '268435456x1x1'):
        dict(top1=98.5, within=dict(l1_load=0.98, l2_load=0.98, l2_store=0.98, dram_load=0.98, dram_store=0.98)),
    ('bandwidth-copy-H100.csv', 'copy', '1048576x1x1'):
        dict(top1=81.0, within=dict(l1_load=0.98, l2_load=0.98, l2_store=0.98, dram_load=0.98)),
    ('bandwidth-copy-H200.csv', 'copy', '268435456x1x1'):
        dict(top1=87.5, within=dict(l1_load=0.98, l2_load=0.98, l2_store=0.98, dram_load=0.98, dram_store=0.98)),
    ('bandwidth-copy-H200.csv', 'copy', '1048576x1x1'):
        dict(top1=83.0, within=dict(l1_load=0.98, l2_load=0.98, l2_store=0.98, dram_load=0.98)),
    ('lbm-H100.csv', 'd3q19-srt', '256x256x256'):
        dict(spearman=0.97, top1=99.5, within=dict(l1_load=0.98, l2_load=0.83, l2_store=0.98, dram_load=0.65,
                    dram_store=0.85)),
    ('lbm-H100.csv', 'd3q15-allen-cahn', '256x256x256'):
        dict(spearman=0.89, top1=77.5, within=dict(l1_load=0.98, l2_load=0.83, l2_store=0.98, dram_load=0.98,
                    dram_store=0.98)),
    ('lbm-H200.csv', 'd3q19-srt', '256x256x256'):
        dict(spearman=0.96, top1=96.0, within=dict(l1_load=0.98, l2_load=0.83, l2_store=0.98, dram_load=0.83,
                    dram_store=0.98)),
    ('lbm-H200.csv', 'd3q15-allen-cahn', '256x256x256'):
        dict(spearman=0.89, top1=78.5, within=dict(l1_load=0.98, l2_load=0.83, l2_store=0.98, dram_load=0.98,
                    dram_store=0.98)),
    ('lbm-replica-H100.csv', 'd3q19-srt', '256x256x256'):
        dict(spearman=0.97, top1=99.5, within=dict()),
    ('lbm-replica-H200.csv', 'd3q19-srt', '256x256x256'):
        dict(spearman=0.97, top1=99.5, within=dict()),
    ('occupancy-lbm-H100.csv', 'd3q19-srt', '256x256x256'):
        dict(spearman=0.97, top1=94.0, within=dict(l1_load=0.98, l2_load=0.98, l2_store=0.98, dram_load=0.55,
                    dram_store=0.7, l1_cycles=0.0)),
    ('occupancy-lbm-H100.csv', 'd3q15-allen-cahn', '256x256x256'):
        dict(spearman=0.95, top1=93.0, within=dict(l1_load=0.98, l2_load=0.98, l2_store=0.98, dram_load=0.81,
                    dram_store=0.9, l1_cycles=0.0)),
    ('occupancy-lbm-H200.csv', 'd3q19-srt', '256x256x256'):
        dict(spearman=0.98, top1=92.0, within=dict(l1_load=0.98, l2_load=0.98, l2_store=0.98, dram_load=0.47,
                    dram_store=0.57, l1_cycles=0.0)),
    ('occupancy-lbm-H200.csv', 'd3q15-allen-cahn', '256x256x256'):
        dict(spearman=0.94, top1=85.5, within=dict(l1_load=0.98, l2_load=0.98, l2_store=0.98, dram_load=0.7,
                    dram_store=0.86, l1_cycles=0.0)),
    ('occupancy-star3d-r4-H100.csv', 'star3d-r4', '640x512x512'):
        dict(spearman=0.94, top1=95.5, within=dict(l1_load=0.98, l2_load=0.8, l2_store=0.98, dram_load=0.6,
                    dram_store=0.91, l1_cycles=0.0)),
    ('occupancy-star3d-r4-H200.csv', 'star3d-r4', '640x512x512'):
        dict(spearman=0.95, top1=86.5, within=dict(l1_load=0.98, l2_load=0.85, l2_store=0.98, dram_load=0.57,
                    dram_store=0.95, l1_cycles=0.01)),
    ('star3d-r4-H100.csv', 'star3d-r4', '640x512x512'):
        dict(spearman=0.87, top1=93.5, within=dict(l1_load=0.98, l2_load=0.76, l2_store=0.98, dram_load=0.65,
                    dram_store=0.93, l1_cycles=0.11)),
    ('star3d-r4-H200.csv', 'star3d-r4', '640x512x512'):
        dict(spearman=0.92, top1=85.0, within=dict(l1_load=0.98, l2_load=0.77, l2_store=0.98, dram_load=0.64,
                    dram_store=0.95, l1_cycles=0.11)),
}

# rows per file, as the data's README lists them: the committed files are complete
ROWS = {"star3d-r4": 168, "repeat-star3d-r4": 56, "lbm": 98, "lbm-replica": 49, "occupancy-star3d-r4": 91,
        "occupancy-lbm": 154, "bandwidth-copy": 8}


@functools.cache
def _reports(name: str) -> dict:
    return {(r.kernel, "x".join(map(str, r.domain))): r for r in validate(read_measurements(DATA / name))}


def test_the_committed_measurements_are_complete():
    for stem, n in ROWS.items():
        for gpu in ("H100", "H200"):
            if stem == "repeat-star3d-r4" and gpu == "H100":
                continue
            rows = read_measurements(DATA / f"{stem}-{gpu}.csv")
            assert len(rows) == n, f"{stem}-{gpu}.csv"
            assert {m.device for m in rows} == {DEVICES[gpu]}
            assert all(m.values.get("driver") == "580.159.04" for m in rows)


@pytest.mark.parametrize("name, kernel, domain", list(FLOORS))
def test_accuracy_does_not_fall_below_what_was_reached(name, kernel, domain):
    r = _reports(name)[(kernel, domain)]
    floor = FLOORS[(name, kernel, domain)]
    if "spearman" in floor:
        assert r.spearman >= floor["spearman"], f"Spearman {r.spearman:.3f}"
    assert r.top1_percent >= floor["top1"], f"top-1 {r.top1_percent:.1f} %"
    for key, share in floor["within"].items():
        got = r.volume_errors[key].within
        assert got >= share, f"{key}: {100 * got:.1f} % within 10 %, floor {100 * share:.0f} %"


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
