"""The warp patterns' L1 costs kept across configurations (l1.line_costs' ``known``, kept per L1 in the kernel's
analysis): the costs of a launch with patterns met before equal those counted afresh."""

import math

from hypothesis import assume, given
from hypothesis import strategies as st
from kernel_strategies import PROFILE, population_kernels, stencil_kernels

import warpspeed
from warpspeed.model.footprint import affine_warp_patterns, block_addresses, block_classes, folded_instructions
from warpspeed.model.l1 import busy_warps, line_costs
from warpspeed.model.launch import LaunchError, make_launch

DEVICES = [warpspeed.device(name) for name in ("H100-SXM5-80GB", "A100-SXM4-40GB")]  # line rule, pairing rule
BLOCKS = [(32, 2, 1), (8, 4, 2), (4, 4, 4), (64, 1, 1), (1, 8, 4), (16, 2, 2), (32, 4, 1)]


@PROFILE
@given(spec=st.one_of(population_kernels(aos=True), stencil_kernels(max_domain=(40, 16, 8))),
       blocks=st.lists(st.sampled_from(BLOCKS), min_size=1, max_size=4), device=st.sampled_from(DEVICES))
def test_kept_pattern_costs_equal_the_counted_ones(spec, blocks, device):
    """Several blocks in turn with one kept dictionary (a ranking), then again (every pattern kept): the same
    LineCosts as without it, on a line-rule and a pairing-rule L1."""
    k = warpspeed.kernel_from_dict(spec)
    instrs = folded_instructions(k, (1, 1, 1))
    modulus = math.lcm(device.l1_line_bytes, device.l1_banks * device.l1_bank_bytes, device.l1_sector_bytes,
                       device.l2_sector_bytes)
    known: dict = {}
    launches = []
    for block in blocks:
        try:
            launches.append(make_launch(k, device, block, registers=32))
        except LaunchError:
            continue
    assume(launches)
    for launch in launches * 2:
        classes = block_classes(k, launch, instrs, modulus)
        active = block_addresses(launch, instrs, classes.coords, addresses=False).active
        patterns = affine_warp_patterns(launch, instrs, classes.coords, active, device.warp_size, modulus)
        assert patterns is not None
        args = (busy_warps(active, device.warp_size), patterns, instrs, classes.weights, device, 1000)
        assert line_costs(*args, known) == line_costs(*args)
    assert known
