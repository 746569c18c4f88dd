"""Registers per thread in a measurement file: AMD's 512, NVIDIA's 255, each checked against the row's device."""

from __future__ import annotations

import pytest

from warpspeed.errors import InputError
from warpspeed.measurement.measurements import MAX_REGISTERS, read_measurements
from warpspeed.measurement.validation import validate

HEADER = "device,kernel,block,folding,domain,GLup_s,registers\n"


def _file(tmp_path, rows: str):
    p = tmp_path / "m.csv"
    p.write_text(HEADER + rows)
    return p


def test_an_amd_row_of_300_registers_reads_and_validates(tmp_path):
    """A CDNA kernel may hold up to 512 registers per lane (VGPRs and accumulation VGPRs): such a row of the
    MI300X reads, and its estimate runs with 300 registers (one block of 256 threads of 300 registers fits)."""
    rows = read_measurements(_file(tmp_path, "MI300X,star3d-r1,256x1x1,1x1x1,256x256x256,20,300\n"))
    assert MAX_REGISTERS == 512 and rows[0].registers == 300
    (report,) = validate(rows)
    assert report.to_dict()["configurations"] == 1


def test_a_cuda_row_over_255_registers_is_refused_naming_the_device_limit(tmp_path):
    rows = read_measurements(_file(tmp_path, "H100-SXM5-80GB,star3d-r1,256x1x1,1x1x1,256x256x256,20,300\n"))
    with pytest.raises(InputError, match="300 registers per thread exceed the H100-SXM5-80GB limit of 255"):
        validate(rows)


@pytest.mark.parametrize("regs", ["513", "0", "2.5"])
def test_registers_beyond_any_gpu_are_refused_by_the_reader(tmp_path, regs):
    with pytest.raises(InputError, match=r"column registers is .*1\.\.512"):
        read_measurements(_file(tmp_path, f"MI300X,star3d-r1,256x1x1,1x1x1,256x256x256,20,{regs}\n"))
