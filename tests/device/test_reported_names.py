"""Names real GPUs report about themselves, and the shipped device each one denotes (device='auto').

Every name below was reported by a real board, in public material cited beside it: nvidia-smi output,
deviceQuery, ``torch.cuda.get_device_name`` or vLLM's/PyTorch's ``collect_env`` (the CUDA device name, the
string cupy's ``getDeviceProperties()['name']`` returns), or, for AMD, libdrm's ``amdgpu.ids`` table from
which ROCm takes the marketing name (github.com/X11Libre/drm, data/amdgpu.ids; ROCm/TheRock issue #4693 shows
the fallback name when that table is missing). "issue #n" and "PR #n" are github.com/<repository>/issues/n
and /pull/n.
"""

import importlib

import pytest
from hypothesis import given
from hypothesis import strategies as st

import warpspeed
from warpspeed.device import detected_device, device_for_gpu_name

AMDGPU_IDS = "X11Libre/drm data/amdgpu.ids"

#: (reported name, the shipped device it denotes, where the name was reported)
REPORTED = [
    # the boards this release adds
    ("NVIDIA A100-PCIE-40GB", "A100-PCIe-40GB", "zzc0721/torch-performance-test-data issue #108 (torch device "
     "name); siliconflow/onediff PR #1044 (collect_env)"),
    ("NVIDIA A100 80GB PCIe", "A100-PCIe-80GB", "vllm-project/vllm issue #14944 (collect_env); "
     "vectorch-ai/ScaleLLM PR #288 (collect_env)"),
    ("NVIDIA H100 NVL", "H100-NVL-94GB", "NVIDIA/gpu-admin-tools issue #4 (nvidia-smi, 400 W, 95830 MiB); "
     "akash-network/provider-configs PR #91 (nvidia-smi --query-gpu=name)"),
    ("Tesla V100-PCIE-16GB", "V100-PCIe-16GB", "NVIDIA/nvidia-docker issue #1285 (nvidia-smi -q Product Name)"),
    ("Tesla V100-SXM2-16GB", "V100-SXM2-16GB", "NVIDIA/nvidia-docker issues #914 and #738 (nvidia-smi -q)"),
    ("NVIDIA B200", "B200", "NVIDIA/TensorRT-LLM issue #10278 (nvidia-smi, 1000 W); pytorch/ao PR #4002 "
     "(device query: 148 SMs, cc 10.0)"),
    ("NVIDIA GB200", "GB200", "sgl-project/sglang issue #11208 (torch device name, cc 10.0); "
     "NVIDIA/k8s-test-infra issue #371 (nvidia-smi nvlink -s)"),
    ("NVIDIA B300 SXM6 AC", "B300", "NVIDIA/cosmos-framework PR #114 (torch.cuda.get_device_name on HGX B300); "
     "pytorch/ao PR #3640"),
    ("NVIDIA GeForce RTX 5090", "RTX-5090", "aikitoria/open-gpu-kernel-modules issue #1 (deviceQuery: 170 SMs, "
     "cc 12.0); noonghunna/club-3090 issue #617 (nvidia-smi)"),
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX-PRO-6000-Blackwell", "vllm-project/vllm issue "
     "#20712 (collect_env); local-inference-lab/rtx6kpro PR #92 (nvidia-smi name with power.limit 600 W)"),
    # the boards shipped before
    ("NVIDIA A100-SXM4-40GB", "A100-SXM4-40GB", "vllm-project/vllm issue #6134 (collect_env)"),
    ("NVIDIA A100-SXM4-80GB", "A100-SXM4-80GB", "NVIDIA/CUDALibrarySamples issue #104 (nvidia-smi -a); "
     "vllm-project/vllm issue #3842 (collect_env)"),
    ("NVIDIA H100 80GB HBM3", "H100-SXM5-80GB", "tests/data/hopper/*.csv, column gpu_name (this project's "
     "measurements); amithkk/stable-diffusion-k8s issue #10 (torch warning)"),
    ("NVIDIA H100 PCIe", "H100-PCIe-80GB", "mistralai/mistral-inference PR #43 (torch warning); "
     "zzc0721/torch-performance-test-data issue #95"),
    ("NVIDIA H200", "H200-SXM-141GB", "tests/data/hopper/*.csv, column gpu_name (this project's measurements)"),
    ("NVIDIA GH200 480GB", "GH200", "mredenti/PowerCapping configuration/OpenCL_benchmark.md (OpenCL device "
     "name, 132 compute units)"),
    ("Tesla V100-SXM2-32GB", "V100-SXM2-32GB", "NVIDIA/nvidia-docker issue #1076 (nvidia-smi -q)"),
    ("NVIDIA A40", "A40", "NVIDIA/nvidia-docker issue #1447 (nvidia-smi -q Product Name)"),
    ("NVIDIA L40S", "L40S", "isaac-sim/IsaacSim issue #228 (nvidia-smi -q); akash-network/provider-configs PR "
     "#99 (nvidia-smi --query-gpu=name)"),
    ("AMD Instinct MI250X", "MI250X-GCD", f"{AMDGPU_IDS} (device 7408)"),
    ("AMD Instinct MI250X / MI250", "MI250X-GCD", f"{AMDGPU_IDS} (device 740C: either board; the SM count "
     "tells them apart, test_device_matching.py)"),
    ("AMD Instinct MI210", "MI210", f"{AMDGPU_IDS} (device 740F)"),
    ("AMD Instinct MI300X", "MI300X", f"{AMDGPU_IDS} (device 74A1)"),
    ("AMD Instinct MI300A", "MI300A", f"{AMDGPU_IDS} (device 74A0)"),
    ("AMD Instinct MI325X", "MI325X", f"{AMDGPU_IDS} (device 74A5)"),
    ("AMD Instinct MI355X", "MI355X", "unslothai/unsloth PR #4051 (the device name and gcnArchName "
     "gfx950:sramecc+:xnack- printed on an MI355X; amdgpu.ids of that snapshot has no MI355X row yet)"),
]

