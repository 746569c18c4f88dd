"""Progress bars for long work (sweeps, validation, calibration), shown only on a terminal.

Long verbs take a ``progress(done, total)`` callback; :func:`progress_bar` makes one that draws a tqdm bar
on stderr when stderr is a terminal, and returns None otherwise (piped output, files, tests), so nothing
extra reaches a log. :func:`scaled` turns the progress of one of several equal steps (the devices of a
projection, the values of a what-if sweep) into the progress of the whole.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

Progress = Callable[[int, int], None]


class Bar:
    """A ``progress(done, total)`` callback drawing a tqdm bar; :meth:`close` ends its line."""

    def __init__(self, label: str, unit: str, stream: TextIO):
        from tqdm import tqdm

        self._bar = tqdm(total=0, desc=label, unit=f" {unit}", file=stream, leave=False, dynamic_ncols=True)

    def __call__(self, done: int, total: int) -> None:
        if self._bar.total != total:
            self._bar.reset(total=total)
        self._bar.n = min(done, total)
        self._bar.refresh()

    def close(self) -> None:
        self._bar.close()

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class _Silent:
    """The no-op stand-in of :class:`Bar` (``with progress_bar(...) as bar`` works either way)."""

    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc) -> None:
        return None


def progress_bar(label: str, unit: str = "configurations", *, stream: TextIO | None = None,
                 enabled: bool | None = None) -> Bar | _Silent:
    """A context manager giving a :class:`Bar` (``enabled``: default, whether ``stream`` (stderr) is a
    terminal), or None inside the ``with`` when disabled."""
    stream = sys.stderr if stream is None else stream
    if enabled is None:
        enabled = bool(getattr(stream, "isatty", lambda: False)())
    return Bar(label, unit, stream) if enabled else _Silent()


def scaled(progress: Progress | None, step: int, steps: int) -> Progress | None:
    """Progress of step ``step`` (0-based) of ``steps`` equal steps as progress of the whole."""
    if progress is None:
        return None

    def report(done: int, total: int) -> None:
        progress(step * total + done, steps * total)

    return report
