"""Units layer: parsing quantities with units, display, round trips, SI vs binary prefixes."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from warpspeed.errors import InputError
from warpspeed.units import format_quantity, parse_quantity, units_for


@pytest.mark.parametrize(("text", "expected"), [
    ("40MiB", 40 * 2**20),
    ("192KiB", 192 * 1024),
    ("6MB", 6_000_000),
    ("6 MB", 6_000_000),
    ("6kB", 6000),
    ("6KB", 6000),
    ("128B", 128),
    ("  128 B ", 128),
    ("1.5KiB", 1536),
    ("1.41MB", 1_410_000),   # exact decimal reading, no float noise
    ("2GiB", 2**31),
    ("1TB", 10**12),
    (4096, 4096),
    ("4096", 4096),
    (4096.0, 4096),
])
def test_bytes(text, expected):
    value = parse_quantity(text, "bytes", key="l2_size")
    assert value == expected
    assert isinstance(value, int)


@pytest.mark.parametrize(("text", "expected"), [
    ("1555GB/s", 1555.0),
    ("3.35TB/s", 3350.0),
    ("3.35 TB/s", 3350.0),
    ("900 GB/s", 900.0),
    ("900000MB/s", 900.0),
    ("1GiB/s", 2**30 / 1e9),
    (900, 900.0),
    (1555.5, 1555.5),
    ("1e3GB/s", 1000.0),
])
def test_bandwidth(text, expected):
    value = parse_quantity(text, "bandwidth", key="dram_bw")
    assert isinstance(value, float)
    assert value == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(("text", "expected"), [
    ("1.41GHz", 1.41), ("1410MHz", 1.41), ("1410 MHz", 1.41), (1.41, 1.41), ("2", 2.0),
    ("1980000kHz", 1.98),
])
def test_frequency(text, expected):
    assert parse_quantity(text, "frequency", key="clock_GHz") == pytest.approx(expected, rel=1e-15)


@pytest.mark.parametrize(("text", "expected"), [
    ("142G/s", 142.0), ("142 G/s", 142.0), ("142/ns", 142.0), ("1.42e11/s", 142.0), ("142000M/s", 142.0),
    ("0.142T/s", 142.0), ("142000/us", 142.0), ("142GHz", 142.0), (142, 142.0),
])
def test_rate_in_events_per_second_and_in_hertz_alike(text, expected):
    """A request rate: 142 G/s is 142 per ns; device files written before the rate kind say 142GHz."""
    assert parse_quantity(text, "rate", key="l2_request_rate") == pytest.approx(expected, rel=1e-15)
    assert format_quantity(expected, "rate") == "142 G/s"


@pytest.mark.parametrize(("text", "expected"), [(108, 108), ("108", 108), (" 108 ", 108), (2.0, 2)])
def test_count(text, expected):
    value = parse_quantity(text, "count", key="sm_count")
    assert value == expected and isinstance(value, int)


@pytest.mark.parametrize(("value", "kind", "hint"), [
    ("40 MIB", "bytes", "unknown unit 'MIB'"),
    ("40Mb", "bytes", "unknown unit 'Mb'"),     # bits are not bytes
    ("0.5B", "bytes", "not a whole number"),
    ("1555GB", "bandwidth", "unknown unit 'GB'"),
    ("1.41 GB", "frequency", "unknown unit"),
    ("1.5", "count", "not a whole number"),
    ("108 SMs", "count", "no unit is allowed"),
    (True, "count", "boolean"),
    (False, "bytes", "boolean"),
    ("-3GB/s", "bandwidth", "negative"),
    (float("nan"), "bandwidth", "finite"),
    (float("inf"), "frequency", "finite"),
    ("", "bytes", None),
    ("GB/s", "bandwidth", None),
    ("1,555GB/s", "bandwidth", None),
    ([1], "bytes", "list"),
    (None, "count", "NoneType"),
])
def test_errors_name_key_value_and_units(value, kind, hint):
    with pytest.raises(InputError) as info:
        parse_quantity(value, kind, key="my_key")
    msg = str(info.value)
    assert msg.startswith("my_key: ")
    assert repr(value) in msg
    if hint:
        assert hint in msg
    for unit in units_for(kind):
        assert unit in msg                      # the message lists what would be valid


def test_error_is_a_value_error():
    with pytest.raises(ValueError):
        parse_quantity("x", "bytes", key="k")


def test_unknown_kind_is_a_programming_error():
    with pytest.raises(ValueError, match="unknown quantity kind"):
        parse_quantity(1, "volts", key="k")


@pytest.mark.parametrize(("value", "kind", "text"), [
    (40 * 2**20, "bytes", "40 MiB"),
    (192 * 1024, "bytes", "192 KiB"),
    (6_000_000, "bytes", "6 MB"),
    (80 * 10**9, "bytes", "80 GB"),  # exact in KiB too (78125000 KiB): the shorter number wins
    (1000 * 1024, "bytes", "1000 KiB"),
    (128, "bytes", "128 B"),
    (0, "bytes", "0 B"),
    (123456789, "bytes", "117.738 MiB"),
    (1555.0, "bandwidth", "1555 GB/s"),
    (3350.0, "bandwidth", "3350 GB/s"),
    (1.41, "frequency", "1.41 GHz"),
    (108, "count", "108"),
])
def test_format(value, kind, text):
    assert format_quantity(value, kind) == text


def test_format_rejects_fractional_bytes():
    with pytest.raises(ValueError):
        format_quantity(1.5, "bytes")


@given(st.integers(min_value=0, max_value=2**50))
def test_bytes_round_trip(n):
    back = parse_quantity(format_quantity(n, "bytes"), "bytes", key="k")
    assert isinstance(back, int)
    assert abs(back - n) <= max(1, 5e-6 * n)


@given(st.integers(min_value=0, max_value=2**20), st.sampled_from(["KiB", "MiB", "GiB", "kB", "MB", "GB"]))
def test_bytes_round_trip_exact_for_whole_units(n, unit):
    value = parse_quantity(f"{n}{unit}", "bytes", key="k")
    assert parse_quantity(format_quantity(value, "bytes"), "bytes", key="k") == value


@given(st.floats(min_value=1e-6, max_value=1e9, allow_nan=False, allow_infinity=False),
       st.sampled_from(["bandwidth", "frequency", "rate"]))
def test_float_round_trip(x, kind):
    back = parse_quantity(format_quantity(x, kind), kind, key="k")
    assert math.isclose(back, x, rel_tol=1e-5)


@given(st.integers(min_value=1, max_value=10**6))
def test_si_and_binary_prefixes_stay_distinct(n):
    for si, binary, k in (("kB", "KiB", 1), ("MB", "MiB", 2), ("GB", "GiB", 3)):
        assert parse_quantity(f"{n}{si}", "bytes", key="k") == n * 1000**k
        assert parse_quantity(f"{n} {binary}", "bytes", key="k") == n * 1024**k
    assert parse_quantity(f"{n}GiB/s", "bandwidth", key="k") == pytest.approx(n * 2**30 / 1e9)
    assert parse_quantity(f"{n}GB/s", "bandwidth", key="k") == n


@given(st.integers(min_value=0, max_value=10**9))
def test_count_round_trip(n):
    assert parse_quantity(format_quantity(n, "count"), "count", key="k") == n
