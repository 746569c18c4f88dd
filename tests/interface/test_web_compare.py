"""The page's "Compare kernels" (POST /api/compare): the command line's comparison, the hostile-input rules (no
file paths, bounded candidates, kernels and configurations, the time limit), and the page's logic under node."""

import json
import os
import shutil
import subprocess

import jsonschema
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

pytest.importorskip("flask")

from paths import ROOT  # noqa: E402
from test_web_page_js import HARNESS  # noqa: E402
from web_watch import check_hostile_answer, post_watching, served_page  # noqa: E402

from warpspeed import schemas  # noqa: E402
from warpspeed.interface.cli import main  # noqa: E402
from warpspeed.web import service  # noqa: E402
from warpspeed.web.app import create_app  # noqa: E402

H100 = "H100-SXM5-80GB"


@pytest.fixture
def client():
    return create_app().test_client()


def _cli_json(argv, capsys):
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


def test_the_answer_is_the_command_lines_comparison(client, capsys):
    query = {"candidates": ["star3d-r1", "star3d-r1+star3d-r1@1", "box3d-r1"], "device": H100,
             "overrides": [["l2_size", "40MiB"]], "domain": "128,128,64", "folding": "1,2,1", "threads": "256,512"}
    r = client.post("/api/compare", json=query)
    doc = r.get_json()
    assert r.status_code == 200, doc
    assert doc["command"] == ("warpspeed compare star3d-r1 star3d-r1+star3d-r1@1 box3d-r1 --device H100-SXM5-80GB "
                              "--set l2_size=40MiB --threads 256,512 --folding 1,2,1 --domain 128,128,64 "
                              "--format json")
    assert doc["comparison"] == _cli_json(doc["command"].split()[1:], capsys)
    text_argv = doc["command"].split()[1:-2]  # the same, as text
    assert main(text_argv) == 0 and capsys.readouterr().out.rstrip("\n") == doc["text"]
    assert doc["text"].startswith(doc["headline"])
    by_name = {c["name"]: c for c in doc["comparison"]["candidates"]}
    assert by_name["star3d-r1+star3d-r1@1"]["factor"] == pytest.approx(2 * by_name["star3d-r1"]["factor"])
    jsonschema.Draft202012Validator(schemas.load("compare")).validate(doc["comparison"])


def test_a_typed_kernel_is_compared_and_its_command_names_the_saved_file(client, tmp_path, monkeypatch, capsys):
    toml = (ROOT / "kernels" / "copy.toml").read_text().replace('name = "copy"', 'name = "my-copy"')
    doc = client.post("/api/compare", json={"candidates": [{"toml": toml, "updates": 2}, "copy"], "device": H100,
                                            "domain": "64,64,64", "model": "roofline"}).get_json()
    assert doc["command"] == ("warpspeed compare kernel-1.toml@2 copy --device H100-SXM5-80GB --domain 64,64,64 "
                              "--model roofline --format json")
    assert doc["comparison"]["best"] == "kernel-1.toml@2"  # one launch, two updates: twice as fast as copy
    (tmp_path / "kernel-1.toml").write_text(toml)
    monkeypatch.chdir(tmp_path)  # the command run where the page's TOML was saved
    assert _cli_json(doc["command"].split()[1:], capsys) == doc["comparison"]


def test_the_catalogs_lbm_variants_are_compared_by_name(client):
    pytest.importorskip("lbmpy")
    lbm = "lbm:stencil=D2Q9,method=srt"
    aa = f"{lbm},streaming=aa,timestep=even+{lbm},streaming=aa,timestep=odd@2"
    doc = client.post("/api/compare", json={"candidates": [lbm, aa, f"{lbm},dtype=float32"], "device": H100,
                                            "domain": "512,512,1"}).get_json()
    assert "error" not in doc, doc
    names = [c["name"] for c in doc["comparison"]["candidates"]]
    assert names[0] == f"{lbm},dtype=float32" and sorted(names) == sorted([lbm, aa, f"{lbm},dtype=float32"])
    pair = next(c for c in doc["comparison"]["candidates"] if c["name"] == aa)
    assert pair["updates"] == 2 and len(pair["kernels"]) == 2


