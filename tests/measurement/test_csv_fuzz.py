"""Fuzzing the two CSV readers of measured data: Nsight Compute exports (``warpspeed project --ncu``) and
measurement files (``warpspeed validate``), as test_expressions.py fuzzes the kernel parser.

Real files are mutated at random (seeded, so every case can be replayed): cells, rows and bytes deleted,
duplicated, swapped, truncated, inserted; special values (NaN, inf, huge and tiny numbers, non-ASCII
digits, control characters, invalid UTF-8, empty units). Every mutant must end in success or in one
InputError (the CLI's ``error:`` paragraph, exit 2) that names the file: never an internal error.

Speed: the readers are fuzzed directly with thousands of cases; the CLI with fewer. The CLI runs in this
process (``warpspeed.interface.cli.main``); the analytic parts that do not depend on the mutated file are cached (the
projection of ``project``, estimates of configurations already estimated), the rest runs as in use.
"""

from __future__ import annotations

import contextlib
import csv
import io
import math
import random
from pathlib import Path

import pytest
from ncu_exports import ncu_export
from paths import HOPPER_DATA

import warpspeed
import warpspeed.measurement.validation
import warpspeed.studies.projection
from warpspeed.errors import InputError
from warpspeed.interface.cli import main
from warpspeed.measurement.measured import measured_run, project_measured
from warpspeed.measurement.measurements import NUMERIC_COLUMNS, read_measurements
from warpspeed.measurement.ncu import USED_METRICS, read_ncu_csv, select_launches

DATA = HOPPER_DATA
H100, A100 = warpspeed.device("H100-SXM5-80GB"), warpspeed.device("A100-SXM4-40GB")

# --------------------------------------------------------------------------------------------- the mutator

SPECIAL = ["", " ", "nan", "NaN", "-nan", "inf", "-inf", "Infinity", "1e308", "1e309", "-1", "0", "-0", "0.0",
           "1e-320", "5e-324", "9" * 30, "9" * 400, "9" * 5000, "1_000", "0x10", "1,000", "1.2.3", "+5", "1e",
           "(!) n/a", "n/a", "N/A", "١٢٣", "²", "𝟗", "x", "2147483647", "2147483648", "4294967296",
           "18446744073709551616", "1x1", "0x0x0", "32x4x8x1", "1x-1x1", "１x1x1", "32 x 4 x 8", "\u200f32x4x8",
           "32x4x8\u00a0", "1x1x2147483647", "2147483647x2147483647x2147483647", "65536x65536x65536",
           "1x1x99999", "é", "😀", '"', '""', "\\", ",", "\t", "\r", "\n", "\x00", "\x0b", "\u2028", "\ufeff",
           "\udcff", "A100-SXM4-40GB", "H100-SXM5-80GB", "no-such-gpu", "star3d-r4", "copy", "star:r=17",
           "star:r=2,dims=2", "box", "/", ".", "..", "kernels", "pystencils", "warpspeed"]
NUMBERS = ["0", "-0", "1", "-1", "0.5", "1e-320", "5e-324", "1e308", "1e309", "-1e308", "nan", "NaN", "inf",
           "-inf", "9" * 400, "9" * 5000, "1_0", "1,000,000", "1.5e3", "(!) n/a", "n/a", "", " ", "١", "𝟗", "0x1f",
           " 7 ", "1e", "--1", "1e-5", "255", "256", "32.5", "4294967297"]
TRIPLES = ["32x4x8", "1x1x1", "0x1x1", "1x1x0", "1024x1x1", "1025x1x1", "1x1x65", "1x1x64", "1x1x2", "1x2x1",
           "2x2x2", "8x8x8", "1x1", "1x1x1x1", "x", "", "-1x1x1", "1.5x1x1", "2147483647x1x1", "2147483648x1x1",
           "2147483647x2147483647x2147483647", "65536x65536x256", "1048576x1024x1024", "4x4x2147483647",
           "1,1,1", "(32, 4, 8)", "32 x 4 x 8", "３２x4x8", "9" * 20 + "x1x1", "9" * 5000 + "x1x1", "64x32x32",
           "65536x1x1", "1x16x64", "1x1x16", "128x1x1", "1x1x1\u200b", "0x10x1"]
