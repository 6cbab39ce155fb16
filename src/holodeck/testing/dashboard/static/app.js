// The runs dashboard (and the red-team scans saved beside the runs). Everything taken from run files reaches the page as text nodes
// (never as HTML), so a case's input such as <img onerror=...> is shown, not run.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const COLORS = ["#2f5bd3", "#c2185b", "#00897b", "#ef6c00", "#6a1b9a", "#558b2f", "#5d4037"];
const state = { runs: null, skipped: [], scans: [], scansSkipped: [], selected: new Set(), filters: {}, expanded: new Set(),
  searches: new Set() };
const ROWS_SHOWN = 50;  // newest runs listed per agent until "show all" (a table of 1,000 is slow)
const POINTS_MARKED = 60;  // beyond this many runs a trend is drawn as lines only
const SEARCH_TAG = "optimize:";  // `holodeck test optimize` tags each candidate's run with its search

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : String(child));  // strings become text
  }
  return node;
}

function svg(tag, attrs, ...children) {
  const node = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, String(value));
  for (const child of children) node.append(child instanceof Node ? child : String(child));
  return node;
}

async function api(path) {
  const response = await fetch(path, { headers: { Accept: "application/json" } });
  const body = await response.json();
  if (!response.ok) {
    const error = body.error || {};
    throw new Error((error.message || response.statusText) + (error.hint ? ` (${error.hint})` : ""));
  }
  return body;
}

const pct = (value) => (value === null || value === undefined ? "–" : `${Math.round(value * 100)}%`);
const when = (iso) => new Date(iso).toLocaleString();
const passRate = (run) => (run.total ? run.passed / run.total : 0);
const status = (value) => el("span", { class: `status ${value || "none"}` }, value || "absent");
// what model requests cost, as the reports write it; "–" when the model has no price (never $0)
const dollars = (value) => (value === null || value === undefined ? "–" : `$${value.toFixed(6)}`);
const json = (value) => (typeof value === "string" ? value : JSON.stringify(value, null, 2));
const score = (value, scale) =>
  value === null || value === undefined ? "–" : scale > 1 ? `${value.toFixed(2)}/${scale}` : value.toFixed(2);

// a row of facts, each in its own box (adjacent text would run together)
function meta(...items) {
  return el("div", { class: "meta" }, items.filter(Boolean).map((item) => el("span", {}, item)));
}

function show(...children) {
  const view = document.getElementById("view");
  // a part left out (null) is left out, not written as the text "null"
  view.replaceChildren(...children.filter((child) => child !== null && child !== undefined && child !== false));
}

// the optimizer search a run was a candidate of, or null for an ordinary test run
const searchOf = (run) => {
  const tag = run.tags.find((t) => t.startsWith(SEARCH_TAG));
  return tag ? tag.slice(SEARCH_TAG.length) : null;
};
// a metric's average as a share of its scale; null when the offline model gave it (no judgement)
const judgedShare = (run, metric) => {
  const found = run.metrics[metric];
  return found && found.judged ? found.mean / found.scale_max : null;
};
const metricCell = (run, metric) => {
  const found = run.metrics[metric];
  if (!found) return "–";
  if (!found.judged) return el("span", { class: "muted", title: `canned score ${score(found.mean, found.scale_max)}` }, "not judged");
  return score(found.mean, found.scale_max);
};

// --- summary ------------------------------------------------------------------------------

function options(values) {
  return [el("option", { value: "" }, "any"), ...[...values].sort().map((v) => el("option", { value: v }, v))];
}

