"""What the page asks and what it gets back: queries checked field by field, answered with the CLI's numbers.

Pure functions of a query (a JSON object the page posts): no state is kept between requests, so concurrent
requests share nothing but warpspeed's caches of immutable results. Kernels come from the catalog or from
TOML text read with ``tomllib`` and warpspeed's own expression parser (nothing is evaluated). Every answer
carries the equivalent command line, so what the page shows can be reproduced with ``warpspeed estimate``
or ``warpspeed rank``.
"""

from __future__ import annotations

import shlex
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from ..errors import InputError

MAX_BODY_BYTES = 64 * 1024  # a kernel file is a few kB: more is not a kernel
MAX_TOML_CHARS = 32 * 1024
MAX_ACCESSES = 512  # loads and stores of a typed kernel (an estimate then takes well under a second)
MAX_RANK_CONFIGURATIONS = 400  # configurations one ranking may hold (a request answers in seconds)
RANK_TIME_LIMIT_S = 20.0  # a ranking still running after this is stopped and refused
RANK_TOP_MAX = 50
MAX_SWEEP_POINTS = 8  # device values one what-if request sweeps
MODELS = ("latency", "roofline")
PLOTS = ("roofline", "ranking")


class PageError(InputError):
    """Bad input, with the part of the page it belongs to: ``kernel``, ``device`` or ``launch``."""

    def __init__(self, part: str, message: str) -> None:
        super().__init__(message)
        self.part = part


class RankingTooLarge(PageError):
    """A ranking of more configurations than one request may hold."""


class RankingTimeout(Exception):
    """A ranking that ran past :data:`RANK_TIME_LIMIT_S`."""


@dataclass(frozen=True)
class Query:
    """One state of the page: the kernel (a catalog name, or TOML text), the GPU with its overrides, the
    launch, and for a ranking the thread counts and how many rows to show."""

    kernel: str
    toml: str | None
    device: str
    overrides: tuple[tuple[str, str], ...]
    block: tuple[int, int, int]
    folding: tuple[int, int, int]
    domain: tuple[int, int, int] | None
    model: str
    threads: tuple[int, ...]
    top: int


def _text(doc: Mapping, key: str, part: str, default: str | None = None, limit: int = 200) -> str:
    value = doc.get(key, default)
    if not isinstance(value, str) or not value.strip():
        raise PageError(part, f"{key}: give a non-empty text, got {value!r}.")
    if len(value) > limit:
        raise PageError(part, f"{key}: at most {limit} characters, got {len(value)}.")
    return value.strip()


def _ints(doc: Mapping, key: str, part: str, n: int | None, default: object = None) -> tuple[int, ...] | None:
    value = doc.get(key, default)
    if value is None:
        return None
    parts = value.replace("x", ",").split(",") if isinstance(value, str) else value
    try:
        out = tuple(int(str(p).strip()) for p in parts)
    except (TypeError, ValueError):
        raise PageError(part, f"{key}: give whole numbers X,Y,Z, got {value!r}.") from None
    if (n is not None and len(out) != n) or not out or any(v < 1 for v in out):
        count = f"{n} " if n else ""
        raise PageError(part, f"{key}: give {count}positive whole numbers (e.g. 32,4,8), got {value!r}.")
    return out


def query_from_json(doc: object) -> Query:
    """A :class:`Query` from the posted JSON; errors name the field and the part of the page."""
    if not isinstance(doc, Mapping):
        raise PageError("launch", "the request is a JSON object of the page's fields.")
    toml = doc.get("toml")
    if toml is not None and (not isinstance(toml, str) or len(toml) > MAX_TOML_CHARS):
        raise PageError("kernel", f"toml: the kernel's TOML text, at most {MAX_TOML_CHARS} characters.")
    kernel = "" if toml else _text(doc, "kernel", "kernel")
    overrides = doc.get("overrides", [])
    if not isinstance(overrides, list) or not all(
            isinstance(o, list | tuple) and len(o) == 2 and all(isinstance(t, str) for t in o) for o in overrides):
        raise PageError("device", "overrides: a list of [key, value] pairs, e.g. [[\"l2_size\", \"100MiB\"]].")
    model = doc.get("model", "latency")
    if model not in MODELS:
        raise PageError("launch", f"model: one of {', '.join(MODELS)}, got {model!r}.")
    top = doc.get("top", 10)
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= RANK_TOP_MAX:
        raise PageError("launch", f"top: a number of rows from 1 to {RANK_TOP_MAX}, got {top!r}.")
    return Query(kernel=kernel, toml=toml or None, device=_text(doc, "device", "device"),
                 overrides=tuple((k.strip(), v.strip()) for k, v in overrides if k.strip() or v.strip()),
                 block=_ints(doc, "block", "launch", 3, "32,4,8"),  # type: ignore[arg-type]
                 folding=_ints(doc, "folding", "launch", 3, "1,1,1"),  # type: ignore[arg-type]
                 domain=_ints(doc, "domain", "launch", 3) if doc.get("domain") else None,  # type: ignore[arg-type]
                 model=model, threads=_ints(doc, "threads", "launch", None, "1024"),  # type: ignore[arg-type]
                 top=top)


