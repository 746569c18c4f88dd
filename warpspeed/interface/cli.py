"""The ``warpspeed`` command line: estimate, devices, kernels.

Exit status 0 on success, 2 on bad input (one paragraph on stderr, no traceback), 1 on internal errors.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import sys
import textwrap

from ..errors import InputError
from ..progress import progress_bar
from ..schemas import SCHEMA_VERSION


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as InputError (exit 2 with one paragraph)."""

    def error(self, message: str):
        raise InputError(f"{self.prog}: {message}")


def _ints(text: str, what: str) -> tuple[int, ...]:
    parts = [p.strip() for p in text.replace("x", ",").split(",")]
    if not 1 <= len(parts) <= 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise InputError(f"{what} '{text}' is malformed: give 1 to 3 positive integers X,Y,Z such as 32,4,8.")
    return tuple(int(p) for p in parts)


def _parser() -> argparse.ArgumentParser:
    from .._version import __version__

    p = _Parser(prog="warpspeed", description="Analytic GPU performance estimates for stencil kernels.")
    p.add_argument("--version", action="version", version=f"warpspeed {__version__}")
    sub = p.add_subparsers(dest="verb", required=True, parser_class=_Parser)
    _estimate_options(sub.add_parser("estimate", help="estimate one launch configuration"))
    _rank_options(sub.add_parser("rank", help="rank block sizes and foldings for a kernel on a device"))
    _whatif_options(sub.add_parser("whatif", help="sweep one device key and follow the best configuration"))
    _project_options(sub.add_parser("project", help="project a kernel from one GPU to another (analytic, "
                                                    "measured or hybrid)"))
    _compare_options(sub.add_parser("compare", help="rank candidate kernels (or sequences of kernels) that do the "
                                                    "same work, each at its best block"))
    pl = sub.add_parser("plot", help="plot a roofline, ranking, what-if sweep, projection or the devices for a "
                                     "kernel (PNG, SVG or PDF)")
    kinds = pl.add_subparsers(dest="plot", required=True, parser_class=_Parser)
    for kind, options, text in (("roofline", _estimate_options, "hierarchical roofline of one configuration"),
                                ("ranking", _rank_options, "GLup/s per configuration, by limiter and block"),
                                ("whatif", _whatif_options, "best GLup/s over a swept device key"),
                                ("projection", _project_options, "per-limiter bars of two GPUs"),
                                ("devices", _plot_devices_options, "the kernel's best GLup/s on each device (which "
                                                                   "GPU), with its validation")):
        k = kinds.add_parser(kind, help=text)
        options(k, plot=True)
        if kind == "ranking":  # --top counts the chart's bars here, not the table's rows
            top = next(act for act in k._actions if act.dest == "top")
            top.type, top.metavar = _plot_top, "N|all"
            top.help = ("bars of the chart: the best N configurations, each labelled with its block and folding "
                        "(default 40; the title says 'best N of M shown'); 'all' draws every configuration "
                        "(the chart widens with their number)")
        k.add_argument("--output", "-o", required=True, metavar="FILE", help="FILE.png, FILE.svg or FILE.pdf")
    ms = sub.add_parser("measure", help="time configurations on this machine's NVIDIA GPU (cupy; optional ncu)")
    ms.add_argument("kernel", help="kernel TOML file or catalog name")
    ms.add_argument("--device", required=True, help="the warpspeed device id the GPU is compared with")
    ms.add_argument("--threads", default="1024", help="threads per block, N[,N...] (default 1024)")
    ms.add_argument("--folding", action="extend", nargs="+", metavar="X,Y,Z",
                    help="thread folding (repeatable, or several after one flag)")
    ms.add_argument("--domain", help="iteration space X,Y,Z (default: the kernel's)")
    ms.add_argument("--block", action="extend", nargs="+", metavar="X,Y,Z",
                    help="explicit blocks (repeatable, or several after one flag) instead of --threads")
    ms.add_argument("--repeats", type=int, default=20, help="timed launches per configuration (default 20)")
    ms.add_argument("--warmup", type=int, default=3, help="untimed launches first (default 3)")
    ms.add_argument("--ncu", action="store_true", help="also collect Nsight Compute counters (slower)")
    ms.add_argument("--ncu-every", type=int, default=1, metavar="K",
                    help="with --ncu: profile every K-th configuration of the sweep only (default 1: all)")
    ms.add_argument("--ncu-metrics", metavar="NAME[,NAME...]",
                    help="with --ncu: more Nsight Compute metrics to collect in the same run (e.g. "
                         "lts__t_requests_srcunit_tex_op_write.sum), written to --ncu-output")
    ms.add_argument("--ncu-output", metavar="FILE.csv",
                    help="with --ncu-metrics: where their values go, one row per configuration and metric "
                         "(kernel, block, folding, domain, metric, value; appended to)")
    from ..frontends import program_codes

    codes = program_codes()  # auto, the front ends' own programs, warpspeed's generated code
    own = " or ".join(codes[1:-1]) or "front end's"
    ms.add_argument("--code", choices=codes, default="auto",
                    help=f"CUDA source: the kernel's own {own} code (plugin kernels, folding 1,1,1), warpspeed's "
                         f"code generated from the model's accesses (any folding), or auto ({own} where it can)")
    ms.add_argument("--output", "-o", required=True, metavar="FILE.csv", help="measurement CSV (appended to)")
    va = sub.add_parser("validate", help="compare measured runs (a measurement CSV, or a kernel_tuner cache or T4 "
                                         "results file) with the estimates")
    va.add_argument("file", metavar="FILE.csv|FILE.json", help="a measurement CSV, or a kernel_tuner cache file or "
                                                               "T4 results file (.json; docs/kernel-tuner.md)")
    va.add_argument("--plot", metavar="FILE", help="predicted-vs-measured plot per level (.png, .svg, .pdf)")
    va.add_argument("--format", choices=("text", "json"), default="text")
    va.add_argument("--device", metavar="FILE|ID", help="estimate every row on this device (id or device TOML, "
                                                         "e.g. a calibrated file) instead of the device each row "
                                                         "names; the rows must come from one device")
    _model_option(va)
    kt = va.add_argument_group("kernel_tuner files (.json), where the file's warpspeed header does not say")
    kt.add_argument("--kernel", help="the warpspeed kernel the file measured (catalog name or TOML); where the "
                    "file names one, it must load the same kernel")
    kt.add_argument("--domain", metavar="X,Y,Z", help="its domain, one extent per dimension of the kernel "
                    "(default: kernel_tuner's problem_size, which often counts the halos: this option wins over it)")
    kt.add_argument("--block-names", metavar="X,Y,Z", help="the parameters of the block extents (default "
                    "block_size_x,block_size_y,block_size_z; '-' for an axis that is not tuned; a list that starts "
                    "with '-' needs '=': --block-names=-,by,bz)")
    kt.add_argument("--folding-names", metavar="X,Y,Z", help="the parameters of the thread folding (default "
                    "folding_x,folding_y,folding_z; '-' for none; a list that starts with '-' needs '=': "
                    "--folding-names=-,fy,-)")
    kt.add_argument("--select", action="append", metavar="NAME=VALUE", help="keep the entries whose other parameter "
                    "NAME has this value (warpspeed compares one time per block and folding); repeatable")
    ca = sub.add_parser("calibrate", help="fit the hit-rate curves of a device to measured volumes, and its "
                                          "DRAM bandwidth to measured streaming (copy) rows")
    ca.add_argument("file", metavar="FILE.csv", nargs="+", help="one or more measurement CSVs (their rows are "
                                                                 "pooled)")
    ca.add_argument("--device", required=True, action="append", help="the device whose rows are fitted (id or "
                    "device TOML); repeat it to fit one set of curves to the pooled rows of GPUs of one "
                    "architecture (each device gets its own file and DRAM bandwidth)")
    ca.add_argument("--output", "-o", metavar="FILE.toml", help="device file to write (default: "
                                                               "<device>-calibrated.toml); with several devices, "
                                                               "the folder to write their files in")
    ca.add_argument("--plot", metavar="FILE", help="observed hit rates and the curves (.png, .svg, .pdf)")
    ca.add_argument("--format", choices=("text", "json"), default="text")
    d = sub.add_parser("devices", help="list, show or validate device descriptions; rank the devices for a kernel "
                                       "(which GPU); list host links")
    d.add_argument("action", nargs="?", default="list", choices=("list", "show", "validate", "rank", "links"))
    d.add_argument("target", nargs="?", help="device id (show), TOML file (validate) or kernel TOML file or catalog "
                                             "name (rank)")
    d.add_argument("--format", choices=("text", "json", "csv"), default="text",
                   help="text (default; for show: a listing in the keys of device files and --set, with units "
                        "and sources), json (the device description, for scripts) or csv (rank only)")
    _device_rank_options(d.add_argument_group("devices rank KERNEL: the kernel's best configuration on each "
                                              "device, fastest first"))
    sv = sub.add_parser("serve", help="a local web page: type a kernel, pick a GPU and its overrides, see the "
                                      "estimate or a ranking (needs the 'web' extra)")
    sv.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine "
                                                        "only; another one is open to the network, with a warning)")
    sv.add_argument("--port", type=int, default=8765, help="port (default 8765; 0 picks a free one)")
    sv.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                    help="a further name the page may be asked under (a DNS name of this machine, a proxy's; "
                         "repeatable): requests naming another host are refused")
    k = sub.add_parser("kernels", help="list the kernel catalog; `kernels show NAME` prints a shipped kernel's "
                                       "TOML (a template for your own)")
    k.add_argument("action", nargs="?", choices=("list", "show"), default="list")
    k.add_argument("name", nargs="?", help="with show: a catalog name that has a TOML file (e.g. star3d-r4)")
    k.add_argument("--format", choices=("text", "json"), default="text")
    return p


