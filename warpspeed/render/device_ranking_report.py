"""Which GPU for a kernel as text (a headline, the validation, a table) and as CSV rows (`warpspeed devices
rank`; docs/outputs.md describes the columns)."""

from __future__ import annotations

import textwrap

from ..studies.device_ranking import DeviceRanking, DeviceResult
from .report import number_text, seconds_text


def _triple(t) -> str:
    return "x".join(map(str, t))


def device_ranking_headline(r: DeviceRanking) -> str:
    """The fastest device and the runner-up, then how many devices' model data was measured here."""
    where = f"{r.kernel}, domain {_triple(r.domain)} ({r.model} model)"
    best = r.best
    if best is None:
        head = f"{where}: no device given can run it"
    else:
        b = best.best
        assert b is not None  # a device that runs has a best configuration
        head = (f"{where}: fastest on {best.device.id} ({number_text(best.performance_GLup_s)} GLup/s, "
                f"{best.limiter}-bound, block {b.configuration.label})")
        if len(r.running) > 1:
            nxt = r.running[1]
            head += f"; next {nxt.device.id} {nxt.factor:.3g}x slower"
        head += f"; {_count(len(r.running), 'device')} ranked"
        if r.refused:
            head += f", {len(r.refused)} cannot run it"
    lines = [head]
    measured = [d.device.id for d in r.running if d.family.measured]
    others = len(r.running) - len(measured)
    if others:
        lines.append(f"validation: {others} of {_count(len(r.running), 'device')} {'has' if others == 1 else 'have'} "
                     f"model data never measured here (published elsewhere or assumed from another family): "
                     f"{'its row is a first estimate' if others == 1 else 'their rows are first estimates'}; "
                     f"measured: {', '.join(measured) or 'none'}")
    elif r.running:
        lines.append("validation: every device's model data was measured here")
    if best is not None and best.confidence is not None and best.confidence.level != "confident":
        lines.append(f"confidence on {best.device.id}: {best.confidence.level}: {best.confidence.reasons[0]}")
    return "\n".join(lines)


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


def _row(i: str, d: DeviceResult, width: int) -> str:
    if d.best is None:
        return (f"{i:>2}  {d.device.id:<{width}}{'-':>8}{'-':>13}  {'-':<8}{'-':>7}  {'-':<14}{'-':<13}"
                f"{d.family.validation}")
    conf = d.confidence.level if d.confidence is not None else "-"
    return (f"{i:>2}  {d.device.id:<{width}}{number_text(d.performance_GLup_s):>8}{seconds_text(d.time_s or 0.0):>13}  "
            f"{d.limiter or '-':<8}{d.factor or 0.0:>7.2f}  {d.best.configuration.label:<14}{conf:<13}"
            f"{d.family.validation}")


def device_ranking_table(r: DeviceRanking) -> str:
    """One row per device, fastest first; those that cannot run the kernel last, with the reason below."""
    width = max(len("device"), *(len(d.device.id) for d in r.devices)) + 2
    rows = [f"{'#':>2}  {'device':<{width}}{'GLup/s':>8}{'time/update':>13}  {'limiter':<8}{'x best':>7}  "
            f"{'best block':<14}{'confidence':<13}validation (model data)"]
    rows += [_row(str(i), d, width) for i, d in enumerate(r.running, start=1)]
    rows += [_row("-", d, width) for d in r.refused]
    for d in r.refused:
        rows += textwrap.wrap(f"{d.device.id} cannot run it: {d.reason}", 100, initial_indent="  ",
                              subsequent_indent="    ", break_on_hyphens=False)
    unvalidated: dict[str, list[str]] = {}
    for d in r.running:
        for reason in d.unvalidated:
            unvalidated.setdefault(reason, []).append(d.device.id)
    for reason, ids in unvalidated.items():
        rows += textwrap.wrap(f"unvalidated on {', '.join(ids)}: {reason}", 100, initial_indent="  ",
                              subsequent_indent="    ", break_on_hyphens=False)
    rows += textwrap.wrap("GLup/s and time/update: the device's best configuration (screened ranking); x best: its "
                          "time over the fastest device's; confidence: that ranking's (close: other blocks within "
                          "the model's resolution, `warpspeed rank KERNEL --device ID` lists them); validation: "
                          "where the device family's model data comes from (measured here, published, or assumed "
                          "from another family).", 100)
    return "\n".join(rows)


def device_ranking_text(r: DeviceRanking) -> str:
    return device_ranking_headline(r) + "\n\n" + device_ranking_table(r)


DEVICE_RANKING_CSV_COLUMNS = ("rank", "device", "name", "architecture", "validation_status", "validation", "runs",
                              "reason", "performance_GLup_s", "time_s", "limiter", "factor", "block", "folding",
                              "threads", "confidence_level", "unvalidated", "kernel", "domain_x", "domain_y",
                              "domain_z", "model")


def device_ranking_csv_rows(r: DeviceRanking) -> list[dict]:
    """One flat row per device (DEVICE_RANKING_CSV_COLUMNS), fastest first, those that cannot run it last with
    empty figures; ``unvalidated``: the best configuration's reasons joined by '; '."""
    rows = []
    for i, d in enumerate(r.devices, start=1):
        b, conf = d.best, d.confidence
        rows.append({"rank": i if d.runs else "", "device": d.device.id, "name": d.device.name,
                     "architecture": d.device.architecture, "validation_status": d.family.status,
                     "validation": d.family.validation, "runs": str(d.runs).lower(), "reason": d.reason or "",
                     "performance_GLup_s": d.performance_GLup_s if d.runs else "",
                     "time_s": "" if d.time_s is None else d.time_s, "limiter": d.limiter or "",
                     "factor": "" if d.factor is None else d.factor,
                     "block": "" if b is None else _triple(b.configuration.block),
                     "folding": "" if b is None else _triple(b.configuration.folding),
                     "threads": ",".join(map(str, d.threads)), "confidence_level": "" if conf is None else conf.level,
                     "unvalidated": "; ".join(d.unvalidated), "kernel": r.kernel, "domain_x": r.domain[0],
                     "domain_y": r.domain[1], "domain_z": r.domain[2], "model": r.model})
    return rows
