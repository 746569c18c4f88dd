"""Kernel files the command line reads: bounded (a regular file of at most a few MiB, opened without waiting),
UTF-8, and a TOML file that is not a kernel refused without its contents in the message."""

import os
import threading

import pytest

from warpspeed import kernel as kernel_module
from warpspeed.errors import InputError
from warpspeed.interface.cli import main
from warpspeed.kernels import accesses, find_kernel, get

H100 = "H100-SXM5-80GB"


def refused(capsys, path) -> str:
    assert main(["estimate", str(path), "--device", H100, "--block", "32,4,8"]) == 2
    return " ".join(capsys.readouterr().err.split())  # the CLI wraps long messages


def test_a_device_file_is_refused_before_it_is_read(capsys):
    """/dev/zero read until memory ran out (MemoryError, 'internal error')."""
    err = refused(capsys, "/dev/zero")
    assert "'/dev/zero': not a regular file" in err and "internal error" not in err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_waiting_for_a_writer(capsys, tmp_path):
    fifo = tmp_path / "k.toml"
    os.mkfifo(fifo)
    done = threading.Event()
    result = {}

    def run():
        try:
            find_kernel(str(fifo))
        except InputError as e:
            result["err"] = str(e)
        done.set()

    threading.Thread(target=run, daemon=True).start()
    if not done.wait(60):  # the old read blocked until a writer came: open it for writing to let the test end
        with open(fifo, "wb"):
            pass
        done.wait(60)
        pytest.fail("reading a FIFO waited for a writer")
    assert "not a regular file" in result["err"]
    assert "not a regular file" in refused(capsys, fifo)


def test_a_folder_is_refused(capsys, tmp_path):
    folder = tmp_path / "k.toml"
    folder.mkdir()
    assert "not a regular file" in refused(capsys, folder)


def test_a_file_that_is_not_utf8_names_its_line(capsys, tmp_path):
    """A Latin-1 comment gave UnicodeDecodeError, 'internal error ... please report it'."""
    f = tmp_path / "k.toml"
    f.write_bytes(b'name = "k"\n# Gr\xfc\xdfe\n')
    err = refused(capsys, f)
    assert "line 2: not UTF-8 text" in err and "internal error" not in err


def test_a_toml_file_that_is_not_a_kernel_is_not_quoted(capsys, tmp_path):
    f = tmp_path / "settings.toml"
    f.write_text('password = "hunter2"\ntoken = "s3cret"\n')
    err = refused(capsys, f)
    assert "not a kernel description" in err
    assert "hunter2" not in err and "password" not in err and "token" not in err


def test_a_huge_file_is_refused_unread(tmp_path, monkeypatch):
    monkeypatch.setattr(kernel_module, "MAX_KERNEL_FILE_BYTES", 1000)
    f = tmp_path / "big.toml"
    f.write_text("# padding\n" * 200)
    with pytest.raises(InputError, match="larger than"):
        find_kernel(str(f))


def test_generators_count_their_accesses_before_building():
    """box:r=16,dims=3 (35,937 loads) was only counted after generating it (17 s on the web page)."""
    assert accesses("box", r=16, dims=3) == 33**3 + 1
    for name, params in [("star", {"r": 3, "dims": 2}), ("box", {"r": 2, "dims": 3}), ("star", {}), ("box", {})]:
        k = get(name, **params)
        assert accesses(name, **params) == sum(len(f.loads) + len(f.stores) for f in k.fields)
    assert accesses("star3d-r4") is None
    with pytest.raises(InputError, match="r .the range. must be an integer in 0..16"):
        accesses("box", r=99)


def test_a_kernel_path_with_a_nul_character_is_refused():
    with pytest.raises(InputError, match=r"no usable path \(it holds a NUL character\)"):
        kernel_module.load_kernel("a\x00b.toml")
