"""The package's import graph: the device data know nothing of the model that uses them, and no modules import
each other in a circle.

Every import counts, also those inside functions (an import moved into a function to break a circle is still
a tie between the two modules). The graph has one node per module of warpspeed/ (a package is its
``__init__``) and an edge for each import of another package module.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "warpspeed"

KNOWN_CYCLES: list[frozenset[str]] = []
"""The circles the package still has (module names below ``warpspeed``): none. This list may only shrink: a
new circle fails the test, and so does an entry that is no longer a circle (remove it)."""


def module_name(path: Path, root: Path = PACKAGE) -> str:
    """``model/capacity.py`` -> ``"model.capacity"``; a package's ``__init__.py`` is the package itself."""
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph(root: Path = PACKAGE) -> dict[str, set[str]]:
    """Module -> the package modules it imports (names below the package ``root``, which is ``warpspeed``).

    ``from .x import y`` is an edge to ``x.y`` where that is a module, else to ``x``; ``import warpspeed.x.y``
    and ``from warpspeed.x import y`` likewise. Imports of other packages are left out."""
    top = root.name
    paths = {module_name(p, root): p for p in sorted(root.rglob("*.py"))}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package = [top, *name.split(".")] if path.name == "__init__.py" else [top, *name.split(".")[:-1]]
        package = [p for p in package if p]
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = package[:len(package) - node.level + 1] if node.level else []
                module = base + (node.module.split(".") if node.module else [])
                if module[:1] != [top]:
                    continue
                dotted = ".".join(module[1:])
                for alias in node.names:
                    sub = f"{dotted}.{alias.name}".lstrip(".")
                    targets.add(sub if sub in paths else dotted)
            elif isinstance(node, ast.Import):
                targets.update(".".join(a.name.split(".")[1:]) for a in node.names if a.name.split(".")[0] == top)
        graph[name] = {t for t in targets if t in paths and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module: each is a set of modules that import each
    other in a circle (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


GRAPH = import_graph()


def test_the_graph_sees_relative_absolute_function_level_and_submodule_imports(tmp_path):
    root = tmp_path / "pkg"
    (root / "a").mkdir(parents=True)
    (root / "__init__.py").write_text("from .a import b\n")
    (root / "a" / "__init__.py").write_text("from . import c\n")
    (root / "a" / "b.py").write_text("import os\n\ndef f():\n    from ..d import thing\n")
    (root / "a" / "c.py").write_text("from pkg.a.b import f\n")
    (root / "d.py").write_text("import pkg.a.c\nfrom .a import missing\n")
    assert import_graph(root) == {"": {"a.b"}, "a": {"a.c"}, "a.b": {"d"}, "a.c": {"a.b"}, "d": {"a.c", "a"}}


@pytest.mark.parametrize("graph, expected", [
    ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [{"a", "b", "c"}]),
    ({"a": {"b"}, "b": set(), "c": {"d"}, "d": {"c", "e"}, "e": {"c"}}, [{"c", "d", "e"}]),
    ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
    ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}, [{"a", "b"}, {"c", "d"}]),
])
def test_the_cycle_check_finds_circles_of_any_length(graph, expected):
    assert sorted(map(sorted, cycles(graph))) == sorted(map(sorted, expected))


def test_the_graph_covers_the_package():
    assert {"device.hitrates", "device.description", "device.shipped", "model.capacity", "studies.ranking",
            "expressions.tree"} <= set(GRAPH)
    assert "device.hitrates" in GRAPH["model.capacity"]
    assert GRAPH["device.builtin"] >= {"device.files", "device.shipped", "device.description"}


DEVICE = sorted(name for name in GRAPH if name == "device" or name.startswith("device."))


@pytest.mark.parametrize("name", DEVICE)
def test_no_device_module_imports_the_model(name):
    """The device data (hit-rate curves included) are below the model: device/ imports nothing of
    warpspeed.model, directly or through another module."""
    seen, todo = set(), [name]
    while todo:
        for target in GRAPH[todo.pop()] - seen:
            seen.add(target)
            todo.append(target)
    wrong = sorted(m for m in seen if m == "model" or m.startswith("model."))
    assert not wrong, f"warpspeed.{name} imports {wrong} (directly: {sorted(GRAPH[name])})"


def test_no_new_import_circle():
    """No modules of the package import each other in a circle, beyond the known ones (which may only
    shrink)."""
    new = [sorted(c) for c in cycles(GRAPH) if not any(c <= known for known in KNOWN_CYCLES)]
    assert not new, f"import circles: {new}"


def test_the_known_circles_are_still_circles():
    """A circle that was broken leaves KNOWN_CYCLES, so that it cannot come back unnoticed."""
    found = cycles(GRAPH)
    stale = [sorted(k) for k in KNOWN_CYCLES if not any(k <= c for c in found)]
    assert not stale, f"no longer circles, remove from KNOWN_CYCLES: {stale}"


def test_the_hit_rate_curve_is_the_device_s_and_the_model_applies_it():
    import warpspeed
    from warpspeed.device import HitRateCurve, HitRates, hitrates
    from warpspeed.model.capacity import reuse

    assert HitRateCurve is hitrates.HitRateCurve and HitRates is hitrates.HitRates
    dev = warpspeed.device("H100-SXM5-80GB")
    assert isinstance(dev, warpspeed.Device) and isinstance(dev.hit_rates.l2_z, HitRateCurve)
    curve = HitRateCurve(1.0, 0.5, 1.0, "test")
    r = reuse(10.0, 200.0, 100.0, curve)
    assert r.oversubscription == 2.0 and r.hit_rate == pytest.approx(math.exp(-0.5 * math.exp(2.0)))
    assert r.hit_B_per_lup == pytest.approx(10.0 * r.hit_rate)
