"""The import contract, from the bottom up: the estimator (warpspeed/model/) imports nothing of what is built
around it; the studies built on it (warpspeed/studies/) nothing of the measurement side or the front ends; the
measurement side nothing of the front ends; both the model and the studies take Kernel and Device objects and
import no resolver of names (the catalog, device ids or files) nor the application layer; the application layer
(warpspeed/application/, which resolves names and calls them) imports neither the front ends nor the rendering;
the rendering (warpspeed/render/) imports neither the CLI nor the web page; the web page does not import the
CLI, and the CLI imports the web page only to serve it; the CLI and the web page take from the model and the
studies only the performance models' names and the configuration space.

The model's stages may use the kernel descriptions, the devices, the expressions, units, errors, schemas and
the version. Every import is checked, also those inside functions. No module imports a private name (one
leading underscore) of another module of the package.
"""

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "warpspeed"
MODEL = PACKAGE / "model"
ALLOWED = {"model", "kernel", "kernels", "device", "devices", "expressions", "units", "errors", "schemas",
           "_version", "_catalog"}
"""What warpspeed/model/ may import from the package (its first name below ``warpspeed``)."""


def package_imports(path: Path, package: list[str]) -> list[tuple[int, str]]:
    """(line, the first name below ``warpspeed``) of every import of a package module in ``path``, a module of
    the package ``package`` (its dotted name as a list)."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[:len(package) - (node.level - 1)]
                target = base + (node.module.split(".") if node.module else [])
                names = [target + [a.name] for a in node.names] if not node.module else [target]
            else:
                names = [(node.module or "").split(".")]
        elif isinstance(node, ast.Import):
            names = [a.name.split(".") for a in node.names]
        else:
            continue
        for parts in names:
            if parts[0] == "warpspeed" and len(parts) > 1:
                out.append((node.lineno, parts[1]))
    return out


MODULES = sorted(MODEL.rglob("*.py"))


def test_the_model_folder_holds_the_stages():
    assert {p.stem for p in MODULES} >= {"launch", "footprint", "l1", "l2", "dram", "capacity", "levels", "roofline",
                                         "performance", "latency", "counters", "estimate"}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: p.name)
def test_the_model_imports_nothing_built_around_it(path):
    package = ["warpspeed", *path.relative_to(PACKAGE).parent.parts]
    wrong = [f"line {line}: warpspeed.{name}" for line, name in package_imports(path, package) if name not in ALLOWED]
    assert not wrong, f"{path.name} imports {wrong}; the model may import only {sorted(ALLOWED)}"


STUDIES = sorted((PACKAGE / "studies").rglob("*.py"))


@pytest.mark.parametrize("path", STUDIES, ids=lambda p: p.name)
def test_the_studies_import_neither_the_measurement_side_nor_the_interface(path):
    """Rankings, what-ifs and projections are built on the model alone (measuring and showing come after)."""
    wrong = [f"line {line}: warpspeed.{name}" for line, name in package_imports(path, ["warpspeed", "studies"])
             if name in ("measurement", "interface", "web", "integrations")]
    assert not wrong, f"{path.name} imports {wrong}"


MEASUREMENT = sorted((PACKAGE / "measurement").rglob("*.py"))


@pytest.mark.parametrize("path", MEASUREMENT, ids=lambda p: p.name)
def test_the_measurement_side_does_not_import_the_interface(path):
    """Measuring, validating and calibrating give numbers; the text tables of the CLI and all plots are the
    interface's."""
    wrong = [f"line {line}: warpspeed.{name}" for line, name in package_imports(path, ["warpspeed", "measurement"])
             if name in ("interface", "web", "integrations")]
    assert not wrong, f"{path.name} imports {wrong}"


def test_the_contract_check_sees_relative_absolute_and_function_level_imports(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from ..studies.ranking import rank\nimport warpspeed.interface.plots\nfrom .dram import x\n\n"
                     "def f():\n    from ..interface import cli\n")
    assert [name for _, name in package_imports(probe, ["warpspeed", "model"])] == ["studies", "interface", "model",
                                                                                     "interface"]


def test_the_lazy_package_face_lists_each_name_once_for_runtime_and_for_checkers():
    """warpspeed/__init__.py loads its names on first use (_HOMES) and imports them for type checkers under
    TYPE_CHECKING: the two lists must name the same things from the same modules, and every name loads."""
    import ast

    import warpspeed

    tree = ast.parse((PACKAGE / "__init__.py").read_text())
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    for_checkers = {(a.asname or a.name): "." * n.level + (n.module or "")
                    for n in block.body if isinstance(n, ast.ImportFrom) for a in n.names}
    homes = ast.literal_eval(next(n.value for n in tree.body if isinstance(n, ast.Assign)
                                  and getattr(n.targets[0], "id", "") == "_HOMES"))
    assert for_checkers == {**homes, "kernels": "."}
    assert set(warpspeed.__all__) == {*homes, "kernels", "device", "InputError", "__version__"}
    assert all(getattr(warpspeed, name) is not None for name in warpspeed.__all__)


