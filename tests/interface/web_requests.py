"""Hostile HTTP requests to ``warpspeed serve``, for the fuzz test (tests/interface/test_web_fuzz.py) and the
longer run of benchmarks/fuzz_web.py.

:func:`make_case` draws one request from a seeded ``random.Random`` (every case can be replayed): a query of
the page with its fields mutated (wrong types, huge and non-finite numbers, paths instead of names, hostile
overrides, sweeps and kernels, deep nesting), a kernel's TOML mutated, or a malformed request (not JSON, not
UTF-8, oversized, wrong method, content type, route or ``Host``). :func:`send` sends it over one loopback
connection and :func:`verdict` names what went wrong with the answer, if anything: a 5xx, a body that is not
strict JSON or lacks ``error`` and ``part``, a path answered with anything but a refusal, a secret of a bait
file in the answer, a foreign ``Host`` served.
"""

from __future__ import annotations

import http.client
import json
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

H100 = "H100-SXM5-80GB"
ROUTES = ("/api/estimate", "/api/estimate", "/api/estimate", "/api/check", "/api/rank", "/api/plot", "/api/whatif")
SECRET = "warpspeed-fuzz-secret-7f3a"  # written into the bait files: it must never come back in an answer
CATALOG = ["star3d-r4", "star3d-r1", "star2d-r1", "copy", "box3d-r1", "star", "box", "star:r=2,dims=2",
           "box:r=2,dims=2", "star:r=16,dims=3", "box:r=16,dims=3", "box:r=7,dims=3", "box:r=8,dims=3",
           "star:r=99", "star:r=-1", "star:dims=4", "star:element_bytes=2", "box:r=abc", "star:q=1", "star:r=",
           "star:r=1:2", "d3q19-srt", "d3q19-srt:layout=xyz", "d3q19-srt:streaming=aa", "lbm:stencil=D9Q99",
           "lbm:method=nope", "no-such-kernel", "", " ", "STAR3D-R4", "star3d-r4 ", "\u00e9\u00e8", "\x00", "a" * 300]
PATHS = ["/etc/passwd", "/etc/hostname", "/proc/self/environ", "/dev/zero", "/dev/urandom", "../../../../etc/passwd",
         "..", ".", "~/.bashrc", "/tmp", "kernels/star3d-r4.toml", "star3d-r4.toml", "C:\\Windows\\win.ini",
         "file:///etc/passwd", "/proc/self/fd/0", "./copy", "~", "\\\\server\\share"]
DEVICES = [H100, "A100-SXM4-40GB", "MI250X-GCD", "h100", "H100-SXM", "A100", "no-such-gpu", "",
           H100 + "+l2_size=100MiB", H100 + "+l2_size=1e10000000", H100 + "+max_block_dims=1e120,1e120,1e120",
           H100 + "+", H100 + "+=", "+l2_size=1MiB", "latency", "hit_rates", "links"]
KEYS = ["l2_size", "dram_bw", "clock_GHz", "sm_count", "max_block_dims", "max_threads_per_block", "warp_size",
        "l1_size", "dram_latency", "l2_request_rate", "tlb_reach", "hit_rates.l2_y.a", "registers_per_sm",
        "max_threads_per_sm", "l1_sector", "l2_line", "fp64_lanes", "no_such_key", "", "base", "name", "id"]
VALUES = ["100MiB", "1e10000000", "1e-10000000", "1e120", "1e120,1e120,1e120", "nan", "inf", "-inf", "-1", "0",
          "0.0", "1", "1e308", "1e309", "5e-324", "9" * 5000, "1500", "1.5GHz", "1500GHz", "3TB/s", "1e999MiB",
          "1024,1024,64", "1,1,1", "0,0,0", "2", "31", "33", "64", "100000", "2^40", "1e6ns", "1ns", "abc",
          "", " ", "1MiB" * 60, "\u0661\u0662", "0x10", "1_000", "1e-300GB/s", "1e300GB/s", "12/0"]
NUMBERS: list = [0, -1, 1, 2, 3, 31, 32, 33, 1024, 2**31, 2**31 - 1, 2**63, 10**30, 10**4000, 1.5, -0.0, 1e308,
                 True, False, None, "", "1e9", "32,4,8", "32x4x8", "-32,4,8", "0,0,0", "1,1", "a,b,c", [32, 4, 8],
                 [1], [], [[1]], {"x": 1}, ["32", "4", "8"], [1.5, 2, 3], [2**40, 1, 1], "1" * 5000,
                 ",".join(["1"] * 5000), "\u0663\u0662,4,8", "32,4,8,", " 32 , 4 , 8 "]