function filterBar(runs) {
  const f = state.filters;
  const versions = new Set(runs.map((r) => r.prompt_version).filter(Boolean));
  const models = new Set(runs.flatMap((r) => [r.model, ...Object.values(r.models || {})]));
  const tags = new Set(runs.flatMap((r) => r.tags));
  const input = (name, node) => {
    node.value = f[name] || "";
    node.addEventListener("change", () => { f[name] = node.value; renderSummary(); });
    return node;
  };
  const label = (text, node) => el("label", {}, text, node);
  return el("form", { class: "filters", "data-testid": "filters" },
    label("From", input("from", el("input", { type: "date", "data-testid": "filter-from" }))),
    label("To", input("to", el("input", { type: "date", "data-testid": "filter-to" }))),
    label("Prompt version", input("version", el("select", { "data-testid": "filter-version" }, options(versions)))),
    label("Model", input("model", el("select", { "data-testid": "filter-model" }, options(models)))),
    label("Tag", input("tag", el("select", { "data-testid": "filter-tag" }, options(tags)))),
    label("Result", input("result", el("select", { "data-testid": "filter-result" },
      el("option", { value: "" }, "any"), el("option", { value: "pass" }, "all passed"),
      el("option", { value: "fail" }, "failures or errors")))),
    el("button", {
      type: "button", "data-testid": "compare-selected", disabled: state.selected.size < 2,
      onclick: () => { location.hash = "#/compare/" + [...state.selected].map(encodeURIComponent).join(","); },
    }, `Compare selected (${state.selected.size})`));
}

function matches(run) {
  const f = state.filters;
  const started = new Date(run.started_at);
  if (f.from && started < new Date(f.from + "T00:00:00")) return false;
  if (f.to && started > new Date(f.to + "T23:59:59.999")) return false;
  if (f.version && run.prompt_version !== f.version) return false;
  if (f.model && run.model !== f.model && !Object.values(run.models || {}).includes(f.model)) return false;
  if (f.tag && !run.tags.includes(f.tag)) return false;
  const failing = run.failed + run.errors > 0;
  if (f.result === "pass" && failing) return false;
  if (f.result === "fail" && !failing) return false;
  return true;
}

function metricNames(runs) {
  return [...new Set(runs.flatMap((r) => Object.keys(r.metrics)))].sort();
}

// pass rate and each metric's average (as a share of its scale), oldest run on the left
function trendChart(runs, metrics) {
  const width = 640, height = 150, left = 34, right = 10, top = 8, bottom = 20;
  const x = (i) => left + (runs.length === 1 ? (width - left - right) / 2 : (i * (width - left - right)) / (runs.length - 1));
  const y = (v) => top + (1 - v) * (height - top - bottom);
  const chart = svg("svg", { class: "chart", width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "data-testid": "trend" });
  chart.append(svg("title", {}, "Pass rate and metric averages over time"));
  for (const v of [0, 0.5, 1]) {
    chart.append(svg("line", { x1: left, x2: width - right, y1: y(v), y2: y(v), stroke: "#e3e6ec" }));
    chart.append(svg("text", { x: 2, y: y(v) + 3 }, `${v * 100}%`));
  }
  chart.append(svg("text", { x: left, y: height - 4 }, new Date(runs[0].started_at).toLocaleDateString()));
  chart.append(svg("text", { x: width - right, y: height - 4, "text-anchor": "end" },
    new Date(runs[runs.length - 1].started_at).toLocaleDateString()));
  const series = [["pass rate", (r) => passRate(r)], ...metrics.map((m) => [m, (r) => judgedShare(r, m)])];
  const unplotted = new Set();
  series.forEach(([name, value], index) => {
    const color = COLORS[index % COLORS.length];
    const points = runs.map((r, i) => [i, value(r)]).filter(([, v]) => v !== null);
    if (!points.length) { unplotted.add(name); return; }
    chart.append(svg("polyline", {
      points: points.map(([i, v]) => `${x(i)},${y(v)}`).join(" "), fill: "none", stroke: color,
      "stroke-width": index === 0 ? 2.5 : 1.5, "data-series": name,
    }));
    if (runs.length > POINTS_MARKED) return;
    for (const [i, v] of points) {
      chart.append(svg("circle", { cx: x(i), cy: y(v), r: 2.5, fill: color },
        svg("title", {}, `${runs[i].run_id}: ${name} ${pct(v)}`)));
    }
  });
  const legend = el("div", { class: "legend" }, series.map(([name], index) => unplotted.has(name) ? null
    : el("span", {}, svg("svg", { width: 14, height: 6, class: "swatch" },
      svg("rect", { width: 14, height: 6, fill: COLORS[index % COLORS.length] })), name)),
    unplotted.size ? el("span", { class: "muted", "data-testid": "unplotted" },
      `not plotted, never judged (offline model): ${[...unplotted].join(", ")}`) : null);
  return [legend, chart];
}

