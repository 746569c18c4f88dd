"""Kernels of the paper as pystencils / lbmpy assignments, and the catalog entries warpspeed lists.

``star_stencil`` (the range-r star, 3D25pt for r=4), ``lbm_d3q19_srt`` (and the general ``lbm_update_rule``)
and ``allen_cahn_d3q15`` (the conservative Allen-Cahn interface-tracking LBM of
``lbmpy.phasefield_allen_cahn``) return what ``describe`` accepts. ``catalog_entries()`` offers them to
``warpspeed.kernels`` (names ``d3q19-srt``, ``d3q15-allen-cahn``, ``lbm``): built on first use, by lbmpy. The
LBM entries name the variants ``compare_variants`` generates (streaming pattern, time step of an in-place one,
layout, element type), each built as that variant (``_variants.lbm_variant``).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from typing import Any

from . import _cache
from ._describe import describe_spec
from ._errors import input_error
from ._program import cuda_program
from ._variants import DTYPES, LBM_METHODS, STREAMING, lbm_method_config

#: Registers per thread measured with nvcc (CUDA 13, -arch=sm_80) on these kernels; used by the catalog
#: entries only where neither nvcc nor its cached result is available (describe() warns in that case).
MEASURED_REGISTERS_SM80 = {"d3q19-srt": 90, "d3q15-allen-cahn": 94}

_DTYPES = {"float64": "double", "double": "double", "fp64": "double",
           "float32": "float", "float": "float", "fp32": "float"}
_STREAMING = ("pull", "push")
LBM_DOMAIN = (256, 256, 256)


def star_stencil(range_: int = 4, dims: int = 3, dtype: str = "float64", *, layout: str = "fzyx") -> list:
    """``dst = (src[0] + sum of the 2*dims*range_ neighbours at distance 1..range_) / npoints``.

    One multiplication by the constant weight and ``npoints - 1`` additions per cell, like the hand-written
    ``star3d-r4`` (range 4, 3D: the paper's 3D25pt). Fields ``src``, ``dst`` (generic size, ``layout``).
    """
    import pystencils as ps
    import sympy as sp

    if isinstance(range_, bool) or not isinstance(range_, int) or range_ < 0:
        raise input_error(f"star_stencil: range_ must be a non-negative integer, got {range_!r}.")
    if dims not in (1, 2, 3):
        raise input_error(f"star_stencil: dims must be 1, 2 or 3, got {dims!r}.")
    if dtype not in _DTYPES:
        raise input_error(f"star_stencil: dtype must be one of {sorted(_DTYPES)}, got {dtype!r}.")
    src, dst = ps.fields(f"src, dst: {_DTYPES[dtype]}[{dims}D]", layout=layout)
    terms = [src.center]
    for axis, dist in itertools.product(range(dims), range(1, range_ + 1)):
        terms += [src.neighbor(axis, -dist), src.neighbor(axis, dist)]
    rhs = sp.Mul(sp.Rational(1, len(terms)), sp.Add(*terms), evaluate=False) if len(terms) > 1 else terms[0]
    return [ps.Assignment(dst.center, rhs)]


def lbm_update_rule(stencil: str = "D3Q19", method: str = "srt", *, layout: str = "fzyx", streaming: str = "pull",
                    compressible: bool = True) -> Any:
    """An lbmpy two-grid update rule (fields ``src`` -> ``dst``), stream and collide in one kernel.

    ``streaming="pull"`` loads the neighbours' populations at ``(-c_f, f)`` and stores at ``(0, f)``;
    ``"push"`` the reverse. ``layout`` is the lbmpy field layout (``fzyx`` = structure of arrays).
    """
    import dataclasses

    from lbmpy import LBMOptimisation, create_lb_update_rule

    st = _stencil_name(stencil)
    m = str(method).lower()
    if m not in LBM_METHODS:
        raise input_error(f"lbm_update_rule: method must be one of {list(LBM_METHODS)}, got {method!r}.")
    if streaming not in _STREAMING:
        raise input_error(f"lbm_update_rule: streaming must be 'pull' or 'push', got {streaming!r}.")
    cfg = dataclasses.replace(lbm_method_config(st, m), compressible=compressible, streaming_pattern=streaming)
    return create_lb_update_rule(lbm_config=cfg, lbm_optimisation=LBMOptimisation(cse_global=True,
                                                                                  field_layout=layout))


def _stencil_name(stencil: str) -> str:
    from lbmpy import Stencil

    st = str(stencil).upper()
    if not st.startswith("D") or not hasattr(Stencil, st):
        raise input_error(f"unknown LBM stencil {stencil!r}; e.g. D2Q9, D3Q15, D3Q19, D3Q27.")
    return st


def lbm_d3q19_srt(layout: str = "fzyx", streaming: str = "pull") -> Any:
    """The D3Q19 single-relaxation-time LBM update rule (compressible, symbolic ``omega``)."""
    return lbm_update_rule("D3Q19", "srt", layout=layout, streaming=streaming)


def allen_cahn_d3q15(layout: str = "fzyx", *, mobility: float = 0.02, interface_thickness: int = 5) -> Any:
    """The conservative Allen-Cahn phase-field (interface-tracking) LBM step of the paper, MRT on D3Q15.

    Stream-pull-collide on ``lb_phase_field`` -> ``lb_phase_field_tmp`` with the interface-tracking force
    from ``phase_field`` (its isotropic gradient: 15 cells) and the velocity ``vel_field`` as input; the new
    phase field is written to ``phase_field_tmp``. Built with ``lbmpy.phasefield_allen_cahn``.
    """
    import pystencils as ps
    import sympy as sp
    from lbmpy import LBMConfig, LBMOptimisation, LBStencil, Method, Stencil, create_lb_update_rule
    from lbmpy.phasefield_allen_cahn.kernel_equations import (
        add_interface_tracking_force,
        interface_tracking_force,
    )
    from lbmpy.phasefield_allen_cahn.parameter_calculation import AllenCahnParameters

    stencil = LBStencil(Stencil.D3Q15)
    q, d = stencil.Q, stencil.D
    vel = ps.fields(f"vel_field({d}): double[{d}D]", layout=layout)
    phi, phi_tmp = ps.fields(f"phase_field, phase_field_tmp: double[{d}D]", layout=layout)
    h, h_tmp = ps.fields(f"lb_phase_field({q}), lb_phase_field_tmp({q}): double[{d}D]", layout=layout)
    params = AllenCahnParameters(density_heavy=1.0, density_light=0.001, dynamic_viscosity_heavy=0.03,
                                 dynamic_viscosity_light=0.03, surface_tension=1e-4, mobility=mobility,
                                 interface_thickness=interface_thickness)
    omega_phi = 1 / (sp.Rational(1, 2) + 3 * params.symbolic_mobility)
    rates = [0] + [omega_phi] * d + [1] * (q - d - 1)
    cfg = LBMConfig(stencil=stencil, method=Method.MRT, compressible=True, delta_equilibrium=False,
                    force=sp.symbols(f"F_:{d}"), velocity_input=vel, weighted=True, relaxation_rates=rates,
                    output={"density": phi_tmp}, kernel_type="stream_pull_collide")
    rule = create_lb_update_rule(lbm_config=cfg,
                                 lbm_optimisation=LBMOptimisation(symbolic_field=h, symbolic_temporary_field=h_tmp))
    rule = add_interface_tracking_force(rule, interface_tracking_force(phi, stencil, params))
    return rule.new_with_substitutions(params.parameter_map())


# --------------------------------------------------------------------------- catalog entries
def _domain(domain: Sequence[int] | None, dims: int = 3) -> tuple[int, ...]:
    d = tuple(domain) if domain is not None else LBM_DOMAIN[:dims]
    while len(d) > dims and d[-1] == 1:  # warpspeed's 3D form of a 2D domain: (nx, ny, 1)
        d = d[:-1]
    if len(d) != dims or any(isinstance(n, bool) or not isinstance(n, int) or n < 1 for n in d):
        raise input_error(f"this LBM catalog kernel is {dims}D: domain must be {dims} positive integers, "
                          f"got {domain!r}.")
    return d


@functools.lru_cache(maxsize=8)
def _rule(name: str, key: tuple) -> tuple[Any, str | None, Any]:
    """The assignments of a catalog kernel, the layout it is described in and its ``CreateKernelConfig`` (None:
    pystencils' default). An LBM kernel is the variant ``compare_variants`` generates for the same options
    (one time step of an in-place streaming pattern)."""
    p = dict(key)
    if name == "d3q15-allen-cahn":
        return allen_cahn_d3q15(**p), p["layout"], None
    from ._variants import lbm_method_config, lbm_variant

    v = lbm_variant(lbm_method_config(p["stencil"], p["method"]), streaming=p["streaming"], layout=p["layout"],
                    dtype=p["dtype"])
    return v.rules[1 if p["timestep"] == "odd" else 0], v.layout, v.config


@functools.lru_cache(maxsize=16)
def _built(name: str, key: tuple, domain: tuple[int, ...]) -> Any:
    """The warpspeed kernel of a catalog entry; its description is cached on disk across runs (building it
    through lbmpy and pystencils costs seconds), keyed on everything it depends on."""
    import warpspeed

    from ._registers import find_nvcc  # subprocess and friends: imported where a kernel is built

    ck = _cache.content_key("catalog", name, key, domain, _cache.code_version(), find_nvcc() is not None)
    spec = _cache.read_json("kernels", ck)
    if isinstance(spec, dict):
        try:
            return warpspeed.kernel_from_dict(spec, source=f"pystencils:{name}")
        except warpspeed.InputError:
            pass  # a damaged entry: build again
    shape = tuple(n + 2 for n in domain)  # one ghost layer
    rule, layout, config = _rule(name, key)
    as_measured = dict(key).get("dtype", "float64") == "float64" and dict(key).get("timestep", "both") == "both"
    spec = describe_spec(rule, shape, layout=layout, name=name, config=config,
                          fallback_registers=MEASURED_REGISTERS_SM80.get(name) if as_measured else None)
    _cache.write_json("kernels", ck, spec)
    return warpspeed.kernel_from_dict(spec, source=f"pystencils:{name}")


def _program(name: str, key: tuple, domain: tuple[int, ...]) -> Any:
    """pystencils' CUDA code of a catalog kernel (``warpspeed measure``), on the arrays ``_built`` models."""
    rule, layout, config = _rule(name, key)
    return cuda_program(rule, tuple(n + 2 for n in domain), layout=layout, name=name, config=config)


#: the layout names pystencils and lbmpy accept (``fzyx``/``soa``/``f``/``reverse_numpy``: structure of arrays,
#: ``zyxf``/``aos``/``c``/``numpy``: the populations of a cell together)
_LAYOUTS = ("fzyx", "zyxf", "soa", "aos", "f", "reverse_numpy", "c", "numpy")


#: the streaming patterns of the catalog's LBM kernels; ``aa`` and ``esotwist`` are in place: one kernel per
#: time step (``timestep=even|odd``), compared as the pair ``...,timestep=even+...,timestep=odd@2``
_IN_PLACE = ("aa", "esotwist")
#: ``both``: the one kernel of pull and push streaming (lbmpy's ``Timestep.BOTH``)
_TIMESTEPS = ("both", "even", "odd")
#: the element types of the catalog's LBM kernels (``float64`` the default), and their other names


def _checked_parameters(entry: str, layout: Any, streaming: Any = "pull", method: Any = "srt",
                        timestep: Any = "both", dtype: Any = "float64") -> None:
    """A catalog entry's parameters, checked before lbmpy builds anything (that costs seconds)."""
    if not isinstance(layout, str) or layout.lower() not in _LAYOUTS:
        raise input_error(f"{entry}: layout must be one of {list(_LAYOUTS)}, got {layout!r}.")
    if streaming not in STREAMING:
        raise input_error(f"{entry}: streaming must be one of {list(STREAMING)}, got {streaming!r}.")
    if str(method).lower() not in LBM_METHODS:
        raise input_error(f"{entry}: method must be one of {list(LBM_METHODS)}, got {method!r}.")
    if timestep not in _TIMESTEPS:
        raise input_error(f"{entry}: timestep must be one of {list(_TIMESTEPS[1:])} (with streaming=aa or "
                          f"esotwist), got {timestep!r}.")
    if not isinstance(dtype, str) or dtype.lower() not in DTYPES:
        raise input_error(f"{entry}: dtype must be one of {list(DTYPES)}, got {dtype!r}.")
    if streaming in _IN_PLACE and timestep == "both":
        raise input_error(f"{entry}: streaming={streaming} is in place, one kernel per time step: add "
                          f"timestep=even or timestep=odd (compare the pair as one candidate: "
                          f"'{entry}:streaming={streaming},timestep=even+{entry}:streaming={streaming},"
                          "timestep=odd@2').")
    if streaming not in _IN_PLACE and timestep != "both":
        raise input_error(f"{entry}: timestep={timestep} is a time step of the in-place streaming patterns "
                          f"{list(_IN_PLACE)}; streaming={streaming} is one kernel: leave timestep out.")


def _lbm_parameters(entry: str, stencil: str, method: str, layout: str, streaming: str, timestep: str,
                    dtype: str) -> tuple:
    _checked_parameters(entry, layout, streaming, method, timestep, dtype)
    return (("stencil", _stencil_name(stencil)), ("method", str(method).lower()), ("layout", layout),
            ("streaming", streaming), ("timestep", timestep), ("dtype", DTYPES[dtype.lower()]))


def _d3q19_key(layout: str, streaming: str, timestep: str, dtype: str) -> tuple:
    return _lbm_parameters("d3q19-srt", "D3Q19", "srt", layout, streaming, timestep, dtype)


def _lbm_key(stencil: str, method: str, layout: str, streaming: str, timestep: str,
             dtype: str) -> tuple[str, tuple, int]:
    key = _lbm_parameters("lbm", stencil, method, layout, streaming, timestep, dtype)
    st, m = dict(key)["stencil"], dict(key)["method"]
    return f"{st.lower()}-{m}", key, int(st[1])


def build_d3q19_srt(layout: str = "fzyx", streaming: str = "pull", timestep: str = "both", dtype: str = "float64",
                    domain: Sequence[int] | None = None) -> Any:
    return _built("d3q19-srt", _d3q19_key(layout, streaming, timestep, dtype), _domain(domain))


def program_d3q19_srt(layout: str = "fzyx", streaming: str = "pull", timestep: str = "both",
                      dtype: str = "float64", domain: Sequence[int] | None = None) -> Any:
    return _program("d3q19-srt", _d3q19_key(layout, streaming, timestep, dtype), _domain(domain))


def build_lbm(stencil: str = "D3Q19", method: str = "srt", layout: str = "fzyx", streaming: str = "pull",
              timestep: str = "both", dtype: str = "float64", domain: Sequence[int] | None = None) -> Any:
    name, key, dims = _lbm_key(stencil, method, layout, streaming, timestep, dtype)
    return _built(name, key, _domain(domain, dims))


def program_lbm(stencil: str = "D3Q19", method: str = "srt", layout: str = "fzyx", streaming: str = "pull",
                timestep: str = "both", dtype: str = "float64", domain: Sequence[int] | None = None) -> Any:
    name, key, dims = _lbm_key(stencil, method, layout, streaming, timestep, dtype)
    return _program(name, key, _domain(domain, dims))


def build_allen_cahn(layout: str = "fzyx", domain: Sequence[int] | None = None) -> Any:
    _checked_parameters("d3q15-allen-cahn", layout)
    return _built("d3q15-allen-cahn", (("layout", layout),), _domain(domain))


def program_allen_cahn(layout: str = "fzyx", domain: Sequence[int] | None = None) -> Any:
    _checked_parameters("d3q15-allen-cahn", layout)
    return _program("d3q15-allen-cahn", (("layout", layout),), _domain(domain))


def catalog_entries() -> list:
    """Entries for ``warpspeed.kernels`` (cheap: nothing is built until an entry is used)."""
    from warpspeed.plugin_api import CatalogEntry

    return [
        CatalogEntry("d3q19-srt", "lbmpy D3Q19 SRT LBM, stream+collide in one kernel (pystencils plugin; "
                     "streaming pull|push on two grids or aa|esotwist in place, one kernel per timestep even|odd; "
                     "layout fzyx|zyxf, dtype float64|float32)", build_d3q19_srt,
                     {"layout": "fzyx", "streaming": "pull", "timestep": "both", "dtype": "float64"},
                     program_d3q19_srt),
        CatalogEntry("d3q15-allen-cahn", "lbmpy conservative Allen-Cahn interface tracking, MRT D3Q15 "
                     "(the paper's phase-field kernel; pystencils plugin)", build_allen_cahn, {"layout": "fzyx"},
                     program_allen_cahn),
        CatalogEntry("lbm", "lbmpy LBM update rule (pystencils plugin): stencil D2Q9|D3Q15|D3Q19|D3Q27, "
                     "method srt|trt|mrt|cumulant, streaming pull|push|aa|esotwist (the in-place aa, esotwist: "
                     "timestep even|odd), layout fzyx|zyxf, dtype float64|float32", build_lbm,
                     {"stencil": "D3Q19", "method": "srt", "layout": "fzyx", "streaming": "pull", "timestep": "both",
                      "dtype": "float64"}, program_lbm),
    ]
