"""The JSON Schemas of the outputs (warpspeed/schemas/) against real outputs, schema_version in every object
document the CLI prints, and docs/outputs.md covering every key the schemas describe."""

import copy
import dataclasses
import json
import os
import re
import tempfile
import tomllib
from pathlib import Path

import jsonschema
import pytest
from paths import ROOT

import warpspeed
import warpspeed.studies.ranking as rank_module
from warpspeed import schemas
from warpspeed.interface.cli import main
from warpspeed.model.levels import VOLUME_KEYS
from warpspeed.model.results import CAUSES, MSC_CAUSES, FieldVolumes
from warpspeed.model.roofline import LIMITS
from warpspeed.render.report import CSV_COLUMNS
from warpspeed.schemas import build
from warpspeed.studies.timeview import DEFAULT_LINK, TimeView, links

DOCS = ROOT / "docs" / "outputs.md"
DOMAIN = "128,128,64"
H100, A100 = "H100-SXM5-80GB", "A100-SXM4-40GB"
# the keys of an estimate document at schema_version 1, in their order (later keys may only be added)
ESTIMATE_KEYS_V1 = ["kernel", "device", "block", "folding", "domain", "occupancy", "l1_cycles_per_warp_lup",
                    "volumes_B_per_lup", "limiters_GLup_s", "performance_GLup_s", "limiter", "time_s", "grid",
                    "registers", "registers_source", "occupancy_limits", "fields", "causes", "notes", "unvalidated",
                    "device_validation", "warpspeed_version", "model", "performance_model", "wave_valid_lups",
                    "workload", "schema_version"]  # wave_valid_lups, workload and device_validation were added
                                                   # later (a new key keeps the version)


def _no_constants(token):
    raise AssertionError(f"non-standard JSON token {token}")