function runRow(run, metrics) {
  const candidate = run.tags.find((t) => t.startsWith("candidate:"));
  return el("tr", { "data-run": run.run_id, class: searchOf(run) ? "candidate" : null },
    el("td", {}, el("input", {
      type: "checkbox", "aria-label": `select ${run.run_id}`, checked: state.selected.has(run.run_id),
      onchange: (event) => {
        if (event.target.checked) state.selected.add(run.run_id); else state.selected.delete(run.run_id);
        renderSummary();
      },
    })),
    el("td", {}, when(run.started_at)),
    el("td", {}, el("a", { href: `#/run/${encodeURIComponent(run.run_id)}` }, run.run_id),
      candidate ? el("span", { class: "muted" }, ` ${candidate.replace(":", " ")}`) : null,
      run.offline ? el("span", { class: "muted" }, " offline") : null,
      run.shard ? el("span", { class: "muted" }, ` shard ${run.shard}`) : null),
    el("td", {}, run.model), el("td", {}, run.prompt_version || "–"),
    el("td", {}, run.tags.filter((t) => !t.startsWith(SEARCH_TAG) && !t.startsWith("candidate:") && !t.startsWith("phase:"))
      .map((t) => el("span", { class: "tag" }, t))),
    el("td", {}, pct(passRate(run))),
    el("td", {}, `${run.passed}/${run.total}`, run.failed ? ` · ${run.failed} failed` : "",
      run.errors ? ` · ${run.errors} errors` : ""),
    el("td", { "data-testid": "run-cost" }, dollars(run.cost_usd)),
    metrics.map((m) => el("td", {}, metricCell(run, m))));
}

// one row for an optimizer search; its candidates (oldest first) are listed under it once opened
function searchRows(id, candidates, metrics) {
  const open = state.searches.has(id);
  const best = candidates.reduce((a, b) => (passRate(b) > passRate(a) ? b : a));
  const row = el("tr", { class: "search", "data-search": id, "data-testid": "search" },
    el("td", {}, el("button", {
      type: "button", class: "toggle", "aria-expanded": String(open), "aria-label": `${open ? "hide" : "show"} the candidates of ${id}`,
      "data-testid": "search-toggle",
      onclick: () => { if (open) state.searches.delete(id); else state.searches.add(id); renderSummary(); },
    }, open ? "−" : "+")),
    el("td", {}, when(candidates[0].started_at)),
    el("td", {}, el("strong", {}, "optimizer search "), id,
      el("span", { class: "muted" }, ` ${candidates.length} candidate${candidates.length === 1 ? "" : "s"}`)),
    el("td", {}, [...new Set(candidates.map((c) => c.model))].join(", ")), el("td", {}, "–"), el("td", {}, ""),
    el("td", {}, `best ${pct(passRate(best))}`), el("td", {}, `${best.passed}/${best.total}`),
    el("td", {}, ""), metrics.map(() => el("td", {}, "")));
  return open ? [row, ...candidates.map((run) => runRow(run, metrics))] : [row];
}