KERNELS = ["star3d-r4", "copy", "star3d-r1", "box3d-r1", "star2d-r1", "star:r=2", "star:r=2,dims=2", "star:r=17",
           "star:r=x", "star:dims=4", "box", "star:", ":", "", "no-such-kernel", "kernels", "/", ".", "..",
           "pyproject.toml", "README.md", "tests", "star3d-r4.toml", "kernels/copy.toml", "😀"]
DEVICES = ["H100-SXM5-80GB", "A100-SXM4-40GB", "H200-SXM-141GB", "V100-PCIe-32GB", "no-such-gpu", "", "h100",
           "/", ".", "warpspeed/devices", "pyproject.toml", "README.md", "H100-SXM5-80GB.toml", "😀"]
UNITS = ["", "byte", "Kbyte", "Mbyte", "Gbyte", "KB", "B", "usecond", "msecond", "nsecond", "second", "s", "us",
         "sector", "Ksector", "Msector", "cycle", "Mcycle", "inst", "Ginst", "%", "block", "register/thread",
         "thread/inst", "thread", "fortnight", "Kbytes", "bytes", "K", "µsecond", "Byte", "/", "byte/second",
         "warp", "Tbyte", "kbyte", "Kblock", "(!)", "1", "nan"]
RAW = [b"\x00", b"\xff", b"\xc3", b"\xe2\x80", b"\r", b"\n", b"\r\n", b'"', b",", b'""', b"\xef\xbb\xbf",
       b"==PROF== x\n", b"ID,", b'"ID",', b"\t", b"\x1b[0m", "é".encode(), "\u2028".encode(), b"\\", b" "]


def _grid(text: str) -> list[list[str]]:
    try:
        return list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error:
        return [line.split(",") for line in text.split("\n")]


def _text(grid: list[list[str]], rng: random.Random) -> str:
    out = io.StringIO()
    quoting = rng.choice([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_MINIMAL])
    csv.writer(out, quoting=quoting, lineterminator=rng.choice(["\n", "\n", "\r\n"])).writerows(grid)
    return out.getvalue()


def _number_like(cell: str, rng: random.Random) -> str:
    try:
        v = float(cell.replace(",", ""))
    except ValueError:
        return cell + rng.choice(["0", "9", "e5", "e-5", ".5"])
    if not math.isfinite(v):
        return rng.choice(["1", "-1", "1e308"])
    return repr(rng.choice([v * 10 ** rng.randint(-30, 30), -v, v + 1, v * 1e300, v / 1e300, int(v) * 7, 0.0]))


def _column_op(grid: list[list[str]], rng: random.Random, pools: dict[str, list[str]]) -> None:
    """A cell of a column the reader checks, or the column in every row that has a first cell (ncu's units
    row has none), from values that probe that column's rules."""
    header = next((r for r in grid if any(c in pools for c in r)), None)
    if header is None:
        return
    j = rng.choice([j for j, c in enumerate(header) if c in pools])
    rows = [r for r in grid if r is not header and len(r) > j]
    value = rng.choice(pools[header[j]])
    if rng.random() < 0.3:
        for r in rows:
            if r[0]:
                r[j] = value
    elif rows:
        rng.choice(rows)[j] = value


def _cell_op(grid: list[list[str]], rng: random.Random) -> None:
    rows = [i for i, r in enumerate(grid) if r]
    if not rows:
        return
    r = grid[rng.choice(rows)]
    j = rng.randrange(len(r))
    op = rng.randrange(8)
    if op == 0:
        del r[j]
    elif op == 1:
        r.insert(j, r[j])
    elif op == 2:
        k = rng.randrange(len(r))
        r[j], r[k] = r[k], r[j]
    elif op == 3:
        other = grid[rng.choice(rows)]
        k = rng.randrange(len(other))
        r[j], other[k] = other[k], r[j]
    elif op == 4:
        r[j] = rng.choice(SPECIAL)
    elif op == 5:
        r[j] = _number_like(r[j], rng)
    elif op == 6:
        pos = rng.randint(0, len(r[j]))
        r[j] = r[j][:pos] + rng.choice(SPECIAL) + r[j][pos:]
    else:
        r[j] = r[j][: rng.randint(0, len(r[j]))]


