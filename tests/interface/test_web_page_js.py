"""The page's own logic (static/app.js) under node with a small stand-in DOM and API: what stays on the page
after an action fails. Skipped where node is missing; the browser test (test_web.py) drives the real page."""

import json
import shutil
import subprocess

import pytest
from paths import ROOT

NODE = shutil.which("node")

HARNESS = r"""
const vm = require("vm"), fs = require("fs");
const elements = {};
const ids = new Set([...fs.readFileSync(process.argv[3], "utf8").matchAll(/id="([^"]+)"/g)].map((m) => m[1]));
function byId(id) { return ids.has(id) ? element(id) : null; }  // as the page has them: null for any other
function element(id) {
  const attrs = {};
  return elements[id] = elements[id] || {
    id, textContent: "", innerHTML: "", value: "", dataset: {}, children: [],
    get src() { return attrs.src; }, set src(v) { attrs.src = v; },
    removeAttribute(name) { delete attrs[name]; },
    classList: { set: new Set(), add(c) { this.set.add(c); }, remove(c) { this.set.delete(c); },
                 toggle(c, on) { on ? this.set.add(c) : this.set.delete(c); },
                 contains(c) { return this.set.has(c); } },
    appendChild(child) { this.children.push(child); }, querySelector() { return element(id + "/child"); },
    querySelectorAll() { return []; },
  };
}
const answers = [];  // [path, status, doc] the stand-in API gives, in order, for POSTs
const context = {
  document: { getElementById: byId, querySelectorAll: () => [],
              createElement: () => element("new" + Math.random()) },
  history: { replaceState() {} }, location: { hash: "" }, URLSearchParams, setTimeout: () => 0, clearTimeout() {},
  console,
  fetch: async (path, opts) => {
    let status = 200, doc;
    if (path === "/api/devices") doc = { devices: [{ id: "H100-SXM5-80GB", name: "H100" }], override_keys: [] };
    else if (path === "/api/kernels") doc = { kernels: [{ name: "star3d-r4", toml: "name = 'x'" }] };
    else if (path === "/api/check") doc = { name: "x", fields: [], accesses: 1, domain: [1, 1, 1] };
    else if (path === "/api/estimate" && !answers.length) { status = 400; doc = { error: "starting", part: "kernel" }; }
    else {
      const a = answers.shift();
      if (a[0] !== path) throw new Error(`asked ${path}, expected ${a[0]}`);
      [status, doc] = [a[1], a[2]];
    }
    return { ok: status < 400, status, statusText: "", json: async () => doc };
  },
};
vm.createContext(context);
vm.runInContext(fs.readFileSync(process.argv[2], "utf8"), context);
const seen = {};
function look(name) {
  seen[name] = { plot: element("plot").src ?? null, command: element("command").textContent,
                 whatif: element("whatif").innerHTML, device_error: element("device-error").textContent,
                 launch_error: element("launch-error").textContent,
                 stale: element("perf-line").classList.contains("stale") };
}
const sweep = { key: "l2_size", png: "AAAA", command: "warpspeed whatif ...", points: [] };
(async () => {
  await new Promise((r) => setImmediate(r));
  answers.push(["/api/whatif", 200, sweep]);
  await context.sweepNow(); look("whatif ok");
  answers.push(["/api/whatif", 400, { error: "sweep: bad", part: "device" }]);
  await context.sweepNow(); look("whatif failed");
  answers.push(["/api/plot", 200, { png: "BBBB", command: "warpspeed plot roofline ..." }]);
  await context.plotNow("roofline"); look("plot ok");
  answers.push(["/api/rank", 503, { error: "ran past 20 s", part: "launch" }]);
  await context.rankNow(); look("rank failed");
  answers.push(["/api/plot", 200, { png: "CCCC", command: "warpspeed plot ranking ..." }]);
  await context.plotNow("ranking");
  answers.push(["/api/plot", 403, { error: "host", part: "request" }]);
  await context.plotNow("ranking"); look("plot refused");
  answers.push(["/api/estimate", 400, { error: "kernel: typo", part: "kernel" }]);
  await context.estimateNow(); look("estimate failed");
  process.stdout.write(JSON.stringify(seen));
})().catch((e) => { console.error(e); process.exit(1); });
"""


@pytest.mark.skipif(NODE is None, reason="no node on this machine")
def test_a_failed_action_leaves_no_chart_or_command_of_an_earlier_one(tmp_path):
    """After a failed what-if the old chart and command stayed on the page, as if they answered it."""
    harness = tmp_path / "harness.js"
    harness.write_text(HARNESS)
    static = ROOT / "warpspeed" / "web" / "static"
    run = subprocess.run([NODE, str(harness), str(static / "app.js"), str(static / "index.html")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    seen = json.loads(run.stdout)
    assert seen["whatif ok"]["plot"] == "data:image/png;base64,AAAA" and seen["whatif ok"]["command"]
    assert seen["whatif failed"] == {**seen["whatif failed"], "plot": None, "command": "", "whatif": "",
                                     "device_error": "sweep: bad"}
    assert seen["plot ok"]["plot"] == "data:image/png;base64,BBBB"
    assert seen["rank failed"]["plot"] is None and seen["rank failed"]["command"] == ""
    assert seen["rank failed"]["launch_error"] == "ran past 20 s"
    assert seen["plot refused"]["plot"] is None and seen["plot refused"]["launch_error"] == "host"  # part "request"
    assert seen["estimate failed"]["stale"] and seen["estimate failed"]["command"] == ""
