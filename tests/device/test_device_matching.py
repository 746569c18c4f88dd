"""The shipped device for the name a GPU reports (device='auto')."""

import sys

import pytest

import warpspeed
from warpspeed.device import detected_device, device_for_gpu_name

# Names as drivers report them; the H100 and H200 ones are those of the committed measurements
# (tests/data/hopper/*.csv, column gpu_name).
REPORTED = [
    ("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB"),
    ("NVIDIA H200", "H200-SXM-141GB"),
    ("NVIDIA H100 PCIe", "H100-PCIe-80GB"),
    ("NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB"),
    ("NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB"),
    ("Tesla V100-SXM2-32GB", "V100-SXM2-32GB"),
    ("Tesla V100-PCIE-32GB", "V100-PCIe-32GB"),
    ("NVIDIA A40", "A40"),
    ("NVIDIA L40S", "L40S"),
    ("NVIDIA GH200 480GB", "GH200"),
    ("AMD Instinct MI250X", "MI250X-GCD"),
    ("AMD Instinct MI300X", "MI300X"),
    ("H100-SXM5-80GB", "H100-SXM5-80GB"),
]


@pytest.mark.parametrize(("reported", "device_id"), REPORTED)
def test_reported_names_match_their_device(reported, device_id):
    assert device_for_gpu_name(reported).id == device_id


# The A100 PCIe, the 16 GB V100 and the H100 NVL that were refused here are described now (their names, and
# the variants still refused, are in test_reported_names.py).
@pytest.mark.parametrize(("reported", "closest"), [
    ("NVIDIA GH200 144G HBM3e", "GH200"),            # the 144 GB HBM3e board, not the described 96 GB one
    ("NVIDIA GH200 624GB", "GH200"),
])
def test_undescribed_boards_of_a_described_chip_are_refused_naming_the_closest(reported, closest):
    with pytest.raises(warpspeed.InputError) as e:
        device_for_gpu_name(reported)
    msg = str(e.value)
    assert f"closest shipped: {closest}" in msg and "--set KEY=VALUE" in msg and repr(reported) in msg


@pytest.mark.parametrize("reported", ["Fake GPU", "", "   "])  # RTX 4090: test_reported_names.py
def test_unknown_gpus_are_refused_with_the_shipped_list(reported):
    with pytest.raises(warpspeed.InputError, match="H100-SXM5-80GB"):
        device_for_gpu_name(reported)


def test_detected_device_reads_the_name_through_cupy(fake_gpu, monkeypatch):
    monkeypatch.setenv("FAKE_CUPY_GPU_NAME", "NVIDIA H200")
    assert detected_device().id == "H200-SXM-141GB"
    monkeypatch.setenv("FAKE_CUPY_GPU_NAME", "Fake GPU")
    with pytest.raises(warpspeed.InputError, match="no shipped device describes the GPU 'Fake GPU'"):
        detected_device(0)


def test_detected_device_without_cupy_says_how_to_name_the_device(monkeypatch):
    monkeypatch.setitem(sys.modules, "cupy", None)  # import cupy raises ImportError
    with pytest.raises(warpspeed.InputError, match="cupy, which is not installed"):
        detected_device()


def test_a_mig_slice_is_refused():
    with pytest.raises(warpspeed.InputError, match="MIG slice"):
        device_for_gpu_name("NVIDIA A100-SXM4-40GB MIG 1g.5gb")


def test_detected_device_refuses_a_board_with_other_sm_counts(fake_gpu, monkeypatch):
    props = {"name": b"AMD Instinct MI250X/MI250", "multiProcessorCount": 104}  # an MI250's GCD
    monkeypatch.setattr(fake_gpu.cuda.runtime, "getDeviceProperties", staticmethod(lambda i: props))
    with pytest.raises(warpspeed.InputError, match="reports 104 SMs, the shipped MI250X-GCD has 110"):
        detected_device()
    props["multiProcessorCount"] = 110
    assert detected_device().id == "MI250X-GCD"


def test_every_shipped_name_resolves_to_its_device_and_a_match_by_id_reads_one_file(monkeypatch):
    """A device's own name resolves to it (the ids are matched first, so this keeps the names consistent with
    them); a name that the ids decide loads only the device it denotes, not every shipped device file."""
    import importlib

    reported = importlib.import_module("warpspeed.device.reported")
    for device_id in warpspeed.device_ids():
        assert device_for_gpu_name(warpspeed.device(device_id).name).id == device_id
    loaded = []
    real = reported.device
    monkeypatch.setattr(reported, "device", lambda i: loaded.append(i) or real(i))
    assert device_for_gpu_name("NVIDIA H100 80GB HBM3").id == "H100-SXM5-80GB" and loaded == ["H100-SXM5-80GB"]
