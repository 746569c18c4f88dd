"""Answers on a device whose family's model data was never measured say so (issue 44, item 4): the estimate's,
ranking's, comparison's and projection's JSON carry ``device_validation``, their text headlines a 'first
estimate' line, and a ranking there lists more configurations to measure (confidence.UNMEASURED); on a measured
family (Hopper) nothing changes but the key."""

import dataclasses
import json

import jsonschema
import pytest

import warpspeed
from warpspeed import schemas
from warpspeed.application.projection import project
from warpspeed.model.device_validation import DeviceValidation, device_validation
from warpspeed.render.compare_report import comparison_headline
from warpspeed.render.projection_report import projection_lines
from warpspeed.render.report import headline, ranking_headline
from warpspeed.studies.confidence import MEASURED, UNMEASURED, assess

H100 = warpspeed.device("H100-SXM5-80GB")
H100_AS_BLACKWELL = dataclasses.replace(H100, id="H100-as-blackwell", architecture="blackwell")
"""The H100's numbers in the blackwell family (assumed from Hopper): the same predictions, an unmeasured family."""
DOMAIN = (256, 128, 128)
THREADS = (256, 512, 1024)


def ranked(device):
    return warpspeed.rank("star3d-r4", device, threads=THREADS, domain=DOMAIN, jobs=1)


@pytest.fixture(scope="module")
def rankings():
    return {"measured": ranked(H100), "assumed": ranked(H100_AS_BLACKWELL)}


def test_each_family_says_how_far_its_data_was_checked():
    h100, a100, b200 = (device_validation(warpspeed.device(d)) for d in ("H100-SXM5-80GB", "A100-SXM4-40GB", "B200"))
    assert (h100.family, h100.status, h100.validation, h100.data_from) == ("hopper", "measured", "measured", ())
    assert h100.measured_on == ("H100-SXM5-80GB", "H200-SXM-141GB") and h100.measured
    # the A100's curves and L1 rule are the paper's (published), its memory parallelism Hopper's
    assert a100.validation == "published, partly assumed from hopper" and a100.status == "assumed"
    assert a100.data_from == ("hopper",) and "A100 (Ernst et al.)" in a100.measured_on and not a100.measured
    # Blackwell takes all of Hopper's: the GPUs behind its data are Hopper's
    assert (b200.family, b200.status, b200.validation, b200.data_from) == ("blackwell", "assumed",
                                                                          "assumed from hopper", ("hopper",))
    assert b200.measured_on == h100.measured_on
    assert device_validation(warpspeed.device("RTX-5090")).validation == "assumed from ada"


def test_an_estimate_carries_the_validation_and_its_headline_says_first_estimate_where_unmeasured():
    hopper = warpspeed.estimate("star3d-r4", H100, (32, 4, 8), domain=DOMAIN)
    a100 = warpspeed.estimate("star3d-r4", "A100-SXM4-40GB", (32, 4, 8), domain=DOMAIN)
    b200 = warpspeed.estimate("star3d-r4", "B200", (32, 4, 8), domain=DOMAIN)
    assert hopper.to_dict()["device_validation"]["status"] == "measured"
    assert len(headline(hopper).splitlines()) == 1  # a measured device's headline is as it was
    assert headline(a100).splitlines()[1] == ("A100-SXM4-40GB: model data published, partly assumed from hopper, "
                                              "never measured on ampere -- a first estimate")
    assert headline(b200).splitlines()[1] == ("B200: model data assumed from hopper, never measured on blackwell "
                                              "-- a first estimate")
    d = b200.to_dict()
    keys = list(d)
    assert keys.index("device_validation") == keys.index("unvalidated") + 1  # beside the access pattern's
    assert d["device_validation"] == {"family": "blackwell", "status": "assumed", "validation": "assumed from hopper",
                                      "data_from": ["hopper"], "measured_on": ["H100-SXM5-80GB", "H200-SXM-141GB"]}
    assert warpspeed.Estimate.from_dict(d) == b200  # a rank cache reads it back
    assert DeviceValidation.from_dict(d["device_validation"]) == device_validation(warpspeed.device("B200"))