@pytest.mark.parametrize("query, part, words", [
    ({"candidates": ["copy", "/etc/passwd"]}, "kernel", "is a file path; the page reads no files"),
    ({"candidates": ["copy", "copy+../k.toml@2"]}, "kernel", "is a file path"),
    ({"candidates": ["copy", "kernel-1.toml"]}, "kernel", "is a file path"),
    ({"candidates": ["copy", "nosuch"]}, "kernel", "'nosuch' is not in the catalog"),
    ({"candidates": ["copy"]}, "kernel", "candidates: a list of 2 to 8 candidates"),
    ({"candidates": "copy,copy"}, "kernel", "candidates: a list of 2 to 8"),
    ({"candidates": ["copy"] * 9}, "kernel", "a list of 9 items"),
    ({"candidates": ["copy+copy+copy+copy"] * 5}, "kernel", "20 kernels in all, more than the 16"),
    ({"candidates": ["copy", "copy@0"]}, "kernel", "candidates[1] 'copy@0': the updates of the domain"),
    ({"candidates": ["copy", "copy@two"]}, "kernel", "must be a positive number"),
    ({"candidates": ["copy", "copy++copy"]}, "kernel", "an empty kernel between '+' separators"),
    ({"candidates": ["copy", {"toml": "x", "path": "/etc/passwd"}]}, "kernel", "a typed kernel is {\"toml\": TEXT}"),
    ({"candidates": ["copy", {"toml": "x" * 40000}]}, "kernel", "at most 32768 characters"),
    ({"candidates": ["copy", {"toml": "name = 'x'"}]}, "kernel", "candidates[1]: kernel 'x' (page): needs at least "
                                                               "one [[field]]"),
    ({"candidates": ["copy", 3]}, "kernel", "candidates[1]: give a catalog name"),
    ({"candidates": ["copy", "c" * 700]}, "kernel", "at most 600 characters"),
    ({"candidates": ["copy", "d3q19-srt:streaming=aa"], "domain": None}, "kernel", "candidates[1]: d3q19-srt: "
                                                                                    "streaming=aa is in place"),
    ({"candidates": ["copy", "star3d-r4"], "domain": None}, "launch", "do not do the same work"),
    ({"device": "../gpu.toml"}, "device", "is a file path"),
    ({"device": "H100-FOO"}, "device", "unknown device"),
    ({"overrides": [["l2_size", "lots"]]}, "device", "l2_size"),
    ({"model": "guess"}, "launch", "model: one of latency, roofline"),
    ({"domain": "0,1,1"}, "launch", "domain"),
    ({"threads": "300"}, "launch", "powers of two"),
    ([1, 2], "launch", "a JSON object"),
])
def test_bad_input_is_400_naming_the_field(client, query, part, words):
    if isinstance(query, dict):
        query = {"candidates": ["copy", "star3d-r1"], "device": H100, "domain": "64,64,64"} | query
        query = {k: v for k, v in query.items() if v is not None}
    r = client.post("/api/compare", json=query)
    doc = r.get_json()
    assert r.status_code == 400 and doc["part"] == part and words in doc["error"], doc


def test_too_many_configurations_and_the_time_limit_are_refused(client):
    base = {"candidates": ["copy", "star3d-r1"], "device": H100, "domain": "64,64,64"}
    threads = ",".join(str(2**i) for i in range(11))  # 1..1024: 266 block shapes
    r = client.post("/api/compare", json=base | {"threads": threads})
    assert r.status_code == 422 and "532 configurations (266 block shapes each), more than the 400" in \
        r.get_json()["error"]
    slow = create_app(rank_time_limit_s=0.0).test_client()
    r = slow.post("/api/compare", json=base)
    assert r.status_code == 503 and "ran past 0 s" in r.get_json()["error"]


def test_the_time_limit_is_checked_as_each_kernel_is_built():
    """A clock that jumps past the limit after the device: the first kernel is built, the second never."""
    built = []
    real = service._catalog_kernel
    ticks = iter([0.0, 0.0] + [100.0] * 100)  # the deadline, the device stage; then every check is late
    service._catalog_kernel = lambda text, domain: built.append(text) or real(text, domain)
    try:
        with pytest.raises(service.RankingTimeout, match="the kernel ran past 5 s"):
            service.compare_doc({"candidates": ["copy", "star3d-r1"], "device": H100, "domain": "64,64,64"}, 5.0,
                                clock=lambda: next(ticks))
    finally:
        service._catalog_kernel = real
    assert built == ["copy"]


