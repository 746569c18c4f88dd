"""Writes the shipped JSON Schemas from their sources, so that each definition is written once.

    python -m warpspeed.schemas.build          # rewrite warpspeed/schemas/<name>.schema.json
    python -m warpspeed.schemas.build --check  # exit 1 naming the files that differ from what it would write

``source/definitions.json`` holds the definitions several documents share (the estimate and its parts, the
ranking confidence); ``source/<name>.json`` holds one document: its title, its top level and its own
``$defs``. A document gets every shared definition it uses (a ``$ref`` to ``#/$defs/<def>``, followed through
the definitions it pulls in), after its own, in ``definitions.json``'s order; ``{"$include": "<def>"}``
anywhere in a source is replaced by that shared definition itself (for one used inline, or placed among the
document's own ``$defs``). The written files stay self-contained, for readers that know no ``$include``.

The sources live in the repository only (they are not package data): edit them, run the builder, commit
both. tests/test_schemas.py fails, naming the file, when a committed schema differs from what this writes.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from . import NAMES

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "source"
REF_PREFIX = "#/$defs/"


def _read(path: Path) -> dict:
    if not path.is_file():
        raise FileNotFoundError(f"{path} is missing: the schema sources ship with the repository, not the "
                                "installed package; run the builder in a checkout of warpspeed.")
    return json.loads(path.read_text(encoding="utf-8"))


def _include(node: Any, shared: dict[str, Any]) -> Any:
    """``node`` with every ``{"$include": name}`` replaced by the shared definition ``name``."""
    if isinstance(node, dict):
        if set(node) == {"$include"}:
            name = node["$include"]
            if name not in shared:
                raise KeyError(f"$include of unknown definition {name!r}; definitions.json has "
                               f"{', '.join(shared)}")
            return _include(shared[name], shared)
        return {k: _include(v, shared) for k, v in node.items()}
    if isinstance(node, list):
        return [_include(v, shared) for v in node]
    return node


def _refs(node: Any) -> set[str]:
    """The definition names that ``node`` refers to with ``{"$ref": "#/$defs/<name>"}``."""
    if isinstance(node, dict):
        found = {node["$ref"].removeprefix(REF_PREFIX)} if str(node.get("$ref", "")).startswith(REF_PREFIX) else set()
        return found.union(*(_refs(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node))
    return set()


def schema(name: str) -> dict:
    """The JSON Schema ``name`` (one of ``NAMES``) built from its source and the shared definitions."""
    if name not in NAMES:
        raise ValueError(f"unknown schema {name!r}; the shipped schemas are {', '.join(NAMES)}.")
    shared = _read(SOURCE / "definitions.json")["$defs"]
    doc = _include(_read(SOURCE / f"{name}.json"), shared)
    defs = doc.pop("$defs", {})
    used, todo = set(defs), _refs(doc) | _refs(defs)
    while todo - used:
        new = todo - used
        unknown = new - set(shared)
        if unknown:
            raise KeyError(f"{name}: $ref to undefined {', '.join(sorted(unknown))}")
        used |= new
        todo |= _refs([shared[n] for n in new])
    defs.update({n: shared[n] for n in shared if n in used and n not in defs})
    return {**doc, "$defs": defs}


def text(name: str) -> str:
    """The file text of schema ``name``, as committed: two-space JSON and a final newline."""
    return json.dumps(schema(name), indent=2, ensure_ascii=False) + "\n"


def stale() -> list[str]:
    """The schema files whose committed text differs from what the builder writes."""
    return [f"{n}.schema.json" for n in NAMES
            if not (HERE / f"{n}.schema.json").is_file()
            or (HERE / f"{n}.schema.json").read_text(encoding="utf-8") != text(n)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m warpspeed.schemas.build", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if a file is out of date")
    args = parser.parse_args(argv)
    if args.check:
        out = stale()
        for f in out:
            print(f"{f} differs from its source (run python -m warpspeed.schemas.build)", file=sys.stderr)
        return 1 if out else 0
    for n in NAMES:
        (HERE / f"{n}.schema.json").write_text(text(n), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
