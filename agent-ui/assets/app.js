// The inspector's page: the runs, a run's timeline, a paused run's question, the agents.
// Every text from a model or a stored row goes into the page as text (text nodes and
// `textContent`), never as HTML: this file never assigns `innerHTML`.
"use strict";

const view = () => document.getElementById("view");
const say = (text) => { document.getElementById("status").textContent = text; };
let live = null; // the open run's stream, aborted when the page leaves it

// The API's bearer token, when the server has one: given once as `#token=...`.
(function takeToken() {
  const m = location.hash.match(/^#token=([^&]+)/);
  if (m) {
    sessionStorage.setItem("token", decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname + "#/");
  }
})();

function headers(extra) {
  const h = Object.assign({}, extra || {});
  const token = sessionStorage.getItem("token");
  if (token) h["Authorization"] = "Bearer " + token;
  return h;
}

async function api(path, options) {
  const o = Object.assign({}, options || {});
  o.headers = headers(o.headers);
  const response = await fetch(path, o);
  let body = null;
  const text = await response.text();
  try { body = JSON.parse(text); } catch (_) { body = { error: text }; }
  return { ok: response.ok, status: response.status, body };
}

// An element: `el("td", {class: "x"}, "text", child, ...)`; strings become text nodes.
function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k === "text") node.textContent = String(v);
    else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? "" : String(v));
  }
  for (const child of children) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const time = (ms) => (ms ? new Date(ms).toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z") : "");

// ---- routing -------------------------------------------------------------------------------

function route() {
  if (live) { live.abort(); live = null; }
  const hash = location.hash || "#/";
  let m;
  if ((m = hash.match(/^#\/run\/(.+)$/))) return showRun(decodeURIComponent(m[1]));
  if (hash === "#/agents") return showAgents();
  m = hash.match(/^#\/(?:\?(.*))?$/);
  const params = new URLSearchParams((m && m[1]) || "");
  return showRuns(params.get("status") || "", params.get("before") || "");
}
window.addEventListener("hashchange", route);
window.addEventListener("DOMContentLoaded", route);

// ---- the runs ------------------------------------------------------------------------------

const STATUSES = ["", "queued", "running", "paused", "answered", "completed", "failed"];

async function showRuns(status, before) {
  say("Loading runs…");
  const q = new URLSearchParams({ limit: "50" });
  if (status) q.set("status", status);
  if (before) q.set("before", before);
  const { ok, body } = await api("/api/runs?" + q);
  const root = view();
  root.replaceChildren();
  if (!ok) { say(""); root.append(el("p", { class: "error", role: "alert" }, body.error)); return; }
  const filter = el("select", { id: "status-filter", onchange: (e) => { location.hash = "#/?status=" + e.target.value; } },
    ...STATUSES.map((s) => el("option", { value: s, selected: s === status }, s || "every status")));
  root.append(el("h2", {}, "Runs"), el("label", { for: "status-filter" }, "Status "), filter);
  const table = el("table", { id: "runs" },
    el("thead", {}, el("tr", {}, ...["Run", "Status", "Workflow or agent", "Owner", "Takeovers", "Created", "Updated", "Tokens", "Cost"].map((h) => el("th", { scope: "col" }, h)))));
  const rows = el("tbody");
  for (const run of body.runs) {
    rows.append(el("tr", { "data-run": run.id },
      el("td", {}, el("a", { href: "#/run/" + encodeURIComponent(run.id) }, run.id)),
      el("td", { class: "status-" + run.status }, run.status),
      el("td", {}, run.workflow, el("span", { class: "muted" }, run.kind === "runtime" ? " (runtime)" : "")),
      el("td", {}, run.owner || ""),
      el("td", {}, run.takeovers),
      el("td", {}, time(run.created_ms)),
      el("td", {}, time(run.updated_ms)),
      el("td", {}, run.tokens === null ? "" : run.tokens),
      el("td", {}, run.cost === null ? "" : "$" + run.cost.toFixed(4))));
  }
  table.append(rows);
  root.append(table);
  if (!body.runs.length) root.append(el("p", { class: "muted" }, "No runs."));
  for (const s of body.skipped) root.append(el("p", { class: "error" }, "skipped: " + s));
  const pager = el("div", { class: "pager" });
  if (before) pager.append(el("a", { href: "#/?status=" + status }, "Newest"));
  if (body.next) pager.append(el("a", { href: "#/?status=" + status + "&before=" + encodeURIComponent(body.next), id: "older" }, "Older runs"));
  root.append(pager);
  say(body.runs.length + " runs");
}

// ---- JSON as a collapsible tree --------------------------------------------------------------

// `invalid`: JSON pointers of the violated values; `missing`: pointers of the required
// values that are absent (shown where they should have been).
function tree(value, invalid, missing) {
  invalid = invalid || new Set();
  missing = missing || [];
  const root = el("div", { class: "tree" });
  root.append(node(value, "", invalid, missing, null));
  return root;
}

function node(value, pointer, invalid, missing, key) {
  const bad = invalid.has(pointer);
  const label = key === null ? null : el("span", { class: "key" }, JSON.stringify(key) + ": ");
  if (value !== null && typeof value === "object") {
    const isArray = Array.isArray(value);
    const entries = isArray ? value.map((v, i) => [i, v]) : Object.entries(value);
    const list = el("ul");
    for (const [k, v] of entries) {
      const child = node(v, pointer + "/" + String(k).replace(/~/g, "~0").replace(/\//g, "~1"), invalid, missing, isArray ? null : k);
      list.append(el("li", { "data-pointer": pointer + "/" + k, "aria-invalid": invalid.has(pointer + "/" + k) ? "true" : null }, isArray ? el("span", { class: "muted" }, k + ": ") : null, child));
    }
    for (const m of missing) {
      const at = m.lastIndexOf("/");
      if (m.slice(0, at) !== pointer) continue;
      const name = m.slice(at + 1);
      list.append(el("li", { "data-pointer": m, "aria-invalid": "true", class: "missing" },
        el("span", { class: "key" }, JSON.stringify(name) + ": "), "missing (required by the contract)"));
    }
    const summary = el("summary", {}, label, isArray ? "[" + entries.length + "]" : "{" + entries.length + "}");
    return el("details", { open: true, "aria-invalid": bad ? "true" : null }, summary, list);
  }
  return el("span", { "aria-invalid": bad ? "true" : null }, label, JSON.stringify(value));
}

function parsed(text) {
  if (typeof text !== "string") return undefined;
  const t = text.trim();
  if (!(t.startsWith("{") || t.startsWith("["))) return undefined;
  try { return JSON.parse(t); } catch (_) { return undefined; }
}

// ---- markdown, rendered as elements ------------------------------------------------------------

// `**bold**` and `` `code` `` inside a line, as elements; the rest as text.
function inline(text) {
  const out = document.createDocumentFragment();
  const parts = String(text).split(/(\*\*[^*]+\*\*|`[^`]+`)/);
  for (const part of parts) {
    if (part.length > 4 && part.startsWith("**") && part.endsWith("**")) out.append(el("strong", {}, part.slice(2, -2)));
    else if (part.length > 2 && part.startsWith("`") && part.endsWith("`")) out.append(el("code", {}, part.slice(1, -1)));
    else if (part) out.append(part);
  }
  return out;
}

function markdown(text) {
  const root = el("div", { class: "markdown" });
  let lists = [], fence = null; // lists: [{indent, ul}] from the outermost
  for (const line of String(text).split("\n")) {
    if (fence) {
      if (line.startsWith("```")) { root.append(el("pre", {}, fence.join("\n"))); fence = null; }
      else fence.push(line);
      continue;
    }
    if (line.startsWith("```")) { fence = []; lists = []; continue; }
    const h = line.match(/^(#{1,6})\s+(.*)$/);
    if (h) { lists = []; root.append(el("h" + Math.min(6, h[1].length + 2), {}, inline(h[2]))); continue; }
    const li = line.match(/^(\s*)[-*]\s+(.*)$/);
    if (li) {
      const indent = li[1].length;
      while (lists.length && lists[lists.length - 1].indent > indent) lists.pop();
      if (!lists.length || lists[lists.length - 1].indent < indent) {
        const ul = el("ul");
        const parent = lists.length ? lists[lists.length - 1].ul.lastElementChild : null;
        (parent || root).append(ul);
        lists.push({ indent, ul });
      }
      lists[lists.length - 1].ul.append(el("li", {}, inline(li[2])));
      continue;
    }
    lists = [];
    if (line.trim()) root.append(el("p", {}, inline(line)));
  }
  if (fence) root.append(el("pre", {}, fence.join("\n")));
  return root;
}

// ---- a run ------------------------------------------------------------------------------

// What a retry error marks: the pointers of its violations, and of the missing fields.
function marks(error) {
  const invalid = new Set(), missing = [];
  if (!error || typeof error !== "object") return { invalid, missing };
  const ptr = (path) => (Array.isArray(path) && path.length ? "/" + path.join("/") : "");
  const base = ptr(error.path);
  if (base) invalid.add(base);
  for (const v of error.errors || []) { const p = ptr(v.path); if (p) invalid.add(p); }
  for (const f of error.missing_fields || []) missing.push(base + "/" + f);
  return { invalid, missing };
}

function violations(error) {
  const list = el("ul", { class: "violations" });
  if (error && error.error) list.append(el("li", {}, error.error));
  for (const f of (error && error.missing_fields) || []) list.append(el("li", {}, "missing: " + f));
  for (const v of (error && error.errors) || []) list.append(el("li", {}, (v.path && v.path.length ? "/" + v.path.join("/") + ": " : "") + v.message));
  return list;
}

// The top-level fields that changed between two answers.
function difference(before, after) {
  const box = el("ul", { class: "diff" });
  if (!before || !after || typeof before !== "object" || typeof after !== "object") return null;
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  for (const k of keys) {
    if (!(k in before)) box.append(el("li", { class: "added" }, "+ " + k));
    else if (!(k in after)) box.append(el("li", { class: "removed" }, "- " + k));
    else if (JSON.stringify(before[k]) !== JSON.stringify(after[k])) box.append(el("li", {}, "~ " + k));
  }
  return box.childNodes.length ? box : null;
}

// The timeline's state: the last call each caller made of each tool, the last answer of each
// agent, and the answer an output retry refused (for the difference).
function timeline() {
  return { calls: {}, answers: {}, refused: {}, list: el("ol", { class: "timeline", id: "timeline" }) };
}

function item(t, cls, title, ...content) {
  const li = el("li", { class: cls }, el("div", { class: "kind" }, title), ...content);
  t.list.append(li);
  return li;
}

function addEvent(t, stored) {
  const e = stored.event || {};
  if (stored.seq) t.last = Math.max(t.last || 0, stored.seq);
  const at = el("span", { class: "muted" }, " " + time(stored.at_ms));
  switch (e.kind) {
    case "agent_call":
      item(t, "call", "Agent call: " + e.agent, el("span", { class: "muted" }, e.context_id + " · attempt " + e.attempt), at);
      break;
    case "rendered_prompt":
      item(t, "prompt", "Rendered prompt of " + e.agent,
        el("details", { open: true }, el("summary", {}, "rendered"), markdown(e.prompt)),
        el("details", {}, el("summary", {}, "as written"), el("pre", { class: "prompt-text" }, e.prompt)));
      break;
    case "message": {
      const m = e.message || {};
      const value = parsed(m.content);
      const parts = [];
      if (m.content) parts.push(value === undefined ? el("pre", {}, m.content) : tree(value));
      for (const call of m.tool_calls || []) {
        const args = parsed(call.arguments);
        (t.calls[e.agent] = t.calls[e.agent] || {})[call.name] = args === undefined ? call.arguments : args;
        parts.push(el("div", { class: "tool-call" }, el("span", { class: "kind" }, "tool call " + call.name),
          args === undefined ? el("pre", {}, call.arguments) : tree(args)));
      }
      if (m.role === "assistant" && m.content) {
        const previous = t.refused[e.agent];
        if (previous !== undefined && value !== undefined) {
          const diff = difference(previous, value);
          if (diff) parts.push(el("div", {}, el("span", { class: "kind" }, "changed since the refused answer"), diff));
          delete t.refused[e.agent];
        }
        t.answers[e.agent] = value;
      }
      const role = m.role === "tool" ? "tool result" : m.role;
      item(t, "message " + m.role, "[" + e.agent + "] " + role, ...parts);
      break;
    }
    case "input_retry": {
      const args = (t.calls[e.caller] || {})[e.tool];
      const { invalid, missing } = marks(e.error);
      item(t, "verdict-refused", "Refused: " + e.caller + "'s call of " + e.tool + " (input contract)",
        violations(e.error),
        args !== undefined && typeof args === "object" ? tree(args, invalid, missing) : null,
        el("details", {}, el("summary", {}, "retry error sent back"), tree(e.error)));
      break;
    }
    case "output_retry": {
      const answer = t.answers[e.agent];
      const { invalid, missing } = marks(e.error);
      t.refused[e.agent] = answer;
      item(t, "verdict-refused", "Refused: " + e.agent + "'s answer (output contract)",
        violations(e.error),
        answer !== undefined && typeof answer === "object" ? tree(answer, invalid, missing) : null,
        el("details", {}, el("summary", {}, "retry error sent back"), tree(e.error)));
      break;
    }
    case "stopped":
      item(t, "stopped", "Stream stopped: " + e.agent, "closed after " + e.received + " bytes; byte " + e.at + " broke the output contract");
      break;
    case "stream_retry":
      item(t, "stopped", "Stream cut: " + e.agent, "after " + e.received + " bytes; asked again");
      break;
    case "usage": {
      const u = e.usage || {};
      item(t, "usage", "Usage: " + e.agent, u.input_tokens + " in, " + u.output_tokens + " out" + (e.model ? " (" + e.model + ")" : ""));
      break;
    }
    case "tool_paused":
      item(t, "paused", e.tool + " waits on a person (" + e.agent + ")", el("pre", {}, e.question));
      break;
    case "input_repaired":
    case "output_repaired":
      item(t, "repaired", "Repaired: " + (e.agent || e.caller + "'s call of " + e.tool),
        el("ul", {}, ...(e.repairs || []).map((r) => el("li", {}, (r.path || "/") + ": " + r.kind + " " + r.before + " → " + r.after))));
      break;
    case "dropped":
      item(t, "verdict-refused", "Transcript cut", e.events + " later events (" + e.bytes + " bytes) were not recorded: past the run's limit");
      break;
    default:
      item(t, "unreadable", "Unreadable event", el("pre", {}, JSON.stringify(e)));
  }
}

function header(run) {
  return el("dl", { id: "run-header" },
    el("dt", {}, "Status"), el("dd", { id: "run-status", class: "status-" + run.status }, run.status),
    el("dt", {}, run.kind === "runtime" ? "Agent" : "Workflow"), el("dd", {}, run.workflow),
    el("dt", {}, "Owner"), el("dd", {}, run.owner || "none"),
    el("dt", {}, "Takeovers"), el("dd", {}, run.takeovers),
    el("dt", {}, "Created / updated"), el("dd", {}, time(run.created_ms) + " / " + time(run.updated_ms)),
    el("dt", {}, "Tokens / cost"), el("dd", {}, (run.tokens === null ? "n/a" : run.tokens) + " / " + (run.cost === null ? "n/a" : "$" + run.cost.toFixed(4))),
    run.error ? el("dt", {}, "Error") : null, run.error ? el("dd", { class: "error" }, run.error) : null);
}

function questionForm(id, q) {
  const box = el("section", { class: "question", id: "question", "aria-labelledby": "question-title" });
  box.append(el("h3", { id: "question-title" }, (q.agent || "The run") + " asks"), el("p", { id: "question-text" }, q.prompt));
  if (q.approval) { box.append(el("p", {}, "It waits for a decision on an output (approve, reject or edit), which this page does not give yet.")); return box; }
  const area = el("textarea", { id: "answer", name: "answer", "aria-describedby": "answer-error" });
  const error = el("p", { id: "answer-error", class: "error", role: "alert" });
  const form = el("form", { class: "answer", id: "answer-form" },
    el("label", { for: "answer" }, "Your answer"), area, error, el("button", { type: "submit", id: "send" }, "Send answer"));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    error.textContent = "";
    area.removeAttribute("aria-invalid");
    const { ok, body } = await api("/api/runs/" + encodeURIComponent(id) + "/answer", {
      method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ answer: area.value }),
    });
    if (ok) { box.replaceChildren(el("p", { id: "answered" }, "Answer recorded: the run is answered, for a worker to resume.")); return; }
    const retry = body.retry;
    if (retry) {
      const fields = [...(retry.missing_fields || []), ...(retry.errors || []).map((v) => (v.path || []).join("/"))].filter(Boolean);
      const named = [...new Set(fields.length ? fields : ["answer"])];
      if (named.includes("answer")) area.setAttribute("aria-invalid", "true");
      error.textContent = "Refused: " + named.join(", ") + ": " + ((retry.errors && retry.errors[0] && retry.errors[0].message) || retry.error || "");
    } else error.textContent = body.error || "refused";
    area.focus();
  });
  box.append(form);
  return box;
}

async function showRun(id) {
  if (live) { live.abort(); live = null; }
  say("Loading run…");
  const { ok, body } = await api("/api/runs/" + encodeURIComponent(id));
  const root = view();
  root.replaceChildren();
  if (!ok) { say(""); root.append(el("p", { class: "error", role: "alert" }, body.error)); return; }
  let run = body.run;
  const head = header(run);
  root.append(el("h2", {}, "Run ", el("code", {}, run.id)), head);
  if (body.question) root.append(questionForm(id, body.question));
  if (body.answer) root.append(el("p", {}, "Recorded answer: ", el("q", {}, body.answer)));
  const t = timeline();
  root.append(el("h3", {}, "Timeline"));
  if (body.events === null) root.append(el("p", { class: "muted" }, "No transcript: " + body.events_error));
  for (const e of body.events || []) addEvent(t, e);
  root.append(t.list);
  if (body.events_more) root.append(el("p", { class: "muted" }, "Only the first events are shown."));
  const conversation = body.state && body.state.conversation;
  if (Array.isArray(conversation) && conversation.length) {
    const c = timeline();
    for (const m of conversation) addEvent(c, { event: { kind: "message", agent: run.workflow, message: m } });
    root.append(el("details", {}, el("summary", {}, "Stored conversation (" + conversation.length + " messages)"), c.list));
  }
  if (body.state && body.state.steps) root.append(el("details", {}, el("summary", {}, "Completed steps' outputs"), tree(body.state.steps)));
  root.append(el("h3", {}, "Claims and takeovers"));
  if (body.history === null) root.append(el("p", { class: "muted" }, body.history_error));
  else {
    const history = el("table", { id: "history" }, el("thead", {}, el("tr", {}, ...["When", "Event", "Owner", "Step"].map((h) => el("th", { scope: "col" }, h)))));
    const rows = el("tbody");
    for (const h of body.history) rows.append(el("tr", {}, el("td", {}, time(h.at_ms)), el("td", {}, h.event), el("td", {}, h.owner || ""), el("td", {}, h.step || "")));
    history.append(rows);
    root.append(history);
  }
  say("Run " + run.status);
  if (run.status === "completed" || run.status === "failed") return;
  const on = (name, data) => {
    if (name === "event") addEvent(t, data);
    if (name === "run") {
      const changed = data.status !== run.status;
      run = data;
      head.replaceWith(header(run));
      if (changed) { say("Run " + run.status); if (run.status !== "answered") showRun(id); }
    }
  };
  // A stream ends after a while (the server's bound): open another while the run is open.
  const watch = async () => {
    const controller = await follow(id, t.last || 0, on);
    if (!controller.signal.aborted && live === controller && run.status !== "completed" && run.status !== "failed") {
      setTimeout(() => { if (live === controller) watch(); }, 1000);
    }
  };
  watch();
}

// Reads the run's server-sent events with `fetch` (it carries the token header).
async function follow(id, after, on) {
  const controller = new AbortController();
  live = controller;
  try {
    const response = await fetch("/api/runs/" + encodeURIComponent(id) + "/live?after=" + after, { headers: headers(), signal: controller.signal });
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        let name = "message", data = "";
        for (const line of frame.split("\n")) {
          if (line.startsWith("event: ")) name = line.slice(7);
          else if (line.startsWith("data: ")) data += line.slice(6);
        }
        if (data) { try { on(name, JSON.parse(data)); } catch (_) { /* a frame that does not parse is skipped */ } }
      }
    }
  } catch (_) { /* aborted, or the connection ended */ }
  return controller;
}

// ---- the agents ------------------------------------------------------------------------------

async function showAgents() {
  const { ok, body } = await api("/api/agents");
  const root = view();
  root.replaceChildren(el("h2", {}, "Agents"));
  if (!ok) { root.append(el("p", { class: "error" }, body.error)); return; }
  if (!body.length) root.append(el("p", { class: "muted" }, "No agents given (agent-contract ui --schemas DIR shows a folder's)."));
  for (const a of body) {
    root.append(el("section", { class: "agent" }, el("h3", {}, a.name),
      el("details", {}, el("summary", {}, "Input contract"), tree(a.input)),
      el("details", {}, el("summary", {}, "Output contract"), tree(a.output)),
      el("details", {}, el("summary", {}, "Prompt template"), el("pre", {}, a.template))));
  }
  say(body.length + " agents");
}