THREADS = ["1024", "256", "128,256", "100", "1", "2048", "1024,512,256,128,64,32", "0", "-256", "1e3",
           ",".join(str(1 << i) for i in range(31)), "4294967296", "2147483648", [256], [1024, 2**31]]
SWEEPS = ["l2_size=10MiB:40MiB:3:log", "l2_size=1MiB:100MiB:9", "clock_GHz=1GHz:1500GHz:3", "l3_size=1MiB",
          "l2_size=1e10000000MiB:2MiB:3", "dram_bw=1e-300TB/s,1e300TB/s", "sm_count=1:1000000:3",
          "max_block_dims=1e120:1e121:2", "l2_size=", "=", "l2_size=1MiB:2MiB:200", "l2_size=1MiB:2MiB:999999999",
          "l2_size=0MiB:10MiB:3:log", "l2_size=nan,inf", "warp_size=1,2,3", "l2_size=" + "1MiB," * 100,
          "clock_GHz=1e309GHz,1GHz", "l2_size=1MiB:2MiB:2:lin", "sm_count=0,1", "a" * 300]


@dataclass
class Case:
    """One request: what it is (for the report), how it is sent, and what a right answer must be."""

    kind: str
    method: str
    path: str
    body: bytes = b""
    headers: dict = field(default_factory=dict)
    expect: tuple[int, ...] | None = None  # the only statuses allowed, where the case fixes them


def _kernel_toml(rng: random.Random, tomls: list[str]) -> str:
    """A kernel's TOML text, mutated one to three times."""
    text = rng.choice(tomls)
    for _ in range(rng.randint(1, 3)):
        lines = text.splitlines()
        op = rng.randrange(9)
        i = rng.randrange(len(lines)) if lines else 0
        if op == 0 and lines:
            del lines[i]
        elif op == 1 and lines:
            lines.insert(i, lines[rng.randrange(len(lines))])
        elif op == 2:
            text = text.replace("tidx", rng.choice(["tidx*tidx", "tidx+" + "(" * 2000 + "1" + ")" * 2000,
                                                    "tidx**99", "tidx/0", "tidx+1e400", "tidx+" + "9" * 5000,
                                                    "__import__('os')", "tidx+nx*ny*nz*99999999", "tidq"]), 1)
            continue
        elif op == 3:
            text = text.replace("domain = [", rng.choice(["domain = [0, ", "domain = [2147483648, ",
                                                          "domain = [1e9, ", "domain = [[1], ", "domain = ["]), 1)
            continue
        elif op == 4:
            text += "\n" + rng.choice(['[[field]]\nname = "x"\nelement_bytes = 8\nshape = ["nx"]\nloads = ['
                                       + ", ".join(f'["tidx+{k}"]' for k in range(rng.choice([10, 600])))
                                       + ']\nstores = []', "x = " + "[" * 3000 + "]" * 3000,
                                       "registers = 1e400", "registers = -1", "shared_bytes_per_block = 1e300",
                                       'precision = "fp128"', "[params]\nq = 99999999999999999999"])
            continue
        elif op == 5:
            text = text[:rng.randrange(len(text) + 1)]
            continue
        elif op == 6:
            text = text.replace("element_bytes = 8", f"element_bytes = {rng.choice(['0', '-8', '3', '1e9', '2**9'])}")
            continue
        elif op == 7:
            text = text.replace("offset = 0", f"offset = {rng.choice(['-1', '99999999999', '1.5', 'nan'])}")
            continue
        else:
            text = text.replace('"', rng.choice(["'", '"""', ""]), rng.randint(1, 4))
            continue
        text = "\n".join(lines)
    return text


