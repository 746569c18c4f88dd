"""warpspeed serve: the JSON API (status codes, error bodies, limits, concurrency) and the page in a real browser.

The API's numbers are compared with the command line's (``warpspeed estimate --format json``). The browser test
drives Debian's chromium through Playwright; it is skipped where either is missing (CI installs both).
"""

import importlib.util
import json
import shutil
import threading
import urllib.error
import urllib.request

import pytest

pytest.importorskip("flask")

from paths import ROOT
from web_watch import served_page  # noqa: E402

import warpspeed  # noqa: E402
from warpspeed.interface.cli import main  # noqa: E402
from warpspeed.web import service  # noqa: E402
from warpspeed.web.app import create_app  # noqa: E402

H100, A100 = "H100-SXM5-80GB", "A100-SXM4-40GB"


@pytest.fixture
def client():
    return create_app().test_client()


def cli_json(capsys, *argv) -> dict:
    assert main(list(argv)) == 0
    return json.loads(capsys.readouterr().out)


def test_the_page_and_its_lists(client):
    page = client.get("/")
    assert page.status_code == 200 and b"warpspeed" in page.data and b"/static/app.js" in page.data
    assert client.get("/static/app.js").status_code == 200
    devices = client.get("/api/devices").get_json()
    assert {"id": H100, "name": "NVIDIA H100 SXM5 80GB"} in devices["devices"] and "l2_size" in devices["override_keys"]
    kernels = {k["name"]: k for k in client.get("/api/kernels").get_json()["kernels"]}
    assert kernels["star3d-r4"]["toml"].startswith("#") and "name" in kernels["star3d-r4"]["toml"]


def test_an_estimate_is_the_command_lines(client, capsys):
    query = {"kernel": "star3d-r4", "device": H100, "overrides": [["l2_size", "100MiB"]], "block": "64,4,4",
             "folding": "1,2,1", "domain": "256,256,128"}
    doc = client.post("/api/estimate", json=query).get_json()
    cli = cli_json(capsys, "estimate", "star3d-r4", "--device", H100, "--set", "l2_size=100MiB", "--block", "64,4,4",
                   "--folding", "1,2,1", "--domain", "256,256,128", "--format", "json")
    assert doc["estimate"] == cli
    assert doc["command"] == ("warpspeed estimate star3d-r4 --device H100-SXM5-80GB --set l2_size=100MiB --block "
                              "64,4,4 --folding 1,2,1 --domain 256,256,128 --format json")
    assert doc["headline"].startswith("star3d-r4 on H100-SXM5-80GB+l2_size=100MiB, block (64, 4, 4)")


def test_the_page_headline_is_not_the_command_lines_text_report(client, monkeypatch):
    """The page's headline is the estimate's one-line summary, rendered for it: the CLI's text report may change
    (here it is replaced) without changing the page; it is the report's first line."""
    from warpspeed.render import report

    query = {"kernel": "star3d-r4", "device": H100, "block": "64,4,4", "domain": "256,256,128"}
    before = client.post("/api/estimate", json=query).get_json()["headline"]
    text = report.text_report(warpspeed.estimate("star3d-r4", H100, (64, 4, 4), domain=(256, 256, 128)))
    assert before == text.splitlines()[0] and "GLup/s" in before
    monkeypatch.setattr(report, "text_report", lambda e: "changed")
    monkeypatch.setattr(report, "headline", lambda e: "changed")
    assert client.post("/api/estimate", json=query).get_json()["headline"] == before


def test_the_page_headline_says_a_first_estimate_on_a_device_whose_model_data_was_never_measured(client):
    """As the command line's report: the summary, then the device's validation line where its family was not
    measured (B200: Hopper's data assumed); nothing more on a measured one."""
    from warpspeed.render.report import estimate_summary, validation_line

    query = {"kernel": "star3d-r4", "block": "64,4,4", "domain": "256,256,128"}
    on_b200 = client.post("/api/estimate", json={**query, "device": "B200"}).get_json()["headline"]
    e = warpspeed.estimate("star3d-r4", "B200", (64, 4, 4), domain=(256, 256, 128))
    summary, first = on_b200.split("\n")
    assert summary == estimate_summary(e) and first == validation_line(e.device, e.device_validation)
    assert "assumed from hopper" in first and "a first estimate" in first
    on_h100 = client.post("/api/estimate", json={**query, "device": H100}).get_json()["headline"]
    assert "\n" not in on_h100 and "GLup/s" in on_h100


