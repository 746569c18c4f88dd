"""Files the kernel_tuner integration exports read back to exactly the kernel and device that were ranked
(catalog kernels with parameters, a user's TOML kernel, a device with overrides), a kernel given on reading is
compared by what it loads, older files that only name their kernel still read, and the input checks of the
files and domains (a missing folder, a configuration without the cache's parameters, too few extents)."""

import json
from pathlib import Path

import pytest

import warpspeed
from warpspeed import InputError
from warpspeed.integrations import kernel_tuner as wk
from warpspeed.interface.cli import main
from warpspeed.measurement.validation import validate

TP = {"block_size_x": [32, 64, 128], "block_size_y": [1, 2, 4], "block_size_z": [1, 2]}
H100 = "H100-SXM5-80GB"

# a user's kernel: a 3-point stencil in x of a 3-D array, its name unknown to the catalog
USER_KERNEL = """name = "my-stencil"
precision = "fp64"
domain = [64, 64, 64]
flops = { add = 2, mul = 1 }

[[field]]
name = "src"
shape = ["nx + 2", "ny + 2", "nz + 2"]
loads = [["tidx", "tidy + 1", "tidz + 1"], ["tidx + 1", "tidy + 1", "tidz + 1"], ["tidx + 2", "tidy + 1", "tidz + 1"]]

[[field]]
name = "dst"
shape = ["nx + 2", "ny + 2", "nz + 2"]
stores = [["tidx + 1", "tidy + 1", "tidz + 1"]]
"""


def one_line(text: str) -> str:
    return " ".join(text.split())


def user_kernel(folder: Path) -> Path:
    p = folder / "mystencil.toml"
    p.write_text(USER_KERNEL)
    return p


def assert_reads_back_exactly(ranking, path: Path, **read) -> list:
    """The rows read from ``path`` estimate, on the device the file records, exactly what was ranked."""
    rows = wk.read_kernel_tuner(path, **read)
    (report,) = validate(rows, devices=wk.recorded_devices(path))
    predicted = {(r.configuration.block, r.configuration.folding): r.performance_GLup_s for r in ranking.results
                 if not r.error}
    assert {(p.measured.block, p.measured.folding): p.estimate.performance_GLup_s for p in report.pairs} == \
        pytest.approx(predicted, rel=1e-12)
    assert report.spearman == pytest.approx(1.0) and report.ratio.median == pytest.approx(1.0)
    return rows


def test_a_4_byte_star_on_an_mi250x_reads_back_as_itself_not_the_8_byte_catalog_kernel(tmp_path):
    ranking = wk.rank_tune_params("star:r=1,dims=3,element_bytes=4", "MI250X-GCD", TP, domain=(64, 64, 64))
    assert isinstance(ranking, wk.TuneRanking) and ranking.kernel == "star3d-r1"  # the display name stays
    cache = wk.write_cache(tmp_path / "c.json", ranking, TP)
    t4 = wk.write_t4_results(tmp_path / "t4.json", ranking, TP)
    meta = json.loads(cache.read_text())["warpspeed"]
    assert (meta["kernel"], meta["kernel_spec"], meta["device_spec"]) == (
        "star3d-r1", "star:r=1,dims=3,element_bytes=4", "MI250X-GCD")
    assert {f["element_bytes"] for f in meta["kernel_description"]["field"]} == {4}
    assert json.loads(t4.read_text())["metadata"]["warpspeed"]["kernel_spec"] == meta["kernel_spec"]
    for path in (cache, t4):
        rows = assert_reads_back_exactly(ranking, path)
        assert {m.kernel for m in rows} == {"star:r=1,dims=3,element_bytes=4"}
        (report,) = validate(rows)  # the library's plain call: the same kernel, the same device
        assert report.spearman == pytest.approx(1.0) and report.ratio.median == pytest.approx(1.0)
    # the display name loads the 8-byte catalog kernel: refused, not silently validated against
    with pytest.raises(InputError, match=r"key warpspeed.kernel says kernel 'star3d-r1' "
                                         r"\(star:r=1,dims=3,element_bytes=4\), but kernel 'star3d-r1' was given, "
                                         r"which loads another kernel"):
        wk.read_kernel_tuner(cache, kernel="star3d-r1")
    # the same kernel written another way is accepted
    assert {m.kernel for m in wk.read_kernel_tuner(cache, kernel="star:element_bytes=4")} == {"star:element_bytes=4"}