def _mutated_query(rng: random.Random, tomls: list[str], bait: list[str]) -> tuple[dict, str]:
    """A query of the page with some fields mutated, and what it is."""
    q: dict = {"kernel": rng.choice(["star3d-r1", "copy", "star2d-r1", "star:r=2"]), "device": H100,
               "block": rng.choice(["32,4,8", "64,4,4", "256,1,1", "16,16,1"]), "threads": "256", "top": 3,
               "domain": rng.choice([None, "128,128,64", "64,64,64"])}
    kinds = []
    for _ in range(rng.randint(1, 3)):
        what = rng.randrange(12)
        if what == 0:
            q["kernel"] = rng.choice(CATALOG)
            kinds.append("catalog")
        elif what == 1:
            q["kernel"] = rng.choice(PATHS + bait)
            kinds.append("path")
        elif what == 2:
            q.pop("kernel", None)
            q["toml"] = _kernel_toml(rng, tomls)
            kinds.append("toml")
        elif what == 3:
            q["device"] = rng.choice(DEVICES + PATHS + bait + [str(Path(p).with_suffix(".toml")) for p in bait])
            kinds.append("path" if q["device"] in PATHS + bait or q["device"].endswith(".toml") else "device")
        elif what == 4:
            q["overrides"] = [[rng.choice(KEYS), rng.choice(VALUES)] for _ in range(rng.randint(1, 4))]
            kinds.append("overrides")
        elif what == 5:
            q[rng.choice(["block", "folding", "domain"])] = rng.choice(NUMBERS)
            kinds.append("launch")
        elif what == 6:
            q["threads"] = rng.choice(THREADS)
            kinds.append("threads")
        elif what == 7:
            q[rng.choice(["top", "model", "plot", "sweep", "overrides", "kernel", "device", "toml"])] = rng.choice(
                NUMBERS + ["roofline", "ranking", "latency", "magic"])
            kinds.append("types")
        elif what == 8:
            q["sweep"] = rng.choice(SWEEPS)
            kinds.append("sweep")
        elif what == 9:
            q["overrides"] = rng.choice([[["l2_size"]], [[1, 2]], "l2_size=1MiB", {"l2_size": "1MiB"},
                                         [["l2_size", "1MiB"]] * 100, [[None, None]], [["l2_size", ["1MiB"]]]])
            kinds.append("overrides")
        elif what == 10:
            q["model"] = rng.choice(["roofline", "latency", "Latency", "", None, 1])
            kinds.append("model")
        else:
            q[rng.choice(["extra", "__proto__", "constructor"])] = rng.choice(NUMBERS)
            kinds.append("extra")
    return q, "+".join(sorted(set(kinds)))


