"""The text report says what its numbers are: footprint rows named as footprints, the FP ceiling as the kernel's."""

import math

import warpspeed
from warpspeed.render.report import text_report

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


def test_field_table_columns_stay_apart_for_long_names_and_small_values():
    """Each row of the per-field table reads as six tokens (name + five numbers), whatever the name's length."""
    long_name = "a_field_name_longer_than_sixteen"
    spec = dict(warpspeed.find_kernel("copy").spec)
    spec["field"] = [{**f, "name": long_name} if f["name"] == "src" else f for f in spec["field"]]
    text = text_report(warpspeed.estimate(warpspeed.kernel_from_dict(spec, source="test"), "H100-SXM5-80GB",
                                          (256, 1, 1), domain=SMALL))
    table = text.split("\nfield ")[1].splitlines()[1:]
    rows = [line.split() for line in table if line and not line.startswith("note")]
    assert [r[0] for r in rows] == [long_name, "dst"] and all(len(r) == 6 for r in rows)


def test_a_domain_smaller_than_one_block_gets_a_note():
    e = warpspeed.estimate("copy", "H100-SXM5-80GB", (256, 1, 1), domain=(4, 4, 4))
    note = next(n for n in e.notes if "smaller than one block" in n)
    assert "x 4 < 256" in note and "98.4 % of the launched threads" in note  # 64 cells in 16 blocks of 256
    few = warpspeed.estimate("star3d-r1", "H100-SXM5-80GB", (512, 2, 1), domain=(510, 64, 64)).notes
    assert any("x 510 < 512): 0.391 % of the launched threads have no cell" in n for n in few)  # 2 of 512
    assert not any("smaller than one block" in n for n in warpspeed.estimate(
        "copy", "H100-SXM5-80GB", (4, 4, 4), domain=(4, 4, 4)).notes)


def test_a_domain_larger_than_the_gpu_memory_gets_a_note():
    """star3d-r4 at 2000^3 with a 4-cell halo: two 2008^3 arrays of 8 B = 129.5 GB > the H100's 80 GB."""
    k = warpspeed.find_kernel("star3d-r4", domain=(2000, 2000, 2000))
    assert k.footprint_bytes == sum(math.prod(f.shape) * f.element_bytes for f in k.fields)
    assert k.footprint_bytes == 2 * 2008**3 * 8
    h100 = warpspeed.device("H100-SXM5-80GB")
    assert h100.dram_size_bytes == 80 * 10**9
    e = warpspeed.estimate(k, h100, (32, 4, 8))
    note = next(n for n in e.notes if "memory" in n)
    assert "129.5 GB, more than the 80 GB" in note and "does not fit on one GPU" in note
    assert not any("memory" in n for n in warpspeed.estimate(k, "H200-SXM-141GB", (32, 4, 8)).notes)
    assert not any("memory" in n for n in warpspeed.estimate(k, h100.with_overrides(dram_size="1TB"), (32, 4, 8)).notes)
    assert not any("memory" in n for n in warpspeed.estimate("star3d-r4", h100, (32, 4, 8)).notes)  # default domain