def test_the_bounds_are_documented():
    text = " ".join((ROOT / "docs" / "web-page.md").read_text().split())
    assert (f"| candidates of a comparison (`candidates`) | 2 to {service.MAX_COMPARE_CANDIDATES} (400), "
            f"{service.MAX_COMPARE_KERNELS} kernels in all, each text {service.MAX_CANDIDATE_CHARS} characters") in text
    assert f"| configurations of a comparison | {service.MAX_RANK_CONFIGURATIONS} (422)" in text


FLOW = r"""
const seen = {}, posted = [];
const realFetch = context.fetch;
context.fetch = async (path, opts) => {
  if (path === "/api/compare") posted.push(JSON.parse(opts.body));
  return realFetch(path, opts);
};
function look(name) {
  seen[name] = { plot: element("plot").src ?? null, command: element("command").textContent,
                 table: element("comparison").innerHTML, headline: element("compare-headline").textContent,
                 kernel_error: element("kernel-error").textContent, json: element("json").textContent };
}
const compared = { headline: "on H100-SXM5-80GB, ...: copy@2 is fastest", text: "...",
                   command: "warpspeed compare copy@2 <b>x</b> --device H100-SXM5-80GB --format json",
                   comparison: { best: "copy@2", candidates: [
                     { rank: 1, name: "copy@2", updates: 2, time_per_update_s: 0.00000302, performance_GLup_s: 348,
                       limiter: "DRAM", factor: 1, kernels: [{ kernel: "copy", best: { block: [128, 8, 1],
                       performance_GLup_s: 174, limiter: "DRAM" } }] },
                     { rank: 2, name: "<b>x</b>", updates: 1, time_per_update_s: 0.00642, performance_GLup_s: 163,
                       limiter: "L2", factor: 2.13, kernels: [{ kernel: "<b>x</b>", best: { block: [32, 4, 2],
                       performance_GLup_s: 163, limiter: "L2" } }] }] } };
(async () => {
  await new Promise((r) => setImmediate(r));
  element("candidates").value = "copy@2\n\n  star3d-r1+star3d-r1@1  \n";
  answers.push(["/api/compare", 200, compared]);
  await context.compareNow(); look("ok");
  answers.push(["/api/compare", 400, { error: "candidates[1]: 'x' is not in the catalog", part: "kernel" }]);
  await context.compareNow(); look("failed");
  element("compare-with-form").checked = false;  // the box's lines alone
  element("candidates").value = "d3q19-srt\nd3q19-srt:layout=zyxf";
  answers.push(["/api/compare", 200, compared]);
  await context.compareNow();
  process.stdout.write(JSON.stringify({ seen, posted }));
})().catch((e) => { console.error(e); process.exit(1); });
"""


