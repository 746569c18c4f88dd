"""The HTTP side of ``warpspeed serve``: a Flask app with the page and a small JSON API, and its server.

Routes: ``GET /`` (the page), ``GET /api/devices``, ``GET /api/kernels``, ``POST /api/check`` (a kernel's
TOML text), ``POST /api/estimate``, ``POST /api/rank``, ``POST /api/plot`` (roofline or ranking, PNG as
base64), ``POST /api/whatif`` (a sweep of one device key), ``POST /api/devices-rank`` (which GPU: the
kernel's best configuration on each shipped device) and ``POST /api/compare`` (candidate kernels side by side on
one device, as ``warpspeed compare``). Answers are strict JSON (a number that is not
finite is ``null``). Every error is ``{"error": message, "part": part}``, the part being ``kernel``,
``device`` or ``launch`` (the page's three boxes) or ``request`` (the HTTP request itself):

- 400: bad input, naming the field; 403: a ``Host`` (or ``Origin``) that is not this server's names;
  404, 405: no such route or method; 408: a request not fully received within :data:`READ_TIMEOUT_S`;
  413: a body over 64 KiB; 415: a body that is not ``application/json``; 422: more work than one request
  may ask for (a ranking too large, values the model cannot estimate);
- 503: a request that ran past its time limit, or a server already serving :data:`MAX_CONNECTIONS`
  connections; 500 only for a bug (with the error's type, never a traceback).

Why the ``Host`` check: any web site its user visits can send requests to 127.0.0.1, and one that rebinds its
own name to 127.0.0.1 could read the answers (DNS rebinding); a request naming a host other than this
server's is refused before any work. Requiring ``application/json`` makes a browser ask before sending a
request from another site (a CORS preflight, which this server does not grant). Each connection is served
on its own thread, at most :data:`MAX_CONNECTIONS` at once, and shares no mutable state with another.
"""

from __future__ import annotations

import io
import ipaddress
import json
import math
import socket
import sys
import threading
import time
from collections.abc import Iterable
from importlib import resources
from typing import Any

from ..errors import InputError, install_hint
from . import service

READ_TIMEOUT_S = 10.0  # a request's line, headers and body must all arrive within this, or the connection drops
WRITE_TIMEOUT_S = 30.0  # a client that does not take its answer within this is dropped
MAX_CONNECTIONS = 32  # connections served at once; more are answered 503 and closed
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


class RequestError(Exception):
    """An error about the HTTP request itself (not the page's fields), with its status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def finite(doc: Any) -> Any:
    """``doc`` with every float that is not finite replaced by None (JSON has no NaN or Infinity)."""
    if isinstance(doc, float):
        return doc if math.isfinite(doc) else None
    if isinstance(doc, dict):
        return {k: finite(v) for k, v in doc.items()}
    if isinstance(doc, list | tuple):
        return [finite(v) for v in doc]
    return doc


def _strict_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:20]} is not finite")
    return value


def _no_constant(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")


def parse_body(raw: bytes) -> Any:
    """The posted JSON (strict: no NaN, no Infinity, no number too large for a float)."""
    try:
        return json.loads(raw.decode("utf-8"), parse_float=_strict_float, parse_constant=_no_constant)
    except RecursionError:
        raise RequestError(400, "the request body nests too deeply to be the page's fields.") from None
    except UnicodeDecodeError:
        raise RequestError(400, "the request body is not UTF-8 text.") from None
    except ValueError as e:
        raise RequestError(400, f"the request body is not JSON ({str(e)[:120]}).") from None


def host_name(header: str) -> str | None:
    """The name in a ``Host`` header without its port (``[::1]:8765`` -> ``::1``), lower case; None if it is not
    a host and port."""
    h = header.strip().lower()
    if h.startswith("["):
        name, sep, rest = h[1:].partition("]")
        if not sep:
            return None
    elif h.count(":") > 1:  # an IPv6 address must be in brackets
        return None
    else:
        name, _, port = h.partition(":")
        rest = ":" + port if _ else ""
    if rest and not (rest.startswith(":") and rest[1:].isdigit() and len(rest) <= 6):
        return None
    return name.rstrip(".") or None


def allowed_hosts(host: str = "127.0.0.1", extra: Iterable[str] = ()) -> frozenset[str]:
    """The names a request may give in ``Host``: loopback ones, the address served on, ``extra``; and, served on
    every interface (``0.0.0.0``, ``::``), this machine's name and addresses."""
    names = set(LOOPBACK_NAMES) | {host.strip().strip("[]").lower()} | {e.strip().strip("[]").lower() for e in extra}
    if host in ("0.0.0.0", "::", ""):
        machine = socket.gethostname()
        names |= {machine.lower(), socket.getfqdn().lower()}
        try:
            names |= {str(info[4][0]).lower() for info in socket.getaddrinfo(machine, None)}
        except OSError:
            pass
    return frozenset(n for n in names if n)


def _origin_host(origin: str) -> str | None:
    scheme, sep, rest = origin.partition("://")
    return host_name(rest.split("/", 1)[0]) if sep and scheme in ("http", "https") else None


