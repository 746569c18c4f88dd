"""The AMD Instinct devices: every answer on one says its family was never measured, and the CDNA3/CDNA4 parts
added with the MI300X (MI300A, MI325X, MI355X) carry the numbers their sources give."""

import pytest

import warpspeed
from warpspeed.model.device_validation import device_validation
from warpspeed.model.launch import LaunchError, occupancy
from warpspeed.render.report import headline

AMD = {"MI210": "cdna2", "MI250X-GCD": "cdna2", "MI300X": "cdna3", "MI300A": "cdna3", "MI325X": "cdna3",
       "MI355X": "cdna4"}
KiB = 1024


def test_the_shipped_amd_devices_are_these():
    assert sorted(d for d in warpspeed.device_ids() if warpspeed.device(d).vendor == "AMD") == sorted(AMD)


@pytest.mark.parametrize(("dev_id", "family"), AMD.items())
def test_every_amd_answer_says_the_family_was_never_measured(dev_id, family):
    e = warpspeed.estimate("star3d-r1", dev_id, (64, 2, 2), domain=(256, 128, 64))
    validation = device_validation(warpspeed.device(dev_id))
    assert validation.family == family and validation.status == "assumed" and not validation.measured
    assert e.to_dict()["device_validation"]["status"] == "assumed"
    assert headline(e).splitlines()[1] == (f"{dev_id}: model data {validation.validation}, never measured on "
                                           f"{family} -- a first estimate")


def test_cdna4_takes_all_its_model_data_from_cdna3():
    mi355x, mi300x = warpspeed.device("MI355X"), warpspeed.device("MI300X")
    v = device_validation(mi355x)
    assert (v.validation, v.data_from) == ("assumed from cdna3", ("cdna3",))
    assert v.measured_on == device_validation(mi300x).measured_on  # the GPUs behind CDNA3's data
    assert mi355x.hit_rates.l2_z.a == mi300x.hit_rates.l2_z.a and mi355x.hit_rates.l2_z.c == mi300x.hit_rates.l2_z.c
    assert (mi355x.l2_latency_s, mi355x.dram_latency_s) == (mi300x.l2_latency_s, mi300x.dram_latency_s)
    assert mi355x.sources["l2_latency"].startswith("assumed: the cdna3 family's value, taken for cdna4")
    assert mi355x.l1_load_lines_per_wavefront is None  # the pairing rule, as on CDNA3


@pytest.mark.parametrize(("dev_id", "cus", "clock", "fp64_TF", "l2_MiB", "parts", "peak_GB_s", "dram_GB"), [
    ("MI300A", 228, 2.1, 61.3, 24, 6, 5300, 128), ("MI325X", 304, 2.1, 81.7, 32, 8, 6000, 256),
    ("MI355X", 256, 2.4, 78.6, 32, 8, 8000, 288),
])
def test_the_new_instinct_parts_hold_their_published_numbers(dev_id, cus, clock, fp64_TF, l2_MiB, parts,
                                                             peak_GB_s, dram_GB):
    """CUs, clock and vector FP64 peak (vendor tables), the L2 of 4 MB per XCD, the HBM peak and size; the
    DRAM bandwidth the model uses is the peak at the MI210's measured triad fraction, as for the MI300X."""
    d = warpspeed.device(dev_id)
    assert (d.sm_count, d.clock_GHz, d.warp_size) == (cus, clock, 64)
    assert d.peak_GFLOP_s("fp64") / 1000 == pytest.approx(fp64_TF, abs=0.05)
    assert d.l2_size_bytes == l2_MiB * 1024 * KiB and d.l2_partitions == parts
    assert d.l2_effective_size_bytes == 4 * 1024 * KiB  # one XCD's L2
    assert d.dram_bw_peak_GB_s == peak_GB_s and d.dram_bw_GB_s == pytest.approx(round(peak_GB_s * 0.797))
    assert d.dram_size_bytes == dram_GB * 10**9


def test_the_mi355x_lds_of_160_kb_holds_a_workgroup_the_mi300x_cannot():
    mi355x, mi300x = warpspeed.device("MI355X"), warpspeed.device("MI300X")
    assert mi355x.shared_per_sm_bytes == mi355x.shared_per_block_bytes == 160 * KiB
    o = occupancy(mi355x, 256, 32, 100 * KiB)
    assert (o.blocks_per_sm, o.limited_by) == (1, "shared_memory")
    assert occupancy(mi355x, 256, 32, 40 * KiB).blocks_per_sm == 4  # 160 KB / 40 KB; 8 by the waves
    with pytest.raises(LaunchError, match="shared memory"):
        occupancy(mi300x, 256, 32, 100 * KiB)
