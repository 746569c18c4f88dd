"""JSON Schemas (draft 2020-12) of warpspeed's JSON outputs, shipped with the package.

    import jsonschema
    from warpspeed import schemas

    jsonschema.validate(document, schemas.load("estimate"))  # `warpspeed estimate --format json`
    jsonschema.validate(document, schemas.load("rank"))      # `warpspeed rank --format json`
    jsonschema.validate(document, schemas.load("compare"))   # `warpspeed compare --format json`
    jsonschema.validate(document, schemas.load("device_ranking"))  # `warpspeed devices rank --format json`

Each schema file is self-contained (``schemas.path(name)`` is the file, for other tools). docs/outputs.md
describes every key with its unit and meaning. The files are generated from ``source/`` in the repository,
where each definition is written once (:mod:`warpspeed.schemas.build`).

``SCHEMA_VERSION`` is the ``schema_version`` that the object-shaped JSON documents of the CLI carry
(estimate, rank, compare, whatif, project, calibrate). It changes only when an existing key is renamed, removed or
changes its meaning; new keys are added without a change (so readers should ignore keys they do not know).
"""

from __future__ import annotations

import json
from importlib import resources
from importlib.resources.abc import Traversable

__all__ = ["NAMES", "SCHEMA_VERSION", "load", "path"]

SCHEMA_VERSION = 1
"""Layout version of warpspeed's JSON outputs (the ``schema_version`` key)."""

NAMES = ("estimate", "rank", "compare", "device_ranking")
"""The shipped schemas: ``<name>.schema.json`` in this package."""


def path(name: str) -> Traversable:
    """The schema file of ``name`` (one of :data:`NAMES`) inside the installed package."""
    if name not in NAMES:
        raise ValueError(f"unknown schema {name!r}; the shipped schemas are {', '.join(NAMES)}.")
    return resources.files(__name__).joinpath(f"{name}.schema.json")


def load(name: str) -> dict:
    """The JSON Schema of ``name`` (one of :data:`NAMES`) as a new dict."""
    return json.loads(path(name).read_text(encoding="utf-8"))
