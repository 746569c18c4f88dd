"""Human-readable reports of estimates: the headline first, then the tables."""

from __future__ import annotations

import math

from .estimate import Estimate
from .roofline import LIMITERS

VOLUME_LABELS = {
    "l1_load": "L1 requests (no L1 hit)", "l2_load_compulsory": "L2->L1 load, compulsory",
    "l2_load": "L2->L1 load", "l2_store": "L1->L2 store", "dram_load_compulsory": "DRAM->L2 load, compulsory",
    "dram_load": "DRAM->L2 load", "dram_store": "L2->DRAM store",
}


def _num(v: float, digits: int = 3) -> str:
    if v is None or not math.isfinite(v):
        return "-"
    if abs(v) < 5e-4:
        return "0"
    return f"{v:.{digits}g}" if abs(v) < 1000 else f"{v:,.0f}"


def _triple(t) -> str:
    return "(" + ", ".join(str(x) for x in t) + ")"


def headline(e: Estimate) -> str:
    """Performance, limiter and the margin to the next limiter in one line."""
    margin = e.margin
    tail = f"; next: {margin[0]} at {margin[1]:.2f}x" if margin else ""
    return (f"{e.kernel} on {e.device}, block {_triple(e.block)}, folding {_triple(e.folding)}: "
            f"{_num(e.performance_GLup_s)} GLup/s, {e.limiter}-bound{tail}; "
            f"{_num(e.time_s * 1e3)} ms for {e.domain[0]}x{e.domain[1]}x{e.domain[2]} cells")


def text_report(e: Estimate) -> str:
    occ = e.occupancy
    lines = [headline(e), ""]
    lines.append(f"launch     grid {_triple(e.grid)}, {occ.blocks_per_sm} blocks/SM (limited by "
                 f"{occ.limited_by}), wave of {e.wave_blocks} blocks, {occ.registers} registers "
                 f"({occ.registers_source})")
    lines.append("")
    lines.append(f"{'limiter':<8}{'GLup/s':>12}{'x best':>9}")
    for k in LIMITERS:
        v = e.limiters_GLup_s[k]
        rel = v / e.performance_GLup_s if math.isfinite(v) and e.performance_GLup_s > 0 else math.inf
        mark = "  <- limiter" if k == e.limiter else ""
        lines.append(f"{k:<8}{_num(v):>12}{_num(rel):>9}{mark}")
    lines.append("")
    lines.append(f"{'volume':<28}{'B/lup':>10}")
    for k, label in VOLUME_LABELS.items():
        lines.append(f"{label:<28}{_num(e.volumes_B_per_lup[k]):>10}")
    lines.append(f"{'L1 cycles per warp-lup':<28}{_num(e.l1_cycles_per_warp_lup):>10}")
    lines.append("")
    lines.append("causes (B/lup)                potential    O     hit rate   hit")
    for label, c in (("L1 redundant loads", e.l1_capacity), ("L2 y-layer reuse", e.layer_y),
                     ("L2 z-layer reuse", e.layer_z), ("L2 partial stores", e.partial_stores)):
        lines.append(f"{label:<28}{_num(c.potential_B_per_lup):>11}{_num(c.oversubscription):>8}"
                     f"{_num(c.hit_rate):>10}{_num(c.hit_B_per_lup):>8}")
    lines.append("")
    lines.append(f"{'field':<16}{'L2 comp':>9}{'DRAM comp':>11}{'y hit':>8}{'z hit':>8}{'store':>8}")
    for f in e.fields:
        lines.append(f"{f.name:<16}{_num(f.l2_load_compulsory):>9}{_num(f.dram_load_compulsory):>11}"
                     f"{_num(f.dram_layer_y_hit):>8}{_num(f.dram_layer_z_hit):>8}{_num(f.dram_store):>8}")
    for n in e.notes:
        lines.append(f"note: {n}")
    return "\n".join(lines)
