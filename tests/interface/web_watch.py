"""What the page's hostile-input tests share: the page served on a free port, and a request posted while an audit
hook watches for any file opened in a bait folder (the page must read no file a request names)."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from warpspeed.web.app import create_app, make_page_server

_watch: dict = {}  # while a request is posted: "bait" -> the bait folder, "seen" -> bait files opened


def _audit(event: str, args: tuple) -> None:
    bait = _watch.get("bait")
    if bait and event == "open" and isinstance(args[0], str | bytes | os.PathLike):
        path = os.path.abspath(os.fsdecode(args[0]))
        if path.startswith(bait + os.sep):
            _watch["seen"].append(path)


def post_watching(client, route: str, body: dict, bait: os.PathLike | str):
    """``client.post(route, json=body)`` and the files under ``bait`` it opened (an audit hook cannot be removed:
    it is added once and looks only while a request is posted here)."""
    if not _watch.get("hooked"):
        sys.addaudithook(_audit)
        _watch["hooked"] = True
    _watch.update(bait=os.path.abspath(bait), seen=[])
    try:
        response = client.post(route, json=body)
    finally:
        seen, _watch["bait"] = list(_watch["seen"]), None
    return response, seen


@contextmanager
def served_page() -> Iterator[str]:
    """The app on a free port of this machine, served on threads as `warpspeed serve` does: its base URL."""
    srv = make_page_server("127.0.0.1", 0, create_app())
    thread = threading.Thread(target=srv.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{srv.server_port}"
    finally:
        srv.shutdown()


def check_hostile_answer(response, seen: list[str], schema: str, key: str, command: str) -> str:
    """What every answer to a hostile request must be: no bait file opened; a 200 whose ``key`` validates against
    the ``schema`` and whose command line starts with ``command``, or a 400/422 naming the part at fault in a
    short message without a traceback. Returns the outcome's label (for hypothesis' ``event``)."""
    import jsonschema

    from warpspeed import schemas

    doc = response.get_json()
    assert not seen, seen
    assert response.status_code in (200, 400, 422), (response.status_code, doc)
    if response.status_code == 200:
        jsonschema.Draft202012Validator(schemas.load(schema)).validate(doc[key])
        assert doc["command"].startswith(command)
        return "status 200"
    assert set(doc) == {"error", "part"} and doc["part"] in ("kernel", "device", "launch"), doc
    assert "Traceback" not in doc["error"] and len(doc["error"]) < 2000
    return f"status {response.status_code} ({doc['part']})"