def test_a_typed_kernel_is_estimated_and_checked(client, capsys, tmp_path):
    toml = (ROOT / "kernels" / "star3d-r1.toml").read_text()
    doc = client.post("/api/estimate", json={"toml": toml, "device": A100, "block": "32,4,2"}).get_json()
    f = tmp_path / "kernel.toml"
    f.write_text(toml)
    cli = cli_json(capsys, "estimate", str(f), "--device", A100, "--block", "32,4,2", "--format", "json")
    assert doc["estimate"]["performance_GLup_s"] == cli["performance_GLup_s"]
    assert doc["command"].startswith("warpspeed estimate kernel.toml --device A100-SXM4-40GB")
    check = client.post("/api/check", json={"toml": toml}).get_json()
    assert check == {"name": "star3d-r1", "domain": cli["domain"], "fields": ["src", "dst"], "accesses": 8}


def test_a_ranking_is_the_command_lines(client, capsys):
    query = {"kernel": "star3d-r1", "device": H100, "threads": "256", "top": 5, "domain": "128,128,128"}
    doc = client.post("/api/rank", json=query).get_json()
    cli = cli_json(capsys, "rank", "star3d-r1", "--device", H100, "--threads", "256", "--screen", "5",
                   "--domain", "128,128,128", "--format", "json", "--jobs", "1")
    assert doc["ranking"]["results"] == cli["results"][:5]
    assert "--screen 5" in doc["command"]


@pytest.mark.parametrize(("query", "part", "words"), [
    ({"kernel": "no-such-kernel", "device": H100}, "kernel", "no-such-kernel"),
    ({"toml": "name = 'x'\nfield = [", "device": H100}, "kernel", "the kernel's TOML"),
    ({"toml": (ROOT / "kernels" / "star3d-r1.toml").read_text().replace(
        '"tidx+2"', '"tidx+*2"', 1), "device": H100}, "kernel", "field 'src', load 2, index 0: expected a number"),
    ({"kernel": "copy", "device": "no-such-gpu"}, "device", "unknown device 'no-such-gpu'"),
    ({"kernel": "copy", "device": H100, "overrides": [["clock_GHz", "1500"]]}, "device", "did you mean '1500MHz'"),
    ({"kernel": "copy", "device": H100, "block": "32,4"}, "launch", "block: give 3 positive whole numbers"),
    ({"kernel": "copy", "device": H100, "model": "magic"}, "launch", "model: one of latency, roofline"),
    ("not an object", "launch", "JSON object"),
    ({"toml": 'name = "many"\ndomain = [64, 64, 64]\n[[field]]\nname = "a"\nelement_bytes = 8\n'
              'shape = ["nx+600", "ny", "nz"]\nloads = ['
              + ", ".join(f'["tidx+{i}", "tidy", "tidz"]' for i in range(600)) + ']\nstores = []\n',
      "device": H100}, "kernel", "600 loads and stores; the page takes at most 512"),
])
def test_bad_input_is_400_naming_the_field_and_the_part(client, query, part, words):
    r = client.post("/api/estimate", json=query)
    body = r.get_json()
    assert r.status_code == 400 and body["part"] == part and words in body["error"], body
    assert "Traceback" not in body["error"]


