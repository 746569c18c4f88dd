"""What the page asks and what it gets back: queries checked field by field, answered with the CLI's numbers.

Pure functions of a query (a JSON object the page posts): no state is kept between requests, so concurrent
requests share nothing but warpspeed's caches of immutable results. Kernels come from the catalog (names,
with parameters) or from TOML text read with ``tomllib`` and warpspeed's own expression parser (nothing is
evaluated); devices from the shipped ids and the overrides typed on the page. No file named by a request is
ever read: a path is refused before anything is opened. Every request's work is bounded before it starts
(sizes of texts and lists, accesses of a kernel, generated ones included, block shapes of a ranking, values
of a sweep) and stopped at the request's time limit, checked between its stages. Error messages name the
page's fields, not the command line's flags. Every answer carries the equivalent command line, so what the
page shows can be reproduced with ``warpspeed estimate``, ``warpspeed rank`` or ``warpspeed devices rank``.
"""

from __future__ import annotations

import math
import re
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
RANK_TIME_LIMIT_S = 20.0  # a request still working after this is stopped and refused (every kind of request)
RANK_TOP_MAX = 50
MAX_SWEEP_POINTS = 8  # device values one what-if request sweeps
MAX_RANK_DEVICES = 32  # devices one device ranking (which GPU) may name; more than are shipped
MAX_COMPARE_CANDIDATES = 8  # candidates one comparison may hold
MAX_COMPARE_KERNELS = 16  # kernels of a comparison's candidates together (a sequence holds several)
MAX_CANDIDATE_CHARS = 600  # a candidate's text: catalog names with their options, joined by '+'
MAX_OVERRIDES = 64  # device keys one query overrides (there are fewer keys)
MAX_LIST = 16  # numbers in one list field (block, folding, domain: 3; thread counts of a ranking)
MAX_EXTENT = 1 << 31  # the largest number a list field takes (larger is no GPU's launch or domain)
MODELS = ("latency", "roofline")
PLOTS = ("roofline", "ranking")
DEVICE_RANK_FIELDS = frozenset({"kernel", "toml", "domain", "folding", "model", "threads", "devices"})
"""What a device ranking reads: the kernel, the launch fields but the block, and the devices (no overrides: they
change one device)."""
COMPARE_FIELDS = frozenset({"candidates", "device", "overrides", "domain", "folding", "model", "threads"})
"""What a comparison reads: the candidates, the device with its overrides, the launch fields but the block."""


# the command line's flags, as the page's fields are called: messages shared with the CLI name flags
_FIELDS = {"--block": "the block field", "--folding": "the folding field", "--domain": "the domain field",
           "--threads": "the rank threads field", "--set": "an override", "--sweep": "the what-if field",
           "--model": "the model field", "--device": "the device field"}
_FLAG = re.compile("|".join(re.escape(f) + r"(?![\w-])" for f in _FIELDS))


def page_words(message: str) -> str:
    """``message`` with the command line's advice on the model's neutral words (warpspeed.render.advice), then
    its flags replaced by the page's fields (``--block`` -> "the block field"); flags the page has no field for
    stay, as command-line advice."""
    from ..render.advice import command_line_words

    return _FLAG.sub(lambda m: _FIELDS[m.group(0)], command_line_words(message))


class PageError(InputError):
    """Bad input, with the part of the page it belongs to: ``kernel``, ``device`` or ``launch`` (or ``request``:
    the HTTP request itself), in the page's words."""

    def __init__(self, part: str, message: str) -> None:
        super().__init__(page_words(message))
        self.part = part


class RankingTooLarge(PageError):
    """A ranking of more configurations than one request may hold."""


class RankingTimeout(Exception):
    """A request that ran past its time limit (:data:`RANK_TIME_LIMIT_S` unless the app sets another)."""


