"""kernel_tuner integration: the model's ranking of a kernel_tuner search space, and the files both tools read.

kernel_tuner (https://github.com/KernelTuner/kernel_tuner) measures configurations; warpspeed predicts them.
This package lets the prediction steer the measuring:

- :func:`rank_tune_params` ranks the configurations of a kernel_tuner ``tune_params`` space (with kernel_tuner
  style restrictions) as :func:`warpspeed.rank` does, into a :class:`TuneRanking` that also records the
  parameter names it was ranked with (the functions below use them where ``names=`` is left out) and what
  loads its kernel and device (:class:`Origin`, recorded in the files it exports); given a mapping
  ``{parameter: {value: kernel}}`` for a parameter that selects the kernel variant (``layout``), it ranks each
  value's configurations with its kernel into one :class:`VariantRanking`, which the functions below take too;
- :func:`restriction` is a kernel_tuner ``restrictions=`` function that keeps only the model's top N, or the
  configurations predicted within a share of the best;
- :class:`WarpspeedOrder` is a kernel_tuner strategy that measures first the configurations the model cannot
  decide between (the ranking's ``confidence``), then the best-predicted ones, and stops at the budget
  (``max_fevals``, ``time_limit``; without one, after the confidence's configurations); :func:`x0` is the
  best-predicted starting point for kernel_tuner's local strategies (``strategy_options={"x0": ...}``);
- :func:`write_t4_results` / :func:`write_cache` export a ranking as kernel_tuner's T4 results JSON or as a
  cache file (predicted kernel time in ms as ``time``; replayable with ``simulation_mode=True``);
  :func:`read_kernel_tuner` reads a cache or T4 file as measurements for :mod:`warpspeed.measurement.validation`
  (``warpspeed validate FILE.json``), :func:`recorded_devices` the device such a file records;
  :func:`convert_measurements` turns a measurement CSV into cache files.

Parameter names (:class:`ParameterNames`) say which ``tune_params`` are the block and folding extents;
kernel_tuner's defaults ``block_size_x/y/z`` are the block's. Other parameters (a loop-unroll flag, say) do
not change an estimate: configurations that differ only in them share their block and folding's prediction,
and keep kernel_tuner's order among themselves. The formats read and written: docs/kernel-tuner.md.

Only :class:`WarpspeedOrder`, :func:`all_of` with string restrictions and restriction strings passed to the
ranking import kernel_tuner (``pip install -e ".[kernel-tuner]"``); everything else works without it.

The modules, one job each (this package's names are the public face; import them from here):
:mod:`.names` (:class:`ParameterNames`, the unmapped-extent warning), :mod:`.restrictions` (kernel_tuner
restrictions, :func:`all_of`, :func:`cached_restriction`), :mod:`.space` (``tune_params`` checked and walked in
kernel_tuner's order, a domain's dimensions), :mod:`.origin` (what loads a ranked kernel and device again),
:mod:`.ranking` (:func:`rank_tune_params`, :class:`TuneRanking`, :func:`ordered_params`), :mod:`.search`
(:func:`restriction`, :class:`WarpspeedOrder`, :func:`x0`), :mod:`.files` (what the cache and T4 formats
share), :mod:`.export` (a ranking written as those files), :mod:`.convert` (measurements written as cache
files), :mod:`.header` and :mod:`.reading` (a file read back as measurement rows), :mod:`.variants` (a parameter
that selects the kernel: :class:`VariantRanking`).
"""

from .convert import convert_measurements, measurements_to_cache
from .export import t4_results, write_cache, write_t4_results
from .files import ERROR_VALUES, OBJECTIVE, T4_SCHEMA_VERSION, kernel_name_of
from .header import recorded_devices
from .names import NAMES, ParameterNames, extent_like, warn_unmapped
from .origin import Origin, origin_of
from .ranking import TuneRanking, ordered_params, rank_tune_params
from .reading import read_kernel_tuner
from .restrictions import Restriction, SpaceCheck, all_of, cached_restriction
from .search import STRATEGY_OPTIONS, WarpspeedOrder, restriction, x0
from .space import check_dimensions, checked_tune_params, dimensions, tune_params_of, tune_space
from .variants import VariantRanking as VariantRanking  # the ranking of a variant parameter's kernels

__all__ = ["Restriction", "OBJECTIVE", "T4_SCHEMA_VERSION", "ERROR_VALUES", "STRATEGY_OPTIONS", "ParameterNames",
           "NAMES", "Origin", "TuneRanking", "checked_tune_params", "all_of", "SpaceCheck", "tune_space",
           "rank_tune_params", "extent_like", "warn_unmapped", "dimensions", "check_dimensions", "origin_of",
           "ordered_params", "x0", "restriction", "WarpspeedOrder", "tune_params_of", "t4_results",
           "write_t4_results", "kernel_name_of", "write_cache", "measurements_to_cache", "convert_measurements",
           "cached_restriction", "recorded_devices", "read_kernel_tuner"]