@pytest.mark.parametrize(("kernel", "domain"), [("box:r=2", (32, 32, 32)), ("star:r=2,dims=2", (256, 256)),
                                                 ("user", (64, 64, 64))])
def test_catalog_generators_and_a_user_toml_kernel_round_trip(tmp_path, kernel, domain):
    if kernel == "user":
        kernel = str(user_kernel(tmp_path))
    ranking = wk.rank_tune_params(kernel, H100, TP, domain=domain)
    path = wk.write_cache(tmp_path / "c.json", ranking, TP)
    rows = assert_reads_back_exactly(ranking, path)
    assert {m.kernel for m in rows} == {kernel}  # what loads it, not its name (box3d-r2, star2d-r2, my-stencil)
    assert main(["validate", str(path)]) == 0


def test_a_device_with_overrides_round_trips_in_the_library_and_the_cli(tmp_path, capsys):
    dev = warpspeed.device("A100-SXM4-40GB", l2_size="2MiB", dram_bw="500GB/s", clock_GHz="1.234567891GHz")
    ranking = wk.rank_tune_params("star3d-r1", dev, TP, domain=(64, 64, 64))
    path = wk.write_cache(tmp_path / "c.json", ranking, TP)
    meta = json.loads(path.read_text())["warpspeed"]
    assert meta["device"] == dev.id and meta["device_spec"] == "A100-SXM4-40GB"
    assert meta["device_overrides"]["clock_GHz"] == "1.234567891 GHz"  # exactly, not the id's 1.23457GHz
    assert wk.recorded_devices(path) == {dev.id: dev}
    rows = assert_reads_back_exactly(ranking, path)
    assert {m.device for m in rows} == {dev.id}
    assert main(["validate", str(path), "--format", "json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)
    assert report["spearman"] == pytest.approx(1.0) and report["device"] == dev.id
    # a device read from a file of changes, with one more override: its file is recorded
    changes = tmp_path / "changed.toml"
    changes.write_text('base = "A100-SXM4-40GB"\nl2_size = "4 MiB"\n')
    filed = warpspeed.device(changes).with_overrides(dram_bw="700GB/s")
    ranking = wk.rank_tune_params("star3d-r1", filed, TP, domain=(64, 64, 64))
    path = wk.write_t4_results(tmp_path / "t4.json", ranking, TP)
    assert wk.recorded_devices(path) == {filed.id: filed}
    assert_reads_back_exactly(ranking, path)


def test_validate_accepts_a_kernel_that_loads_the_same_and_refuses_another(tmp_path, capsys):
    toml = user_kernel(tmp_path)
    path = wk.write_cache(tmp_path / "c.json", wk.rank_tune_params(str(toml), H100, TP, domain=(64, 64, 64)), TP)
    assert main(["validate", str(path)]) == 0
    shown = capsys.readouterr().out.splitlines()[0]
    assert main(["validate", str(path), "--kernel", str(toml)]) == 0  # the path the user has
    assert capsys.readouterr().out.splitlines()[0] == shown.replace(str(toml.resolve()), str(toml))
    copy = tmp_path / "elsewhere" / "copy.toml"
    copy.parent.mkdir()
    copy.write_text(USER_KERNEL)
    assert main(["validate", str(path), "--kernel", str(copy)]) == 0  # another file of the same kernel
    capsys.readouterr()
    assert main(["validate", str(path), "--kernel", "star3d-r1"]) == 2
    err = one_line(capsys.readouterr().err)
    assert "key warpspeed.kernel says kernel 'my-stencil'" in err and "which loads kernel 'star3d-r1'" in err
    # the file changed since: its description no longer matches what its path loads
    toml.write_text(USER_KERNEL.replace("add = 2", "add = 3"))
    assert main(["validate", str(path)]) == 2
    assert "now loads a kernel other than the one key warpspeed.kernel_description describes" in one_line(
        capsys.readouterr().err)


def test_a_kernel_object_no_name_loads_must_be_given_on_reading(tmp_path):
    k = warpspeed.find_kernel("star:r=1,element_bytes=4", domain=(64, 64, 64))
    ranking = wk.rank_tune_params(k, H100, TP)
    assert ranking.origin.kernel is None  # its name, star3d-r1, loads the 8-byte kernel
    path = wk.write_cache(tmp_path / "c.json", ranking, TP)
    with pytest.raises(InputError, match=r"ranked as a Kernel object that no catalog name or file loads .* give it"):
        wk.read_kernel_tuner(path)
    with pytest.raises(InputError, match=r"which loads another kernel"):
        wk.read_kernel_tuner(path, kernel="star3d-r1")
    assert_reads_back_exactly(ranking, path, kernel="star:r=1,element_bytes=4")
    # a catalog kernel object: its name loads it
    assert wk.rank_tune_params(warpspeed.find_kernel("star3d-r1"), H100, TP, domain=(64, 64, 64)).origin.kernel == \
        "star3d-r1"


def test_a_file_that_only_names_its_kernel_reads_as_before(tmp_path):
    ranking = wk.rank_tune_params("star:r=1,element_bytes=4", H100, TP, domain=(64, 64, 64))
    doc = json.loads(wk.write_cache(tmp_path / "c.json", ranking, TP).read_text())
    for key in ("kernel_spec", "kernel_description", "device_spec", "device_overrides"):
        doc["warpspeed"].pop(key, None)
    old = tmp_path / "old.json"
    old.write_text(json.dumps(doc))
    assert {m.kernel for m in wk.read_kernel_tuner(old)} == {"star3d-r1"}  # the name, as warpspeed 1 read it
    assert wk.recorded_devices(old) == {}
    # a kernel of that name is accepted (the way to give the 4-byte kernel), another refused
    assert_reads_back_exactly(ranking, old, kernel="star:r=1,element_bytes=4")
    with pytest.raises(InputError, match=r"says kernel 'star3d-r1', but kernel 'star3d-r4' was given, which loads "
                                         r"kernel 'star3d-r4'"):
        wk.read_kernel_tuner(old, kernel="star3d-r4")


def test_a_domain_needs_an_extent_per_dimension_of_the_kernel(tmp_path, capsys):
    with pytest.raises(InputError, match=r"domain \[256, 256\] has 2 extents, but kernel star3d-r1 is 3-D: give all "
                                         r"3 \(domain=\(nx, ny, nz\)"):
        wk.rank_tune_params("star3d-r1", H100, TP, domain=(256, 256))
    assert wk.rank_tune_params("star:dims=2", H100, TP, domain=(256, 256)).best.estimate.domain == (256, 256, 1)
    assert wk.dimensions(warpspeed.find_kernel("star:dims=1")) == 1
    # reading: kernel_tuner's 2-D problem_size of a 3-D kernel, or a 2-D --domain, is refused
    path = wk.write_cache(tmp_path / "c.json", wk.rank_tune_params("star3d-r1", H100, TP, domain=(64, 64, 64)), TP)
    doc = json.loads(path.read_text())
    del doc["warpspeed"]
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps({**doc, "problem_size": [64, 64]}))
    with pytest.raises(InputError, match=r"bare.json: key problem_size \[64, 64\] has 2 extents, but kernel "
                                         r"star3d-r1 is 3-D"):
        wk.read_kernel_tuner(bare, kernel="star3d-r1")
    assert main(["validate", str(bare), "--kernel", "star3d-r1", "--domain", "128,128"]) == 2
    err = one_line(capsys.readouterr().err)
    assert "domain [128, 128] has 2 extents, but kernel star3d-r1 is 3-D" in err and "--domain NX,NY,NZ" in err
    assert main(["validate", str(bare), "--kernel", "star3d-r1", "--domain", "64,64,64"]) == 0


def test_exports_into_a_missing_folder_are_refused_before_any_work(tmp_path):
    ranking = wk.rank_tune_params("star3d-r1", H100, TP, domain=(64, 64, 64))
    for write, what in ((wk.write_cache, "write_cache"), (wk.write_t4_results, "write_t4_results")):
        with pytest.raises(InputError, match=rf"{what}: path .*: the folder .*missing' does not exist"):
            write(tmp_path / "missing" / "out.json", ranking, TP)
    assert not (tmp_path / "missing").exists()


def test_cached_restriction_names_a_missing_parameter(tmp_path):
    path = wk.write_cache(tmp_path / "c.json", wk.rank_tune_params("star3d-r1", H100, TP, domain=(64, 64, 64)), TP)
    keep = wk.cached_restriction(path)
    assert keep({"block_size_x": 32, "block_size_y": 1, "block_size_z": 1})
    with pytest.raises(InputError, match=r"configuration \{'block_size_x': 32\} lacks the parameter\(s\) "
                                         r"block_size_y, block_size_z of the cache's tune_params_keys"):
        keep({"block_size_x": 32})


def test_cli_names_that_start_with_a_dash_are_given_with_an_equals_sign(tmp_path):
    names = wk.ParameterNames(block=("bx", "by", None), folding=(None, "fy", None))
    tp = {"bx": [32, 64], "by": [1, 2], "fy": [1, 2]}
    path = wk.write_cache(tmp_path / "c.json", wk.rank_tune_params("star3d-r1", H100, tp, names=names,
                                                                    domain=(64, 64, 64)), tp)
    doc = json.loads(path.read_text())
    del doc["warpspeed"]  # the names must come from the options
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps(doc))
    args = ["validate", str(bare), "--kernel", "star3d-r1"]
    assert main([*args, "--block-names", "bx,by,-", "--folding-names=-,fy,-"]) == 0
    rows = wk.read_kernel_tuner(bare, kernel="star3d-r1", names=names)
    assert {m.folding for m in rows} == {(1, 1, 1), (1, 2, 1)}
    assert main([*args, "--block-names=bx,by,-"]) == 2  # without the folding's names: fy twice per block


