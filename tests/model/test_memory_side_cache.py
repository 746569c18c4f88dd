"""The memory-side cache level (MSC: AMD's Infinity Cache between the L2 and the DRAM; warpspeed.model.levels and
the DRAM stage, warpspeed.model.dram): the L2's misses are its traffic, the DRAM's what it misses at its own
capacity; a device without one (every NVIDIA file) estimates exactly as before it existed."""

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import warpspeed
from warpspeed.device import device
from warpspeed.errors import InputError
from warpspeed.model.levels import level, levels_of, volume_keys
from warpspeed.model.results import Estimate

H100, MI300X = device("H100-SXM5-80GB"), device("MI300X")
MSC = {"msc_size": "256MiB", "msc_bw": "10TB/s"}
MSC_VOLUMES = ("msc_load", "msc_store")


def _curves(y_z: tuple[float, float, float], store: tuple[float, float, float]) -> dict:
    """Overrides of the L2 hit-rate curves (the MSC follows them too): a, b, c of the layers' and the stores'."""
    out = {f"hit_rates.{c}.{k}": v for c in ("l2_y", "l2_z") for k, v in zip("abc", y_z, strict=True)}
    return out | {f"hit_rates.l2_store.{k}": v for k, v in zip("abc", store, strict=True)}


# a step: every overlap hits below O = 0.5 (1 - 3e-6 at O = 0.3), none above (2e-5 at O = 0.6); partial stores
# always hit (so that the layers alone tell the two caches apart)
STEP = _curves((1.0, 1e-12, 50.0), (1.0, 1e-12, 0.01))

# volumes of the start commit (631b315), before the level existed: a device without one gives them to the bit
# (l2_load of the NVIDIA cases: after the Hopper L1 curve anchored at hit(0) = 1, f2893bb, which the level
# does not touch: 59.97958214906606 and 159.09559983104833 before it; the DRAM volumes after the partial-store
# rule of 2026-11-28 and the Hopper layer curves refitted with it, which the level does not touch either: stored
# sectors no cell completes read once with the compulsory load, partial sectors pushed out by the wave's stored
# volume)
BEFORE = {
    ("H100-SXM5-80GB", "star3d-r4", (32, 4, 2), (256, 256, 256)): {
        "l1_load": 206.0, "l2_load_compulsory": 58.0, "l2_load": 59.1391420335799, "l2_store": 8.0,
        "dram_load_compulsory": 33.26969696969697, "dram_load": 8.480016558792592, "dram_store": 8.0},
    ("H200-SXM-141GB", "d3q19-srt", (64, 2, 1), (128, 128, 128)): {
        "l1_load": 166.0, "l2_load_compulsory": 159.0, "l2_load": 159.06026242566833, "l2_store": 171.0,
        "dram_load_compulsory": 161.54392755681818, "dram_load": 163.02427446762945,
        "dram_store": 155.8995705165326},
    # the MI300X before it had the Infinity Cache: what the DRAM stage computed is now the L2<->MSC traffic
    ("MI300X", "star3d-r4", (64, 4, 1), (1024, 1024, 256)): {
        "l1_load": 248.0, "l2_load_compulsory": 110.0, "l2_load": 248.0, "l2_store": 10.0,
        "dram_load_compulsory": 72.85608552631578, "dram_load": 73.64672459763345, "dram_store": 8.85313907131767},
}


@pytest.mark.parametrize("case", list(BEFORE)[:2], ids=lambda c: c[0])
def test_a_device_without_the_keys_estimates_as_before_and_shows_no_level(case):
    dev, kernel, block, domain = case
    e = warpspeed.estimate(kernel, dev, block, domain=domain)
    assert dict(e.volumes_B_per_lup) == BEFORE[case]  # the same keys, in order, and the same numbers
    assert "MSC" not in e.limiters_GLup_s and "MSC" not in e.limits_GLup_s and e.memory_side is None
    d = e.to_dict()
    assert not any(k.startswith("msc_") for k in (*d["volumes_B_per_lup"], *d["causes"]))
    assert [lv.name for lv in levels_of(device(dev))] == ["L1", "L2", "DRAM"]


