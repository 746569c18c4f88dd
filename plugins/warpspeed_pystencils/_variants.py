"""The variants a code generator could emit from one definition, generated and compared in one call:
``compare_variants``.

A pystencils kernel (assignments and a config) varies in its fields' layout and element type and in any
option of its ``CreateKernelConfig`` the user names; an lbmpy method (an ``LBMConfig``, or a catalog name such
as ``d3q19-srt``) also in its streaming pattern. Each combination of the values given is a variant; an in-place
streaming pattern (``aa``, ``esotwist``) is the sequence of its even and odd time-step kernels, which make two
updates of the domain. The variants are compared by ``warpspeed.compare`` (each kernel at the best block of
its screened ranking); the winner is created as ``create_kernel`` creates a kernel, with its block chosen.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ._arguments import registers_argument, thread_counts
from ._create import create_kernel
from ._describe import arch_for, describe_kernel
from ._errors import input_error
from ._generate import as_kernel
from ._redeclare import redeclared

#: The element types a variant can have, and the names that mean them.
DTYPES = {"float64": "float64", "double": "float64", "fp64": "float64",
          "float32": "float32", "float": "float32", "fp32": "float32"}
#: The layout names pystencils declares fields with, and the layout each is (``fzyx``: x contiguous, the index
#: of a field the slowest; ``zyxf``: the index contiguous, then x; ``c``: numpy's order, the last coordinate
#: and then the index contiguous).
LAYOUTS = {"fzyx": "fzyx", "soa": "fzyx", "f": "fzyx", "reverse_numpy": "fzyx",
           "zyxf": "zyxf", "aos": "zyxf", "c": "c", "numpy": "c"}
#: Besides those names, a layout may be a spatial order: the coordinates slowest first (``yxz``: z contiguous,
#: then x, then y); ``zyx``/``yx`` are ``fzyx``'s and ``xyz``/``xy`` ``c``'s.
ORDERS = {"".join(p): "".join(p) for n in (2, 3) for p in itertools.permutations("xyz"[:n])} | \
    {"zyx": "fzyx", "yx": "fzyx", "xyz": "c", "xy": "c"}
#: The streaming patterns compared for an lbmpy method when none are named.
STREAMING = ("pull", "push", "aa", "esotwist")
#: Options of a ``CreateKernelConfig`` that a variant cannot change: a variant is a CUDA kernel.
FIXED_OPTIONS = ("target", "jit")
#: The methods of the catalog's ``lbm:`` names.
LBM_METHODS = ("srt", "trt", "mrt", "cumulant", "central_moment")


@dataclass(frozen=True)
class Variant:
    """One candidate: its kernels' assignments in launch order, the config they are created with, the layout
    their fields are described in and the updates of the domain one launch of them makes."""

    name: str  # its options as ``axis=value`` joined by commas (the axes with more than one value)
    options: dict[str, Any]  # every axis and option: its value in this variant (layout, dtype None: as declared)
    rules: tuple[Any, ...]  # the assignments of each kernel, in launch order
    kernel_labels: tuple[str, ...]  # each kernel as the comparison names it
    config: Any  # the CreateKernelConfig every kernel of the variant is created with
    layout: str | None  # the layout name the fields are described in (None: as declared, e.g. in a spatial order)
    updates: int  # updates of the domain one launch of the kernels makes (2 for an even/odd pair)
    kernels: tuple[Any, ...] = ()  # the warpspeed Kernels compared (described for the shape), in launch order


@dataclass(frozen=True)
class VariantComparison:
    """``compare_variants``' answer: the ``warpspeed.Comparison`` of the variants (fastest first, each named by
    its options), the variants by name, and what creates them."""

    comparison: Any  # warpspeed.Comparison: text, JSON and CSV as warpspeed compare writes them
    variants: tuple[Variant, ...]  # in the order generated
    shape: tuple[int, ...]
    device: Any
    registers: int | None = None

    @property
    def best(self) -> Variant:
        """The variant predicted fastest per update of the domain."""
        return self.variant(self.comparison.best.name)

    def variant(self, name: str) -> Variant:
        """The variant of that name (as the comparison names it)."""
        for v in self.variants:
            if v.name == name:
                return v
        raise input_error(f"no variant named {name!r}; the variants are {[v.name for v in self.variants]}.")

    def to_dict(self) -> dict:
        """The comparison's JSON (``warpspeed compare --format json``)."""
        return self.comparison.to_dict()

    def text(self) -> str:
        """The comparison in words, as ``warpspeed compare`` prints it: the headline, the confidence and what to
        measure, and the table of variants with each kernel's best block."""
        from warpspeed.plugin_api import comparison_text

        return comparison_text(self.comparison)

    def create_best(self, **create_options: Any) -> Any:
        """The winner as pystencils kernels, each with the block chosen as ``create_kernel`` chooses it (the
        thread counts the comparison ranked, unless ``threads=`` is given): the kernel, or for a sequence
        (the even and odd kernels of in-place streaming) a tuple of them in launch order.
        ``kernel.metadata["warpspeed"]["variant"]`` holds the winning options."""
        return self.create(self.comparison.best.name, **create_options)

    def create(self, name: str, **create_options: Any) -> Any:
        """The variant ``name`` created as :meth:`create_best` creates the winner."""
        v = self.variant(name)
        result = next(c for c in self.comparison.candidates if c.name == name)
        kernels = []
        for rule, choice in zip(v.rules, result.kernels, strict=True):
            opts = {"threads": choice.threads, "registers": self.registers, **create_options}
            k = create_kernel(rule, v.config, shape=self.shape, device=self.device, layout=v.layout, **opts)
            variant = {axis: _plain(x) for axis, x in v.options.items()}
            k.metadata["warpspeed"] = dict(k.metadata["warpspeed"], variant=variant)
            kernels.append(k)
        return kernels[0] if len(kernels) == 1 else tuple(kernels)