def _model_option(p) -> None:
    from ..model.performance import DEFAULT_MODEL, MODELS

    p.add_argument("--model", choices=MODELS, default=DEFAULT_MODEL,
                   help=f"performance model: latency (roofline limits + memory parallelism + DRAM runs; the "
                        f"default) or roofline (the paper's four limiters) (default {DEFAULT_MODEL})")


def _device_rank_options(g) -> None:
    """The options of ``devices rank`` and ``plot devices``."""
    g.add_argument("--device", action="append", metavar="ID|FILE",
                   help="a device to rank (repeatable; default: every shipped device)")
    g.add_argument("--threads", help="threads per block, N[,N...] (default 1024, or on a device where 1024 cannot "
                                     "launch the largest power of two that can)")
    g.add_argument("--folding", action="extend", nargs="+", metavar="X,Y,Z",
                   help="thread folding (repeatable; default 1,1,1)")
    g.add_argument("--domain", help="iteration space X,Y,Z (default: the kernel's)")
    g.add_argument("--registers", type=int, help="registers per thread (default: the kernel's)")
    g.add_argument("--jobs", type=int, help="worker processes, each ranking devices of one SM count and per-SM "
                                            "limits (default: all cores; 1 = in this process)")
    _model_option(g)


def _plot_devices_options(p, plot: bool = True) -> None:
    p.add_argument("kernel", help="kernel TOML file or catalog name")
    _device_rank_options(p)


def _estimate_options(e, plot: bool = False) -> None:
    """The options of estimate (and of plot roofline, ``plot``: without the text/JSON format and time view)."""
    e.add_argument("kernel", help="kernel TOML file or catalog name (see `warpspeed kernels`)")
    e.add_argument("--device", required=True, help="device id (see `warpspeed devices`) or device TOML")
    e.add_argument("--block", required=True, help="thread block X,Y,Z")
    e.add_argument("--folding", default="1,1,1", help="thread folding X,Y,Z (default 1,1,1)")
    e.add_argument("--domain", help="iteration space X,Y,Z (default: the kernel's)")
    e.add_argument("--registers", type=int, help="registers per thread (default: the kernel's)")
    e.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="device override, e.g. l2_size=80MiB (repeatable)")
    _model_option(e)
    if not plot:
        e.add_argument("--format", choices=("text", "json"), default="text")
        _time_options(e)


