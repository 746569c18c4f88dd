"""Quantities with units: sizes in bytes, bandwidths, clock frequencies, plain counts and numbers.

Device files and ``--set`` options write numbers the way data sheets do ("40MiB", "1.41GHz",
"3.35 TB/s"). This module turns such text into one canonical number per kind and back into text:

=============  ==================  ==============================================================
kind           returned as         accepted units (a bare number means the canonical unit)
=============  ==================  ==============================================================
``bytes``      ``int`` bytes       B; kB/KB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB (1024)
``bandwidth``  ``float`` GB/s      B/s, kB/s, MB/s, GB/s, TB/s (powers of 1000); KiB/s ... TiB/s
``frequency``  ``float`` GHz       Hz, kHz, MHz, GHz, THz
``rate``       ``float`` G/s       events per time: /s, k/s, M/s, G/s, T/s; /ms, /us, /ns; and the Hz family
``time``       ``float`` seconds   s, ms, us, ns
``count``      ``int``             none: an integer
``number``     ``float``           none: a plain real number (an exponent, a ratio)
=============  ==================  ==============================================================

Decimal (SI) and binary prefixes are kept apart on purpose: ``6MB`` is 6,000,000 B and ``6MiB`` is
6,291,456 B. Numbers are read exactly (``fractions.Fraction``), so ``1.41MB`` is exactly 1,410,000 B;
a size with a prefixed unit that is not a whole number of bytes is rounded to the nearest byte
("5.72205MiB"), while a bare number or a number of ``B`` must be whole.
Every error is an :class:`~warpspeed.errors.InputError` that names the key and lists the valid units.
The canonical unit is for numbers a program passes; text a person writes goes through
:func:`require_unit` first, so that ``l2_size=80`` is refused rather than read as 80 bytes.

Bounds, so that no text costs much to read and no number overflows what uses it: a text has at most
:data:`MAX_TEXT` characters, a number at most :data:`MAX_DIGITS` digits and an exponent of at most
:data:`MAX_EXPONENT_DIGITS` digits (checked on the text, before it is converted: ``1e10000000`` would take
seconds), and a quantity that is not zero lies within :data:`MAGNITUDE` (1e-18 to 1e18 of its canonical unit:
far beyond any GPU, and a count that fits a 64-bit integer).
"""

from __future__ import annotations

import math
import numbers
import re
from fractions import Fraction

from .errors import InputError

__all__ = ["KINDS", "REAL_KINDS", "MAGNITUDE", "MAX_DIGITS", "MAX_EXPONENT_DIGITS", "MAX_TEXT", "parse_quantity",
           "format_quantity", "units_for", "require_unit", "shown"]

_BYTE_UNITS: dict[str, int] = {
    "B": 1,
    "kB": 10**3, "KB": 10**3, "MB": 10**6, "GB": 10**9, "TB": 10**12,
    "KiB": 2**10, "MiB": 2**20, "GiB": 2**30, "TiB": 2**40,
}
# factors to GB/s
_BANDWIDTH_UNITS: dict[str, Fraction] = {
    "B/s": Fraction(1, 10**9), "kB/s": Fraction(1, 10**6), "KB/s": Fraction(1, 10**6),
    "MB/s": Fraction(1, 10**3), "GB/s": Fraction(1), "TB/s": Fraction(10**3),
    "KiB/s": Fraction(2**10, 10**9), "MiB/s": Fraction(2**20, 10**9), "GiB/s": Fraction(2**30, 10**9),
    "TiB/s": Fraction(2**40, 10**9),
}
# factors to GHz
_FREQUENCY_UNITS: dict[str, Fraction] = {
    "Hz": Fraction(1, 10**9), "kHz": Fraction(1, 10**6), "MHz": Fraction(1, 10**3),
    "GHz": Fraction(1), "THz": Fraction(10**3),
}
# factors to G/s (events per ns); a rate written in Hz (a device file's "142GHz") means the same
_RATE_UNITS: dict[str, Fraction] = {
    "/s": Fraction(1, 10**9), "k/s": Fraction(1, 10**6), "M/s": Fraction(1, 10**3), "G/s": Fraction(1),
    "T/s": Fraction(10**3), "/ms": Fraction(1, 10**6), "/us": Fraction(1, 10**3), "/ns": Fraction(1),
    **_FREQUENCY_UNITS,
}
# factors to seconds
_TIME_UNITS: dict[str, Fraction] = {"s": Fraction(1), "ms": Fraction(1, 10**3), "us": Fraction(1, 10**6),
                                    "ns": Fraction(1, 10**9)}