def compare_variants(definition: Any, device: Any, *, shape: Sequence[int], config: Any = None,
                     layout: Iterable[str] | str | None = None, dtype: Iterable[str] | str | None = None,
                     streaming: Iterable[str] | str | None = None, options: Mapping[str, Iterable[Any]] | None = None,
                     lbm_optimisation: Any = None, threads: Any = None, registers: int | None = None,
                     model: str | None = None) -> VariantComparison:
    """Generate the variants of ``definition`` and compare them on ``device`` (module docstring).

    ``definition``: pystencils assignments (a list of ``Assignment`` s or an ``AssignmentCollection``), an
    lbmpy ``LBMConfig`` (stream-collide; ``lbm_optimisation=`` an ``LBMOptimisation`` to start from) or the
    name of an lbmpy catalog kernel (``"d3q19-srt"``, ``"lbm:stencil=D3Q27,method=trt"``).
    ``shape``: the allocated extent of the arrays, ghost layers included, the fastest in memory first (as in
    ``describe``; an lbmpy kernel has one ghost layer: 66,66,66 for 64^3 cells).
    The axes, each a list of values (one value: a string) whose combinations are the variants:
    ``layout`` (``"fzyx"``, ``"zyxf"``, ``"c"`` and their aliases, or a spatial order such as ``"yxz"``, the
    coordinates slowest first; default: ``fzyx`` and ``zyxf`` where a field has an index dimension, else each
    field as declared), ``dtype`` (``"float64"``, ``"float32"``;
    default: as declared), ``streaming`` (lbmpy only: ``pull``, ``push``, ``aa``, ``esotwist`` by default, and
    what else the installed lbmpy offers), ``options`` (``{"index_dtype": ["int64", "int32"]}``,
    ``{"gpu.indexing_scheme": [...]}``: options of the ``CreateKernelConfig``, by name; an option that changes
    the cells updated, such as ``ghost_layers``, is refused: not the same work).
    ``config``: the ``CreateKernelConfig`` every variant starts from (target CUDA); ``threads``, ``model``:
    as ``warpspeed.compare``'s; ``registers``: per thread for every kernel (default: nvcc counts them).
    Returns a :class:`VariantComparison`; ``.comparison`` is a ``warpspeed.Comparison``.
    """
    import warpspeed
    from warpspeed.plugin_api import performance_model

    from . import _hip

    shape = _shape(shape)
    registers = registers_argument(registers)
    threads = thread_counts(threads)
    if model is not None:
        performance_model(model)
    # an unknown device is refused before anything is generated; so is an NVIDIA one for a HIP config
    arch = arch_for(device, hip=_hip.is_hip(config))
    base = _base_config(config)
    opts = _config_options(options, base)
    dtypes = _values("dtype", dtype, DTYPES)
    if _is_lbm(definition):
        layouts = _values("layout", layout, LAYOUTS | ORDERS) or ("fzyx", "zyxf")
        patterns = _streaming(streaming)
        variants = _lbm_variants(definition, lbm_optimisation, base, patterns, layouts, dtypes, opts)
    else:
        if streaming is not None or lbm_optimisation is not None:
            raise input_error("streaming= and lbm_optimisation= vary an lbmpy method: give an LBMConfig or a catalog "
                              "name such as 'd3q19-srt' as the definition, or leave them out for pystencils "
                              "assignments.")
        variants = _kernel_variants(definition, base, _values("layout", layout, LAYOUTS | ORDERS), dtypes, opts)
    made: dict[tuple, Any] = {}
    candidates = []
    for i, v in enumerate(variants):
        kernels = tuple(_described(rule, label, v, shape, registers, arch, made)
                        for rule, label in zip(v.rules, v.kernel_labels, strict=True))
        variants[i] = dataclasses.replace(v, kernels=kernels)
        candidates.append(warpspeed.Candidate(kernels, v.updates if v.updates != 1 else None, name=v.name,
                                              labels=v.kernel_labels))
    _check_same_cells(variants)
    comparison = warpspeed.compare(candidates, device, threads=threads, model=model)
    return VariantComparison(comparison, tuple(variants), shape, device, registers)