def test_a_ranking_on_an_unmeasured_family_says_so_and_lists_more_to_measure(rankings):
    measured, assumed = rankings["measured"], rankings["assumed"]
    # the same device numbers: the same order, only the confidence differs
    assert [r.configuration for r in measured.results] == [r.configuration for r in assumed.results]
    m, a = measured.confidence, assumed.confidence
    assert (m.relative_error, a.relative_error) == (MEASURED.relative_error, UNMEASURED.relative_error) == (0.05, 0.2)
    assert len(a.measure) > len(m.measure) and a.measure[:len(m.measure)] == m.measure
    best = assumed.best.performance_GLup_s
    within = [r.configuration for r in assumed.results if r.performance_GLup_s >= 0.8 * best]
    assert a.contenders_total == len(within) and a.measure == tuple(within[:UNMEASURED.measure_at_most])
    assert any("never measured on blackwell: contenders are those within 20 % (5 % where measured), up to 24 "
               "listed" in reason for reason in a.reasons)
    lines = ranking_headline(assumed).splitlines()
    assert lines[1] == (f"H100-as-blackwell: model data assumed from hopper, never measured on blackwell -- a first "
                        f"estimate; measure the {len(a.measure)} configurations listed")
    doc = assumed.to_dict()
    assert doc["device_validation"]["status"] == "assumed" and doc["device_validation"]["family"] == "blackwell"
    assert doc["confidence"]["relative_error"] == 0.2 and len(doc["confidence"]["measure"]) == len(a.measure)


def test_a_ranking_on_the_measured_family_is_as_before(rankings):
    """The H100's confidence is the measured rule's (5 %, 8 listed) and its headline has no validation line."""
    r = rankings["measured"]
    best = r.best.performance_GLup_s
    within = [x.configuration for x in r.results if x.performance_GLup_s >= 0.95 * best]
    assert r.confidence.measure == tuple(within[:8])
    assert r.confidence == assess(r.results, 0.05)
    assert not any("never measured" in line for line in ranking_headline(r).splitlines())
    doc = r.to_dict()
    assert doc["device_validation"]["status"] == "measured"
    assert [c["block"] for c in doc["confidence"]["measure"]] == [list(c.block) for c in within[:8]]


def test_a_screened_ranking_on_an_unmeasured_family_keeps_the_full_rankings_confidence(rankings):
    """Screening estimates every configuration within the wider share, so the contenders are the full ranking's."""
    screened = warpspeed.rank("star3d-r4", H100_AS_BLACKWELL, threads=THREADS, domain=DOMAIN, screen=1)
    assert screened.confidence == rankings["assumed"].confidence


def test_the_json_validates_against_the_schemas(rankings):
    est, rnk = (jsonschema.Draft202012Validator(schemas.load(n)) for n in ("estimate", "rank"))
    doc = json.loads(json.dumps(rankings["assumed"].to_dict()))
    assert rnk.is_valid(doc) and est.is_valid(doc["best"])
    for bad in ({**doc["device_validation"], "status": "guessed"}, {k: v for k, v in doc["device_validation"].items()
                                                                    if k != "family"}):
        assert not est.is_valid({**doc["best"], "device_validation": bad})
        assert not rnk.is_valid({**doc, "device_validation": bad})
    missing = {k: v for k, v in doc["best"].items() if k != "device_validation"}
    assert not est.is_valid(missing)  # every estimate carries it


def test_a_comparison_on_an_unmeasured_device_widens_its_share_and_says_so():
    c = warpspeed.compare(["star3d-r1", "star3d-r4"], "B200", threads=256, domain=DOMAIN)
    doc = c.to_dict()
    assert doc["device_validation"]["validation"] == "assumed from hopper"
    assert doc["confidence"]["relative_error"] == 0.2
    jsonschema.validate(json.loads(json.dumps(doc)), schemas.load("compare"))
    assert comparison_headline(c).splitlines()[1].startswith(
        "B200: model data assumed from hopper, never measured on blackwell -- a first estimate")
    h = warpspeed.compare(["star3d-r1", "star3d-r4"], H100, threads=256, domain=DOMAIN)
    assert h.to_dict()["device_validation"]["status"] == "measured" and h.confidence.relative_error == 0.05
    assert not any("never measured" in line for line in comparison_headline(h).splitlines())


def test_a_projection_names_both_devices_statuses():
    p = project("star3d-r4", H100, "B200", threads=(256,), domain=DOMAIN)
    doc = p.to_dict()
    assert doc["from_validation"]["status"] == "measured" and doc["to_validation"]["status"] == "assumed"
    assert doc["to_validation"]["family"] == "blackwell"
    lines = projection_lines(p)
    assert lines[1] == "B200: model data assumed from hopper, never measured on blackwell -- a first estimate"
    assert not any(line.startswith("H100-SXM5-80GB: model data") for line in lines)
    back = project("star3d-r4", "A100-SXM4-40GB", "B200", threads=(256,), domain=DOMAIN)
    assert [line.split(":")[0] for line in projection_lines(back)[1:3]] == ["A100-SXM4-40GB", "B200"]
    assert back.to_dict()["from_validation"]["validation"] == "published, partly assumed from hopper"