def create_app(rank_time_limit_s: float | None = None, hosts: Iterable[str] | None = None) -> Any:
    """The Flask application. ``rank_time_limit_s``: each request's time limit (default the service's);
    ``hosts``: the names a request's ``Host`` may give (default :func:`allowed_hosts` of 127.0.0.1)."""
    try:
        from flask import Flask
    except ImportError:
        raise InputError(f"warpspeed serve needs Flask; {install_hint('web')}.") from None

    app = Flask(__name__, static_folder=str(resources.files("warpspeed.web") / "static"), static_url_path="/static")
    app.config["MAX_CONTENT_LENGTH"] = service.MAX_BODY_BYTES
    app.url_map.merge_slashes = False  # '//x' is no route (a redirect would answer it with HTML)
    _guard_hosts(app, allowed_hosts() if hosts is None else frozenset(h.lower() for h in hosts))
    _api_routes(app, rank_time_limit_s)
    _error_handlers(app)
    return app


def _answer(doc: Any, status: int = 200) -> Any:
    """A strict-JSON response (a number that is not finite is null); the estimates' notes carry the command
    line's advice, as the command lines the page shows print them."""
    from flask import Response

    from ..render.advice import advised_notes

    return Response(json.dumps(advised_notes(finite(doc)), allow_nan=False), status, mimetype="application/json")


def _error(status: int, message: str, part: str = "request") -> Any:
    return _answer({"error": message, "part": part}, status)


def _body() -> Any:
    """The request's JSON body (415 unless it is sent as JSON, 408 unless it arrives in time)."""
    from flask import request
    from werkzeug.exceptions import ClientDisconnected

    if request.mimetype != "application/json":
        raise RequestError(415, f"send the page's fields as JSON (Content-Type: application/json), not "
                                f"{request.mimetype[:60] or 'no content type'!r}.")
    try:
        raw = request.get_data(cache=False)
    except (OSError, ClientDisconnected):  # the client stopped sending, or closed, before the read deadline
        raise RequestError(408, f"the request's body did not arrive in full within {READ_TIMEOUT_S:g} s.") from None
    return parse_body(raw)


def _field(doc: Any, key: str) -> Any:
    return doc.get(key) if isinstance(doc, dict) else None


def _guard_hosts(app: Any, allowed: frozenset[str]) -> None:
    """Refuse, before any work, a request whose ``Host`` (or ``Origin``) is not one of ``allowed``, and every
    CORS preflight."""
    from flask import request

    @app.before_request
    def check_host() -> Any:
        if request.method == "OPTIONS":  # no CORS preflight is granted: another site's page cannot ask
            return _error(405, f"OPTIONS is not how {request.path[:100]} is asked")
        name = host_name(request.headers.get("Host", ""))
        if name not in allowed:
            return _error(403, "this server answers only requests to its own names (Host "
                               f"{request.headers.get('Host', '')[:80]!r} is not one of them).")
        origin = request.headers.get("Origin")
        if origin is not None and origin != "null" and _origin_host(origin) not in allowed:
            return _error(403, f"requests from other sites (Origin {origin[:80]!r}) are not served.")
        return None


def _api_routes(app: Any, limit: float | None) -> None:
    """The page and its JSON API (each answer a document of :mod:`warpspeed.web.service`)."""

    @app.get("/")
    def page() -> Any:
        return app.send_static_file("index.html")

    @app.get("/api/devices")
    def devices() -> Any:
        return _answer(service.devices_doc())

    @app.get("/api/kernels")
    def kernels() -> Any:
        return _answer(service.kernels_doc())

    @app.post("/api/check")
    def check() -> Any:
        return _answer(service.check_doc(_field(_body(), "toml")))

    @app.post("/api/estimate")
    def estimate() -> Any:
        return _answer(service.estimate_doc(service.query_from_json(_body()), limit))

    @app.post("/api/rank")
    def rank() -> Any:
        return _answer(service.rank_doc(service.query_from_json(_body()), limit))

    @app.post("/api/plot")
    def plot() -> Any:
        doc = _body()
        return _answer(service.plot_doc(service.query_from_json(doc), _field(doc, "plot"), limit))

    @app.post("/api/whatif")
    def whatif() -> Any:
        doc = _body()
        return _answer(service.whatif_doc(service.query_from_json(doc), _field(doc, "sweep"), limit))

    @app.post("/api/devices-rank")
    def devices_rank() -> Any:
        return _answer(service.devices_rank_doc(_body(), limit))

    @app.post("/api/compare")
    def compare() -> Any:
        return _answer(service.compare_doc(_body(), limit))


