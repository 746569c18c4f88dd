"""Create an lbmpy D3Q19 SRT kernel whose pystencils launch block size warpspeed chose.

Run: python examples/lbmpy_d3q19_create_kernel.py [--fast]
"""

import sys

import warpspeed_pystencils as wp


def main(fast: bool = False) -> None:
    n = 64 if fast else 256
    rule = wp.lbm_d3q19_srt()
    blocks = [(128, 1, 1), (64, 2, 2), (32, 4, 4), (2, 16, 16)] if fast else None
    kernel = wp.create_kernel(rule, shape=(n + 2, n + 2, n + 2), device="H100-SXM5-80GB", threads=(256, 512),
                              blocks=blocks)
    meta = kernel.metadata["warpspeed"]
    summary = meta["ranking"]
    print(f"lbmpy kernel '{kernel.name}' on H100-SXM5-80GB: block {tuple(meta['block'])}, "
          f"{meta['performance_GLup_s']:.2f} GLup/s predicted, {meta['limiter']}-bound")
    v = meta["volumes_B_per_lup"]
    print(f"  DRAM {v['dram_load']:.0f} + {v['dram_store']:.0f} B/lup (19 PDFs x 8 B each way = 152 + 152), "
          f"registers {meta['registers']} ({meta['registers_source']})")
    print(f"  ranking summary: {summary}")


if __name__ == "__main__":
    main(fast="--fast" in sys.argv)
