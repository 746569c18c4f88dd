"""Fuzz ``warpspeed serve`` over loopback: many hostile requests, then the counts that must be zero.

The server runs in a child process, as ``warpspeed serve`` does (its own request handler threads, its
connection limit and read deadlines), with an audit hook (``sys.addaudithook``) that records every file it
opens once warmed up, and its working folder a folder of bait files holding a secret. Client threads send
seeded cases of tests/interface/web_requests.py, and slow clients (a body half sent, a connection left open
without a request) run beside them. At the end it prints the counts: answers by status and kind of case, any
5xx, any answer over the time limit, anything else wrong with an answer, the server's handler threads still
alive after the slow clients' deadline, the files the server opened outside its own package, Python and the
libraries' caches (the bait files and every path a request named among them), and the requests per second.

Run: nice python benchmarks/fuzz_web.py [--requests 100000] [--clients 6] [--minutes 20] [--seed 1] [--heavy 0.1]
It stops by itself after ``--requests`` requests or ``--minutes`` minutes, whichever comes first.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing as mp
import os
import random
import socket
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "interface"))

import web_requests as wr  # noqa: E402


def bait_files(folder: Path) -> list[str]:
    """Files a request may name: a kernel TOML, a settings TOML and a text, each holding the secret."""
    (folder / "secret.toml").write_text(f'name = "{wr.SECRET}"\ndomain = [8]\n[[field]]\nname = "{wr.SECRET}"\n'
                                        'element_bytes = 8\nshape = ["nx"]\nloads = [["tidx"]]\nstores = []\n')
    (folder / "settings.toml").write_text(f'password = "{wr.SECRET}"\n')
    (folder / "notes").write_text(wr.SECRET + "\n")
    (folder / "H100").write_text(wr.SECRET + "\n")
    names = ["secret.toml", "settings.toml", "notes", "H100", "./notes", "secret"]
    return names + [str(folder / n) for n in names[:4]]


def _server(conn, folder: str, time_limit_s: float) -> None:
    """The child: serve on a free loopback port, record opened files, report on request."""
    import os

    os.chdir(folder)  # relative names a request gives would find the bait files here
    from warpspeed.kernels import _catalog_dir
    from warpspeed.web import app as web

    application = web.create_app(rank_time_limit_s=time_limit_s)
    client = application.test_client()  # warm up: lazy imports, fonts, catalog, caches
    for path, doc in [("/api/estimate", {"kernel": "star3d-r1", "device": wr.H100}),
                      ("/api/rank", {"kernel": "copy", "device": wr.H100, "threads": "256", "top": 3}),
                      ("/api/plot", {"kernel": "copy", "device": wr.H100, "plot": "roofline"}),
                      ("/api/plot", {"kernel": "copy", "device": wr.H100, "threads": "256", "plot": "ranking"}),
                      ("/api/whatif", {"kernel": "copy", "device": wr.H100, "threads": "256",
                                       "sweep": "l2_size=10MiB:40MiB:2"}),
                      ("/api/check", {"toml": "x"}),
                      ("/api/estimate", {"kernel": "d3q19-srt", "device": wr.H100, "block": "128,1,1"})]:
        client.post(path, json=doc)
    try:  # the LBM generator's imports read /proc/stat (psutil, through joblib) on their first use
        import joblib.externals.loky  # noqa: F401
        import lbmpy  # noqa: F401
    except ImportError:
        pass
    client.get("/api/kernels")
    client.get("/api/devices")
    client.get("/")

    import site

    roots = {str(Path(p).resolve()) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages(),
                                              site.getusersitepackages(), ROOT / "warpspeed", ROOT / "plugins",
                                              _catalog_dir())}
    try:
        import matplotlib

        roots |= {matplotlib.get_cachedir(), matplotlib.get_configdir()}
    except ImportError:
        pass
    roots |= {str(Path.home() / ".cache"), "/usr/share/fonts", "/etc/fonts", "/usr/share/zoneinfo"}
    opened: collections.Counter = collections.Counter()

    def audit(event: str, args: tuple) -> None:
        if event == "open" and isinstance(args[0], str | bytes | os.PathLike):
            path = os.fsdecode(args[0])
            full = os.path.abspath(path)
            if not any(full == r or full.startswith(r.rstrip("/") + "/") for r in roots):
                opened[path] += 1

    sys.addaudithook(audit)
    server = web.make_page_server("127.0.0.1", 0, application)
    conn.send(server.server_port)

    def report() -> None:
        while True:
            try:
                msg = conn.recv()
            except EOFError:  # the parent is gone: stop serving
                server.shutdown()
                return
            handlers = [t for t in threading.enumerate() if t.name.startswith("Thread-") and t.is_alive()]
            conn.send({"threads": len(handlers), "opened": dict(opened)})
            if msg == "stop":
                server.shutdown()
                return

    threading.Thread(target=report, name="report", daemon=True).start()
    server.serve_forever()


def slow_client(port: int, kind: str) -> float:
    """A client that half sends a body (or sends nothing) and waits: seconds until the server dropped it."""
    start = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=120) as s:
        if kind == "half body":
            s.sendall(b"POST /api/estimate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                      b"Content-Length: 1000\r\n\r\n{\"kernel\": ")
        elif kind == "half headers":
            s.sendall(b"POST /api/estimate HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        while s.recv(65536):
            pass
    return time.monotonic() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--requests", type=int, default=100_000)
    ap.add_argument("--clients", type=int, default=6, help="client threads sending at once")
    ap.add_argument("--minutes", type=float, default=20.0, help="stop after this long in any case")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--heavy", type=float, default=0.1, help="share of rankings, plots, what-ifs kept (0-1)")
    ap.add_argument("--time-limit", type=float, default=20.0, help="the server's request time limit, s")
    a = ap.parse_args()
    from warpspeed.web.app import MAX_CONNECTIONS, READ_TIMEOUT_S

    tomls = [p.read_text() for p in sorted((ROOT / "kernels").glob("*.toml"))]
    folder = Path(tempfile.mkdtemp(prefix="warpspeed-fuzz-"))
    bait = bait_files(folder)
    parent, child = mp.get_context("spawn").Pipe()
    proc = mp.get_context("spawn").Process(target=_server, args=(child, str(folder), a.time_limit), daemon=True)
    proc.start()
    port = parent.recv()
    # a request may wait its turn for the interpreter behind the other clients' work: the limit it is held
    # to is the server's time limit plus the read deadline
    held_to = a.time_limit + READ_TIMEOUT_S
    statuses: collections.Counter = collections.Counter()
    by_kind: collections.Counter = collections.Counter()
    wrong: list[str] = []
    over = 0
    slowest = 0.0
    seconds: collections.Counter = collections.Counter()
    slow_cases: list[tuple[float, int, str]] = []
    lock = threading.Lock()
    counter = iter(range(a.requests))
    stop_at = time.monotonic() + a.minutes * 60
    start = time.monotonic()

    def client() -> None:
        nonlocal over, slowest
        for i in counter:
            if time.monotonic() > stop_at:
                return
            case = wr.make_case(random.Random(a.seed * 1_000_003 + i), tomls, bait, port, a.heavy)
            ans = wr.send(case, port)
            problem = wr.verdict(case, ans, held_to)
            with lock:
                statuses[ans.status] += 1
                by_kind[(case.kind.split(":")[0], ans.status)] += 1
                seconds[case.kind.split(":")[0]] += ans.seconds
                slowest = max(slowest, ans.seconds)
                if ans.seconds > 3:
                    slow_cases.append((ans.seconds, i, f"{case.kind} {case.path} {ans.status} {case.body[:300]!r}"))
                if ans.seconds > held_to:
                    over += 1
                if problem:
                    wrong.append(f"case {i} ({case.kind} {case.method} {case.path}): {problem}")

    slow: list[tuple[str, float]] = []

    def slow_clients() -> None:  # a few at a time, all through the run, within the connection limit
        kinds = ["half body", "half headers", "nothing"]
        n = 0
        while time.monotonic() < stop_at and any(t.is_alive() for t in threads):
            batch = [threading.Thread(target=lambda k=kinds[(n + j) % 3]: slow.append((k, slow_client(port, k))))
                     for j in range(min(4, MAX_CONNECTIONS - a.clients - 2))]
            n += len(batch)
            for t in batch:
                t.start()
            for t in batch:
                t.join()

    threads = [threading.Thread(target=client) for _ in range(a.clients)]
    for t in threads:
        t.start()
    slow_thread = threading.Thread(target=slow_clients)
    slow_thread.start()
    last = time.monotonic()
    while any(t.is_alive() for t in threads):
        time.sleep(1)
        if time.monotonic() - last > 60:
            last = time.monotonic()
            print(f"  {sum(statuses.values())} requests, {time.monotonic() - start:.0f} s", flush=True)
    elapsed = time.monotonic() - start
    slow_thread.join()
    time.sleep(READ_TIMEOUT_S + 2)  # every slow client's deadline has passed
    parent.send("stop")
    server_side = parent.recv()
    proc.join(30)

    total = sum(statuses.values())
    named = [p for p in server_side["opened"] if p in wr.PATHS or p in bait or str(folder) in os.path.abspath(p)]
    print(f"requests: {total} in {elapsed:.0f} s ({total / elapsed:.0f}/s), {a.clients} clients, seed {a.seed}")
    print("statuses: " + ", ".join(f"{s}: {n}" for s, n in sorted(statuses.items())))
    kinds = sorted({k for k, _ in by_kind})
    for k in kinds:
        n_k = sum(n for (kk, _), n in by_kind.items() if kk == k)
        print(f"  {k:8s} " + ", ".join(f"{s}: {n}" for (kk, s), n in sorted(by_kind.items()) if kk == k)
              + f" (mean {seconds[k] / n_k * 1000:.0f} ms)")
    print(f"5xx: {sum(n for s, n in statuses.items() if s >= 500)}")
    print(f"over the time limit ({held_to:g} s = limit {a.time_limit:g} + read {READ_TIMEOUT_S:g}): {over}; "
          f"slowest answer {slowest:.2f} s")
    for sec, i, what in sorted(slow_cases, reverse=True)[:8]:
        print(f"  slow: case {i}, {sec:.1f} s: {what}")
    print(f"wrong answers: {len(wrong)}")
    for w in wrong[:30]:
        print("  " + w)
    drops = collections.defaultdict(list)
    for k, s in slow:
        drops[k].append(s)
    for k, v in sorted(drops.items()):
        print(f"slow clients '{k}': {len(v)}, dropped after {min(v):.1f}-{max(v):.1f} s")
    print(f"handler threads still held after the deadline: {server_side['threads']}")
    print(f"files opened outside the package, Python and library caches: {len(server_side['opened'])}; named by "
          f"a request (a path of the cases, a bait file): {len(named)}")
    for p, n in sorted(server_side["opened"].items())[:20]:
        print(f"  {p} ({n}x)")


if __name__ == "__main__":
    main()
