"""What a code-generator plugin may use from warpspeed: a small, stable face (the rest is internal).

A plugin is a module registered under the entry-point group ``warpspeed.plugins`` (see docs/plugins.md).
Besides the public package face (``warpspeed.kernel_from_dict``, ``warpspeed.rank``, ``warpspeed.device``,
``warpspeed.InputError``, ...) it may use these names, and only these, so warpspeed can reorganize its
modules without breaking plugins:

- :class:`CatalogEntry`: a named kernel the plugin adds to ``warpspeed kernels`` (built on first use);
- :class:`CudaProgram`, :class:`ArraySpec`, :data:`ARG_TYPES`, :data:`NAME_TOKEN`: a kernel's own CUDA code
  for ``warpspeed measure``;
- :data:`DEFAULT_REGISTERS`: the registers per thread warpspeed assumes when a kernel does not say;
- :func:`reference_estimate`: a ranking's row for a given block (e.g. the generator's default block);
- :func:`progress_bar`: a terminal-only progress bar for long work;
- :func:`kernel_content`: what a kernel's numbers depend on (its description less prose), to key caches;
- :func:`performance_model`: a performance model by name (an unknown name is an ``InputError``), to check a
  plugin's ``model=`` option when it is given rather than when it is first used;
- :func:`precount`: count ahead what a screened ranking will ask for while the plugin waits (for the
  compiler's register count, say), with guessed registers; the ranking then reuses what matches;
- :class:`FrontEnd`, :class:`Reference`: what the core asks of the plugin's kernels (the block a ranking is
  compared with, the ``code`` of its own CUDA programs); a plugin offers its ``FRONT_END``;
- :func:`ranking_headline`, :func:`ranking_table`: a ranking in words, as ``warpspeed rank`` prints it, for
  a plugin to show its users why a block was chosen;
- :func:`comparison_text`: a comparison of candidate kernels (``warpspeed.compare``) in words, as
  ``warpspeed compare`` prints it, for a plugin that compares the variants it generates.
"""

from __future__ import annotations

import importlib as _importlib
import typing as _typing

from .frontends import FrontEnd, Reference

if _typing.TYPE_CHECKING:
    from .application.ranking import precount, reference_estimate
    from .kernels import CatalogEntry
    from .measurement.measure import ARG_TYPES, NAME_TOKEN, ArraySpec, CudaProgram
    from .model.launch import DEFAULT_REGISTERS
    from .model.performance import performance_model
    from .progress import progress_bar
    from .studies.ranking import kernel_content

_HOMES = {"precount": ".application.ranking", "reference_estimate": ".application.ranking",
          "CatalogEntry": ".kernels", "ARG_TYPES": ".measurement.measure", "NAME_TOKEN": ".measurement.measure",
          "ArraySpec": ".measurement.measure", "CudaProgram": ".measurement.measure",
          "DEFAULT_REGISTERS": ".model.launch", "performance_model": ".model.performance",
          "progress_bar": ".progress", "kernel_content": ".studies.ranking"}
"""Where each name lives: loaded on first use, so that a plugin's ``front_end()`` (asked when the command line
starts) loads no model."""


def __getattr__(name: str):
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(_importlib.import_module(_HOMES[name], __package__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})


__all__ = ["ARG_TYPES", "DEFAULT_REGISTERS", "NAME_TOKEN", "ArraySpec", "CatalogEntry", "CudaProgram", "FrontEnd",
           "Reference",
           "comparison_text", "kernel_content", "performance_model", "precount", "progress_bar", "ranking_headline",
           "ranking_table", "reference_estimate"]


def ranking_headline(ranking, reference=None, reference_label: str | None = None) -> str:
    """The headline ``warpspeed rank`` prints above its table: the best configuration, its performance and
    limiter, how far the next best (and ``reference``, a row of :func:`reference_estimate`: the generator's
    default block, say, named ``reference_label``: the kernel-file front end's label when None) lag, and the
    ranking's confidence with its reasons. Imported on first use: the report module is not needed to rank."""
    from .render.report import ranking_headline as headline

    return headline(ranking, reference, reference_label)


def ranking_table(ranking, top: int = 10) -> str:
    """The table ``warpspeed rank`` prints: the best ``top`` configurations with their performance, limiter,
    the model's limits, volumes and L1 cycles, then how many configurations were ranked and only bounded."""
    from .render.report import ranking_table as table

    return table(ranking, top)


def comparison_text(comparison) -> str:
    """What ``warpspeed compare`` prints for a ``warpspeed.Comparison`` (``--format text``): the headline
    (the fastest candidate, how much slower the others are), the confidence with what to measure, and the
    table of candidates with each kernel's best block. Imported on first use, like :func:`ranking_headline`."""
    from .render.compare_report import comparison_text as text

    return text(comparison)
