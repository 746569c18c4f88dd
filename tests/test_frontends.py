"""The core knows code generators only through their front ends (warpspeed.frontends): no module of warpspeed/
outside the front ends names one in code, and what the words said before now comes from the front ends' data."""

import ast
import io
import tokenize
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "warpspeed"
FRONT_END_MODULES = {"file_frontend.py", "plugin_api.py"}
"""The kernel-file front end (which names the block its rankings are compared with) and the plugins' face."""
GENERATORS = ("pystencils", "lbmpy")


def code_text(source: str) -> str:
    """``source`` less its comments and docstrings: the names, strings and f-strings that run."""
    docstrings = {node.lineno for node in ast.walk(ast.parse(source))  # module, class, function, attribute docs
                  if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
                  and isinstance(node.value.value, str)}
    out = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT or (tok.type == tokenize.STRING and tok.start[0] in docstrings):
            continue
        out.append(tok.string)
    return " ".join(out)


CORE = sorted(p for p in PACKAGE.rglob("*.py") if p.name not in FRONT_END_MODULES
              and "integrations" not in p.relative_to(PACKAGE).parts)


@pytest.mark.parametrize("path", CORE, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_the_core_names_no_code_generator_in_code(path):
    text = code_text(path.read_text()).lower()
    named = [g for g in GENERATORS if g in text]
    assert not named, f"{path.relative_to(PACKAGE)} names {named} in code: ask the kernel's front end"


def test_the_check_sees_code_and_skips_docstrings_and_comments():
    source = ('"""pystencils here is prose."""\nX = 1  # pystencils\n"""pystencils: attribute doc"""\n\n\n'
              'def f():\n    """pystencils"""\n    return f"{X} pystencils default"\n')
    assert code_text(source).lower().count("pystencils") == 1


def test_the_measurement_codes_and_the_reference_come_from_the_front_ends():
    from warpspeed.application.ranking import front_end_of, reference_label
    from warpspeed.file_frontend import kernel_files
    from warpspeed.frontends import by_program_code, program_codes

    assert program_codes() == ("auto", "pystencils", "warpspeed")
    plugin = by_program_code("pystencils")
    assert plugin is not None and plugin.name == "pystencils" and not plugin.program_folds
    assert by_program_code("warpspeed") is None and by_program_code("auto") is None
    assert front_end_of("d3q19-srt") is plugin and front_end_of("star3d-r1") is kernel_files()
    assert reference_label("d3q19-srt") == reference_label("star3d-r1") == "pystencils default"
    for domain, block in (((512, 1, 1), (256, 1, 1)), ((64, 64, 1), (16, 16, 1)), ((64, 32, 16), (8, 8, 4))):
        assert kernel_files().reference.block(domain) == plugin.reference.block(domain) == block


def test_a_kernel_object_keeps_the_front_end_that_described_it():
    """A Kernel object passed directly is its plugin's when its source names the plugin's front end (the
    pystencils plugin marks its kernels ``pystencils:<name>``); other sources are the kernel-file front end's."""
    import warpspeed
    from warpspeed.application.ranking import front_end_of
    from warpspeed.file_frontend import kernel_files
    from warpspeed.frontends import by_kernel_source, by_program_code

    plugin = by_program_code("pystencils")
    k = warpspeed.find_kernel("d3q19-srt")
    assert k.source == "pystencils:d3q19-srt" and front_end_of(k) is plugin is front_end_of("d3q19-srt")
    assert front_end_of(warpspeed.find_kernel("star3d-r1")) is kernel_files()
    assert by_kernel_source("/home/me/kernels/x.toml") is None and by_kernel_source("<dict>") is None
    assert by_kernel_source("C:/kernels/x.toml") is None and by_kernel_source("no-such-generator:x") is None


def test_a_front_end_label_names_the_reference_in_the_headline():
    """The headline's words for the reference are the front end's: another label, another text."""
    import warpspeed
    from warpspeed.application.ranking import reference_estimate
    from warpspeed.render.report import ranking_headline

    dom = (66, 34, 18)
    r = warpspeed.rank("star3d-r1", "A100-SXM4-40GB", threads=(128,), domain=dom)
    ref = reference_estimate(r, "star3d-r1", "A100-SXM4-40GB", domain=dom)
    assert ref.configuration.block == (8, 8, 4)
    assert "pystencils default 8x8x4" in ranking_headline(r, ref)
    other = ranking_headline(r, ref, "generator X default")
    assert "generator X default 8x8x4" in other and "pystencils" not in other.split("\n")[0]


def test_a_plugin_kernel_without_its_generator_gets_its_front_ends_install_hint(monkeypatch):
    """The hint for a missing module comes from the entry's front end (its modules and extra)."""
    from warpspeed import kernels
    from warpspeed.errors import InputError
    from warpspeed.frontends import FrontEnd, Reference

    fe = FrontEnd("gen", Reference("gen default", lambda d: (32, 1, 1)), modules=frozenset({"genmod"}), extra="gen")

    def build():
        raise ModuleNotFoundError("no genmod", name="genmod.core")

    entry = kernels.CatalogEntry("genk", "a generated kernel", build, front_end=fe)
    monkeypatch.setattr(kernels, "entries", lambda: {"genk": entry})
    with pytest.raises(InputError, match=r"no module 'genmod'\); install warpspeed's 'gen' extra"):
        kernels.get("genk")


def test_asking_the_front_ends_for_the_code_choices_loads_no_study():
    """The command line asks the plugins' front ends for --code's choices whenever it starts: their
    ``front_end()`` takes FrontEnd from warpspeed.plugin_api, which loads the rest of its names on first use."""
    import subprocess
    import sys

    code = ("import sys; from warpspeed.interface.cli import _parser; _parser(); "
            "print(sorted({'.'.join(m.split('.')[:2]) for m in sys.modules} & {'warpspeed.application', "
            "'warpspeed.studies', 'warpspeed.measurement', 'warpspeed_pystencils._frontend'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "['warpspeed_pystencils._frontend']"