def _check_same_cells(variants: Sequence[Variant]) -> None:
    """Refuse variants whose kernels sweep other cells (an option such as ``ghost_layers``): they do not do the
    same work, and no normalisation of one generated kernel to another is known."""
    ref = variants[0].kernels[0].domain
    for v in variants:
        for label, k in zip(v.kernel_labels, v.kernels, strict=True):
            if k.domain != ref:
                raise input_error(f"compare_variants: the variants do not do the same work: {variants[0].name} "
                                  f"sweeps {'x'.join(map(str, ref))} cells, {label} "
                                  f"{'x'.join(map(str, k.domain))}; vary only options that keep the cells updated "
                                  "(not ghost_layers or iteration_slice), or compare the kernels with "
                                  "warpspeed.compare and updates=N.")


# --------------------------------------------------------------------------- the axes
def _shape(shape: Any) -> tuple[int, ...]:
    try:
        s = tuple(shape)
    except TypeError:
        s = ()
    if not 1 <= len(s) <= 3 or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in s):
        raise input_error(f"compare_variants: shape must be 1 to 3 positive integers (the allocated extent, ghost "
                          f"layers included, the fastest in memory first), got {shape!r}.")
    return s


def _values(axis: str, given: Any, names: Mapping[str, str]) -> tuple[str, ...]:
    """The values of an axis, each checked and written by its canonical name, repeats dropped; () where none
    are given (the axis' default)."""
    if given is None:
        return ()
    items = [given] if isinstance(given, str) else list(given) if isinstance(given, Iterable) else [given]
    out: list[str] = []
    for item in items:
        key = item.lower() if isinstance(item, str) else None
        if key not in names:
            raise input_error(f"compare_variants: {axis} {item!r} is not one the plugin can generate; valid: "
                              f"{sorted(set(names))}.")
        if names[key] not in out:
            out.append(names[key])
    if not out:
        raise input_error(f"compare_variants: {axis}= is empty; give one or more of {sorted(set(names.values()))} "
                          "or leave it out.")
    return tuple(out)


