"""The Blackwell device files: B200, GB200 (one GPU of a superchip), B300, RTX 5090, RTX PRO 6000 Blackwell.

They load and validate, hold the per-SM limits of their compute capability's table, say which values are
assumed and from what, agree with the vendor peaks they cite, and take their family's model data (blackwell:
Hopper's; blackwell-rtx: Ada's).
"""

import pytest

from warpspeed.device import HIT_RATE_CURVES, device, device_for_gpu_name
from warpspeed.interface.cli import main

MiB = 2**20
BLACKWELL = ("B200", "GB200", "B300")
BLACKWELL_RTX = ("RTX-5090", "RTX-PRO-6000-Blackwell")
IDS = BLACKWELL + BLACKWELL_RTX

# NVIDIA CUDA Programming Guide (CUDA 13), sec. 5.1, Tables 30-32, and CUDA 13.0's cuda_occupancy.h:
# threads, blocks, registers per SM, registers per thread, shared per SM and per block (KiB), unified L1 (KiB),
# FP32:FP64 throughput; register allocation 256 per warp, 4 sub-partitions, shared memory in 128 B units.
CC_TABLE = {
    "10.0": dict(max_threads_per_sm=2048, max_blocks_per_sm=32, registers_per_sm=65536, max_registers_per_thread=255,
                 shared_KiB=228, shared_per_block_KiB=227, l1_KiB=256, fp32_to_fp64=2),
    "10.3": dict(max_threads_per_sm=2048, max_blocks_per_sm=32, registers_per_sm=65536, max_registers_per_thread=255,
                 shared_KiB=228, shared_per_block_KiB=227, l1_KiB=256, fp32_to_fp64=64),
    "12.0": dict(max_threads_per_sm=1536, max_blocks_per_sm=24, registers_per_sm=65536, max_registers_per_thread=255,
                 shared_KiB=100, shared_per_block_KiB=99, l1_KiB=128, fp32_to_fp64=64),
}


@pytest.mark.parametrize("dev_id", IDS)
def test_the_file_loads_validates_and_names_its_family(dev_id, capsys):
    d = device(dev_id)
    assert d.id == dev_id and d.file.endswith(f"{dev_id}.toml")
    assert d.architecture == ("blackwell" if dev_id in BLACKWELL else "blackwell-rtx")
    assert main(["devices", "validate", d.file]) == 0
    assert "valid" in capsys.readouterr().out


@pytest.mark.parametrize("dev_id", IDS)
def test_the_per_sm_limits_are_the_compute_capabilitys(dev_id):
    d = device(dev_id)
    cc = CC_TABLE[d.compute_capability]
    assert (d.max_threads_per_sm, d.max_blocks_per_sm, d.registers_per_sm, d.max_registers_per_thread) == (
        cc["max_threads_per_sm"], cc["max_blocks_per_sm"], cc["registers_per_sm"], cc["max_registers_per_thread"])
    assert d.shared_per_sm_bytes == cc["shared_KiB"] * 1024
    assert d.shared_per_block_bytes == cc["shared_per_block_KiB"] * 1024
    assert d.l1_size_bytes == cc["l1_KiB"] * 1024
    assert d.fp32_lanes_per_sm == 128 and d.fp32_lanes_per_sm // d.fp64_lanes_per_sm == cc["fp32_to_fp64"]
    assert (d.register_alloc_unit, d.register_subpartitions, d.shared_alloc_unit_bytes,
            d.shared_reserved_per_block_bytes) == (256, 4, 128, 1024)
    assert (d.warp_size, d.max_threads_per_block, d.max_block_dims) == (32, 1024, (1024, 1024, 64))


@pytest.mark.parametrize("dev_id, cc", [("B200", "10.0"), ("GB200", "10.0"), ("B300", "10.3"), ("RTX-5090", "12.0"),
                                        ("RTX-PRO-6000-Blackwell", "12.0")])
def test_the_compute_capability_is_the_parts(dev_id, cc):
    assert device(dev_id).compute_capability == cc


@pytest.mark.parametrize("dev_id, fp32_TF, fp64_TF, tolerance", [
    ("B200", 75, 37, 0.01),                      # HGX B200 (1000 W), the driver's 1965 MHz between the two
    ("GB200", 80, 40, 0.001),                    # GB200 NVL72 per GPU
    ("B300", 75, 75 / 64, 0.001),                # HGX B300 FP32; FP64 at 1/64 (NVIDIA lists 1.25 TF, rounded)
    ("RTX-5090", 104.8, 104.8 / 64, 0.001),
    ("RTX-PRO-6000-Blackwell", 125, 125 / 64, 0.01),   # "up to 125 TF"; 2617 MHz gives 126
])
def test_lanes_sms_and_clock_give_the_vendor_peaks(dev_id, fp32_TF, fp64_TF, tolerance):
    d = device(dev_id)
    assert d.peak_GFLOP_s("fp32") / 1000 == pytest.approx(fp32_TF, rel=tolerance)
    assert d.peak_GFLOP_s("fp64") / 1000 == pytest.approx(fp64_TF, rel=tolerance)