def _rank_options(r, plot: bool = False) -> None:
    r.add_argument("kernel", help="kernel TOML file or catalog name")
    r.add_argument("--device", required=True, action="append",
                   help="device id or device TOML (repeatable: one ranking per device)")
    r.add_argument("--threads", help="threads per block, N[,N...] (default 1024, or the largest power of two "
                                      "that can launch when 1024 cannot)")
    r.add_argument("--folding", action="extend", nargs="+", metavar="X,Y,Z",
                   help="thread folding (repeatable; default 1,1,1); the paper's space: 1,1,1 1,2,1 1,1,2")
    r.add_argument("--domain", action="append",
                   help="iteration space X,Y,Z (repeatable: domains are part of the space; default: the kernel's)")
    r.add_argument("--registers", type=int, help="registers per thread (default: the kernel's)")
    r.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="device override")
    r.add_argument("--top", type=int, help="rows of the text table (default 10)")
    r.add_argument("--jobs", type=int, help="worker processes (default: all cores; never more than the cores or "
                   "the configurations; 1 = in this process)")
    r.add_argument("--cache", help="JSON-lines file of finished configurations: resume an interrupted sweep")
    r.add_argument("--screen", type=int, metavar="N",
                   help="rank only the N best exactly: configurations whose upper bound (from their L1 and L2 "
                        "volumes alone) is below the N-th best are listed as bounded, not estimated in full "
                        "(faster; in this process)")
    if not plot:
        r.add_argument("--format", choices=("text", "json", "csv"), default="text")
    _model_option(r)


def _whatif_options(w, plot: bool = False) -> None:
    w.add_argument("kernel", help="kernel TOML file or catalog name")
    w.add_argument("--device", required=True, help="base device id or device TOML")
    w.add_argument("--sweep", required=True, metavar="KEY=START:STOP:N[:log] | KEY=V1,V2,...",
                   help="the device key to vary, e.g. l2_size=10MiB:160MiB:5:log")
    _space_options(w, plot)


def _project_options(pj, plot: bool = False) -> None:
    pj.add_argument("kernel", help="kernel TOML file or catalog name")
    pj.add_argument("--from", dest="source", required=True, help="source device id or TOML")
    pj.add_argument("--to", dest="target", required=True, help="target device id or TOML")
    _space_options(pj, plot)
    pj.add_argument("--set-from", action="append", default=[], metavar="KEY=VALUE",
                    help="override on the source device (--set changes the target)")
    m = pj.add_argument_group("measured source run (seed-002 projection; any of these switches it on)")
    m.add_argument("--ncu", metavar="FILE.csv", help="ncu --csv --page raw export of the run on the source GPU")
    m.add_argument("--ncu-kernel", metavar="NAME", help="the kernel's rows when the CSV holds several kernels")
    m.add_argument("--measured-time", metavar="TIME", help="kernel time on the source, e.g. 1.8ms")
    m.add_argument("--measured-bytes", metavar="L1,L2,DRAM",
                   help="bytes moved at L1 (requests), L2 (L2<->L1) and DRAM, e.g. 9GB,3.1GB,1.2GB")
    m.add_argument("--measured-fp", metavar="FMA,ADD,MUL", help="FP instruction counts (thread level)")
    m.add_argument("--warp-usage", type=float, metavar="F", help="active threads per warp instruction / warp size")
    m.add_argument("--mode", choices=("measured", "hybrid"), default="hybrid",
                   help="hybrid (default): the target's operational intensities from warpspeed's volumes there; "
                        "measured: the source's")
    if not plot:
        _time_options(pj)


def _compare_options(c) -> None:
    c.add_argument("candidate", nargs="+", help="a kernel (catalog name or TOML file), or a sequence of kernels "
                   "launched in turn joined by '+', with '@N' for the updates of the domain they make together "
                   "(e.g. aa-even.toml+aa-odd.toml@2; without '@N': one update, and the domains must match)")
    c.add_argument("--device", required=True, help="device id or device TOML")
    c.add_argument("--threads", help="threads per block, N[,N...] (default 1024, or for a kernel that cannot launch "
                                      "them the largest power of two that can)")
    c.add_argument("--folding", action="extend", nargs="+", metavar="X,Y,Z",
                   help="thread folding (repeatable; default 1,1,1)")
    c.add_argument("--domain", help="iteration space X,Y,Z of every kernel (default: each kernel's)")
    c.add_argument("--registers", type=int, help="registers per thread (default: each kernel's)")
    c.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="device override")
    c.add_argument("--format", choices=("text", "json", "csv"), default="text")
    _model_option(c)


def _space_options(p, plot: bool = False) -> None:
    """Options shared by the verbs that rank a configuration space for each device they look at (a plot of
    them has no --format: it writes the file --output names)."""
    p.add_argument("--threads", default="1024", help="threads per block, N[,N...] (default 1024)")
    p.add_argument("--folding", action="extend", nargs="+", metavar="X,Y,Z",
                   help="thread folding (repeatable, or several after one flag)")
    p.add_argument("--domain", help="iteration space X,Y,Z (default: the kernel's)")
    p.add_argument("--registers", type=int, help="registers per thread (default: the kernel's)")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", help="device override")
    p.add_argument("--jobs", type=int, help="worker processes (default: all cores; never more than the cores or "
                   "the configurations)")
    if not plot:
        p.add_argument("--format", choices=("text", "json"), default="text")
    _model_option(p)


def _time_options(p) -> None:
    """The time view (whole run with host <-> device copies), shared by estimate and project."""
    t = p.add_argument_group("time view (set any of these to see the whole-run time)")
    t.add_argument("--iterations", type=int, metavar="N", help="sweeps over the domain (default 1)")
    t.add_argument("--link", metavar="ID|BW", help="host link: pcie3-x16, pcie4-x16 (default), pcie5-x16, "
                                                    "nvlink-c2c or a bandwidth per direction such as 24GB/s")
    t.add_argument("--transfer", metavar="IN[,OUT]",
                   help="bytes copied in and out (default: the fields the kernel reads, and writes)")