def test_ranking_a_stencil_or_an_lbm_kernel_never_imports_islpy():
    """islpy (60 ms to import) loads only for the ISL counter: a fresh process that estimates and ranks with
    the counters that list rows or cells has not imported it, and forcing the ISL counter loads it."""
    import subprocess
    import sys

    script = ("import sys, warpspeed\n"
              "warpspeed.rank('star3d-r1', 'H100-SXM5-80GB', threads=(256,), domain=(130, 66, 34), screen=1)\n"
              "warpspeed.estimate('copy', 'A100-SXM4-40GB', (256, 1, 1))\n"
              "print('islpy' in sys.modules)\n"
              "warpspeed.estimate('star3d-r1', 'H100-SXM5-80GB', (64, 4, 2), domain=(66, 34, 18), counter='isl')\n"
              "print('islpy' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["False", "True"]


def _modules(folder: str) -> list[Path]:
    return sorted((PACKAGE / folder).rglob("*.py"))


def _imports_of(path: Path) -> list[tuple[int, str]]:
    return package_imports(path, ["warpspeed", *path.relative_to(PACKAGE).parent.parts])


@pytest.mark.parametrize("path", _modules("web"), ids=lambda p: p.name)
def test_the_web_page_does_not_import_the_command_line(path):
    """The page and the CLI share the rendering (warpspeed.render), not each other: editing the CLI's text
    cannot change the page."""
    wrong = [f"line {line}: warpspeed.{name}" for line, name in _imports_of(path) if name == "interface"]
    assert not wrong, f"{path.name} imports {wrong}"


@pytest.mark.parametrize("path", _modules("render"), ids=lambda p: p.name)
def test_the_rendering_imports_neither_the_command_line_nor_the_web_page(path):
    wrong = [f"line {line}: warpspeed.{name}" for line, name in _imports_of(path) if name in ("interface", "web")]
    assert not wrong, f"{path.name} imports {wrong}"


def test_the_command_line_imports_the_web_page_only_to_serve_it():
    """cli.py reaches warpspeed.web in one place: inside ``_serve`` (so `warpspeed estimate` never loads it)."""
    tree = ast.parse((PACKAGE / "interface" / "cli.py").read_text())
    serving = {id(n) for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name == "_serve"
               for n in ast.walk(f)}
    web = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
           and (n.module or "").split(".")[0] == "web" and n.level == 2]
    assert web and all(id(n) in serving for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                       and n.lineno in web), web


def imported_modules(path: Path, package: list[str] | None = None) -> list[tuple[int, str, str | None]]:
    """(line, dotted module below ``warpspeed``, name imported from it or None) of every import of a package
    module in ``path``, also those inside functions: ``from ..model.estimate import estimate`` in
    warpspeed/web/service.py is (line, "model.estimate", "estimate"). ``package``: the module's package (default:
    from its place in warpspeed/)."""
    package = package or ["warpspeed", *path.relative_to(PACKAGE).parent.parts]
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package[:len(package) - (node.level - 1)] if node.level else []
            target = base + (node.module.split(".") if node.module else [])
            out += [(node.lineno, ".".join(target[1:]), a.name) for a in node.names if target[:1] == ["warpspeed"]]
        elif isinstance(node, ast.Import):
            out += [(node.lineno, ".".join(a.name.split(".")[1:]), None) for a in node.names
                    if a.name.split(".")[0] == "warpspeed"]
    return out


CORE = sorted(p for folder in ("model", "studies") for p in (PACKAGE / folder).rglob("*.py"))
RESOLVERS = {("device", "device"), ("device", "load_device_file"), ("device", "detected_device"),
             ("device", "device_for_gpu_name"), ("device.builtin", "device"), ("kernel", "load_kernel"),
             ("", "kernels")}
"""What turns user text into objects (and the catalog, warpspeed.kernels, as a whole): the model and the studies
take a Kernel and a Device instead."""


def _resolves(mod: str, name: str | None) -> bool:
    return mod.split(".")[0] == "kernels" or (mod, name) in RESOLVERS


