"""The kernel_tuner integration is a package of one job per module (warpspeed/integrations/kernel_tuner/) whose
face keeps the names the single module had: the public names, where they come from, how the modules import one
another, and that the package ships."""

import ast
import tomllib
import types
from pathlib import Path

import warpspeed.integrations.kernel_tuner as wk

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "warpspeed" / "integrations" / "kernel_tuner"
PUBLIC = ["Restriction", "OBJECTIVE", "T4_SCHEMA_VERSION", "ERROR_VALUES", "STRATEGY_OPTIONS", "ParameterNames",
          "NAMES", "Origin", "TuneRanking", "checked_tune_params", "all_of", "SpaceCheck", "tune_space",
          "rank_tune_params", "extent_like", "warn_unmapped", "dimensions", "check_dimensions", "origin_of",
          "ordered_params", "x0", "restriction", "WarpspeedOrder", "tune_params_of", "t4_results", "write_t4_results",
          "kernel_name_of", "write_cache", "measurements_to_cache", "convert_measurements", "cached_restriction",
          "recorded_devices", "read_kernel_tuner"]
"""The public names of warpspeed/integrations/kernel_tuner.py before it became a package."""


def test_the_face_exports_the_public_names_of_the_former_module():
    assert sorted(wk.__all__) == sorted(PUBLIC)
    namespace: dict = {}
    exec("from warpspeed.integrations.kernel_tuner import *", namespace)
    assert set(namespace) - {"__builtins__"} == set(PUBLIC)


def test_no_module_of_the_package_hides_a_public_name():
    """A submodule named as a public name (restriction.py) would replace it on the package once imported."""
    modules = {p.stem for p in PACKAGE.glob("*.py")} - {"__init__"}
    assert not modules & set(PUBLIC)
    for name in PUBLIC:
        assert not isinstance(getattr(wk, name), types.ModuleType), name
    assert callable(wk.restriction) and wk.restriction.__module__ == "warpspeed.integrations.kernel_tuner.search"


def test_each_function_and_class_is_defined_in_one_module_of_the_package():
    for name in PUBLIC:
        obj = getattr(wk, name)
        if isinstance(obj, types.FunctionType | type) and obj.__module__ != "typing":
            assert obj.__module__.startswith("warpspeed.integrations.kernel_tuner."), (name, obj.__module__)


def _sibling_imports(path: Path) -> list[tuple[str, list[str]]]:
    """(sibling module, names imported from it) for each ``from .x import ...`` of a module of the package."""
    out = []
    face = "warpspeed.integrations.kernel_tuner"
    for node in ast.walk(ast.parse(path.read_text())):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level == 1 and node.module is None:  # from . import names: sibling modules
            out += [(a.name, []) for a in node.names]
        elif node.level == 1:
            out.append((node.module, [a.name for a in node.names]))
        elif node.level == 0 and node.module == face or node.level == 2 and node.module == "kernel_tuner":
            out.append(("", [a.name for a in node.names]))
    return out


MODULES = {p.stem: _sibling_imports(p) for p in sorted(PACKAGE.glob("*.py")) if p.stem != "__init__"}


def test_the_modules_import_no_private_name_of_a_sibling_and_not_the_face():
    for module, imports in MODULES.items():
        for sibling, names in imports:
            assert sibling, f"{module}.py imports the package's face; import from the module that defines the name"
            private = [n for n in names if n.startswith("_")]
            assert not private, f"{module}.py imports the private {private} of {sibling}.py"


def test_the_modules_import_one_another_without_a_circle():
    graph = {m: {s for s, _ in imports} for m, imports in MODULES.items()}
    assert set().union(*graph.values()) <= set(graph)
    done: list[str] = []
    while len(done) < len(graph):  # peel off the modules whose siblings are all done (a circle never peels)
        ready = sorted(m for m in graph if m not in done and graph[m] <= set(done))
        assert ready, f"import circle among {sorted(set(graph) - set(done))}"
        done += ready
    assert done[0] in ("files", "names", "origin")  # the floor: modules that import no sibling


def test_every_package_folder_is_listed_in_pyproject():
    """setuptools ships only the packages pyproject.toml lists: a new subpackage left out is missing from a wheel."""
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "warpspeed").rglob("__init__.py")}
    assert "warpspeed.integrations.kernel_tuner" in folders
    assert folders <= listed, f"not in pyproject.toml's [tool.setuptools] packages: {sorted(folders - listed)}"