def _time_view(a, kernel, kernel_s: float):
    """The TimeView the options ask for, or None when no time option was given."""
    from ..application.timeview import DEFAULT_LINK, parse_transfer, time_view

    if a.iterations is None and a.link is None and a.transfer is None:
        return None
    return time_view(kernel, kernel_s, iterations=1 if a.iterations is None else a.iterations,
                     link_spec=a.link or DEFAULT_LINK,
                     transfer_bytes=None if a.transfer is None else parse_transfer(a.transfer))


def _threads_and_jobs(a) -> list[int]:
    """The validated --threads list (and a check of --jobs), shared by every verb that ranks."""
    if a.jobs is not None and a.jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {a.jobs}.")
    return _threads("1024" if a.threads is None else a.threads, a.kernel)  # rank: None (the default) is 1024


def _threads(text: str, kernel=None) -> list[int]:
    """The --threads counts; powers of two, unless ``kernel`` (a kernel argument) launches one-dimensional blocks
    (linear1d indexing), whose ranking takes every count given."""
    threads = [int(t) for t in text.split(",") if t.strip().isdigit()]
    if not threads or len(threads) != len(text.split(",")) or 0 in threads:
        raise InputError(f"--threads '{text}' is malformed: give positive integers such as 256,512,1024.")
    from ..studies.space import not_powers_of_two

    odd, near = not_powers_of_two(threads)
    if odd and not _one_dimensional(kernel):
        raise InputError(f"--threads {','.join(map(str, odd))}: the ranked block shapes have power-of-two extents, "
                         f"so each thread count must be a power of two (e.g. {', '.join(map(str, near))}); a block "
                         "of another shape can be estimated alone: warpspeed estimate KERNEL --block X,Y,Z.")
    return threads


def _one_dimensional(kernel) -> bool:
    """Whether a kernel argument launches one-dimensional blocks (False where it does not load: its own error
    comes where it is used)."""
    if kernel is None:
        return False
    from ..application.resolve import resolve_kernel

    try:
        return resolve_kernel(kernel).indexing != "linear3d"
    except InputError:
        return False


def _space_args(a) -> dict:
    return {"threads": _threads_and_jobs(a), "folding": [_ints(f, "--folding") for f in (a.folding or ["1,1,1"])],
            "domain": None if a.domain is None else _ints(a.domain, "--domain"), "registers": a.registers,
            "jobs": a.jobs, "model": a.model}


def _whatif_points(a):
    from ..application.whatif import sweep_device, sweep_values, whatif
    from ..device import parse_set_options

    key, values = sweep_values(a.sweep)
    with progress_bar(f"what-if {key}") as bar:
        return key, whatif(a.kernel, sweep_device(a.device, parse_set_options(a.set), key, values), key, values,
                           progress=bar, **_space_args(a))


def _whatif(a) -> str:
    from ..device import override_kind
    from ..render.whatif_report import whatif_table

    key, points = _whatif_points(a)
    if a.format == "json":
        return json.dumps({"key": key, "points": [p.to_dict(override_kind(key)) for p in points],
                           "schema_version": SCHEMA_VERSION}, indent=2)
    return whatif_table(key, points)


def _projection(a):
    """The kernel, the analytic Projection and the measured one (or None) the options ask for."""
    from ..application.projection import project
    from ..application.resolve import resolve_device, resolve_kernel
    from ..device import parse_set_options

    space = _space_args(a)
    kernel = resolve_kernel(a.kernel, space.pop("domain"))
    src = resolve_device(a.source, parse_set_options(a.set_from, option="--set-from"))
    tgt = resolve_device(a.target, parse_set_options(a.set))
    with progress_bar(f"project {src.id} -> {tgt.id}") as bar:
        p = project(kernel, src, tgt, progress=bar, **space)
    return kernel, p, _measured_projection(a, kernel, p)


def _project(a) -> str:
    from ..render.projection_report import measured_projection_lines, projection_lines

    kernel, p, m = _projection(a)
    doc, lines = p.to_dict(), projection_lines(p)
    if m is not None:
        doc["measured"] = m.to_dict()
        lines += measured_projection_lines(m)
    views = {}
    for key, r in (("from", p.source_best), ("to", p.target_best)):
        v = _time_view(a, kernel, r.estimate.time_s)
        if v is not None:
            views[key] = v
    if views:
        doc["time_view"] = {k: v.to_dict() for k, v in views.items()}
        lines.append(f"  time view, {p.source.id}: {views['from'].summary()}")
        lines.append(f"  time view, {p.target.id}: {views['to'].summary()}")
        lines.append(f"  end to end, {p.target.id} is {views['from'].total_s / views['to'].total_s:.2f}x "
                     f"{p.source.id}")
    return json.dumps(doc, indent=2) if a.format == "json" else "\n".join(lines)


