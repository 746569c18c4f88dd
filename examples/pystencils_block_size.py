"""Automatic block-size selection for a pystencils stencil, without a GPU.

A 3D 7-point Jacobi sweep written in pystencils, its fields declared as ``ps.fields`` declares them by
default (numpy's C order: the last coordinate is contiguous, and pystencils puts ``threadIdx.x`` on it).
``warpspeed_pystencils.create_kernel`` ranks the block shapes for arrays in that layout and returns the
pystencils GPU kernel with the winner as its default block size; ``choice_of`` tells why.
Run: python examples/pystencils_block_size.py [--fast]
"""

import sys

import pystencils as ps
import warpspeed_pystencils as wp


def main(fast: bool = False) -> None:
    n = 64 if fast else 512
    src, dst = ps.fields("src, dst: double[3D]")  # C order; layout="fzyx" would make x contiguous instead
    update = ps.Assignment(dst.center, (src[1, 0, 0] + src[-1, 0, 0] + src[0, 1, 0] + src[0, -1, 0]
                                        + src[0, 0, 1] + src[0, 0, -1]) / 6)
    shape = (n + 2, n + 2, n + 2)  # allocated arrays with one ghost layer, the contiguous extent first
    threads = 256 if fast else (256, 512, 1024)
    kernel = wp.create_kernel([update], shape=shape, device="A100-SXM4-40GB", threads=threads, registers=32)
    print(wp.choice_of(kernel))  # the block against pystencils' default, the ranking and its confidence
    chosen = kernel.metadata["warpspeed"]
    print(f"\npystencils kernel '{kernel.name}' now launches with block {tuple(chosen['block'])}: "
          f"{chosen['performance_GLup_s']:.1f} GLup/s predicted, {chosen['limiter']}-bound")


if __name__ == "__main__":
    main(fast="--fast" in sys.argv)
