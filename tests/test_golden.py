"""Golden outputs: the estimate JSON of the shipped stencil kernels on every shipped device, both models.

tests/golden/estimates.json holds them as computed when the file was last written on purpose. A
restructuring must leave every byte as it is; a deliberate model change regenerates the file with
``python tests/golden/make_golden.py`` (see that script) and the diff shows what moved.
"""

import importlib.util
import json
import pickle
from pathlib import Path

import pytest

import warpspeed

HERE = Path(__file__).parent / "golden"
_spec = importlib.util.spec_from_file_location("make_golden", HERE / "make_golden.py")
make_golden = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_golden)


@pytest.fixture(scope="module")
def docs():
    return make_golden.documents()


def test_outputs_are_byte_identical_to_the_golden_file(docs):
    golden = json.loads(make_golden.GOLDEN.read_text())
    assert sorted(docs) == sorted(golden), "the set of golden configurations changed"
    changed = [k for k in golden if json.dumps(docs[k]) != json.dumps(golden[k])]
    assert not changed, (f"{len(changed)} estimates differ from tests/golden/estimates.json, e.g. {changed[:3]}; "
                         "regenerate it only for an intended model change")
    assert make_golden.text(docs) == make_golden.GOLDEN.read_text()


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