@pytest.mark.skipif(shutil.which("node") is None, reason="no node on this machine")
def test_the_page_posts_the_form_and_shows_the_table_and_a_failure_leaves_nothing(tmp_path):
    harness = tmp_path / "harness.js"
    harness.write_text(HARNESS[:HARNESS.index("const seen = {};")] + FLOW)
    static = ROOT / "warpspeed" / "web" / "static"
    run = subprocess.run([shutil.which("node"), str(harness), str(static / "app.js"), str(static / "index.html")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    body = out["posted"][0]
    assert body["candidates"] == ["star3d-r4", "copy@2", "star3d-r1+star3d-r1@1"]  # the form's kernel first
    assert body["device"] == H100 and body["folding"] == "" and body["model"] == ""
    assert out["posted"][2]["candidates"] == ["d3q19-srt", "d3q19-srt:layout=zyxf"]  # unticked: the lines alone
    ok = out["seen"]["ok"]
    assert ok["headline"] == "on H100-SXM5-80GB, ...: copy@2 is fastest" and ok["plot"] is None
    assert "<td>copy@2</td>" in ok["table"] and "<td>3.02 us</td>" in ok["table"] and "<td>2.13</td>" in ok["table"]
    assert "copy 128x8x1: 174 GLup/s DRAM" in ok["table"]
    assert "&lt;b&gt;x&lt;/b&gt;" in ok["table"] and "<b>" not in ok["table"]  # names are text, never markup
    assert ok["command"].startswith("warpspeed compare copy@2") and json.loads(ok["json"])["best"] == "copy@2"
    failed = out["seen"]["failed"]
    assert failed["table"] == "" and failed["command"] == "" and failed["headline"] == ""
    assert failed["kernel_error"] == "candidates[1]: 'x' is not in the catalog"


TEXTS = st.sampled_from(["copy", "star3d-r1", "box3d-r1", "copy@2", "copy+copy@2", "copy+star3d-r1", "copy@0",
                         "copy@1e400", "copy@nan", "secret.toml", "./secret", "secret", "~/x", "/etc/passwd",
                         "C:\\x", "..", "copy+secret", "secret@2", "", " ", "+", "@", "\x00", "a" * 700, H100,
                         "star:r=9", "box:r=16,dims=3", "copy:r=1"])
CANDIDATE = st.one_of(TEXTS, st.fixed_dictionaries({"toml": st.sampled_from(['name = "x"', "", "[[", 'x = "y"'])},
                                                   optional={"updates": st.sampled_from([1, 2, 0, -1, "2", None])}),
                      st.integers(), st.none(), st.lists(TEXTS, max_size=2))
VALUES = st.one_of(st.none(), st.booleans(), st.integers(-2, 2**40), TEXTS, st.lists(TEXTS, max_size=3),
                   st.lists(st.integers(-1, 4096), max_size=4))
FIELDS = ("device", "overrides", "domain", "folding", "model", "threads", "toml", "kernel")
FUZZ_EXAMPLES = int(os.environ.get("WS_FUZZ_EXAMPLES", "80"))  # a longer run: WS_FUZZ_EXAMPLES=600
GOOD = st.sampled_from(["copy", "copy@2", "copy+copy@2", "copy@0.5",
                        {"toml": (ROOT / "kernels" / "copy.toml").read_text(), "updates": 2}])


@settings(max_examples=FUZZ_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(candidates=st.one_of(st.lists(GOOD, min_size=2, max_size=3), st.lists(CANDIDATE, max_size=10), TEXTS),
       body=st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=4))
def test_hostile_requests_get_a_4xx_naming_a_part_or_a_valid_comparison_and_no_named_file_is_read(
        client, tmp_path, monkeypatch, candidates, body):
    (tmp_path / "secret.toml").write_text('name = "secret"\n')
    (tmp_path / "secret").write_text('name = "secret"\n')
    (tmp_path / "copy").write_text('name = "secret"\n')  # a file named as a catalog kernel is never read
    monkeypatch.chdir(tmp_path)
    body = {"device": H100, "domain": "64,64,32"} | body | {"candidates": candidates}
    r, seen = post_watching(client, "/api/compare", body, tmp_path)
    event(check_hostile_answer(r, seen, "compare", "comparison", "warpspeed compare "))


@pytest.fixture
def server():
    with served_page() as url:
        yield url


CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.slow
@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (CI installs Debian's)")
def test_compare_in_a_browser(server, tmp_path):
    """Pick a kernel, type two candidates under it, press "Compare kernels": one row per candidate, the fastest
    first, as the API says."""
    sync_api = pytest.importorskip("playwright.sync_api")
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=[
            "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
            "--disable-sync", "--no-first-run"])
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        page.goto(server + "/")
        page.select_option("#kernel", "star3d-r1")
        page.fill("#domain", "128,128,64")
        page.fill("#candidates", "star3d-r1+star3d-r1@1\nbox3d-r1\n")
        page.click("#compare")
        page.wait_for_function("() => document.querySelectorAll('#comparison tr').length === 4", timeout=60000)
        rows = page.eval_on_selector_all("#comparison tr", "rows => rows.map((r) => r.innerText)")
        command = page.inner_text("#command")
        page.screenshot(path=str(tmp_path / "compare.png"), full_page=True)
        browser.close()
    api = create_app().test_client().post("/api/compare", json={
        "candidates": ["star3d-r1", "star3d-r1+star3d-r1@1", "box3d-r1"], "device": H100, "domain": "128,128,64",
        "folding": "1,1,1", "model": "latency", "overrides": []}).get_json()
    assert [r.split("\t")[:2] for r in rows[1:]] == [[str(c["rank"]), c["name"]]
                                                     for c in api["comparison"]["candidates"]]
    assert command == api["command"]