def _measured_projection(a, kernel, p):
    """The seed-002 projection of a measured source run, when any measured option is given."""
    from ..measurement.measured import Traffic, estimated_traffic, implausible_run, measured_run, project_measured
    from ..measurement.ncu import read_ncu_csv, select_launches
    from ..units import parse_quantity, require_unit

    given = (a.ncu, a.measured_time, a.measured_bytes, a.measured_fp, a.warp_usage)
    if all(x is None for x in given):
        if a.ncu_kernel is not None:
            raise InputError("--ncu-kernel needs --ncu FILE.csv.")
        return None
    rows = None if a.ncu is None else select_launches(read_ncu_csv(a.ncu), a.ncu_kernel)
    traffic = None
    if a.measured_bytes is not None:
        parts = a.measured_bytes.split(",")
        if len(parts) != 3:
            raise InputError(f"--measured-bytes '{a.measured_bytes}' is malformed: give three sizes L1,L2,DRAM "
                             "such as 9GB,3.1GB,1.2GB.")
        for x, lvl in zip(parts, ("L1", "L2", "DRAM"), strict=True):  # 9 is 9 B or 9 GB? the unit decides
            require_unit(x.strip(), "bytes", key=f"--measured-bytes {lvl}")
        traffic = Traffic(*(float(parse_quantity(x.strip(), "bytes", key=f"--measured-bytes {lvl}"))
                            for x, lvl in zip(parts, ("L1", "L2", "DRAM"), strict=True)))
    fp = None
    if a.measured_fp is not None:
        try:
            fp = tuple(float(x) for x in a.measured_fp.split(","))
        except ValueError:
            fp = ()
        if len(fp) != 3 or not all(x >= 0 for x in fp):
            raise InputError(f"--measured-fp '{a.measured_fp}' is malformed: give three non-negative counts "
                             "FMA,ADD,MUL such as 4.2e9,1e9,0.")
    time_s = None
    if a.measured_time is not None:
        if _is_number(a.measured_time):  # 2.1 could mean s or ms: the unit decides
            raise InputError(f"--measured-time {a.measured_time}: give the unit, e.g. {a.measured_time}ms (ns, us, ms "
                             "or s).")
        time_s = parse_quantity(a.measured_time, "time", key="--measured-time")
    lups = kernel.valid_lups
    run = measured_run(lups, time_s=time_s, traffic=traffic, fp=fp, warp_usage=a.warp_usage, ncu_rows=rows,
                       precision=kernel.precision, warp_size=p.source.warp_size)
    warning = implausible_run(lups / run.time_s / 1e9, p.source_best.performance_GLup_s, p.source.id)
    if warning:
        print(f"warning: {warning}", file=sys.stderr)
    target_traffic = estimated_traffic(p.target_best.estimate.volumes_B_per_lup, lups) if a.mode == "hybrid" else None
    return project_measured(run, p.source, p.target, kernel.precision, target_traffic)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _one_estimate(a):
    from ..application.estimating import estimate
    from ..application.resolve import resolve_device, resolve_kernel
    from ..device import parse_set_options

    dev = resolve_device(a.device, parse_set_options(a.set))
    kernel = resolve_kernel(a.kernel, None if a.domain is None else _ints(a.domain, "--domain"))
    return kernel, dev, estimate(kernel, dev, _ints(a.block, "--block"), _ints(a.folding, "--folding"),
                                 registers=a.registers, model=a.model)


def _estimate(a) -> str:
    from ..render.report import text_report

    kernel, _, e = _one_estimate(a)
    view = _time_view(a, kernel, e.time_s)
    if a.format == "json":
        doc = e.to_dict()
        if view is not None:
            doc["time_view"] = view.to_dict()
        return json.dumps(doc, indent=2)
    return text_report(e) + ("" if view is None else f"\ntime view: {view.summary()}")


def _rankings(a):
    """The devices, one Ranking per device, and the single domain (or None) the options ask for."""
    from ..application.ranking import rank
    from ..application.resolve import resolve_device
    from ..device import parse_set_options

    if a.top is not None and a.top < 1:
        raise InputError(f"--top must be at least 1, got {a.top}.")
    chosen = a.threads is not None  # else 1024, and fewer where 1024 cannot launch
    threads = _threads_and_jobs(a)
    overrides = parse_set_options(a.set)
    devices = [resolve_device(d, overrides) for d in a.device]
    foldings = [_ints(f, "--folding") for f in (a.folding or ["1,1,1"])]
    domains = None if a.domain is None else [_ints(d, "--domain") for d in a.domain]
    one_domain = domains[0] if domains and len(domains) == 1 else None
    rankings = []
    for dev in devices:
        with progress_bar(f"rank on {dev.id}") as bar:
            def run(ts, dev=dev, bar=bar):
                return rank(a.kernel, dev, ts, foldings, one_domain, registers=a.registers, jobs=a.jobs,
                            domains=None if one_domain else domains, cache=a.cache, progress=bar, model=a.model,
                            screen=a.screen)

            r = run(threads)
            t, first_error = threads[0], r.best.error
            while r.best.error and not chosen and t > dev.warp_size:  # e.g. LBM kernels with ~90 registers
                t //= 2
                r = run([t])
        if r.best.error:
            raise InputError(f"no configuration of {r.kernel} can launch on {dev.id}: {r.best.error} Try fewer "
                             "threads per block (--threads 128,256) or fewer registers (--registers N).")
        if t != threads[0]:
            print(f"note: no block of {threads[0]} threads can launch {r.kernel} on {dev.id} ({first_error}); ranked "
                  f"blocks of {t} threads instead (--threads chooses).", file=sys.stderr)
        rankings.append(r)
    return devices, rankings, one_domain


def _rank(a) -> str:

    from ..application.ranking import reference_estimate, reference_label
    from ..render.report import ranking_csv_table, ranking_headline, ranking_table

    devices, rankings, one_domain = _rankings(a)
    if a.format == "json":
        docs = [r.to_dict() for r in rankings]
        return json.dumps(docs[0] if len(docs) == 1 else docs, indent=2)
    if a.format == "csv":
        return _csv_text(*ranking_csv_table(rankings))
    texts = []
    for dev, r in zip(devices, rankings, strict=True):
        ref = reference_estimate(r, a.kernel, dev, domain=one_domain, registers=a.registers, model=a.model)
        texts.append(ranking_headline(r, ref, reference_label(a.kernel)) + "\n\n" + ranking_table(r, a.top or 10))
    return "\n\n".join(texts)


def _compare(a) -> str:

    from ..application.comparison import compare, parse_candidate
    from ..application.resolve import resolve_device
    from ..device import parse_set_options
    from ..render.compare_report import COMPARE_CSV_COLUMNS, comparison_csv_rows, comparison_text

    c = compare([parse_candidate(t) for t in a.candidate], resolve_device(a.device, parse_set_options(a.set)),
                None if a.threads is None else _threads(a.threads), [_ints(f, "--folding") for f in (a.folding or
                                                                                                   ["1,1,1"])],
                None if a.domain is None else _ints(a.domain, "--domain"), registers=a.registers, model=a.model)
    if a.format == "json":
        return json.dumps(c.to_dict(), indent=2)
    if a.format == "csv":
        return _csv_text(COMPARE_CSV_COLUMNS, comparison_csv_rows(c))
    return comparison_text(c)


