"""The hit-rate curves of a device: how much of the reusable volume a cache keeps, as a fitted, smooth function of
the oversubscription O = allocated volume / cache capacity (hit(O) = a*exp(-b*exp(c*O))).

Device data: fitted per GPU family, their coefficients come from ``devices/hit_rates.toml`` or the device file
(docs/device-format.md). The model's capacity stage (warpspeed/model/capacity.py) applies them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import InputError

HIT_RATE_CURVES = ("l1", "l2_y", "l2_z", "l2_store")


NEGLIGIBLE_HIT_RATE = 1e-9
"""Hit rates below this are 0: the curve's tail far above its capacity gives values such as 1.9e-278, which
carry no byte a GPU counts and read as noise in a report (the text showed 0, JSON 1.94e-278)."""


@dataclass(frozen=True)
class HitRateCurve:
    """hit(O) = a * exp(-b * exp(c * O)), clipped to [0, 1]; O = oversubscription (allocated volume /
    capacity).

    With ``a = 1``, small ``b > 0`` and ``c > 0`` this is close to one below O = 1 and falls towards zero
    as O grows (a Gompertz-type sigmoid, as fitted in Ernst et al.). Accepts a float or a numpy array.
    """

    a: float
    b: float
    c: float
    source: str

    def __post_init__(self) -> None:
        problems = _curve_problems({"a": self.a, "b": self.b, "c": self.c, "source": self.source})
        if problems:
            raise InputError(f"hit-rate curve (hit(O) = a*exp(-b*exp(c*O))): {'; '.join(problems)} "
                             f"(source: {self.source!r}).")
        for name in ("a", "b", "c"):
            object.__setattr__(self, name, float(getattr(self, name)))

    def __call__(self, oversubscription: float) -> float:
        if isinstance(oversubscription, np.ndarray):
            o = oversubscription.astype(float)
            if self.b == 0.0:
                return np.clip(np.full_like(o, self.a), 0.0, 1.0)
            with np.errstate(over="ignore", under="ignore"):
                h = np.clip(self.a * np.exp(-self.b * np.exp(self.c * o)), 0.0, 1.0)
            return np.where(h < NEGLIGIBLE_HIT_RATE, 0.0, h)
        x = self.c * float(oversubscription)
        if self.b == 0.0:
            h = self.a
        elif x > 709.0:  # exp would overflow; the curve is 0 there
            h = 0.0
        else:
            h = self.a * math.exp(-self.b * math.exp(x))
        return 0.0 if h < NEGLIGIBLE_HIT_RATE else min(1.0, h)

    def to_dict(self) -> dict:
        return {"a": self.a, "b": self.b, "c": self.c, "source": self.source}


@dataclass(frozen=True)
class HitRates:
    """The four fitted hit-rate curves of the capacity-miss model."""

    l1: HitRateCurve        # L1 redundant loads
    l2_y: HitRateCurve      # L2 y-layer overlap
    l2_z: HitRateCurve      # L2 z-layer overlap
    l2_store: HitRateCurve  # L2 redundant (partial) stores

    def to_dict(self) -> dict:
        return {name: getattr(self, name).to_dict() for name in HIT_RATE_CURVES}


def _curve_problems(table: Mapping[str, Any]) -> list[str]:
    """What is wrong with the coefficients and source of a hit-rate curve that are in ``table``."""
    problems = []
    for name in ("a", "b", "c"):
        if name not in table:
            continue
        v = table[name]
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            problems.append(f"{name} must be a finite number, got {v!r}")
        elif name != "c" and v < 0:
            problems.append(f"{name} must be >= 0, got {v!r}")
    source = table.get("source", "given")
    if not isinstance(source, str) or not source.strip():
        problems.append("source must be a non-empty text saying where a, b, c come from")
    return problems


def curve_from_table(table: object, where: str) -> HitRateCurve:
    """A curve from a device-file table of exactly ``a, b, c, source``; a clear error naming ``where``."""
    if not isinstance(table, dict):
        raise InputError(f"{where}: expected a table with keys a, b, c, source; got {table!r}.")
    unknown = sorted(set(table) - {"a", "b", "c", "source"})
    missing = [k for k in ("a", "b", "c", "source") if k not in table]
    bad = _curve_problems(table)
    if unknown or missing or bad:
        raise InputError(f"{where}: a hit-rate curve is a table of exactly a, b, c (numbers, hit(O) = "
                         f"a*exp(-b*exp(c*O)), a and b >= 0) and source"
                         + (f"; unknown: {', '.join(unknown)}" if unknown else "")
                         + (f"; missing: {', '.join(missing)}" if missing else "")
                         + "".join(f"; {b}" for b in bad) + ".")
    return HitRateCurve(table["a"], table["b"], table["c"], table["source"])