def _streaming(given: Any) -> tuple[str, ...]:
    """The streaming patterns to compare: those named (the installed lbmpy's), else :data:`STREAMING`."""
    from lbmpy.advanced_streaming import utility

    valid = tuple(getattr(utility, "streaming_patterns", STREAMING))
    return _values("streaming", given, {p: p for p in valid}) or STREAMING


def _base_config(config: Any) -> Any:
    import pystencils as ps

    if config is None:
        return ps.CreateKernelConfig(target=ps.Target.CUDA, jit=ps.no_jit)
    if not isinstance(config, ps.CreateKernelConfig):
        raise input_error(f"compare_variants: config must be a pystencils CreateKernelConfig or None, got "
                          f"{type(config).__name__}.")
    if not config.get_target().is_gpu():
        raise input_error(f"compare_variants: config targets {config.get_target()}, not a GPU: give "
                          "target=ps.Target.CUDA (or leave config out).")
    return config.copy()


def option_names(config: Any, prefix: str = "") -> list[str]:
    """The options of a ``CreateKernelConfig`` a variant may vary, by name (a category's options as
    ``gpu.indexing_scheme``), the target and the JIT left out."""
    from pystencils.codegen.config import ConfigBase

    out = []
    for f in dataclasses.fields(config):
        value = getattr(config, f.name)
        if isinstance(value, ConfigBase):
            out += option_names(value, f"{prefix}{f.name}.")
        elif f"{prefix}{f.name}" not in FIXED_OPTIONS:
            out.append(f"{prefix}{f.name}")
    return out


