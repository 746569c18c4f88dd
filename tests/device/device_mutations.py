"""Mutated device files, for the fuzz test (tests/device/test_device_fuzz.py) and the longer run of
benchmarks/fuzz_device_files.py.

A mutant starts from a shipped device file (warpspeed/devices/*.toml) or from a file of changes
(``base = ...``) and gets one to three edits, chosen by a seeded ``random.Random`` so that every case can be
replayed: a value replaced (huge, tiny, negative, non-finite, unicode digits, another unit, another TOML
type), a key renamed or dropped, a line duplicated, swapped or deleted, the text truncated or given bytes that
are not UTF-8, a ``base`` that names a folder, a missing file, itself, another mutant or a device id.

:func:`check` runs one file through the public entry points (``warpspeed.device(path)`` and an estimate of a
small kernel on what loads) and names the outcome: ``loaded``, ``InputError``, ``other`` (any other exception:
a bug) or ``nonfinite`` (an estimate with NaN, an infinity or zero in its result or its JSON: a bug).
"""

from __future__ import annotations

import functools
import json
import math
import random
import re
import traceback
from dataclasses import dataclass
from pathlib import Path

import warpspeed
from warpspeed.device import KEY_ATTRIBUTES
from warpspeed.device.keys import KEYS_BY_NAME, MAX_BLOCK_DIM
from warpspeed.errors import InputError
from warpspeed.units import format_quantity

DEVICE_DIR = Path(warpspeed.__file__).parent / "devices"
NOT_DEVICES = ("hit_rates.toml", "latency.toml", "families.toml", "links.toml", "compute_capabilities.toml")
SHIPPED = sorted(p for p in DEVICE_DIR.glob("*.toml") if p.name not in NOT_DEVICES)
KEYS = sorted(KEY_ATTRIBUTES)

# right-hand sides of TOML assignments: numbers, texts with units, other TOML types
NUMBERS = ["0", "-0", "1", "-1", "2", "3", "7", "31", "32", "33", "64", "100", "1000", "1024", "65536", "1e-320",
           "5e-324", "1e-300", "0.5", "1.5", "1e308", "1.7976931348623157e308", "inf", "-inf", "nan", "+nan",
           "9223372036854775807", "-9223372036854775808", "4294967296", "0x7fffffff", "0o777", "0b1010",
           "1_000_000", "3.0e9", "1e20", "1e40", "1e100", "2e-9"]
TEXTS = ["1e10000000", "1e-10000000", "1e4300", "1e400GB/s", "1e-400GB/s", "1e309", "1e309GHz", "9" * 400,
         "9" * 5000, "9" * 5000 + "B", "1" + "0" * 4400 + "MiB", "0." + "0" * 5000 + "1GHz", "1e999999999999MiB",
         "-1MiB", "0B", "0GB/s", "0GHz", "0ns", "1e-30ns", "1e-300GB/s", "1e300GB/s", "1e30TiB", "1e20MiB",
         "1.5B", "0.4MiB", "1MiB/s", "1GB", "1GHz", "1/ns", "1", "", " ", "MiB", "١٢٣MiB", "１２８B", "𝟗GHz",
         "²", "1 000MiB", "1,5GHz", "1.5.3GHz", "nan GHz", "inf GB/s", "infGB/s", "NaN", "80 mib", "80MiB\u200b",
         "\u00a080MiB", "80\u2009MiB", "😀", "\x00", "1e3", "1e-3ns", "1e18ns", "1e9s", "1e-12s", "1e12G/s",
         "1e-12G/s", "1024,1024,64", "1x1x1", "0,1,1", "1e10,1,1", "9223372036854775808,1,1", "99999999999999x1x1",
         "1024x1024", "a,b,c", "32B"]
OTHER = ["true", "false", "[]", "[1, 2, 3]", "[1, 2]", "[0, 0, 0]", "[1e308, 1, 1]", "[9223372036854775807, 1, 1]",
         "[\"1\", \"2\", \"3\"]", "[[1], [2], [3]]", "{}", "{ value = 1 }", "1979-05-27", "07:32:00",
         "[" * 3000 + "]" * 3000, "{a=" * 3000 + "1" + "}" * 3000,
         "1979-05-27T07:32:00Z", "[true, 1, 1]", "[1.5, 1, 1]", "[-1, 1, 1]", "[1, 1, 1, 1]"]
UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "kB", "MB", "GB", "TB", "GB/s", "TB/s", "B/s", "MiB/s", "GHz", "MHz",
         "Hz", "THz", "G/s", "/ns", "/s", "ns", "us", "ms", "s", "", "b", "mb", "XB", "/", "GB/ns"]
BASES = ["H100-SXM5-80GB", "H100-SXM5-80GB", "A100-SXM4-40GB", "MI250X-GCD", "V100-PCIe-32GB", "L40S",
         "h100", "A100", "MI2", "no-such-gpu", "", " ", ".", "..", "/", "./", "/etc",
         "/dev/null", "/nonexistent/x.toml", "sub", "sub/", "self.toml", "other.toml", "missing.toml",
         "H100-SXM5-80GB+l2_size=80MiB", "H100-SXM5-80GB+l2_size=1e10000000MiB", "A100+nope=1", "😀.toml",
         "x" * 300 + ".toml", "sub/../self.toml"]
JUNK_BYTES = [b"\xff", b"\xc3", b"\x00", b"\xef\xbb\xbf", b"\xed\xa0\x80", b"[", b"]]", b"=", b"\"", b"'''",
              b"\n[hit_rates.l2_z]\n", b"\na = 1\n", b"\r", b"\t", b"#", b"\\"]
HUGE = ["9" * 5000, "1" + "0" * 4301, "1e10000000", "1e-10000000"]
IDENTITY_VALUES = ['""', "1", '"hopper"', '"ampere"', '"nope"', '"😀"', "[]", "2", '" "']
_ASSIGN = re.compile(r"^(?P<key>[A-Za-z_][\w.]*)\s*=\s*(?P<value>.*)$")


def _rhs(rng: random.Random) -> str:
    """A right-hand side: a TOML number, a quoted text (mostly with a unit), or another TOML type."""
    r = rng.random()
    if r < 0.35:
        return rng.choice(NUMBERS)
    if r < 0.8:
        text = rng.choice(TEXTS)
        if rng.random() < 0.3:
            text = re.sub(r"[A-Za-z/]+$", "", text) + rng.choice(UNITS)
        return json.dumps(text, ensure_ascii=rng.random() < 0.5)
    if r < 0.9:
        return rng.choice(OTHER)
    return rng.choice(HUGE)  # an unquoted huge number: a TOML integer of over 4,300 digits, or not TOML


def in_range(key: str, rng: random.Random) -> str:
    """A right-hand side for ``key`` that validation accepts alone: an end of its documented range or a number
    between them (log-uniform), written with its unit; the values that pass validation yet may break a
    model stage."""
    spec = KEYS_BY_NAME[key]
    if spec.kind == "dims":
        return json.dumps([rng.choice([1, 2, 3, 64, 1024, MAX_BLOCK_DIM]) for _ in range(3)])
    lo, hi = spec.plausible
    r = rng.random()
    if r < 0.3:
        x = lo
    elif r < 0.6:
        x = hi
    else:
        x = math.exp(rng.uniform(math.log(max(lo, 1e-12)), math.log(hi)))
    if spec.kind in ("bytes", "count"):
        x = int(round(x))
    text = format_quantity(x, spec.kind)
    if spec.kind == "count":
        return text
    return json.dumps(text.replace(" ", ""))