function runsTable(agent, runs, metrics) {
  const head = el("tr", {}, el("th", {}, ""), el("th", {}, "Started"), el("th", {}, "Run"),
    el("th", {}, "Model"), el("th", {}, "Prompt"), el("th", {}, "Tags"), el("th", {}, "Pass rate"),
    el("th", {}, "Cases"), el("th", {}, "Cost"), metrics.map((m) => el("th", {}, m)));
  // newest first; an optimizer search is one entry, where its newest candidate would be
  const entries = [];
  const searches = new Map();
  for (const run of [...runs].reverse()) {
    const id = searchOf(run);
    if (id === null) { entries.push({ run }); continue; }
    if (!searches.has(id)) { searches.set(id, []); entries.push({ search: id }); }
    searches.get(id).unshift(run);
  }
  const shown = state.expanded.has(agent) ? entries : entries.slice(0, ROWS_SHOWN);
  const rows = shown.map((entry) => (entry.run ? runRow(entry.run, metrics)
    : searchRows(entry.search, searches.get(entry.search), metrics)));
  const more = entries.length > shown.length
    ? el("button", { type: "button", class: "more", "data-testid": "show-all",
      onclick: () => { state.expanded.add(agent); renderSummary(); } }, `Show all ${entries.length} runs`)
    : null;
  return [el("table", { class: "runs" }, el("thead", {}, head), el("tbody", {}, rows)), more];
}

function renderSummary() {
  const runs = state.runs.filter(matches);
  const agents = [...new Set(runs.map((r) => r.agent))].sort();
  const parts = [filterBar(state.runs)];
  if (state.skipped.length) {
    parts.push(el("details", { class: "notice", "data-testid": "skipped" },
      el("summary", {}, `${state.skipped.length} damaged run file(s) skipped`),
      el("ul", {}, state.skipped.map((s) => el("li", {}, `${s.file}: ${s.reason}`)))));
  }
  if (!runs.length && (state.runs.length || !state.scans.length)) {
    parts.push(el("p", { class: "muted", "data-testid": "no-runs" },
      state.runs.length ? "No run matches these filters." : "No saved runs yet: run `holodeck test`."));
  }
  for (const agent of agents) {
    const own = runs.filter((r) => r.agent === agent);
    const tested = own.filter((r) => searchOf(r) === null);  // the trend is of test runs, not candidates
    const searches = new Set(own.map(searchOf).filter((id) => id !== null));
    const metrics = metricNames(own);
    const latest = tested[tested.length - 1];
    parts.push(el("section", { class: "agent", "data-agent": agent },
      el("h2", {}, agent),
      meta(`${tested.length} run${tested.length === 1 ? "" : "s"}`,
        searches.size ? `${searches.size} optimizer search${searches.size === 1 ? "" : "es"} (${own.length - tested.length} candidates)` : null,
        latest ? `latest: ${pct(passRate(latest))} passed` : null),
      tested.length ? trendChart(tested, metricNames(tested)) : null, runsTable(agent, own, metrics)));
  }
  parts.push(scansSection());
  show(...parts);
}

// --- red-team scans -------------------------------------------------------------------------

const STRATEGY_NAMES = { single: "single message", crescendo: "crescendo", "role-play": "role play" };

// each plugin's pass rate (attacks held off of those graded) with its severity
function pluginRates(scan) {
  return el("div", { class: "rates" }, scan.plugins.map((p) => el("span", {
    class: p.failed || p.errors ? "rate failing" : "rate", "data-plugin": p.plugin,
    title: p.skipped ? `skipped: ${p.skipped}` : `${p.passed}/${p.passed + p.failed} held off, severity ${p.severity}`,
  }, `${p.plugin} `, el("strong", {}, p.skipped ? "skipped" : pct(p.pass_rate)),
  p.skipped ? null : el("span", { class: "muted" }, ` ${p.severity}`))));
}

