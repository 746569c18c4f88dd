"""Estimate the paper's 3D25pt range-4 stencil on an A100 for a few block shapes, with the reasons.

Run: python examples/estimate_star3d_r4.py [--fast]
"""

import sys

import warpspeed
from warpspeed.render.report import headline


def main(fast: bool = False) -> None:
    kernel = warpspeed.find_kernel("star3d-r4")
    if fast:
        kernel = kernel.with_domain((160, 128, 128))
    print(f"{kernel.name}: {kernel.domain[0]}x{kernel.domain[1]}x{kernel.domain[2]} cells, "
          f"{len(kernel.fields[0].loads)} loads, {kernel.registers} registers\n")
    configs = [((32, 4, 8), (1, 1, 1)), ((32, 4, 8), (1, 1, 2)), ((16, 2, 32), (1, 1, 2)),
               ((256, 4, 1), (1, 1, 1)), ((2, 512, 1), (1, 1, 1))]
    for block, folding in configs:
        e = warpspeed.estimate(kernel, "A100-SXM4-40GB", block, folding)
        v = e.volumes_B_per_lup
        print(headline(e))
        print(f"    DRAM {v['dram_load']:.1f} + {v['dram_store']:.1f} B/lup (compulsory load "
              f"{v['dram_load_compulsory']:.1f}; z-layer reuse {e.layer_z.hit_B_per_lup:.1f} at O="
              f"{e.layer_z.oversubscription:.2f}), L2 {v['l2_load']:.1f} + {v['l2_store']:.1f} B/lup, "
              f"L1 {e.l1_cycles_per_warp_lup:.0f} cycles/warp-lup")


if __name__ == "__main__":
    main(fast="--fast" in sys.argv)