def _row_op(grid: list[list[str]], rng: random.Random) -> None:
    if not grid:
        return
    i = rng.randrange(len(grid))
    op = rng.randrange(6)
    if op == 0:
        del grid[i]
    elif op == 1:
        grid.insert(i, list(grid[i]))
    elif op == 2:
        k = rng.randrange(len(grid))
        grid[i], grid[k] = grid[k], grid[i]
    elif op == 3:
        grid[i] = grid[i][: rng.randint(0, len(grid[i]))]
    elif op == 4:
        grid[i] = grid[i] + [rng.choice(SPECIAL) for _ in range(rng.randint(1, 3))]
    else:
        grid.insert(i, [])


def _byte_op(data: bytes, rng: random.Random) -> bytes:
    op = rng.randrange(5)
    pos = rng.randint(0, len(data))
    if op == 0:
        return data[:pos]  # truncated
    if op == 1:
        return data[:pos] + rng.choice(RAW) + data[pos:]
    if op == 2:
        return data[:pos] + data[pos + rng.randint(1, 40):]
    if op == 3:
        return data[:pos] + rng.choice(SPECIAL).encode("utf-8", "surrogatepass") + data[pos:]
    return data[:pos] + bytes([rng.randrange(256)]) + data[pos + 1:]


def mutate(text: str, rng: random.Random, pools: dict[str, list[str]]) -> bytes:
    """A mutant of a CSV file's text: 1 to 3 edits of cells (any, or of the columns in ``pools`` with their
    values), rows, then sometimes of bytes."""
    grid = _grid(text)
    for _ in range(rng.choice([1, 1, 2, 3])):
        kind = rng.random()
        if kind < 0.4:
            _column_op(grid, rng, pools)
        elif kind < 0.75:
            _cell_op(grid, rng)
        else:
            _row_op(grid, rng)
    data = _text(grid, rng).encode("utf-8", "surrogatepass")
    if rng.random() < 0.25:
        for _ in range(rng.randint(1, 2)):
            data = _byte_op(data, rng)
    return data


def _case(data: bytes) -> str:
    text = repr(data)
    return text if len(text) < 3000 else text[:3000] + "..."


def cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def assert_clean(code: int, err: str, data: bytes, seed: int) -> None:
    """Success, or exit 2 with the CLI's ``error:`` paragraph (never exit 1, an internal error)."""
    where = f"seed {seed}: exit {code}, stderr {err!r}\nfile: {_case(data)}"
    assert code in (0, 2), where
    assert code == 0 or (err.startswith("error: ") and "internal error" not in err and "Traceback" not in err), where


def _flat(text: str) -> str:
    """Text without whitespace: the CLI wraps its error paragraph at 100 columns (at spaces and hyphens)."""
    return "".join(text.split())


def assert_names_file(e: InputError, path: Path, data: bytes, seed: int) -> None:
    assert str(e).startswith(str(path)), f"seed {seed}: the error {e} does not name the file\nfile: {_case(data)}"


# ------------------------------------------------------------------------------------------- ncu exports

NCU_POOLS = {**{m: NUMBERS + UNITS for m in USED_METRICS}, "ID": ["", "x", "0", "7", "ID"],
             "Kernel Name": ["", "ws_other", "ws_copy_b256x1x1_f1x1x1(double *, double *)", "ws_copy", "😀", "ID"],
             "launch__registers_per_thread": NUMBERS + UNITS, "launch__block_dim_x": NUMBERS + UNITS}
PROJECT = ["project", "copy", "--from", "H100-SXM5-80GB", "--to", "A100-SXM4-40GB", "--threads", "256",
           "--domain", "2048,1024,4", "--jobs", "1"]
LUPS = 2048 * 1024 * 4


@pytest.fixture
def cached_projection(monkeypatch):
    """`project` with a cached analytic projection (it depends on the command line, not on the --ncu file)."""
    real, cache = warpspeed.studies.projection.project, {}

    def project(*args, **kwargs):
        key = repr((args, sorted(kwargs.items())))
        if key not in cache:
            cache[key] = real(*args, **kwargs)
        return cache[key]

    monkeypatch.setattr(warpspeed.studies.projection, "project", project)


