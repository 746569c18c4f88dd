"""Predicted vs measured: rank correlation, the measured quality of the predicted best, volume errors.

For every group of a measurement file (:mod:`warpspeed.measurement.measurements`) each measured configuration is
estimated (with the registers of the binary that ran) and compared. A group is one sweep: the rows of one
kernel, device and domain. A sweep may mix the codes that ran (``measure --code auto`` times pystencils'
code for folding 1x1x1 and warpspeed's for folded configurations); when it measured a configuration with
both codes it is split into one group per code, so that every group has each configuration once. A
configuration measured twice with the same code is an error (the file holds two runs of one sweep).

- Spearman rank correlation of predicted and measured GLup/s (ties get their average rank);
- top-1: the measured GLup/s of the configuration warpspeed ranks first, in % of the measured best
  (Ernst et al. reach 96 % for the 3D25pt stencil on an A100);
- per volume (``l1_load``, ``l2_load``, ``l2_store``, ``dram_load``, ``dram_store``) and for the L1 cycles per
  warp-lup (``l1_cycles``, against ncu's ``l1tex__data_pipe_lsu_wavefronts``) where measured: the median and
  90th percentile of |predicted - measured| / measured and the share of configurations within 10 %;
- the ratio predicted / measured GLup/s: median and 90th percentile of |ratio - 1| (how far the absolute
  numbers are off, which the rank figures do not show).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from ..application.resolve import resolve_device, resolve_kernel
from ..device import Device
from ..errors import InputError
from ..model.estimate import Estimate, estimate, with_model
from ..model.launch import LaunchError
from ..progress import Progress
from .measurements import VOLUME_COLUMNS, Measurement, triple_text


@dataclass(frozen=True)
class Pair:
    """One measured configuration and its estimate."""

    measured: Measurement
    estimate: Estimate
    device: Device | None = field(default=None, compare=False, repr=False)  # the device it was estimated on

    @property
    def label(self) -> str:
        return f"{triple_text(self.measured.block)} f{triple_text(self.measured.folding)}"


WITHIN = 0.10  # the tolerance of VolumeError.within: |relative error| <= 10 %
L1_CYCLES = "l1_cycles"  # the key of the L1 cycles per warp-lup among the compared quantities


@dataclass(frozen=True)
class VolumeError:
    n: int
    median: float  # of |relative error|
    p90: float
    within: float = 0.0  # share of configurations with |relative error| <= WITHIN (0..1)

    @classmethod
    def of(cls, errors: Sequence[float]) -> VolumeError:
        e = np.abs(np.asarray(errors, dtype=float))
        return cls(len(e), float(np.median(e)), float(np.percentile(e, 90)), float(np.mean(e <= WITHIN + 1e-12)))

    def to_dict(self) -> dict:
        return {"n": self.n, "median_abs_rel_error": self.median, "p90_abs_rel_error": self.p90,
                "within_10_percent": self.within}


@dataclass(frozen=True)
class Ratio:
    """Predicted / measured GLup/s over a sweep: the median ratio and the 90th percentile of |ratio - 1|."""

    median: float
    p90_abs_deviation: float

    def to_dict(self) -> dict:
        return {"median": self.median, "p90_abs_deviation": self.p90_abs_deviation}


@dataclass(frozen=True)
class GroupReport:
    kernel: str
    device: str
    pairs: tuple[Pair, ...]
    spearman: float | None  # None with fewer than 2 configurations or constant values
    top1_percent: float
    volume_errors: dict[str, VolumeError]
    domain: tuple[int, int, int] = (0, 0, 0)
    code: str = ""  # the code of every row when the sweep was split by code; empty: as measured (maybe mixed)
    ratio: Ratio | None = None  # predicted / measured GLup/s
    estimated_on: str = ""  # the device the model used, where it is not the measured one (validate --device)

    @property
    def title(self) -> str:
        code = f", {self.code} code" if self.code else ""
        model = f", estimated as {self.estimated_on}" if self.estimated_on else ""
        return f"{self.kernel} on {self.device} ({triple_text(self.domain)}{code}{model})"

    @property
    def model(self) -> str:
        """The performance model of the predictions (documents before the models: roofline)."""
        return self.pairs[0].estimate.model if self.pairs else "roofline"

    @property
    def predicted_best(self) -> Pair:
        return max(self.pairs, key=lambda p: p.estimate.performance_GLup_s)

    @property
    def measured_best(self) -> Pair:
        return max(self.pairs, key=lambda p: p.measured.GLup_s)

    def to_dict(self) -> dict:
        return {"kernel": self.kernel, "device": self.device, "estimated_on": self.estimated_on or self.device,
                "model": self.model,
                "domain": triple_text(self.domain),
                "code": self.code or None, "configurations": len(self.pairs),
                "spearman": self.spearman, "top1_percent": self.top1_percent,
                "predicted_best": self.predicted_best.label, "measured_best": self.measured_best.label,
                "performance_ratio": None if self.ratio is None else self.ratio.to_dict(),
                "volumes": {k: v.to_dict() for k, v in self.volume_errors.items()}}


def ranks(values: Sequence[float]) -> np.ndarray:
    """1-based ranks, ties sharing their average rank."""
    v = np.asarray(values, dtype=float)
    order = np.argsort(v, kind="stable")
    r = np.empty(len(v))
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        r[order[i:j + 1]] = (i + j) / 2 + 1
        i = j + 1
    return r


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Spearman's rank correlation (Pearson correlation of the average ranks)."""
    if len(x) != len(y):
        raise ValueError("spearman needs two sequences of the same length")
    if len(x) < 2:
        return None
    rx, ry = ranks(x), ranks(y)
    sx, sy = rx.std(), ry.std()
    if sx == 0 or sy == 0:
        return None
    return float(((rx - rx.mean()) * (ry - ry.mean())).mean() / (sx * sy))


