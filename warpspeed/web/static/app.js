// The page's logic: read the form, ask the API, show the answer; the whole state lives in the URL's hash.
"use strict";

const $ = (id) => document.getElementById(id);
let catalog = {};          // kernel name -> its TOML text
let edited = false;        // the TOML differs from the catalog kernel's
let pending = null;        // the debounce timer of the next estimate
let asked = {estimate: 0, check: 0};  // the latest request of each kind: an older answer arriving late is dropped

async function api(path, body) {
  const res = await fetch(path, body === undefined ? {} : {
    method: "POST", headers: {"Content-Type": "application/json"}, body: JSON.stringify(body)});
  const doc = await res.json();
  if (!res.ok) { const err = new Error(doc.error || res.statusText); err.part = doc.part || "launch"; throw err; }
  return doc;
}

function state() {
  const s = {device: $("device").value, block: $("block").value, folding: $("folding").value,
             model: $("model").value, threads: $("threads").value,
             overrides: [...document.querySelectorAll(".override")]
               .map((row) => [row.querySelector(".key").value.trim(), row.querySelector(".value").value.trim()])
               .filter(([k, v]) => k || v)};
  if ($("domain").value.trim()) s.domain = $("domain").value.trim();
  if ($("sweep").value.trim()) s.sweep = $("sweep").value.trim();
  if (edited) s.toml = $("toml").value; else s.kernel = $("kernel").value;
  return s;
}

function saveToUrl(s) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(s)) p.set(k, k === "overrides" ? JSON.stringify(v) : v);
  history.replaceState(null, "", "#" + p.toString());
}

function loadFromUrl() {
  const p = new URLSearchParams(location.hash.slice(1));
  for (const id of ["device", "block", "folding", "domain", "model", "threads", "sweep"]) if (p.has(id)) $(id).value = p.get(id);
  if (p.has("toml")) { $("toml").value = p.get("toml"); edited = true; }
  else if (p.has("kernel")) { $("kernel").value = p.get("kernel"); $("toml").value = catalog[p.get("kernel")] || ""; }
  if (p.has("overrides")) { try { JSON.parse(p.get("overrides")).forEach(([k, v]) => addOverride(k, v)); } catch (e) {} }
}

function addOverride(key = "", value = "") {
  const row = document.createElement("div");
  row.className = "override changed";
  row.innerHTML = '<input class="key" list="override-keys" placeholder="key, e.g. l2_size" size="18">' +
                  '<input class="value" placeholder="value, e.g. 100MiB" size="12"><button type="button">×</button>';
  row.querySelector(".key").value = key;
  row.querySelector(".value").value = value;
  row.querySelector("button").onclick = () => { row.remove(); schedule(); };
  row.querySelectorAll("input").forEach((i) => (i.oninput = schedule));
  $("overrides").appendChild(row);
}

function clearErrors() { for (const part of ["kernel", "device", "launch"]) $(part + "-error").textContent = ""; }
// an error about the request itself (part "request") shows under Launch, beside the buttons that send one
function showError(err) { ($((err.part || "launch") + "-error") || $("launch-error")).textContent = err.message; }

// A failed action leaves nothing of an earlier one that would read as its answer: the chart and the command
// line belonged to the state before, so they go (an estimate's numbers stay, greyed, while one types)
function markStale(on) {
  for (const id of ["headline", "perf-line", "estimate-grid", "reasons"]) $(id).classList.toggle("stale", on);
}

function dropStale() {
  $("plot").removeAttribute("src");
  $("command").textContent = "";
}

function esc(text) {  // text from a kernel the user typed goes into the page as text, never as markup
  return String(text).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"})[c]);
}

function fmt(v) {
  if (v === null || v === undefined) return "–";
  if (typeof v !== "number") return String(v);
  if (!isFinite(v)) return "∞";
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(0) : v.toPrecision(3);
}

function seconds(t) {  // a time with its unit, as the command line's tables write it
  if (t === null || t === undefined) return null;
  for (const [unit, scale] of [["s", 1], ["ms", 1e-3], ["us", 1e-6]]) {
    if (t >= scale) return (t / scale).toPrecision(3) + " " + unit;
  }
  return (t / 1e-9).toPrecision(3) + " ns";
}

function table(el, head, rows, binding) {
  el.innerHTML = "<tr>" + head.map((h) => `<th>${h}</th>`).join("") + "</tr>" +
    rows.map((r) => `<tr${r[0] === binding ? ' class="binding"' : ""}>` + r.map((c) => `<td>${esc(fmt(c))}</td>`).join("") +
      "</tr>").join("");
}