_UNITS: dict[str, dict] = {"bytes": _BYTE_UNITS, "bandwidth": _BANDWIDTH_UNITS,
                           "frequency": _FREQUENCY_UNITS, "rate": _RATE_UNITS, "time": _TIME_UNITS, "count": {},
                           "number": {}}
_NOUN = {"bytes": "a size in bytes", "bandwidth": "a bandwidth", "frequency": "a clock frequency",
         "rate": "a rate (events per second)", "time": "a duration", "count": "a whole number",
         "number": "a plain number"}
_VALID = {
    "bytes": "write a whole number of bytes, optionally followed by one of the units B, kB (or KB), MB, GB, "
             "TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), e.g. '40MiB' or '6 MB'",
    "bandwidth": "write a number of GB/s, optionally followed by one of the units B/s, kB/s (or KB/s), "
                 "MB/s, GB/s, TB/s (powers of 1000) or KiB/s, MiB/s, GiB/s, TiB/s (powers of 1024), "
                 "e.g. '1555GB/s' or '3.35 TB/s'",
    "frequency": "write a number of GHz, optionally followed by one of the units Hz, kHz, MHz, GHz, THz, "
                 "e.g. '1.41GHz' or '1410 MHz'",
    "rate": "write a number of G/s (events per ns), optionally followed by one of the units /s, k/s, M/s, G/s, "
            "T/s, /ms, /us, /ns (or Hz, kHz, MHz, GHz, THz), e.g. '142G/s' or '0.5/ns'",
    "time": "write a number of seconds, optionally followed by one of the units s, ms, us, ns, e.g. '1.2ms'",
    "count": "write a whole number without a unit, e.g. '108'",
    "number": "write a number without a unit, e.g. '0.66'",
}
KINDS = tuple(_UNITS)
"""The quantity kinds this module knows."""
REAL_KINDS = ("bandwidth", "frequency", "rate", "time", "number")
"""The kinds read as real numbers (the others are whole numbers)."""

_QUANTITY = re.compile(  # matched on stripped text: one run of blanks at most, so matching takes linear time
    r"(?P<num>(?P<mantissa>[+-]?(?:\d+(?:_\d+)*(?:\.\d*)?|\.\d+))(?:[eE](?P<exp>[+-]?\d+))?)\s*"
    r"(?P<unit>[A-Za-z/]*)", re.ASCII)
MAX_TEXT = 200
"""Characters a quantity's text may have (blanks included); a longer text is refused unread."""
MAX_DIGITS = 40
"""Digits a number may have (a data sheet's value has a handful; 40 leaves room for any exact decimal)."""
MAX_EXPONENT_DIGITS = 3
"""Digits of a number's decimal exponent (``1e-999`` is the smallest number written so; its magnitude is then
checked against :data:`MAGNITUDE`)."""
MAGNITUDE = (1e-18, 1e18)
"""The smallest and largest quantity other than zero, in the canonical unit of its kind (bytes, GB/s, GHz, G/s,
seconds, a count, a number)."""
_EXACT_MAGNITUDE = (Fraction(1, 10**18), Fraction(10**18))  # MAGNITUDE, compared exactly with what is read
_CANONICAL = {"bytes": " B", "bandwidth": " GB/s", "frequency": " GHz", "rate": " G/s", "time": " s", "count": "",
              "number": ""}


def units_for(kind: str) -> tuple[str, ...]:
    """The unit symbols accepted for ``kind`` (empty for ``count``)."""
    _check_kind(kind)
    return tuple(_UNITS[kind])


_EXAMPLE_UNIT = {"bytes": "MiB", "bandwidth": "GB/s", "frequency": "GHz", "rate": "G/s", "time": "ns"}


def units_of(kind: str) -> dict[str, float]:
    """The units of a kind and their factors to its canonical unit (GB/s, GHz, G/s, bytes, seconds)."""
    _check_kind(kind)
    return {u: float(f) for u, f in _UNITS[kind].items()}