#: (reported name, the closest shipped device the refusal names first, why no file describes it, source)
REFUSED = [
    ("NVIDIA RTX PRO 6000 Blackwell Max-Q Workstation Edition", "RTX-PRO-6000-Blackwell",
     "the same GB202 and memory at 300 W instead of 600 W: other clocks", "akash-network/provider-configs issue "
     "#79 (nvidia-smi --query-gpu=name); local-inference-lab/rtx6kpro PR #92 (review: 600 W vs 300 W)"),
    ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX-PRO-6000-Blackwell",
     "the server board: same chip and memory, its own clocks (the three editions' clocks differ, Tom's "
     "Hardware's announcement article as the device file cites it)",
     "GoogleCloudPlatform/container-engine-accelerators PR #512; NVIDIA/personaplex issue #2 (torch warning)"),
    ("NVIDIA GeForce RTX 5090 D", "RTX-5090", "the China variant, a SKU of its own",
     "pytorch/pytorch issue #150733 (collect_env)"),
    ("NVIDIA GeForce RTX 5090 Laptop GPU", "RTX-5090", "a laptop part under the same number",
     "magicyuan876/mineru-tianshu issue #62 (torch warning)"),
    ("NVIDIA H200 NVL", "H200-SXM-141GB", "the PCIe board (NVL), not the described SXM module",
     "Mohinta2892/catena issue #43 (torch warning)"),
    ("Tesla V100S-PCIE-32GB", "V100-PCIe-32GB", "the V100S, a board of its own",
     "vllm-project/vllm issue #10147 (collect_env)"),
    ("AMD Instinct MI300X VF", "MI300X", "an SR-IOV virtual function: a share of the board",
     f"{AMDGPU_IDS} (device 74B5)"),
    ("AMD Instinct MI300X HF", "MI300X", "another board of the chip", f"{AMDGPU_IDS} (device 74A9)"),
    ("AMD Instinct MI308X", "MI300X", "the China variant of the MI300X, a board of its own",
     f"{AMDGPU_IDS} (devices 74A2 and 74B6)"),
]

