"""The board variants of shipped chips: A100 PCIe 40GB and 80GB, H100 NVL (one GPU of the pair), V100 PCIe 16GB and
V100 SXM2 16GB.

Each is its sibling of the same chip (same SM, caches and compute capability) with the board's own SM count, clock,
memory and DRAM peak. A bandwidth measured on the sibling is not a measurement of the board: the files give it as
assumed, and derive it from the sibling's measured fraction of its peak where the peaks differ.
"""

import math

import pytest

import warpspeed
from warpspeed.device import KEY_ATTRIBUTES, device, device_for_gpu_name
from warpspeed.interface.cli import main

# board -> (sibling it is based on, the keys that differ, SMs, clock GHz, DRAM peak GB/s, DRAM size GB)
BOARDS = {
    "A100-PCIe-40GB": ("A100-SXM4-40GB", set(), 108, 1.41, 1555, 40),
    "A100-PCIe-80GB": ("A100-SXM4-80GB", {"dram_bw", "dram_bw_peak"}, 108, 1.41, 1935, 80),
    "H100-NVL-94GB": ("H100-SXM5-80GB", {"clock_GHz", "l2_bw", "dram_bw", "dram_bw_peak", "dram_size"},
                      132, 1.67, 3900, 94),
    "V100-PCIe-16GB": ("V100-PCIe-32GB", {"dram_size"}, 80, 1.38, 900, 16),
    "V100-SXM2-16GB": ("V100-SXM2-32GB", {"dram_size"}, 80, 1.53, 900, 16),
}
GB = 10**9


@pytest.mark.parametrize("board", BOARDS)
def test_the_board_loads_validates_and_is_listed(board, capsys):
    d = device(board)
    assert d.id == board and d.file.endswith(f"{board}.toml")
    assert main(["devices", "validate", d.file]) == 0
    assert f"valid ({board}, {d.name})" in capsys.readouterr().out
    assert main(["devices", "show", board]) == 0
    assert f"{board}: {d.name}" in capsys.readouterr().out
    assert main(["devices"]) == 0
    assert board in capsys.readouterr().out


@pytest.mark.parametrize("board", BOARDS)
def test_the_board_is_its_siblings_chip_with_its_own_sms_clock_and_memory(board):
    sibling_id, differ, sms, clock, peak, size_GB = BOARDS[board]
    d, sib = device(board), device(sibling_id)
    assert (d.sm_count, d.clock_GHz, d.dram_bw_peak_GB_s, d.dram_size_bytes) == (sms, clock, peak, size_GB * GB)
    assert (d.architecture, d.compute_capability, d.vendor) == (sib.architecture, sib.compute_capability, sib.vendor)
    assert d.hit_rates == sib.hit_rates
    same = [k for k in KEY_ATTRIBUTES if k not in differ | {"sm_count", "clock_GHz"}]
    assert {k: getattr(d, KEY_ATTRIBUTES[k]) for k in same} == {k: getattr(sib, KEY_ATTRIBUTES[k]) for k in same}


@pytest.mark.parametrize("board", BOARDS)
def test_no_bandwidth_measured_on_another_board_reads_as_measured(board):
    d = device(board)
    for key in ("dram_bw", "l2_bw"):
        assert d.sources[key].startswith("assumed:"), (key, d.sources[key])
    assert d.dram_bw_GB_s < d.dram_bw_peak_GB_s


@pytest.mark.parametrize(("board", "measured_on"), [
    ("A100-PCIe-40GB", "A100-SXM4-40GB"), ("A100-PCIe-80GB", "A100-SXM4-80GB"), ("H100-NVL-94GB", "H100-SXM5-80GB")])
def test_the_dram_bandwidth_is_the_siblings_measured_fraction_of_the_boards_peak(board, measured_on):
    d, sib = device(board), device(measured_on)
    assert sib.sources["dram_bw"].startswith("measured:")
    fraction = sib.dram_bw_GB_s / sib.dram_bw_peak_GB_s
    assert d.dram_bw_GB_s == pytest.approx(fraction * d.dram_bw_peak_GB_s, abs=1)
    assert f"{sib.dram_bw_GB_s:g}" in d.sources["dram_bw"]


def test_the_h100_nvl_clock_and_l2_bandwidth_are_assumptions_that_say_from_what():
    nvl, sxm = device("H100-NVL-94GB"), device("H100-SXM5-80GB")
    assert nvl.sources["clock_GHz"].startswith("assumed:") and "1671 / 1979" in nvl.sources["clock_GHz"]
    assert nvl.clock_GHz == pytest.approx(round(sxm.clock_GHz * 1671 / 1979, 2))
    assert nvl.l2_bw_GB_s == pytest.approx(round(sxm.l2_bw_GB_s * nvl.clock_GHz / sxm.clock_GHz, -2))
    assert nvl.sources["l2_size"].startswith("assumed:")


@pytest.mark.parametrize(("board", "sibling"), [("A100-PCIe-80GB", "A100-SXM4-80GB"),
                                               ("H100-NVL-94GB", "H100-SXM5-80GB")])
def test_a_dram_bound_estimate_follows_the_boards_bandwidth(board, sibling):
    """copy is DRAM-bound on both: the board's estimate is its sibling's scaled by the DRAM bandwidths."""
    e, s = (warpspeed.estimate("copy", d, (256, 1, 1), model="roofline") for d in (board, sibling))
    assert e.limiter == s.limiter == "DRAM"
    assert e.performance_GLup_s / s.performance_GLup_s == pytest.approx(
        device(board).dram_bw_GB_s / device(sibling).dram_bw_GB_s, rel=1e-9)


@pytest.mark.parametrize("board", BOARDS)
def test_the_board_ranks_a_stencil_with_finite_numbers(board):
    r = warpspeed.rank("star3d-r4", board, threads=(256,), domain=(256, 128, 64), jobs=1)
    assert r.best is not None and math.isfinite(r.best.performance_GLup_s) and r.best.performance_GLup_s > 0


# The names these boards report, as public logs show them: TensorFlow's device log of an A100 PCIe 40GB
# ("A100-PCIE-40GB", coreCount 108), llama.cpp's CUDA init of an A100 80GB PCIe ("NVIDIA A100 80GB PCIe"),
# nvidia-smi of an H100 NVL ("NVIDIA H100 NVL", akash-network/provider-configs pull request 91), TensorFlow's and
# llama.cpp's logs of a V100 PCIe 16GB ("Tesla V100-PCIE-16GB") and TensorFlow's of a V100 SXM2 16GB
# ("Tesla V100-SXM2-16GB", coreCount 80, coreClock 1.53GHz).
@pytest.mark.parametrize(("reported", "board"), [
    ("A100-PCIE-40GB", "A100-PCIe-40GB"), ("NVIDIA A100-PCIE-40GB", "A100-PCIe-40GB"),
    ("NVIDIA A100 80GB PCIe", "A100-PCIe-80GB"), ("NVIDIA H100 NVL", "H100-NVL-94GB"),
    ("Tesla V100-PCIE-16GB", "V100-PCIe-16GB"), ("Tesla V100-SXM2-16GB", "V100-SXM2-16GB"),
])
def test_the_name_the_board_reports_finds_it(reported, board):
    assert device_for_gpu_name(reported).id == board
    assert device_for_gpu_name(device(board).name).id == board