def require_unit(value: object, kind: str, *, key: str) -> None:
    """Refuse ``value`` when it is a number without a unit for a kind that has units.

    Text a person typed (``--set l2_size=80``, ``l2_size = 80`` in a file) is ambiguous: 80 B, or the 80 MiB
    the person probably meant? Such values must carry their unit; counts are plain numbers and pass.
    """
    _check_kind(kind)
    if kind in ("count", "number") or isinstance(value, bool):
        return
    if isinstance(value, str):
        m = _QUANTITY.fullmatch(value.strip()) if len(value) <= MAX_TEXT else None
        if m is None or m.group("unit") or _text_problem(m):
            return  # a unit, or unreadable (parse_quantity says why)
        number = m.group("num")
    elif isinstance(value, numbers.Real):
        if not abs(value) <= MAGNITUDE[1]:
            return  # no quantity at all (parse_quantity says why)
        number = f"{value:g}"
    else:
        return
    units = ", ".join(_UNITS[kind])
    raise InputError(f"{key}: give the unit, e.g. '{number}{_EXAMPLE_UNIT[kind]}' ({units}); a number "
                     f"without a unit, {shown(value)}, is ambiguous.")


def _check_kind(kind: str) -> None:
    if kind not in _UNITS:
        raise ValueError(f"unknown quantity kind {kind!r}; known kinds: {', '.join(KINDS)}")