def _csv_text(columns, rows) -> str:
    """A CSV document: the header of ``columns``, then ``rows`` (dicts), without the final line break."""
    import csv
    import io

    out = io.StringIO()
    w = csv.DictWriter(out, fieldnames=columns, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return out.getvalue().rstrip("\n")


def _plot_top(text: str) -> int | str:
    """``plot ranking --top``: a count of at least 1, or ``all``."""
    if text.strip().lower() == "all":
        return "all"
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"expected a number of bars (at least 1) or 'all', got {text!r}")
    return n


def _plot(a) -> str:
    from ..render import plots

    plots.output_format(a.output)
    if a.plot == "roofline":
        kernel, dev, e = _one_estimate(a)
        fig = plots.roofline_plot(e, dev, flops_per_lup=kernel.flops.total)
    elif a.plot == "ranking":
        if len(a.device) != 1:
            raise InputError("warpspeed plot ranking: give one --device (one chart per device).")
        from ..application.ranking import reference_estimate, reference_label

        top, a.top = a.top, None  # the chart's bars (checked by _plot_top), not the table's rows
        devices, rankings, one_domain = _rankings(a)
        ref = reference_estimate(rankings[0], a.kernel, devices[0], domain=one_domain, registers=a.registers,
                                 model=a.model)
        fig = plots.ranking_plot(rankings[0], top=plots.RANKING_TOP if top is None else
                                 None if top == "all" else top, reference=ref,
                                 reference_label=reference_label(a.kernel))
    elif a.plot == "whatif":
        from ..device import device

        spec = a.sweep.partition("=")[2]
        log = True if spec.rstrip().endswith(":log") else False if ":" in spec else None  # None: the values tell
        fig = plots.whatif_plot(_whatif_points(a)[1], log=log, reference=device(a.device))
    elif a.plot == "devices":
        fig = plots.devices_plot(_device_ranking(a, a.kernel))
    else:
        _, p, m = _projection(a)
        fig = plots.projection_plot(p, m)
    return f"wrote {plots.save(fig, a.output)}"


def _measure(a) -> str:
    from ..application.resolve import resolve_kernel
    from ..device import device
    from ..measurement.measure import (
        check_extra_output,
        extra_metric_names,
        extra_metric_rows,
        gpu_info,
        measurement_rows,
        profile_configurations,
        programs_for,
        time_configurations,
        write_extra_metrics,
    )
    from ..measurement.measurements import triple_text, write_measurements
    from ..studies.space import configurations, generated_block_shapes

    if a.repeats < 1 or a.warmup < 0 or a.ncu_every < 1:
        raise InputError("--repeats and --ncu-every must be at least 1 and --warmup at least 0.")
    if (a.ncu_metrics is None) != (a.ncu_output is None) or (a.ncu_metrics is not None and not a.ncu):
        raise InputError("--ncu-metrics and --ncu-output go together, with --ncu (the extra metrics are collected "
                         "in its run).")
    extra = () if a.ncu_metrics is None else extra_metric_names(a.ncu_metrics)
    if extra:
        check_extra_output(a.ncu_output, a.output)
    threads = _threads(a.threads)
    kernel = resolve_kernel(a.kernel, None if a.domain is None else _ints(a.domain, "--domain"))
    dev = device(a.device)
    blocks = ([_ints(b, "--block") for b in a.block] if a.block is not None
              else generated_block_shapes(kernel.indexing, threads, dev))  # the ranking's
    configs = configurations(blocks, [_ints(f, "--folding") for f in (a.folding or ["1,1,1"])])
    programs = programs_for(kernel, a.kernel, configs, a.code)
    info = gpu_info()
    timings = time_configurations(kernel, configs, programs, repeats=a.repeats, warmup=a.warmup)
    ran = [c for c, t in zip(configs, timings, strict=True) if "error" not in t]
    counters = (profile_configurations(kernel, a.kernel, ran[::a.ncu_every], a.code, extra_metrics=extra)
                if a.ncu and ran else None)
    rows = measurement_rows(kernel, a.kernel, a.device, configs, timings, info, counters)
    failed = [(c, t["error"]) for c, t in zip(configs, timings, strict=True) if "error" in t]
    for c, err in failed:
        print(f"warpspeed measure: block {triple_text(c.block)} folding {triple_text(c.folding)} did not run: {err}",
              file=sys.stderr)
    if not rows:
        raise InputError(f"no configuration of {kernel.name} ran on {info['gpu_name']} (see above); nothing written.")
    write_measurements(a.output, rows, append=True)
    if extra and counters:
        write_extra_metrics(a.ncu_output, extra_metric_rows(kernel, a.kernel, counters, extra))
    best = max(rows, key=lambda r: r["GLup_s"])
    return (f"measured {len(rows)} configurations of {kernel.name} on {info['gpu_name']}"
            + (f" ({len(failed)} did not run)" if failed else "")
            + f": best {best['block']} folding {best['folding']} at {best['GLup_s']:.3g} GLup/s; "
            f"appended to {a.output}")


def _validate(a) -> str:
    from ..measurement.measurements import read_measurements
    from ..measurement.validation import validate
    from ..render.report import report_text

    if a.plot:
        from ..render.plots import output_format
        output_format(a.plot)
    dev = None
    if a.device:
        from ..device import device
        dev = device(a.device)
    rows, devices = _kernel_tuner_rows(a) if a.file.lower().endswith(".json") else (None, None)
    if rows is None:
        if given := [o for o, v in (("--kernel", a.kernel), ("--domain", a.domain), ("--block-names", a.block_names),
                                    ("--folding-names", a.folding_names), ("--select", a.select)) if v]:
            raise InputError(f"{', '.join(given)}: for kernel_tuner .json files; {a.file} is read as a measurement "
                             "CSV, whose rows name their kernel, domain and configuration.")
        rows = read_measurements(a.file)
    with progress_bar("validate", "rows") as bar:
        reports = validate(rows, devices=devices, device=dev, model=a.model, progress=bar)
    if a.plot:
        from ..render.plots import save, validation_plot
        save(validation_plot(reports), a.plot)
    if a.format == "json":
        return json.dumps([r.to_dict() for r in reports], indent=2)
    return report_text(reports)


