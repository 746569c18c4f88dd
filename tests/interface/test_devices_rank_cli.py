"""`warpspeed devices rank KERNEL`: the text (headline, validation, table), the JSON against
warpspeed/schemas/device_ranking.schema.json, the CSV columns, bad input as one clear error, and the `devices`
list with its validation column."""

import csv
import io
import json

import jsonschema
import pytest
from test_schemas import undescribed_keys

import warpspeed
from warpspeed import schemas
from warpspeed.interface.cli import main
from warpspeed.render.device_ranking_report import DEVICE_RANKING_CSV_COLUMNS

H100, A100, B200 = "H100-SXM5-80GB", "A100-SXM4-40GB", "B200"
SMALL = ["--domain", "128,128,64", "--threads", "256", "--jobs", "1"]


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _rank(capsys, *argv) -> str:
    code, out, err = run(capsys, "devices", "rank", *argv)
    assert code == 0, err
    return out


def test_text_names_the_fastest_the_validation_and_one_row_per_device(capsys):
    out = _rank(capsys, "star3d-r1", "--device", A100, "--device", H100, "--device", B200, *SMALL)
    lines = out.splitlines()
    r = warpspeed.rank_devices("star3d-r1", [A100, H100, B200], threads=256, domain=(128, 128, 64), jobs=1)
    order = [x.device.id for x in r.devices]
    assert lines[0].startswith(f"star3d-r1, domain 128x128x64 (latency model): fastest on {order[0]} (")
    assert f"next {order[1]} {r.devices[1].factor:.3g}x slower; 3 devices ranked" in lines[0]
    assert lines[1].startswith("validation: 2 of 3 devices have model data never measured here") and \
        lines[1].endswith(f"measured: {H100}")
    table = lines[lines.index("") + 1:]
    assert table[0].split()[:3] == ["#", "device", "GLup/s"]
    rows = [table[i].split() for i in (1, 2, 3)]
    assert [row[1] for row in rows] == order and [row[0] for row in rows] == ["1", "2", "3"]
    for row, x in zip(rows, r.devices, strict=True):
        assert row[5] == x.limiter and row[6] == f"{x.factor:.2f}" and row[7] == x.best.configuration.label
        assert " ".join(row[9:]) == x.family.validation


def test_text_lists_the_devices_that_cannot_run_it_last_with_the_reason(capsys):
    out = _rank(capsys, "copy", "--device", H100, "--device", "B300", "--domain", "2048,2048,2048", "--jobs", "1")
    lines = out.splitlines()
    assert lines[0].endswith("; 1 device ranked, 1 cannot run it")
    assert lines[1].startswith("validation: 1 of 1 device has model data never measured here") and \
        lines[1].endswith("its row is a first estimate; measured: none")
    table = lines[lines.index("") + 1:]
    assert table[1].split()[:2] == ["1", "B300"] and table[2].split()[:3] == ["-", H100, "-"]
    assert table[2].split()[-1] == "measured"
    assert " ".join(out.split()).count(f"{H100} cannot run it: the arrays need 137.4 GB, more than the 80 GB of its "
                                       "memory (dram_size)") == 1
    out = _rank(capsys, "copy", "--device", H100, "--domain", "2048,2048,2048", "--jobs", "1")
    assert out.splitlines()[0] == "copy, domain 2048x2048x2048 (latency model): no device given can run it"


def test_json_validates_against_its_schema_and_every_key_is_described(capsys):
    # the copy of 2048^3 cells does not fit an H100 (80 GB): a refused entry is in the document too
    doc = json.loads(_rank(capsys, "copy", "--device", H100, "--device", "B300", "--domain", "2048,2048,2048",
                           "--format", "json", "--jobs", "1"))
    root = schemas.load("device_ranking")
    jsonschema.Draft202012Validator(root).validate(doc)
    assert undescribed_keys(doc, root, root) == []
    assert [e["device"] for e in doc["devices"]] == ["B300", H100] and doc["best"] == "B300"
    assert doc["devices"][1]["runs"] is False and doc["devices"][1]["rank"] is None
    jsonschema.Draft202012Validator(schemas.load("estimate")).validate(doc["devices"][0]["best"])
    broken = json.loads(json.dumps(doc))
    broken["devices"][0]["factor"] = 0.5  # faster than the fastest: not a factor
    assert not jsonschema.Draft202012Validator(root).is_valid(broken)
    del broken["devices"][0]["family"]
    assert not jsonschema.Draft202012Validator(root).is_valid(broken)