@dataclass
class Deadline:
    """When a request's work must be over: checked between its stages and by the rankings' progress callback."""

    limit_s: float | None = None
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self.limit_s = RANK_TIME_LIMIT_S if self.limit_s is None else self.limit_s
        self.end = self.clock() + self.limit_s

    def check(self, what: str, done: int | None = None, total: int | None = None) -> None:
        """Stop (:class:`RankingTimeout`) once the time is over."""
        if self.clock() > self.end:
            after = "" if total is None else f" after {done} of {total} configurations"
            raise RankingTimeout(f"the {what} ran past {self.limit_s:g} s{after}; ask for fewer thread counts or "
                                 "values here, or use the command line.")

    def progress(self, what: str) -> Callable[[int, int], None]:
        """A progress callback for :func:`warpspeed.rank` and :func:`warpspeed.whatif` that checks the time."""
        return lambda done, total: self.check(what, done, total)


# arithmetic trouble deep in the model on values the checks let through: a 422 naming the part, not a 500
_MODEL_ERRORS = (ArithmeticError, ValueError, RecursionError, MemoryError)


def _unprocessable(part: str, what: str, e: BaseException) -> PageError:
    return RankingTooLarge(part, f"{what}: these values cannot be estimated ({type(e).__name__}: {e}); bring them "
                                 "closer to a real GPU's.")


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
        raise PageError(part, f"{key}: give a non-empty text, got {_short(value)}.")
    if len(value) > limit:
        raise PageError(part, f"{key}: at most {limit} characters, got {len(value)}.")
    return value.strip()