def _error_handlers(app: Any) -> None:
    """Every error as ``{"error", "part"}`` with its status (module docstring); 500 only for a bug."""
    from flask import request
    from werkzeug.exceptions import HTTPException

    @app.errorhandler(RequestError)
    def bad_request(e: RequestError) -> Any:
        r = _error(e.status, str(e))
        if e.status == 408:
            r.headers["Connection"] = "close"
        return r

    @app.errorhandler(service.RankingTooLarge)
    def too_large(e: service.RankingTooLarge) -> Any:
        return _error(422, str(e), e.part)

    @app.errorhandler(InputError)
    def bad_input(e: InputError) -> Any:
        return _error(400, service.page_words(str(e)), getattr(e, "part", "launch"))

    @app.errorhandler(service.RankingTimeout)
    def timeout(e: service.RankingTimeout) -> Any:
        return _error(503, str(e), "launch")

    @app.errorhandler(HTTPException)
    def http_error(e: HTTPException) -> Any:
        messages = {404: f"no such page or API: {request.path[:100]}",
                    405: f"{request.method} is not how {request.path[:100]} is asked",
                    413: f"the request is larger than {service.MAX_BODY_BYTES // 1024} KiB."}
        r = _error(e.code or 400, messages.get(e.code or 400, e.description or e.name),
                   "kernel" if e.code == 413 else "request")
        if e.code == 413:  # the rest of the body is not read: the connection cannot serve another request
            r.headers["Connection"] = "close"
        return r

    @app.errorhandler(Exception)
    def internal(e: Exception) -> Any:  # a bug: never a traceback to the page, its type to report
        import traceback

        traceback.print_exception(e, file=sys.stderr)
        return _error(500, f"internal error ({type(e).__name__}); please report it with the page's link")


def _handler_class() -> type:
    """Werkzeug's request handler with a deadline on reading each request and a timeout on writing answers."""
    from werkzeug.serving import WSGIRequestHandler

    class _Reader(io.RawIOBase):
        """The socket's bytes, each read given only what is left of the request's read deadline."""

        def __init__(self, handler: Any) -> None:
            self.handler = handler

        def readable(self) -> bool:
            return True

        def readinto(self, b: Any) -> int:
            left = self.handler.read_deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"the request did not arrive within {READ_TIMEOUT_S:g} s")
            self.handler.connection.settimeout(left)
            return self.handler.connection.recv_into(b)

    class _Writer(io.RawIOBase):
        def __init__(self, handler: Any) -> None:
            self.handler = handler

        def writable(self) -> bool:
            return True

        def write(self, b: Any) -> int:
            self.handler.connection.settimeout(WRITE_TIMEOUT_S)
            self.handler.connection.sendall(b)
            return len(b)

    class PageRequestHandler(WSGIRequestHandler):
        protocol_version = "HTTP/1.1"
        read_deadline = 0.0

        def setup(self) -> None:
            super().setup()
            self.rfile = io.BufferedReader(_Reader(self))
            self.wfile = _Writer(self)

        def handle_one_request(self) -> None:
            self.read_deadline = time.monotonic() + READ_TIMEOUT_S
            try:
                super().handle_one_request()
            except OSError:  # the client is gone or too slow: drop the connection
                self.close_connection = True

        def log_request(self, *args: Any, **kwargs: Any) -> None:  # one line per request is noise here
            pass

    return PageRequestHandler


def make_page_server(host: str, port: int, app: Any, max_connections: int = MAX_CONNECTIONS) -> Any:
    """Werkzeug's threaded server with read deadlines and at most ``max_connections`` connections served at once
    (a further one is answered 503 and closed at once, holding no thread)."""
    from werkzeug.serving import ThreadedWSGIServer

    busy = json.dumps({"error": "the server is serving as many connections as it may; try again shortly.",
                       "part": "request"}).encode()
    refusal = (b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
               b"Connection: close\r\nContent-Length: " + str(len(busy)).encode() + b"\r\n\r\n" + busy)

    class PageServer(ThreadedWSGIServer):
        slots = threading.BoundedSemaphore(max_connections)

        def process_request(self, request: Any, client_address: Any) -> None:
            if not self.slots.acquire(blocking=False):
                try:
                    request.settimeout(1.0)
                    request.sendall(refusal)
                except OSError:
                    pass
                self.shutdown_request(request)
                return
            try:
                super().process_request(request, client_address)
            except BaseException:
                self.slots.release()
                raise

        def process_request_thread(self, request: Any, client_address: Any) -> None:
            try:
                super().process_request_thread(request, client_address)
            finally:
                self.slots.release()

    return PageServer(host, port, app, handler=_handler_class())


def serve(host: str = "127.0.0.1", port: int = 8765, hosts: Iterable[str] = ()) -> None:
    """Serve the page until interrupted; prints the address (and a warning when it is not this machine's).
    ``hosts``: further names the page may be asked under (a proxy's, a DNS name of this machine)."""
    app = create_app(hosts=allowed_hosts(host, hosts))
    server = make_page_server(host, port, app)
    if not is_loopback_host(host):
        print(f"warning: serving on {host}: anyone who can reach this machine can use the page (and its CPU); "
              "there is no login.", file=sys.stderr)
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else f"[{host}]" if ":" in host else host
    print(f"warpspeed serve: open http://{shown}:{server.server_port}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


def is_loopback_host(host: str) -> bool:
    """Whether ``host`` is this machine only (the page serves others only with a warning)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