def test_limits_size_time_and_errors(client, monkeypatch):
    r = client.post("/api/check", data=b"{" + b" " * service.MAX_BODY_BYTES + b"}",
                    content_type="application/json")
    assert r.status_code == 413 and "64 KiB" in r.get_json()["error"]
    monkeypatch.setattr(service, "MAX_RANK_CONFIGURATIONS", 10)
    r = client.post("/api/rank", json={"kernel": "copy", "device": H100, "threads": "1024"})
    assert r.status_code == 422 and "more than the 10 one request ranks" in r.get_json()["error"]
    monkeypatch.undo()
    slow = create_app(rank_time_limit_s=0.0).test_client()
    r = slow.post("/api/rank", json={"kernel": "star3d-r1", "device": H100, "threads": "256"})
    assert r.status_code == 503 and "ran past 0 s" in r.get_json()["error"]
    assert client.get("/api/nothing").status_code == 404 and "no such" in client.get("/api/nothing").get_json()["error"]
    assert client.get("/api/estimate").status_code == 405
    monkeypatch.setattr(service, "estimate_doc", lambda q, limit=None: 1 / 0)
    r = client.post("/api/estimate", json={"kernel": "copy", "device": H100})
    assert r.status_code == 500 and r.get_json()["error"].startswith("internal error (ZeroDivisionError)")


@pytest.fixture
def server():
    with served_page() as url:
        yield url