function showEstimate(doc) {
  const e = doc.estimate;
  $("headline").textContent = doc.headline;
  $("perf").textContent = fmt(e.performance_GLup_s) + " GLup/s";
  $("perf").dataset.value = String(e.performance_GLup_s);
  $("limiter").textContent = e.limiter + "-bound (" + e.model + " model)";
  const limits = (e.performance_model && e.performance_model.limits_GLup_s) || e.limiters_GLup_s;
  table($("limits"), ["limit", "GLup/s"], Object.entries(limits), e.limiter);
  table($("volumes"), ["volume", "B/lup"], Object.entries(e.volumes_B_per_lup));
  $("l1cycles").textContent = "L1: " + fmt(e.l1_cycles_per_warp_lup) + " cycles per warp-lup";
  table($("fields"), ["field", "L2 comp", "DRAM comp", "y hit", "z hit", "store"],
        Object.entries(e.fields).map(([name, f]) => [name, f.l2_load_compulsory, f.dram_load_compulsory,
                                                     f.dram_layer_y_hit, f.dram_layer_z_hit, f.dram_store]));
  table($("causes"), ["reuse", "reusable B/lup", "oversubscription", "hit rate", "misses B/lup"],
        Object.entries(e.causes || {}).map(([name, c]) => [name, c.potential_B_per_lup, c.oversubscription,
                                                          c.hit_rate, c.miss_B_per_lup]));
  const reasons = [...(e.unvalidated || []).map((r) => "unvalidated: " + r),
                   ...((e.performance_model && e.performance_model.reasons) || []), ...e.notes];
  $("reasons").innerHTML = reasons.map((r) => `<li>${esc(r)}</li>`).join("");
  $("command").textContent = doc.command;
  $("json").textContent = JSON.stringify(e, null, 2);
}

async function estimateNow() {
  const s = state(), mine = ++asked.estimate;
  saveToUrl(s);
  try {
    const doc = await api("/api/estimate", s);
    if (mine !== asked.estimate) return;
    clearErrors();
    markStale(false);
    showEstimate(doc);
  } catch (err) {
    if (mine === asked.estimate) { clearErrors(); showError(err); markStale(true); dropStale(); }
  }
}

function schedule() { clearTimeout(pending); pending = setTimeout(estimateNow, 300); }

async function checkToml() {
  const mine = ++asked.check;
  try {
    const k = await api("/api/check", {toml: $("toml").value});
    if (mine !== asked.check) return;
    $("kernel-error").textContent = "";
    $("kernel-ok").textContent = `${k.name}: ${k.fields.length} field(s), ${k.accesses} accesses, domain ${k.domain.join("x")}`;
  } catch (err) { if (mine === asked.check) { $("kernel-ok").textContent = ""; showError(err); } }
}

async function rankNow() {
  const s = state();
  s.top = 10;
  clearErrors();
  $("ranking").innerHTML = "<tr><td>ranking…</td></tr>";
  try {
    const doc = await api("/api/rank", s);
    const rows = doc.ranking.results.map((r, i) => [i + 1, r.block.join("x"), r.folding.join("x"),
                                                     r.performance_GLup_s, r.limiter]);
    table($("ranking"), ["#", "block", "folding", "GLup/s", "limiter"], rows);
    const conf = doc.ranking.confidence;
    $("confidence").innerHTML = conf.reasons.map((r, i) => `<li>${i ? "" : esc(conf.level) + ": "}${esc(r)}</li>`).join("");
    $("command").textContent = doc.command;
  } catch (err) { $("ranking").innerHTML = ""; $("confidence").innerHTML = ""; dropStale(); showError(err); }
}

// Which GPU: the kernel (catalog or TOML), domain, folding and model of the form; every shipped device, the
// shipped devices as they are (overrides change one device), blocks of 1024 threads or fewer where they cannot launch
async function devicesRankNow() {
  const s = state(), body = {folding: s.folding, model: s.model};
  for (const k of ["kernel", "toml", "domain"]) if (s[k] !== undefined) body[k] = s[k];
  clearErrors();
  $("devices-headline").textContent = "";
  $("devices-ranking").innerHTML = "<tr><td>ranking every GPU…</td></tr>";
  try {
    const doc = await api("/api/devices-rank", body);
    $("devices-headline").textContent = doc.headline;
    table($("devices-ranking"), ["#", "GPU", "GLup/s", "time/update", "limiter", "x best", "best block",
                                 "confidence", "model data"],
          doc.ranking.devices.map((d) => d.runs
            ? [d.rank, d.device, d.performance_GLup_s, seconds(d.time_s), d.limiter, d.factor,
               d.best.block.join("x"), d.confidence.level, d.validation]
            : ["–", d.device, "cannot run: " + d.reason, null, null, null, null, null, d.validation]));
    if (doc.png) showPlot(doc); else { $("plot").removeAttribute("src"); $("command").textContent = doc.command; }
    $("json").textContent = JSON.stringify(doc.ranking, null, 2);
  } catch (err) { $("devices-ranking").innerHTML = ""; dropStale(); showError(err); }
}