def _kernel_tuner_rows(a):
    """``validate``'s rows of a kernel_tuner cache or T4 results file (warpspeed.integrations.kernel_tuner), and
    the device the file records by the name its rows carry (a changed device's id does not load it; not read
    where --device is given, which estimates every row)."""
    from ..integrations.kernel_tuner import NAMES, ParameterNames, read_kernel_tuner, recorded_devices

    def names(text: str | None, option: str, default: tuple) -> tuple:
        if text is None:
            return default
        parts = [p.strip() for p in text.split(",")]
        if len(parts) != 3 or not all(parts):
            raise InputError(f"{option} {text!r}: give three parameter names X,Y,Z ('-' for an axis that is not "
                             "tuned), e.g. block_size_x,block_size_y,-.")
        return tuple(None if p == "-" else p for p in parts)

    select = {}
    for item in a.select or []:
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise InputError(f"--select {item!r}: give NAME=VALUE, e.g. --select loop_unroll=1.")
        select[name.strip()] = value.strip()
    pn = None
    if a.block_names is not None or a.folding_names is not None:
        pn = ParameterNames(names(a.block_names, "--block-names", NAMES.block),
                            names(a.folding_names, "--folding-names", NAMES.folding))
    rows = read_kernel_tuner(a.file, kernel=a.kernel, device=a.device,
                             domain=None if a.domain is None else _ints(a.domain, "--domain"), names=pn,
                             select=select or None)
    return rows, None if a.device else recorded_devices(a.file)  # --device estimates every row on it


def _calibrate(a) -> str:
    from pathlib import Path

    from ..device import device
    from ..measurement.calibration import calibrate
    from ..measurement.measurements import read_measurements
    from ..render.report import calibration_text

    if a.plot:
        from ..render.plots import output_format
        output_format(a.plot)
    devs = [device(d) for d in a.device]
    rows = [m for f in a.file for m in read_measurements(f)]
    with progress_bar("calibrate", "rows") as bar:
        cal = calibrate(rows, devs, ", ".join(Path(f).name for f in a.file), progress=bar)
    if len(devs) == 1:
        outs = [(devs[0], Path(a.output or f"{devs[0].id}-calibrated.toml"), Path(a.output).stem if a.output else None)]
    else:
        folder = Path(a.output or ".")
        if not folder.is_dir():
            raise InputError(f"--output {str(folder)!r}: with several devices it names an existing folder, where "
                             "one <device>-calibrated.toml per device is written.")
        outs = [(d, folder / f"{d.id}-calibrated.toml", None) for d in devs]
    for d, out, new_id in outs:
        try:
            out.write_text(cal.device_toml(new_id, d))
        except OSError as e:
            raise InputError(f"cannot write {str(out)!r}: {e.strerror or e}.") from None
    if a.plot:
        from ..render.plots import calibration_plot, save
        save(calibration_plot(cal), a.plot)
    if a.format == "json":
        return json.dumps({**cal.to_dict(), "device_file": str(outs[0][1]),
                           "device_files": [str(o) for _, o, _ in outs], "schema_version": SCHEMA_VERSION}, indent=2)
    return calibration_text(cal) + "".join(f"\nwrote {o} (use it as --device {o})" for _, o, _ in outs)


def _devices(a) -> str:
    from ..device import DeviceFileError, device, device_ids, load_device_file

    fmt = a.format
    if a.action == "rank":
        return _devices_rank(a)
    given = [o for o, v in (("--device", a.device), ("--threads", a.threads), ("--folding", a.folding),
                            ("--domain", a.domain), ("--registers", a.registers), ("--jobs", a.jobs)) if v]
    if given or fmt == "csv":
        raise InputError(f"warpspeed devices {a.action}: {', '.join(given) or '--format csv'} goes with `warpspeed "
                         "devices rank KERNEL` only.")
    if a.action == "links":
        from ..application.timeview import links
        if fmt == "json":
            return json.dumps([lk.to_dict() for lk in links().values()], indent=2)
        rows = [f"{'id':<12}{'GB/s':>8}  name (per direction; --link ID or --link BANDWIDTH)"]
        rows += [f"{lk.id:<12}{lk.bandwidth_GB_s:>8.4g}  {lk.name}" for lk in links().values()]
        return "\n".join(rows)
    if a.action == "list":
        from ..render.device_list import device_list_json, device_list_text

        devs = [device(i) for i in device_ids()]
        return json.dumps(device_list_json(devs), indent=2) if fmt == "json" else device_list_text(devs)
    if not a.target:
        raise InputError(f"warpspeed devices {a.action}: give a device id or file.")
    try:
        d = device(a.target) if a.action == "show" else load_device_file(a.target)
    except DeviceFileError as err:
        if len(err.problems) < 2:
            raise
        # every problem of the file, one item each (main's one-paragraph error would run them together)
        print(f"error: {err.where}: {len(err.problems)} problems:", file=sys.stderr)
        for problem in err.problems:
            print(textwrap.fill(problem, width=100, initial_indent="  - ", subsequent_indent="    ",
                                break_on_hyphens=False, break_long_words=False), file=sys.stderr)
        raise SystemExit(2) from None
    if fmt == "json":
        # Device.to_dict leads with its own schema_version: the device-file format (docs/outputs.md)
        return json.dumps(d.to_dict(), indent=2)
    if a.action == "show":
        return d.to_text()
    return f"{a.target}: valid ({d.id}, {d.name})"


def _device_ranking(a, kernel: str):
    """The DeviceRanking of ``devices rank`` and ``plot devices``."""
    from ..application.device_ranking import rank_devices

    if a.jobs is not None and a.jobs < 1:
        raise InputError(f"--jobs must be at least 1, got {a.jobs}.")
    threads = None if a.threads is None else _threads(a.threads)
    with progress_bar("rank devices", "devices") as bar:
        return rank_devices(kernel, a.device, threads, [_ints(f, "--folding") for f in (a.folding or ["1,1,1"])],
                            None if a.domain is None else _ints(a.domain, "--domain"), registers=a.registers,
                            model=a.model, jobs=a.jobs, progress=bar)