def post(url: str, doc: dict, timeout: float = 60) -> tuple[int, dict]:
    req = urllib.request.Request(url, data=json.dumps(doc).encode(), headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_a_slow_ranking_does_not_hold_up_other_requests(server, monkeypatch):
    """A ranking held until the estimate fired after it has been answered: a server that served one request at
    a time would never answer the estimate (its request times out, the test fails)."""
    answered, results = threading.Event(), {}
    real = service.rank_doc

    def held(q, limit=None):
        assert answered.wait(60), "the estimate was not served while the ranking ran"
        return real(q, limit)

    monkeypatch.setattr(service, "rank_doc", held)
    ranking = threading.Thread(target=lambda: results.setdefault("rank", post(
        server + "/api/rank", {"kernel": "copy", "device": H100, "threads": "256", "top": 3})))
    ranking.start()
    results["estimate"] = post(server + "/api/estimate", {"kernel": "copy", "device": H100, "block": "256,1,1"},
                               timeout=30)
    answered.set()
    ranking.join(90)
    assert results["estimate"][0] == 200 and results["rank"][0] == 200
    assert len(results["rank"][1]["ranking"]["results"]) == 3


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (CI installs Debian's)")
def test_the_page_in_a_browser(server, capsys, tmp_path):
    """Type an expression, change the GPU and an override, see the command line's numbers; open the shared link."""
    sync_api = pytest.importorskip("playwright.sync_api")

    def cli_perf(*argv) -> float:
        return cli_json(capsys, "estimate", *argv, "--format", "json")["performance_GLup_s"]

    def shown(page, expected: float) -> None:
        page.wait_for_function("v => document.getElementById('perf').dataset.value === v", arg=repr(expected),
                               timeout=30000)

    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(server + "/")
        shown(page, cli_perf("star3d-r4", "--device", H100, "--block", "32,4,8"))
        causes = page.inner_text("#causes")
        assert all(c in causes for c in ("l1_capacity", "layer_y", "layer_z", "oversubscription"))
        page.select_option("#kernel", "star3d-r1")
        page.fill("#block", "64,4,4")
        shown(page, cli_perf("star3d-r1", "--device", H100, "--block", "64,4,4"))
        page.select_option("#device", A100)
        shown(page, cli_perf("star3d-r1", "--device", A100, "--block", "64,4,4"))
        page.click("#add-override")
        page.fill(".override .key", "l2_size")
        page.fill(".override .value", "80MiB")
        expected = cli_perf("star3d-r1", "--device", A100, "--set", "l2_size=80MiB", "--block", "64,4,4")
        shown(page, expected)
        toml = page.input_value("#toml")
        page.fill("#toml", toml.replace('"tidx+2"', '"tidx+*2"', 1))  # a typo in an expression
        page.wait_for_function("() => document.getElementById('kernel-error').textContent.includes("
                               "\"field 'src', load 2, index 0\")", timeout=30000)
        changed = toml.replace("offset = 0", "offset = 3", 1)  # a valid change: src no longer aligned
        page.fill("#toml", changed)
        f = tmp_path / "edited.toml"
        f.write_text(changed)
        edited = cli_perf(str(f), "--device", A100, "--set", "l2_size=80MiB", "--block", "64,4,4")
        shown(page, edited)
        page.wait_for_function("() => document.getElementById('kernel-error').textContent === ''", timeout=30000)
        page.screenshot(path=str(tmp_path / "page.png"), full_page=True)
        link = page.url
        again = browser.new_page()
        again.goto(link)  # the whole state is in the link
        shown(again, edited)
        assert again.input_value("#device") == A100 and again.input_value(".override .value") == "80MiB"
        again.click("#rank")  # the ranking says how sure it is, as the command line's headline does
        again.wait_for_function("() => /^(confident|close|unvalidated): /.test("
                                "document.getElementById('confidence').innerText)", timeout=60000)
        if importlib.util.find_spec("matplotlib"):
            again.click("#plot-roofline")
            again.wait_for_function("() => document.getElementById('plot').src.startsWith('data:image/png')",
                                    timeout=60000)
        browser.close()
    assert (tmp_path / "page.png").stat().st_size > 10_000


def test_plots_and_a_what_if_sweep(client, capsys, tmp_path, monkeypatch):
    import base64
    import shlex

    pytest.importorskip("matplotlib")
    query = {"kernel": "star3d-r1", "device": H100, "threads": "256", "domain": "128,128,64"}
    monkeypatch.chdir(tmp_path)
    for kind in ("roofline", "ranking"):
        r = client.post("/api/plot", json={**query, "plot": kind})
        assert r.status_code == 200, r.get_json()
        assert base64.b64decode(r.get_json()["png"]).startswith(b"\x89PNG")
        cmd = r.get_json()["command"]
        assert cmd.startswith(f"warpspeed plot {kind} star3d-r1") and cmd.endswith(f"-o {kind}.png")
        assert main(shlex.split(cmd)[1:]) == 0 and (tmp_path / f"{kind}.png").stat().st_size > 0  # it runs
        assert capsys.readouterr().out.startswith("wrote ")
    assert client.post("/api/plot", json={**query, "plot": "pie"}).status_code == 400
    doc = client.post("/api/whatif", json={**query, "sweep": "l2_size=10MiB:40MiB:3:log"}).get_json()
    cli = cli_json(capsys, "whatif", "star3d-r1", "--device", H100, "--sweep", "l2_size=10MiB:40MiB:3:log",
                   "--threads", "256", "--domain", "128,128,64", "--jobs", "1", "--format", "json")
    assert [p["best"] for p in doc["points"]] == [p["best"] for p in cli["points"]]
    shown = cli_json(capsys, *shlex.split(doc["command"])[1:])  # the command the page shows, as it is
    assert [p["best"] for p in shown["points"]] == [p["best"] for p in doc["points"]]
    assert base64.b64decode(doc["png"]).startswith(b"\x89PNG")
    r = client.post("/api/whatif", json={**query, "sweep": "l2_size=1MiB:100MiB:9"})
    assert r.status_code == 422 and "9 values, more than the 8" in r.get_json()["error"]
    r = client.post("/api/whatif", json={**query, "sweep": "l3_size=1MiB"})
    assert r.status_code == 400 and r.get_json()["part"] == "device" and "l3_size" in r.get_json()["error"]


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("::1", True), ("localhost", True),
                                                ("0.0.0.0", False), ("192.168.1.20", False), ("example.org", False)])
def test_only_loopback_addresses_serve_without_a_warning(host, loopback):
    from warpspeed.web.app import is_loopback_host

    assert is_loopback_host(host) is loopback


def test_serve_refuses_a_bad_port(capsys):
    assert main(["serve", "--port", "70000"]) == 2
    assert "--port 70000" in capsys.readouterr().err
