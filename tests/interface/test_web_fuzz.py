"""A bounded fuzz of warpspeed serve over loopback: a few hundred seeded hostile requests (web_requests.py),
each answered with a 4xx or a 200 of strict JSON, never a 5xx; no file a request names is opened (an audit
hook watches this process's opens while the requests run); no handler thread is left behind. The long run,
with the counts, is benchmarks/fuzz_web.py."""

import math
import os
import random
import sys
import threading

import pytest

pytest.importorskip("flask")

from paths import ROOT  # noqa: E402
from web_requests import PATHS, SECRET, make_case, send, verdict  # noqa: E402

from warpspeed.web import app as web  # noqa: E402

_watching: dict = {}  # while a fuzz runs: "names" -> the paths to watch for, "opened" -> those opened


PACKAGE = os.path.dirname(os.path.abspath(web.__file__)).rsplit(os.sep, 1)[0]
"""The package's own files (the page, the catalog) are the server's to open, wherever it is installed: a
checkout under /tmp, which the requests name, is no file a request named."""


def _audit(event: str, args: tuple) -> None:
    names = _watching.get("names")
    if names and event == "open" and isinstance(args[0], str | bytes | os.PathLike):
        path = os.path.abspath(os.fsdecode(args[0]))
        if path.startswith(PACKAGE + os.sep) or path.startswith(str(ROOT / "kernels") + os.sep):
            return
        if path in names["exact"] or any(path == n or path.startswith(n + os.sep) for n in names["within"]):
            _watching["opened"].append(path)


def _watch() -> None:
    """Install the audit hook once (hooks cannot be removed: this one looks only while a fuzz runs)."""
    if not _watching.get("installed"):
        sys.addaudithook(_audit)
        _watching["installed"] = True


@pytest.mark.parametrize("seed", [1, 2])
def test_hostile_requests_get_4xx_or_strict_json(tmp_path, monkeypatch, seed):
    for name in ("secret.toml", "settings.toml", "notes"):
        (tmp_path / name).write_text(f'name = "{SECRET}"\n')
    monkeypatch.chdir(tmp_path)  # relative names in requests would find the bait here
    bait = ["secret.toml", "settings.toml", "notes", "./notes", str(tmp_path / "secret.toml")]
    tomls = [p.read_text() for p in sorted((ROOT / "kernels").glob("*.toml"))]
    srv = web.make_page_server("127.0.0.1", 0, web.create_app())
    serving = threading.Thread(target=srv.serve_forever, daemon=True)
    serving.start()
    handlers_before = {t for t in threading.enumerate() if t is not serving}
    _watch()
    # the bait folder and everything in it; the absolute paths requests name, as named (a request naming /tmp
    # asks for /tmp, not for the packages and metadata a checkout or a virtual environment there holds)
    _watching.update(names={"within": [str(tmp_path)],
                            "exact": {os.path.abspath(p) for p in PATHS if p.startswith("/")}}, opened=[])
    try:
        rng = random.Random(seed)
        wrong, statuses = [], {}
        for i in range(150):
            case = make_case(rng, tomls, bait, srv.server_port, heavy=0.1)
            answer = send(case, srv.server_port)
            statuses[answer.status] = statuses.get(answer.status, 0) + 1
            problem = verdict(case, answer, math.inf)  # no wall-clock limit here: the benchmark reports times
            if problem:
                wrong.append(f"case {i} ({case.kind} {case.method} {case.path} {case.body[:200]!r}): {problem}")
        opened = list(_watching["opened"])
    finally:
        _watching.update(names=None)
        srv.shutdown()
        srv.server_close()
    assert not wrong, "\n".join(wrong[:10])
    assert not opened, opened
    assert not any(s >= 500 for s in statuses) and statuses.get(200, 0) > 10 and statuses.get(400, 0) > 50, statuses
    serving.join(10)
    left = [t for t in threading.enumerate() if t not in handlers_before and t.name.startswith("Thread-")
            and t.is_alive()]
    for t in left:  # a handler still closing its connection
        t.join(10)
    assert not [t for t in left if t.is_alive()]