def cli_json(capsys, *argv):
    """The CLI's JSON output, parsed strictly (standard JSON: no NaN or Infinity tokens)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out, parse_constant=_no_constants)


def validator(name: str) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(schemas.load(name))


def assert_valid(doc, name: str) -> None:
    errors = sorted(validator(name).iter_errors(doc), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])


def is_subsequence(keys, of) -> bool:
    it = iter(of)
    return all(k in it for k in keys)


# ------------------------------------------------------------------- schema completeness (no undocumented key)

def _subschemas(schema: dict, root: dict, instance) -> list[dict]:
    """The schema, what its $ref names, its allOf parts and the oneOf/anyOf branches the instance matches."""
    out = [schema]
    if "$ref" in schema:
        assert schema["$ref"].startswith("#/$defs/"), schema["$ref"]
        out += _subschemas(root["$defs"][schema["$ref"].removeprefix("#/$defs/")], root, instance)
    for part in schema.get("allOf", []):
        out += _subschemas(part, root, instance)
    for key in ("oneOf", "anyOf"):
        for branch in schema.get(key, []):
            if jsonschema.Draft202012Validator({**branch, "$defs": root["$defs"]}).is_valid(instance):
                out += _subschemas(branch, root, instance)
    return out


def undescribed_keys(instance, schema: dict, root: dict, path: str = "") -> list[str]:
    """Keys of ``instance`` (recursively) that no ``properties`` of the matching schema describes."""
    subs = _subschemas(schema, root, instance)
    missing = []
    if isinstance(instance, dict):
        props, extra = {}, None
        for s in subs:
            props.update(s.get("properties", {}))
            if isinstance(s.get("additionalProperties"), dict):
                extra = s["additionalProperties"]
        for k, v in instance.items():
            sub = props.get(k, extra)
            if sub is None:
                missing.append(f"{path}/{k}")
            else:
                missing += undescribed_keys(v, sub, root, f"{path}/{k}")
    elif isinstance(instance, list):
        items = next((s["items"] for s in subs if isinstance(s.get("items"), dict)), None)
        for i, v in enumerate(instance):
            if items is not None:
                missing += undescribed_keys(v, items, root, f"{path}/{i}")
    return missing


def assert_complete(doc, name: str) -> None:
    root = schemas.load(name)
    assert undescribed_keys(doc, root, root) == []


def property_names(schema) -> set[str]:
    """Every property name anywhere in a schema (top level, nested objects, $defs)."""
    names = set()
    if isinstance(schema, dict):
        for k, v in schema.items():
            if k == "properties":
                names |= set(v)
            names |= property_names(v)
    elif isinstance(schema, list):
        for v in schema:
            names |= property_names(v)
    return names


# ------------------------------------------------------------------------------------------ the schema files

def test_schemas_are_draft_2020_12_and_shipped_as_package_data():
    assert schemas.SCHEMA_VERSION == 1 and schemas.NAMES == ("estimate", "rank", "compare", "device_ranking")
    for name in schemas.NAMES:
        s = schemas.load(name)
        assert s["$schema"] == "https://json-schema.org/draft/2020-12/schema"
        jsonschema.Draft202012Validator.check_schema(s)
        assert Path(str(schemas.path(name))) == ROOT / "warpspeed" / "schemas" / f"{name}.schema.json"
    s = schemas.load("estimate")
    s["title"] = "changed"
    assert schemas.load("estimate")["title"] != "changed"  # a fresh dict per call
    with pytest.raises(ValueError, match="estimate, rank"):
        schemas.load("whatif")
    setup = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert "warpspeed.schemas" in setup["packages"]
    assert setup["package-data"]["warpspeed.schemas"] == ["*.json"]


def test_the_committed_schemas_are_what_the_builder_writes_from_their_sources():
    """Each definition is written once (warpspeed/schemas/source/); the shipped files are generated from it."""
    assert build.stale() == [], "run python -m warpspeed.schemas.build"
    for name in schemas.NAMES:
        assert build.schema(name) == schemas.load(name)
    shared = json.loads((build.SOURCE / "definitions.json").read_text())["$defs"]
    for name in schemas.NAMES:  # no document source copies a shared definition: it $refs or $includes it
        own = json.loads((build.SOURCE / f"{name}.json").read_text()).get("$defs", {})
        copied = [d for d in own if d in shared and own[d] != {"$include": d}]
        assert not copied, f"source/{name}.json copies the shared {copied}"
    est = schemas.load("estimate")["$defs"]
    for name in ("rank", "compare", "device_ranking"):  # the estimate documents inside the others are the same
        assert {d: v for d, v in schemas.load(name)["$defs"].items() if d in est} == est, name
    assert schemas.load("rank")["$defs"]["ranking"]["properties"]["confidence"] == shared["ranking_confidence"]


def test_a_shared_definition_edited_once_reaches_every_schema_that_uses_it(tmp_path, monkeypatch):
    for f in build.SOURCE.glob("*.json"):
        (tmp_path / f.name).write_text(f.read_text())
    defs = json.loads((tmp_path / "definitions.json").read_text())
    defs["$defs"]["volumes"]["properties"]["l0_load"] = {"type": "number", "description": "A new volume."}
    defs["$defs"]["ranking_confidence"]["properties"]["new_key"] = {"type": "integer", "description": "New."}
    (tmp_path / "definitions.json").write_text(json.dumps(defs))
    monkeypatch.setattr(build, "SOURCE", tmp_path)
    for name in schemas.NAMES:
        built = build.schema(name)
        assert "l0_load" in built["$defs"]["volumes"]["properties"], name
        assert (name == "estimate") == ("new_key" not in json.dumps(built)), name
        assert list(built)[-1] == "$defs"
    assert build.stale() == [f"{n}.schema.json" for n in schemas.NAMES]
    assert build.main(["--check"]) == 1
    (tmp_path / "rank.json").write_text(json.dumps({"title": "t", "$ref": "#/$defs/nowhere"}))
    with pytest.raises(KeyError, match="rank: \\$ref to undefined nowhere"):
        build.schema("rank")
    (tmp_path / "rank.json").write_text(json.dumps({"title": "t", "x": {"$include": "nothing"}}))
    with pytest.raises(KeyError, match="'nothing'.*definitions.json has estimate, occupancy"):
        build.schema("rank")
    with pytest.raises(ValueError, match="unknown schema 'whatif'"):
        build.schema("whatif")


def test_the_estimate_definitions_list_the_keys_the_typed_results_write_in_their_order():
    """One place names each key: the typed results and the model's tables (levels, limits, causes) write the
    keys, the schema's definition lists exactly those (in that order), and a new key without a schema entry
    fails here naming it and the definition (docs/outputs.md is held to the schemas below)."""
    e = warpspeed.estimate("star3d-r4", H100, (32, 4, 2), domain=(128, 128, 64))
    d = e.to_dict()
    view = TimeView(1.0, 2, 3, 4, links()[DEFAULT_LINK])
    written = {
        "estimate": [*d, "time_view"],  # the CLI adds time_view (--iterations) last
        "occupancy": list(d["occupancy"]), "occupancy_limits": list(d["occupancy_limits"]),
        "volumes": list(VOLUME_KEYS), "limiters": [lim.name for lim in LIMITS], "causes": [*CAUSES, *MSC_CAUSES],
        "field": [f.name for f in dataclasses.fields(FieldVolumes) if f.name != "name"],
        "cause": list(e.l1_capacity.to_dict()), "device_validation": list(d["device_validation"]),
        "time_view": list(view.to_dict()), "link": list(view.link.to_dict()),
    }
    defs = schemas.load("estimate")["$defs"]
    assert set(written) | {"estimate"} <= set(defs)
    for name, keys in written.items():
        described = list(defs[name]["properties"])
        assert described == keys, (f"$defs/{name}: not in the schema {sorted(set(keys) - set(described))}, "
                                   f"not written {sorted(set(described) - set(keys))} (or another order)")
    nested = defs["estimate"]["properties"]
    assert list(nested["workload"]["properties"]) == list(e.workload.to_dict())
    assert list(nested["performance_model"]["properties"]) == list(d["performance_model"])


def test_every_key_of_every_schema_has_a_description():
    for name in schemas.NAMES:
        root = schemas.load(name)
        for d in root["$defs"].values():
            for key, prop in d.get("properties", {}).items():
                target = root["$defs"][prop["$ref"].removeprefix("#/$defs/")] if "$ref" in prop else prop
                assert prop.get("description") or target.get("description"), f"{name}: {key}"


# ------------------------------------------------------------------------------------------ real outputs

@pytest.mark.parametrize("kernel", ["star3d-r4", "copy"])
@pytest.mark.parametrize("dev, folding", [(H100, "1,2,1"), (A100, "1,1,2")])
def test_estimate_json_validates(capsys, kernel, dev, folding):
    d = cli_json(capsys, "estimate", kernel, "--device", dev, "--block", "32,4,2", "--folding", folding,
                 "--domain", DOMAIN, "--format", "json")
    assert_valid(d, "estimate")
    assert_complete(d, "estimate")
    assert d["schema_version"] == 1 and list(d) == ESTIMATE_KEYS_V1
    assert d["folding"] == [int(x) for x in folding.split(",")]
    if kernel == "copy":
        assert d["limiters_GLup_s"]["FP"] is None  # no flops: infinite, written as null


def test_estimate_with_time_view_validates(capsys):
    d = cli_json(capsys, "estimate", "star3d-r4", "--device", H100, "--block", "32,4,2", "--domain", DOMAIN,
                 "--iterations", "10", "--link", "pcie4-x16", "--format", "json")
    assert_valid(d, "estimate")
    assert_complete(d, "estimate")
    assert list(d) == ESTIMATE_KEYS_V1 + ["time_view"]
    assert d["time_view"]["iterations"] == 10 and d["time_view"]["link"]["id"] == "pcie4-x16"


def test_estimate_to_dict_of_the_python_api_validates():
    e = warpspeed.estimate("star3d-r4", A100, (64, 4, 2), (1, 1, 2), domain=(128, 128, 64))
    d = e.to_dict()
    assert_valid(d, "estimate")
    assert_complete(d, "estimate")
    assert list(d) == ESTIMATE_KEYS_V1 and d["schema_version"] == schemas.SCHEMA_VERSION


def test_rank_json_with_configurations_that_cannot_launch_validates(capsys):
    # 255 registers: blocks of 256 threads launch, blocks of 1024 do not
    d = cli_json(capsys, "rank", "copy", "--device", A100, "--threads", "256,1024", "--registers", "255",
                 "--domain", DOMAIN, "--jobs", "1", "--format", "json")
    assert_valid(d, "rank")
    assert_complete(d, "rank")
    assert isinstance(d, dict) and d["schema_version"] == 1 and list(d)[-1] == "schema_version"
    errors = [r for r in d["results"] if "error" in r]
    fine = [r for r in d["results"] if "error" not in r]
    assert errors and fine and d["limiter_counts"]["error"] == len(errors)
    assert all(r["performance_GLup_s"] == 0 and r["limiter"] is None and "occupancy" not in r for r in errors)
    assert all(r["schema_version"] == 1 and list(r)[0] == "rank" for r in fine)
    assert [r["rank"] for r in d["results"]] == list(range(1, d["configurations"] + 1))
    assert d["best"] == d["results"][0]


def test_rank_json_of_several_devices_is_a_list_of_rankings(capsys):
    d = cli_json(capsys, "rank", "copy", "--device", A100, "--device", H100, "--threads", "128",
                 "--domain", DOMAIN, "--jobs", "1", "--format", "json")
    assert isinstance(d, list) and [r["device"] for r in d] == [A100, H100]
    assert_valid(d, "rank")
    assert all(r["schema_version"] == 1 for r in d)


def test_ranking_to_dict_of_the_python_api_validates():
    r = warpspeed.rank("star3d-r1", A100, blocks=[(32, 4, 1), (1024, 1, 1)], domain=(64, 32, 32), registers=128,
                       jobs=1)
    d = r.to_dict()
    assert_valid(d, "rank")
    assert d["limiter_counts"]["error"] == 1 and "error" in d["results"][-1]


def test_cache_records_written_before_schema_version_still_load_and_validate(tmp_path, monkeypatch):
    cache = tmp_path / "sweep.jsonl"
    kw = dict(blocks=[(32, 4, 1), (64, 2, 1), (1024, 1, 1)], domain=(64, 32, 32), registers=128, jobs=1,
              cache=cache)
    fresh = warpspeed.rank("star3d-r1", A100, **kw)
    old = []  # the file as a warpspeed without schema_version wrote it
    for line in cache.read_text().splitlines():
        rec = json.loads(line)
        assert rec["error"] or rec["data"]["schema_version"] == 1
        rec["data"].pop("schema_version", None)
        old.append(json.dumps(rec))
    cache.write_text("\n".join(old) + "\n")
    calls = []
    monkeypatch.setattr(rank_module, "estimate", lambda *a, **k: calls.append(a))
    resumed = warpspeed.rank("star3d-r1", A100, **kw)
    assert calls == []  # everything from the cache
    d = resumed.to_dict()
    assert d["schema_version"] == 1
    assert all(r.get("error") or r["schema_version"] == 1 for r in d["results"])  # written afresh, typed
    assert_valid(d, "rank")
    assert resumed.to_dicts() == fresh.to_dicts()


# ------------------------------------------------------------------------------- the schemas are not vacuous

@pytest.fixture(scope="module")
def estimate_doc():
    return warpspeed.estimate("star3d-r4", H100, (32, 4, 2), domain=(128, 128, 64)).to_dict()


def _broken(doc, path, value=KeyError):
    """A deep copy of doc with the key at ``path`` removed (value KeyError) or replaced."""
    d = copy.deepcopy(doc)
    target = d
    for k in path[:-1]:
        target = target[k]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return d


@pytest.mark.parametrize("path, value", [
    (["limiter"], KeyError),
    (["schema_version"], KeyError),
    (["performance_GLup_s"], "167.4"),
    (["time_s"], None),
    (["volumes_B_per_lup", "dram_load"], "9.1"),
    (["volumes_B_per_lup", "dram_load_compulsory"], KeyError),
    (["limiters_GLup_s", "DRAM"], "fast"),
    (["limiter"], "GPU"),
    (["block"], [32, 4]),
    (["block", 0], 32.5),
    (["occupancy", "limited_by"], "warps"),
    (["causes", "layer_z", "hit_rate"], 1.5),
    (["causes", "partial_stores"], KeyError),
    (["fields", "src", "dram_store"], "0"),
    (["notes"], "none"),
    (["schema_version"], 2),
])
def test_broken_estimate_documents_fail_validation(estimate_doc, path, value):
    assert validator("estimate").is_valid(estimate_doc)
    assert not validator("estimate").is_valid(_broken(estimate_doc, path, value))


def test_broken_rank_documents_fail_validation(estimate_doc):
    error = {"rank": 2, "kernel": "star3d-r4", "device": H100, "block": [1024, 1, 1], "folding": [1, 1, 1],
             "domain": [128, 128, 64], "performance_GLup_s": 0, "limiter": None, "error": "cannot launch"}
    best = {"rank": 1, **estimate_doc}
    doc = {"kernel": "star3d-r4", "device": H100, "configurations": 2,
           "limiter_counts": {"FP": 0, "L1": 0, "L2": 0, "DRAM": 1, "error": 1}, "best": best,
           "results": [best, error], "warpspeed_version": "0.1.0", "schema_version": 1}
    v = validator("rank")
    assert v.is_valid(doc) and v.is_valid([doc, doc])
    assert not v.is_valid([doc])  # one device: the object itself, not a list
    for path, value in [(["results", 1, "error"], KeyError), (["results", 1, "performance_GLup_s"], 5),
                        (["results", 0, "rank"], KeyError), (["results", 0, "limiter"], None),
                        (["limiter_counts", "error"], KeyError), (["configurations"], "2"),
                        (["results", 0, "volumes_B_per_lup", "l2_load"], "x"), (["schema_version"], KeyError)]:
        assert not v.is_valid(_broken(doc, path, value)), path


def test_pystencils_metadata_is_an_estimate_document(tmp_path, monkeypatch):
    """create_kernel's kernel.metadata["warpspeed"]: the winning estimate as `warpspeed estimate --format json`
    (plus its "ranking" summary)."""
    os.environ.setdefault("PYSTENCILS_CACHE_DIR", str(Path(tempfile.gettempdir()) / "warpspeed-tests-pystencils-cache"))
    pytest.importorskip("pystencils")
    pytest.importorskip("lbmpy")
    import warpspeed_pystencils as wp

    monkeypatch.setenv("WARPSPEED_CACHE_DIR", str(tmp_path / "cache"))
    kernel = wp.create_kernel(wp.star_stencil(1), shape=(66, 66, 66), device=A100, registers=32,
                              blocks=[(32, 4, 2), (64, 2, 2)])
    meta = kernel.metadata["warpspeed"]
    assert_valid(meta, "estimate")
    assert list(meta) == ESTIMATE_KEYS_V1 + ["ranking"] and meta["schema_version"] == 1


# --------------------------------------------------------------------- schema_version in the other documents

def test_every_object_document_of_the_cli_has_schema_version_1(capsys, tmp_path):
    space = ["--threads", "128", "--domain", DOMAIN, "--jobs", "1", "--format", "json"]
    w = cli_json(capsys, "whatif", "copy", "--device", A100, "--sweep", "l2_size=20MiB,40MiB", *space)
    assert list(w) == ["key", "points", "schema_version"] and w["schema_version"] == 1
    p = cli_json(capsys, "project", "copy", "--from", A100, "--to", H100, *space)
    assert p["schema_version"] == 1 and list(p)[-1] == "schema_version"
    assert_valid(p["to_best"], "estimate")
    p = cli_json(capsys, "project", "copy", "--from", A100, "--to", H100, "--iterations", "3", *space)
    assert list(p)[-2:] == ["schema_version", "time_view"]
    # devices show: the device description, whose schema_version (first key) is the device-file format's
    d = cli_json(capsys, "devices", "show", H100, "--format", "json")
    assert d["schema_version"] == 1 and list(d)[0] == "schema_version"
    c = cli_json(capsys, "calibrate", str(ROOT / "tests" / "data" / "hopper" / "bandwidth-copy-H100.csv"),
                 "--device", H100, "-o", str(tmp_path / "cal.toml"), "--format", "json")
    assert c["schema_version"] == 1 and list(c)[-3:] == ["device_file", "device_files", "schema_version"]


def test_list_documents_stay_lists(capsys):
    for argv in (["devices", "list"], ["devices", "links"], ["kernels"]):
        assert isinstance(cli_json(capsys, *argv, "--format", "json"), list), argv


# ------------------------------------------------------------------------------------------ docs/outputs.md

def test_docs_describe_every_key_of_the_schemas_and_every_csv_column():
    text = DOCS.read_text()
    documented = set(re.findall(r"`([A-Za-z0-9_]+)`", text))
    for name in schemas.NAMES:
        missing = sorted(property_names(schemas.load(name)) - documented)
        assert not missing, f"docs/outputs.md does not describe {missing} of {name}.schema.json"
    missing = sorted(set(CSV_COLUMNS) - documented)
    assert not missing, f"docs/outputs.md does not describe the rank CSV columns {missing}"
    assert "warpspeed/schemas/" in text and 'schemas.load("estimate")' in text


def test_an_empty_l1_is_null_oversubscription_and_strict_json(capsys):
    """Shared memory of the resident blocks fills a 16 KiB L1: O is infinite, written null (JSON has no inf)."""
    doc = cli_json(capsys, "estimate", "star3d-r1", "--device", H100, "--block", "32,1,1", "--set", "l1_size=16KiB",
                   "--domain", "128,128,64", "--format", "json")
    assert doc["causes"]["l1_capacity"]["capacity_bytes"] == 0
    assert doc["causes"]["l1_capacity"]["oversubscription"] is None
    assert doc["causes"]["l1_capacity"]["hit_rate"] == 0.0
    assert_valid(doc, "estimate")
