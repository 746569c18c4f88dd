"""Create an lbmpy D3Q19 SRT kernel whose pystencils launch block size warpspeed chose.

Run: python examples/lbmpy_d3q19_create_kernel.py [--fast]
"""

import sys

import warpspeed_pystencils as wp


def main(fast: bool = False) -> None:
    n = 64 if fast else 256
    rule = wp.lbm_d3q19_srt()  # lbmpy's fzyx fields: x contiguous, the 19 populations the slowest index
    blocks = [(128, 1, 1), (64, 2, 2), (32, 4, 4), (2, 16, 16)] if fast else None
    kernel = wp.create_kernel(rule, shape=(n + 2, n + 2, n + 2), device="H100-SXM5-80GB", threads=(256, 512),
                              blocks=blocks)
    choice = wp.choice_of(kernel)
    print(choice)
    meta = kernel.metadata["warpspeed"]
    v = meta["volumes_B_per_lup"]
    print(f"\nlbmpy kernel '{kernel.name}': DRAM {v['dram_load']:.0f} + {v['dram_store']:.0f} B/lup (19 PDFs x 8 B "
          f"each way = 152 + 152), registers {meta['registers']} ({meta['registers_source']})")
    if choice.speedup_vs_default is not None:
        print(f"block {choice.block} over pystencils' {choice.default_block}: {choice.speedup_vs_default:.2f}x "
              f"predicted ({choice.confidence})")


if __name__ == "__main__":
    main(fast="--fast" in sys.argv)
