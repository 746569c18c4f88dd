"""The HTTP side of ``warpspeed serve``: a Flask app with the page and a small JSON API.

Routes: ``GET /`` (the page), ``GET /api/devices``, ``GET /api/kernels``, ``POST /api/check`` (a kernel's
TOML text), ``POST /api/estimate``, ``POST /api/rank``, ``POST /api/plot`` (roofline or ranking, PNG as
base64) and ``POST /api/whatif`` (a sweep of one device key). Answers are JSON. Bad input is 400 with
``{"error": message, "part": "kernel" | "device" | "launch"}``; a body over 64 KiB is 413, a ranking too
large for one request 422, one that runs past the time limit 503; anything else 500 with the error's type,
never a traceback. Each request is served on its own thread and shares no mutable state with another.
"""

from __future__ import annotations

import ipaddress
import sys
from importlib import resources
from typing import Any

from ..errors import InputError, install_hint
from . import service


def create_app(rank_time_limit_s: float | None = None) -> Any:
    """The Flask application (``rank_time_limit_s``: the ranking time limit, default the service's)."""
    try:
        from flask import Flask, Response, jsonify, request
    except ImportError:
        raise InputError(f"warpspeed serve needs Flask; {install_hint('web')}.") from None

    app = Flask(__name__, static_folder=str(resources.files("warpspeed.web") / "static"), static_url_path="/static")
    app.config["MAX_CONTENT_LENGTH"] = service.MAX_BODY_BYTES
    app.json.sort_keys = False

    def body() -> Any:
        doc = request.get_json(silent=True)
        if doc is None:
            raise service.PageError("launch", "the request body must be a JSON object.")
        return doc

    @app.get("/")
    def page() -> Response:
        return app.send_static_file("index.html")

    @app.get("/api/devices")
    def devices() -> Any:
        return jsonify(service.devices_doc())

    @app.get("/api/kernels")
    def kernels() -> Any:
        return jsonify(service.kernels_doc())

    @app.post("/api/check")
    def check() -> Any:
        doc = body()
        return jsonify(service.check_doc(doc.get("toml") if isinstance(doc, dict) else None))

    @app.post("/api/estimate")
    def estimate() -> Any:
        return jsonify(service.estimate_doc(service.query_from_json(body())))

    @app.post("/api/rank")
    def rank() -> Any:
        return jsonify(service.rank_doc(service.query_from_json(body()), rank_time_limit_s))

    @app.post("/api/plot")
    def plot() -> Any:
        doc = body()
        kind = doc.get("plot") if isinstance(doc, dict) else None
        return jsonify(service.plot_doc(service.query_from_json(doc), kind, rank_time_limit_s))

    @app.post("/api/whatif")
    def whatif() -> Any:
        doc = body()
        sweep = doc.get("sweep") if isinstance(doc, dict) else None
        return jsonify(service.whatif_doc(service.query_from_json(doc), sweep, rank_time_limit_s))

    @app.errorhandler(service.RankingTooLarge)
    def too_large(e: service.RankingTooLarge) -> Any:
        return jsonify(error=str(e), part=e.part), 422

    @app.errorhandler(InputError)
    def bad_input(e: InputError) -> Any:
        return jsonify(error=str(e), part=getattr(e, "part", "launch")), 400

    @app.errorhandler(service.RankingTimeout)
    def timeout(e: service.RankingTimeout) -> Any:
        return jsonify(error=str(e), part="launch"), 503

    @app.errorhandler(413)
    def oversize(_e: Any) -> Any:
        return jsonify(error=f"the request is larger than {service.MAX_BODY_BYTES // 1024} KiB.", part="kernel"), 413

    @app.errorhandler(404)
    def not_found(_e: Any) -> Any:
        return jsonify(error=f"no such page or API: {request.path}"), 404

    @app.errorhandler(405)
    def wrong_method(_e: Any) -> Any:
        return jsonify(error=f"{request.method} is not how {request.path} is asked"), 405

    @app.errorhandler(Exception)
    def internal(e: Exception) -> Any:  # never a traceback to the page
        return jsonify(error=f"internal error ({type(e).__name__}); please report it with the page's link"), 500

    return app


def serve(host: str = "127.0.0.1", port: int = 8765) -> None:
    """Serve the page until interrupted; prints the address (and a warning when it is not this machine's)."""
    from werkzeug.serving import make_server

    app = create_app()
    server = make_server(host, port, app, threaded=True)
    if not is_loopback_host(host):
        print(f"warning: serving on {host}: anyone who can reach this machine can use the page (and its CPU); "
              "there is no login.", file=sys.stderr)
    shown = "127.0.0.1" if host in ("0.0.0.0", "::") else host
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