def _config_options(options: Any, base: Any) -> dict[str, tuple]:
    """The option lists named, checked: each a config option (:func:`option_names`) with one or more values."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise input_error(f"compare_variants: options must be a dict of config option names to lists of values, "
                          f"e.g. {{'ghost_layers': [1, 2]}}, got {type(options).__name__}.")
    valid = option_names(base)
    out = {}
    for name, values in options.items():
        if name == "default_dtype":
            raise input_error("compare_variants: vary the element type with dtype=['float64', 'float32'] (it "
                              "declares the fields too), not options={'default_dtype': ...}.")
        if name not in valid:
            raise input_error(f"compare_variants: {name!r} is not an option of pystencils' CreateKernelConfig that a "
                              f"variant can vary; valid: {', '.join(valid)} (target and jit are fixed).")
        vals = (values,) if isinstance(values, str) or not isinstance(values, Iterable) else tuple(values)
        if not vals:
            raise input_error(f"compare_variants: options[{name!r}] is empty; give the values to compare.")
        out[name] = vals
    return out


def _with_options(base: Any, opts: Mapping[str, Any], dtype: str | None) -> Any:
    """A copy of ``base`` with the options set (``gpu.x`` in its category) and the element type."""
    cfg = base.copy()
    for name, value in opts.items():
        *path, leaf = name.split(".")
        target = cfg
        for part in path:
            target = getattr(target, part)
        try:
            setattr(target, leaf, value)
        except (ValueError, TypeError) as e:
            raise input_error(f"compare_variants: option {name}={value!r} is refused by pystencils: {e}") from None
    if dtype is not None:
        cfg.default_dtype = dtype
    return cfg


def _plain(value: Any) -> Any:
    """An option's value as JSON holds it: a number, string, bool or None as it is, an enum by its name, else
    its text."""
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return getattr(value, "name", None) or str(value)


def _name(values: Mapping[str, Any], varying: Sequence[str]) -> str:
    return ",".join(f"{k}={_plain(values[k])}" for k in varying)


# --------------------------------------------------------------------------- the variants
def _grid(axes: Mapping[str, tuple]) -> tuple[list[dict[str, Any]], list[str]]:
    """Every combination of the axes' values, and the axes with more than one value (which name a variant);
    an InputError where they make one variant only."""
    if math.prod(len(v) for v in axes.values()) < 2:
        raise input_error("compare_variants: the axes given make one variant only; give two or more values for "
                          "layout=, dtype=, streaming= (lbmpy) or an option of options=, e.g. "
                          "dtype=['float64', 'float32'].")
    keys = list(axes)
    combos = [dict(zip(keys, vals, strict=True)) for vals in itertools.product(*axes.values())]
    return combos, [k for k in keys if len(axes[k]) > 1]


def _kernel_variants(assignments: Any, base: Any, layouts: tuple[str, ...], dtypes: tuple[str, ...],
                     opts: dict[str, tuple]) -> list[Variant]:
    """The variants of pystencils assignments: layouts, element types and config options."""
    import pystencils as ps
    from pystencils.codegen import Kernel

    if isinstance(assignments, Kernel):
        raise input_error("compare_variants needs the assignments the kernel is generated from (each variant is "
                          "generated again), not a generated pystencils kernel.")
    if not isinstance(assignments, ps.AssignmentCollection | ps.Assignment | list | tuple):
        raise input_error(f"compare_variants: the definition must be pystencils assignments (a list of Assignments "
                          f"or an AssignmentCollection), an lbmpy LBMConfig or a catalog name such as 'd3q19-srt', "
                          f"got {type(assignments).__name__}.")
    if isinstance(assignments, ps.Assignment):
        assignments = [assignments]
    kernel, _ = as_kernel(assignments, base)  # checks the assignments (an InputError names what is wrong)
    if not layouts:
        indexed = any(f.index_dimensions for f in kernel.get_fields())
        layouts = ("fzyx", "zyxf") if indexed else (None,)
    axes = {"layout": layouts, "dtype": dtypes or (None,), **opts}
    combos, varying = _grid(axes)
    out = []
    for c in combos:
        name = _name(c, varying)
        cfg = _with_options(base, {k: c[k] for k in opts}, c["dtype"])
        rule = redeclared(assignments, c["layout"], c["dtype"])
        out.append(Variant(name, c, (rule,), (name,), cfg, _described_as(c["layout"]), 1))
    return out


def _described_as(layout: str | None) -> str | None:
    """The ``layout=`` a variant's fields are described and created with: a layout name as it is; a spatial
    order (``yxz``) None, the fields as declared (their index, if any, contiguous)."""
    return layout if layout in LAYOUTS else None


def _is_lbm(definition: Any) -> bool:
    if isinstance(definition, str):
        return True
    try:
        from lbmpy import LBMConfig
    except ImportError:
        return False
    return isinstance(definition, LBMConfig)


def lbm_config(name: str) -> Any:
    """The ``LBMConfig`` of an lbmpy catalog name: ``d3q19-srt``, ``lbm`` or ``lbm:stencil=S,method=M``
    (compressible, symbolic relaxation rates ``omega`` and for TRT ``omega_odd``, as the catalog builds it)."""
    entry, _, params = name.partition(":")
    if entry == "d3q19-srt":
        stencil, method = "D3Q19", "srt"
    elif entry == "lbm":
        stencil, method = "D3Q19", "srt"
    else:
        raise input_error(f"compare_variants: {name!r} is not an lbmpy method the plugin knows; give an LBMConfig, "
                          "'d3q19-srt' or 'lbm:stencil=D3Q19,method=srt' (stencil D2Q9|D3Q15|D3Q19|D3Q27, method "
                          f"{'|'.join(LBM_METHODS)}), or pystencils assignments.")
    for item in filter(None, params.split(",")):
        key, eq, value = item.partition("=")
        key = key.strip()
        if not eq or key not in ("stencil", "method") or entry != "lbm":
            what = "stencil and method (of 'lbm:')" if entry == "lbm" else "no parameters"
            raise input_error(f"compare_variants: {name!r}: {item!r} is not a parameter here; the name takes {what}, "
                              "and the layouts, streaming patterns and element types are the axes layout=, "
                              "streaming=, dtype=.")
        if key == "stencil":
            stencil = value.strip().upper()
        else:
            method = value.strip().lower()
    return lbm_method_config(stencil, method)


def lbm_method_config(stencil: str, method: str) -> Any:
    """The ``LBMConfig`` of an lbmpy stencil and method name as the catalog builds it (compressible, symbolic
    relaxation rates ``omega`` and for TRT ``omega_odd``)."""
    import sympy as sp
    from lbmpy import LBMConfig, LBStencil, Method, Stencil

    stencil, method = str(stencil).upper(), str(method).lower()
    if not stencil.startswith("D") or not hasattr(Stencil, stencil):
        raise input_error(f"compare_variants: unknown LBM stencil {stencil!r}; e.g. D2Q9, D3Q15, D3Q19, D3Q27.")
    if method not in LBM_METHODS:
        raise input_error(f"compare_variants: method must be one of {list(LBM_METHODS)}, got {method!r}.")
    rates: dict[str, Any] = {"relaxation_rate": sp.Symbol("omega")}
    if method == "trt":
        rates = {"relaxation_rates": [sp.Symbol("omega"), sp.Symbol("omega_odd")]}
    return LBMConfig(stencil=LBStencil(getattr(Stencil, stencil)), method=getattr(Method, method.upper()),
                     compressible=True, **rates)


def _lbm_method(definition: Any, lbm_optimisation: Any) -> tuple[Any, Any]:
    """The ``LBMConfig`` and ``LBMOptimisation`` a method's variants start from, checked."""
    from lbmpy import LBMConfig, LBMOptimisation

    cfg = lbm_config(definition) if isinstance(definition, str) else definition
    if not isinstance(cfg, LBMConfig):
        raise input_error(f"compare_variants: expected an LBMConfig, got {type(cfg).__name__}.")
    if cfg.kernel_type != "default_stream_collide":
        raise input_error(f"compare_variants: the LBMConfig's kernel_type is {cfg.kernel_type!r}; streaming variants "
                          "are stream-collide kernels: leave kernel_type at 'default_stream_collide'.")
    opt = lbm_optimisation if lbm_optimisation is not None else LBMOptimisation(cse_global=True)
    if not isinstance(opt, LBMOptimisation):
        raise input_error(f"compare_variants: lbm_optimisation must be an LBMOptimisation, got "
                          f"{type(opt).__name__}.")
    if opt.symbolic_field is not None or opt.symbolic_temporary_field is not None:
        raise input_error("compare_variants: lbm_optimisation's symbolic_field fixes the PDF fields; leave it out "
                          "so that each variant declares them in its layout and element type.")
    return cfg, opt


