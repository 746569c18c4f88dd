"""What a reader sees: no hit rate of 1e-278, no '1e+02 %', a domain too large for the GPU in the headline,
and the device list's columns explained."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import warpspeed
from warpspeed.device.hitrates import NEGLIGIBLE_HIT_RATE, HitRateCurve
from warpspeed.interface.cli import main
from warpspeed.model.notes import percent
from warpspeed.render.report import headline, text_report


def _all_hit_rates(e) -> list[float]:
    causes = (e.l1_capacity, e.layer_y, e.layer_z, e.partial_stores)
    return [c.hit_rate for c in causes] + [c.hit_B_per_lup for c in causes] + \
        [v for f in e.fields for v in (f.dram_layer_y_hit, f.dram_layer_z_hit)]


def test_a_vanishing_hit_rate_is_zero_in_the_result_not_only_on_screen():
    """box3d-r1 on the MI300X in (256, 1, 1) blocks: the y-layer hit was 1.0e-59 in JSON, 0 on screen."""
    e = warpspeed.estimate("box3d-r1", "MI300X", (256, 1, 1), domain=(256, 128, 128))
    assert e.layer_y.oversubscription > 1 and e.layer_y.hit_rate == 0.0
    assert all(v == 0.0 or v >= NEGLIGIBLE_HIT_RATE for v in _all_hit_rates(e))


@given(a=st.floats(0, 1), b=st.floats(1e-6, 10), c=st.floats(0.01, 50), o=st.floats(0, 1e6))
def test_hit_rate_curves_give_zero_or_a_rate_that_counts(a, b, c, o):
    curve = HitRateCurve(a, b, c, "test")
    h = curve(o)
    assert h == 0.0 or NEGLIGIBLE_HIT_RATE <= h <= 1.0
    many = curve(np.array([o]))[0]
    # numpy's exp and math's may differ in the last digit: right at the threshold one path may give 0
    assert many == pytest.approx(h, rel=1e-9, abs=2 * NEGLIGIBLE_HIT_RATE)
    if not NEGLIGIBLE_HIT_RATE / 2 < h < 2 * NEGLIGIBLE_HIT_RATE:
        assert (many == 0.0) == (h == 0.0)


@pytest.mark.parametrize("share, text", [(0.5, "50 %"), (0.997, "99.7 %"), (0.9996, "over 99.9 %"),
                                         (0.0004, "under 0.1 %"), (0.123456, "12.3 %")])
def test_percentages_never_read_1e02(share, text):
    assert percent(share) == text


def test_a_domain_larger_than_the_gpu_is_in_the_headline():
    e = warpspeed.estimate("star3d-r1", "A100-SXM4-40GB", (32, 4, 8), domain=(4000, 4000, 400))
    lines = headline(e).splitlines()
    assert lines[1].startswith("this domain does not fit on one GPU: the arrays need 103 GB, more than the 40 GB")
    assert text_report(e).count("does not fit") == 1  # not again at the end
    small = warpspeed.estimate("star3d-r1", "A100-SXM4-40GB", (32, 4, 8), domain=(256, 256, 256))
    assert "does not fit" not in text_report(small)


def test_a_tiny_domain_notes_idle_threads_as_a_readable_percentage():
    e = warpspeed.estimate("star3d-r1", "A100-SXM4-40GB", (1024, 1, 1), domain=(3, 3, 3))
    note, = (n for n in e.notes if "have no cell" in n)
    assert "99.7 % of the launched threads" in note and "e+" not in note


def test_the_device_list_explains_its_columns(capsys):
    assert main(["devices"]) == 0
    out = capsys.readouterr().out
    header = out.splitlines()[0]
    assert "L2 eff" in header and "eff " not in header.replace("L2 eff", "")
    assert "L2 eff: the L2 capacity in MiB that the model's capacity misses use" in " ".join(out.split())
    row = next(line for line in out.splitlines() if line.startswith("A100-SXM4-40GB"))
    assert row.split()[3:5] == ["40", "20"] and math.isclose(float(row.split()[2]), 1.41)