def _devices_rank(a) -> str:
    """``devices rank KERNEL``: the kernel's best configuration on each device (every shipped one by default)."""

    from ..render.device_ranking_report import (
        DEVICE_RANKING_CSV_COLUMNS,
        device_ranking_csv_rows,
        device_ranking_text,
    )

    if not a.target:
        raise InputError("warpspeed devices rank: give a kernel (catalog name or TOML file), e.g. `warpspeed devices "
                         "rank star3d-r4`.")
    r = _device_ranking(a, a.target)
    if a.format == "json":
        return json.dumps(r.to_dict(), indent=2)
    if a.format == "csv":
        return _csv_text(DEVICE_RANKING_CSV_COLUMNS, device_ranking_csv_rows(r))
    return device_ranking_text(r)


def _serve(a) -> str:
    from ..web.app import create_app, serve

    if not 0 <= a.port <= 65535:
        raise InputError(f"--port {a.port}: give a port from 1 to 65535 (0: any free one).")
    try:
        socket.getaddrinfo(a.host, a.port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as e:  # the server would print the resolver's words alone, exit 1
        raise InputError(f"--host {a.host!r} is not an address or a name this machine can resolve "
                         f"({getattr(e, 'strerror', None) or e}); give e.g. 127.0.0.1 (this machine only) or "
                         "0.0.0.0 (every interface).") from None
    create_app()  # a missing Flask is a clear error here, before the server starts
    try:
        serve(a.host, a.port, hosts=a.allow_host)
    except OSError as e:
        raise InputError(f"cannot serve on {a.host}:{a.port} ({e.strerror or e}); try another --port.") from None
    return "warpspeed serve: stopped"


def _kernels(a) -> str:
    from ..kernels import catalog, entries

    if a.action == "show":
        files = catalog()
        if a.name is None:
            raise InputError(f"kernels show needs a NAME: one of {', '.join(files)}.")
        if a.name not in files:
            what = "a generated kernel (no TOML file)" if a.name in entries() else "not in the catalog"
            raise InputError(f"kernels show: {a.name!r} is {what}; the kernels with a TOML file are "
                             f"{', '.join(files)}.")
        return files[a.name].read_text().rstrip("\n")
    if a.name is not None:
        raise InputError(f"kernels: unexpected {a.name!r}; to print a kernel's TOML use `warpspeed kernels show "
                         f"{a.name}`.")

    items = [{"name": e.name, "parameters": dict(e.params), "description": e.description}
             for e in entries().values()]
    if a.format == "json":
        return json.dumps(items, indent=2)
    params = [",".join(f"{k}={v}" for k, v in i["parameters"].items()) or "-" for i in items]
    width = max(len("parameters (defaults)"), *map(len, params)) + 2  # the columns line up whatever the plugins add
    rows = [f"{'name':<20}{'parameters (defaults)':<{width}}description"]
    for i, text in zip(items, params, strict=True):
        rows.append(f"{i['name']:<20}{text:<{width}}{i['description']}")
    rows.append("")
    rows.append("Use a name in any verb; parameters as NAME:KEY=VALUE,... (e.g. star:r=2,dims=2); "
                "--domain sets the size.")
    return "\n".join(rows)


def _check_paths(a) -> None:
    """Every file a command reads must exist and every file it writes must have a writable folder, before the
    first estimate: a typo in --plot must not cost a ranking."""
    from ..errors import check_input_file, check_output_file

    for attr, option in (("plot", "--plot"), ("output", "--output"), ("cache", "--cache")):
        value = getattr(a, attr, None)
        if isinstance(value, str) and not (a.verb == "calibrate" and attr == "output" and os.path.isdir(value)):
            check_output_file(value, option)  # calibrate writes one file per device into an --output folder
    if isinstance(getattr(a, "ncu", None), str):
        check_input_file(a.ncu, "--ncu")
    if a.verb in ("validate", "calibrate"):
        for path in a.file if isinstance(a.file, list) else [a.file]:
            check_input_file(path, f"{a.verb} FILE")


_NUMERIC_OPTIONS = frozenset({"--block", "--folding", "--domain", "--threads", "--registers", "--top", "--jobs",
                              "--screen", "--port"})


def _negative_values_attached(argv: list[str]) -> list[str]:
    """``--block -32,4,8`` as ``--block=-32,4,8``: argparse reads a value that starts with a minus and is not
    a plain number as another option and says the option has no value; attached, the value reaches the
    option's own check, which says what is wrong with it."""
    out: list[str] = []
    for arg in argv:
        if out and out[-1] in _NUMERIC_OPTIONS and re.match(r"-\d", arg):
            out[-1] = f"{out[-1]}={arg}"
        else:
            out.append(arg)
    return out


def _advised(text: str) -> str:
    """``text`` with the command line's advice on the model's words (warpspeed.render.advice): which option
    gives the registers, the roofline model. Without the model loaded there are no such words (so a usage error
    does not load the model for the advice)."""
    if "warpspeed.model.estimate" not in sys.modules:
        return text
    from ..render.advice import command_line_words

    return command_line_words(text)


def main(argv: list[str] | None = None) -> int:
    if not (sys.argv[1:] if argv is None else argv):  # a bare `warpspeed`: what it can do, not an error
        print(_parser().format_help())
        return 0
    try:
        a = _parser().parse_args(_negative_values_attached(sys.argv[1:] if argv is None else argv))
        _check_paths(a)
        verbs = {"estimate": _estimate, "rank": _rank, "whatif": _whatif, "project": _project, "plot": _plot,
                 "compare": _compare,
                 "measure": _measure, "validate": _validate, "calibrate": _calibrate, "devices": _devices,
                 "kernels": _kernels, "serve": _serve}
        out = verbs[a.verb](a)
    except InputError as err:
        # never break inside a path or a name: they often hold hyphens
        print(textwrap.fill(f"error: {_advised(str(err))}", width=100, break_on_hyphens=False,
                            break_long_words=False), file=sys.stderr)
        return 2
    except SystemExit as ex:  # --help
        return int(ex.code or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as ex:  # an internal error: say so, briefly
        print(f"internal error ({type(ex).__name__}): {ex}. Please report it with the command line.",
              file=sys.stderr)
        return 1
    try:
        print(_advised(out))
        sys.stdout.flush()
    except BrokenPipeError:  # the reader went away (`| head`): not an error of ours
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())