def test_ncu_seed_file_projects(tmp_path, cached_projection):
    f = tmp_path / "copy-ncu.csv"
    f.write_text(ncu_export())
    code, out, err = cli(*PROJECT, "--ncu", str(f))
    assert code == 0, err
    assert "hybrid projection from the run measured on H100-SXM5-80GB" in out


def test_fuzz_ncu_reader(tmp_path):
    """4000 mutants through the reader (its errors name the file) and what `project` does with its rows."""
    base = ncu_export()
    f = tmp_path / "ncu.csv"
    outcomes = {"read": 0, "projected": 0}
    for seed in range(4000):
        rng = random.Random(seed)
        data = mutate(base, rng, NCU_POOLS)
        f.write_bytes(data)
        try:
            rows = read_ncu_csv(f)
        except InputError as e:
            assert_names_file(e, f, data, seed)
            continue
        outcomes["read"] += 1
        try:
            run = measured_run(LUPS, ncu_rows=select_launches(rows, rng.choice([None, "ws_copy"])))
            project_measured(run, H100, A100)
            outcomes["projected"] += 1
        except InputError:
            pass  # not the file's fault: a kernel to pick, a metric missing, nothing measured
    assert 300 < outcomes["projected"] < outcomes["read"] < 3400, outcomes  # the mutants probe both sides


@pytest.mark.slow
def test_fuzz_ncu_csv_through_project_cli(tmp_path, cached_projection):
    """1500 mutants through `warpspeed project --ncu FILE`: success or a clean error."""
    base = ncu_export()
    f = tmp_path / "ncu.csv"
    for seed in range(100_000, 101_500):
        rng = random.Random(seed)
        data = mutate(base, rng, NCU_POOLS)
        f.write_bytes(data)
        code, _, err = cli(*PROJECT, "--ncu", str(f), *rng.choice([[], ["--format", "json"], ["--mode", "measured"]]))
        assert_clean(code, err, data, seed)


# ------------------------------------------------------------------------------------------- measurement files

MEASUREMENT_POOLS = {"block": TRIPLES, "folding": TRIPLES, "domain": TRIPLES, "kernel": KERNELS, "device": DEVICES,
                     **{c: NUMBERS for c in NUMERIC_COLUMNS}}


def measurement_seed_file() -> str:
    """Real rows of tests/data/hopper: three of star3d-r4 and two of copy on the H100, on small domains."""
    lines = (DATA / "star3d-r4-H100.csv").read_text().splitlines()
    copy = (DATA / "bandwidth-copy-H100.csv").read_text().splitlines()
    header, star, copies = lines[0], lines[1:4], copy[1:3]
    small = [r.replace("640x512x512", "64x32x32") for r in star] + [r.replace("268435456x1x1", "65536x1x1")
                                                                      for r in copies]
    return "\n".join([header, *small]) + "\n"


