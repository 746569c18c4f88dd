"""A memo kept under a size budget: results that a ranking's configurations ask for again (the same shapes at
the same places) are kept, and all are dropped at once when the next one would exceed the budget. Speed only:
what is dropped is counted again when asked."""

from __future__ import annotations

from collections.abc import Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class BudgetedMemo(Generic[V]):
    """Values by key, their sizes (in the caller's unit: bytes, rows) summing to at most ``budget``; a value
    larger than the budget is still kept, alone."""

    def __init__(self, budget: int):
        self.budget = budget
        self._values: dict[Hashable, V] = {}
        self._size = 0

    def get(self, key: Hashable) -> V | None:
        return self._values.get(key)

    def put(self, key: Hashable, value: V, size: int) -> V:
        """Keep ``value`` (of ``size``), first dropping everything if it would not fit; returns it."""
        if self._size + size > self.budget:
            self._values.clear()
            self._size = 0
        self._values[key] = value
        self._size += size
        return value


__all__ = ["BudgetedMemo"]