def test_the_l2_misses_are_the_msc_traffic_and_the_dram_the_same_stage_at_the_msc_capacity():
    """On the MI300X the L2<->MSC volumes are what the DRAM stage computed before the level existed; the DRAM
    volumes are the ones an L2 of the MSC's 256 MiB would let through (the same counts, curves and lines)."""
    case = ("MI300X", "star3d-r4", (64, 4, 1), (1024, 1024, 256))
    _, kernel, block, domain = case
    e = warpspeed.estimate(kernel, MI300X, block, domain=domain)
    v, before = e.volumes_B_per_lup, BEFORE[case]
    assert (v["msc_load"], v["msc_store"]) == (before["dram_load"], before["dram_store"])
    assert {k: v[k] for k in before if not k.startswith("dram_load") and k != "dram_store"} == \
        {k: x for k, x in before.items() if not k.startswith("dram_load") and k != "dram_store"}
    plain = dataclasses.replace(MI300X, msc_size_bytes=None, msc_bw_GB_s=None, msc_bw_peak_GB_s=None,  # no MSC,
                                l2_size_bytes=256 << 20, l2_effective_size_bytes=256 << 20)  # an L2 of its size
    p = warpspeed.estimate(kernel, plain, block, domain=domain).volumes_B_per_lup
    assert (v["dram_load"], v["dram_store"]) == (p["dram_load"], p["dram_store"])
    assert v["dram_load"] < v["msc_load"] / 8  # the Infinity Cache keeps the layers the 4 MiB L2s cannot
    m = e.memory_side
    assert m is not None and m.layer_z.capacity_bytes == 256 << 20 and e.layer_z.capacity_bytes == 4 << 20
    assert m.layer_z.allocated_bytes == e.layer_z.allocated_bytes  # the same lines allocated since the layer ran


def test_layers_that_fit_the_msc_but_not_the_l2_are_read_from_dram_once():
    """A domain whose y and z layers fit the 256 MiB but not one XCD's 4 MiB (step curves): the L2 misses every
    layer overlap, so msc_load is the whole wave footprint (the layer re-reads), while the DRAM serves each
    sector once: dram_load is the footprint less all of the overlap, the least a DRAM can load, which for
    star3d-r4 (one 8 B field read per cell) is 8 B/lup and the halos."""
    dev = MI300X.with_overrides(**STEP)
    e = warpspeed.estimate("star3d-r4", dev, (64, 4, 1), domain=(1024, 1024, 256), model="roofline")
    v, m = e.volumes_B_per_lup, e.memory_side
    assert e.layer_y.oversubscription > 1 and e.layer_z.oversubscription > 1  # the L2 cannot hold a layer
    assert m.layer_y.oversubscription < 0.5 and m.layer_z.oversubscription < 0.5  # the MSC can
    assert e.layer_y.hit_rate < 1e-6 and e.layer_z.hit_rate < 1e-6
    assert v["msc_load"] == pytest.approx(v["dram_load_compulsory"], rel=1e-6)  # every layer re-read, from the MSC
    overlap = m.layer_y.potential_B_per_lup + m.layer_z.potential_B_per_lup
    assert v["dram_load"] == pytest.approx(v["dram_load_compulsory"] - overlap, rel=1e-4)
    # one double per cell, and its share of the halos; and the stored sectors no cell completes, read once: rows
    # of 1032 doubles are 64.5 sectors of 128 B, so 1.5 per row hold a ghost cell (0.1875 B/lup)
    assert v["dram_load"] == pytest.approx(8.0 + 1.5 * 128 / 1024, rel=0.02)
    assert v["msc_load"] > 8.5 * v["dram_load"]  # the 4 MiB L2s re-read each cell about 9 times


def test_a_domain_too_large_for_both_moves_the_msc_traffic_to_and_from_dram():
    """Rows of 2^21 cells: one block row's lines oversubscribe even the 256 MiB (step curves), so the MSC keeps
    no layer either and the DRAM moves exactly what the L2 misses."""
    dev = MI300X.with_overrides(**STEP)
    e = warpspeed.estimate("star3d-r4", dev, (64, 4, 1), domain=(2**21, 16, 16), model="roofline")
    v, m = e.volumes_B_per_lup, e.memory_side
    assert m.layer_y.oversubscription > 1 and m.layer_z.oversubscription > 1
    assert (v["dram_load"], v["dram_store"]) == pytest.approx((v["msc_load"], v["msc_store"]), rel=1e-9)
    assert v["dram_load"] == pytest.approx(v["dram_load_compulsory"], rel=1e-9)


def test_the_dram_never_moves_more_than_the_msc():
    """A memory-side cache smaller than the L2 (a hypothetical --set) still sees the L2's capacity: what the L2
    keeps never reaches it."""
    small = H100.with_overrides(msc_size="1MiB", msc_bw="10TB/s")
    for block in ((32, 4, 2), (256, 1, 1), (8, 8, 8)):
        v = warpspeed.estimate("star3d-r4", small, block, domain=(512, 512, 256)).volumes_B_per_lup
        assert (v["dram_load"], v["dram_store"]) == (v["msc_load"], v["msc_store"])


def test_the_msc_limiter_binds_when_its_bandwidth_is_tiny():
    dev = MI300X.with_overrides(msc_bw="10GB/s")
    for model in ("roofline", "latency"):
        e = warpspeed.estimate("star3d-r4", dev, (64, 4, 1), domain=(512, 512, 256), model=model)
        traffic = level("MSC").traffic_B_per_lup(e.volumes_B_per_lup)
        assert e.limiter == "MSC"
        assert e.limiters_GLup_s["MSC"] == pytest.approx(10.0 / traffic)
        assert e.performance_GLup_s <= 10.0 / traffic * (1 + 1e-12)
    fast = warpspeed.estimate("star3d-r4", MI300X, (64, 4, 1), domain=(512, 512, 256))
    assert fast.limiter != "MSC" and math.isfinite(fast.limiters_GLup_s["MSC"])


