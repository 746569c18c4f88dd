"""AMD architecture names (``gfx942``) as ROCm reports them, and device='auto' on cupy for ROCm.

ROCm reports the LLVM target with its features beside the marketing name: rocminfo on an MI300X prints the ISA
``amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-`` (ROCm/legacy-rocm-build issue #4414) and the agent name
``gfx942`` with the marketing name "AMD Instinct MI300X VF" on an SR-IOV guest (ROCm/TransferBench issue
#351); cupy's ``getDeviceProperties`` on ROCm holds that string as ``gcnArchName`` (cupy's
cupy_backends/cuda/api/runtime.pyx, HIP 3.1 and later). Where ROCm finds no marketing name it reports
"AMD Radeon Graphics" beside the architecture: "AMD Radeon Graphics gcnArchName=gfx906:sramecc+:xnack-"
on an MI50 under ROCm 7.2.1 (AlphaMine-Tech/alpha-miner issue #5). An architecture is shared by several
boards (ROCm's hardware table: gfx942 is the MI300A, MI300X and MI325X), so it alone never picks a device.
"""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import warpspeed
from warpspeed.device import detected_device, device_for_gpu_name
from warpspeed.device.reported import ARCH_BOARDS, arch_of

#: (reported string, the architecture it names, where it was reported)
ARCH_NAMES = [
    ("gfx942", "gfx942", "ROCm/TransferBench issue #351 (rocminfo agent name)"),
    ("gfx942:sramecc+:xnack-", "gfx942", "ROCm/legacy-rocm-build issue #4414 (rocminfo ISA, an MI300X)"),
    ("amdgcn-amd-amdhsa--gfx942:sramecc+:xnack-", "gfx942", "ROCm/legacy-rocm-build issue #4414"),
    ("gfx906:sramecc+:xnack-", "gfx906", "AlphaMine-Tech/alpha-miner issue #5 (an MI50's gcnArchName)"),
    ("gfx90a:sramecc+:xnack-", "gfx90a", "the MI210/MI250X target with the same features"),
]


@pytest.mark.parametrize(("reported", "arch", "source"), ARCH_NAMES, ids=[r[0] for r in ARCH_NAMES])
def test_an_architecture_name_is_read_with_or_without_its_features(reported, arch, source):
    assert arch_of(reported) == arch, source


@pytest.mark.parametrize("name", ["AMD Instinct MI300X", "NVIDIA H100 80GB HBM3", "gfx", "gfx942 MI300X", "sm_90",
                                  "gfx942:sramecc", ""])
def test_other_names_are_no_architecture(name):
    assert arch_of(name) is None


def test_an_architecture_alone_is_refused_naming_every_board_of_it_and_the_shipped_ones():
    """gfx942 is an MI300X and also an MI300A (228 CUs, memory shared with the CPUs) and an MI325X: the name
    alone must not estimate any of them as an MI300X."""
    with pytest.raises(warpspeed.InputError) as e:
        device_for_gpu_name("gfx942:sramecc+:xnack-")
    msg = str(e.value)
    assert "only its architecture 'gfx942'" in msg
    assert "MI300A, MI300X, MI325X (ROCm's hardware table)" in msg
    shipped = [i for i in warpspeed.device_ids() if warpspeed.device(i).compute_capability == "gfx942"]
    assert "MI300X" in shipped and f"shipped devices of gfx942: {', '.join(shipped)}" in msg


@given(st.sampled_from(sorted(ARCH_BOARDS)), st.sampled_from(["", ":xnack-", ":sramecc+:xnack-", ":xnack+"]))
def test_no_architecture_name_ever_resolves_to_a_device(arch, features):
    with pytest.raises(warpspeed.InputError, match=f"architecture '{arch}'"):
        device_for_gpu_name(arch + features)


def test_an_architecture_no_shipped_device_has_says_how_to_describe_one():
    with pytest.raises(warpspeed.InputError, match="no shipped device is of the architecture gfx1100.*TOML"):
        device_for_gpu_name("gfx1100")


@pytest.fixture
def rocm(fake_gpu, monkeypatch):
    """The stand-in cupy posing as cupy on ROCm with an MI300X."""
    monkeypatch.setenv("FAKE_CUPY_HIP", "1")
    monkeypatch.delenv("FAKE_CUPY_GPU_NAME", raising=False)
    monkeypatch.delenv("FAKE_CUPY_GCN_ARCH", raising=False)
    assert fake_gpu.cuda.runtime.is_hip
    return fake_gpu


def test_auto_detection_on_rocm_finds_the_mi300x_by_its_name_and_architecture(rocm, monkeypatch):
    props = rocm.cuda.runtime.getDeviceProperties(0)
    assert props["name"] == b"AMD Instinct MI300X" and props["gcnArchName"] == b"gfx942:sramecc+:xnack-"
    monkeypatch.setenv("FAKE_CUPY_SM_COUNT", "304")  # rocminfo on an MI300X: 304 compute units (#4021)
    assert detected_device().id == "MI300X"


def test_auto_detection_without_a_marketing_name_refuses_naming_the_boards_of_the_architecture(rocm, monkeypatch):
    monkeypatch.setenv("FAKE_CUPY_GPU_NAME", "AMD Radeon Graphics")
    with pytest.raises(warpspeed.InputError) as e:
        detected_device()
    msg = str(e.value)
    assert "the name 'AMD Radeon Graphics' and the architecture 'gfx942'" in msg and "MI300A, MI300X, MI325X" in msg
    monkeypatch.setenv("FAKE_CUPY_GPU_NAME", "gfx942")  # the architecture as the name
    with pytest.raises(warpspeed.InputError, match="only its architecture 'gfx942'"):
        detected_device()


def test_a_name_and_an_architecture_that_disagree_are_refused(rocm, monkeypatch):
    monkeypatch.setenv("FAKE_CUPY_GPU_NAME", "AMD Instinct MI210")
    with pytest.raises(warpspeed.InputError, match="MI210 is gfx90a: the name and the architecture disagree"):
        detected_device()
    monkeypatch.setenv("FAKE_CUPY_GCN_ARCH", "gfx90a:sramecc+:xnack-")
    assert detected_device().id == "MI210"


def test_a_partition_of_an_mi300x_is_refused_by_its_cu_count(rocm, monkeypatch):
    """A partitioned MI300X (AMD's CPX mode: each XCD a GPU of its own, 38 CUs) reports the board's name: not
    the 304-CU board."""
    monkeypatch.setenv("FAKE_CUPY_SM_COUNT", "38")
    with pytest.raises(warpspeed.InputError, match="reports 38 SMs, the shipped MI300X has 304"):
        detected_device()
