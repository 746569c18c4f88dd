"""pystencils HIP kernels (``Target.HIP``, AMD GPUs) in the plugin: described, ranked and chosen at creation (shape
and an AMD device) and at launch (the stand-in cupy posing as cupy on ROCm with an MI300X), with their registers
from ROCm's compiler (the stand-in hipcc in tests/fake_gpu) or, without it, warpspeed's default with a warning.
"""

import math
import os
import shutil
import tempfile
import warnings
from pathlib import Path

import pytest

os.environ.setdefault("PYSTENCILS_CACHE_DIR", str(Path(tempfile.gettempdir()) / "warpspeed-tests-pystencils-cache"))

ps = pytest.importorskip("pystencils")

import warpspeed_pystencils as wp  # noqa: E402
from warpspeed_pystencils import _launch, _registers  # noqa: E402

import warpspeed  # noqa: E402

FAKE_REGISTERS = 90  # the stand-in cupy's compiled kernels


@pytest.fixture(autouse=True)
def _private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WARPSPEED_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("WARPSPEED_NVCC", "")
    monkeypatch.setenv("WARPSPEED_HIPCC", "")


def _seven_point(layout="fzyx"):
    src, dst = ps.fields("src, dst: double[3D]", layout=layout)
    return [ps.Assignment(dst.center, sum(src[d] for d in ((1, 0, 0), (-1, 0, 0), (0, 1, 0), (0, -1, 0),
                                                             (0, 0, 1), (0, 0, -1))) - 6 * src.center)]


def _hip_config(**gpu):
    cfg = ps.CreateKernelConfig(target=ps.Target.HIP, jit=ps.no_jit)
    for k, v in gpu.items():
        setattr(cfg.gpu, k, v)
    return cfg


SHAPE = (258, 258, 130)


def test_a_hip_kernel_gets_the_best_block_of_its_ranking_on_the_mi300x_when_created():
    kernel = wp.create_kernel(_seven_point(), _hip_config(), shape=SHAPE, device="MI300X", registers=40, cache=None)
    assert kernel.target == ps.Target.HIP
    summary = kernel.metadata["warpspeed"]["ranking"]
    assert summary["device"] == "MI300X"
    ranking = wp.rank_block_sizes(_seven_point(), SHAPE, device="MI300X", registers=40, config=_hip_config())
    assert tuple(summary["block"]) == tuple(ranking.best.configuration.block)
    assert tuple(kernel.get_launch_configuration().default_block_size) == tuple(summary["block"])
    assert math.prod(summary["block"]) % warpspeed.device("MI300X").warp_size == 0  # whole 64-lane wavefronts


def test_the_hip_kernel_is_described_with_64_lane_wavefronts():
    """The same kernel on a hypothetical MI300X with 32-lane waves is estimated otherwise: the lanes per wave
    come from the device, not from a CUDA assumption."""
    kernel = wp.describe(ps.create_kernel(_seven_point(), _hip_config()), SHAPE, device="MI300X", registers=40)
    wave64 = warpspeed.estimate(kernel, device="MI300X", block=(64, 2, 2))
    wave32 = warpspeed.estimate(kernel, device=warpspeed.device("MI300X").with_overrides(warp_size=32),
                                block=(64, 2, 2))
    assert wave64.performance_GLup_s != wave32.performance_GLup_s


def test_without_a_config_an_amd_device_gets_a_hip_kernel_and_an_nvidia_one_a_cuda_kernel():
    amd = wp.create_kernel(_seven_point(), shape=SHAPE, device="MI300X", registers=40, cache=None)
    nvidia = wp.create_kernel(_seven_point(), shape=SHAPE, device="H100-SXM5-80GB", registers=40, cache=None)
    assert (amd.target, nvidia.target) == (ps.Target.HIP, ps.Target.CUDA)


def test_a_cuda_config_keeps_its_target_on_an_amd_device_as_before():
    cfg = ps.CreateKernelConfig(target=ps.Target.CUDA, jit=ps.no_jit)
    kernel = wp.create_kernel(_seven_point(), cfg, shape=SHAPE, device="MI300X", registers=40, cache=None)
    assert kernel.target == ps.Target.CUDA


