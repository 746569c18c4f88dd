"""The page's "Which GPU?" (POST /api/devices-rank): the command line's device ranking, the hostile-input rules
(no file paths, no overrides, bounded lists, the time limit), and the page's logic under node."""

import json
import os
import shutil
import subprocess

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

pytest.importorskip("flask")

from paths import ROOT  # noqa: E402
from test_web_page_js import HARNESS  # noqa: E402
from web_watch import check_hostile_answer, post_watching, served_page  # noqa: E402

from warpspeed.device import device_ids  # noqa: E402
from warpspeed.interface.cli import main  # noqa: E402
from warpspeed.web import service  # noqa: E402
from warpspeed.web.app import create_app  # noqa: E402

H100, A100, B200 = "H100-SXM5-80GB", "A100-SXM4-40GB", "B200"


@pytest.fixture
def client():
    return create_app().test_client()


def test_the_answer_is_the_command_lines_device_ranking(client, capsys):
    query = {"kernel": "star3d-r1", "devices": [A100, H100, B200], "threads": "256", "domain": "128,128,64",
             "folding": "1,2,1"}
    doc = client.post("/api/devices-rank", json=query).get_json()
    assert doc["command"] == ("warpspeed devices rank star3d-r1 --device A100-SXM4-40GB --device H100-SXM5-80GB "
                              "--device B200 --threads 256 --folding 1,2,1 --domain 128,128,64 --format json")
    argv = doc["command"].split()[1:]
    assert main(argv) == 0
    assert doc["ranking"] == json.loads(capsys.readouterr().out)
    times = [d["time_s"] for d in doc["ranking"]["devices"]]
    assert sorted(d["device"] for d in doc["ranking"]["devices"]) == sorted([A100, H100, B200])
    assert times == sorted(times) and doc["ranking"]["best"] == doc["ranking"]["devices"][0]["device"]
    assert doc["headline"].startswith("star3d-r1, domain 128x128x64 (latency model): fastest on "
                                      f"{doc['ranking']['best']} (")
    if "png" in doc:  # with the plot extra
        assert doc["png"].startswith("iVBOR")


def test_a_typed_kernel_is_ranked_and_its_command_names_the_saved_file(client, tmp_path, capsys):
    toml = (ROOT / "kernels" / "copy.toml").read_text().replace('name = "copy"', 'name = "my-copy"')
    doc = client.post("/api/devices-rank", json={"toml": toml, "devices": [H100, A100], "domain": "64,64,64",
                                                 "model": "roofline"}).get_json()
    assert doc["ranking"]["kernel"] == "my-copy" and doc["ranking"]["model"] == "roofline"
    assert doc["command"] == ("warpspeed devices rank kernel.toml --device H100-SXM5-80GB --device A100-SXM4-40GB "
                              "--domain 64,64,64 --model roofline --format json")
    (tmp_path / "kernel.toml").write_text(toml)
    argv = [str(tmp_path / "kernel.toml") if a == "kernel.toml" else a for a in doc["command"].split()[1:]]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out) == doc["ranking"]


def test_without_devices_every_shipped_device_is_ranked(client):
    doc = client.post("/api/devices-rank", json={"kernel": "copy", "domain": "64,64,64"}).get_json()
    assert sorted(d["device"] for d in doc["ranking"]["devices"]) == sorted(device_ids())
    assert doc["command"] == "warpspeed devices rank copy --domain 64,64,64 --format json"
    assert all(d["threads"] == [1024] for d in doc["ranking"]["devices"])  # no threads: 1024 launches everywhere


