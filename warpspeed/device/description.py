"""The :class:`Device` dataclass (one GPU as the model sees it), its checks, its changes and its display."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from ..errors import InputError
from .base import IDENTITY_KEYS, SCHEMA_VERSION, DeviceFileError, FrozenMap
from .consistency import consistency_problems
from .families import device_family
from .hitrates import HIT_RATE_CURVES, HitRates
from .keys import KEY_GROUPS, KEYS, KEYS_BY_ATTR, value_problem, value_text
from .overrides import changed_attributes, suffixed_id


@dataclass(frozen=True)
class Device:
    """One GPU as the model sees it. Build it with :func:`device`; change it with :meth:`with_overrides`.

    ``sources`` maps every file/override key (``"l2_size"``, ``"dram_bw"``, ``"dram_bw_peak"``,
    ``"hit_rates.l2_y"`` ...) to the citation of its value; :meth:`source_of` also accepts attribute names.
    """

    id: str
    name: str
    vendor: str
    architecture: str
    compute_capability: str
    sm_count: int
    clock_GHz: float
    warp_size: int
    l1_size_bytes: int
    l1_line_bytes: int
    l1_sector_bytes: int
    l1_bytes_per_cycle: int
    l1_bytes_per_cycle_8B: int | None
    l1_banks: int
    l1_bank_bytes: int
    l1_pairing_distance_bytes: int
    l1_load_lines_per_wavefront: int | None
    l1_store_lines_per_wavefront: int | None
    l1_wavefronts_per_warp: int | None
    l2_size_bytes: int
    l2_partitions: int
    l2_effective_size_bytes: int
    l2_line_bytes: int
    l2_sector_bytes: int
    l2_bw_GB_s: float
    dram_bw_GB_s: float
    l2_bw_peak_GB_s: float | None
    dram_bw_peak_GB_s: float | None
    fp32_lanes_per_sm: int
    fp64_lanes_per_sm: int
    max_threads_per_sm: int
    max_blocks_per_sm: int
    max_threads_per_block: int
    max_block_dims: tuple[int, int, int]
    registers_per_sm: int
    max_registers_per_thread: int
    register_alloc_unit: int
    register_subpartitions: int
    shared_per_sm_bytes: int
    shared_per_block_bytes: int
    shared_alloc_unit_bytes: int
    shared_reserved_per_block_bytes: int
    l2_latency_s: float | None
    dram_latency_s: float | None
    sectors_in_flight_per_warp: int | None
    dram_run_overhead_bytes: int | None
    hit_rates: HitRates
    sources: Mapping[str, str]
    dram_size_bytes: int | None = None
    dram_run_time_s: float | None = None
    dram_run_exponent: float | None = None
    l2_requests_per_ns: float | None = None  # L1 -> L2 requests per ns (latency model; None: no request limit)
    msc_size_bytes: int | None = None  # memory-side cache (None: the device has none; warpspeed.model.levels)
    msc_bw_GB_s: float | None = None
    msc_bw_peak_GB_s: float | None = None
    tlb_page_bytes: int | None = None
    tlb_reach_bytes: int | None = None
    tlb_walks_per_ns: float | None = None
    l1_wavefronts_per_missed_line: float | None = None  # line rule: a further load line that misses the L1
    file: str | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.sources, FrozenMap):
            object.__setattr__(self, "sources", FrozenMap(self.sources))
        if isinstance(self.max_block_dims, list):
            object.__setattr__(self, "max_block_dims", tuple(self.max_block_dims))
        self._validate()

    # -- queries ------------------------------------------------------------------------------------

    def lanes_per_sm(self, precision: str) -> int:
        """FMA lanes per SM per cycle for ``"fp32"`` or ``"fp64"``."""
        if precision == "fp32":
            return self.fp32_lanes_per_sm
        if precision == "fp64":
            return self.fp64_lanes_per_sm
        raise InputError(f"unknown precision {precision!r} for device {self.id}; use 'fp32' or 'fp64'.")

    def lsu_bytes_per_cycle(self, element_bytes: int) -> int:
        """Bytes the L1 load/store unit serves per cycle for accesses of ``element_bytes``."""
        if element_bytes == 8 and self.l1_bytes_per_cycle_8B is not None:
            return self.l1_bytes_per_cycle_8B
        return self.l1_bytes_per_cycle

    def peak_GFLOP_s(self, precision: str) -> float:
        """Peak GFLOP/s: SMs x FMA lanes x 2 FLOP x clock in GHz."""
        return self.sm_count * self.lanes_per_sm(precision) * 2 * self.clock_GHz

    def source_of(self, name: str) -> str:
        """The citation for a value, by key (``"l2_size"``) or attribute name (``"l2_size_bytes"``)."""
        key = KEYS_BY_ATTR[name].key if name in KEYS_BY_ATTR else name
        try:
            return self.sources[key]
        except KeyError:
            raise InputError(f"device {self.id} has no source for {name!r}; known: "
                             f"{', '.join(self.sources)}.") from None

    # -- changes ------------------------------------------------------------------------------------

    def with_overrides(self, **changes: Any) -> Device:
        """A hypothetical device: this one with some values replaced.

        Keys: every key of :data:`warpspeed.device.OVERRIDE_KEYS` (the numeric keys of device files, listed
        with units in docs/device-format.md, and ``hit_rates.<l1|l2_y|l2_z|l2_store>.<a|b|c>``, passed as
        ``**{"hit_rates.l2_z.b": 0.004}``). Values are numbers in the key's canonical unit or strings with a
        unit such as ``"80MiB"``, ``"5000GB/s"``, ``"1.6GHz"``.

        Derived values follow: a new ``l2_size`` or ``l2_partitions`` sets ``l2_effective_size =
        l2_size // l2_partitions`` unless that is given too; a new ``dram_bw``/``l2_bw`` scales the
        vendor peak beside it by the same factor unless the peak is given too. Changed keys get the
        source ``"override"`` and the id a suffix such as ``"+l2_size=80MiB"``.

        ``None`` or ``"none"`` removes an optional key (:data:`warpspeed.device.keys.NONE_REMOVES`), with the keys
        that go together with it: ``msc_size=None`` is the device without its memory-side cache (``msc_size``,
        ``msc_bw``, ``msc_bw_peak``), id suffix ``"+msc_size=none"``. A required key, ``l2_effective_size`` or a
        latency-model key given none is refused.
        """
        problems: list[str] = []
        attrs, sources, suffixes = changed_attributes(attribute_values(self), changes, {}, "override", problems)
        if problems:
            raise DeviceFileError(f"override of device {self.id}", problems)
        return replace(self, id=suffixed_id(self.id, suffixes), sources=FrozenMap(sources), **attrs)

    # -- export -------------------------------------------------------------------------------------

    def to_dict(self) -> dict:
        """Every attribute as JSON-able data (tuples become lists), plus ``schema_version``."""
        out: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name == "hit_rates":
                v = v.to_dict()
            elif f.name == "sources":
                v = dict(v)
            elif isinstance(v, tuple):
                v = list(v)
            out[f.name] = v
        return out

    def to_text(self) -> str:
        """A readable listing in the keys of device files and ``--set`` (``l2_size = 50 MiB``), grouped,
        with each value's source after ``#``; optional values the device does not give are listed as
        comments. Every ``key = value`` line reads back: the value text given to ``--set``,
        :meth:`with_overrides` or a file of changes yields the same value (``<bw>_peak`` is written
        ``<bw>.peak`` in a file)."""
        rows: list[tuple[str, str, str] | str] = []  # (key, value, source) or a heading

        def add(key: str, value: str, source: str = "") -> None:
            rows.append((key, value, source))

        rows.append("identity")
        for k in IDENTITY_KEYS:
            add(k, getattr(self, k))
        if self.file:
            add("file", str(self.file))
        rows += device_family(self).text_lines()
        for group in KEY_GROUPS:
            rows.append(group.title)
            for spec in group.keys:
                value = getattr(self, spec.attr)
                if value is None:
                    rows.append(f"  # {spec.key}: not given ({spec.absent})")
                else:
                    add(spec.key, value_text(spec, value), self.sources.get(spec.key, ""))
        rows.append("hit-rate curves: hit(O) = a*exp(-b*exp(c*O)), O = oversubscription")
        for curve in HIT_RATE_CURVES:
            c = getattr(self.hit_rates, curve)
            for i, coef in enumerate("abc"):
                add(f"hit_rates.{curve}.{coef}", repr(getattr(c, coef)), c.source if i == 0 else "")
        kw = max(len(r[0]) for r in rows if isinstance(r, tuple))
        vw = max(len(r[1]) for r in rows if isinstance(r, tuple) and r[2])
        lines = [f"{self.id}: {self.name}",
                 "keys as in device files and --set; each value's source follows '#'"]
        for r in rows:
            if isinstance(r, str):
                lines.append(r if r.startswith(" ") else f"\n{r}")
            elif r[2]:
                lines.append(f"  {r[0]:<{kw}} = {r[1]:<{vw}}  # {r[2]}")
            else:
                lines.append(f"  {r[0]:<{kw}} = {r[1]}")
        return "\n".join(lines)

    # -- checks -------------------------------------------------------------------------------------

    def _validate(self) -> None:
        problems = [p for spec in KEYS if (v := getattr(self, spec.attr)) is not None or spec.required
                    or spec.derived  # optional in a file, where it is derived when left out
                    if (p := value_problem(spec, v))]
        if problems:
            raise InputError(f"device {self.id}: " + "; ".join(problems) + ".")
        problems = consistency_problems(attribute_values(self))
        required = {k.key for k in KEYS if getattr(self, k.attr) is not None} | \
            {f"hit_rates.{c}" for c in HIT_RATE_CURVES}
        missing = sorted(required - set(self.sources))
        if missing:
            problems.append(f"values without a source: {', '.join(missing)}")
        empty = sorted(k for k, s in self.sources.items() if not isinstance(s, str) or not s.strip())
        if empty:
            problems.append(f"empty sources: {', '.join(empty)}")
        if problems:
            raise InputError(f"device {self.id} is inconsistent: " + "; ".join(problems) + ".")


def attribute_values(dev: Device) -> dict[str, Any]:
    """Device attribute -> value, for :func:`consistency_problems`."""
    return {f.name: getattr(dev, f.name) for f in fields(dev)}
