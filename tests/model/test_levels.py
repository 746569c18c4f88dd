"""The memory hierarchy as data (warpspeed.model.levels): the table is consistent, and every consumer reads it."""

import dataclasses
import math

import pytest
from made_results import ranked

import warpspeed
from warpspeed.device import device
from warpspeed.errors import InputError
from warpspeed.kernel import Flops
from warpspeed.measurement.measure import counters_per_lup
from warpspeed.measurement.measured import Traffic, estimated_traffic
from warpspeed.measurement.measurements import VOLUME_COLUMNS
from warpspeed.measurement.ncu import METRICS
from warpspeed.model.estimate import VOLUME_KEYS as ESTIMATE_VOLUME_KEYS
from warpspeed.model.levels import (
    LEVEL_NAMES,
    LEVELS,
    MEASURED_LEVELS,
    MEASURED_VOLUMES,
    VOLUME_KEYS,
    bandwidths_GB_s,
    level,
    levels_in,
    traffic_B_per_lup,
)
from warpspeed.model.performance import Workload
from warpspeed.model.roofline import LIMITERS, LIMITS, roofline_limits
from warpspeed.render.report import ranking_table
from warpspeed.studies.ranking import RankedResult

H100 = device("H100-SXM5-80GB")


def test_the_table_is_consistent():
    assert LEVEL_NAMES == ("L1", "L2", "MSC", "DRAM")  # innermost first; the memory-side cache is optional
    assert ESTIMATE_VOLUME_KEYS == VOLUME_KEYS
    assert VOLUME_COLUMNS == MEASURED_VOLUMES == ("l1_load", "l2_load", "l2_store", "dram_load", "dram_store")
    for lv in LEVELS:
        assert set(lv.traffic_keys) <= set(VOLUME_KEYS), lv.name
        assert {col for col, _, _ in lv.measured} <= set(VOLUME_KEYS), lv.name
        assert all(name in METRICS for name, _ in lv.ncu_traffic), lv.name
        assert all(name in METRICS for _, name, _ in lv.measured), lv.name
        assert (lv.name in LIMITERS) != lv.optional  # every level is a roofline limiter of the same name (an
        # optional one only on a device that has it)
    assert [lim.name for lim in LIMITS if lim.name in LEVEL_NAMES] == list(LEVEL_NAMES)
    assert sum(lv.cycles_bound for lv in LEVELS) == 1  # only L1's limit counts cycles


def test_unknown_level_is_a_named_error():
    with pytest.raises(InputError, match=r"unknown memory level 'L3': valid are L1, L2, MSC, DRAM"):
        level("L3")


VOLUMES = {"l1_load": 40.0, "l2_load_compulsory": 20.0, "l2_load": 24.0, "l2_store": 8.0,
           "dram_load_compulsory": 16.0, "dram_load": 12.0, "dram_store": 8.0}


def test_traffic_and_costs_per_level():
    assert traffic_B_per_lup(VOLUMES) == {"L1": 48.0, "L2": 32.0, "DRAM": 20.0}  # L1: loads + write-through stores
    assert [lv.cost(VOLUMES, 7.5) for lv in levels_in(VOLUMES)] == [7.5, 32.0, 20.0]
    bw = bandwidths_GB_s(H100)
    assert list(bw) == ["L1", "L2", "DRAM"]  # no memory-side cache on an H100: no MSC level
    assert bw["L2"] == H100.l2_bw_GB_s and bw["DRAM"] == H100.dram_bw_GB_s
    assert bw["L1"] == pytest.approx(H100.sm_count * H100.clock_GHz * H100.l1_bytes_per_cycle)


def test_roofline_limits_divide_each_levels_rate_by_its_cost():
    w = Workload("fp64", Flops(), 7.5, VOLUMES, 64, 1, 256.0)
    lim = w.roofline_GLup_s(H100)
    assert lim["L2"] == pytest.approx(H100.l2_bw_GB_s / 32.0)
    assert lim["DRAM"] == pytest.approx(H100.dram_bw_GB_s / 20.0)
    assert lim["L1"] == pytest.approx(H100.sm_count * H100.clock_GHz * 32 / 7.5)
    assert lim == roofline_limits(H100, "fp64", w.costs())
    assert math.isinf(lim["FP"])  # no flops


def test_measured_traffic_by_level_name():
    t = Traffic.of_levels({"L1": 300.0, "L2": 200.0, "DRAM": 50.0})
    assert t == Traffic(l1_bytes=300.0, l2_bytes=200.0, dram_bytes=50.0)
    assert [t.level(lv.name) for lv in MEASURED_LEVELS] == [300.0, 200.0, 50.0]  # ncu measures no MSC
    assert t.hits() == {"L1": 100.0, "L2": 150.0, "DRAM": 50.0}
    assert estimated_traffic(VOLUMES, 10) == Traffic(480.0, 320.0, 200.0)


def test_measurement_columns_come_from_each_levels_ncu_metrics():
    rows = [{METRICS["l1_wavefronts"]: 640.0, METRICS["l1_load_sectors"]: 100.0, METRICS["l2_load_sectors"]: 50.0,
             METRICS["l2_store_sectors"]: 25.0, METRICS["dram_read_bytes"]: 800.0,
             METRICS["dram_write_bytes"]: 400.0, METRICS["cycles"]: 1e4}]
    c = counters_per_lup(rows, lups=100)
    assert c["l1_cycles_per_warp_lup"] == pytest.approx(204.8)
    assert {k: c[k] for k in MEASURED_VOLUMES} == pytest.approx(
        {"l1_load": 32.0, "l2_load": 16.0, "l2_store": 8.0, "dram_load": 8.0, "dram_store": 4.0})


def _result(block, perf, volumes, cycles):
    """A ranked result with these numbers (the others those of a real estimate; no model detail)."""
    base = warpspeed.estimate("star3d-r1", "A100-SXM4-40GB", (32, 4, 2), domain=(64, 64, 64), model="roofline")
    return ranked(base, block, perf, limiter="DRAM", volumes=volumes, l1_cycles=cycles,
                  limits={"FP": math.inf, "L1": 90.0, "L2": 80.0, "DRAM": perf})


def test_ties_break_on_the_outermost_levels_traffic_first():
    less_dram = _result((32, 4, 2), 50.0, dict(VOLUMES, dram_load=11.0, l2_load=30.0), 9.0)
    less_l2 = _result((64, 2, 2), 50.0, dict(VOLUMES, l2_load=20.0), 9.0)
    fewer_cycles = _result((128, 2, 1), 50.0, dict(VOLUMES, l2_load=20.0), 6.0)
    order = sorted([fewer_cycles, less_l2, less_dram], key=RankedResult.sort_key)
    assert [r.configuration.block for r in order] == [(32, 4, 2), (128, 2, 1), (64, 2, 2)]


def test_rank_table_has_one_column_per_level_outermost_first():
    @dataclasses.dataclass
    class _Ranking:
        results: list
        limiter_counts: dict
        bounded: tuple = ()

    r = _result((32, 4, 2), 50.0, VOLUMES, 7.5)
    table = ranking_table(_Ranking([r], {"DRAM": 1}))
    head, row = table.splitlines()[:2]
    assert head.endswith(" DRAM B/lup  L2 B/lup  L1 cyc")
    assert row.endswith("         20        32     7.5")
