"""The command line: outputs, the JSON keys of docs/outputs.md, exit status 2 with one paragraph on bad input."""

import importlib
import json
import math

import pytest

import warpspeed
from warpspeed.interface.cli import main

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
    assert d["model"] == "latency" and d["performance_model"]["name"] == "latency"
    # the latency model's limits: the roofline's FP, L1 and L2, DRAM with its run cost, and latency
    lim = d["performance_model"]["limits_GLup_s"]
    assert set(lim) == {"FP", "L1", "L2", "DRAM", "latency"}
    assert all(lim[k] == d["limiters_GLup_s"][k] for k in ("FP", "L1", "L2"))
    assert lim["DRAM"] <= d["limiters_GLup_s"]["DRAM"]
    times = [1 / v for v in lim.values() if v is not None]
    p = d["performance_model"]["overlap_exponent"]
    assert p == 4 and d["performance_GLup_s"] == pytest.approx(sum(t ** p for t in times) ** (-1 / p))
    assert d["limiter"] == min((k for k in lim if lim[k] is not None), key=lambda k: lim[k])
    assert d["time_s"] == pytest.approx(128 * 64 * 64 / (d["performance_GLup_s"] * 1e9))


def test_estimate_roofline_model_is_the_smallest_limiter(capsys):
    code, out, _ = run(capsys, "estimate", "star3d-r4", "--device", "A100-SXM4-40GB", "--block", "32,4,8",
                       "--folding", "1,1,2", "--format", "json", "--domain", "128,64,64", "--model", "roofline")
    assert code == 0
    d = json.loads(out)
    assert list(d)[:len(INTERFACE_KEYS)] == INTERFACE_KEYS
    assert d["model"] == "roofline" and d["performance_model"]["limits_GLup_s"] == d["limiters_GLup_s"]
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
    code, out, _ = run(capsys, "devices", "show", "H100-SXM5-80GB", "--format", "json")
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


HUGE = "2147483647,2147483647,2147483647"


@pytest.fixture
def no_estimates(monkeypatch):
    """Limits are checked before any estimate work: the estimator's stages fail the test if reached."""
    def reached(*args, **kwargs):
        raise AssertionError("the configuration reached the estimator")

    monkeypatch.setattr(importlib.import_module("warpspeed.model.estimate"), "_estimate", reached)
    ranking = importlib.import_module("warpspeed.studies.ranking")
    monkeypatch.setattr(ranking, "evaluate", reached)
    monkeypatch.setattr(ranking, "_evaluate_space", reached)