def shown(value: object, limit: int = 80) -> str:
    """``repr(value)`` for a message, shortened when long (a 5,000-digit number is named, not printed: Python
    refuses to print an integer of over 4,300 digits)."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value).bit_length() > 200:
        return f"an integer of {_digits(value)} digits"
    text = repr(value)
    return text if len(text) <= limit else f"{text[:limit // 2]}...{text[-limit // 4:]} ({len(text)} characters)"


def _digits(n: int) -> int:
    """Decimal digits of ``n`` without printing it (exact: the estimate from the bit length, corrected)."""
    n = abs(n)
    d = max(1, int(n.bit_length() * 0.30102999566398120))
    return d + 1 if n >= 10**d else d


def _fail(key: str, value: object, kind: str, why: str = "") -> InputError:
    why = f" ({why})" if why else ""
    return InputError(f"{key}: cannot read {shown(value)} as {_NOUN[kind]}{why}; {_VALID[kind]}.")


def _text_problem(m: re.Match) -> str:
    """Why the number of a matched quantity text is too long to read, or ''."""
    digits = sum(c.isdigit() for c in m.group("mantissa"))
    if digits > MAX_DIGITS:
        return f"{digits} digits; at most {MAX_DIGITS}"
    exp = m.group("exp")
    if exp is not None and sum(c.isdigit() for c in exp.lstrip("+-0")) > MAX_EXPONENT_DIGITS:
        return f"exponent {exp[:12]}{'...' if len(exp) > 12 else ''} is out of range"
    return ""


def _magnitude_problem(amount: Fraction, kind: str) -> str:
    """Why a canonical amount is absurd (not zero and outside :data:`MAGNITUDE`), or ''."""
    if amount == 0 or _EXACT_MAGNITUDE[0] <= amount <= _EXACT_MAGNITUDE[1]:
        return ""
    unit = _CANONICAL[kind]
    approx = ("over 1e300" if amount > 10**300 else "below 1e-300" if amount < Fraction(1, 10**300)
              else _number(float(amount), 3))
    return (f"{approx}{unit} is beyond any quantity warpspeed reads: {_number(MAGNITUDE[0])}{unit} to "
            f"{_number(MAGNITUDE[1])}{unit}, or 0")


def parse_quantity(value: object, kind: str, *, key: str) -> int | float:
    """Read a number with an optional unit as the canonical number of ``kind``.

    ``value`` is an ``int``/``float`` (already in the canonical unit) or a string such as
    ``"40MiB"``, ``"1555 GB/s"``, ``"1410MHz"``. ``key`` names the setting in error messages.
    Negative, non-finite, absurdly large or small (:data:`MAGNITUDE`) and (for ``bytes`` and ``count``)
    non-integral values are rejected; so are booleans and texts of too many digits (:data:`MAX_DIGITS`).
    """
    _check_kind(kind)
    if isinstance(value, bool):
        raise _fail(key, value, kind, "a boolean is not a number")
    if isinstance(value, numbers.Integral):
        amount = Fraction(int(value))
        unit = ""
    elif isinstance(value, numbers.Real):
        f = float(value)
        if not math.isfinite(f):
            raise _fail(key, value, kind, "not a finite number")
        amount = Fraction(f)
        unit = ""
    elif isinstance(value, str):
        if len(value) > MAX_TEXT:
            raise _fail(key, value, kind, f"{len(value)} characters; at most {MAX_TEXT}")
        m = _QUANTITY.fullmatch(value.strip())
        if m is None:
            raise _fail(key, value, kind)
        if problem := _text_problem(m):
            raise _fail(key, value, kind, problem)
        try:
            amount = Fraction(m.group("num"))
        except (ValueError, ZeroDivisionError):  # pragma: no cover - the pattern admits only valid numbers
            raise _fail(key, value, kind) from None
        unit = m.group("unit")
    else:
        raise _fail(key, value, kind, f"got a {type(value).__name__}")

    if amount < 0:
        raise _fail(key, value, kind, "negative")
    if unit:
        table = _UNITS[kind]
        if unit not in table:
            hint = "no unit is allowed" if kind in ("count", "number") else f"unknown unit {unit!r}"
            raise _fail(key, value, kind, hint)
        amount *= table[unit]
    if problem := _magnitude_problem(amount, kind):
        raise _fail(key, value, kind, problem)
    if kind == "bytes" and unit not in ("", "B"):
        return round(amount)  # "5.72205 MiB": a prefixed size is as precise as its digits
    if kind in ("bytes", "count"):
        if amount.denominator != 1:
            raise _fail(key, value, kind, "not a whole number")
        return int(amount)
    return float(amount)


def _number(x: float, digits: int = 6) -> str:
    """Shortest decimal text for x with at most ``digits`` significant digits (no trailing zeros)."""
    text = f"{x:.{digits}g}"
    if "e" in text:
        mantissa, exp = text.split("e")
        return f"{mantissa}e{int(exp)}"
    return text


def format_quantity(value: int | float, kind: str) -> str:
    """Display text that :func:`parse_quantity` reads back (exactly for sizes in whole units, else to
    6 significant digits).

    Sizes use the unit, binary or decimal, that divides them exactly into the smallest number ("40 MiB",
    "6 MB", "80 GB"), else the largest binary unit not above them with 6 significant digits.
    Bandwidths are shown in GB/s, frequencies in GHz, rates in G/s and durations in ns, us, ms or s (the
    largest unit below 1000 of it) with up to 6 significant digits. A value no quantity can have (non-finite,
    or an integer beyond a float) is named, not formatted.
    """
    _check_kind(kind)
    if isinstance(value, float) and not math.isfinite(value):
        return f"{value}{_CANONICAL[kind]}"
    if isinstance(value, numbers.Integral) and abs(int(value)) >= 10**300:
        return f"a number of {_digits(int(value))} digits{_CANONICAL[kind]}"
    if kind == "count":
        return str(int(value))
    if kind == "number":
        return _number(float(value))
    if kind == "bandwidth":
        return f"{_number(float(value))} GB/s"
    if kind == "frequency":
        return f"{_number(float(value))} GHz"
    if kind == "rate":
        return f"{_number(float(value))} G/s"
    if kind == "time":
        v = float(value)
        for unit, factor in (("ns", 1e-9), ("us", 1e-6), ("ms", 1e-3)):
            if 0 < abs(v) < 1000 * factor:
                return f"{_number(v / factor)} {unit}"
        return f"{_number(v)} s"
    n = int(value)
    if n != value:
        raise ValueError(f"a size in bytes must be a whole number, got {value!r}")
    if n == 0:
        return "0 B"
    exact = [(n // _BYTE_UNITS[u], i, u) for i, u in enumerate(("TiB", "GiB", "MiB", "KiB", "TB", "GB", "MB", "kB"))
             if n % _BYTE_UNITS[u] == 0]
    if exact:  # the shortest number: 40 MiB, 6 MB, 80 GB (not 78125000 KiB); binary first on a tie
        amount, _, unit = min(exact)
        return f"{amount} {unit}"
    for unit in ("TiB", "GiB", "MiB", "KiB"):
        if n >= _BYTE_UNITS[unit]:
            return f"{_number(n / _BYTE_UNITS[unit])} {unit}"
    return f"{n} B"