def make_case(rng: random.Random, tomls: list[str], bait: list[str], port: int, heavy: float = 1.0) -> Case:
    """One request, drawn from ``rng``; ``tomls``: kernel texts to mutate; ``bait``: paths of files holding
    :data:`SECRET` (a path that names them must be refused unread); ``heavy``: the share of queries sent to
    rankings, plots and what-ifs kept (1: as often as to the other routes; a long run keeps fewer)."""
    json_headers = {"Content-Type": "application/json", "Host": f"127.0.0.1:{port}"}
    r = rng.random()
    if r < 0.62:
        q, kind = _mutated_query(rng, tomls, bait)
        route = rng.choice(ROUTES)
        if route in ("/api/rank", "/api/plot", "/api/whatif") and rng.random() > heavy:
            route = "/api/estimate"
        if route == "/api/plot":
            q.setdefault("plot", rng.choice(["roofline", "ranking", "pie"]))
        if route == "/api/whatif":
            q.setdefault("sweep", rng.choice(SWEEPS[:3]))
        if route in ("/api/rank", "/api/plot", "/api/whatif") and rng.random() < 0.7:  # keep the work moderate
            q["threads"] = rng.choice(["256", "128", "64"])
        body = json.dumps(q).encode()
        expect = (400,) if kind == "path" and route != "/api/check" else None
        return Case(f"query:{kind}", "POST", route, body, json_headers, expect)
    if r < 0.70:
        return Case("check:toml", "POST", "/api/check", json.dumps({"toml": _kernel_toml(rng, tomls)}).encode(),
                    json_headers)
    host = rng.choice([f"evil.example:{port}", "evil.example", f"127.0.0.1.nip.io:{port}", "localhost.evil",
                       "", "127.0.0.2", "[::2]", "[::1", "localhost:99999999", "0x7f.1", "LOCALHOST", "::1",
                       f"localhost:{port}", f"[::1]:{port}", "127.0.0.1"])
    bad_json = [b"", b"{", b"null", b"[]", b"1", b'"x"', b"NaN", b'{"top": NaN}', b'{"top": Infinity}',
                b'{"top": 1e999}', b'{"top": ' + b"9" * 5000 + b"}", b"[" * 100000, b'{"a":' * 20000,
                b"\xff\xfe{}", b'{"kernel": "\xff"}', b"{}" * 2, b'{"kernel": "star3d-r1", "device": "' + H100.encode()
                + b'", "top": -0}', b"\x00" * 100, json.dumps({"kernel": "x" * 70000}).encode()]
    what = rng.randrange(8)
    if what == 0:
        served = {"localhost", "LOCALHOST", "127.0.0.1", f"localhost:{port}", f"[::1]:{port}"}
        expect = (200,) if host in served else (403,)
        return Case("host", "GET", "/api/devices", headers={"Host": host} if host else {}, expect=expect)
    if what == 1:
        return Case("origin", "POST", "/api/check", json.dumps({"toml": tomls[0]}).encode(),
                    {**json_headers, "Origin": rng.choice(["http://evil.example", "null", "https://127.0.0.1.evil",
                                                           f"http://localhost:{port}", "file://"])})
    if what == 2:
        return Case("json", "POST", rng.choice(ROUTES), rng.choice(bad_json), json_headers)
    if what == 3:
        return Case("type", "POST", rng.choice(ROUTES), b'{"kernel": "copy", "device": "' + H100.encode() + b'"}',
                    {"Host": f"127.0.0.1:{port}", "Content-Type": rng.choice(
                        ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data", "",
                         "application/json; charset=latin-1", "application/jsonx"])})
    if what == 4:
        return Case("method", rng.choice(["GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "TRACE"]),
                    rng.choice([*ROUTES, "/api/devices", "/"]), b"{}", json_headers)
    if what == 5:
        path = rng.choice(["/static/../../../../etc/passwd", "/static/%2e%2e/%2e%2e/etc/passwd", "/../etc/passwd",
                           "/static/..%2f..%2fapp.py", "/static/app.js", "/static/", "/api/", "/api/estimate/",
                           "/static/" + "a" * 3000, "/%00", "/static//etc/passwd", "/api/devices?x=" + "1" * 5000,
                           "/static/app.js/..", "/index.html", "//etc/passwd", "/api/kernels"])
        return Case("route", "GET", path, headers={"Host": f"127.0.0.1:{port}"}, expect=None)
    if what == 6:
        return Case("oversize", "POST", rng.choice(ROUTES), b'{"toml": "' + b"#" * 70000 + b'"}', json_headers,
                    expect=(413,))
    return Case("check:types", "POST", "/api/check", json.dumps({"toml": rng.choice(NUMBERS)}).encode(), json_headers)


@dataclass
class Answer:
    status: int
    body: bytes
    seconds: float


def send(case: Case, port: int, timeout_s: float = 120.0) -> Answer:
    """Send ``case`` to 127.0.0.1:``port`` on its own connection; status 0 means the server closed it unanswered."""
    start = time.monotonic()
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout_s)
    try:
        conn.putrequest(case.method, case.path, skip_host=True, skip_accept_encoding=True)
        for k, v in case.headers.items():
            conn.putheader(k, v)
        conn.putheader("Content-Length", str(len(case.body)))
        conn.endheaders(case.body or None)
        r = conn.getresponse()
        return Answer(r.status, r.read(), time.monotonic() - start)
    except (ConnectionError, http.client.HTTPException, TimeoutError, OSError):
        return Answer(0, b"", time.monotonic() - start)
    finally:
        conn.close()


def _strict(text: str) -> None:
    raise ValueError(f"{text} in JSON")


def verdict(case: Case, answer: Answer, time_limit_s: float) -> str | None:
    """What is wrong with ``answer`` to ``case``, or None."""
    if answer.status >= 500:
        return f"{answer.status}: {answer.body[:200]!r}"
    if answer.status == 0:
        return "no answer (connection closed)" if case.kind != "oversize" else None
    if case.expect is not None and answer.status not in case.expect:
        return f"status {answer.status}, expected {case.expect}: {answer.body[:200]!r}"
    if answer.seconds > time_limit_s:
        return f"answered after {answer.seconds:.1f} s, over the time limit {time_limit_s:g} s"
    if SECRET.encode() in answer.body:
        return "a bait file's contents came back"
    if case.method == "HEAD" or (case.kind == "route" and answer.status == 200):
        return None  # the page's static files (HTML, JavaScript, CSS)
    if answer.status == 200 and case.path == "/" and case.method == "GET":
        return None
    try:
        doc = json.loads(answer.body, parse_constant=_strict)
    except ValueError as e:
        return f"not strict JSON ({e}): {answer.body[:120]!r}"
    if answer.status >= 400 and not (isinstance(doc, dict) and isinstance(doc.get("error"), str) and doc.get("part")):
        return f"an error without 'error' and 'part': {answer.body[:200]!r}"
    if answer.status >= 400 and "Traceback" in doc["error"]:
        return "a traceback in the answer"
    return None