def _lbm_base(base: Any, opts: Mapping[str, Any]) -> Any:
    """The kernel config of an lbmpy variant: one ghost layer unless given, as lbmpy's create_lb_function (the
    even AA kernel reads no neighbour, and would otherwise sweep the ghost layer too)."""
    if "ghost_layers" not in opts and not base.is_option_set("ghost_layers"):
        base = base.copy()
        base.ghost_layers = 1
    return base


def _lbm_rules(cfg: Any, opt: Any, patterns: Sequence[str], base: Any,
               layouts: Sequence[str | None] = (None,)) -> dict[tuple[str, str | None], tuple[Any, ...]]:
    """Each streaming pattern's update rules (the even and odd ones of an in-place pattern) per layout, the
    collision rule derived once. A layout name is given to lbmpy (``field_layout``): lbmpy declares the PDF fields
    as its users get them, and as the catalog's measured kernels were built (the same code and registers; fields
    declared again by the plugin compile differently: 80 instead of 90 registers for D3Q19 SRT); a spatial order
    (None here) keeps lbmpy's default declaration, to be declared again in that order. Each rule's loads are put
    in one order (:func:`canonical_loads`), so that every run generates the same code."""
    import pystencils as ps
    from lbmpy import create_lb_collision_rule, create_lb_update_rule
    from lbmpy.advanced_streaming import Timestep, is_inplace

    try:
        collision = create_lb_collision_rule(lbm_config=cfg, lbm_optimisation=opt)
    except Exception as e:  # noqa: BLE001 - lbmpy refuses a method in many ways
        raise input_error(f"compare_variants: lbmpy could not derive the method: {type(e).__name__}: {e}") from None
    declared = ps.CreateKernelConfig(default_dtype=base.get_option("default_dtype"))  # the fields' element type
    rules = {}
    for p, lay in itertools.product(patterns, dict.fromkeys(layouts)):
        steps = (Timestep.EVEN, Timestep.ODD) if is_inplace(p) else (Timestep.BOTH,)
        opt_l = opt if lay is None else dataclasses.replace(opt, field_layout=lay)
        try:
            rules[p, lay] = tuple(canonical_loads(create_lb_update_rule(
                collision_rule=collision, lbm_config=dataclasses.replace(cfg, streaming_pattern=p, timestep=t),
                lbm_optimisation=opt_l, config=declared)) for t in steps)
        except Exception as e:  # noqa: BLE001 - lbmpy refuses a pattern in many ways
            raise input_error(f"compare_variants: lbmpy could not generate streaming {p!r} for this method: "
                              f"{type(e).__name__}: {e}") from None
    return rules