@pytest.mark.parametrize("make", [
    lambda: wp.create_kernel(_seven_point(), _hip_config(), shape=SHAPE, device="H100-SXM5-80GB", registers=40),
    lambda: wp.rank_block_sizes(_seven_point(), SHAPE, device="A100-SXM4-40GB", registers=40, config=_hip_config()),
    lambda: wp.rank_block_sizes(ps.create_kernel(_seven_point(), _hip_config()), SHAPE, device="A100-SXM4-40GB"),
    lambda: wp.create_kernel(_seven_point(), ps.CreateKernelConfig(target=ps.Target.HIP), device="H100-SXM5-80GB"),
], ids=["create-with-shape", "rank-assignments", "rank-kernel", "launch-time"])
def test_a_hip_kernel_on_an_nvidia_device_is_refused_naming_the_amd_devices(make):
    with pytest.raises(warpspeed.InputError) as e:
        make()
    msg = str(e.value)
    assert "generated for HIP (Target.HIP)" in msg and "is an NVIDIA GPU" in msg
    assert all(i in msg for i in ("MI210", "MI250X-GCD", "MI300X")) and "target=ps.Target.CUDA" in msg


def test_a_hip_kernel_without_a_device_names_the_amd_devices():
    """No cupy here: device='auto' cannot detect, and the message's example is an AMD device."""
    with pytest.raises(warpspeed.InputError) as e:
        wp.create_kernel(_seven_point(), _hip_config(), shape=SHAPE, registers=40)
    msg = str(e.value)
    assert "device='MI300X'" in msg and "H100" not in msg and "This kernel targets HIP" in msg
    with pytest.raises(warpspeed.InputError, match="describing a HIP kernel .* pass device="):
        wp.describe(ps.create_kernel(_seven_point(), _hip_config()), SHAPE)


def test_a_warp_size_other_than_the_devices_wavefront_is_refused_and_the_right_one_accepted():
    with pytest.raises(warpspeed.InputError, match="gpu.warp_size is 32, but MI300X runs 64-lane wavefronts"):
        wp.create_kernel(_seven_point(), _hip_config(warp_size=32), shape=SHAPE, device="MI300X", registers=40)
    kernel = wp.create_kernel(_seven_point(), _hip_config(warp_size=64, assume_warp_aligned_block_size=True),
                              shape=SHAPE, device="MI300X", registers=40, cache=None)
    assert math.prod(kernel.metadata["warpspeed"]["ranking"]["block"]) % 64 == 0


# --- registers from ROCm's compiler ---------------------------------------------------------------------------

LLVM_REMARKS = """\
remark: foo.cl:27:0: Function Name: test_kernel
remark: foo.cl:27:0:     SGPRs: 28
remark: foo.cl:27:0:     VGPRs: 9
remark: foo.cl:27:0:     AGPRs: 43
remark: foo.cl:27:0:     ScratchSize [bytes/lane]: 0
remark: foo.cl:27:0:     Dynamic Stack: False
remark: foo.cl:27:0:     Occupancy [waves/SIMD]: 5
remark: foo.cl:27:0:     SGPRs Spill: 0
remark: foo.cl:27:0:     VGPRs Spill: 0
remark: foo.cl:27:0:     LDS Size [bytes/block]: 512
"""  # LLVM's test/CodeGen/AMDGPU/resource-usage-remarks.ll (gfx908)

CLANG_REMARKS = """\
kernel.hip:12:1: remark: Function Name: kernel [-Rpass-analysis=kernel-resource-usage]
kernel.hip:12:1: remark:     TotalSGPRs: 24 [-Rpass-analysis=kernel-resource-usage]
kernel.hip:12:1: remark:     VGPRs: 32 [-Rpass-analysis=kernel-resource-usage]
kernel.hip:12:1: remark:     AGPRs: 0 [-Rpass-analysis=kernel-resource-usage]
kernel.hip:12:1: remark:     VGPRs Spill: 7 [-Rpass-analysis=kernel-resource-usage]
"""  # the newer spelling (TotalSGPRs), the remark after the location


@pytest.mark.parametrize(("text", "registers"), [
    (LLVM_REMARKS, 12 + 43),  # VGPRs rounded up to 4, then the AGPRs: one register file on gfx90a/gfx942
    (CLANG_REMARKS, 32),  # no AGPRs: the VGPRs; a spill count is no register count
    ("kernel.hip:1:1: error: expected ';'", None),
    ("ptxas info    : Used 77 registers", None),  # nvcc's line is not ROCm's
])
def test_the_resource_usage_remarks_give_the_registers(text, registers):
    assert _registers.parsed_registers("gfx942", text) == registers


def test_nvcc_output_is_read_as_before():
    assert _registers.parsed_registers("sm_90", "ptxas info : Used 77 registers\nptxas info : Used 40 registers") == 77
    assert _registers.parsed_registers("sm_90", LLVM_REMARKS) is None