def test_a_file_with_a_kernel_spec_but_no_description_accepts_only_the_kernel_the_spec_loads(tmp_path):
    """The description deleted (as the error of a changed kernel suggests): the spec's kernel is the reference,
    and a kernel that shares its display name (star3d-r1, the 8-byte catalog kernel) is refused."""
    ranking = wk.rank_tune_params("star:r=1,dims=3,element_bytes=4", H100, TP, domain=(64, 64, 64))
    doc = json.loads(wk.write_cache(tmp_path / "c.json", ranking, TP).read_text())
    del doc["warpspeed"]["kernel_description"]
    path = tmp_path / "no-description.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"key warpspeed.kernel says kernel 'star3d-r1' "
                                         r"\(star:r=1,dims=3,element_bytes=4\), but kernel 'star3d-r1' was given, "
                                         r"which loads another kernel"):
        wk.read_kernel_tuner(path, kernel="star3d-r1")
    assert {m.kernel for m in assert_reads_back_exactly(ranking, path)} == {"star:r=1,dims=3,element_bytes=4"}
    assert {m.kernel for m in wk.read_kernel_tuner(path, kernel="star:element_bytes=4")} == {"star:element_bytes=4"}


def test_a_file_reads_back_where_nvcc_counts_other_registers(tmp_path, capsys):
    """The registers of the description are not compared (the rows carry num_regs): a file written where nvcc
    counted 70 registers reads back where the kernel loads with its own count. The description records the
    domain that was ranked, not the kernel file's."""
    ranking = wk.rank_tune_params("d3q19-srt", H100, {"block_size_x": [32, 64, 128]}, domain=(64, 64, 64))
    path = wk.write_cache(tmp_path / "c.json", ranking)
    doc = json.loads(path.read_text())
    described = doc["warpspeed"]["kernel_description"]
    assert described["domain"] == [64, 64, 64] != warpspeed.find_kernel("d3q19-srt").spec["domain"]
    assert described["registers"] == warpspeed.find_kernel("d3q19-srt").registers != 70
    described["registers"] = 70  # the writer's nvcc
    path.write_text(json.dumps(doc))
    written = {(m.block, m.registers) for m in assert_reads_back_exactly(ranking, path)}
    assert written == {(r.configuration.block, r.estimate.occupancy.registers) for r in ranking.results}
    assert {m.kernel for m in wk.read_kernel_tuner(path, kernel="d3q19-srt")} == {"d3q19-srt"}
    assert main(["validate", str(path)]) == 0
    capsys.readouterr()
    described["precision"] = "fp32"  # another kernel is still refused
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match="now loads a kernel other than the one key warpspeed.kernel_description"):
        wk.read_kernel_tuner(path)


