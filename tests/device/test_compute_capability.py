"""The compute-capability table (warpspeed/devices/compute_capabilities.toml): every shipped NVIDIA device holds
the per-SM limits of its compute capability's row, every compute capability a shipped device uses has a row,
and a complete device file that contradicts its row is refused naming the key, its value and the table's.

The shipped devices are read from device_ids(), so a device file added later is held to the table too.
"""

import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from warpspeed.device import DeviceFileError, device, device_ids, load_device_file
from warpspeed.device.compute_capability import (
    CC_FILE,
    LIMIT_KEYS,
    capability_problems,
    compute_capabilities,
    read_compute_capabilities,
)
from warpspeed.device.keys import KEYS_BY_NAME
from warpspeed.interface.cli import main

DEVICE_DIR = Path(__file__).resolve().parents[2] / "warpspeed" / "devices"
KiB = 1024
# The rows as the CUDA Programming Guide (CUDA 13: Tables 30-32; CUDA 12.x for 7.0 and the FP lanes) and
# CUDA 13.0's cuda_occupancy.h give them: threads/SM, blocks/SM, shared per SM and per block (KiB), unified L1
# (KiB), FP32 and FP64 lanes per SM. Written out here so that an edit of the table file shows up as a failure.
PUBLISHED = {
    "7.0": (2048, 32, 96, 96, 128, 64, 32),
    "8.0": (2048, 32, 164, 163, 192, 64, 32),
    "8.6": (1536, 16, 100, 99, 128, 128, 2),
    "8.9": (1536, 24, 100, 99, 128, 128, 2),
    "9.0": (2048, 32, 228, 227, 256, 128, 64),
    "10.0": (2048, 32, 228, 227, 256, 128, 64),
    "10.3": (2048, 32, 228, 227, 256, 128, 2),
    "12.0": (1536, 24, 100, 99, 128, 128, 2),
}


def _nvidia_ids() -> list[str]:
    return [i for i in device_ids() if device(i).vendor == "NVIDIA"]


def test_the_table_holds_the_published_limits_of_each_compute_capability():
    rows = compute_capabilities()
    assert set(PUBLISHED) <= set(rows)
    for cc, (threads, blocks, smem, smem_block, l1, fp32, fp64) in PUBLISHED.items():
        lim = rows[cc].limits
        assert (lim["max_threads_per_sm"], lim["max_blocks_per_sm"]) == (threads, blocks), cc
        assert (lim["shared_per_sm"], lim["shared_per_block"], lim["l1_size"]) == (
            smem * KiB, smem_block * KiB, l1 * KiB), cc
        assert (lim["fp32_lanes"], lim["fp64_lanes"]) == (fp32, fp64), cc
        assert (lim["warp_size"], lim["registers_per_sm"], lim["max_registers_per_thread"],
                lim["max_threads_per_block"], lim["register_alloc_unit"], lim["register_subpartitions"]) == (
            32, 65536, 255, 1024, 256, 4), cc
        # shared memory: 256 B units and nothing reserved on Volta, 128 B units and 1 KB per block from 8.0 on
        assert (lim["shared_alloc_unit"], lim["shared_reserved_per_block"]) == (
            (256, 0) if cc == "7.0" else (128, KiB)), cc
        assert rows[cc].source.strip()


def test_the_table_agrees_with_the_cuda_occupancy_header_where_it_is_installed():
    """cudaOccMaxBlocksPerMultiprocessor of the toolkit's header, where a toolkit is installed (CUDA 13.0 on the
    machine this was written on); the blocks per SM of every row must be the header's."""
    header = next((p for p in (Path("/usr/local/cuda-13.0/include/cuda_occupancy.h"),
                               Path("/usr/local/cuda/include/cuda_occupancy.h")) if p.is_file()), None)
    if header is None:
        pytest.skip("no CUDA toolkit here")
    text = header.read_text()
    body = text[text.index("cudaOccMaxBlocksPerMultiprocessor(int*"):]
    body = body[:body.index("\n}\n")]
    assert re.search(r"case 8:\s*if \(properties->computeMinor == 0\) \{\s*value = 32;", body)
    assert re.search(r"else if \(properties->computeMinor == 9\) \{\s*value = 24;", body)
    assert re.search(r"case 12:\s*value = 24;", body) and re.search(r"case 9:\s*value = 32;", body)
    rows = compute_capabilities()
    assert [rows[c].limits["max_blocks_per_sm"] for c in ("8.0", "8.6", "8.9", "9.0", "12.0")] == [32, 16, 24, 32, 24]


def test_every_compute_capability_a_shipped_nvidia_device_uses_has_a_row():
    used = {device(i).compute_capability for i in _nvidia_ids()}
    assert used and used <= set(compute_capabilities()), used - set(compute_capabilities())


@pytest.mark.parametrize("dev_id", device_ids())
def test_every_shipped_device_holds_its_compute_capabilitys_limits(dev_id):
    d = device(dev_id)
    row = compute_capabilities().get(d.compute_capability)
    if d.vendor != "NVIDIA":
        assert row is None  # AMD targets have no row (see the table's header)
        return
    assert row is not None, d.compute_capability
    for key in LIMIT_KEYS:
        assert getattr(d, KEYS_BY_NAME[key].attr) == row.limits[key], (dev_id, key)
    assert (d.max_block_dims, d.warp_size) == ((1024, 1024, 64), 32)