def test_measurement_seed_file_validates(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text(measurement_seed_file())
    code, out, err = cli("validate", str(f))
    assert code == 0, err
    assert out.strip().splitlines()[-1].startswith("summary: 5 configurations in 2 groups")


def test_fuzz_measurement_reader(tmp_path):
    """5000 mutants through read_measurements: rows, or an error that names the file."""
    base = measurement_seed_file()
    f = tmp_path / "m.csv"
    read = 0
    for seed in range(5000):
        rng = random.Random(seed)
        data = mutate(base, rng, MEASUREMENT_POOLS)
        f.write_bytes(data)
        try:
            read_measurements(f)
            read += 1
        except InputError as e:
            assert_names_file(e, f, data, seed)
    assert 600 < read < 4400, read


@pytest.fixture
def cached_estimates(monkeypatch):
    """validate with estimates cached by kernel, device and configuration (mutants mostly repeat them)."""
    real, cache = warpspeed.measurement.validation.estimate, {}

    def estimate(kernel, device, block, folding=None, *, registers=None, model=None):
        key = (kernel.name, kernel.source, kernel.domain, device.id, tuple(block), tuple(folding or ()), registers,
               model)
        if key not in cache:
            cache[key] = real(kernel, device, block, folding, registers=registers, model=model)
        return cache[key]

    monkeypatch.setattr(warpspeed.measurement.validation, "estimate", estimate)


@pytest.mark.slow
def test_fuzz_measurement_csv_through_validate_cli(tmp_path, cached_estimates):
    """600 mutants through `warpspeed validate FILE`: a report or a clean error."""
    base = measurement_seed_file()
    f = tmp_path / "m.csv"
    for seed in range(200_000, 200_600):
        rng = random.Random(seed)
        data = mutate(base, rng, MEASUREMENT_POOLS)
        f.write_bytes(data)
        code, _, err = cli("validate", str(f), *rng.choice([[], ["--format", "json"]]))
        assert_clean(code, err, data, seed)


# ------------------------------------------------------------------------------- what the fuzzing found

@pytest.mark.parametrize("old, new, message", [
    # a folding the estimator cannot afford (MemoryError, or minutes, before the reader limited it)
    (",1x1x1,64x32x32,", ",1x1x2147483647,64x32x32,", "column folding is 1x1x2147483647, 2147483647 cells per "
     "thread; a measured folding has at most 64"),
    # a domain whose block count overflowed int64 in the estimator (OverflowError)
    (",64x32x32,", ",2147483647x2147483647x2147483647,", "column domain is 2147483647x2147483647x2147483647, "
     "9.9e+27 cells; a measured domain has at most 2^40 cells"),
    # more digits than int() converts (ValueError)
    (",1x16x64,", ",1x16x" + "9" * 5000 + ",", "column block is '1x16x999"),
    # a grid CUDA cannot launch
    (",1x16x64,1x1x1,64x32x32,", ",1x1x64,1x1x1,64x100000000x32,", "give a grid of 64x100000000x1 blocks; CUDA "
     "launches at most 65535 blocks in y"),
    # GLup/s whose reciprocal overflows (inf and NaN in the report, RuntimeWarnings)
    (",14.107340105204104,", ",5e-324,", "column GLup_s is '5e-324'; give 0 or a number from 1e-15 to 1e+15"),
    (",536.896837425232,", ",1e-320,", "column l1_cycles_per_warp_lup is '1e-320'; give 0 or a number from 1e-15"),
])
def test_measurement_rows_the_fuzzing_broke_are_clean_errors(tmp_path, old, new, message):
    base = measurement_seed_file()
    assert old in base
    f = tmp_path / "m.csv"
    f.write_text(base.replace(old, new, 1))
    with pytest.raises(InputError) as e:
        read_measurements(f)
    assert str(e.value).startswith(f"{f}, line 2: ") and message in str(e.value)
    code, out, err = cli("validate", str(f))
    assert code == 2 and out == "" and _flat(err).startswith(_flat(f"error: {f}, line 2: {message}"[:60]))


def test_blank_lines_before_the_header_are_skipped(tmp_path):
    f = tmp_path / "m.csv"
    f.write_text("\n \n" + measurement_seed_file())
    rows = read_measurements(f)
    assert len(rows) == 5 and rows[0].line == 4


def test_ncu_values_out_of_scale_are_clean_errors(tmp_path, cached_projection):
    """A kernel time of 1e-306 s made the projection's performance infinite: min() of no finite level."""
    f = tmp_path / "ncu.csv"
    f.write_text(ncu_export(times_us=("1e-300",) * 3))
    with pytest.raises(InputError) as e:
        read_ncu_csv(f)
    assert str(e.value) == (f"{f}, line 5: column gpu__time_duration.sum is '1e-300' (1e-306 s); give 0 or a value "
                            "from 1e-09 to 1e+06 s in base units (or n/a).")
    code, _, err = cli(*PROJECT, "--ncu", str(f))
    assert code == 2 and _flat(err).startswith(_flat(f"error: {f}, line 5: column gpu__time_duration.sum"))
    # the same overflow from the command line's measured values: refused as read (no quantity is over 1e18)
    code, _, err = cli(*PROJECT, "--measured-time", "1ms", "--measured-bytes", "1e308B,1e308B,1e308B")
    assert code == 2 and _flat("'1e308B' as a size in bytes (over 1e300 B is beyond any quantity") in _flat(err), err
