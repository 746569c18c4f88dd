"""Plugins use the package face and warpspeed.plugin_api only; the names there are the real objects."""

import ast

from paths import ROOT

import warpspeed
import warpspeed.plugin_api as api
from warpspeed import kernels, progress
from warpspeed.application import ranking
from warpspeed.measurement import measure
from warpspeed.model import launch

PLUGINS = ROOT / "plugins"


def test_plugin_api_reexports_the_real_objects():
    assert api.CatalogEntry is kernels.CatalogEntry and api.CudaProgram is measure.CudaProgram
    assert api.DEFAULT_REGISTERS == launch.DEFAULT_REGISTERS and api.reference_estimate is ranking.reference_estimate
    assert api.progress_bar is progress.progress_bar
    assert set(api.__all__) == {n for n in dir(api) if not n.startswith("_") and n not in ("annotations",)}


def test_shipped_plugins_import_no_warpspeed_internals():
    allowed = {"warpspeed", "warpspeed.plugin_api"}
    for py in PLUGINS.rglob("*.py"):
        for node in ast.walk(ast.parse(py.read_text())):
            names = [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 else \
                [a.name for a in node.names] if isinstance(node, ast.Import) else []
            for name in names:
                if name and name.split(".")[0] == "warpspeed":
                    assert name in allowed, f"{py.name} imports {name}; use warpspeed.plugin_api"


def test_version_has_one_home():
    from importlib.metadata import version

    from warpspeed._version import __version__

    assert warpspeed.__version__ == __version__ == version("warpspeed")


def test_every_warpspeed_name_the_plugins_use_is_documented():
    """docs/plugins.md names every name a shipped plugin takes from warpspeed (attributes and imports)."""
    doc = (PLUGINS.parent / "docs" / "plugins.md").read_text()
    used = set()
    for py in PLUGINS.rglob("*.py"):
        for node in ast.walk(ast.parse(py.read_text())):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "warpspeed":
                used.add(node.attr)
            elif isinstance(node, ast.ImportFrom) and node.module in ("warpspeed", "warpspeed.plugin_api"):
                used |= {a.name for a in node.names}
    used -= {"__file__", "__version__", "plugin_api"}
    assert used >= {"rank", "InputError", "CudaProgram"}  # the walk finds them
    assert not [n for n in sorted(used) if f"`{n}" not in doc and f"`warpspeed.{n}`" not in doc]
