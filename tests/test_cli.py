"""The command line: outputs, JSON keys of INTERFACE.md, exit status 2 with one paragraph on bad input."""

import json

import pytest

from warpspeed.cli import main

INTERFACE_KEYS = ["kernel", "device", "block", "folding", "domain", "occupancy", "l1_cycles_per_warp_lup",
                  "volumes_B_per_lup", "limiters_GLup_s", "performance_GLup_s", "limiter", "time_s"]


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_estimate_text_leads_with_headline(capsys):
    code, out, err = run(capsys, "estimate", "star3d-r1", "--device", "A100-SXM4-40GB", "--block", "32,4,2",
                         "--domain", "126,126,126")
    assert code == 0 and err == ""
    first = out.splitlines()[0]
    assert "GLup/s" in first and "-bound" in first and "next:" in first
    assert "DRAM->L2 load" in out and "limiter" in out


def test_estimate_json_has_the_interface_keys_in_order(capsys):
    code, out, _ = run(capsys, "estimate", "star3d-r4", "--device", "A100-SXM4-40GB", "--block", "32,4,8",
                       "--folding", "1,1,2", "--format", "json", "--domain", "128,64,64")
    assert code == 0
    d = json.loads(out)
    assert list(d)[:len(INTERFACE_KEYS)] == INTERFACE_KEYS
    assert set(d["volumes_B_per_lup"]) == {"l1_load", "l2_load_compulsory", "l2_load", "l2_store",
                                           "dram_load_compulsory", "dram_load", "dram_store"}
    assert set(d["limiters_GLup_s"]) == {"FP", "L1", "L2", "DRAM"}
    assert set(d["occupancy"]) == {"blocks_per_sm", "wave_blocks", "limited_by"}
    assert d["block"] == [32, 4, 8] and d["folding"] == [1, 1, 2] and d["domain"] == [128, 64, 64]
    assert d["performance_GLup_s"] == min(v for v in d["limiters_GLup_s"].values() if v is not None)
    assert d["time_s"] == pytest.approx(128 * 64 * 64 / (d["performance_GLup_s"] * 1e9))


def test_set_overrides_change_the_device(capsys):
    code, out, _ = run(capsys, "estimate", "copy", "--device", "A100-SXM4-40GB", "--block", "256,1,1",
                       "--set", "dram_bw=3000GB/s", "--format", "json", "--domain", "256,64,64")
    assert code == 0
    d = json.loads(out)
    assert d["limiters_GLup_s"]["DRAM"] == pytest.approx(3000 / 16)
    assert "dram_bw" in d["device"]


def test_devices_and_kernels_verbs(capsys):
    code, out, _ = run(capsys, "devices")
    assert code == 0 and "A100-SXM4-40GB" in out and "GH200" in out
    code, out, _ = run(capsys, "devices", "show", "H100-SXM5-80GB")
    assert code == 0 and json.loads(out)["sm_count"] == 132
    code, out, _ = run(capsys, "kernels")
    assert code == 0 and all(n in out for n in ("copy", "star2d-r1", "star3d-r1", "star3d-r4", "box3d-r1"))


@pytest.mark.parametrize("argv, words", [
    (["estimate", "nope", "--device", "A100-SXM4-40GB", "--block", "32,1,1"], ["unknown kernel", "catalog"]),
    (["estimate", "copy", "--device", "Z9000", "--block", "32,1,1"], ["Z9000"]),
    (["estimate", "copy", "--device", "A100-SXM4-40GB", "--block", "32;4"], ["--block", "malformed"]),
    (["estimate", "copy", "--device", "A100-SXM4-40GB", "--block", "64,32,1"], ["2048 threads"]),
    (["estimate", "copy", "--device", "A100-SXM4-40GB", "--block", "32,1,1", "--registers", "300"], ["300"]),
    (["estimate", "copy", "--device", "A100-SXM4-40GB", "--block", "32,1,1", "--set", "l2_size=lots"],
     ["l2_size"]),
    (["estimate", "copy", "--device", "A100-SXM4-40GB", "--block", "32,1,1", "--set", "warp_speed=9"],
     ["warp_speed"]),
    (["estimate", "copy", "--device", "A100-SXM4-40GB"], ["--block"]),
    (["bogus"], ["invalid choice"]),
])
def test_bad_input_exits_2_with_one_paragraph(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.startswith("error:") and "Traceback" not in err
    assert "\n\n" not in err.strip()
    for w in words:
        assert w in err


def test_bad_kernel_file_exits_2(capsys, tmp_path):
    p = tmp_path / "bad.toml"
    p.write_text('name = "bad"\ndomain = [8, 8, 8]\n[[field]]\nname = "a"\nshape = [10, 10, 10]\n'
                 'loads = [["tidx*tidy", "tidy", "tidz"]]\n')
    code, _, err = run(capsys, "estimate", str(p), "--device", "A100-SXM4-40GB", "--block", "8,8,1")
    assert code == 2 and "field 'a'" in err and "tidx*tidy" in err