def test_a_device_with_a_hit_rate_override_round_trips(tmp_path):
    dev = warpspeed.device("A100-SXM4-40GB").with_overrides(**{"hit_rates.l2_z.a": 0.123456789123})
    ranking = wk.rank_tune_params("star3d-r1", dev, TP, domain=(64, 64, 64))
    path = wk.write_t4_results(tmp_path / "t4.json", ranking, TP)
    meta = json.loads(path.read_text())["metadata"]["warpspeed"]
    assert meta["device_overrides"] == {"hit_rates.l2_z.a": "0.123456789123"}  # exactly, not as the id rounds it
    assert wk.recorded_devices(path) == {dev.id: dev}
    assert_reads_back_exactly(ranking, path)


def test_validate_with_device_does_not_load_the_recorded_device(tmp_path, capsys):
    """--device estimates every row on the device given: the device file the file records may be gone."""
    changes = tmp_path / "changed.toml"
    changes.write_text('base = "A100-SXM4-40GB"\nl2_size = "4 MiB"\n')
    ranking = wk.rank_tune_params("star3d-r1", warpspeed.device(changes), TP, domain=(64, 64, 64))
    path = wk.write_cache(tmp_path / "c.json", ranking, TP)
    moved = tmp_path / "elsewhere.toml"
    changes.rename(moved)
    assert main(["validate", str(path)]) == 2
    err = one_line(capsys.readouterr().err)
    assert "key warpspeed.device_spec" in err and "changed.toml" in err and "--device ID|FILE.toml" in err
    assert main(["validate", str(path), "--device", str(moved), "--format", "json"]) == 0
    (report,) = json.loads(capsys.readouterr().out)
    assert report["spearman"] == pytest.approx(1.0) and report["performance_ratio"]["median"] == pytest.approx(1.0)


@pytest.mark.parametrize("field, value, said", [("name", ["time"], "has a name ['time']"),
                                                ("name", {"a": 1}, "has a name {'a': 1}"),
                                                ("unit", ["ms"], "'time' has unit ['ms']"),
                                                ("unit", {"u": "ms"}, "'time' has unit {'u': 'ms'}")])
def test_a_t4_measurement_of_the_wrong_shape_is_named(tmp_path, field, value, said):
    """A list or object as a T4 measurement's name or unit raised a bare TypeError (unhashable type)."""
    ranking = wk.rank_tune_params("star3d-r1", H100, TP, domain=(64, 64, 64))
    path = wk.write_t4_results(tmp_path / "t4.json", ranking, TP)
    doc = json.loads(path.read_text())
    time_entry = next(m for m in doc["results"][0]["measurements"] if m["name"] == "time")
    time_entry[field] = value
    path.write_text(json.dumps(doc))
    with pytest.raises(InputError, match=r"results\[0\]\.measurements") as err:
        wk.read_kernel_tuner(path)
    assert said in str(err.value)
