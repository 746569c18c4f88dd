"""Shared pieces of the device package: schema constants, the read-only map, the file error."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import TypeVar

from ..errors import InputError

SCHEMA_VERSION = 1
PROVENANCE = ("spec", "measured", "derived", "assumed", "model", "override")
HIT_RATE_FILE = "hit_rates.toml"
LATENCY_FILE = "latency.toml"
NOT_DEVICE_FILES = (HIT_RATE_FILE, LATENCY_FILE, "families.toml", "links.toml",  # data files beside the device files
                    "compute_capabilities.toml")
IDENTITY_KEYS = ("id", "name", "vendor", "architecture", "compute_capability")
V = TypeVar("V")


class FrozenMap(Mapping[str, V]):
    """A read-only, hashable, picklable mapping from str (the ``sources`` of a device, str -> str; a
    result's numbers, str -> float)."""

    def __init__(self, data: Mapping[str, V] | Iterable[tuple[str, V]] = ()) -> None:
        self._data = dict(data)

    def __getitem__(self, key: str) -> V:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        return hash(frozenset(self._data.items()))

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"


def suggest(word: str, choices: Iterable[str]) -> str:
    close = difflib.get_close_matches(word, list(choices), n=3, cutoff=0.6)
    return f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


class DeviceFileError(InputError):
    """An :class:`InputError` that lists every problem of one device file (or one set of overrides).

    ``where`` names the file (``"device file x.toml"``) or the changed device; ``problems`` holds one
    sentence per problem, each naming the key at fault and what would be valid. ``str()`` is the whole
    message: ``"<where>: <problem>"`` for one problem, else ``"<where>: N problems:"`` and one
    ``"  - <problem>"`` line each.
    """

    def __init__(self, where: str, problems: Sequence[str]) -> None:
        self.where = where
        self.problems = tuple(p if p.endswith((".", "?", "!")) else p + "." for p in problems)
        if len(self.problems) == 1:
            text = f"{where}: {self.problems[0]}"
        else:
            text = f"{where}: {len(self.problems)} problems:" + "".join(f"\n  - {p}" for p in self.problems)
        super().__init__(text)

    def __reduce__(self):  # picklable (worker processes hand errors back)
        return (type(self), (self.where, self.problems))