def _edit(lines: list[str], rng: random.Random) -> None:
    """One edit of ``lines`` in place."""
    assigns = [i for i, line in enumerate(lines) if _ASSIGN.match(line)]
    what = rng.random()
    if what < 0.35:  # a valid value at the edge of its range, for a key in the file or a new one
        key = rng.choice(KEYS)
        at = [i for i in assigns if lines[i].startswith((f"{key}.value ", f"{key}.value=", f"{key} "))]
        if at:
            lines[at[0]] = f"{lines[at[0]].split('=')[0].rstrip()} = {in_range(key, rng)}"
        else:
            lines += [f"{key}.value = {in_range(key, rng)}", f"{key}.source = \"assumed: fuzz\""]
        return
    what = rng.random()
    if not assigns or what < 0.04:
        lines.append(f"{rng.choice(KEYS)} = {_rhs(rng)}")
        return
    i = rng.choice(assigns)
    m = _ASSIGN.match(lines[i])
    assert m is not None
    key, value = m.group("key"), m.group("value")
    if what < 0.45:  # a new value
        lines[i] = f"{key} = {_rhs(rng)}"
    elif what < 0.55:  # another unit on the same number
        lines[i] = re.sub(r"([0-9.])([A-Za-z/]+)\"", lambda mm: f"{mm.group(1)}{rng.choice(UNITS)}\"", lines[i])
    elif what < 0.62:  # the number scaled by a power of ten, in the text
        lines[i] = re.sub(r"(\d+(?:\.\d+)?)", lambda mm: f"{mm.group(1)}e{rng.choice([-300, -20, 20, 300, 5000])}",
                          lines[i], count=1)
    elif what < 0.7:  # a key renamed: another key, a typo, a peak out of its table, unicode
        new = rng.choice([rng.choice(KEYS) + key[key.find("."):] if "." in key else rng.choice(KEYS),
                          key[:-1], key.upper(), key.replace("_", "-"), "dram_bw_peak", "l2_bw.peak", "ſm_count",
                          key.replace(".value", ".valu"), key.replace(".source", ".peak"), "base", "id",
                          "hit_rates", "hit_rates.l2_z.a", "hit_rates.l1.c", "hit_rates.nope.a"])
        lines[i] = f"{new} = {value}"
    elif what < 0.78:
        del lines[i]
    elif what < 0.84:
        lines.insert(i, lines[i])
    elif what < 0.9:
        j = rng.choice(assigns)
        lines[i], lines[j] = lines[j], lines[i]
    elif what < 0.95:  # a hit-rate table of the device's own
        curve = rng.choice(["l1", "l2_y", "l2_z", "l2_store", "nope"])
        coef = [f"{c} = {rng.choice(NUMBERS + ['1.0', '0.0007', '4.5', '-4.5', '700', '1e10'])}" for c in "abc"]
        lines += ["", f"[hit_rates.{curve}]", *rng.sample(coef, rng.randint(2, 3)), 'source = "assumed: fuzz"']
    else:  # identity keys: other types, empty, unicode
        k = rng.choice(["id", "name", "vendor", "architecture", "compute_capability", "schema_version"])
        lines.insert(0, f"{k} = {rng.choice(IDENTITY_VALUES)}")


@dataclass(frozen=True)
class Mutant:
    """One mutated file: its name and bytes, and the files beside it it may name as ``base``."""

    name: str
    data: bytes
    extra: tuple[tuple[str, bytes], ...] = ()


def edge_mutant(rng: random.Random) -> bytes:
    """A shipped file with one to four values replaced by valid ones at the edges of their ranges."""
    lines = rng.choice(SHIPPED).read_text(encoding="utf-8").splitlines()
    for _ in range(rng.randint(1, 4)):
        key = rng.choice(KEYS)
        lines = [line for line in lines if not line.startswith(f"{key}.")]
        lines += [f"{key}.value = {in_range(key, rng)}", f"{key}.source = \"assumed: fuzz\""]
    return "\n".join(lines).encode()


def complete_mutant(rng: random.Random) -> bytes:
    """A shipped file with one to three edits, then maybe a byte-level one (truncation, junk bytes)."""
    lines = rng.choice(SHIPPED).read_text(encoding="utf-8").splitlines()
    for _ in range(rng.randint(1, 3)):
        _edit(lines, rng)
    data = "\n".join(lines).encode("utf-8", "surrogatepass")
    r = rng.random()
    if r < 0.05:
        data = data[:rng.randrange(len(data) + 1)]
    elif r < 0.1:
        at = rng.randrange(len(data) + 1)
        data = data[:at] + rng.choice(JUNK_BYTES) + data[at:]
    return data