@pytest.mark.parametrize("query, part, words", [
    ({"kernel": "copy", "devices": ["/etc/passwd"]}, "device", "is a file path; the page reads no files"),
    ({"kernel": "copy", "devices": ["~/gpu.toml"]}, "device", "is a file path"),
    ({"kernel": "copy", "devices": ["H100-FOO"]}, "device", "unknown device 'H100-FOO'"),
    ({"kernel": "copy", "devices": "H100-SXM5-80GB"}, "device", "devices: a list of at most 32"),
    ({"kernel": "copy", "devices": [H100] * 33}, "device", "a list of 33 items"),
    ({"kernel": "copy", "devices": [H100, A100, H100]}, "device", "'H100-SXM5-80GB' is named twice"),
    ({"kernel": "copy", "devices": [H100 + "+l2_size=1MiB"]}, "device", "takes no overrides"),
    ({"kernel": "copy", "overrides": [["l2_size", "1MiB"]]}, "device", "takes the shipped devices as they are"),
    ({"kernel": "../k.toml"}, "kernel", "is a file path"),
    ({"kernel": "copy", "threads": "300"}, "launch", "powers of two"),
    ({"kernel": "copy", "domain": "0,1,1"}, "launch", "domain"),
    ({"kernel": "copy", "model": "guess"}, "launch", "model: one of latency, roofline"),
    ([1, 2], "launch", "a JSON object"),
])
def test_bad_input_is_400_naming_the_field(client, query, part, words):
    r = client.post("/api/devices-rank", json=query)
    doc = r.get_json()
    assert r.status_code == 400 and doc["part"] == part and words in doc["error"], doc


def test_too_many_block_shapes_and_the_time_limit_are_refused(client, monkeypatch):
    threads = ",".join(str(2**i) for i in range(14))  # 456 block shapes
    r = client.post("/api/devices-rank", json={"kernel": "copy", "threads": threads})
    assert r.status_code == 422 and "456 block shapes, more than the 400 one request ranks" in r.get_json()["error"]
    monkeypatch.setattr(service, "MAX_RANK_CONFIGURATIONS", 10)  # 1024 threads: 31 shapes (the default too)
    for query in ({"kernel": "copy"}, {"kernel": "copy", "threads": "1024"}):
        r = client.post("/api/devices-rank", json=query)
        assert r.status_code == 422 and "more than the 10 one request ranks" in r.get_json()["error"]
    monkeypatch.undo()
    slow = create_app(rank_time_limit_s=0.0).test_client()
    r = slow.post("/api/devices-rank", json={"kernel": "copy", "devices": [H100]})
    assert r.status_code == 503 and "ran past 0 s" in r.get_json()["error"]


def test_the_time_limit_is_checked_between_devices():
    """A clock that jumps past the limit after the first device: the second is never ranked."""
    ranked = []
    ticks = iter([0.0] * 4 + [100.0] * 100)  # the deadline, the kernel, the device stage, the first progress call
    with pytest.raises(service.RankingTimeout, match="the device ranking ran past 5 s"):
        service.devices_rank_doc({"kernel": "copy", "devices": [H100, A100], "domain": "64,64,64"}, 5.0,
                                 clock=lambda: ranked.append(1) or next(ticks))
    assert len(ranked) == 5  # stopped at the progress call after the first device


def test_the_field_limit_is_below_the_documented_bound():
    assert service.MAX_RANK_DEVICES >= len(device_ids())
    assert f"| {service.MAX_RANK_DEVICES} (400)" in (ROOT / "docs" / "web-page.md").read_text()