function scansSection() {
  if (!state.scans.length && !state.scansSkipped.length) return null;
  const rows = [...state.scans].reverse().map((scan) => el("tr", { "data-scan": scan.scan_id },
    el("td", {}, when(scan.started_at)),
    el("td", {}, el("a", { href: `#/scan/${encodeURIComponent(scan.scan_id)}` }, scan.scan_id),
      scan.offline ? el("span", { class: "muted" }, " offline") : null),
    el("td", {}, scan.agent), el("td", {}, scan.model),
    el("td", {}, scan.strategies.map((s) => STRATEGY_NAMES[s] || s).join(", ")),
    el("td", {}, `${scan.passed}/${scan.passed + scan.failed} held off`,
      scan.failed ? el("span", { class: "error-text" }, ` · ${scan.failed} got through`) : null,
      scan.errors ? ` · ${scan.errors} errors` : ""),
    el("td", {}, pluginRates(scan))));
  return el("section", { class: "panel", "data-testid": "scans" },
    el("h2", {}, "Red-team scans"),
    state.scansSkipped.length ? el("details", { class: "notice" },
      el("summary", {}, `${state.scansSkipped.length} file(s) in the scans directory skipped`),
      el("ul", {}, state.scansSkipped.map((s) => el("li", {}, `${s.file}: ${s.reason}`)))) : null,
    el("table", { class: "runs" },
      el("thead", {}, el("tr", {}, ["Started", "Scan", "Agent", "Model", "Strategies", "Attacks", "Pass rate per plugin"]
        .map((h) => el("th", {}, h)))),
      el("tbody", {}, rows)));
}

function guardrail(record) {
  return el("div", { class: "muted" }, `guardrail ${record.guardrail} (${record.side}) ${record.action}: ${record.reason}`);
}

function attackDetail(attack) {
  const label = { pass: "held off", fail: "got through", error: "error" }[attack.status] || attack.status;
  return el("details", { class: "attack", open: attack.status !== "pass", "data-testid": "attack", "data-attack": attack.id },
    el("summary", {}, el("span", { class: `status ${attack.status}` }, label), ` ${attack.id} `,
      el("span", { class: `severity ${attack.severity}` }, attack.severity),
      attack.strategy !== "single" ? el("span", { class: "muted" }, ` ${STRATEGY_NAMES[attack.strategy] || attack.strategy}`) : null),
    el("div", { "data-testid": "attack-reason" }, el("strong", {}, "Grader: "), attack.reason),
    attack.lead_in.map((turn, index) => el("div", { class: "turn", "data-testid": "lead-in" },
      el("div", { class: "muted" }, `Turn ${index + 1}: user (lead-in)`), el("pre", {}, turn.said),
      el("div", { class: "muted" }, "answer"), el("pre", {}, turn.answer))),
    el("div", { class: "turn" },
      el("div", { class: "muted" }, attack.lead_in.length ? `Turn ${attack.lead_in.length + 1}: the attack` : "The attack"),
      el("pre", { "data-testid": "attack-prompt" }, attack.prompt),
      attack.seeded ? [el("div", { class: "muted" }, "seeded into what the tools returned"), el("pre", {}, attack.seeded)] : null,
      attack.tool_calls.map(toolCall),
      attack.guardrails.map(guardrail),
      el("div", { class: "muted" }, "answer"), el("pre", { "data-testid": "attack-answer" }, attack.answer)));
}

