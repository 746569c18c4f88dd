"""Automatic block-size selection for a pystencils stencil, without a GPU.

A 3D 7-point Jacobi sweep written in pystencils; warpspeed ranks the block shapes and
``warpspeed_pystencils.create_kernel`` returns the pystencils GPU kernel with the winner as its default
block size. Run: python examples/pystencils_block_size.py [--fast]
"""

import sys

import pystencils as ps
import warpspeed_pystencils as wp

from warpspeed.interface.report import ranking_headline, ranking_table


def main(fast: bool = False) -> None:
    n = 64 if fast else 512
    src, dst = ps.fields("src, dst: double[3D]", layout="fzyx")
    update = ps.Assignment(dst.center, (src[1, 0, 0] + src[-1, 0, 0] + src[0, 1, 0] + src[0, -1, 0]
                                        + src[0, 0, 1] + src[0, 0, -1]) / 6)
    shape = (n + 2, n + 2, n + 2)  # allocated arrays with one ghost layer
    threads = (256,) if fast else (256, 512, 1024)
    ranking = wp.rank_block_sizes([update], shape, device="A100-SXM4-40GB", threads=threads, registers=32)
    print(ranking_headline(ranking))
    print()
    print(ranking_table(ranking, top=5))
    kernel = wp.create_kernel([update], shape=shape, device="A100-SXM4-40GB", threads=threads, registers=32)
    chosen = kernel.metadata["warpspeed"]
    print(f"\npystencils kernel '{kernel.name}' now launches with block {tuple(chosen['block'])}: "
          f"{chosen['performance_GLup_s']:.1f} GLup/s predicted, {chosen['limiter']}-bound")


if __name__ == "__main__":
    main(fast="--fast" in sys.argv)