def _short(value: object, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters (a message never echoes a whole request)."""
    if isinstance(value, dict | list | tuple) and len(value) > 8:
        return f"a {type(value).__name__} of {len(value)} items"
    if isinstance(value, int) and abs(value) >= 10**30:
        return f"a number of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _ints(doc: Mapping, key: str, part: str, n: int | None, default: object = None) -> tuple[int, ...] | None:
    value = doc.get(key)
    if value is None:  # absent or null: the field's default
        value = default
    if value is None:
        return None
    if isinstance(value, str):
        if len(value) > 200:
            raise PageError(part, f"{key}: at most 200 characters, got {len(value)}.")
        parts: object = value.replace("x", ",").split(",")
    else:
        parts = value
    if not isinstance(parts, list) or len(parts) > MAX_LIST or not all(
            (isinstance(p, int) and not isinstance(p, bool)) or (isinstance(p, str) and len(p) <= 20) for p in parts):
        raise PageError(part, f"{key}: give whole numbers X,Y,Z, got {_short(value)}.")
    try:
        out = tuple(int(str(p).strip()) for p in parts)
    except ValueError:
        raise PageError(part, f"{key}: give whole numbers X,Y,Z, got {_short(value)}.") from None
    if (n is not None and len(out) != n) or not out or any(not 1 <= v <= MAX_EXTENT for v in out):
        count = f"{n} " if n else ""
        raise PageError(part, f"{key}: give {count}positive whole numbers up to 2^31 (e.g. 32,4,8), got "
                              f"{_short(value)}.")
    return out


def query_from_json(doc: object) -> Query:
    """A :class:`Query` from the posted JSON; errors name the field and the part of the page."""
    if not isinstance(doc, Mapping):
        raise PageError("launch", "the request is a JSON object of the page's fields.")
    toml = doc.get("toml")
    if toml is not None and (not isinstance(toml, str) or len(toml) > MAX_TOML_CHARS):
        raise PageError("kernel", f"toml: the kernel's TOML text, at most {MAX_TOML_CHARS} characters.")
    kernel = "" if toml else _catalog_name(_text(doc, "kernel", "kernel"))
    overrides, model = _overrides(doc), _model(doc)
    top = doc.get("top", 10)
    if isinstance(top, bool) or not isinstance(top, int) or not 1 <= top <= RANK_TOP_MAX:
        raise PageError("launch", f"top: a number of rows from 1 to {RANK_TOP_MAX}, got {_short(top)}.")
    return Query(kernel=kernel, toml=toml or None, device=_device_id(_text(doc, "device", "device")),
                 overrides=overrides, block=_ints(doc, "block", "launch", 3, "32,4,8"),  # type: ignore[arg-type]
                 folding=_ints(doc, "folding", "launch", 3, "1,1,1"),  # type: ignore[arg-type]
                 domain=_ints(doc, "domain", "launch", 3) if doc.get("domain") else None,  # type: ignore[arg-type]
                 model=model, threads=_ints(doc, "threads", "launch", None, "1024"),  # type: ignore[arg-type]
                 top=top)


def _overrides(doc: Mapping) -> tuple[tuple[str, str], ...]:
    """The device keys the query overrides, as (key, value) texts; blank rows dropped."""
    overrides = doc.get("overrides", [])
    if not isinstance(overrides, list) or len(overrides) > MAX_OVERRIDES or not all(
            isinstance(o, list) and len(o) == 2 and all(isinstance(t, str) and len(t) <= 200 for t in o)
            for o in overrides):
        raise PageError("device", f"overrides: a list of at most {MAX_OVERRIDES} [key, value] pairs of texts, e.g. "
                                  "[[\"l2_size\", \"100MiB\"]].")
    return tuple((k.strip(), v.strip()) for k, v in overrides if k.strip() or v.strip())


def _model(doc: Mapping) -> str:
    model = doc.get("model", "latency")
    if model not in MODELS:
        raise PageError("launch", f"model: one of {', '.join(MODELS)}, got {_short(model)}.")
    return model


def _looks_like_path(text: str) -> bool:
    return any(c in text for c in "/\\~") or text.startswith(".") or text.lower().endswith(".toml")


def _catalog_name(text: str) -> str:
    """A catalog name, with parameters (``star:r=2,dims=2``): anything else, a path above all, is refused
    before anything is read (the page reads no file a request names)."""
    from ..kernels import entries, parse_kernel_name

    if _looks_like_path(text):
        raise PageError("kernel", f"kernel: {_short(text)} is a file path; the page reads no files: paste the "
                                  "kernel's TOML into the editor (or estimate the file with the command line).")
    try:
        name, _ = parse_kernel_name(text)
    except InputError as e:
        raise PageError("kernel", str(e)) from None
    known = entries()
    if name not in known:
        raise PageError("kernel", f"kernel: {_short(name)} is not in the catalog ({', '.join(known)}); paste a "
                                  "kernel's TOML into the editor for another.")
    return text


def _device_id(text: str) -> str:
    """A shipped device's id (overrides may follow it, ``H100-SXM5-80GB+l2_size=100MiB``): a path is refused
    before anything is read."""
    from ..device.builtin import looks_like_path

    if looks_like_path(text) or _looks_like_path(text.split("+", 1)[0]):
        raise PageError("device", f"device: {_short(text)} is a file path; the page takes a shipped device's id "
                                  "and reads no files: give the changes as overrides.")
    return text


def _catalog_kernel(text: str, domain: tuple[int, int, int] | None):
    """A catalog kernel, its accesses counted before it is generated (``box:r=16,dims=3``: 35,938)."""
    from ..kernels import accesses, get, parse_kernel_name

    name, params = parse_kernel_name(text)
    count = accesses(name, **params)
    if count is not None and count > MAX_ACCESSES:
        raise InputError(_too_many(count))
    try:
        return get(name, domain=domain, **params)
    except InputError:
        raise
    except Exception as e:  # a plugin's generator failing in its own way on parameters it does not check
        raise InputError(f"kernel '{text}': its generator refused these parameters ({type(e).__name__}: "
                         f"{str(e)[:200]}).") from None


def _too_many(accesses: int) -> str:
    return (f"the kernel has {accesses} loads and stores; the page takes at most {MAX_ACCESSES} (estimate larger "
            "kernels with the command line).")


def kernel_of(q: Query, deadline: Deadline | None = None):
    """The query's kernel: a catalog entry, or its TOML text read as a kernel file."""
    from ..kernel import kernel_from_dict

    try:
        if q.toml is None:
            kernel = _catalog_kernel(q.kernel, q.domain)
        else:
            try:
                data = tomllib.loads(q.toml)
            except tomllib.TOMLDecodeError as e:
                raise InputError(f"the kernel's TOML: {e}") from None
            kernel = kernel_from_dict(data, source="page", domain=q.domain)
        accesses = sum(len(f.loads) + len(f.stores) for f in kernel.fields)
        if accesses > MAX_ACCESSES:
            raise InputError(_too_many(accesses))
    except InputError as e:
        raise PageError("kernel", str(e)) from None
    except RecursionError:
        raise PageError("kernel", "the kernel's TOML nests too deeply (tables, lists or parentheses).") from None
    except _MODEL_ERRORS as e:
        raise _unprocessable("kernel", "the kernel", e) from None
    if deadline is not None:
        deadline.check("kernel")
    return kernel


def device_of(q: Query, deadline: Deadline | None = None, sweep: tuple[str, list[float]] | None = None):
    """The query's device with its overrides (``--set`` values); for a what-if, the device its ``sweep`` (key,
    values) starts from (:func:`~warpspeed.application.whatif.sweep_device`)."""
    from ..application.resolve import resolve_device
    from ..application.whatif import sweep_device
    from ..device import parse_set_options

    try:
        overrides = parse_set_options([f"{k}={v}" for k, v in q.overrides])
        dev = resolve_device(q.device, overrides) if sweep is None else sweep_device(q.device, overrides, *sweep)
    except InputError as e:
        raise PageError("device", str(e)) from None
    except _MODEL_ERRORS as e:
        raise _unprocessable("device", "the device", e) from None
    if deadline is not None:
        deadline.check("device")
    return dev


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
        args += _space_options(q, q.threads)
        if verb != "whatif":
            args += ["--top", str(q.top), "--screen", str(q.top)]
    args += _domain_and_model(q)
    plot = verb.split()[1] if verb.startswith("plot ") else None
    return shlex.join([*args, "-o", f"{plot}.png"] if plot else [*args, "--format", "json"])


def _space_options(q: Query, threads: tuple[int, ...] | None) -> list[str]:
    """``--threads`` (where given) and ``--folding`` (where not 1,1,1) of a command ranking the query's space."""
    args = [] if threads is None else ["--threads", ",".join(map(str, threads))]
    return args + (["--folding", ",".join(map(str, q.folding))] if q.folding != (1, 1, 1) else [])


def _domain_and_model(q: Query) -> list[str]:
    """``--domain`` and ``--model`` of a command, where the query sets them."""
    args = [] if q.domain is None else ["--domain", ",".join(map(str, q.domain))]
    return args + (["--model", q.model] if q.model != "latency" else [])


def _estimate(q: Query, deadline: Deadline):
    """(estimate, kernel, device) of the query's launch."""
    from ..application.estimating import estimate

    kernel, dev = kernel_of(q, deadline), device_of(q, deadline)
    try:
        e = estimate(kernel, dev, q.block, q.folding, model=q.model)
    except InputError as err:
        raise PageError("launch", str(err)) from None
    except _MODEL_ERRORS as err:
        raise _unprocessable("launch", "the estimate", err) from None
    deadline.check("estimate")
    return e, kernel, dev


def estimate_doc(q: Query, time_limit_s: float | None = None, clock: Callable[[], float] = time.monotonic) -> dict:
    """The estimate's JSON (as ``warpspeed estimate --format json`` prints it), the text report's headline and
    the command line."""
    from ..render.report import estimate_summary, validation_line

    e, _, _ = _estimate(q, Deadline(time_limit_s, clock))
    first = validation_line(e.device, e.device_validation)  # a device whose model data was never measured
    return {"estimate": e.to_dict(), "headline": estimate_summary(e) + (f"\n{first}" if first else ""),
            "command": command(q, "estimate")}


def _ranking(q: Query, deadline: Deadline):
    """(ranking, kernel, device) of the query: its ``top`` best exactly (screened), refused beyond
    :data:`MAX_RANK_CONFIGURATIONS`, stopped at the deadline."""
    from ..application.ranking import rank
    from ..studies.space import generated_block_shapes

    kernel, dev = kernel_of(q, deadline), device_of(q, deadline)
    try:  # the shapes warpspeed.rank generates: (N, 1, 1) for a one-dimensional launch
        shapes = generated_block_shapes(kernel.indexing, q.threads, dev)
    except InputError as err:
        raise PageError("launch", str(err)) from None
    if len(shapes) > MAX_RANK_CONFIGURATIONS:
        raise RankingTooLarge("launch", f"threads {','.join(map(str, q.threads))}: {len(shapes)} block shapes, more "
                                        f"than the {MAX_RANK_CONFIGURATIONS} one request ranks; rank them with the "
                                        "command line.")
    try:
        r = rank(kernel, dev, threads=q.threads, folding=(q.folding,), jobs=1, model=q.model, screen=q.top,
                 progress=deadline.progress("ranking"))
    except InputError as err:
        raise PageError("launch", str(err)) from None
    except _MODEL_ERRORS as err:
        raise _unprocessable("launch", "the ranking", err) from None
    return r, kernel, dev


def rank_doc(q: Query, time_limit_s: float | None = None, clock: Callable[[], float] = time.monotonic) -> dict:
    """The ``top`` best configurations of the blocks of ``threads`` threads (screened: only they are estimated in
    full), refused beyond :data:`MAX_RANK_CONFIGURATIONS`, stopped after ``time_limit_s``."""
    r, _, _ = _ranking(q, Deadline(time_limit_s, clock))
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
    (the reference block of the kernel's front end marked). Needs the ``plot`` extra (else a clear 400)."""
    from ..render import plots

    if kind not in PLOTS:
        raise PageError("launch", f"plot: one of {', '.join(PLOTS)}, got {_short(kind)}.")
    deadline = Deadline(time_limit_s, clock)
    if kind == "roofline":
        e, kernel, dev = _estimate(q, deadline)
        fig = plots.roofline_plot(e, dev, flops_per_lup=kernel.flops.total)
        return {"png": _png(fig), "command": command(q, "plot roofline")}
    from ..application.ranking import front_end_of, reference_block, reference_estimate

    r, kernel, dev = _ranking(q, deadline)
    try:
        front = front_end_of(q.kernel if q.toml is None else kernel)
        reference = reference_estimate(r, kernel, dev, reference_block(kernel, front.reference), model=q.model)
    except InputError as err:
        raise PageError("launch", str(err)) from None
    except _MODEL_ERRORS as err:
        raise _unprocessable("launch", "the reference block's estimate", err) from None
    deadline.check("ranking")
    fig = plots.ranking_plot(r, top=q.top, reference=reference, reference_label=front.reference.label)
    return {"png": _png(fig), "command": command(q, "plot ranking")}


def whatif_doc(q: Query, sweep: object, time_limit_s: float | None = None,
               clock: Callable[[], float] = time.monotonic) -> dict:
    """The best configuration for each value of one device key (``KEY=START:STOP:N[:log]`` or ``KEY=V1,V2``),
    as ``warpspeed whatif`` gives them, with its chart when plots are installed."""
    from ..application.whatif import sweep_values, whatif
    from ..device import override_kind

    if not isinstance(sweep, str) or not sweep.strip() or len(sweep) > 200:
        raise PageError("device", "sweep: give KEY=START:STOP:N[:log] or KEY=V1,V2,... in at most 200 characters "
                                  "(e.g. l2_size=10MiB:160MiB:5:log).")
    deadline = Deadline(time_limit_s, clock)
    try:
        key, values = sweep_values(sweep)
    except InputError as err:
        raise PageError("device", str(err)) from None
    except _MODEL_ERRORS as err:
        raise _unprocessable("device", "the sweep", err) from None
    if len(values) > MAX_SWEEP_POINTS:
        raise RankingTooLarge("device", f"sweep: {len(values)} values, more than the {MAX_SWEEP_POINTS} one request "
                                        "sweeps.")
    kernel, dev = kernel_of(q, deadline), device_of(q, deadline, (key, values))
    try:
        points = whatif(kernel, dev, key, values, threads=q.threads, folding=(q.folding,), jobs=1, model=q.model,
                        progress=deadline.progress("sweep"))
    except InputError as err:
        raise PageError("device", str(err)) from None
    except _MODEL_ERRORS as err:
        raise _unprocessable("device", "the sweep", err) from None
    doc: dict = {"key": key, "points": [p.to_dict(override_kind(key)) for p in points]}
    deadline.check("sweep")
    try:
        from ..render import plots

        doc["png"] = _png(plots.whatif_plot(points, reference=dev))
    except InputError:  # no matplotlib: the table alone
        pass
    doc["command"] = command(q, "whatif", sweep)
    return doc


def _rank_devices_list(value: object) -> tuple[str, ...] | None:
    """The ``devices`` field of a device ranking: shipped ids (no paths), at most :data:`MAX_RANK_DEVICES`; absent,
    null or empty: every shipped device."""
    if value is None or value == []:
        return None
    if not isinstance(value, list) or len(value) > MAX_RANK_DEVICES or not all(
            isinstance(v, str) and v.strip() and len(v) <= 200 for v in value):
        raise PageError("device", f"devices: a list of at most {MAX_RANK_DEVICES} shipped device ids (e.g. "
                                  f"[\"H100-SXM5-80GB\", \"B200\"]), or none for every shipped device; got "
                                  f"{_short(value)}.")
    from ..device.builtin import looks_like_path

    ids = tuple(v.strip() for v in value)
    for i in ids:
        if looks_like_path(i) or _looks_like_path(i):
            raise PageError("device", f"devices: {_short(i)} is a file path; the page reads no files: give shipped "
                                      "device ids.")
        if "+" in i:
            raise PageError("device", f"devices: {_short(i)}: give shipped device ids as they are; a device ranking "
                                      "takes no overrides (estimate or rank one device to see an override's effect).")
    if len(set(ids)) < len(ids):
        raise PageError("device", f"devices: {_short(next(i for i in ids if ids.count(i) > 1))} is named twice; name "
                                  "each device once.")
    return ids


def _device_rank_command(q: Query, devices: tuple[str, ...] | None, threads: tuple[int, ...] | None) -> str:
    """``warpspeed devices rank`` with the request's fields (``kernel.toml``: the page's TOML text, saved)."""
    args = ["warpspeed", "devices", "rank", q.kernel if q.toml is None else "kernel.toml"]
    for d in devices or ():
        args += ["--device", d]
    return shlex.join([*args, *_space_options(q, threads), *_domain_and_model(q), "--format", "json"])


def devices_rank_doc(doc: object, time_limit_s: float | None = None,
                     clock: Callable[[], float] = time.monotonic) -> dict:
    """Which GPU for the request's kernel: its best configuration on each shipped device (or the ``devices``
    named), as ``warpspeed devices rank --format json`` gives it, with the text's headline, the chart when plots
    are installed, and the command line. Without ``threads``: blocks of 1024 threads, fewer on a device where they
    cannot launch. Stopped at the time limit between devices."""
    from ..application.device_ranking import rank_devices, resolve_devices
    from ..render.device_ranking_report import device_ranking_headline
    from ..studies.space import block_shapes

    if not isinstance(doc, Mapping):
        raise PageError("launch", "the request is a JSON object of the page's fields.")
    if doc.get("overrides"):
        raise PageError("device", "overrides: a device ranking takes the shipped devices as they are; estimate or "
                                  "rank one device to see an override's effect.")
    deadline = Deadline(time_limit_s, clock)
    devices = _rank_devices_list(doc.get("devices"))
    threads = None if doc.get("threads") is None else _ints(doc, "threads", "launch", None)
    q = query_from_json({k: v for k, v in doc.items() if k in DEVICE_RANK_FIELDS} | {"device": "-"})
    shapes = len(block_shapes(threads or (1024,)))
    if shapes > MAX_RANK_CONFIGURATIONS:
        asked = ",".join(map(str, threads)) if threads else "1024 (the default)"
        raise RankingTooLarge("launch", f"threads {asked}: {shapes} block shapes, more than the "
                                        f"{MAX_RANK_CONFIGURATIONS} one request ranks; rank them with the command "
                                        "line.")
    kernel = kernel_of(q, deadline)
    try:
        devs = resolve_devices(devices)
    except InputError as err:
        raise PageError("device", str(err)) from None
    except _MODEL_ERRORS as err:
        raise _unprocessable("device", "a device", err) from None
    deadline.check("device ranking")
    try:
        r = rank_devices(kernel, devs, threads, (q.folding,), model=q.model, jobs=1,
                         progress=lambda done, total: deadline.check("device ranking"))
    except InputError as err:
        raise PageError("launch", str(err)) from None
    except _MODEL_ERRORS as err:
        raise _unprocessable("launch", "the device ranking", err) from None
    out: dict = {"ranking": r.to_dict(), "headline": device_ranking_headline(r)}
    deadline.check("device ranking")
    try:
        from ..render import plots

        out["png"] = _png(plots.devices_plot(r))
    except InputError:  # no matplotlib: the table alone
        pass
    out["command"] = _device_rank_command(q, devices, threads)
    return out


@dataclass(frozen=True)
class _PageCandidate:
    """A candidate as the page names it: its text on the command line (a typed kernel saved as
    ``kernel-N.toml``), its kernels (catalog names, or a typed kernel's TOML text) and its updates."""

    text: str
    kernels: tuple[tuple[str, str | None], ...]  # (label, TOML text or None for a catalog name)
    updates: int | float | None


def _updates(value: object, where: str) -> int | float:
    """A candidate's updates of the domain: a positive finite number (``@2``)."""
    try:
        u = float(value) if isinstance(value, str) or (isinstance(value, int | float) and not isinstance(value, bool)) \
            else math.nan
    except (ValueError, OverflowError):
        u = math.nan
    if not math.isfinite(u) or u <= 0:
        raise PageError("kernel", f"{where}: the updates of the domain its kernels make together must be a positive "
                                  f"number (e.g. @2 for an even/odd pair), not {_short(value)}.")
    return int(u) if u == int(u) else u


def _page_candidates(value: object) -> list[_PageCandidate]:
    """The ``candidates`` field: 2 to :data:`MAX_COMPARE_CANDIDATES` of them, each a catalog text as the command
    line writes it (``KERNEL+KERNEL@N``; no paths) or a typed kernel ``{"toml": TEXT, "updates": N}``; at most
    :data:`MAX_COMPARE_KERNELS` kernels in all. Nothing is built here."""
    from ..application.comparison import SEQUENCE_SEPARATOR, UPDATES_SEPARATOR

    if not isinstance(value, list) or not 2 <= len(value) <= MAX_COMPARE_CANDIDATES:
        raise PageError("kernel", f"candidates: a list of 2 to {MAX_COMPARE_CANDIDATES} candidates, each a catalog "
                                  "name (kernels launched in turn joined by '+', with '@N' for the updates they make, "
                                  f"e.g. \"d3q19-srt\") or a typed kernel {{\"toml\": TEXT}}; got {_short(value)}.")
    out: list[_PageCandidate] = []
    typed = 0
    for i, c in enumerate(value):
        where = f"candidates[{i}]"
        if isinstance(c, Mapping):
            if set(c) - {"toml", "updates"} or not isinstance(c.get("toml"), str) or not c["toml"].strip() \
                    or len(c["toml"]) > MAX_TOML_CHARS:
                raise PageError("kernel", f"{where}: a typed kernel is {{\"toml\": TEXT}} (at most {MAX_TOML_CHARS} "
                                          "characters) with an optional \"updates\": N, nothing else.")
            typed += 1
            updates = None if c.get("updates") is None else _updates(c["updates"], where)
            label = f"kernel-{typed}.toml"
            text = label if updates is None else f"{label}{UPDATES_SEPARATOR}{updates}"
            out.append(_PageCandidate(text, ((label, c["toml"]),), updates))
            continue
        if not isinstance(c, str) or not c.strip() or len(c) > MAX_CANDIDATE_CHARS:
            raise PageError("kernel", f"{where}: give a catalog name (with '+' and '@N' for a sequence) in at most "
                                      f"{MAX_CANDIDATE_CHARS} characters, or {{\"toml\": TEXT}}; got {_short(c)}.")
        text = c.strip()
        body, at, tail = text.rpartition(UPDATES_SEPARATOR)
        updates = _updates(tail, f"{where} {_short(text)}") if at else None
        parts = [p.strip() for p in (body if at else text).split(SEQUENCE_SEPARATOR)]
        if not all(parts):
            raise PageError("kernel", f"{where} {_short(text)}: an empty kernel between '+' separators; write a "
                                      "sequence as KERNEL+KERNEL@N.")
        out.append(_PageCandidate(text, tuple((_catalog_name(p), None) for p in parts), updates))
    count = sum(len(c.kernels) for c in out)
    if count > MAX_COMPARE_KERNELS:
        raise PageError("kernel", f"candidates: {count} kernels in all, more than the {MAX_COMPARE_KERNELS} one "
                                  "comparison takes; compare more with the command line.")
    return out


def _compare_command(q: Query, cands: list[_PageCandidate], threads: tuple[int, ...] | None) -> str:
    """``warpspeed compare`` with the request's fields (a typed kernel saved as ``kernel-N.toml``)."""
    args = ["warpspeed", "compare", *(c.text for c in cands), "--device", q.device]
    for k, v in q.overrides:
        args += ["--set", f"{k}={v}"]
    return shlex.join([*args, *_space_options(q, threads), *_domain_and_model(q), "--format", "json"])


def compare_doc(doc: object, time_limit_s: float | None = None, clock: Callable[[], float] = time.monotonic) -> dict:
    """Candidate kernels side by side on one device, as ``warpspeed compare --format json`` gives them, with the
    command line's text (headline, confidence, table) and the command. Bounded before anything is built (the
    candidates' count and kernels, the kernels times the block shapes of ``threads``), stopped at the time
    limit between kernels and after the comparison."""
    from dataclasses import replace

    from ..application.comparison import Candidate, compare
    from ..render.compare_report import comparison_headline, comparison_text
    from ..studies.space import block_shapes

    if not isinstance(doc, Mapping):
        raise PageError("launch", "the request is a JSON object of the page's fields.")
    deadline = Deadline(time_limit_s, clock)
    cands = _page_candidates(doc.get("candidates"))
    threads = None if doc.get("threads") is None else _ints(doc, "threads", "launch", None)
    q = Query(kernel="", toml=None, device=_device_id(_text(doc, "device", "device")), overrides=_overrides(doc),
              block=(1, 1, 1), folding=_ints(doc, "folding", "launch", 3, "1,1,1"),  # type: ignore[arg-type]
              domain=_ints(doc, "domain", "launch", 3) if doc.get("domain") else None,  # type: ignore[arg-type]
              model=_model(doc), threads=threads or (1024,), top=1)
    try:
        shapes = len(block_shapes(threads or (1024,)))
    except InputError as err:
        raise PageError("launch", str(err)) from None
    kernels = sum(len(c.kernels) for c in cands)
    if kernels * shapes > MAX_RANK_CONFIGURATIONS:
        asked = ",".join(map(str, threads)) if threads else "1024 (the default)"
        raise RankingTooLarge("launch", f"{kernels} kernels of threads {asked}: {kernels * shapes} configurations "
                                        f"({shapes} block shapes each), more than the {MAX_RANK_CONFIGURATIONS} one "
                                        "request ranks; compare them with the command line.")
    dev = device_of(q, deadline)
    built = []
    for i, c in enumerate(cands):
        try:
            kernels = tuple(kernel_of(replace(q, kernel=label if toml is None else "", toml=toml), deadline)
                            for label, toml in c.kernels)
        except PageError as err:
            raise PageError(err.part, f"candidates[{i}]: {err}") from None
        built.append(Candidate(kernels, c.updates, name=c.text, labels=tuple(label for label, _ in c.kernels)))
    try:
        c = compare(built, dev, threads, (q.folding,), q.domain, model=q.model)
    except InputError as err:
        raise PageError("launch", str(err)) from None
    except _MODEL_ERRORS as err:
        raise _unprocessable("launch", "the comparison", err) from None
    deadline.check("comparison")
    return {"comparison": c.to_dict(), "headline": comparison_headline(c), "text": comparison_text(c),
            "command": _compare_command(q, cands, threads)}


def check_doc(toml: object) -> dict:
    """Whether TOML text is a valid kernel (the page checks as one types): its name, domain and accesses."""
    if not isinstance(toml, str) or len(toml) > MAX_TOML_CHARS:
        raise PageError("kernel", f"toml: the kernel's TOML text, at most {MAX_TOML_CHARS} characters.")
    k = kernel_of(Query("", toml, "-", (), (1, 1, 1), (1, 1, 1), None, "latency", (1,), 1), Deadline())
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
