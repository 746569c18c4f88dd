"""warpspeed serve against hostile requests: no file a request names is read, foreign Host and Origin are
refused before any work, slow clients are dropped at the read deadline, connections are limited, answers are
strict JSON, work is bounded before it starts, and errors name the page's fields, not command-line flags."""

import importlib
import json
import socket
import threading

import pytest

pytest.importorskip("flask")

from paths import ROOT  # noqa: E402

from warpspeed import kernels  # noqa: E402
from warpspeed.web import app as web  # noqa: E402
from warpspeed.web import service  # noqa: E402

H100 = "H100-SXM5-80GB"
SECRET = "warpspeed-test-secret"


@pytest.fixture
def client():
    return web.create_app().test_client()


@pytest.fixture
def bait(tmp_path, monkeypatch):
    """A kernel file, a settings file and a text holding a secret, in the server's working folder."""
    (tmp_path / "secret.toml").write_text(f'name = "{SECRET}"\ndomain = [8]\n[[field]]\nname = "a"\nelement_bytes'
                                          ' = 8\nshape = ["nx"]\nloads = [["tidx"]]\nstores = []\n')
    (tmp_path / "settings.toml").write_text(f'password = "{SECRET}"\n')
    (tmp_path / "notes").write_text(SECRET)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def no_reads(monkeypatch):
    """Make every way the package reads a kernel or device file fail the test."""
    def never(*args, **kwargs):
        raise AssertionError(f"a file was read: {args}")

    monkeypatch.setattr(importlib.import_module("warpspeed.kernel"), "read_kernel_text", never)
    monkeypatch.setattr(importlib.import_module("warpspeed.device.builtin"), "load_device_file", never)


@pytest.mark.parametrize("name", ["secret.toml", "./secret.toml", "notes", "/etc/passwd", "/dev/zero",
                                  "../../../../etc/passwd", "/proc/self/environ", "~/.bashrc", "settings.toml",
                                  "..", "kernels/star3d-r4.toml"])
def test_a_kernel_path_is_refused_unread(client, bait, monkeypatch, name):
    """{"kernel": "/etc/passwd"} opened the server's file and quoted it; /dev/zero read until MemoryError."""
    no_reads(monkeypatch)
    for route in ("/api/estimate", "/api/rank", "/api/whatif", "/api/plot"):
        r = client.post(route, json={"kernel": name, "device": H100, "sweep": "l2_size=1MiB,2MiB", "plot": "roofline"})
        doc = r.get_json()
        assert r.status_code == 400 and doc["part"] == "kernel" and doc["error"].startswith("kernel: "), doc
        assert SECRET not in r.get_data(as_text=True) and "root:" not in doc["error"]


@pytest.mark.parametrize("name", [str(ROOT / "warpspeed" / "devices" / "H100-SXM5-80GB.toml"), "/etc/hostname",
                                  "settings.toml", "../../../../etc/passwd", "notes/x", "secret.toml+l2_size=1MiB"])
def test_a_device_path_is_refused_unread(client, bait, monkeypatch, name):
    no_reads(monkeypatch)
    r = client.post("/api/estimate", json={"kernel": "copy", "device": name})
    doc = r.get_json()
    assert r.status_code == 400 and doc["part"] == "device" and "reads no files" in doc["error"], doc
    assert SECRET not in r.get_data(as_text=True)


def test_catalog_names_and_parameters_still_work(client):
    for name in ("star3d-r1", "star:r=2,dims=2", "box:r=1,dims=3"):
        r = client.post("/api/estimate", json={"kernel": name, "device": H100, "block": "64,4,1"})
        assert r.status_code == 200, r.get_json()


def test_a_large_generated_kernel_is_refused_before_it_is_built(client, monkeypatch):
    """box:r=16,dims=3 (35,937 loads) was generated and estimated for 17 s."""
    def never(**kwargs):
        raise AssertionError("the generator ran")

    real = kernels.entries

    def entries():
        out = real()
        out["box"] = kernels.CatalogEntry("box", "box", never, out["box"].params, accesses=kernels.box_accesses)
        return out

    monkeypatch.setattr(kernels, "entries", entries)
    r = client.post("/api/estimate", json={"kernel": "box:r=16,dims=3", "device": H100})
    assert r.status_code == 400 and "35938 loads and stores; the page takes at most 512" in r.get_json()["error"]