@pytest.mark.parametrize("path", CORE, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_model_and_the_studies_take_objects_and_import_nothing_above_them(path):
    """The model and the studies import neither the application layer nor anything that shows results (the
    CLI, the web page, the rendering), and no resolver of names (the catalog, device ids or files): a name
    given to them is a TypeError (warpspeed.model.inputs)."""
    above = ("application", "interface", "web", "render", "integrations")
    wrong = [f"line {line}: warpspeed.{mod}" + (f" ({name})" if name else "")
             for line, mod, name in imported_modules(path) if mod.split(".")[0] in above or _resolves(mod, name)]
    assert not wrong, f"{path.name} imports {wrong}"


CORE_NAMES_FOR_FRONTS = {"model.performance", "studies.space"}
"""What the CLI and the web page may import from the model and the studies: the performance models' names (the
--model choices) and the configuration space (block shapes, to bound a request before it runs). Every request
(estimate, ranking, what-if, projection, comparison, time view) goes through warpspeed.application, and every
text and plot through warpspeed.render."""
FRONTS = sorted([*(PACKAGE / "interface").rglob("*.py"), *(PACKAGE / "web").rglob("*.py")])


@pytest.mark.parametrize("path", FRONTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_command_line_and_the_web_page_ask_the_application_layer(path):
    wrong = [f"line {line}: warpspeed.{mod}" for line, mod, _ in imported_modules(path)
             if mod.split(".")[0] in ("model", "studies") and mod not in CORE_NAMES_FOR_FRONTS]
    assert not wrong, f"{path.name} imports {wrong}; call warpspeed.application (or render with warpspeed.render)"


@pytest.mark.parametrize("path", sorted((PACKAGE / "application").rglob("*.py")), ids=lambda p: p.name)
def test_the_application_layer_imports_neither_the_command_line_nor_the_web_page_nor_the_rendering(path):
    wrong = [f"line {line}: warpspeed.{mod}" for line, mod, _ in imported_modules(path)
             if mod.split(".")[0] in ("interface", "web", "render")]
    assert not wrong, f"{path.name} imports {wrong}"


def test_the_import_checks_see_modules_and_names_inside_functions(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import warpspeed.kernels\n\ndef f():\n    from ..model.estimate import estimate\n"
                     "    from .. import kernels\n    from ..device import device\n")
    found = imported_modules(probe, ["warpspeed", "web"])
    assert found == [(1, "kernels", None), (4, "model.estimate", "estimate"), (5, "", "kernels"),
                     (6, "device", "device")]
    assert [_resolves(mod, name) for _, mod, name in found] == [True, False, True, True]


def test_the_model_refuses_names_and_the_face_resolves_them():
    """The model takes objects (a name is a TypeError naming the argument); warpspeed.estimate, the application
    layer's, resolves the same names to the same estimate."""
    import warpspeed
    from warpspeed.application.resolve import resolve_device, resolve_kernel
    from warpspeed.model.estimate import estimate
    from warpspeed.studies.ranking import rank

    with pytest.raises(TypeError, match="kernel: the model takes a warpspeed Kernel, got str 'copy'"):
        estimate("copy", resolve_device("A100-SXM4-40GB"), (256, 1, 1))
    with pytest.raises(TypeError, match="device: the model takes a warpspeed Device, got str"):
        rank(resolve_kernel("copy"), "A100-SXM4-40GB", (256,))
    by_name = warpspeed.estimate("copy", "A100-SXM4-40GB", (256, 1, 1), domain=(512, 64, 8))
    by_object = estimate(resolve_kernel("copy", (512, 64, 8)), resolve_device("A100-SXM4-40GB"), (256, 1, 1))
    assert by_name == by_object and by_name.performance_GLup_s > 0


def private_names_imported(path: Path) -> list[str]:
    """``line: module.name`` of every private name (one leading underscore) that ``path`` imports from another
    module of the package; an alias of a whole module (``from ..studies import ranking as _ranking``) is not one."""
    out = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("warpspeed")):
            out += [f"{node.lineno}: {'.' * node.level}{node.module or ''}.{a.name}" for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")]
    return out


@pytest.mark.parametrize("path", sorted(PACKAGE.rglob("*.py")), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_imports_a_private_name_of_another(path):
    """A name with a leading underscore belongs to its module: what another module needs is public there."""
    assert private_names_imported(path) == []


def test_the_private_name_check_sees_relative_and_absolute_imports(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from .report import _num, shown\nfrom warpspeed.units import _unit\n"
                      "from ..studies import ranking as _ranking\nfrom .x import __version__\n")
    assert private_names_imported(module) == ["1: .report._num", "2: warpspeed.units._unit"]
