"""The L1 line rule's price of further load lines that miss the L1 (``l1_wavefronts_per_missed_line``,
warpspeed.model.l1.LineCosts): by hand, against the brute-force twin, and absent = the rule without it."""

import math

import pytest
from bruteforce import brute_force, compare, from_estimate, miss_share_of
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from kernel_strategies import PROFILE, box_kernels
from test_bruteforce import CASES, HOPPER_CASES, fld, kern

import warpspeed
from warpspeed.model.l1 import LineCosts
from warpspeed.model.launch import LaunchError

H100 = warpspeed.device("H100-SXM5-80GB")
PRICE = 0.84


def priced(device=H100, **more):
    return device.with_overrides(l1_wavefronts_per_missed_line=PRICE, **more)


def test_a_line_costs_its_hit_price_its_missed_price_or_between_by_the_miss_share():
    c = LineCosts(bank=10.0, warps=2.0, store_lines=4.0, load_lines=6.0)
    today = 10 + 4 * 2 + 4 / 2 + 6 / 3
    assert c.cycles(H100, 0.9) == pytest.approx(today)  # no price given: hit or miss the same
    d = priced()
    assert c.cycles(d, 0.0) == pytest.approx(today)
    assert c.cycles(d, 1.0) == pytest.approx(today - 6 / 3 + 6 * PRICE)
    assert c.cycles(d, 0.25) == pytest.approx(today - 6 / 3 + 6 * (0.75 / 3 + 0.25 * PRICE))
    assert c.cycles(d, 1.7) == c.cycles(d, 1.0) and c.cycles(d, -0.5) == c.cycles(d, 0.0)  # clipped
    a100 = warpspeed.device("A100-SXM4-40GB")
    assert LineCosts(7.0, 0.0, 0.0, 0.0).cycles(a100, 1.0) == 7.0  # the pairing rule: its bank cost alone


def test_a_misaligned_load_that_misses_by_hand():
    """One warp of 8 B loads, 3 lines (misaligned): 2 bank slots + the third line; nothing is reused in this
    kernel, so every load sector misses (L2 load = L1 load) and the third line costs PRICE instead of 1/3.
    The store (2) and the 4 wavefronts per warp are unchanged."""
    h = priced(sm_count=1)
    k = kern((32, 1, 1), fld("a", (64, 1, 1), loads=[("tidx+1", "tidy", "tidz")]),
             fld("b", (32, 1, 1), stores=[("tidx", "tidy", "tidz")]))
    e = warpspeed.estimate(k, h, (32, 1, 1), model="roofline")
    assert miss_share_of(e) == 1.0
    assert e.l1_cycles_per_warp_lup == pytest.approx(2 + PRICE + 2 + 4)
    plain = warpspeed.estimate(k, H100.with_overrides(sm_count=1), (32, 1, 1), model="roofline")
    assert plain.l1_cycles_per_warp_lup == pytest.approx(2 + 1 / 3 + 2 + 4)


@pytest.mark.parametrize("case_id", HOPPER_CASES)
def test_priced_line_rule_matches_brute_force(case_id):
    _, make, block, folding, sm = next(c for c in CASES if c[0] == case_id)
    k, d = make(), priced(sm_count=sm)
    e = warpspeed.estimate(k, d, block, folding)
    bad = compare(brute_force(k, d, block, folding, miss_share=miss_share_of(e)), from_estimate(e))
    assert not bad, f"{case_id}: (brute force, estimate) differ: {bad}"


def test_the_brute_force_needs_the_miss_share_where_lines_are_priced():
    _, make, block, folding, sm = next(c for c in CASES if c[0] == "star3d-r1")
    with pytest.raises(ValueError, match="miss_share"):
        brute_force(make(), priced(sm_count=sm), block, folding)


@settings(PROFILE, max_examples=40)
@given(spec=box_kernels(), bx=st.sampled_from([1, 2, 4, 32]), by=st.sampled_from([1, 2, 8]),
       sm_count=st.integers(1, 2))
def test_box_stencils_with_priced_missed_lines_match_brute_force(spec, bx, by, sm_count):
    """Diagonal neighbours on narrow blocks (many lines per warp, the lines the price falls on): the further
    load lines, their price at the estimate's miss share and the rest of the rule are what the brute force
    counts."""
    kernel = warpspeed.kernel_from_dict(spec)
    d = priced(sm_count=sm_count)
    try:
        e = warpspeed.estimate(kernel, d, (bx, by, 1))
    except LaunchError:
        assume(False)  # e.g. a block larger than the device allows: nothing to compare
    bf = brute_force(kernel, d, (bx, by, 1), miss_share=miss_share_of(e))
    assert math.isclose(bf["l1_cycles_per_warp_lup"], e.l1_cycles_per_warp_lup, rel_tol=1e-12)
