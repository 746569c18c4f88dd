"""warpspeed.studies.confidence: contenders of a ranking, access patterns outside the validated ones, what to measure.

The figures on real data (the 5 % resolution, contenders reaching the measured best) are checked in
tests/measurement/test_hopper_accuracy.py, which already estimates every committed sweep."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from made_results import failed, ranked

import warpspeed
from warpspeed.expressions import THREAD_VARS
from warpspeed.expressions.operations import evaluate
from warpspeed.model.footprint import folded_instructions
from warpspeed.model.patterns import strided_fields
from warpspeed.render.report import headline, ranking_headline
from warpspeed.studies.confidence import MEASURE_AT_MOST, RELATIVE_ERROR, assess
from warpspeed.studies.ranking import RankedResult
from warpspeed.studies.space import Configuration

H100 = warpspeed.device("H100-SXM5-80GB")
SECTOR = H100.l1_sector_bytes


def structure_kernel(components: int, element_bytes: int, stride_axis_first: bool = True):
    """A copy of ``components`` values per cell; stored side by side (array of structures) when
    ``stride_axis_first``, else one array per component (structure of arrays)."""
    n = 64
    shape = (components, n, n, n) if stride_axis_first else (n, n, n, components)
    index = [("0", "tidx", "tidy", "tidz")] if stride_axis_first else [("tidx", "tidy", "tidz", "0")]
    spec = {"name": "structs", "precision": "fp64", "flops_per_lup": 1, "domain": [n, n, n], "field": [
        {"name": "src", "element_bytes": element_bytes, "shape": list(shape), "offset": 0, "loads": index,
         "stores": []},
        {"name": "dst", "element_bytes": element_bytes, "shape": list(shape), "offset": 0, "loads": [],
         "stores": index}]}
    return warpspeed.kernel_from_dict(spec)


def lanes_on_own_sectors(kernel, folding) -> bool:
    """Brute force: the byte addresses of the 32 lanes of a warp along x, for every memory instruction; True
    when some instruction puts each lane on a sector of its own."""
    tx = np.arange(32)
    for ins in folded_instructions(kernel, folding):
        elements = evaluate(ins.thread_expr, {THREAD_VARS[0]: tx, THREAD_VARS[1]: 0, THREAD_VARS[2]: 0})
        sectors = (np.asarray(elements) + ins.offset) * ins.element_bytes // SECTOR
        if len(set(np.broadcast_to(sectors, (32,)).tolist())) == 32:
            return True
    return False


@settings(max_examples=60, deadline=None)
@given(components=st.integers(1, 40), element_bytes=st.sampled_from([4, 8]), fold_x=st.sampled_from([1, 2, 4, 8]),
       aos=st.booleans())
def test_a_pattern_is_unvalidated_exactly_when_every_lane_of_a_warp_has_its_own_sector(components, element_bytes,
                                                                                     fold_x, aos):
    k = structure_kernel(components, element_bytes, aos)
    folding = (fold_x, 1, 1)
    reasons = strided_fields(k, folded_instructions(k, folding), SECTOR)
    assert bool(reasons) == lanes_on_own_sectors(k, folding)
    if reasons:
        stride = (components if aos else 1) * element_bytes * fold_x
        assert reasons == (f"fields 'src', 'dst': threads adjacent in x are {stride} B apart, each on its own "
                           f"{SECTOR} B sector (array of structures, x in a slower dimension, or folding in x): "
                           f"an access pattern the model was not validated on",)


def test_the_array_of_structures_lbm_kernel_is_unvalidated_and_its_soa_twin_is_not():
    aos = warpspeed.estimate("d3q19-srt:layout=zyxf", H100, (64, 4, 2), domain=(64, 64, 64), registers=92)
    soa = warpspeed.estimate("d3q19-srt", H100, (64, 4, 2), domain=(64, 64, 64), registers=92)
    assert len(aos.unvalidated) == 1 and "152 B apart" in aos.unvalidated[0]  # 19 populations of 8 B
    assert soa.unvalidated == ()
    assert aos.to_dict()["unvalidated"] == list(aos.unvalidated) and soa.to_dict()["unvalidated"] == []
    assert warpspeed.Estimate.from_dict(aos.to_dict()).unvalidated == aos.unvalidated
    assert headline(aos).splitlines()[1] == f"unvalidated: {aos.unvalidated[0]}"
    assert len(headline(soa).splitlines()) == 1


BASE = warpspeed.estimate("star3d-r1", H100, (32, 4, 1), domain=(64, 64, 64))


def result(perf: float, block=(32, 4, 1), folding=(1, 1, 1), unvalidated=(), error=None) -> RankedResult:
    """A ranked result with the given performance and reasons (an estimate's other numbers do not matter)."""
    if error:
        return failed(BASE, block, error, folding)
    return ranked(BASE, block, perf, folding, unvalidated=unvalidated)


def test_the_levels():
    confident = assess([result(100), result(94.9, (64, 2, 1)), result(50, (8, 8, 8))])
    assert confident.level == "confident" and confident.contenders_total == 1
    assert confident.measure == (Configuration((32, 4, 1), (1, 1, 1)),)
    assert confident.reasons == ("the next best is predicted 5.1 % behind, beyond the model's 5 %",)
    close = assess([result(100), result(95.0, (64, 2, 1)), result(94.9, (8, 8, 8))])
    assert close.level == "close" and close.contenders_total == 2
    assert close.contenders == close.measure == (Configuration((32, 4, 1), (1, 1, 1)),
                                                 Configuration((64, 2, 1), (1, 1, 1)))
    assert close.reasons[0].startswith("2 configurations are predicted within the model's 5 % of the best: "
                                       "32x4x1, 64x2x1")
    # configurations that cannot launch are ignored; an empty or failed space is no ranking to doubt
    assert assess([result(0, error="too many threads"), result(10)]).contenders_total == 1
    assert assess([result(0, error="too many threads")]).measure == ()


def test_contenders_are_listed_up_to_the_cap_and_counted_beyond_it():
    blocks = [(2 ** i, 1, 1) for i in range(12)]
    c = assess([result(100 - 0.1 * i, b) for i, b in enumerate(blocks)])
    assert c.contenders_total == 12 and len(c.contenders) == len(c.measure) == MEASURE_AT_MOST
    assert f"(the {MEASURE_AT_MOST} best listed)" in c.reasons[0]


def test_an_unvalidated_ranking_measures_the_contenders_and_the_best_of_every_x_extent():
    why = ("fields 'f': threads adjacent in x are 152 B apart",)
    results = [result(100, (8, 8, 8), unvalidated=why), result(98, (8, 4, 16), unvalidated=why),
               result(90, (16, 8, 4), unvalidated=why), result(80, (1, 8, 64), unvalidated=why),
               result(70, (16, 4, 8), unvalidated=why), result(60, (512, 1, 1), unvalidated=why),
               result(50, (4, 4, 32), folding=(2, 1, 1), unvalidated=why)]
    c = assess(results)
    assert c.level == "unvalidated" and why[0] in c.reasons
    assert [m.block for m in c.measure] == [(8, 8, 8), (8, 4, 16), (16, 8, 4), (1, 8, 64), (512, 1, 1)]
    # one contender outside the validated patterns is enough
    mixed = assess([result(100, (8, 8, 8)), result(99, (8, 4, 16), unvalidated=why)])
    assert mixed.level == "unvalidated"
    assert assess([result(100, (8, 8, 8)), result(80, (8, 4, 16), unvalidated=why)]).level == "confident"


def test_a_ranking_reports_its_confidence_in_the_json_and_the_headline():
    r = warpspeed.rank("star3d-r1", H100, threads=(256,), domain=(96, 96, 96), jobs=1)
    doc = r.to_dict()
    assert doc["confidence"] == json.loads(json.dumps(r.confidence.to_dict()))
    floor = (1 - RELATIVE_ERROR) * r.best.performance_GLup_s
    within = [x.configuration for x in r.results if not x.error and x.performance_GLup_s >= floor]
    assert doc["confidence"]["contenders_total"] == len(within)
    assert [Configuration(tuple(c["block"]), tuple(c["folding"])) for c in doc["confidence"]["contenders"]] \
        == within[:MEASURE_AT_MOST]
    line = ranking_headline(r).splitlines()[1]
    assert line == f"confidence: {r.confidence.level}: {r.confidence.reasons[0]}"


@pytest.mark.parametrize("kernel, domain", [("star3d-r1", (96, 96, 96)), ("star3d-r4", (128, 64, 64)),
                                            ("d3q19-srt:layout=zyxf", (32, 32, 32))])
def test_a_screened_ranking_has_the_contenders_of_the_full_ranking(kernel, domain):
    full = warpspeed.rank(kernel, H100, threads=(256,), domain=domain, jobs=1, registers=64)
    screened = warpspeed.rank(kernel, H100, threads=(256,), domain=domain, jobs=1, registers=64, screen=1)
    assert screened.confidence == full.confidence
    assert screened.bounded  # it did screen