def predicted_value(p: Pair, key: str) -> float:
    """The estimate's value of a compared quantity: a volume key or :data:`L1_CYCLES`."""
    if key == L1_CYCLES:
        return p.estimate.l1_cycles_per_warp_lup
    return p.estimate.volumes_B_per_lup[key]


def measured_value(p: Pair, key: str) -> float | None:
    """The measured value of a compared quantity (None where not measured)."""
    return p.measured.volume("l1_cycles_per_warp_lup" if key == L1_CYCLES else key)


def volume_errors(pairs: Sequence[Pair]) -> dict[str, VolumeError]:
    out = {}
    for key in (*VOLUME_COLUMNS, L1_CYCLES):
        errs = [abs(predicted_value(p, key) - m) / m for p in pairs
                if (m := measured_value(p, key)) is not None and m > 0]
        if errs:
            out[key] = VolumeError.of(errs)
    return out


def performance_ratio(pairs: Sequence[Pair]) -> Ratio | None:
    """Predicted / measured GLup/s of the configurations that the model can run (None if none)."""
    r = np.array([p.estimate.performance_GLup_s / p.measured.GLup_s for p in pairs
                  if 0 < p.estimate.performance_GLup_s < math.inf])
    if not len(r):
        return None
    return Ratio(float(np.median(r)), float(np.percentile(np.abs(r - 1), 90)))


def estimate_measurements(measurements: Sequence[Measurement],
                          devices: dict[str, Device] | None = None, model: str | None = None,
                          progress: Progress | None = None) -> list[Pair]:
    """The estimate of every measured configuration (kernel and device resolved once per name) under the
    performance model ``model`` (default: the default model); ``progress(done, total)`` per row."""
    kernels: dict = {}
    devs = dict(devices or {})
    pairs = []
    for m in measurements:
        key = (m.kernel, m.domain)
        if key not in kernels:
            kernels[key] = resolve_kernel(m.kernel, m.domain)
        if m.device not in devs:
            devs[m.device] = resolve_device(m.device)
        try:
            e = estimate(kernels[key], devs[m.device], m.block, m.folding, registers=m.registers, model=model)
        except LaunchError as err:
            raise InputError(f"measured configuration {triple_text(m.block)} of {m.kernel} cannot launch on "
                             f"{m.device} in the model: {err}") from None
        pairs.append(Pair(m, e, devs[m.device]))
        if progress is not None:
            progress(len(pairs), len(measurements))
    return pairs