@pytest.mark.parametrize(("host", "served"), [
    ("localhost", True), ("localhost:8765", True), ("127.0.0.1:8765", True), ("[::1]:8765", True),
    ("LOCALHOST", True), ("localhost.", True), ("evil.example", False), ("evil.example:8765", False),
    ("127.0.0.1.nip.io", False), ("::1", False), ("[::1", False), ("localhost:notaport", False), ("", False),
    ("127.0.0.2", False)])
def test_a_foreign_host_is_refused_before_any_work(client, monkeypatch, host, served):
    """A page on another origin that rebinds its name to 127.0.0.1 could use every route."""
    calls = []
    monkeypatch.setattr(service, "estimate_doc", lambda q, limit=None: calls.append(q) or {"ok": 1})
    r = client.post("/api/estimate", json={"kernel": "copy", "device": H100}, headers={"Host": host})
    if served:
        assert r.status_code == 200 and len(calls) == 1
    else:
        assert r.status_code == 403 and r.get_json()["part"] == "request" and not calls


def test_the_served_address_and_named_hosts_are_allowed():
    assert {"localhost", "127.0.0.1", "::1", "192.168.1.20", "gpu-box.lab"} <= web.allowed_hosts(
        "192.168.1.20", ["gpu-box.lab"])
    assert "evil.example" not in web.allowed_hosts("0.0.0.0")
    assert socket.gethostname().lower() in web.allowed_hosts("0.0.0.0")
    c = web.create_app(hosts=web.allowed_hosts("192.168.1.20")).test_client()
    assert c.get("/api/devices", headers={"Host": "192.168.1.20:8765"}).status_code == 200
    assert c.get("/api/devices", headers={"Host": "192.168.1.21:8765"}).status_code == 403


def test_another_sites_origin_and_simple_requests_are_refused(client):
    query = {"kernel": "copy", "device": H100}
    r = client.post("/api/estimate", json=query, headers={"Origin": "http://evil.example"})
    assert r.status_code == 403
    assert client.post("/api/estimate", json=query, headers={"Origin": "http://localhost:8765"}).status_code == 200
    # a form or text/plain post needs no CORS preflight: refused, so another site's page cannot send one
    r = client.post("/api/estimate", data=json.dumps(query), content_type="text/plain")
    assert r.status_code == 415 and "application/json" in r.get_json()["error"]
    assert client.options("/api/estimate").status_code == 405


@pytest.mark.parametrize("body", [b"NaN", b'{"top": NaN}', b'{"top": Infinity}', b'{"top": 1e999}',
                                  b"[" * 50000, b'{"a":' * 12000, b"\xff\xfe", b'{"top": ' + b"9" * 5000 + b"}"],
                         ids=["NaN", "NaN-field", "Infinity", "1e999", "deep-list", "deep-object", "not-utf8",
                              "5000-digits"])
def test_malformed_json_is_400_not_500(client, body):
    r = client.post("/api/estimate", data=body, content_type="application/json")
    assert r.status_code == 400 and r.get_json()["part"] == "request", r.get_data()


def test_answers_are_strict_json(client, monkeypatch):
    """20 answers of 200 held NaN or Infinity (not JSON): a number that is not finite is null."""
    monkeypatch.setattr(service, "estimate_doc", lambda q, limit=None: {"a": float("nan"), "b": [float("inf"), 1.5]})
    r = client.post("/api/estimate", json={"kernel": "copy", "device": H100})
    assert json.loads(r.get_data(), parse_constant=lambda c: pytest.fail(c)) == {"a": None, "b": [None, 1.5]}


@pytest.mark.parametrize(("field", "value"), [("block", 10**4000), ("block", [2**40, 1, 1]), ("block", "1" * 5000),
                                               ("threads", ",".join(["1"] * 5000)), ("block", [[1], 2, 3]),
                                               ("overrides", [["l2_size", "1MiB"]] * 100), ("top", 10**30)])
def test_oversized_fields_are_400_naming_them(client, field, value):
    r = client.post("/api/rank", json={"kernel": "copy", "device": H100, field: value})
    doc = r.get_json()
    assert r.status_code == 400 and field in doc["error"] and len(doc["error"]) < 400, doc


def test_null_fields_take_their_defaults(client):
    """"folding": null reached the command line's text (TypeError, 500)."""
    r = client.post("/api/estimate", json={"kernel": "copy", "device": H100, "folding": None, "block": None})
    assert r.status_code == 200 and "--block 32,4,8 --folding 1,1,1" in r.get_json()["command"]
    r = client.post("/api/rank", json={"kernel": "copy", "device": H100, "threads": None, "top": 2})
    assert r.status_code == 200 and "--threads 1024" in r.get_json()["command"]