@pytest.mark.parametrize("argv, words", [
    # the reported command: an OverflowError in the estimator before the domain limit
    (["estimate", "star3d-r4", "--device", "H100-SXM5-80GB", "--block", "32,4,8", "--domain", HUGE],
     ["domain", "2^40", "1099511627776"]),
    # a folding that took minutes and gigabytes
    (["estimate", "star3d-r4", "--device", "H100-SXM5-80GB", "--block", "32,4,8", "--folding", "1,1,4096"],
     ["folding", "4096", "64"]),
    (["estimate", "copy", "--device", "A100-SXM4-40GB", "--block", "32,1,1", "--folding", "1,1,65"],
     ["folding", "65", "64"]),
    (["estimate", "copy", "--device", "A100-SXM4-40GB", "--block", "32,1,1", "--domain", "2147483648,1,1"],
     ["domain", "2147483648", "1..2147483647"]),
    (["estimate", "copy", "--device", "A100-SXM4-40GB", "--block", "2147483648,1,1"],
     ["block", "2147483648", "1..2147483647"]),
    # a grid CUDA cannot launch: 65536 blocks in y
    (["estimate", "copy", "--device", "A100-SXM4-40GB", "--block", "32,4,1", "--domain", "32,262144,1"],
     ["grid", "65536", "65535"]),
    (["plot", "roofline", "copy", "--device", "A100-SXM4-40GB", "--block", "32,1,1", "--folding", "1,1,4096",
      "-o", "never-written.png"], ["folding", "4096", "64"]),
    (["rank", "star3d-r4", "--device", "H100-SXM5-80GB", "--domain", HUGE], ["domain", "2^40"]),
    (["rank", "star3d-r4", "--device", "H100-SXM5-80GB", "--folding", "1,1,4096"], ["folding", "64"]),
    (["whatif", "star3d-r4", "--device", "H100-SXM5-80GB", "--sweep", "l2_size=10MiB,20MiB", "--domain", HUGE],
     ["domain", "2^40"]),
    (["whatif", "star3d-r4", "--device", "H100-SXM5-80GB", "--sweep", "l2_size=10MiB,20MiB", "--folding",
      "1,1,4096"], ["folding", "64"]),
    (["project", "star3d-r4", "--from", "A100-SXM4-40GB", "--to", "H100-SXM5-80GB", "--domain", HUGE],
     ["domain", "2^40"]),
    (["project", "star3d-r4", "--from", "A100-SXM4-40GB", "--to", "H100-SXM5-80GB", "--folding", "1,1,4096"],
     ["folding", "64"]),
])
def test_configurations_past_the_limits_exit_2_before_any_estimate(capsys, no_estimates, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "", err
    assert err.startswith("error:") and "internal error" not in err and "Traceback" not in err
    for w in words:
        assert w in err


def test_a_grid_that_cannot_launch_is_an_error_row_of_a_ranking(capsys):
    """Blocks too flat for the domain cannot launch (65535 blocks in y at most); taller ones are ranked."""
    code, out, err = run(capsys, "rank", "copy", "--device", "A100-SXM4-40GB", "--threads", "32", "--domain",
                         "32,1048576,1", "--format", "json", "--jobs", "1")
    assert code == 0, err
    results = json.loads(out)["results"]
    for r in results:
        if r["block"][1] < 32:  # 1048576 / 16 = 65536 blocks in y: one too many
            assert "grid" in r["error"] and "65535" in r["error"]
        else:
            assert "error" not in r and r["grid"][1] <= 65535


def test_version_and_kernels_show_a_template_that_estimates_like_the_catalog_name(capsys, tmp_path):
    code, out, _ = run(capsys, "--version")
    assert code == 0 and out.strip() == f"warpspeed {warpspeed.__version__}"
    code, out, _ = run(capsys, "kernels", "show", "star3d-r4")
    assert code == 0 and 'name = "star3d-r4"' in out
    f = tmp_path / "mine.toml"
    f.write_text(out)
    mine = warpspeed.estimate(str(f), "H100-SXM5-80GB", (32, 4, 8))
    ref = warpspeed.estimate("star3d-r4", "H100-SXM5-80GB", (32, 4, 8))
    assert mine.volumes_B_per_lup == ref.volumes_B_per_lup and mine.performance_GLup_s == ref.performance_GLup_s
    for argv, words in ((("kernels", "show", "star"), ("generated kernel", "star3d-r4")),
                        (("kernels", "show", "nope"), ("not in the catalog", "copy")),
                        (("kernels", "show"), ("needs a NAME", "box3d-r1")),
                        (("kernels", "list", "copy"), ("kernels show copy",))):
        code, out, err = run(capsys, *argv)
        assert code == 2 and out == "" and all(w in " ".join(err.split()) for w in words), err


def test_foldings_space_separated_or_repeated_and_thread_counts_that_are_not_powers_of_two(capsys):
    base = ["rank", "star3d-r4", "--device", "A100-SXM4-40GB", "--threads", "256", "--format", "json", "--jobs", "1"]
    code, spaced, err = run(capsys, *base, "--folding", "1,1,1", "1,2,1", "1,1,2")
    assert code == 0, err
    code, repeated, err = run(capsys, *base, "--folding", "1,1,1", "--folding", "1,2,1", "--folding", "1,1,2")
    assert code == 0, err
    assert json.loads(spaced)["results"] == json.loads(repeated)["results"]
    assert {tuple(r["folding"]) for r in json.loads(spaced)["results"]} == {(1, 1, 1), (1, 2, 1), (1, 1, 2)}
    code, out, err = run(capsys, "rank", "star3d-r4", "--device", "A100-SXM4-40GB", "--threads", "100,256")
    assert code == 2 and out == ""
    err = " ".join(err.split())
    assert "--threads 100: the ranked block shapes have power-of-two extents" in err and "64, 128" in err


def test_rank_falls_back_to_the_largest_thread_count_that_launches_unless_threads_are_given(capsys):
    """255 registers: blocks of 1024 or 512 threads cannot launch (64 K registers per SM), 256 can."""
    code, out, err = run(capsys, "rank", "copy", "--device", "A100-SXM4-40GB", "--registers", "255", "--jobs", "1",
                         "--domain", "256,64,32", "--format", "json")
    assert code == 0, err
    assert {math.prod(r["block"]) for r in json.loads(out)["results"]} == {256}
    err = " ".join(err.split())
    assert "note: no block of 1024 threads can launch copy" in err and "ranked blocks of 256 threads" in err
    code, out, err = run(capsys, "rank", "copy", "--device", "A100-SXM4-40GB", "--registers", "255", "--jobs", "1",
                         "--domain", "256,64,32", "--threads", "1024")
    assert code == 2 and out == ""
    err = " ".join(err.split())
    assert err.startswith("error: no configuration of copy can launch on A100-SXM4-40GB") and "--threads" in err


def test_a_bare_warpspeed_prints_the_help(capsys):
    assert main([]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: warpspeed") and "rank" in out and "estimate" in out


@pytest.mark.parametrize("extra", [["--format", "json"], ["--iterations", "3"], ["--link", "pcie5-x16"]])
def test_plot_refuses_options_that_would_change_nothing(extra, capsys, tmp_path):
    args = ["plot", "roofline", "star3d-r4", "--device", "H100-SXM5-80GB", "--block", "32,4,8",
            "-o", str(tmp_path / "r.png")]
    assert main([*args, *extra]) == 2
    assert f"unrecognized arguments: {' '.join(extra)}" in capsys.readouterr().err


@pytest.mark.parametrize("verb", [["rank", "star3d-r1", "--device", "H100-SXM5-80GB"],
                                  ["whatif", "star3d-r1", "--device", "H100-SXM5-80GB", "--sweep",
                                   "l2_size=10MiB,20MiB"]])
def test_odd_threads_point_to_a_command_that_takes_a_block(capsys, verb):
    """`rank --threads 100` advised `--block X,Y,Z`, which rank does not have."""
    assert main([*verb, "--threads", "64,100"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--threads 100: the ranked block shapes have power-of-two extents" in err
    assert "(e.g. 64, 128)" in err and "warpspeed estimate KERNEL --block X,Y,Z" in err


@pytest.mark.parametrize("option, value", [("--block", "-32,4,8"), ("--folding", "-1,1,1"), ("--domain", "-5,5,5")])
def test_a_negative_extent_is_named_not_read_as_a_missing_value(capsys, option, value):
    """`--block -32,4,8` said 'expected one argument': argparse took the value for another option."""
    args = ["estimate", "star3d-r1", "--device", "H100-SXM5-80GB", "--block", "32,4,8"]
    assert main([*args, option, value]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert f"{option} '{value}' is malformed: give 1 to 3 positive integers" in err


def test_serve_on_a_host_that_does_not_resolve_says_so(capsys):
    """`serve --host 999.1.1.1` printed the resolver's 'Name or service not known' alone and exited 1."""
    pytest.importorskip("flask")
    assert main(["serve", "--host", "999.1.1.1", "--port", "0"]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--host '999.1.1.1' is not an address or a name this machine can resolve" in err
    assert "127.0.0.1 (this machine only)" in err


def test_serve_passes_allowed_host_names_to_the_page(monkeypatch):
    """`serve --allow-host NAME` (repeatable): the names a proxy or a DNS name of this machine give in Host."""
    pytest.importorskip("flask")
    from warpspeed.web import app

    asked = {}
    monkeypatch.setattr(app, "serve", lambda host, port, hosts=(): asked.update(host=host, port=port,
                                                                                 hosts=list(hosts)))
    assert main(["serve", "--port", "0", "--allow-host", "gpu1.example.org", "--allow-host", "proxy"]) == 0
    assert asked == {"host": "127.0.0.1", "port": 0, "hosts": ["gpu1.example.org", "proxy"]}
    assert {"gpu1.example.org", "proxy", "localhost"} <= app.allowed_hosts("127.0.0.1", asked["hosts"])