async function renderScan(scanId) {
  const scan = await api(`/api/scans/${encodeURIComponent(scanId)}`);
  const rows = scan.plugins.map((p) => el("tr", { "data-plugin": p.plugin },
    el("td", {}, p.plugin, p.skipped ? el("span", { class: "muted" }, ` skipped: ${p.skipped}`) : null),
    el("td", {}, el("span", { class: `severity ${p.severity}` }, p.severity)),
    el("td", {}, String(p.attacks)), el("td", {}, String(p.passed)), el("td", {}, String(p.failed)),
    el("td", {}, String(p.errors)), el("td", {}, p.skipped ? "–" : pct(p.pass_rate))));
  const failed = scan.attacks.filter((a) => a.status !== "pass");
  const held = scan.attacks.filter((a) => a.status === "pass");
  show(el("section", { class: "panel", "data-testid": "scan" },
    el("h2", {}, `Red-team scan ${scan.scan_id}`),
    meta(`agent ${scan.agent}`, `model ${scan.model}`, `seed ${scan.seed}`, `started ${when(scan.started_at)}`,
      `strategies: ${scan.strategies.map((s) => STRATEGY_NAMES[s] || s).join(", ")}`,
      `${scan.attacks.length - failed.length}/${scan.attacks.length} held off`,
      scan.offline ? "offline (the static payloads on the test model)" : null),
    el("table", { class: "plugins" },
      el("thead", {}, el("tr", {}, ["Plugin", "Severity", "Attacks", "Held off", "Got through", "Errors", "Pass rate"]
        .map((h) => el("th", {}, h)))),
      el("tbody", {}, rows)),
    el("h3", {}, `Attacks that got through or failed (${failed.length})`), failed.map(attackDetail),
    el("h3", {}, `Attacks held off (${held.length})`), held.map(attackDetail)));
}

// --- one run's cases ------------------------------------------------------------------------

function metricsTable(metrics) {
  if (!metrics.length) return null;
  return el("table", { class: "metrics" },
    el("thead", {}, el("tr", {}, ["Metric", "Score", "Threshold", "Status", "Reason"].map((h) => el("th", {}, h)))),
    el("tbody", {}, metrics.map((m) => el("tr", {},
      el("td", {}, m.name, el("span", { class: "muted" }, ` ${m.kind}`)),
      el("td", {}, score(m.score, m.scale_max), m.judged ? "" : el("span", { class: "muted" }, " not judged")),
      el("td", {}, m.threshold === null ? "–" : String(m.threshold)),
      el("td", {}, status(m.status)),
      el("td", {}, m.reason || "", m.error ? el("div", { class: "error-text" }, m.error) : null)))));
}

function toolCall(call) {
  return el("div", { class: call.error ? "tool failed" : "tool", "data-testid": "tool-call" },
    el("strong", {}, call.name), call.agent ? el("span", { class: "muted" }, ` (sub-agent ${call.agent})`) : null,
    el("span", { class: "muted" }, ` ${Math.round(call.duration_ms)} ms`),
    el("div", { class: "muted" }, "arguments"), el("pre", {}, json(call.args)),
    call.error ? [el("div", { class: "muted" }, "error"), el("pre", { class: "error-text" }, call.error)]
      : [el("div", { class: "muted" }, "result"), el("pre", {}, json(call.result))]);
}

function toolCheck(check) {
  if (!check) return null;
  const problems = [
    check.missing.length && `missing: ${check.missing.join(", ")}`,
    check.unexpected.length && `unexpected: ${check.unexpected.join(", ")}`,
    ...check.mismatched.map((m) => `${m.tool}.${m.argument}: expected ${m.expected}, got ${json(m.actual)}`),
    ...check.wrong_count, ...(check.failed || []).map((f) => `only failed calls: ${f}`),
    check.out_of_order && "called out of order",
  ].filter(Boolean);
  return el("div", {}, el("strong", {}, "Tool check: "), status(check.passed ? "pass" : "fail"),
    problems.length ? el("ul", {}, problems.map((p) => el("li", {}, p))) : null);
}

const STOPS = { goal_met: "the user's goal was met", gave_up: "the user gave up",
  off_track: "the user stopped: the conversation went off track", max_turns: "stopped at max_turns" };

function simulation(record) {
  if (!record) return null;
  const turns = `${record.turns} turn${record.turns === 1 ? "" : "s"}`;
  return el("div", { class: "simulation", "data-testid": "simulation" },
    el("strong", {}, "Simulated user: "), `${STOPS[record.stopped] || record.stopped} after ${turns}`,
    record.explanation ? el("span", { class: "muted" }, ` (${record.explanation})`) : null,
    el("div", { class: "muted" }, "persona"), el("pre", {}, record.persona),
    el("div", { class: "muted" }, "goal"), el("pre", {}, record.goal));
}

