"""Golden outputs: the estimate JSON of the shipped stencil kernels on every shipped device, both models.

tests/golden/estimates.json holds them as computed when the file was last written on purpose. A
restructuring must leave every number as it is (to float noise: another numpy may round a sum's last bit
differently; the version and the prose notes are not compared); a deliberate model change regenerates the
file with ``python tests/golden/make_golden.py`` (see that script) and the diff shows what moved.
"""

import importlib.util
import json
import math
import pickle

import pytest
from paths import HOPPER_DATA, TESTS

import warpspeed

HERE = TESTS / "golden"
_spec = importlib.util.spec_from_file_location("make_golden", HERE / "make_golden.py")
make_golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_golden)


@pytest.fixture(scope="module")
def docs():
    return make_golden.documents()


PROSE = {"warpspeed_version", "notes", "reasons", "registers_source"}  # words, not numbers: not compared
FLOAT_NOISE = 1e-12  # relative: the last bits of a sum in another numpy, never a model change


def differences(a, b, path: str = ""):
    """Where two estimate documents differ in a number (beyond float noise), a text or their structure;
    the version and the prose (notes, reasons) are left out."""
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) - PROSE != set(b) - PROSE:
            yield f"{path}: keys {sorted(set(a) ^ set(b))}"
        for k in sorted((set(a) & set(b)) - PROSE):
            yield from differences(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            yield f"{path}: {len(a)} against {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            yield from differences(x, y, f"{path}[{i}]")
    elif isinstance(a, bool) or isinstance(b, bool) or not (isinstance(a, int | float) and isinstance(b, int | float)):
        if a != b:
            yield f"{path}: {a!r} against {b!r}"
    elif not math.isclose(a, b, rel_tol=FLOAT_NOISE, abs_tol=1e-300):
        yield f"{path}: {a!r} against {b!r}"


def test_outputs_are_the_golden_files_numbers(docs):
    golden = json.loads(make_golden.GOLDEN.read_text())
    assert sorted(docs) == sorted(golden), "the set of golden configurations changed"
    changed = {k: next(differences(docs[k], golden[k]), None) for k in golden}
    changed = {k: d for k, d in changed.items() if d is not None}
    assert not changed, (f"{len(changed)} estimates differ from tests/golden/estimates.json, e.g. "
                         f"{list(changed.items())[:3]}; regenerate it only for an intended model change")


def test_the_golden_comparison_sees_a_model_change_but_not_float_noise_or_prose():
    doc = {"performance_GLup_s": 212.73984531704247, "notes": ["a"], "warpspeed_version": "1", "block": [1, 2, 3]}
    assert not list(differences(doc, {**doc, "performance_GLup_s": 212.73984531704252, "notes": ["b"],
                                      "warpspeed_version": "2"}))
    assert list(differences(doc, {**doc, "performance_GLup_s": 212.74})) == [
        ".performance_GLup_s: 212.73984531704247 against 212.74"]
    assert list(differences(doc, {**doc, "block": [1, 2, 4]})) == [".block[2]: 3 against 4"]


@pytest.mark.parametrize("counter", ["isl", "enumerated", "ranges", "lines"])
def test_either_footprint_counter_writes_the_golden_outputs(counter):
    """The counters are four ways to the same counts: forcing any changes no number (three devices: the
    pairing and the line L1 rule, one and two L2 partitions; the ranges and the lines on the kernels they
    count)."""
    golden = json.loads(make_golden.GOLDEN.read_text())
    kernels = {"ranges": make_golden.ranges_kernels(), "lines": make_golden.lines_kernels()}.get(counter)
    docs = make_golden.documents(counter=counter, devices=["A100-SXM4-40GB", "H100-SXM5-80GB", "MI300X"],
                                 kernels=kernels)
    assert docs and not [k for k, d in docs.items() if next(differences(d, golden[k]), None)]


def test_the_golden_set_covers_every_device_both_models_and_all_limiters(docs):
    devices = {k.split("|")[1] for k in docs}
    assert devices == set(warpspeed.device_ids())
    assert {k.rsplit("|", 1)[1] for k in docs if "error" not in docs[k]} == {"latency", "roofline"}
    limiters = {d["limiter"] for d in docs.values() if "limiter" in d}
    assert {"DRAM", "L2", "latency"} <= limiters


def test_estimates_pickle_and_come_back_equal():
    e = warpspeed.estimate("star3d-r4", "H100-SXM5-80GB", (32, 4, 8), (1, 2, 1))
    back = pickle.loads(pickle.dumps(e))
    assert back == e and back.to_dict() == e.to_dict()
    assert back.workload == e.workload and back.performance == e.performance
    r = warpspeed.rank("copy", "A100-SXM4-40GB", threads=(256,), domain=(4096, 64, 1), jobs=1)
    assert pickle.loads(pickle.dumps(r)).to_dict() == r.to_dict()


def test_every_sweep_result_pickles():
    """What-if points, projections and validation reports travel between processes as they are."""
    from warpspeed.application.projection import project
    from warpspeed.application.whatif import whatif
    from warpspeed.measurement.measurements import read_measurements
    from warpspeed.measurement.validation import validate

    k = warpspeed.find_kernel("star3d-r1").with_domain((128, 64, 64))
    points = whatif(k, "H100-SXM5-80GB", "l2_size", [25e6, 50e6], threads=(256,), jobs=1)
    assert pickle.loads(pickle.dumps(points)) == points and len(points) == 2
    p = project(k, "A100-SXM4-40GB", "H100-SXM5-80GB", threads=(256,), jobs=1)
    assert pickle.loads(pickle.dumps(p)) == p
    reports = validate(read_measurements(HOPPER_DATA / "bandwidth-copy-H100.csv"))
    back = pickle.loads(pickle.dumps(reports))
    assert [r.ratio for r in back] == [r.ratio for r in reports] and back[0].pairs == reports[0].pairs


def test_every_golden_document_comes_back_from_json_unchanged():
    """Estimate.from_dict (the rank cache's way back to typed results) loses nothing the JSON holds."""
    from warpspeed.errors import InputError
    from warpspeed.model.estimate import Estimate

    golden = json.loads(make_golden.GOLDEN.read_text())
    docs = [d for d in golden.values() if "error" not in d]
    assert len(docs) > 300
    assert all(json.dumps(Estimate.from_dict(d).to_dict()) == json.dumps(d) for d in docs)
    with pytest.raises(InputError, match="not an estimate document.*'occupancy'"):
        Estimate.from_dict({"kernel": "star3d-r4"})
