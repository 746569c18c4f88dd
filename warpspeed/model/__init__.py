"""The estimator: from a kernel's address expressions and a device to volumes, limits and GLup/s.

The stages in the order one estimate runs them (docs/model.md describes each):

- ``launch``: grid, blocks per SM, the wave of blocks that runs at once; ``cells``: the cells of blocks;
- ``footprint``: each thread's memory instructions, the warps' address patterns, the blocks' sector counts;
- ``l1``: L1 wavefronts (cycles per warp-lup); ``l2``: the L2 -> L1 loads and L1 -> L2 stores of a block;
- ``capacity``: what an oversubscribed cache keeps, by the device's hit-rate curves (the capacity misses);
- ``dram``: the wave's DRAM volumes with the L2 layer conditions and partial stores; ``tlb``: pages per lup;
- ``counters`` with ``range_volumes``, ``isl_volumes`` and ``enumerated_volumes`` (with ``cell_rows``): the
  footprint counters behind the block and wave counts (one interface, exact twins of each other);
- ``levels``: the memory hierarchy as data; ``roofline``: the limits; ``performance``: the model seam, with
  ``latency`` (the default model); ``patterns``: access patterns outside the validated ones;
- ``estimate``: runs the stages for one configuration; ``results``: the ``Estimate`` it returns and its JSON;
  ``analysis``: what estimates of one kernel share (the kept counts); ``notes``: the notes' words; ``inputs``:
  the model takes a Kernel and a Device, never their names (warpspeed.application resolves them).

Nothing here imports the studies built on estimates (ranking, what-if, projection), the measurement side, the
application layer or the front ends, and its words name no command-line option (tests/test_architecture.py and
tests/interface/test_advice.py keep it so).
"""