def _changed(text: str, key: str, value: str) -> str:
    new, n = re.subn(rf"(?m)^{key}\.value = .*$", f"{key}.value = {value}", text)
    assert n == 1, key
    return new


def test_a_complete_file_that_contradicts_its_row_is_refused_naming_key_and_both_values(tmp_path, capsys):
    text = (DEVICE_DIR / "A100-SXM4-40GB.toml").read_text()
    path = tmp_path / "a100-like.toml"
    path.write_text(_changed(_changed(text, "max_threads_per_sm", "1536"), "fp64_lanes", "2"))
    with pytest.raises(DeviceFileError) as e:
        load_device_file(path)
    problems = " ".join(" ".join(e.value.problems).split())
    assert "max_threads_per_sm = 1536 contradicts compute capability 8.0" in problems
    assert "gives 2048" in problems and "fp64_lanes = 2" in problems and "gives 32" in problems
    assert CC_FILE in problems
    assert main(["devices", "validate", str(path)]) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "2 problems" in err and "max_threads_per_sm = 1536" in err and "gives 2048" in err


def test_the_same_limits_under_the_compute_capability_that_has_them_load(tmp_path):
    """An A40-like file: cc 8.6's 1536 threads and 16 blocks are right for 8.6, wrong for 8.0."""
    text = (DEVICE_DIR / "A40.toml").read_text()
    path = tmp_path / "a40-like.toml"
    path.write_text(text.replace('compute_capability = "8.6"', 'compute_capability = "8.0"').replace(
        'id = "A40"', 'id = "a40-like"'))
    with pytest.raises(DeviceFileError) as e:
        load_device_file(path)
    assert {p.split(" =")[0] for p in e.value.problems} == {
        "max_threads_per_sm", "max_blocks_per_sm", "l1_size", "shared_per_sm", "shared_per_block", "fp32_lanes",
        "fp64_lanes"}
    path.write_text(text.replace('id = "A40"', 'id = "a40-like"'))
    assert load_device_file(path).max_threads_per_sm == 1536


def test_a_compute_capability_without_a_row_and_a_file_of_changes_are_not_held_to_the_table(tmp_path):
    text = (DEVICE_DIR / "A100-SXM4-40GB.toml").read_text()
    path = tmp_path / "turing-like.toml"
    path.write_text(_changed(text, "max_threads_per_sm", "1024").replace(
        'compute_capability = "8.0"', 'compute_capability = "7.5"'))
    assert load_device_file(path).max_threads_per_sm == 1024  # 7.5 has no row: no shipped device uses it
    changes = tmp_path / "what-if.toml"
    changes.write_text('schema_version = 1\nbase = "A100-SXM4-40GB"\nmax_threads_per_sm = 4096\n')
    assert load_device_file(changes).max_threads_per_sm == 4096  # a hypothetical GPU may change any limit
    assert device("A100-SXM4-40GB", max_blocks_per_sm=64).max_blocks_per_sm == 64
    assert capability_problems("gfx90a", {"max_threads_per_sm": 1}) == []
    assert capability_problems(None, {"max_threads_per_sm": 1}) == []


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(key=st.sampled_from(LIMIT_KEYS), count=st.integers(1, 1024))
def test_any_limit_changed_in_a_complete_file_is_refused_naming_that_key(tmp_path, key, count):
    want = compute_capabilities()["9.0"].limits[key]
    kind = KEYS_BY_NAME[key].kind
    value = count * 128 if kind == "bytes" else count
    low, high = KEYS_BY_NAME[key].plausible or (0, float("inf"))
    if value == want or not low <= value <= high:  # outside what a GPU has: refused as such (test_device.py)
        return
    path = tmp_path / "h100-like.toml"
    path.write_text(_changed((DEVICE_DIR / "H100-SXM5-80GB.toml").read_text(), key,
                             f'"{value}B"' if kind == "bytes" else str(value)))
    with pytest.raises(DeviceFileError) as e:
        load_device_file(path)
    mine = [p for p in e.value.problems if p.startswith(f"{key} = ")]
    assert len(mine) == 1 and "compute capability 9.0" in mine[0], e.value.problems


@pytest.mark.parametrize(("text", "message"), [
    ('schema_version = 1\n["9.0"]\nsource = "x"\nwarp_size = 32\n', "[9.0] misses max_threads_per_block"),
    ('schema_version = 1\n["9.0"]\nwarp_size = 32\n', "needs a non-empty source"),
    ('schema_version = 1\n["9.0"]\nsource = "x"\nwarps = 3\n', "unknown key(s) warps"),
    ('schema_version = 1\n"9.0" = 3\n', "must be a table"),
    ('["9.0"]\nsource = "x"\n', "schema_version"),
])
def test_a_broken_table_is_refused_naming_the_row_and_what_is_wrong(text, message):
    with pytest.raises(DeviceFileError) as e:
        read_compute_capabilities(text.encode(), "cc.toml")
    assert message in str(e.value)


def test_a_row_value_out_of_its_range_is_refused_naming_the_row_and_key():
    row = "\n".join(f"{k} = {'1' if KEYS_BY_NAME[k].kind != 'bytes' else chr(34) + '1B' + chr(34)}"
                    for k in LIMIT_KEYS if k != "warp_size")
    with pytest.raises(DeviceFileError) as e:
        read_compute_capabilities(f'schema_version = 1\n["9.0"]\nsource = "x"\nwarp_size = 0\n{row}\n'.encode(),
                                  "cc.toml")
    assert "[9.0] warp_size" in str(e.value)
