"""The ncu CSV reader on the layout Nsight Compute 2025.3 prints with ``--csv --page raw`` (as on the H100 of
the measurement kit): units of the columns warpspeed does not read (``block``, ``register/thread``, ``%``)
never stop it; the used metrics come out in base units; a damaged file is a clear error, also on the CLI."""

from __future__ import annotations

import json

import pytest
from ncu_exports import COLUMNS, LUPS, UNITS, ncu_export

from warpspeed.errors import InputError
from warpspeed.interface.cli import main
from warpspeed.measurement.ncu import FP_METRICS, METRICS, USED_METRICS, read_ncu_csv, select_launches

M = METRICS


def test_ncu_2025_3_export_gives_the_used_metrics_in_base_units(tmp_path):
    f = tmp_path / "copy-ncu.csv"
    f.write_text(ncu_export())
    rows = select_launches(read_ncu_csv(f))
    assert len(rows) == 3
    r = rows[0]
    assert r[M["time"]] == pytest.approx(48.10e-6)  # usecond
    assert r[M["dram_read_bytes"]] == pytest.approx(67108.86e3)  # Kbyte, thousands separator
    assert r[M["dram_write_bytes"]] == pytest.approx(67.11e6)  # Mbyte
    assert r[M["l1_store_sectors"]] == pytest.approx(2097.15e3)  # Ksector
    assert r[M["l1_load_sectors"]] == 2097152.0 and r[M["cycles"]] == 87912.0
    assert r[M["warp_usage_threads"]] == 32.0 and r[FP_METRICS["fp64"][0]] == 0.0
    # columns warpspeed does not read: as printed, whatever their unit
    assert r["launch__block_dim_x"] == 256.0 and r["launch__registers_per_thread"] == 16.0
    assert r["launch__grid_size"] == 32.77  # Kblock: not scaled
    assert r["sm__throughput.avg.pct_of_peak_sustained_elapsed"] == 93.85
    assert r["Kernel Name"] == "ws_copy_b256x1x1_f1x1x1" and r["Block Size"] == "(256, 1, 1)" and r["ID"] == "0"
    assert set(USED_METRICS) >= {M["time"], M["dram_read_bytes"], *FP_METRICS["fp32"]}


@pytest.mark.parametrize("unit", ["block", "register/thread", "%", "fortnight", "Kbyte", "usecond", "(!)", "/",
                                  "µsecond", "register/thread/block", "Kblock", "1/s"])
def test_any_unit_of_a_column_warpspeed_does_not_read_is_kept_as_printed(tmp_path, unit):
    units = [unit if c.startswith(("launch__", "sm__throughput")) else u for c, u in zip(COLUMNS, UNITS, strict=True)]
    f = tmp_path / "u.csv"
    f.write_text(ncu_export(units=units))
    r = read_ncu_csv(f)[0]
    assert r["launch__registers_per_thread"] == 16.0 and r["launch__grid_size"] == 32.77
    assert r[M["time"]] == pytest.approx(48.10e-6)


@pytest.mark.parametrize("column, unit, kind", [(M["time"], "Kbyte", "time"),
                                                (M["dram_read_bytes"], "usecond", "bytes"),
                                                (M["l2_load_sectors"], "byte", "count")])
def test_a_used_metric_in_a_unit_of_another_kind_is_an_error_that_lists_the_valid_units(tmp_path, column, unit, kind):
    f = tmp_path / "k.csv"
    f.write_text(ncu_export(units=[unit if c == column else u for c, u in zip(COLUMNS, UNITS, strict=True)]))
    with pytest.raises(InputError) as e:
        read_ncu_csv(f)
    msg = str(e.value)
    assert msg.startswith(f"{f}, line 4: column {column}: unknown unit '{unit}' for a {kind} metric; valid: ")
    assert {"time": "usecond", "bytes": "Kbyte", "count": "sector"}[kind] in msg


def _short_units_row(tmp_path):
    lines = ncu_export().splitlines()
    lines[3] = ",".join(f'"{u}"' for u in UNITS[:-3])  # the units row lost its last 3 cells
    f = tmp_path / "short-units.csv"
    f.write_text("\n".join(lines) + "\n")
    return f


def test_a_units_row_shorter_than_the_header_is_an_input_error(tmp_path):
    f = _short_units_row(tmp_path)
    with pytest.raises(InputError) as e:
        read_ncu_csv(f)
    assert str(e.value).startswith(f"{f}, line 4: the units row has {len(UNITS) - 3} cells, the header (line 3) "
                                   f"{len(COLUMNS)} columns")


def test_a_row_of_another_length_and_a_bad_value_name_their_line(tmp_path):
    lines = ncu_export().splitlines()
    f = tmp_path / "r.csv"
    f.write_text("\n".join([*lines[:5], lines[5] + ',"1"', *lines[6:]]) + "\n")
    with pytest.raises(InputError, match=f"^{f}, line 6: the row has {len(COLUMNS) + 1} cells, the header"):
        read_ncu_csv(f)
    f.write_text(ncu_export(times_us=("48.1", "-3", "48")))
    with pytest.raises(InputError, match=rf"^{f}, line 6: column gpu__time_duration.sum is '-3'; give a finite"):
        read_ncu_csv(f)
    f.write_bytes(ncu_export().encode().replace(b"gpu-host", b"gpu-\xff", 2))
    with pytest.raises(InputError, match=rf"^{f}, line 5: not UTF-8 text"):
        read_ncu_csv(f)


# ---------------------------------------------------------------------------------------------- the CLI

PROJECT = ["project", "copy", "--from", "H100-SXM5-80GB", "--to", "A100-SXM4-40GB", "--threads", "256",
           "--domain", "2048,1024,4", "--jobs", "1"]


def test_project_cli_reads_the_2025_3_export(tmp_path, capsys):
    f = tmp_path / "copy-ncu.csv"
    f.write_text(ncu_export())
    assert main([*PROJECT, "--ncu", str(f), "--mode", "measured", "--format", "json"]) == 0, capsys.readouterr().err
    d = json.loads(capsys.readouterr().out)["measured"]
    assert d["measured_GLup_s"] == pytest.approx(LUPS / 48.0e-6 / 1e9)  # the median launch, in seconds
    assert d["work_unit"] == "lup"  # no FP instructions: the work is counted in lattice updates
    assert d["levels"]["DRAM"]["oi_source"] == pytest.approx(LUPS / (67108.86e3 + 67.11e6))
    assert d["levels"]["L2"]["oi_source"] == pytest.approx(LUPS / (32 * 2 * 2097152))


def test_project_cli_short_units_row_is_an_error_naming_file_and_line(tmp_path, capsys):
    f = _short_units_row(tmp_path)
    assert main([*PROJECT, "--ncu", str(f)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("error: ") and "internal error" not in err and "zip()" not in err
    expected = f"error: {f}, line 4: the units row has {len(UNITS) - 3} cells, the header (line 3) {len(COLUMNS)}"
    assert "".join(err.split()).startswith("".join(expected.split()))  # the CLI wraps at spaces and hyphens