def canonical_loads(rule: Any) -> Any:
    """An lbmpy update rule with its loads in one order: lbmpy names the subexpressions that load the PDFs
    (``xi_1 = src[0,0,0](9)``, ...) in an order that changes from one run to the next until its disk cache holds
    the derivation, and pystencils emits them in that order, so the same method compiled to 126-154 registers
    (D3Q19, AA even step) and a comparison near an occupancy step changed its answer (docs/plugins.md). The
    loads that open the rule's subexpressions are sorted by field, offset and index and keep the names in their
    places, renamed everywhere they are read: the same method gives the same code in every run. A rule whose
    loads are not its first subexpressions (lbmpy's pull and push rules read the fields inside their
    expressions), or that loads one access twice, is returned as it is."""
    import sympy as sp
    from pystencils import Assignment, Field

    subs = list(rule.subexpressions)
    n = 0
    while n < len(subs) and isinstance(subs[n].lhs, sp.Symbol) and isinstance(subs[n].rhs, Field.Access):
        n += 1
    if n < 2 or any(isinstance(a.rhs, Field.Access) for a in subs[n:]):
        return rule

    def access(a: Any) -> tuple:  # a total order of distinct accesses, the same in every run
        return a.rhs.field.name, tuple(str(o) for o in a.rhs.offsets), tuple(str(i) for i in a.rhs.index)

    if len({access(a) for a in subs[:n]}) < n:  # one access loaded twice: no order tells its names apart
        return rule
    ordered = sorted(subs[:n], key=access)
    names = [a.lhs for a in subs[:n]]
    rename = {a.lhs: name for a, name in zip(ordered, names, strict=True)}
    head = [Assignment(name, a.rhs) for a, name in zip(ordered, names, strict=True)]
    tail = [Assignment(a.lhs, a.rhs.xreplace(rename)) for a in subs[n:]]
    main = [Assignment(a.lhs, a.rhs.xreplace(rename)) for a in rule.main_assignments]
    return rule.copy(main_assignments=main, subexpressions=head + tail)


