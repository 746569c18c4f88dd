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
  compiler's register count, say), with guessed registers; the ranking then reuses what matches.
"""

from .kernels import CatalogEntry
from .measurement.measure import ARG_TYPES, NAME_TOKEN, ArraySpec, CudaProgram
from .model.launch import DEFAULT_REGISTERS
from .model.performance import performance_model
from .progress import progress_bar
from .studies.ranking import kernel_content, precount, reference_estimate

__all__ = ["ARG_TYPES", "DEFAULT_REGISTERS", "NAME_TOKEN", "ArraySpec", "CatalogEntry", "CudaProgram",
           "kernel_content", "performance_model", "precount", "progress_bar", "reference_estimate"]
