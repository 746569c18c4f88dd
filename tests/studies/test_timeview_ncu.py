"""Time view (whole run + host transfers), the ncu CSV reader, and `project` with a measured source run."""

import json
import math

import pytest

import warpspeed
from warpspeed.application.timeview import link, time_view
from warpspeed.errors import InputError
from warpspeed.interface.cli import main
from warpspeed.measurement.measured import MeasuredRun, Traffic, measured_run, project_measured
from warpspeed.measurement.ncu import FP_METRICS, METRICS, metric, read_ncu_csv, select_launches
from warpspeed.studies.timeview import field_transfer_bytes, links
from warpspeed.units import parse_quantity

A100, H100 = warpspeed.device("A100-SXM4-40GB"), warpspeed.device("H100-SXM5-80GB")


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


# ---------------------------------------------------------------------------------------------- time view


def test_links_are_per_direction_pcie_arithmetic():
    assert links()["pcie4-x16"].bandwidth_GB_s == pytest.approx(16 * 16 * 128 / 130 / 8, rel=2e-3)
    assert links()["pcie5-x16"].bandwidth_GB_s == pytest.approx(32 * 16 * 128 / 130 / 8, rel=2e-3)
    assert link("nvlink-c2c").bandwidth_GB_s == 450
    custom = link("24GB/s")
    assert custom.bandwidth_GB_s == 24 and custom.source.startswith("override")
    with pytest.raises(InputError, match="pcie4-x16"):
        link("pcie7")
    with pytest.raises(InputError, match="--link"):
        link("0GB/s")


def test_time_view_is_iterations_times_kernel_plus_copies():
    k = warpspeed.kernels.get("star3d-r4")
    in_b, out_b = field_transfer_bytes(k)
    src, dst = (f for f in k.fields)
    assert in_b == math.prod(src.shape) * 8 and out_b == math.prod(dst.shape) * 8
    v = time_view(k, 2e-3, iterations=50, link_spec="pcie4-x16")
    assert v.compute_s == pytest.approx(0.1)
    assert v.transfer_s == pytest.approx((in_b + out_b) / (links()["pcie4-x16"].bandwidth_GB_s * 1e9))
    assert v.total_s == pytest.approx(v.compute_s + v.transfer_s)
    assert 0 < v.transfer_fraction < 1
    explicit = time_view(k, 2e-3, iterations=1, link_spec="10GB/s", transfer_bytes=(10**9, 0))
    assert explicit.transfer_s == pytest.approx(0.1)
    with pytest.raises(InputError, match="iterations"):
        time_view(k, 1e-3, iterations=0)


def test_time_units():
    assert parse_quantity("1.5ms", "time", key="t") == pytest.approx(1.5e-3)
    assert parse_quantity("250us", "time", key="t") == pytest.approx(2.5e-4)
    with pytest.raises(InputError, match="ms"):
        parse_quantity("3 min", "time", key="--measured-time")


def test_estimate_cli_time_view(capsys):
    base = ["estimate", "copy", "--device", "A100-SXM4-40GB", "--block", "256,1,1", "--domain", "1024,256,64"]
    code, out, _ = run(capsys, *base, "--format", "json")
    assert code == 0 and "time_view" not in json.loads(out)  # the INTERFACE JSON is unchanged by default
    code, out, _ = run(capsys, *base, "--format", "json", "--iterations", "10", "--link", "pcie5-x16")
    d = json.loads(out)
    tv = d["time_view"]
    assert tv["iterations"] == 10 and tv["compute_s"] == pytest.approx(10 * d["time_s"])
    assert tv["transfer_in_bytes"] == tv["transfer_out_bytes"] == 1024 * 256 * 64 * 8
    assert tv["total_s"] == pytest.approx(tv["compute_s"] + 2 * 1024 * 256 * 64 * 8 / 63e9)
    code, out, _ = run(capsys, *base, "--transfer", "1GB,0", "--link", "20GB/s")
    assert code == 0 and "1 GB in and 0 GB out" in out and "% transfer" in out
    code, _, err = run(capsys, *base, "--transfer", "1GB,2GB,3GB")
    assert code == 2 and "--transfer" in err


# ---------------------------------------------------------------------------------------------- ncu reader

