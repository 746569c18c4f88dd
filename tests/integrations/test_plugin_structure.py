"""The pystencils plugin's shape: ``__init__.py`` is its face (imports and the ``PLUGIN`` table, no function or
class of its own), the engine lives in modules that never import the face, no two modules import each other
(directly or round a longer circle, also through imports inside functions), and no module imports a name that
a sibling keeps private (a leading underscore). Read with ``ast``: nothing of the plugin is imported here.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

PLUGIN = Path(__file__).resolve().parents[2] / "plugins" / "warpspeed_pystencils"
PACKAGE = "warpspeed_pystencils"
FACE = "__init__"


def plugin_imports(tree: ast.AST, modules: set[str]) -> list[tuple[int, str, str | None]]:
    """(line, module, name) of every import of the plugin in a module's tree, also inside functions: ``module``
    is the plugin module imported from (``__init__`` for the package itself), ``name`` the name taken from it
    (None where the module itself is imported). ``from . import X`` imports the module X where the plugin has
    one, else the name X of the face."""
    out: list[tuple[int, str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            if node.level == 0 and (node.module or "").split(".")[0] != PACKAGE:
                continue
            if node.level > 1:  # above the plugin: not a plugin module
                continue
            path = (node.module or "").split(".")[1 if node.level == 0 else 0:] if node.module else []
            path = [p for p in path if p]
            if not path:  # from . import X / from warpspeed_pystencils import X
                out += [(node.lineno, a.name, None) if a.name in modules else (node.lineno, FACE, a.name)
                        for a in node.names]
            else:
                out += [(node.lineno, path[0], a.name) for a in node.names]
        elif isinstance(node, ast.Import):
            for a in node.names:
                parts = a.name.split(".")
                if parts[0] == PACKAGE:
                    out.append((node.lineno, parts[1] if len(parts) > 1 else FACE, None))
    return out


def import_graph(sources: dict[str, str]) -> dict[str, list[tuple[int, str, str | None]]]:
    """Each module's plugin imports (see :func:`plugin_imports`), from module name -> source text."""
    modules = set(sources) - {FACE}
    return {m: plugin_imports(ast.parse(text), modules) for m, text in sources.items()}


def circles(graph: dict[str, list[tuple[int, str, str | None]]]) -> list[list[str]]:
    """Every circle of the module graph (one per set of modules, as the path round it), the face left out: it
    imports every engine module and is imported by none (checked apart)."""
    edges = {m: sorted({t for _, t, _ in imports if t != m and t != FACE}) for m, imports in graph.items()
             if m != FACE}
    found: dict[frozenset[str], list[str]] = {}

    def walk(path: list[str]) -> None:
        for nxt in edges.get(path[-1], []):
            if nxt == path[0]:
                found.setdefault(frozenset(path), [*path, nxt])
            elif nxt not in path and nxt > path[0]:  # each circle once: from its smallest module
                walk([*path, nxt])

    for start in sorted(edges):
        walk([start])
    return list(found.values())


def face_imports(graph: dict[str, list[tuple[int, str, str | None]]]) -> list[str]:
    """Where a module of the engine imports the face (a name of ``__init__``, or the package itself)."""
    return [f"{m}.py:{line} imports {name or PACKAGE} from the package __init__" for m, imports in graph.items()
            if m != FACE for line, target, name in imports if target == FACE]


def private_imports(graph: dict[str, list[tuple[int, str, str | None]]]) -> list[str]:
    """Where a module imports a name that another plugin module keeps to itself (``from ._x import _name``)."""
    return [f"{m}.py:{line} imports {target}.{name}" for m, imports in graph.items() for line, target, name in imports
            if name is not None and name.startswith("_") and target != m]


def face_definitions(text: str) -> list[str]:
    """What ``__init__.py`` does besides importing and naming: anything but the docstring, imports and plain
    assignments (``__all__``, ``PLUGIN``), and any function, class or lambda anywhere in it."""
    tree = ast.parse(text)
    out = [f"line {s.lineno}: {type(s).__name__}" for s in tree.body
           if not isinstance(s, ast.Import | ast.ImportFrom | ast.Assign | ast.AugAssign | ast.AnnAssign
                             | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)  # those: below
           and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    out += [f"line {n.lineno}: {type(n).__name__}" for n in ast.walk(tree)
            if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda)]
    return out


def plugin_sources() -> dict[str, str]:
    return {p.stem: p.read_text() for p in sorted(PLUGIN.glob("*.py"))}


def test_the_engine_never_imports_the_face():
    graph = import_graph(plugin_sources())
    assert {"_describe", "_create", "_launch", "_choice", "_rank"} <= set(graph)  # the engine is where it should be
    assert face_imports(graph) == []


def test_no_two_plugin_modules_import_each_other_nor_round_a_circle():
    assert circles(import_graph(plugin_sources())) == []


def test_no_module_imports_a_private_name_of_a_sibling():
    assert private_imports(import_graph(plugin_sources())) == []


def test_the_face_defines_nothing_but_reexports_and_the_plugin_table():
    """Rule: ``__init__.py`` holds no function (not even a thin wrapper), class or other statement than its
    docstring, the imports of the public names from the engine, ``__all__`` and ``PLUGIN``."""
    sources = plugin_sources()
    assert face_definitions(sources[FACE]) == []
    graph = import_graph(sources)
    engine = {target for _, target, _ in graph[FACE]}
    assert FACE not in engine and engine <= set(sources)


def test_the_checks_find_what_they_look_for():
    """The rules above on a made-up plugin that breaks each: a circle of three modules (one import inside a
    function), a module that imports a name of the face, another's private name, and a face with a wrapper."""
    sources = {
        FACE: '"""Face."""\nfrom ._a import f\n\ndef g():\n    from ._b import h\n    return h()\n',
        "_a": "from . import _b\nfrom . import helper\n\ndef f():\n    return _b.h()\n",
        "_b": "def h():\n    from ._c import _secret\n    return _secret\n",
        "_c": "import warpspeed_pystencils._a\nfrom warpspeed_pystencils import PLUGIN\n_secret = 1\n",
    }
    graph = import_graph(sources)
    assert circles(graph) == [["_a", "_b", "_c", "_a"]]
    assert face_imports(graph) == ["_a.py:2 imports helper from the package __init__",
                                   "_c.py:2 imports PLUGIN from the package __init__"]
    assert private_imports(graph) == ["_b.py:2 imports _c._secret"]
    assert face_definitions(sources[FACE]) == ["line 4: FunctionDef"]
    assert face_definitions("import os\nif os.name:\n    X = 1\n") == ["line 2: If"]
    assert circles(import_graph({"_a": "from ._b import x\n", "_b": "def y():\n    from ._a import z\n"})) == \
        [["_a", "_b", "_a"]]


def test_importing_the_plugin_imports_neither_warpspeed_nor_pystencils():
    """The face imports the engine modules at once, so they keep pystencils, lbmpy, sympy and warpspeed for
    first use: importing the plugin (warpspeed loads it to list its catalog) stays cheap."""
    code = ("import sys, warpspeed_pystencils as wp; assert callable(wp.PLUGIN['create_kernel']); "
            "print(sorted({m.split('.')[0] for m in sys.modules} & {'warpspeed', 'pystencils', 'lbmpy', 'sympy', "
            "'numpy'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