def test_csv_has_the_documented_columns_and_one_row_per_device(capsys):
    out = _rank(capsys, "copy", "--device", H100, "--device", "B300", "--domain", "2048,2048,2048", "--format",
                "csv", "--jobs", "1")
    rows = list(csv.DictReader(io.StringIO(out)))
    assert tuple(csv.DictReader(io.StringIO(out)).fieldnames) == DEVICE_RANKING_CSV_COLUMNS
    assert [r["device"] for r in rows] == ["B300", H100]
    b300, h100 = rows
    assert b300["rank"] == "1" and b300["runs"] == "true" and float(b300["factor"]) == 1.0
    assert b300["validation_status"] == "assumed" and b300["validation"] == "assumed from hopper"
    assert float(b300["performance_GLup_s"]) > 0 and b300["block"].count("x") == 2 and b300["limiter"]
    assert h100["rank"] == "" and h100["runs"] == "false" and "dram_size" in h100["reason"]
    assert h100["performance_GLup_s"] == h100["time_s"] == h100["factor"] == h100["block"] == ""
    assert h100["validation_status"] == "measured" and h100["domain_x"] == "2048"


@pytest.mark.parametrize("argv, words", [
    (["devices", "rank", "copy", "--device", "H100-FOO"], "unknown device 'H100-FOO'"),
    (["devices", "rank"], "give a kernel"),
    (["devices", "rank", "no-such-kernel", "--device", H100], "no-such-kernel"),
    (["devices", "rank", "copy", "--threads", "300"], "power of two"),
    (["devices", "rank", "copy", "--jobs", "0"], "--jobs must be at least 1"),
    (["devices", "show", H100, "--device", A100], "--device goes with `warpspeed devices rank KERNEL` only"),
    (["devices", "list", "--format", "csv"], "--format csv goes with `warpspeed devices rank KERNEL` only"),
])
def test_bad_input_is_one_clear_error(capsys, argv, words):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == "" and err.startswith("error: ") and "Traceback" not in err
    assert words in " ".join(err.split())


def test_the_device_list_shows_each_devices_family_and_validation(capsys):
    code, out, err = run(capsys, "devices")
    assert code == 0, err
    header = out.splitlines()[0].split()
    assert header[-3:] == ["family", "validation", "name"]
    row = next(line for line in out.splitlines() if line.startswith(B200 + " "))
    assert "blackwell" in row and "assumed from hopper" in row
    doc = json.loads(run(capsys, "devices", "--format", "json")[1])
    assert next(d for d in doc if d["id"] == H100)["family"]["status"] == "measured"


def test_the_plot_has_one_bar_per_running_device_fastest_on_top_hatched_where_not_measured(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    from matplotlib.colors import to_rgba

    from warpspeed.render import plots

    r = warpspeed.rank_devices("copy", [A100, H100, "B300"], domain=(2048, 2048, 2048), jobs=1)
    assert [x.runs for x in r.devices] == [True, False, False]  # 137 GB: only the B300 holds them
    r2 = warpspeed.rank_devices("star3d-r1", [A100, H100, B200], threads=256, domain=(128, 128, 64), jobs=1)
    for result in (r, r2):
        ax = plots.devices_plot(result).axes[0]
        bars = ax.patches
        running = result.running
        assert len(bars) == len(running)
        assert [b.get_width() for b in bars] == pytest.approx([x.performance_GLup_s for x in running])
        assert [b.get_y() + b.get_height() / 2 for b in bars] == sorted(
            (b.get_y() + b.get_height() / 2 for b in bars), reverse=True)  # the fastest on top
        for b, x in zip(bars, running, strict=True):
            assert b.get_facecolor() == to_rgba(plots.limiter_color(x.limiter))
            assert (b.get_hatch() == "//") is (not x.family.measured)
        assert [t.get_text() for t in ax.get_yticklabels()] == [x.device.id for x in result.devices]
        texts = [t.get_text() for t in ax.texts]
        assert sum(t.startswith("cannot run: the arrays need 137.4 GB") for t in texts) == len(result.refused)
    target = tmp_path / "devices.png"
    code, out, err = run(capsys, "plot", "devices", "star3d-r1", "--device", H100, "--device", A100, *SMALL, "-o",
                         str(target))
    assert code == 0, err
    assert out.strip() == f"wrote {target}" and target.read_bytes()[:4] == b"\x89PNG"