function caseDetail(item) {
  return el("section", { class: "panel", "data-testid": "case-detail" },
    el("h2", {}, item.name, " ", status(item.status)),
    el("h3", {}, "Input"), el("pre", { "data-testid": "case-input" }, item.input),
    el("h3", {}, "Ground truth"), el("pre", {}, item.ground_truth ?? "–"),
    item.runs.map((attempt) => el("div", { class: "attempt" },
      el("h3", {}, `Attempt ${attempt.attempt} `, status(attempt.status),
        el("span", { class: "muted" }, ` ${Math.round(attempt.duration_ms)} ms`,
          attempt.cost_usd === null || attempt.cost_usd === undefined ? "" : ` · ${dollars(attempt.cost_usd)}`)),
      attempt.error ? el("pre", { class: "error-text" }, attempt.error) : null,
      simulation(attempt.simulation),
      attempt.failed_calls ? el("div", { class: "error-text", "data-testid": "failed-calls" },
        `${attempt.failed_calls} failed tool call${attempt.failed_calls === 1 ? "" : "s"}`) : null,
      toolCheck(attempt.tool_check),
      attempt.turns.map((turn, index) => el("div", { class: "turn", "data-testid": "turn" },
        el("div", { class: "muted" }, `Turn ${index + 1}: ${attempt.simulation ? "simulated user" : "user"}`),
        el("pre", {}, turn.input),
        turn.tool_calls.map(toolCall),
        el("div", { class: "muted" }, "answer"), el("pre", { "data-testid": "answer" }, turn.output),
        turn.ground_truth !== null ? [el("div", { class: "muted" }, "turn ground truth"), el("pre", {}, turn.ground_truth)] : null,
        metricsTable(turn.metrics))),
      metricsTable(attempt.metrics),
      attempt.retrieval_context.length ? [el("h3", {}, "Retrieval context"),
        attempt.retrieval_context.map((c) => el("pre", {}, c))] : null)));
}

// a case's runs together; null when any of them could not be priced
const caseCost = (item) => (item.runs.length ? item.runs.reduce((sum, r) =>
  (sum === null || r.cost_usd === null || r.cost_usd === undefined ? null : sum + r.cost_usd), 0) : null);

async function renderRun(runId, caseIndex) {
  const run = await api(`/api/runs/${encodeURIComponent(runId)}`);
  const open = caseIndex === undefined ? null : Number(caseIndex);
  const rows = run.cases.map((item, index) => el("tr", {
    class: index === open ? "case-row open" : "case-row", "data-testid": "case-row",
    onclick: () => { location.hash = `#/run/${encodeURIComponent(runId)}/${index}`; },
  }, el("td", {}, status(item.status)), el("td", {}, item.name),
    el("td", {}, pct(item.pass_rate), item.flaky ? " flaky" : ""),
    el("td", { "data-testid": "case-cost" }, dollars(caseCost(item))), el("td", { class: "input" }, item.input)));
  show(
    el("section", { class: "panel" },
      el("h2", {}, `Run ${run.run_id}`),
      meta(`agent ${run.agent}`, `model ${run.model}`, `started ${when(run.started_at)}`,
        `prompt ${run.prompt_version || "–"}`,
        `${run.summary.passed}/${run.summary.total} passed`, run.offline ? "offline (answers not judged)" : null,
        run.summary.cost_usd === null || run.summary.cost_usd === undefined ? null : `cost ${dollars(run.summary.cost_usd)}`,
        run.tags.length ? run.tags.map((t) => el("span", { class: "tag" }, t)) : null),
      (run.summary.failing_tools || []).map((line) =>
        el("div", { class: "error-text", "data-testid": "failing-tool" }, `Tool failing: ${line}`)),
      el("table", { class: "cases" },
        el("thead", {}, el("tr", {}, ["Status", "Case", "Pass rate", "Cost", "Input"].map((h) => el("th", {}, h)))),
        el("tbody", {}, rows))),
    open !== null && run.cases[open] ? caseDetail(run.cases[open]) : null);
}

