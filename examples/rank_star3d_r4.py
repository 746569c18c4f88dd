"""The paper's 3D25pt range-4 ranking on A100 (Fig. 24 style): 56 block shapes x folding none/2y/2z.

Prints the headline, the top ten and the bottom five configurations with their limiters, and how the
configurations split over the limiters. Run: python examples/rank_star3d_r4.py [--fast]
"""

import sys

import warpspeed
from warpspeed.application.ranking import reference_estimate
from warpspeed.render.report import ranking_headline, ranking_table


def main(fast: bool = False) -> None:
    kernel = warpspeed.find_kernel("star3d-r4")
    space = warpspeed.paper_space()
    if fast:  # a quarter-size domain and every fourth configuration
        kernel = kernel.with_domain((160, 128, 128))
        space = space[::4]
    ranking = warpspeed.rank(kernel, "A100-SXM4-40GB", configs=space, jobs=1 if fast else None)
    print(ranking_headline(ranking, reference_estimate(ranking, kernel, "A100-SXM4-40GB")))
    print()
    print(ranking_table(ranking, top=10))
    print("\nworst five:")
    for r in ranking.results[-5:]:
        c = r.configuration
        print(f"  block {c.block} folding {c.folding}: {r.performance_GLup_s:.1f} GLup/s, {r.limiter}-bound")


if __name__ == "__main__":
    main(fast="--fast" in sys.argv)