def _ncu_csv(rows: list[dict], units: dict) -> str:
    cols = ["ID", "Kernel Name", "Block Size"] + list(units)
    lines = ["==PROF== Connected to process 1234", ",".join(f'"{c}"' for c in cols),
             ",".join(['""', '""', '""'] + [f'"{u}"' for u in units.values()])]
    for i, r in enumerate(rows):
        lines.append(",".join([f'"{i}"', f'"{r["name"]}"', '"(256, 1, 1)"'] + [f'"{r[c]}"' for c in units]))
    return "\n".join(lines) + "\n"


UNITS = {METRICS["time"]: "usecond", METRICS["l1_load_sectors"]: "sector", METRICS["l1_store_sectors"]: "Ksector",
         METRICS["l2_load_sectors"]: "sector", METRICS["l2_store_sectors"]: "sector",
         METRICS["dram_read_bytes"]: "Mbyte", METRICS["dram_write_bytes"]: "byte",
         METRICS["warp_usage_threads"]: "", **{m: "inst" for m in FP_METRICS["fp64"]}}


def _row(name, time_us, scale=1.0):
    m = METRICS
    return {"name": name, m["time"]: time_us, m["l1_load_sectors"]: "1,000,000", m["l1_store_sectors"]: 500 * scale,
            m["l2_load_sectors"]: 700000, m["l2_store_sectors"]: 500000, m["dram_read_bytes"]: 20.5,
            m["dram_write_bytes"]: 16e6, m["warp_usage_threads"]: 28.8,
            FP_METRICS["fp64"][0]: 1e6, FP_METRICS["fp64"][1]: 2e6, FP_METRICS["fp64"][2]: "n/a"}


def test_ncu_csv_units_separators_and_median(tmp_path):
    f = tmp_path / "run.csv"
    f.write_text(_ncu_csv([_row("stencil", 100), _row("stencil", 120), _row("stencil", 500)], UNITS))
    rows = select_launches(read_ncu_csv(f))
    assert len(rows) == 3
    assert metric(rows, METRICS["time"]) == pytest.approx(120e-6)  # the median launch, in seconds
    assert metric(rows, METRICS["l1_load_sectors"]) == 1e6  # "1,000,000"
    assert metric(rows, METRICS["l1_store_sectors"]) == 5e5  # Ksector
    assert metric(rows, METRICS["dram_read_bytes"]) == pytest.approx(20.5e6)  # Mbyte
    assert metric(rows, FP_METRICS["fp64"][2]) is None  # n/a
    run_ = measured_run(2e6, ncu_rows=rows, fp=(1e6, 2e6, 0.0))
    assert run_.time_s == pytest.approx(120e-6)
    assert run_.traffic == Traffic(32 * 1.5e6, 32 * 1.2e6, 36.5e6)
    assert run_.warp_usage == pytest.approx(0.9)
    assert run_.work_is_flops and run_.work == 4e6 and run_.lups == 2e6


def test_ncu_csv_errors(tmp_path):
    f = tmp_path / "two.csv"
    f.write_text(_ncu_csv([_row("a_kernel", 100), _row("b_kernel", 90)], UNITS))
    with pytest.raises(InputError, match="--ncu-kernel"):
        select_launches(read_ncu_csv(f))
    assert len(select_launches(read_ncu_csv(f), "b_")) == 1
    with pytest.raises(InputError, match="a_kernel, b_kernel"):
        select_launches(read_ncu_csv(f), "zzz")
    bad = tmp_path / "bad.csv"
    bad.write_text("kernel,time\nx,1\n")
    with pytest.raises(InputError, match="ID"):
        read_ncu_csv(bad)
    unit = tmp_path / "unit.csv"
    unit.write_text(_ncu_csv([_row("k", 1)], {**UNITS, METRICS["time"]: "fortnight"}))
    with pytest.raises(InputError, match="fortnight"):
        read_ncu_csv(unit)
    partial = {k: v for k, v in UNITS.items() if k != METRICS["dram_write_bytes"]}
    f2 = tmp_path / "partial.csv"
    f2.write_text(_ncu_csv([_row("k", 1)], partial))
    with pytest.raises(InputError, match="dram__bytes_write.sum"):
        measured_run(1e6, ncu_rows=read_ncu_csv(f2))


def test_lups_work_without_fp_counts_and_glup_figures():
    r = measured_run(1e8, time_s=1e-3, traffic=Traffic(3.2e9, 1.6e9, 1.6e9))
    assert not r.work_is_flops and r.work == 1e8
    d = project_measured(r, A100, H100).to_dict()
    assert d["measured_GLup_s"] == pytest.approx(100.0)
    assert d["midpoint_GLup_s"] == pytest.approx(d["midpoint"] / 1e9)
    flops = MeasuredRun(1e-3, Traffic(3.2e9, 1.6e9, 1.6e9), work=5e8, lups=1e8)
    assert project_measured(flops, A100, H100).to_dict()["measured_GLup_s"] == pytest.approx(100.0)