FLOW = r"""
const seen = {};
function look(name) {
  seen[name] = { plot: element("plot").src ?? null, command: element("command").textContent,
                 table: element("devices-ranking").innerHTML, headline: element("devices-headline").textContent,
                 launch_error: element("launch-error").textContent };
}
const ranked = { headline: "star3d-r4 ...: fastest on B200", png: "DDDD", command: "warpspeed devices rank ...",
                 ranking: { devices: [
                   { rank: 1, device: "B200", runs: true, performance_GLup_s: 136, time_s: 0.00124, limiter: "L1",
                     factor: 1, best: { block: [32, 8, 4] }, confidence: { level: "close" },
                     validation: "assumed from hopper" },
                   { rank: null, device: "RTX-5090", runs: false, reason: "the arrays need <b>137 GB</b>",
                     validation: "assumed from ada" }] } };
(async () => {
  await new Promise((r) => setImmediate(r));
  answers.push(["/api/devices-rank", 200, ranked]);
  await context.devicesRankNow(); look("ok");
  answers.push(["/api/devices-rank", 503, { error: "the device ranking ran past 20 s", part: "launch" }]);
  await context.devicesRankNow(); look("failed");
  process.stdout.write(JSON.stringify(seen));
})().catch((e) => { console.error(e); process.exit(1); });
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_the_page_shows_the_table_and_chart_and_a_failure_leaves_neither(tmp_path):
    harness = tmp_path / "harness.js"
    harness.write_text(HARNESS[:HARNESS.index("const seen = {};")] + FLOW)
    static = ROOT / "warpspeed" / "web" / "static"
    run = subprocess.run([shutil.which("node"), str(harness), str(static / "app.js"), str(static / "index.html")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    ok = seen["ok"]
    assert ok["plot"] == "data:image/png;base64,DDDD" and ok["headline"] == "star3d-r4 ...: fastest on B200"
    assert "<td>B200</td>" in ok["table"] and "<td>32x8x4</td>" in ok["table"] and "assumed from hopper" in ok["table"]
    assert "<td>1.24 ms</td>" in ok["table"]  # the time with its unit
    assert "cannot run: the arrays need &lt;b&gt;137 GB&lt;/b&gt;" in ok["table"]  # text, never markup
    failed = seen["failed"]
    assert failed["plot"] is None and failed["command"] == "" and failed["table"] == ""
    assert failed["launch_error"] == "the device ranking ran past 20 s"


TEXTS = st.sampled_from([H100, A100, B200, "H100", "H100-FOO", "secret.toml", "./secret.toml", "~/x", "/etc/passwd",
                         "C:\\x", "..", "copy", "star3d-r1", "", " ", "\x00", "H100-SXM5-80GB+l2_size=1MiB", "a" * 300])
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2, 2**40), st.floats(allow_nan=False, allow_infinity=False),
                   TEXTS, st.lists(TEXTS, max_size=3), st.lists(st.integers(-1, 4096), max_size=4),
                   st.dictionaries(TEXTS, st.integers(), max_size=2))
FIELDS = ("kernel", "toml", "domain", "folding", "model", "threads", "devices", "overrides", "block", "top")


FUZZ_EXAMPLES = int(os.environ.get("WS_FUZZ_EXAMPLES", "80"))  # a longer run: WS_FUZZ_EXAMPLES=600


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=6),
       devices=st.lists(st.sampled_from([H100, A100, "B300"]), min_size=1, max_size=2, unique=True))
def test_hostile_requests_get_a_4xx_naming_a_part_or_a_valid_ranking_and_no_named_file_is_read(
        client, tmp_path, monkeypatch, body, devices):
    (tmp_path / "secret.toml").write_text('name = "secret"\n')
    monkeypatch.chdir(tmp_path)  # relative names in the request would find the bait here
    if not body.get("devices"):
        body["devices"] = devices  # every shipped device takes seconds: tested once above
    body.setdefault("domain", "64,64,32")
    body.setdefault("kernel", "copy")
    r, seen = post_watching(client, "/api/devices-rank", body, tmp_path)
    event(check_hostile_answer(r, seen, "device_ranking", "ranking", "warpspeed devices rank "))


@pytest.fixture
def server():
    with served_page() as url:
        yield url


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (CI installs Debian's)")
def test_which_gpu_in_a_browser(server, tmp_path):
    """Pick a kernel and a domain, press "Which GPU?": one row per shipped GPU, the fastest first, as the API says."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(server + "/")
        page.select_option("#kernel", "star3d-r1")
        page.fill("#domain", "128,128,64")
        page.click("#devices-rank")
        page.wait_for_function("n => document.querySelectorAll('#devices-ranking tr').length === n + 1",
                               arg=len(device_ids()), timeout=120000)
        rows = page.eval_on_selector_all("#devices-ranking tr", "rows => rows.map((r) => r.innerText)")
        headline = page.inner_text("#devices-headline")
        page.screenshot(path=str(tmp_path / "which-gpu.png"), full_page=True)
        browser.close()
    api = create_app().test_client().post("/api/devices-rank", json={"kernel": "star3d-r1",
                                                                     "domain": "128,128,64"}).get_json()
    first = api["ranking"]["devices"][0]
    assert rows[1].split("\t")[:2] == ["1", first["device"]] and headline.split() == api["headline"].split()
    assert rows[1].split("\t")[-1] == first["validation"]
