"""Units layer: parsing quantities with units, display, round trips, SI vs binary prefixes."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from warpspeed.errors import InputError
from warpspeed.units import MAGNITUDE, format_quantity, parse_quantity, require_unit, shown, units_for


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


# ------------------------------------------------------------------------------------------------
# Bounded reading: digits, exponents and magnitudes


@pytest.mark.parametrize(("value", "kind", "hint"), [
    ("1e10000000", "bytes", "exponent 10000000 is out of range"),        # took seconds to read in full
    ("1e-10000000GB/s", "bandwidth", "exponent -10000000 is out of range"),
    ("9" * 5000, "count", "5000 characters; at most 200"),              # an integer Python will not print
    ("1" + "0" * 4400 + "MiB", "bytes", "4404 characters"),
    ("0." + "0" * 5000 + "1GHz", "frequency", "5006 characters"),
    ("9" * 60, "count", "60 digits; at most 40"),
    ("0." + "0" * 50 + "1GHz", "frequency", "52 digits; at most 40"),
    ("1" + " " * 80000 + "!", "bytes", "80002 characters"),              # the pattern once took 40 s on it
    ("1" + " " * 190 + "x!", "bytes", None),
    ("1e309GB/s", "bandwidth", "over 1e300 GB/s is beyond any quantity"),  # a float would be inf
    ("1e30TiB", "bytes", "1.1e42 B is beyond any quantity"),
    ("1e19", "count", "1e19 is beyond any quantity"),                     # beyond a 64-bit integer
    ("1e-30ns", "time", "1e-39 s is beyond any quantity"),
    ("1e-999GHz", "frequency", "below 1e-300 GHz is beyond"),
    (1e308, "bandwidth", "over 1e300 GB/s"),
    (5e-324, "time", "beyond any quantity"),
    (10**5000, "count", "over 1e300"),
    (-(10**5000), "count", "negative"),
    ("١٢٣MiB", "bytes", None),                                           # digits are ASCII digits
    ("１２８B", "bytes", None),
], ids=lambda v: shown(v, 40))
def test_too_many_digits_and_absurd_magnitudes_are_input_errors_naming_key_and_value(value, kind, hint):
    with pytest.raises(InputError) as info:
        parse_quantity(value, kind, key="my_key")
    msg = str(info.value)
    assert msg.startswith("my_key: cannot read ")
    assert shown(value) in msg and len(msg) < 1000  # the value named, shortened when long
    if hint:
        assert hint in msg


def test_the_bounds_themselves_and_zero_are_read():
    assert MAGNITUDE == (1e-18, 1e18)
    assert parse_quantity("1e18", "count", key="k") == 10**18
    assert parse_quantity(10**18, "bytes", key="k") == 10**18
    assert parse_quantity("1e-18s", "time", key="k") == 1e-18
    assert parse_quantity("0.000000001ns", "time", key="k") == pytest.approx(1e-18)
    assert parse_quantity("0GB/s", "bandwidth", key="k") == 0.0
    assert parse_quantity("0e999", "count", key="k") == 0
    with pytest.raises(InputError, match="beyond any quantity"):
        parse_quantity("1e-19s", "time", key="k")


def test_shown_names_an_integer_python_cannot_print_and_shortens_long_text():
    assert shown(10**5000) == "an integer of 5001 digits"
    assert shown(10**5000 - 1) == "an integer of 5000 digits"
    assert shown("x" * 1000) == f"'{'x' * 39}...{'x' * 19}' (1002 characters)"
    assert shown("80MiB") == "'80MiB'"


@pytest.mark.parametrize("value", [10**5000, float("inf"), float("nan"), -float("inf")], ids=shown)
def test_format_and_require_unit_name_a_value_no_quantity_can_have(value):
    for kind in ("bytes", "count", "bandwidth", "time"):
        assert format_quantity(value, kind)  # text, not an OverflowError or ValueError
    require_unit(value, "bytes", key="k")  # no unit to ask for: parse_quantity says what is wrong
    with pytest.raises(InputError, match="^k: cannot read"):
        parse_quantity(value, "bytes", key="k")


NUMBER_TEXT = st.one_of(
    st.text(max_size=30),
    st.from_regex(r"\A[+-]?[0-9_]{0,60}(\.[0-9]{0,60})?([eE][+-]?[0-9]{0,12})?\s?[A-Za-z/]{0,5}\Z"),
    st.builds(lambda m, e, u: f"{m}e{e}{u}", st.integers(-10**6, 10**6), st.integers(-10**8, 10**8),
              st.sampled_from(["", "B", "MiB", "GB/s", "GHz", "G/s", "ns", "s"])),
)


@given(NUMBER_TEXT, st.sampled_from(["bytes", "bandwidth", "frequency", "rate", "time", "count", "number"]))
def test_any_text_is_a_bounded_finite_quantity_or_an_input_error(text, kind):
    try:
        value = parse_quantity(text, kind, key="k")
    except InputError as e:
        assert str(e).startswith("k: ")
        return
    assert math.isfinite(value) and (value == 0 or MAGNITUDE[0] <= value <= MAGNITUDE[1])
    assert isinstance(value, int) == (kind in ("bytes", "count"))


@given(st.one_of(st.integers(), st.floats(), st.integers(-10**6000, 10**6000)),
       st.sampled_from(["bytes", "bandwidth", "count", "number"]))
def test_any_python_number_is_a_bounded_finite_quantity_or_an_input_error(value, kind):
    try:
        got = parse_quantity(value, kind, key="k")
    except InputError:
        return
    assert math.isfinite(got) and (got == 0 or MAGNITUDE[0] <= got <= MAGNITUDE[1])


def test_a_number_too_long_to_read_is_refused_for_its_length_not_for_its_missing_unit():
    with pytest.raises(InputError, match="5000 characters; at most 200") as info:
        require_unit("9" * 5000, "bytes", key="l2_size")
        parse_quantity("9" * 5000, "bytes", key="l2_size")
    assert len(str(info.value)) < 1000
