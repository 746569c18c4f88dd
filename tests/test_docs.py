"""The user documentation of the two input formats stays true to the code.

docs/kernel-format.md and docs/device-format.md describe the kernel and device TOML files; their examples
live in docs/examples. These tests load and estimate the examples, keep each example's text in the markdown
identical to its file, and compare the key tables of the docs with the keys the loaders accept, so that a
renamed, added or removed key breaks a test until the docs follow.
"""

import re
import textwrap
import tomllib
from pathlib import Path

import pytest

import warpspeed
from warpspeed import InputError
from warpspeed.device import HIT_RATE_CURVES, PROVENANCE, hit_rate_families, load_device_file
from warpspeed.device.base import IDENTITY_KEYS
from warpspeed.device.keys import KEYS
from warpspeed.expressions import parse
from warpspeed.kernel import FIELD_KEYS, FLOP_KEYS, KERNEL_KEYS
from warpspeed.units import REAL_KINDS

DOCS = Path(__file__).resolve().parent.parent / "docs"
EXAMPLES = DOCS / "examples"
KERNEL_DOC = DOCS / "kernel-format.md"
DEVICE_DOC = DOCS / "device-format.md"
KERNEL_EXAMPLE = EXAMPLES / "varcoef3d-fp32.toml"
DEVICE_EXAMPLE = EXAMPLES / "H100-2xL2.toml"
DEVICE = "H100-SXM5-80GB"
BLOCK = (64, 4, 4)


def toml_blocks(path: Path) -> list[str]:
    """The text of every ```toml fenced block of a markdown file (blocks indented inside lists dedented)."""
    blocks = re.findall(r"^( *)```toml\n(.*?)^\1```", path.read_text(), flags=re.S | re.M)
    return [textwrap.dedent(text) if indent else text for indent, text in blocks]


def complete_kernels(path: Path) -> list[str]:
    return [b for b in toml_blocks(path) if re.search(r"^name\s*=", b, flags=re.M)]


