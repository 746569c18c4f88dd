"""Rank 512-thread block shapes for the paper's conservative Allen-Cahn interface-tracking LBM kernel.

The kernel (D3Q15 MRT + phase-field stencil, from lbmpy) is generated and described by the pystencils
plugin; the paper's finding is that short-x blocks are the worst and the rest is DRAM bound.
Run: python examples/lbm_allen_cahn_ranking.py [--fast]
"""

import sys

import warpspeed_pystencils as wp

import warpspeed


def main(fast: bool = False) -> None:
    kernel = warpspeed.find_kernel("d3q15-allen-cahn", domain=(128, 128, 128) if fast else (256, 256, 256))
    blocks = [(512, 1, 1), (64, 8, 1), (32, 4, 4), (8, 8, 8), (1, 512, 1)] if fast else None
    ranking = warpspeed.rank(kernel, "A100-SXM4-40GB", threads=(512,), blocks=blocks, jobs=1 if fast else None)
    print(f"{kernel.name}: {sum(len(f.loads) for f in kernel.fields)} loads, "
          f"{sum(len(f.stores) for f in kernel.fields)} stores, {kernel.registers} registers")
    choice = wp.choice_of(ranking, kernel)  # the ranking in words, as `warpspeed rank` prints it
    print(choice.headline)
    print()
    print(choice.table)


if __name__ == "__main__":
    main(fast="--fast" in sys.argv)