// --- compare ---------------------------------------------------------------------------------

const VERDICTS = { regression: "Regressions", improvement: "Improvements", new: "New cases",
  removed: "Removed cases", unchanged: "Unchanged" };

async function renderCompare(ids) {
  const query = ids.map((id) => `run=${encodeURIComponent(id)}`).join("&");
  const series = await api(`/api/compare?${query}`);
  const metrics = [...new Set(series.cases.flatMap((c) => Object.keys(c.scores)))].sort();
  const notes = [...new Set(series.steps.flatMap((s) => s.notes))];
  const head = el("tr", {}, el("th", {}, "Case"), el("th", {}, "Change"),
    series.runs.map((r, i) => el("th", {}, `${String.fromCharCode(65 + i)}: `,
      el("a", { href: `#/run/${encodeURIComponent(r.run_id)}` }, r.run_id))),
    metrics.map((m) => el("th", {}, m)), el("th", {}, "Why it fails now"));
  const body = [];
  for (const [verdict, title] of Object.entries(VERDICTS)) {
    const rows = series.cases.filter((c) => c.verdict === verdict);
    if (!rows.length) continue;
    body.push(el("tr", { class: "group" }, el("th", { colspan: 3 + series.runs.length + metrics.length }, `${title} (${rows.length})`)));
    for (const row of rows) {
      body.push(el("tr", { "data-testid": "compare-row", "data-verdict": verdict },
        el("td", {}, row.case), el("td", { class: `verdict-${verdict}` }, verdict),
        row.statuses.map((s, i) => el("td", {}, status(s), row.pass_rates[i] !== null && row.pass_rates[i] < 1 && row.pass_rates[i] > 0 ? ` ${pct(row.pass_rates[i])}` : "")),
        metrics.map((m) => el("td", {}, (row.scores[m] || []).map((v) => (v === null ? "–" : v.toFixed(2))).join(" → "))),
        el("td", {}, row.problems.join("; "))));
    }
  }
  show(el("section", { class: "panel" },
    el("h2", {}, `Comparing ${series.runs.length} runs`),
    meta(...series.runs.map((r, i) =>
      `${String.fromCharCode(65 + i)}: ${r.agent} · ${r.model} · ${when(r.started_at)} · ${r.passed}/${r.total} passed`)),
    notes.length ? el("ul", { class: "notice" }, notes.map((n) => el("li", {}, n))) : null,
    el("table", { class: "compare" }, el("thead", {}, head), el("tbody", {}, body))));
}

// --- routing --------------------------------------------------------------------------------

async function route() {
  const parts = location.hash.replace(/^#\/?/, "").split("/").map(decodeURIComponent);
  try {
    const first = state.runs === null;
    if (first) {  // the listing names the runs' directory in the header, whichever page opens first
      const data = await api("/api/runs");
      state.runs = data.runs;
      state.skipped = data.skipped;
      state.scans = data.scans || [];
      state.scansSkipped = data.scans_skipped || [];
      document.getElementById("where").textContent = data.directory;
    }
    if (parts[0] === "run" && parts[1]) await renderRun(parts[1], parts[2]);
    else if (parts[0] === "scan" && parts[1]) await renderScan(parts[1]);
    else if (parts[0] === "compare" && parts[1]) await renderCompare(parts[1].split(","));
    else {
      renderSummary();
      if (first) performance.mark("runs-rendered");  // the first page's time, for bench/dashboard.py
    }
  } catch (error) {
    show(el("p", { class: "error-text", "data-testid": "error" }, String(error.message || error)),
      el("a", { href: "#/" }, "Back to all runs"));
  }
}

window.addEventListener("hashchange", route);
route();