def section(path: Path, title: str) -> str:
    """The text of one '## title' section (up to the next '## ' heading)."""
    text = path.read_text()
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def table_rows(text: str) -> list[list[str]]:
    """Cells of the markdown table rows whose first cell is a `code` name (header and rule rows skipped)."""
    rows = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("| `"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return rows


def code_name(cell: str) -> str:
    """`[[field]]` -> field, `flops_per_lup` -> flops_per_lup."""
    return cell.strip("`").strip("[]")


def one_line(text: str) -> str:
    return " ".join(text.split())


# ---------------------------------------------------------------------------------------------------
# Kernel format


def test_kernel_doc_has_a_complete_example():
    assert complete_kernels(KERNEL_DOC), "docs/kernel-format.md has no complete kernel (a ```toml block with name =)"


@pytest.mark.parametrize("text", complete_kernels(KERNEL_DOC), ids=lambda t: re.search(r'^name\s*=\s*"([^"]*)"', t,
                                                                                       flags=re.M).group(1))
def test_kernel_doc_examples_load_estimate_and_equal_their_file(text, tmp_path):
    files = {p.name: p.read_text() for p in EXAMPLES.glob("*.toml")}
    same = [name for name, content in files.items() if content == text]
    assert same, "a complete kernel in docs/kernel-format.md differs from every file in docs/examples"
    p = tmp_path / "doc.toml"
    p.write_text(text)
    k = warpspeed.load_kernel(p)
    assert k.fields == warpspeed.load_kernel(EXAMPLES / same[0]).fields
    e = warpspeed.estimate(k, DEVICE, BLOCK)
    assert e.performance_GLup_s > 0 and e.limiter in ("FP", "L1", "L2", "DRAM")


def test_kernel_example_numbers_stated_in_the_doc():
    k = warpspeed.load_kernel(KERNEL_EXAMPLE)
    assert k.precision == "fp32" and k.domain == (510, 510, 510) and dict(k.params) == {"g": 1}
    assert [f.shape for f in k.fields] == [(512, 512, 512), (510, 510, 510), (512, 512, 512)]
    assert (k.flops.total, k.flops.instructions) == (9.0, 7.0)  # "9 flops and 7 instructions per lup"
    assert k.registers is None  # "registers is left out, so warpspeed assumes 32"
    u = k.fields[0]
    assert (u.offset + 1) * u.element_bytes == 128  # "offset = 31 ... (31 + 1) x 4 B = 128 B"


def test_every_kernel_key_the_loader_accepts_is_documented():
    # kernel.py validates keys against these three sets; each key must be named in the doc as `key`
    text = KERNEL_DOC.read_text()
    for key in sorted(KERNEL_KEYS | FIELD_KEYS | FLOP_KEYS):
        assert re.search(rf"`(\[\[|\[)?{key}(\]\]|\])?`", text), f"kernel key {key!r} is not in docs/kernel-format.md"


def test_documented_kernel_keys_exist():
    top_section = section(KERNEL_DOC, "Top-level keys")
    top_table, rest = top_section.split("### Flops", 1)
    flops_table = rest.split("### ", 1)[0]
    top = {code_name(r[0]) for r in table_rows(top_table)}
    # `fields` (another name for the [[field]] array, for kernel_from_dict) is described in prose, not the table
    assert top == KERNEL_KEYS - {"fields"}
    assert {code_name(r[0]) for r in table_rows(section(KERNEL_DOC, "Fields"))} == FIELD_KEYS
    assert {code_name(r[0]) for r in table_rows(flops_table)} == FLOP_KEYS


def test_linear_access_in_the_doc_gives_the_same_estimate():
    linear = next(re.search(r'loads = \["([^"]+)"\]', b).group(1) for b in toml_blocks(KERNEL_DOC)
                  if re.search(r'loads = \["\(tidx', b))
    spec = tomllib.loads(KERNEL_EXAMPLE.read_text())
    per_dim = warpspeed.kernel_from_dict(spec)
    spec["field"][0]["loads"][0] = linear  # the same element as ["tidx + g", "tidy + g", "tidz + g"]
    flat = warpspeed.kernel_from_dict(spec)
    assert flat.fields[0].loads[0].linear == per_dim.fields[0].loads[0].linear
    a = warpspeed.estimate(per_dim, DEVICE, BLOCK).to_dict()
    b = warpspeed.estimate(flat, DEVICE, BLOCK).to_dict()
    assert a["volumes_B_per_lup"] == b["volumes_B_per_lup"] and a["limiters_GLup_s"] == b["limiters_GLup_s"]


def test_access_snippets_in_the_doc_parse():
    names = {"nx": 64, "ny": 32, "nz": 16, "g": 1}
    seen = 0
    for block in toml_blocks(KERNEL_DOC):
        if re.search(r"^name\s*=", block, flags=re.M):
            continue
        for line in block.splitlines():
            if line.startswith(("loads =", "stores =")):
                for access in tomllib.loads(line)[line.split()[0]]:
                    for text in [access] if isinstance(access, str) else access:
                        parse(text, names=names)
                        seen += 1
    assert seen >= 5


@pytest.mark.parametrize("old, new", [
    ('["tidx + g + 1", "tidy + g",     "tidz + g"]', '["tidx + g + 2", "tidy + g",     "tidz + g"]'),
    ('loads = [["tidx", "tidy", "tidz"]]', 'loads = [["tidx", "tidy", "tidz*tidy"]]'),
    ("offset = 31                  #", "ofset = 31                  #"),
])
def test_kernel_error_messages_in_the_doc_are_real(old, new, tmp_path, monkeypatch):
    text = KERNEL_EXAMPLE.read_text()
    assert text.count(old) == 1
    (tmp_path / "mine.toml").write_text(text.replace(old, new))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as err:
        warpspeed.estimate("mine.toml", DEVICE, BLOCK)
    assert one_line(f"error: {err.value}") in one_line(KERNEL_DOC.read_text())


# ---------------------------------------------------------------------------------------------------
# Device format


def test_device_example_in_the_doc_equals_its_file():
    assert DEVICE_EXAMPLE.read_text() in toml_blocks(DEVICE_DOC)


def test_device_example_differs_from_its_base_only_in_the_documented_change():
    d = load_device_file(DEVICE_EXAMPLE)
    base = warpspeed.device(DEVICE)
    new, old = d.to_dict(), base.to_dict()
    changed = {k for k in old if k not in ("file", "sources") and new[k] != old[k]}
    assert changed == {"id", "name", "l2_size_bytes", "l2_effective_size_bytes"}
    assert {k for k in new["sources"] if new["sources"][k] != old["sources"].get(k)} == {"l2_size", "l2_effective_size"}
    assert set(new["sources"]) == set(old["sources"])
    assert d.id == "H100-2xL2" and d.l2_size_bytes == 2 * base.l2_size_bytes == 100 * 2**20
    assert d.l2_effective_size_bytes == d.l2_size_bytes // d.l2_partitions == 50 * 2**20
    assert d.sources["l2_size"].startswith("assumed:")
    assert d == warpspeed.device(str(DEVICE_EXAMPLE))
    assert d.l2_effective_size_bytes == base.with_overrides(l2_size="100MiB").l2_effective_size_bytes


def test_device_key_table_matches_the_code():
    rows = table_rows(section(DEVICE_DOC, "Numeric keys"))
    doc = {code_name(r[0]): r for r in rows}
    code = {k.key: k for k in KEYS}
    assert set(code) - set(doc) == set(), "numeric device keys missing from docs/device-format.md"
    assert set(doc) - set(code) == set(), "docs/device-format.md lists device keys the code does not have"
    assert len(rows) == len(doc), "a key is listed twice"
    for key, spec in code.items():
        _, attr, kind, required, minimum, _ = doc[key]
        assert attr.strip("`") == spec.attr, key
        assert kind == spec.kind, key
        assert required == ("yes" if spec.required else "no"), key
        expected = "> 0" if spec.kind in REAL_KINDS else f"{spec.minimum:g}"
        assert minimum.split()[0] == expected.split()[0], key


def test_device_doc_names_identity_keys_curves_and_provenances():
    text = DEVICE_DOC.read_text()
    assert {code_name(r[0]) for r in table_rows(section(DEVICE_DOC, "Identity keys"))} == set(IDENTITY_KEYS)
    curves = {code_name(r[0]) for r in table_rows(section(DEVICE_DOC, "Hit-rate curves"))}
    assert set(HIT_RATE_CURVES) <= curves
    assert "hit_rates.<curve>.<a|b|c>" in text
    for prefix in PROVENANCE:
        assert f"`{prefix}" in text, prefix


def test_device_doc_lists_every_hit_rate_family():
    section_text = section(DEVICE_DOC, "Identity keys")
    for family in hit_rate_families():
        assert f"`{family}`" in section_text, family


@pytest.mark.parametrize("name, text", [
    ("mygpu.toml", None),
    ("bad.toml", 'schema_version = 1\nbase = "H100-SXM5-80GB"\nl2_size = "100 MiB/s"\n'),
])
def test_device_error_messages_in_the_doc_are_real(name, text, tmp_path, monkeypatch):
    if text is None:  # a complete file with the bare value sm_count = 132
        shipped = Path(warpspeed.device(DEVICE).file).read_text()
        text = re.sub(r"^sm_count\.source = .*\n", "", shipped, flags=re.M).replace("sm_count.value = 132",
                                                                                     "sm_count = 132")
    (tmp_path / name).write_text(text)
    monkeypatch.chdir(tmp_path)
    with pytest.raises(InputError) as err:
        load_device_file(name)
    assert one_line(f"error: {err.value}") in one_line(DEVICE_DOC.read_text())


def test_device_doc_lists_every_plausible_range():
    from warpspeed.device.keys import KEYS
    from warpspeed.units import format_quantity

    text = DEVICE_DOC.read_text()
    for k in KEYS:
        if k.plausible is not None:
            row = (f"| `{k.key}` | {format_quantity(k.plausible[0], k.kind)} | "
                   f"{format_quantity(k.plausible[1], k.kind)} |")
            assert row in text, f"docs/device-format.md lacks the plausible range of {k.key}: {row}"


def test_the_tests_cite_only_documents_the_repository_ships():
    root = Path(__file__).resolve().parent.parent
    for py in (root / "tests").glob("*.py"):
        for name in re.findall(r"\b([A-Za-z_-]+\.md)\b", py.read_text()):
            shipped = list(root.glob(f"**/{name}"))
            assert shipped, f"{py.name} cites {name}, which the repository does not ship"