def kernel_of(q: Query):
    """The query's kernel: a catalog entry, or its TOML text read as a kernel file."""
    from ..kernel import kernel_from_dict
    from ..model.estimate import resolve_kernel

    try:
        if q.toml is None:
            return resolve_kernel(q.kernel, q.domain)
        try:
            data = tomllib.loads(q.toml)
        except tomllib.TOMLDecodeError as e:
            raise InputError(f"the kernel's TOML: {e}") from None
        kernel = kernel_from_dict(data, source="page", domain=q.domain)
        accesses = sum(len(f.loads) + len(f.stores) for f in kernel.fields)
        if accesses > MAX_ACCESSES:
            raise InputError(f"the kernel has {accesses} loads and stores; the page takes at most {MAX_ACCESSES} "
                             "(estimate larger kernels with the command line).")
        return kernel
    except InputError as e:
        raise PageError("kernel", str(e)) from None


def device_of(q: Query):
    """The query's device with its overrides (``--set`` values)."""
    from ..device import device, parse_set_options

    try:
        return device(q.device, **parse_set_options([f"{k}={v}" for k, v in q.overrides]))
    except InputError as e:
        raise PageError("device", str(e)) from None


def command(q: Query, verb: str, sweep: str | None = None) -> str:
    """The command line that gives the same numbers (``kernel.toml``: the page's TOML text, saved): ``verb`` is
    ``estimate``, ``rank``, ``whatif`` (with ``sweep``) or ``plot roofline`` / ``plot ranking``."""
    triple = ",".join
    args = ["warpspeed", *verb.split(), q.kernel if q.toml is None else "kernel.toml", "--device", q.device]
    for k, v in q.overrides:
        args += ["--set", f"{k}={v}"]
    if verb in ("estimate", "plot roofline"):
        args += ["--block", triple(map(str, q.block)), "--folding", triple(map(str, q.folding))]
    else:
        if verb == "whatif":
            args += ["--sweep", str(sweep).strip()]
        args += ["--threads", triple(map(str, q.threads))]
        if q.folding != (1, 1, 1):
            args += ["--folding", triple(map(str, q.folding))]
        if verb != "whatif":
            args += ["--top", str(q.top), "--screen", str(q.top)]
    if q.domain is not None:
        args += ["--domain", triple(map(str, q.domain))]
    if q.model != "latency":
        args += ["--model", q.model]
    plot = verb.split()[1] if verb.startswith("plot ") else None
    return shlex.join([*args, "-o", f"{plot}.png"] if plot else [*args, "--format", "json"])


def estimate_doc(q: Query) -> dict:
    """The estimate's JSON (as ``warpspeed estimate --format json`` prints it), the text report's headline and
    the command line."""
    from ..interface.report import text_report
    from ..model.estimate import estimate

    kernel, dev = kernel_of(q), device_of(q)
    try:
        e = estimate(kernel, dev, q.block, q.folding, model=q.model)
    except InputError as err:
        raise PageError("launch", str(err)) from None
    return {"estimate": e.to_dict(), "headline": text_report(e).splitlines()[0], "command": command(q, "estimate")}


def _ranking(q: Query, time_limit_s: float | None, clock: Callable[[], float]):
    """(ranking, kernel, device) of the query: its ``top`` best exactly (screened), refused beyond
    :data:`MAX_RANK_CONFIGURATIONS`, stopped after ``time_limit_s``."""
    from ..studies.ranking import rank
    from ..studies.space import block_shapes

    kernel, dev = kernel_of(q), device_of(q)
    try:
        shapes = block_shapes(q.threads, max_dims=dev.max_block_dims)
    except InputError as err:
        raise PageError("launch", str(err)) from None
    if len(shapes) > MAX_RANK_CONFIGURATIONS:
        raise RankingTooLarge("launch", f"threads {','.join(map(str, q.threads))}: {len(shapes)} block shapes, more "
                                        f"than the {MAX_RANK_CONFIGURATIONS} one request ranks; rank them with the "
                                        "command line.")
    try:
        r = rank(kernel, dev, threads=q.threads, folding=(q.folding,), jobs=1, model=q.model, screen=q.top,
                 progress=_deadline("ranking", time_limit_s, clock))
    except InputError as err:
        raise PageError("launch", str(err)) from None
    return r, kernel, dev


def _deadline(what: str, time_limit_s: float | None, clock: Callable[[], float]) -> Callable[[int, int], None]:
    """A progress callback that stops the work (:class:`RankingTimeout`) once ``time_limit_s`` has passed."""
    limit = RANK_TIME_LIMIT_S if time_limit_s is None else time_limit_s
    deadline = clock() + limit

    def check(done: int, total: int) -> None:
        if clock() > deadline:
            raise RankingTimeout(f"the {what} ran past {limit:g} s after {done} of {total} configurations; ask "
                                 "for fewer thread counts or values here, or use the command line.")

    return check


