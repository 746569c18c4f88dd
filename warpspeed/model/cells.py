"""Cell sets of thread sets: the valid cells of a range of linear block ids, as a few boxes.

The DRAM stage counts the granules that sets of cells touch: the wave, its y- and z-layer thread sets
and the ranges between them. Each is a contiguous range of linear block ids, which is at most five boxes
of blocks (``launch.id_range_boxes``), clipped to the domain (the ``if (tid >= N) return`` guard).
:class:`CellSet` keeps those boxes as integers, so that the counters that list cells or rows read them
directly, and builds the ISL set that the ISL counter needs only when asked for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .launch import Launch, id_range_boxes
from .lazy_isl import isl

Box = tuple[tuple[int, int, int], tuple[int, int, int]]  # first and last cell (inclusive)


@dataclass(frozen=True)
class CellSet:
    """A union of boxes of cells (``boxes``, may overlap) and of single cells (``points``: (3, n)).

    Sets built from launches are boxes only; ``points`` hold the pieces of an ISL set given by a caller
    that are not boxes."""

    boxes: tuple[Box, ...]
    points: tuple[np.ndarray, ...] = ()

    @cached_property
    def isl(self) -> isl.Set:
        """The same cells as an ISL set ``{ [x, y, z] : ... }``."""
        parts = ["(" + " and ".join(f"{a} <= {v} <= {b}" for v, a, b in zip("xyz", lo, hi, strict=True)) + ")"
                 for lo, hi in self.boxes]
        for p in self.points:
            parts += [f"(x = {x} and y = {y} and z = {z})" for x, y, z in p.T.tolist()]
        if not parts:
            return isl.Set("{ [x, y, z] : 1 = 0 }")
        return isl.Set("{ [x, y, z] : " + " or ".join(parts) + " }")

    @cached_property
    def coordinates(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """x, y and z of every cell, listed once when first asked (a cell in two pieces is listed twice)."""
        parts = list(self.points)
        for lo, hi in self.boxes:
            grids = np.meshgrid(*(np.arange(a, b + 1, dtype=np.int64) for a, b in zip(lo, hi, strict=True)),
                                indexing="ij")
            parts.append(np.stack([g.ravel() for g in grids]))
        if not parts:
            return tuple(np.empty(0, dtype=np.int64) for _ in range(3))  # type: ignore[return-value]
        x, y, z = np.concatenate(parts, axis=1)
        return x, y, z

    def below_y(self, limit: int) -> CellSet:
        """The cells with y < ``limit``."""
        boxes = tuple((lo, (hi[0], min(hi[1], limit - 1), hi[2])) for lo, hi in self.boxes if lo[1] < limit)
        return CellSet(boxes, tuple(p[:, p[1] < limit] for p in self.points))


def cell_set(launch: Launch, start: int, stop: int) -> CellSet:
    """Valid cells of the blocks with linear ids [start, stop), as a union of boxes."""
    if launch.linear:
        return _linear_cell_set(launch, start, stop)
    bf = launch.cells_per_block
    boxes = []
    for lo, hi in id_range_boxes(start, stop, launch.grid):
        first = tuple(a * s for a, s in zip(lo, bf, strict=True))
        last = tuple(min(b * s, n) - 1 for b, s, n in zip(hi, bf, launch.domain, strict=True))
        if all(a <= b for a, b in zip(first, last, strict=True)):
            boxes.append((first, last))
    return CellSet(tuple(boxes))  # type: ignore[arg-type]


def _linear_cell_set(launch: Launch, start: int, stop: int) -> CellSet:
    """:func:`cell_set` of a linear launch: its blocks' threads take the cells [start N, stop N) of the
    linearised domain in turn."""
    n = launch.threads_per_block
    a, b = min(start * n, launch.cells), min(stop * n, launch.cells)
    boxes = tuple((lo, (hi[0] - 1, hi[1] - 1, hi[2] - 1)) for lo, hi in id_range_boxes(a, b, launch.domain))
    return CellSet(boxes)


def linear_layers(launch: Launch) -> tuple[tuple[int, int], tuple[int, int], int, int]:
    """The layer thread sets of a ``linear1d`` launch's wave (as :func:`warpspeed.model.dram.layer_ranges` gives
    them for blocks of cells): the block ranges [a, b) of the y and z layers (the blocks that hold the cells one
    row, one plane before the wave's cells), the y below which a y-layer cell counts (the y layer's cells in a
    plane's last row of blocks are no row's predecessors), and the blocks of one plane of cells.

    Where the blocks tile the domain as boxes (N dividing nx, or N a multiple of nx dividing a plane, or of a
    plane), these are the ranges of the linear3d launch of those boxes."""
    n, (nx, ny, nz) = launch.threads_per_block, launch.domain
    s, e = launch.wave_start, launch.wave_start + launch.wave_blocks
    rows = n // nx if n % nx == 0 else 1  # the rows of cells one block holds, where it holds whole rows

    def before(cells: int, exists: bool) -> tuple[int, int]:
        if not exists:
            return 0, 0
        return max(0, (s * n - cells) // n), min(s, -(-(e * n - cells) // n))

    ya, yb = before(nx, ny > 1 and n < nx * ny)
    if ya < yb and (ya * n // nx) % ny >= ny - rows:  # starts in a plane's last row of blocks: from the next plane
        ya = min(yb, -(-(ya * n // (nx * ny) + 1) * nx * ny // n))
    za, zb = before(nx * ny, nz > 1 and n < nx * ny * nz)
    plane = -(-(nx * ny) // n)
    grid = launch.grid[0]
    if launch.grid_strided and launch.iterations > 1 and grid > launch.wave_blocks:
        # more blocks than are resident: they run all their iterations before the next ones start, so of the
        # cells before the wave's only those of its own blocks' previous iteration ran recently; that iteration
        # is what was allocated since
        first, last = s - grid, s - grid + launch.wave_blocks
        (ya, yb), (za, zb) = ((max(a, first), min(b, last)) for a, b in ((ya, yb), (za, zb)))
        plane = launch.wave_blocks
    return (ya, yb), (za, zb), ny - rows, plane


def as_cell_set(cells: CellSet | isl.Set) -> CellSet:
    """``cells`` as a :class:`CellSet`: an ISL set is split into its pieces, boxes read from their bounds
    and any other piece listed point by point (slow, but exact)."""
    if isinstance(cells, CellSet):
        return cells
    boxes, points = [], []
    for bs in cells.get_basic_sets():
        piece = isl.Set.from_basic_set(bs)
        lo = tuple(piece.dim_min_val(d).to_python() for d in range(3))
        hi = tuple(piece.dim_max_val(d).to_python() for d in range(3))
        if piece.count_val().to_python() == int(np.prod([h - a + 1 for a, h in zip(lo, hi, strict=True)])):
            boxes.append((lo, hi))
        else:
            found: list[isl.Point] = []
            piece.foreach_point(found.append)
            coords = [[p.get_coordinate_val(isl.dim_type.set, d).to_python() for d in range(3)] for p in found]
            points.append(np.array(coords, dtype=np.int64).reshape(-1, 3).T)
    return CellSet(tuple(boxes), tuple(points))


def as_isl(cells: CellSet | isl.Set) -> isl.Set:
    """``cells`` as an ISL set."""
    return cells.isl if isinstance(cells, CellSet) else cells


__all__ = ["Box", "CellSet", "as_cell_set", "as_isl", "cell_set", "linear_layers"]