def based_mutant(rng: random.Random) -> bytes:
    """A file of changes: ``base`` and a few bare values or value tables."""
    lines = ["schema_version = 1"] if rng.random() < 0.5 else []
    lines.append(f"base = {json.dumps(rng.choice(BASES)) if rng.random() < 0.9 else rng.choice(OTHER + NUMBERS)}")
    for _ in range(rng.randint(0, 4)):
        key = rng.choice(KEYS)
        value = in_range(key, rng) if rng.random() < 0.6 else _rhs(rng)
        if rng.random() < 0.7:
            lines.append(f"{key} = {value}")
        else:
            lines += [f"{key}.value = {value}", f"{key}.source = \"assumed: fuzz\""]
    for _ in range(rng.randint(0, 1)):
        _edit(lines, rng)
    return "\n".join(lines).encode("utf-8", "surrogatepass")


def mutant(rng: random.Random) -> Mutant:
    """A complete or based mutant; a based one may have a mutated ``other.toml`` and a folder ``sub`` beside it."""
    r = rng.random()
    if r < 0.3:
        return Mutant("self.toml", edge_mutant(rng))
    if r < 0.75:
        return Mutant("self.toml", complete_mutant(rng))
    return Mutant("self.toml", based_mutant(rng), (("other.toml", complete_mutant(rng)),))


@dataclass(frozen=True)
class Outcome:
    kind: str  # loaded | InputError | other | nonfinite
    detail: str = ""


def write(m: Mutant, folder: Path) -> Path:
    """``m`` and its neighbours in ``folder`` (emptied first), with an empty sub-folder ``sub``."""
    for p in folder.iterdir():
        if p.is_file():
            p.unlink()
    (folder / "sub").mkdir(exist_ok=True)
    for name, data in ((m.name, m.data), *m.extra):
        (folder / name).write_bytes(data)
    return folder / m.name


def small_block(dev) -> tuple[int, int, int]:
    """A block every device that loads can run: up to one warp in x, within the device's limits."""
    x = max(1, min(dev.warp_size, dev.max_threads_per_block, dev.max_block_dims[0], 32))
    return (x, 1, 1)


def finite_problem(e) -> str:
    """'' for an estimate whose numbers are finite and positive, else what is not."""
    if not (math.isfinite(e.performance_GLup_s) and e.performance_GLup_s > 0):
        return f"performance {e.performance_GLup_s!r}"
    if not (math.isfinite(e.time_s) and e.time_s > 0):
        return f"time {e.time_s!r}"
    for name, v in e.limits_GLup_s.items():
        if math.isnan(v) or v <= 0:
            return f"limit {name} {v!r}"
    try:
        json.dumps(e.to_dict(), allow_nan=False)
    except ValueError as err:
        return f"JSON: {err}"
    return ""


@functools.cache
def _kernel(name: str):
    return warpspeed.find_kernel(name)  # found once: finding a catalog name costs more than an estimate


def check(path: Path, kernel: str = "star3d-r1", domain: tuple[int, int, int] = (40, 6, 4)) -> Outcome:
    """Load ``path`` with ``warpspeed.device`` and estimate ``kernel`` on what loads (one small block)."""
    try:
        dev = warpspeed.device(path)
    except InputError as e:
        return Outcome("InputError", str(e)[:300])
    except Exception as e:  # noqa: BLE001 - the point: any other exception is a finding
        return Outcome("other", f"load: {type(e).__name__}: {e!s:.200}\n{traceback.format_exc(limit=-3)}")
    try:
        e = warpspeed.estimate(_kernel(kernel), dev, small_block(dev), domain=domain)
    except InputError as err:
        return Outcome("loaded", f"estimate refused: {str(err)[:200]}")
    except Exception as err:  # noqa: BLE001
        return Outcome("other", f"estimate: {type(err).__name__}: {err!s:.200}\n{traceback.format_exc(limit=-3)}")
    problem = finite_problem(e)
    return Outcome("nonfinite", problem) if problem else Outcome("loaded")
