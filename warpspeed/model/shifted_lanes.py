"""A block's lane counts (``footprint.lane_counts``, ``footprint.count_full_sectors``) without listing the
lanes of every block: for affine instructions whose lanes are the same offsets in every block, shifted.

A lane of an affine instruction has the byte address ``(c . (f + t) + const) eb``: ``f`` its block's first
thread, ``t`` the thread inside the block. The instructions of one slope ``(c, eb)`` (a field's loads or
stores, an array-of-structures field's populations included) therefore give every block of a launch the same
offsets ``(c . t + const) eb``, shifted by the block's ``(c . f) eb``. The counts of a block's lanes (distinct
granules, addresses and runs; sectors written completely) are unchanged by a shift of a multiple of
``modulus`` (a multiple of every granule counted), so they depend on the block only through its phase, its
shift mod ``modulus``, and through which lanes are active.

Each of those counts is a sum over the consecutive offsets of a sorted listing (whether the next one starts a
new granule, a new run, a full sector) of a term that depends only on the first one's residue mod the granules
counted, the gaps to its neighbours, and the phase; a gap of a few granules or more decides every term alike
(the caps of :meth:`ShiftedLanes.counts` and :meth:`ShiftedLanes.full_sectors`). So the
sorted offsets of a selection of instructions are reduced once per set of active lanes to a histogram of
(residue, capped gaps) keys, a few dozen, and each block's counts are that histogram's sums at its phase:
no per-block listing and no per-block sort. This is what an array-of-structures kernel's blocks are counted by,
whose elements do not fit the element rows of ``range_volumes``; the lanes one by one stay the reference.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .footprint import Instruction, local_threads
from .launch import Launch


@dataclass(frozen=True)
class ShiftedLanes:
    """The lanes of representative blocks as one set of offsets per instruction and a phase per block.

    ``offsets`` (n_instr, T): each lane's byte address less its block's shift; ``phases`` (k, n_instr): each
    block's shift mod ``modulus``; ``active`` (k, n_instr, T); ``slopes`` (n_instr,): an index per distinct
    ``(c, eb)``: instructions of one slope share their blocks' shifts."""

    offsets: np.ndarray
    phases: np.ndarray
    active: np.ndarray
    slopes: np.ndarray
    modulus: int

    def serves(self, selections: list[np.ndarray]) -> bool:
        """Whether each selection of instructions (boolean masks) has one slope, so that it is counted here."""
        return all(bool((self.slopes[sel] == self.slopes[sel][:1]).all()) for sel in selections)

    def counts(self, sel: np.ndarray, element_bytes: int, sector_bytes: int,
               line_bytes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """``lane_counts`` of the selected instructions' lanes of every block (k,): distinct sectors, lines and
        addresses, and runs.

        Consecutive offsets ``o`` and ``o + gap`` of a listing, ``a = o + phase``: the second starts a new granule
        of ``g`` bytes if ``(a + gap) // g != a // g``, a new address if ``gap > 0``, a new run if ``(a + gap) //
        sector - (a + element_bytes - 1) // sector > 1``: a function of ``a mod period`` (``period`` a multiple of
        the sector and the line) and the gap, the same for every gap from a line and from ``3 sector +
        element_bytes`` on (every term is then 1)."""
        period = math.lcm(sector_bytes, line_bytes)
        self._check(sel, period)
        k = self.active.shape[0]
        out = tuple(np.zeros(k, dtype=np.int64) for _ in range(4))
        cap = max(sector_bytes, line_bytes, 3 * sector_bytes + element_bytes)
        for members, listing in self._listings(sel):
            if listing.size == 0:
                continue
            (res, gap), n = _histogram((period, cap + 1), listing[:-1] % period, np.minimum(np.diff(listing), cap))
            a = (res[None, :] + self._phase(members, sel)[:, None]) % period  # (blocks, keys)
            b = a + gap[None, :]
            terms = (b // sector_bytes != a // sector_bytes, b // line_bytes != a // line_bytes,
                     np.broadcast_to(gap[None, :] > 0, a.shape),
                     b // sector_bytes - (a + element_bytes - 1) // sector_bytes > 1)
            for total, term in zip(out, terms, strict=True):
                total[members] = term @ n + 1  # the listing's first offset starts each
        return out  # type: ignore[return-value]

    def full_sectors(self, sel: np.ndarray, element_bytes: int, sector_bytes: int) -> np.ndarray:
        """``count_full_sectors`` of the selected instructions' lanes of every block (k,): the sectors holding
        ``sector_bytes // element_bytes`` of the block's distinct addresses or more (every element, if aligned).

        Such a sector's first distinct offset ``o`` (``a = o + phase``) is the one whose previous distinct offset,
        ``back`` bytes before, lies in another sector (``back > a mod sector``), and whose ``per - 1``-th next,
        ``ahead`` bytes after, in the same (``ahead < sector - a mod sector``): a function of ``a mod sector``
        and the two gaps, each the same from a sector on."""
        self._check(sel, sector_bytes)
        per = max(1, sector_bytes // element_bytes)
        k = self.active.shape[0]
        out = np.zeros(k, dtype=np.int64)
        for members, listing in self._listings(sel):
            distinct = listing[np.diff(listing, prepend=listing[:1] - 1) != 0]
            if distinct.size < per:
                continue
            back = np.minimum(np.diff(distinct, prepend=distinct[0] - sector_bytes), sector_bytes)
            ahead = np.full(distinct.size, sector_bytes, dtype=np.int64)  # none: as far as a sector
            ahead[:distinct.size - per + 1] = np.minimum(distinct[per - 1:] - distinct[:distinct.size - per + 1],
                                                         sector_bytes)
            (res, back, ahead), n = _histogram((sector_bytes, sector_bytes + 1, sector_bytes + 1),
                                               distinct % sector_bytes, back, ahead)
            a = (res[None, :] + self._phase(members, sel)[:, None]) % sector_bytes
            out[members] = ((back[None, :] > a) & (ahead[None, :] < sector_bytes - a)) @ n
        return out

    def _phase(self, members: np.ndarray, sel: np.ndarray) -> np.ndarray:
        """The shift mod ``modulus`` of the blocks ``members`` for the selected instructions (one slope)."""
        return self.phases[members, int(np.flatnonzero(sel)[0])]

    def _check(self, sel: np.ndarray, period: int) -> None:
        assert self.serves([sel]), "the selected instructions must share one slope"
        assert self.modulus % period == 0, "the granules must divide the modulus"

    def _listings(self, sel: np.ndarray) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per distinct set of active lanes of the selected instructions: the blocks that have it and the
        sorted offsets of those lanes."""
        rel = self.offsets[sel].ravel()
        k = self.active.shape[0]
        act = self.active[:, sel, :]
        if act.all():  # every lane of every block (most launches' blocks are whole): the offsets sorted
            return [(np.arange(k), np.sort(rel, kind="stable"))]
        order = np.argsort(rel, kind="stable")
        rel = rel[order]
        act = act.reshape(k, -1)
        groups: dict[bytes, list[int]] = {}
        for j, row in enumerate(np.packbits(act, axis=1)):
            groups.setdefault(row.tobytes(), []).append(j)
        return [(np.array(members), rel[act[members[0]][order]]) for members in groups.values()]


def _histogram(radices: tuple[int, ...], *columns: np.ndarray) -> tuple[list[np.ndarray], np.ndarray]:
    """The distinct rows of the columns (each a list of its column's values; column j's values in
    [0, ``radices[j]``)) and how often each occurs."""
    packed = columns[0].astype(np.int64)  # a copy: the packing below works in place
    for radix, c in zip(radices[1:], columns[1:], strict=True):
        packed *= radix
        packed += c
    n = np.bincount(packed)
    keys = np.flatnonzero(n)
    counts = n[keys]
    out = []
    for radix in radices[::-1]:
        keys, digit = np.divmod(keys, radix)
        out.append(digit)
    return out[::-1], counts


def shifted_lanes(launch: Launch, instructions: tuple[Instruction, ...], coords: np.ndarray, active: np.ndarray,
                  modulus: int) -> ShiftedLanes | None:
    """The :class:`ShiftedLanes` of the blocks ``coords`` (their ``active`` lanes, (k, n_instr, T)); None for a
    quasi-affine instruction or a ``linear1d`` launch (whose blocks' threads wrap the rows of the domain)."""
    forms = [ins.affine for ins in instructions]
    if launch.linear or any(form is None for form in forms):
        return None
    coeff = np.array([form[0] for form in forms if form is not None], dtype=np.int64).reshape(-1, 3)  # (n, 3)
    const = np.array([form[1] + ins.offset for form, ins in zip(forms, instructions, strict=True)
                      if form is not None], dtype=np.int64)
    eb = np.array([ins.element_bytes for ins in instructions], dtype=np.int64)
    slope_of: dict[tuple, int] = {}
    slopes = np.array([slope_of.setdefault((tuple(c), int(b)), len(slope_of)) for c, b in
                       zip(coeff.tolist(), eb.tolist(), strict=True)], dtype=np.int64)
    # the lanes' (c . t) eb once per slope (a field's instructions share it), then each instruction's constant
    per_slope = np.array([[c * b for c in cs] for cs, b in slope_of], dtype=np.int64) @ local_threads(launch)
    offsets = per_slope[slopes] + (const * eb)[:, None]  # (n, T)
    first = coords * np.asarray(launch.block, dtype=np.int64)  # (k, 3): each block's first thread
    phases = (first @ coeff.T) * eb[None, :] % modulus
    return ShiftedLanes(offsets, phases, active, slopes, modulus)