@pytest.fixture
def hipcc(fake_gpu, monkeypatch, tmp_path):
    """The stand-in hipcc (tests/fake_gpu, first on PATH), its runs logged."""
    monkeypatch.delenv("WARPSPEED_HIPCC")
    log = tmp_path / "hipcc.log"
    monkeypatch.setenv("FAKE_HIPCC_LOG", str(log))
    return log


def test_registers_come_from_hipcc_for_the_devices_architecture_and_then_from_the_cache(hipcc, monkeypatch):
    monkeypatch.setenv("FAKE_HIPCC_VGPRS", "57")
    kernel = wp.describe(ps.create_kernel(_seven_point(), _hip_config()), SHAPE, device="MI300X")
    assert kernel.registers == 57 and "registers from hipcc gfx942" in kernel.spec["description"]
    (run,) = hipcc.read_text().splitlines()
    assert "--offload-arch=gfx942" in run.split() and "--offload-device-only" in run.split()
    mi210 = wp.describe(ps.create_kernel(_seven_point(), _hip_config()), SHAPE, device="MI210")
    assert mi210.registers == 57 and "--offload-arch=gfx90a" in hipcc.read_text().splitlines()[1]
    again = wp.describe(ps.create_kernel(_seven_point(), _hip_config()), SHAPE, device="MI300X")
    assert "hipcc gfx942 (cached)" in again.spec["description"] and len(hipcc.read_text().splitlines()) == 2


@pytest.mark.skipif(shutil.which("hipcc") is None, reason="hipcc not on PATH")
def test_registers_from_a_real_hipcc(monkeypatch):
    """ROCm's compiler as installed (checked with Debian's hipcc 5.2, clang 15, next to CUDA's nvcc: the plugin
    asks for the AMD platform): the MI210's gfx90a, which every ROCm compiler knows."""
    monkeypatch.delenv("WARPSPEED_HIPCC")
    monkeypatch.setenv("HIP_PLATFORM", "nvidia")  # the plugin must ask for AMD itself
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kernel = wp.describe(ps.create_kernel(_seven_point(), _hip_config()), SHAPE, device="MI210")
    assert 8 <= kernel.registers <= 128 and "registers from hipcc gfx90a" in kernel.spec["description"]


def test_the_chosen_block_uses_hipccs_registers(hipcc, monkeypatch):
    monkeypatch.setenv("FAKE_HIPCC_VGPRS", "128")
    kernel = wp.create_kernel(_seven_point(), _hip_config(), shape=SHAPE, device="MI300X", cache=None)
    assert kernel.metadata["warpspeed"]["registers"] == 128


def test_without_hipcc_the_registers_are_warpspeeds_default_and_say_so():
    from warpspeed.plugin_api import DEFAULT_REGISTERS

    with pytest.warns(UserWarning, match=r"unknown \(hipcc not found\).*put hipcc \(ROCm\) on PATH"):
        kernel = wp.describe(ps.create_kernel(_seven_point(), _hip_config()), SHAPE, device="MI300X")
    assert kernel.registers is None  # left to warpspeed's default, which the description names
    assert f"unknown (hipcc not found): warpspeed's default {DEFAULT_REGISTERS}" in kernel.spec["description"]


def test_a_failing_hipcc_falls_back_to_the_default_with_a_warning(hipcc, monkeypatch):
    monkeypatch.setenv("FAKE_HIPCC_FAIL", "1")
    with pytest.warns(UserWarning) as said:
        kernel = wp.describe(ps.create_kernel(_seven_point(), _hip_config()), SHAPE, device="MI300X")
    messages = [str(w.message) for w in said]
    assert any("hipcc --offload-arch=gfx942 did not report registers" in m and "fake_error" in m for m in messages)
    assert any("put hipcc (ROCm) on PATH" in m for m in messages)
    assert "unknown (hipcc gfx942 failed)" in kernel.spec["description"]


# --- at launch, on the stand-in ROCm GPU ------------------------------------------------------------------------

@pytest.fixture
def rocm(fake_gpu, monkeypatch):
    """The stand-in cupy posing as cupy on ROCm with an MI300X (304 CUs), behind pystencils' cupy JIT."""
    import pystencils.jit.gpu_cupy as gpu_cupy

    monkeypatch.setattr(gpu_cupy, "cp", fake_gpu, raising=False)
    monkeypatch.setattr(gpu_cupy, "HAVE_CUPY", True)
    monkeypatch.setenv("FAKE_CUPY_HIP", "1")
    monkeypatch.setenv("FAKE_CUPY_SM_COUNT", "304")
    monkeypatch.delenv("FAKE_CUPY_GPU_NAME", raising=False)
    fake_gpu.launches.clear()
    return fake_gpu


