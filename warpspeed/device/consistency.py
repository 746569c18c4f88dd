"""The consistency rules between a device's values (docs/device-format.md), in one place.

:class:`~warpspeed.device.description.Device` checks itself with them, and the loaders and overrides check the
values of a file or a change that has other problems too, so that one run reports everything.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..units import format_quantity
from .keys import KEYS_BY_ATTR, KEYS_BY_NAME, L1_LINE_KEYS, MSC_KEYS, PEAK_OF, TLB_KEYS, value_problem


def consistency_problems(v: Mapping[str, Any]) -> list[str]:
    """The consistency rules between values (docs/device-format.md), on ``v``: Device attribute -> value.

    The one place these rules live: :class:`Device` checks itself with it, and the loaders check the
    values of a file that has other problems too, so that one run reports everything. A check whose
    values are not all in ``v`` (a value that failed to parse) is skipped; ``None`` is a value not given.
    """
    problems: list[str] = []
    typed = {a: x for a, x in v.items()
             if a not in KEYS_BY_ATTR or x is None or not value_problem(KEYS_BY_ATTR[a], x)}
    problems += [value_problem(KEYS_BY_ATTR[a], x) for a, x in v.items() if a not in typed]
    v = typed  # a value of the wrong type or out of its range takes part in no rule

    def have(*attrs: str) -> bool:
        """Every value given (a None is an optional value not given) and of its type."""
        return all(v.get(a) is not None for a in attrs)

    def size(attr: str) -> str:
        return format_quantity(v[attr], "bytes")

    for lvl in ("l1", "l2"):
        line, sector = f"{lvl}_line_bytes", f"{lvl}_sector_bytes"
        if have(line, sector) and v[line] % v[sector]:
            problems.append(f"{lvl}_line ({v[line]} B) must be a whole multiple of {lvl}_sector ({v[sector]} B)")
    load, store = (KEYS_BY_NAME[k].attr for k in L1_LINE_KEYS[:2])
    if load in v and store in v and (v[load] is None) != (v[store] is None):
        problems.append("l1_load_lines_per_wavefront and l1_store_lines_per_wavefront go together (the L1 line "
                        "rule); give both or neither")
    if have("l1_pairing_distance_bytes", "l1_bank_bytes") and v["l1_pairing_distance_bytes"] % v["l1_bank_bytes"]:
        problems.append(f"l1_pairing_distance ({v['l1_pairing_distance_bytes']} B) must be a whole multiple of "
                        f"l1_bank_width ({v['l1_bank_bytes']} B)")
    if have("l2_effective_size_bytes", "l2_size_bytes") and v["l2_effective_size_bytes"] > v["l2_size_bytes"]:
        problems.append(f"l2_effective_size ({size('l2_effective_size_bytes')}) cannot exceed l2_size "
                        f"({size('l2_size_bytes')})")
    if have("max_threads_per_sm", "warp_size") and v["max_threads_per_sm"] % v["warp_size"]:
        problems.append(f"max_threads_per_sm ({v['max_threads_per_sm']}) must be a multiple of warp_size "
                        f"({v['warp_size']})")
    if have("max_threads_per_block", "max_threads_per_sm") and v["max_threads_per_block"] > v["max_threads_per_sm"]:
        problems.append(f"max_threads_per_block ({v['max_threads_per_block']}) cannot exceed max_threads_per_sm "
                        f"({v['max_threads_per_sm']})")
    if have("shared_per_block_bytes", "shared_per_sm_bytes") and \
            v["shared_per_block_bytes"] > v["shared_per_sm_bytes"]:
        problems.append(f"shared_per_block ({v['shared_per_block_bytes']} B) cannot exceed shared_per_sm "
                        f"({v['shared_per_sm_bytes']} B)")
    if have("shared_reserved_per_block_bytes", "shared_per_sm_bytes") and \
            v["shared_reserved_per_block_bytes"] > v["shared_per_sm_bytes"]:
        problems.append(f"shared_reserved_per_block ({v['shared_reserved_per_block_bytes']} B) cannot exceed "
                        f"shared_per_sm ({v['shared_per_sm_bytes']} B): no block could launch")
    if have("registers_per_sm", "register_subpartitions") and v["registers_per_sm"] % v["register_subpartitions"]:
        problems.append(f"registers_per_sm ({v['registers_per_sm']}) must split evenly into "
                        f"{v['register_subpartitions']} register_subpartitions")
    for keys, needs in ((TLB_KEYS, f"the TLB-page limiter needs all of {', '.join(TLB_KEYS)} (or none: off)"),
                        (MSC_KEYS, f"the memory-side cache needs both {' and '.join(MSC_KEYS)} (or neither: no such "
                                   "cache)")):
        attrs = [KEYS_BY_NAME[k].attr for k in keys]  # keys that go together: all given or none
        if all(a in v for a in attrs) and len({v[a] is None for a in attrs}) > 1:
            given = [k for k, a in zip(keys, attrs, strict=True) if v[a] is not None]
            problems.append(f"{needs}; given only {', '.join(given)}")
    if v.get("msc_bw_peak_GB_s") is not None and "msc_bw_GB_s" in v and v["msc_bw_GB_s"] is None:
        problems.append("msc_bw.peak needs msc_bw (the bandwidth the model uses); give both or neither")
    for bw, peak in PEAK_OF.items():
        used, top = KEYS_BY_NAME[bw].attr, KEYS_BY_NAME[peak].attr
        if have(used, top) and v[top] is not None and v[used] > v[top] * (1 + 1e-9):
            problems.append(f"{bw} ({v[used]:g} GB/s) cannot exceed its peak {peak} ({v[top]:g} GB/s); "
                            "change both")
    return problems