def _lbm_variant(c: Mapping[str, Any], name: str, steps: tuple[Any, ...], base: Any,
                 opts: Mapping[str, tuple]) -> Variant:
    """The variant of the axes' values ``c`` from its streaming pattern's update rules."""
    labels = (name,) if len(steps) == 1 else (f"{name} (even)", f"{name} (odd)")
    cfg_v = _with_options(base, {k: c[k] for k in opts}, c["dtype"])
    again = None if c["layout"] in LAYOUTS else c["layout"]  # a layout name: lbmpy declared the fields in it
    return Variant(name, dict(c), tuple(redeclared(r, again, c["dtype"]) for r in steps), labels, cfg_v,
                   _described_as(c["layout"]), len(steps))


def lbm_variant(definition: Any, *, streaming: str = "pull", layout: str = "fzyx",
                dtype: str | None = None) -> Variant:
    """One variant of an lbmpy method (an ``LBMConfig`` or a catalog name as :func:`lbm_config` reads it),
    generated as ``compare_variants`` generates each: its kernels' update rules in launch order (the even and
    the odd time step of an in-place pattern), the config they are created with and the layout they are
    described in. The catalog's ``lbm:`` and ``d3q19-srt`` kernels are built from it. The values are checked
    as ``compare_variants`` checks its axes."""
    (pattern,) = _streaming(streaming)
    (lay,) = _values("layout", layout, LAYOUTS | ORDERS)
    (elem,) = _values("dtype", dtype, DTYPES) or (None,)
    cfg, opt = _lbm_method(definition, None)
    base = _lbm_base(_base_config(None), {})
    c = {"streaming": pattern, "layout": lay, "dtype": elem}
    rules = _lbm_rules(cfg, opt, (pattern,), base, (_lbmpy_layout(lay),))[pattern, _lbmpy_layout(lay)]
    return _lbm_variant(c, _name(c, list(c)), rules, base, {})


def _lbmpy_layout(layout: str | None) -> str | None:
    """The ``field_layout`` lbmpy declares a variant's PDF fields in: its layout name; None for a spatial order
    (declared again by the plugin)."""
    return layout if layout in LAYOUTS else None


def _lbm_variants(definition: Any, lbm_optimisation: Any, base: Any, patterns: tuple[str, ...],
                  layouts: tuple[str, ...], dtypes: tuple[str, ...], opts: dict[str, tuple]) -> list[Variant]:
    """The variants of an lbmpy method: each streaming pattern (the even and odd kernels of an in-place one),
    layout, element type and config option; the collision rule is derived once."""
    cfg, opt = _lbm_method(definition, lbm_optimisation)
    base = _lbm_base(base, opts)
    axes = {"streaming": patterns, "layout": layouts, "dtype": dtypes or (None,), **opts}
    combos, varying = _grid(axes)  # checked before lbmpy derives anything (seconds)
    rules = _lbm_rules(cfg, opt, patterns, base, tuple(_lbmpy_layout(lay) for lay in layouts))
    return [_lbm_variant(c, _name(c, varying), rules[c["streaming"], _lbmpy_layout(c["layout"])], base, opts)
            for c in combos]


def _described(rule: Any, label: str, v: Variant, shape: tuple[int, ...], registers: int | None, arch: str,
               made: dict[tuple, Any]) -> Any:
    """The warpspeed kernel of one kernel of a variant; pystencils generates each distinct code once (the
    layouts ``fzyx`` and ``zyxf`` declare the same spatial order: one kernel, described twice)."""
    import pystencils as ps
    from pystencils import Field

    items = rule.all_assignments if isinstance(rule, ps.AssignmentCollection) else rule
    fields = frozenset(a.field for x in items for a in x.atoms(Field.Access))
    others = tuple((k, repr(x)) for k, x in v.options.items() if k != "layout")
    key = (v.kernel_labels.index(label), others, fields)
    if key not in made:
        made[key] = as_kernel(rule, v.config)
    return describe_kernel(rule, shape, layout=v.layout, registers=registers, name=label, arch=arch,
                           config=v.config, made=made[key])