def test_the_split_l2_of_the_two_die_parts_is_two_partitions():
    for dev_id in BLACKWELL:
        d = device(dev_id)
        assert d.l2_size_bytes == 132_644_864 and d.l2_partitions == 2
        assert d.l2_effective_size_bytes == 132_644_864 // 2 == int(63.25 * MiB)
        assert d.source_of("l2_partitions").startswith("assumed:")
    for dev_id, size in (("RTX-5090", 96 * MiB), ("RTX-PRO-6000-Blackwell", 128 * MiB)):
        d = device(dev_id)
        assert (d.l2_size_bytes, d.l2_partitions, d.l2_effective_size_bytes) == (size, 1, size)


def test_what_no_source_gives_is_assumed_and_names_what_it_was_taken_from():
    for dev_id in IDS:
        d = device(dev_id)
        assert d.source_of("l2_bw").startswith("assumed:")
        assert d.source_of("l1_bytes_per_cycle").startswith("assumed:")
    for dev_id in BLACKWELL:
        d = device(dev_id)
        assert "Hopper's" in d.source_of("l2_bw") and "Hopper's" in d.source_of("l1_bytes_per_cycle")
        for key in ("l1_load_lines_per_wavefront", "l1_store_lines_per_wavefront", "l1_wavefronts_per_warp"):
            assert d.source_of(key).startswith("assumed: Hopper's")
        # Hopper's line rule values, and Hopper's L2 bandwidth per SM and clock (10200 GB/s / 132 / 1.98 GHz)
        assert (d.l1_load_lines_per_wavefront, d.l1_store_lines_per_wavefront, d.l1_wavefronts_per_warp) == (3, 2, 4)
        assert d.l2_bw_GB_s == pytest.approx(10200 / (132 * 1.98) * d.sm_count * d.clock_GHz, rel=0.001)
    for dev_id in BLACKWELL_RTX:
        d = device(dev_id)
        assert "Ada's" in d.source_of("l2_bw") and "Ada's" in d.source_of("l1_bytes_per_cycle")
        assert d.l1_load_lines_per_wavefront is None  # Ada's pairing rule
        assert d.l2_bw_GB_s == pytest.approx(5300 / (142 * 2.49) * d.sm_count * d.clock_GHz, rel=0.001)
    # B200 and GB200: the H200's measured copy efficiency on their peaks; B300 and the RTX PRO 6000: copies a
    # third party measured
    for dev_id in ("B200", "GB200"):
        d = device(dev_id)
        assert d.dram_bw_GB_s == pytest.approx(3733 / 4800 * d.dram_bw_peak_GB_s, rel=0.001)
        assert d.source_of("dram_bw").startswith("assumed: the H200's")
    assert device("B300").source_of("dram_bw").startswith("measured (third party)")
    assert device("RTX-PRO-6000-Blackwell").source_of("dram_bw").startswith("measured (third party)")
    assert device("RTX-5090").dram_bw_GB_s == device("RTX-PRO-6000-Blackwell").dram_bw_GB_s == 1460


def curves(d):
    return {c: (getattr(d.hit_rates, c).a, getattr(d.hit_rates, c).b, getattr(d.hit_rates, c).c)
            for c in HIT_RATE_CURVES}


def test_the_families_take_hoppers_and_adas_model_data():
    """The coefficients are Hopper's (measured) and Ada's; their sources say they were taken, not measured."""
    h100, l40s = device("H100-SXM5-80GB"), device("L40S")
    for dev_id in BLACKWELL:
        d = device(dev_id)
        assert curves(d) == curves(h100)
        assert d.source_of("hit_rates.l2_z").startswith("assumed")
        assert (d.l2_latency_s, d.dram_latency_s) == (h100.l2_latency_s, h100.dram_latency_s)
    for dev_id in BLACKWELL_RTX:
        d = device(dev_id)
        assert curves(d) == curves(l40s)
        assert d.source_of("hit_rates.l2_z").startswith("assumed")
        assert (d.l2_latency_s, d.dram_latency_s) == (l40s.l2_latency_s, l40s.dram_latency_s)


@pytest.mark.parametrize("reported, dev_id", [
    ("NVIDIA B200", "B200"),                      # pytorch/ao PR 4002, a B200 device query
    ("NVIDIA GB200", "GB200"),                    # marin-community/marin PR 7334: what JAX reports on a GB200
    ("NVIDIA B300 SXM6 AC", "B300"),              # NVIDIA/cosmos-framework PR 114: torch.cuda.get_device_name()
    ("NVIDIA GeForce RTX 5090", "RTX-5090"),      # NVIDIA/nccl issue 1637, deviceQuery
    ("NVIDIA RTX PRO 6000 Blackwell Workstation Edition", "RTX-PRO-6000-Blackwell"),
])
def test_the_names_these_boards_report_find_their_files(reported, dev_id):
    assert device_for_gpu_name(reported).id == dev_id


@pytest.mark.parametrize("dev_id", IDS)
def test_a_ranking_runs_on_every_file(dev_id, capsys):
    assert main(["rank", "star3d-r4", "--device", dev_id, "--threads", "256", "--top", "3", "--jobs", "1"]) == 0
    assert capsys.readouterr().out.startswith(f"star3d-r4 on {dev_id}: best block")