# ---------------------------------------------------------------------------------------------- project CLI

PROJECT = ["project", "copy", "--from", "A100-SXM4-40GB", "--to", "H100-SXM5-80GB", "--threads", "256",
           "--domain", "1024,256,64", "--format", "json", "--jobs", "1"]


def test_project_measured_and_hybrid_cli(capsys, tmp_path):
    lups = 1024 * 256 * 64
    measured = ["--measured-time", "0.25ms", "--measured-bytes", f"{20 * lups}B,{18 * lups}B,{16.5 * lups:.0f}B"]
    code, out, err = run(capsys, *PROJECT, *measured, "--mode", "measured")
    assert code == 0, err
    d = json.loads(out)["measured"]
    expected = project_measured(MeasuredRun(2.5e-4, Traffic(20.0 * lups, 18.0 * lups, 16.5 * lups), lups,
                                            work_is_flops=False, lups=lups), A100, H100)
    assert d["mode"] == "measured" and d["interval"] == pytest.approx(list(expected.interval))
    code, out, _ = run(capsys, *PROJECT, *measured)
    h = json.loads(out)["measured"]
    assert h["mode"] == "hybrid"
    assert h["levels"]["DRAM"]["oi_target"] == pytest.approx(1 / 16.0)  # copy: 16 B/lup estimated on the H100
    assert h["levels"]["DRAM"]["oi_source"] == pytest.approx(1 / 16.5)
    # an ncu export gives the same as the flags
    m = METRICS
    row = {"name": "copy", m["time"]: 250, m["l1_load_sectors"]: 10 * lups / 32, m["l1_store_sectors"]: 10 * lups / 32,
           m["l2_load_sectors"]: 9 * lups / 32, m["l2_store_sectors"]: 9 * lups / 32,
           m["dram_read_bytes"]: 8.5 * lups, m["dram_write_bytes"]: 8 * lups, m["warp_usage_threads"]: 32}
    units = {k: ("usecond" if k == m["time"] else "byte" if "bytes" in k else "") for k in row if k != "name"}
    f = tmp_path / "copy.csv"
    f.write_text(_ncu_csv([row], units))
    code, out, err = run(capsys, *PROJECT, "--ncu", str(f), "--mode", "measured")
    assert code == 0, err
    assert json.loads(out)["measured"]["interval"] == pytest.approx(d["interval"])
    code, out, _ = run(capsys, *PROJECT[:-4], "--measured-time", "0.25ms", "--measured-bytes", "1GB,1GB,1GB")
    assert code == 0 and "hybrid projection" in out and "operational intensity" in out


def test_project_set_from_changes_only_the_source(capsys):
    code, out, _ = run(capsys, *PROJECT, "--model", "roofline")
    base = json.loads(out)
    code, out, _ = run(capsys, *PROJECT, "--model", "roofline", "--set-from", "dram_bw=2750GB/s")
    d = json.loads(out)
    assert d["from_best"]["performance_GLup_s"] == pytest.approx(2 * base["from_best"]["performance_GLup_s"])
    assert d["to_best"]["performance_GLup_s"] == pytest.approx(base["to_best"]["performance_GLup_s"])
    assert d["from"].startswith("A100-SXM4-40GB+")


@pytest.mark.parametrize("argv, words", [
    (["--measured-bytes", "1GB,2GB"], "L1,L2,DRAM"),
    (["--measured-time", "1ms", "--measured-bytes", "1GB,1GB,1GB", "--measured-fp", "1,x,3"], "--measured-fp"),
    (["--measured-bytes", "1GB,1GB,1GB"], "--measured-time"),
    (["--measured-time", "1ms", "--measured-bytes", "9,4,2"], "--measured-bytes L1: give the unit"),
    (["--ncu-kernel", "k"], "--ncu"),
    (["--set-from", "l2_size"], "--set-from"),
    (["--iterations", "0"], "--iterations"),
])
def test_project_bad_measured_input_exits_2(capsys, argv, words):
    code, _, err = run(capsys, *PROJECT, *argv)
    assert code == 2 and words in err and "Traceback" not in err