#: Names that say nothing the shipped devices could be matched on: refused with the list of shipped devices
#: or the closest by name, never estimated as a neighbour.
UNDESCRIBED = [
    ("AMD Radeon Graphics", "ROCm/TheRock issue #4693: what ROCm reports on an Instinct GPU without amdgpu.ids"),
    ("NVIDIA PG509-210", "pytorch/pytorch PR #131365 and facebookincubator/AITemplate PR #749: a board name "
     "some drivers report for an A100 80GB SXM, which does not say which"),
    ("Tesla PG500-216", "akash-network/provider-configs PR #90: a V100 32 GB board under its board name"),
    ("NVIDIA GeForce RTX 4090", "akshaydudhane16/Burstormer issue #19 (torch warning): an Ada card, no file"),
]

#: (reported name, the SM count the board reports, source): device='auto' checks the file's count against it
REPORTED_SMS = [
    ("NVIDIA B200", 148, "pytorch/ao PR #4002 (device query)"),
    ("NVIDIA GeForce RTX 5090", 170, "aikitoria/open-gpu-kernel-modules issue #1 (deviceQuery)"),
    ("NVIDIA H100 NVL", 132, "fastfetch-cli/fastfetch issue #1658 (OpenCL coreCount)"),
    ("NVIDIA A100 80GB PCIe", 108, "ekondis/mixbench issue #47 (mixbench-cuda device properties: 108 MPs)"),
    ("NVIDIA GH200 480GB", 132, "mredenti/PowerCapping configuration/OpenCL_benchmark.md (compute units)"),
]


def _id(row) -> str:
    return row[0]


@pytest.mark.parametrize(("reported", "device_id", "source"), REPORTED, ids=[_id(r) for r in REPORTED])
def test_a_reported_name_denotes_its_device_reading_only_its_file(reported, device_id, source, monkeypatch):
    """The name resolves to the device that describes the board, by the ids or KNOWN_NAMES alone: one device
    file read, not all of them (the first launch with device='auto' stays cheap)."""
    reported_module = importlib.import_module("warpspeed.device.reported")
    loaded = []
    real = reported_module.device
    monkeypatch.setattr(reported_module, "device", lambda i: loaded.append(i) or real(i))
    assert device_for_gpu_name(reported).id == device_id, source
    assert loaded == [device_id], source


@pytest.mark.parametrize(("reported", "closest", "why", "source"), REFUSED, ids=[_id(r) for r in REFUSED])
def test_a_variant_no_file_describes_is_refused_naming_the_closest_and_how_to_override(
        reported, closest, why, source):
    with pytest.raises(warpspeed.InputError) as e:
        device_for_gpu_name(reported)
    msg = str(e.value)
    assert repr(reported) in msg and f"closest shipped: {closest}" in msg, (why, source, msg)
    assert f"warpspeed.device({closest!r}, sm_count=" in msg and f"--device {closest} --set KEY=VALUE" in msg


@pytest.mark.parametrize(("reported", "source"), UNDESCRIBED, ids=[_id(r) for r in UNDESCRIBED])
def test_a_name_that_says_no_described_board_is_refused(reported, source):
    with pytest.raises(warpspeed.InputError, match=f"no shipped device describes the GPU {reported!r}"):
        device_for_gpu_name(reported)


@given(st.sampled_from([r[0] for r in REPORTED]), st.sampled_from(["VF", "HF", "LS", "Max-Q", "D", "FHHL",
                                                                    "Laptop GPU", "Mobile", "v2"]))
def test_a_word_for_another_variant_turns_a_match_into_a_refusal(reported, variant):
    """Any described board's name with a word the chip, form and memory do not explain names another variant
    (another power limit, a laptop part, a share of the GPU): refused, never matched to the described one."""
    with pytest.raises(warpspeed.InputError, match="no shipped device describes"):
        device_for_gpu_name(f"{reported} {variant}")


@pytest.mark.parametrize(("reported", "sms", "source"), REPORTED_SMS, ids=[_id(r) for r in REPORTED_SMS])
def test_auto_detection_accepts_the_sm_count_the_board_reports(reported, sms, source, fake_gpu, monkeypatch):
    """device='auto' refuses a board whose SM count differs from its file's: the file must carry the count the
    real board reports, or detection would refuse the very board it describes."""
    monkeypatch.setenv("FAKE_CUPY_GPU_NAME", reported)
    monkeypatch.setenv("FAKE_CUPY_SM_COUNT", str(sms))
    device_id = next(d for name, d, _ in REPORTED if name == reported)
    assert detected_device().id == device_id and warpspeed.device(device_id).sm_count == sms, source