// Compare: the form's kernel (the catalog's, or the editor's TOML; unless "with the kernel above" is unticked) and
// one candidate per line of the box (catalog names, kernels launched in turn joined by "+", "@N" the updates they
// make), on the form's GPU with its overrides; the table `warpspeed compare` prints, its JSON and command line
async function compareNow() {
  const s = state(), first = s.toml !== undefined ? {toml: s.toml} : s.kernel;
  const others = $("candidates").value.split("\n").map((line) => line.trim()).filter((line) => line);
  const body = {candidates: $("compare-with-form").checked === false ? others : [first, ...others],
                device: s.device, overrides: s.overrides, folding: s.folding, model: s.model};
  if (s.domain !== undefined) body.domain = s.domain;
  clearErrors();
  $("compare-headline").textContent = "";
  $("comparison").innerHTML = "<tr><td>comparing…</td></tr>";
  try {
    const doc = await api("/api/compare", body);
    $("compare-headline").textContent = doc.headline;
    table($("comparison"), ["#", "candidate", "updates", "time/update", "GLup/s", "limiter", "x best",
                            "kernels: best block, GLup/s, limiter"],
          doc.comparison.candidates.map((c) => [c.rank, c.name, c.updates, seconds(c.time_per_update_s),
            c.performance_GLup_s, c.limiter, c.factor,
            c.kernels.map((k) => `${k.kernel} ${k.best.block.join("x")}: ${fmt(k.best.performance_GLup_s)} GLup/s ` +
                                 k.best.limiter).join("; ")]));
    $("plot").removeAttribute("src");
    $("command").textContent = doc.command;
    $("json").textContent = JSON.stringify(doc.comparison, null, 2);
  } catch (err) { $("comparison").innerHTML = ""; dropStale(); showError(err); }
}

function showPlot(doc) { $("plot").src = "data:image/png;base64," + doc.png; $("command").textContent = doc.command; }

async function plotNow(kind) {
  const s = state();
  s.plot = kind;
  s.top = 20;
  clearErrors();
  try { showPlot(await api("/api/plot", s)); } catch (err) { dropStale(); showError(err); }
}

async function sweepNow() {
  const s = state();
  s.sweep = $("sweep").value;
  saveToUrl(s);
  clearErrors();
  $("whatif").innerHTML = "<tr><td>sweeping…</td></tr>";
  try {
    const doc = await api("/api/whatif", s);
    table($("whatif"), [doc.key, "best block", "folding", "GLup/s", "limiter", "DRAM B/lup"],
          doc.points.map((p) => [p.value_text, p.best.block.join("x"), p.best.folding.join("x"),
                                 p.best.performance_GLup_s, p.best.limiter,
                                 p.best.volumes_B_per_lup.dram_load + p.best.volumes_B_per_lup.dram_store]));
    if (doc.png) showPlot(doc); else { $("plot").removeAttribute("src"); $("command").textContent = doc.command; }
  } catch (err) { $("whatif").innerHTML = ""; dropStale(); showError(err); }
}

async function init() {
  const [devices, kernels] = await Promise.all([api("/api/devices"), api("/api/kernels")]);
  $("device").innerHTML = devices.devices.map((d) => `<option value="${esc(d.id)}">${esc(d.id)}</option>`).join("");
  $("device").value = "H100-SXM5-80GB";
  $("override-keys").innerHTML = devices.override_keys.map((k) => `<option value="${esc(k)}">`).join("");
  for (const k of kernels.kernels) if (k.toml) catalog[k.name] = k.toml;
  $("kernel").innerHTML = Object.keys(catalog).map((n) => `<option>${esc(n)}</option>`).join("");
  $("kernel").value = "star3d-r4";
  $("toml").value = catalog["star3d-r4"];
  loadFromUrl();
  $("kernel").onchange = () => { $("toml").value = catalog[$("kernel").value]; edited = false; checkToml(); schedule(); };
  $("toml").oninput = () => { edited = $("toml").value !== catalog[$("kernel").value]; checkToml(); schedule(); };
  for (const id of ["device", "block", "folding", "domain", "model"]) $(id).oninput = schedule;
  $("device").onchange = schedule;
  $("model").onchange = schedule;
  $("add-override").onclick = () => addOverride();
  $("rank").onclick = rankNow;
  $("devices-rank").onclick = devicesRankNow;
  $("compare").onclick = compareNow;
  $("sweep-run").onclick = sweepNow;
  $("plot-roofline").onclick = () => plotNow("roofline");
  $("plot-ranking").onclick = () => plotNow("ranking");
  checkToml();
  estimateNow();
}

init();