def test_on_rocm_the_block_is_chosen_at_the_first_launch_as_with_the_shape_and_the_mi300x(rocm):
    kernel = wp.create_kernel(_seven_point())  # no config: cupy runs on ROCm, so the kernel is a HIP one
    assert kernel.target == ps.Target.HIP
    run = kernel.compile()
    assert isinstance(run, _launch.LaunchTimeKernel)
    shape = (130, 66, 34)
    run(src=rocm.zeros(shape, order="F"), dst=rocm.zeros(shape, order="F"))
    _, grid, block, _ = rocm.launches[-1]
    reference = wp.create_kernel(_seven_point(), _hip_config(), shape=shape, device="MI300X",
                                 registers=FAKE_REGISTERS, cache=None)
    assert block == tuple(reference.metadata["warpspeed"]["ranking"]["block"])
    assert grid == tuple(math.ceil((n - 2) / b) for n, b in zip(shape, block, strict=True))
    (choice,) = run.choices.values()
    assert choice.device == "MI300X" and math.prod(block) % 64 == 0


def test_on_rocm_the_registers_of_the_compiled_kernel_are_read_up_to_512(rocm, monkeypatch):
    monkeypatch.setattr(rocm.RawKernel, "__init__", _raw_kernel_with(300))
    run = wp.create_kernel(_seven_point(), measure=False).compile()
    shape = (66, 66, 66)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # registers known: no default, no warning
        choice = run.choice_for(src=rocm.zeros(shape, order="F"), dst=rocm.zeros(shape, order="F"))
    assert "fallback" not in choice.summary  # ranked, not left to pystencils
    # 300 VGPRs (rounded to 304) leave one wave per SIMD: a block of 4 waves at most, which a CUDA limit of 255
    # registers would have refused and warpspeed's default of 32 would not have asked for
    assert math.prod(choice.block) <= 4 * 64


def _raw_kernel_with(registers):
    def init(self, source, name, options=(), backend="nvrtc"):
        self.name, self.num_regs, self.options = name, registers, options
    return init


def test_on_rocm_a_gpu_known_only_by_its_architecture_is_refused_at_the_launch(rocm, monkeypatch):
    monkeypatch.setenv("FAKE_CUPY_GPU_NAME", "AMD Radeon Graphics")
    run = wp.create_kernel(_seven_point()).compile()
    shape = (34, 34, 34)
    with pytest.raises(warpspeed.InputError, match="the architecture 'gfx942'.*MI300A, MI300X, MI325X"):
        run(src=rocm.zeros(shape, order="F"), dst=rocm.zeros(shape, order="F"))
    assert rocm.launches == []


def test_on_cuda_cupy_a_hip_kernel_is_refused_by_pystencils_and_a_named_nvidia_device_by_the_plugin(fake_gpu,
                                                                                                     monkeypatch):
    import pystencils.jit.gpu_cupy as gpu_cupy

    monkeypatch.setattr(gpu_cupy, "cp", fake_gpu, raising=False)
    monkeypatch.setattr(gpu_cupy, "HAVE_CUPY", True)
    monkeypatch.delenv("FAKE_CUPY_HIP", raising=False)
    assert wp.create_kernel(_seven_point()).target == ps.Target.CUDA  # cupy for CUDA: a CUDA kernel, as before
    cfg = ps.CreateKernelConfig(target=ps.Target.HIP)
    jit = wp.launch_time_jit(device="H100-SXM5-80GB")
    cfg.jit = jit
    kernel = ps.create_kernel(_seven_point(), cfg)
    with pytest.raises(warpspeed.InputError, match="generated for HIP"):
        jit.compile(kernel)


def test_variants_of_a_hip_config_are_hip_kernels_compared_on_an_amd_device_only():
    r = wp.compare_variants(_seven_point(), "MI300X", shape=(66, 66, 66), dtype=["float64", "float32"],
                            registers=32, config=_hip_config())
    assert len(r.comparison.candidates) == 2
    assert all(v.config.get_option("target") == ps.Target.HIP for v in r.variants)
    with pytest.raises(warpspeed.InputError, match="generated for HIP"):
        wp.compare_variants(_seven_point(), "H100-SXM5-80GB", shape=(66, 66, 66), registers=32, config=_hip_config())


def test_the_cuda_program_of_assignments_with_a_hip_config_is_cuda_code_as_before():
    program = wp.cuda_program(_seven_point(), (34, 34, 34), config=_hip_config())
    assert "cuda/std/cstdint" in program.source and "hip.h" not in program.source