def _config(m: Measurement) -> tuple:
    return m.block, m.folding


def sweeps(measurements: Sequence[Measurement]) -> dict[tuple, list[Measurement]]:
    """The groups of the module docstring, keyed (kernel, device, domain, code), in order of appearance.

    ``code`` is empty for a sweep that measured each configuration once (whatever codes it mixed).
    """
    runs: dict[tuple, list[Measurement]] = {}
    for m in measurements:
        runs.setdefault((m.kernel, m.device, m.domain), []).append(m)
    groups: dict[tuple, list[Measurement]] = {}
    for key, rows in runs.items():
        split = len({_config(m) for m in rows}) < len(rows)
        for m in rows:
            groups.setdefault((*key, m.code if split else ""), []).append(m)
    for (kernel, dev, domain, _code), rows in groups.items():
        seen: dict[tuple, Measurement] = {}
        for m in rows:
            if (first := seen.setdefault(_config(m), m)) is not m:
                raise InputError(
                    f"{kernel} on {dev} ({triple_text(domain)}): configuration block {triple_text(m.block)} folding "
                    f"{triple_text(m.folding)} is measured twice with {m.code or 'the same'} code (lines "
                    f"{first.line} and {m.line}); keep one row per configuration, or put the second run in its own "
                    f"file.")
    return groups


def validate(measurements: Sequence[Measurement], devices: dict[str, Device] | None = None,
             device: Device | None = None, model: str | None = None,
             progress: Progress | None = None) -> list[GroupReport]:
    """One report per sweep (see the module docstring), in the order the sweeps first appear.

    ``devices`` maps a row's device name to the device to estimate it on (default: the named device);
    ``device`` estimates every row on one device (e.g. a calibrated file of the GPU that was measured).
    """
    if device is not None:
        measured = sorted({m.device for m in measurements})
        if len(measured) > 1:
            raise InputError(f"the rows were measured on {len(measured)} devices ({', '.join(measured)}); a device "
                             f"given for all rows ({device.id}) fits one of them: validate one file per device.")
        devices = {m.device: device for m in measurements}
    groups = sweeps(measurements)
    estimated = iter(estimate_measurements([m for rows in groups.values() for m in rows], devices, model, progress))
    reports = []
    for (kernel, dev, domain, code), rows in groups.items():
        pairs = [next(estimated) for _ in rows]
        on = "" if device is None or device.id == dev else device.id
        reports.append(_report(kernel, dev, domain, code, pairs, on))
    return reports


def _report(kernel: str, dev: str, domain, code: str, pairs: list[Pair], on: str) -> GroupReport:
    pred = [p.estimate.performance_GLup_s for p in pairs]
    meas = [p.measured.GLup_s for p in pairs]
    best_pred = pairs[int(np.argmax(pred))]
    top1 = 100.0 * best_pred.measured.GLup_s / max(meas)
    return GroupReport(kernel, dev, tuple(pairs), spearman(pred, meas), top1, volume_errors(pairs), domain, code,
                       performance_ratio(pairs), on)


def remodel(reports: Sequence[GroupReport], model: str | None) -> list[GroupReport]:
    """The same reports under another performance model: the volumes are reused, only GLup/s change."""
    out = []
    for r in reports:
        pairs = []
        for p in r.pairs:
            if p.device is None:
                raise InputError("these reports carry no device to re-predict on; validate again with the model.")
            e = with_model(p.estimate, p.device, model)
            pairs.append(replace(p, estimate=e))
        out.append(_report(r.kernel, r.device, r.domain, r.code, pairs, r.estimated_on))
    return out


