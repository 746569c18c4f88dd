"""`warpspeed calibrate` fits the L1 line rule's prices (calibration.fit_l1_line_rule) and reports them, without
writing them to the device file (docs/model.md, "Diagonal neighbours")."""

from pathlib import Path

import pytest

import warpspeed
from warpspeed.measurement.calibration import L1RuleFit, calibrate
from warpspeed.measurement.measurements import read_measurements
from warpspeed.render.report import calibration_text

DATA = Path(__file__).resolve().parents[1] / "data" / "hopper"


def test_the_fit_as_a_device_file_holds_it():
    fit = L1RuleFit(load_line=0.2176, missed_line=0.67390, store_line=0.134, per_warp=4.40, rows=10, rms=0.1)
    assert fit.device_values() == {"l1_load_lines_per_wavefront": 5, "l1_store_lines_per_wavefront": 7,
                                   "l1_wavefronts_per_warp": 4, "l1_wavefronts_per_missed_line": 0.674}
    free = L1RuleFit(load_line=2.0, missed_line=0.0, store_line=0.0, per_warp=0.4, rows=10, rms=0.1).device_values()
    assert free == {"l1_load_lines_per_wavefront": 1, "l1_store_lines_per_wavefront": 1024,
                    "l1_wavefronts_per_warp": 0, "l1_wavefronts_per_missed_line": 0.01}
    assert fit.to_dict()["device_values"] == fit.device_values()


def test_calibrate_reports_the_line_rule_and_writes_none_of_it():
    pytest.importorskip("scipy")
    h100 = warpspeed.device("H100-SXM5-80GB")
    cal = calibrate(read_measurements(DATA / "lbm-H100.csv"), h100, "lbm-H100.csv", date="2026-11-27")
    lr = cal.l1_rule
    assert lr is not None and lr.rows == 98
    assert lr.rms < 0.1  # one sweep does not pin every price down (the findings test fits the pooled rows)
    assert cal.to_dict()["l1_rule"]["rows"] == 98
    assert "l1 rule   a further load line" in calibration_text(cal) and "reported, not written" in calibration_text(cal)
    toml = cal.device_toml()
    assert "l1_wavefronts_per_missed_line" not in toml and "lines_per_wavefront" not in toml
    assert warpspeed.device("A100-SXM4-40GB").l1_load_lines_per_wavefront is None  # the pairing rule: nothing to fit
