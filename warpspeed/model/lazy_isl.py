"""``islpy``, imported when first used.

Only the ISL counter (``isl_volumes``) and ISL cell sets given by a caller need it; the range and
enumeration counters, which count the stencils and LBM kernels, never do. Importing it costs about 60 ms
(its C library and its version lookup), which a block chosen at launch or a CLI call would otherwise pay.
"""

from __future__ import annotations

import importlib
from typing import Any


class _Islpy:
    """Stands for the ``islpy`` module: the first attribute asked for imports it; each name looked up is kept
    (the next use finds it without this call)."""

    def __getattr__(self, name: str) -> Any:
        value = getattr(importlib.import_module("islpy"), name)
        setattr(self, name, value)
        return value


isl: Any = _Islpy()

__all__ = ["isl"]