def test_set_gives_an_nvidia_device_the_level_and_both_keys_go_together():
    dev = H100.with_overrides(**MSC)
    assert dev.msc_size_bytes == 256 << 20 and dev.msc_bw_GB_s == 10000.0
    assert dev.source_of("msc_size").startswith("override")
    assert volume_keys(dev) == ("l1_load", "l2_load_compulsory", "l2_load", "l2_store", "msc_load", "msc_store",
                                "dram_load_compulsory", "dram_load", "dram_store")
    e = warpspeed.estimate("star3d-r4", dev, (32, 4, 2), domain=(256, 256, 256))
    assert list(e.limiters_GLup_s) == ["FP", "L1", "L2", "MSC", "DRAM"]
    before = BEFORE[("H100-SXM5-80GB", "star3d-r4", (32, 4, 2), (256, 256, 256))]
    assert (e.volumes_B_per_lup["msc_load"], e.volumes_B_per_lup["msc_store"]) == \
        (before["dram_load"], before["dram_store"])
    with pytest.raises(InputError, match="needs both msc_size and msc_bw .* given only msc_bw"):
        H100.with_overrides(msc_bw="10TB/s")
    with pytest.raises(InputError, match="needs both msc_size and msc_bw .* given only msc_size"):
        H100.with_overrides(msc_size="256MiB")
    with pytest.raises(InputError, match="msc_size"):
        H100.with_overrides(msc_size="1TiB", msc_bw="10TB/s")  # beyond what a GPU has


def test_an_estimate_with_the_level_reads_back_from_its_json():
    e = warpspeed.estimate("d3q19-srt", MI300X, (64, 2, 1), domain=(256, 256, 128))
    d = e.to_dict()
    assert list(d["causes"])[-3:] == ["msc_layer_y", "msc_layer_z", "msc_partial_stores"]
    back = Estimate.from_dict(d)
    assert back == e and back.to_dict() == d


def test_the_shipped_infinity_caches():
    for dev_id in ("MI300X", "MI300A", "MI325X", "MI355X"):
        dev = device(dev_id)
        assert dev.msc_size_bytes == 256 << 20, dev_id
        assert "MSC" in [lv.name for lv in levels_of(dev)]
        assert dev.source_of("msc_bw").startswith("assumed")
    assert MI300X.msc_bw_peak_GB_s == 17200.0 and MI300X.source_of("msc_bw_peak").startswith("spec")
    for dev_id in ("MI210", "MI250X-GCD"):  # CDNA2 has no Infinity Cache
        assert device(dev_id).msc_size_bytes is None


@settings(max_examples=25, deadline=None)
@given(msc_MiB=st.sampled_from([1, 4, 16, 64, 256, 1024]), block=st.sampled_from([(32, 4, 2), (256, 1, 1), (8, 8, 4),
                                                                                  (64, 2, 2), (1, 64, 4)]),
       kernel=st.sampled_from(["star3d-r1", "star3d-r4", "copy"]),
       domain=st.sampled_from([(128, 128, 64), (512, 256, 64), (1024, 64, 32)]))
def test_any_memory_side_cache_takes_the_l2_misses_and_lets_through_no_more(msc_MiB, block, kernel, domain):
    """Whatever its size: the MSC traffic is the DRAM traffic of the device without it, the DRAM moves at most
    that, and a larger MSC never lets more through."""
    small = H100.with_overrides(msc_size=f"{msc_MiB}MiB", msc_bw="10TB/s")
    large = H100.with_overrides(msc_size=f"{4 * msc_MiB}MiB", msc_bw="10TB/s")
    plain = warpspeed.estimate(kernel, H100, block, domain=domain, model="roofline").volumes_B_per_lup
    v = warpspeed.estimate(kernel, small, block, domain=domain, model="roofline").volumes_B_per_lup
    w = warpspeed.estimate(kernel, large, block, domain=domain, model="roofline").volumes_B_per_lup
    assert (v["msc_load"], v["msc_store"]) == (plain["dram_load"], plain["dram_store"])
    assert {k: v[k] for k in plain} == {**plain, "dram_load": v["dram_load"], "dram_store": v["dram_store"]}
    assert v["dram_load"] <= v["msc_load"] * (1 + 1e-12) and v["dram_store"] <= v["msc_store"] * (1 + 1e-12)
    assert w["dram_load"] <= v["dram_load"] * (1 + 1e-12) and w["dram_store"] <= v["dram_store"] * (1 + 1e-12)