def test_errors_name_the_pages_fields_not_command_line_flags(client):
    """The page said '--sweep', '--domain', '--set': flags the page does not have."""
    r = client.post("/api/whatif", json={"kernel": "copy", "device": H100, "sweep": "l2_size"})
    assert r.status_code == 400 and r.get_json()["error"].startswith("the what-if field 'l2_size' is malformed")
    toml = (ROOT / "kernels" / "copy.toml").read_text()
    toml = "\n".join(line for line in toml.splitlines() if not line.startswith("domain"))
    r = client.post("/api/check", json={"toml": toml})
    assert r.status_code == 400 and "the domain field" in r.get_json()["error"] and "--" not in r.get_json()["error"]
    assert service.page_words("give --set KEY=V or --threads 256 (--jobs 4)") == (
        "give an override KEY=V or the rank threads field 256 (--jobs 4)")


@pytest.fixture
def live(monkeypatch):
    """The page on a free loopback port with a read deadline of 1 s and at most 3 connections."""
    monkeypatch.setattr(web, "READ_TIMEOUT_S", 1.0)
    srv = web.make_page_server("127.0.0.1", 0, web.create_app(), max_connections=3)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    yield srv
    srv.shutdown()
    srv.server_close()


def connect(srv) -> socket.socket:
    return socket.create_connection(("127.0.0.1", srv.server_port), timeout=60)


def read_all(s: socket.socket) -> bytes:
    out = b""
    while chunk := s.recv(65536):
        out += chunk
    return out


def request(srv, body: bytes = b'{"toml": "x"}') -> bytes:
    with connect(srv) as s:
        s.sendall(b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Connection: close\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        return read_all(s)


def test_a_half_sent_body_is_dropped_at_the_read_deadline(live):
    """40 half-sent bodies held 40 server threads with no read timeout."""
    with connect(live) as s:
        s.sendall(b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  b"Content-Length: 1000\r\n\r\n{\"toml\": ")
        answer = read_all(s)  # the server closes the connection (the socket's 60 s timeout would fail the test)
    assert answer == b"" or answer.startswith(b"HTTP/1.1 408")
    with connect(live) as s:  # headers never finished
        s.sendall(b"POST /api/check HTTP/1.1\r\nHost: 127.0.0.1\r\n")
        assert read_all(s) == b""
    with connect(live) as s:  # a connection that sends nothing
        assert read_all(s) == b""
    assert request(live).startswith(b"HTTP/1.1 400")  # the server still serves


def test_connections_beyond_the_limit_are_refused_at_once_and_the_slots_come_back(live, monkeypatch):
    monkeypatch.setattr(web, "READ_TIMEOUT_S", 30.0)  # the idle connections stay while the test runs
    idle = [connect(live) for _ in range(3)]
    for s in idle:
        s.sendall(b"GET /api/devices HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # headers not finished: held
    with connect(live) as s:
        refusal = read_all(s)
    assert refusal.startswith(b"HTTP/1.1 503") and b"as many connections" in refusal
    for s in idle:
        s.close()
    for _ in range(100):  # the server notices the closed connections and frees their slots
        answer = request(live)
        if answer.startswith(b"HTTP/1.1 400"):
            break
    assert answer.startswith(b"HTTP/1.1 400"), answer[:100]


def test_the_documented_bounds_are_the_codes():
    text = (ROOT / "docs" / "web-page.md").read_text()
    for fragment in [f"| {service.MAX_BODY_BYTES // 1024} KiB (413)",
                     f"| {service.MAX_TOML_CHARS // 1024} Ki characters",
                     f"| {service.MAX_ACCESSES}, counted before", f"| {service.MAX_RANK_CONFIGURATIONS} (422)",
                     f"| {service.MAX_SWEEP_POINTS} (422)", f"| {service.MAX_OVERRIDES} pairs",
                     f"| {service.MAX_LIST} numbers, each 1 to 2^{service.MAX_EXTENT.bit_length() - 1}",
                     f"| {service.RANK_TIME_LIMIT_S:g} s per request", f"| {web.READ_TIMEOUT_S:g} s for its line",
                     f"| {web.WRITE_TIMEOUT_S:g} s |", f"| {web.MAX_CONNECTIONS}; one more"]:
        assert fragment in text, fragment