def rank_doc(q: Query, time_limit_s: float | None = None, clock: Callable[[], float] = time.monotonic) -> dict:
    """The ``top`` best configurations of the blocks of ``threads`` threads (screened: only they are estimated in
    full), refused beyond :data:`MAX_RANK_CONFIGURATIONS`, stopped after ``time_limit_s``."""
    r, _, _ = _ranking(q, time_limit_s, clock)
    doc = r.to_dict()
    doc["results"] = doc["results"][:q.top]
    return {"ranking": doc, "command": command(q, "rank")}


def _png(fig) -> str:
    """A figure as base64 PNG text (the page shows it as an image: no markup from a plot reaches the page)."""
    import base64
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=80)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def plot_doc(q: Query, kind: object, time_limit_s: float | None = None,
             clock: Callable[[], float] = time.monotonic) -> dict:
    """A plot of the query as PNG: the roofline of its estimate, or the ranking chart of its block sizes
    (pystencils' default block marked). Needs the ``plot`` extra (else a clear 400)."""
    from ..interface import plots

    if kind not in PLOTS:
        raise PageError("launch", f"plot: one of {', '.join(PLOTS)}, got {kind!r}.")
    if kind == "roofline":
        from ..model.estimate import estimate

        kernel, dev = kernel_of(q), device_of(q)
        try:
            e = estimate(kernel, dev, q.block, q.folding, model=q.model)
        except InputError as err:
            raise PageError("launch", str(err)) from None
        fig = plots.roofline_plot(e, dev, flops_per_lup=kernel.flops.total)
        return {"png": _png(fig), "command": command(q, "plot roofline")}
    from ..studies.ranking import reference_estimate

    r, kernel, dev = _ranking(q, time_limit_s, clock)
    fig = plots.ranking_plot(r, top=q.top, reference=reference_estimate(r, kernel, dev, model=q.model))
    return {"png": _png(fig), "command": command(q, "plot ranking")}


def whatif_doc(q: Query, sweep: object, time_limit_s: float | None = None,
               clock: Callable[[], float] = time.monotonic) -> dict:
    """The best configuration for each value of one device key (``KEY=START:STOP:N[:log]`` or ``KEY=V1,V2``),
    as ``warpspeed whatif`` gives them, with its chart when plots are installed."""
    from ..device import override_kind
    from ..studies.whatif import sweep_values, whatif

    if not isinstance(sweep, str) or not sweep.strip():
        raise PageError("device", "sweep: give KEY=START:STOP:N[:log] or KEY=V1,V2,... (e.g. "
                                  "l2_size=10MiB:160MiB:5:log).")
    try:
        key, values = sweep_values(sweep)
    except InputError as err:
        raise PageError("device", str(err)) from None
    if len(values) > MAX_SWEEP_POINTS:
        raise RankingTooLarge("device", f"sweep: {len(values)} values, more than the {MAX_SWEEP_POINTS} one request "
                                        "sweeps.")
    kernel, dev = kernel_of(q), device_of(q)
    try:
        points = whatif(kernel, dev, key, values, threads=q.threads, folding=(q.folding,), jobs=1, model=q.model,
                        progress=_deadline("sweep", time_limit_s, clock))
    except InputError as err:
        raise PageError("device", str(err)) from None
    doc: dict = {"key": key, "points": [p.to_dict(override_kind(key)) for p in points]}
    try:
        from ..interface import plots

        doc["png"] = _png(plots.whatif_plot(points, reference=dev))
    except InputError:  # no matplotlib: the table alone
        pass
    doc["command"] = command(q, "whatif", sweep)
    return doc


def check_doc(toml: object) -> dict:
    """Whether TOML text is a valid kernel (the page checks as one types): its name, domain and accesses."""
    if not isinstance(toml, str) or len(toml) > MAX_TOML_CHARS:
        raise PageError("kernel", f"toml: the kernel's TOML text, at most {MAX_TOML_CHARS} characters.")
    k = kernel_of(Query("", toml, "-", (), (1, 1, 1), (1, 1, 1), None, "latency", (1,), 1))
    return {"name": k.name, "domain": list(k.domain), "fields": [f.name for f in k.fields],
            "accesses": sum(len(f.loads) + len(f.stores) for f in k.fields)}


def devices_doc() -> dict:
    """The shipped devices (id and name) and the keys an override may set."""
    from ..device import OVERRIDE_KEYS, device, device_ids

    return {"devices": [{"id": i, "name": device(i).name} for i in device_ids()],
            "override_keys": sorted(OVERRIDE_KEYS)}


def kernels_doc() -> dict:
    """The catalog: every name, and the TOML text of the kernels that have a file."""
    from ..kernels import catalog, entries

    files = catalog()
    return {"kernels": [{"name": e.name, "description": e.description,
                         "toml": files[e.name].read_text() if e.name in files else None}
                        for e in entries().values() if not e.params]}
