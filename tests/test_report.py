"""The text report says what its numbers are: footprint rows named as footprints, the FP ceiling as the kernel's."""

import warpspeed
from warpspeed.report import text_report

SMALL = (256, 128, 64)


def _report(kernel: str, block: tuple[int, int, int]) -> str:
    return text_report(warpspeed.estimate(kernel, "H100-SXM5-80GB", block, domain=SMALL))


def test_footprint_rows_are_named_footprints_and_explained():
    text = _report("star3d-r4", (32, 4, 8))
    assert "compulsory" not in text  # the old label read as "at least", yet DRAM load can be smaller
    rows = {line[:30].strip(): line[30:].strip() for line in text.splitlines() if "footprint" in line[:30]}
    e = warpspeed.estimate("star3d-r4", "H100-SXM5-80GB", (32, 4, 8), domain=SMALL)
    assert rows["DRAM->L2 load, wave footprint"] == f"{e.volumes_B_per_lup['dram_load_compulsory']:.3g}"
    assert rows["L2->L1 load, block footprints"] == f"{e.volumes_B_per_lup['l2_load_compulsory']:.3g}"
    assert "subtracts the layer reuse" in " ".join(text.splitlines())


def test_fp_note_only_where_the_kernel_has_an_fp_ceiling():
    assert "not the spec sheet's peak" in " ".join(_report("star3d-r4", (32, 4, 8)).splitlines())
    assert "spec sheet" not in _report("copy", (256, 1, 1))  # no flops: FP limiter infinite, no note
