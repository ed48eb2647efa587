// The console's shared module: the header (region, health, data directory, search), the API
// client, a tiny DOM builder (text only: nothing shown is ever parsed as HTML) and the page's
// one live event stream. Each page is its own module (`<page>.js`) exporting `render(page)`.

const API = "/_cumulo/api/v1";
const REGIONS = [
  "us-east-1", "us-east-2", "us-west-1", "us-west-2", "ca-central-1", "sa-east-1",
  "eu-west-1", "eu-west-2", "eu-west-3", "eu-central-1", "eu-north-1", "eu-south-1",
  "ap-south-1", "ap-northeast-1", "ap-northeast-2", "ap-southeast-1", "ap-southeast-2",
  "me-south-1", "af-south-1",
];

export const region = () => new URLSearchParams(location.search).get("region") || "";

/** `path` under the API with the page's region; JSON answer, or throws the API's error. */
export async function api(path, options = {}) {
  const url = new URL(API + path, location.origin);
  if (region()) url.searchParams.set("region", region());
  const headers = { "X-Cumulo-Console": "1", ...(options.headers || {}) };
  const r = await fetch(url, { ...options, headers });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) {
    const e = new Error(body.error ? `${body.error.code}: ${body.error.message}` : `HTTP ${r.status}`);
    e.status = r.status;
    throw e;
  }
  return body;
}

/** A console link keeping the region. */
export function link(path) {
  return region() ? `${path}${path.includes("?") ? "&" : "?"}region=${encodeURIComponent(region())}` : path;
}

/** `el("a", {href, class}, child...)`: an HTML element; children are nodes or text. */
export function el(tag, attrs = {}, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

/** `svg("rect", {...}, child...)`: the same in SVG's namespace (an `a` inside a drawing too). */
export function svg(tag, attrs = {}, ...children) {
  return fill(document.createElementNS("http://www.w3.org/2000/svg", tag), attrs, children);
}

function fill(node, attrs, children) {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
    else if (k === "text") node.textContent = v;
    else node.setAttribute(k, v === true ? "" : v);
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

/** The colour class of an AWS status name. */
export function statusClass(s) {
  if (!s) return "st-none";
  // Step Functions' execution and state statuses.
  if (s === "SUCCEEDED") return "st-ok";
  if (s === "RUNNING") return "st-progress";
  if (s === "TIMED_OUT" || s === "ABORTED") return "st-failed";
  if (s.includes("FAILED")) return "st-failed";
  if (s.includes("ROLLBACK")) return "st-rollback";
  if (s.endsWith("IN_PROGRESS")) return "st-progress";
  if (s === "DELETE_COMPLETE" || s === "DELETE_SKIPPED") return "st-deleted";
  if (s.endsWith("COMPLETE")) return "st-ok";
  return "st-none";
}

export const badge = (s) => el("span", { class: `status ${statusClass(s)}`, "data-status": s || "" }, s || "—");

export function table(headers, rows, attrs = {}) {
  return el("table", attrs,
    el("thead", {}, el("tr", {}, headers.map((h) => el("th", {}, h)))),
    el("tbody", {}, rows));
}

export function section(title, ...children) {
  return el("section", { id: `sec-${title.toLowerCase().replace(/\W+/g, "-")}` }, el("h2", {}, title), ...children);
}

export function fail(where, e) {
  where.replaceChildren(el("p", { class: "error", role: "alert" }, e.message || String(e)));
}

let stream = null, streamId = null;
/** What the page subscribed its stream to (topic → request body), sent again to a stream that
 * reconnected (a new stream, with a new id). */
const subscriptions = new Map();

/** The page's one event stream (`events/stream`), closed when the page is left. */
export function live(params, handlers) {
  if (stream) stream.close();
  const url = new URL(API + "/events/stream", location.origin);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  if (region()) url.searchParams.set("region", region());
  stream = new EventSource(url);
  streamId = null;
  stream.addEventListener("stream", (ev) => {
    streamId = JSON.parse(ev.data).id;
    // A refused subscription reaches the topic's handler as `{error}` (nothing else would see it).
    for (const [topic, body] of subscriptions) {
      send(topic, body).catch((e) => { if (handlers[topic]) handlers[topic]({ error: { code: "SubscriptionFailed", message: e.message } }); });
    }
  });
  for (const [name, fn] of Object.entries(handlers)) {
    stream.addEventListener(name, (ev) => fn(JSON.parse(ev.data)));
  }
  return stream;
}

function send(topic, body) {
  if (!streamId) return Promise.resolve();
  const path = `/events/stream/${streamId}/${topic}`;
  return body ? api(path, { method: "POST", body: JSON.stringify(body), headers: { "Content-Type": "application/json" } })
    : api(path, { method: "DELETE" });
}

/** Has the page's stream (opened with `live`) send `topic`'s events too (`logs`: a log tail);
 * rejects with the API's error (an unknown log group, say). */
export function subscribe(topic, body) {
  subscriptions.set(topic, body);
  return send(topic, body);
}

export function unsubscribe(topic) {
  if (!subscriptions.delete(topic)) return Promise.resolve();
  return send(topic, null);
}

addEventListener("pagehide", () => { if (stream) { stream.close(); stream = null; streamId = null; } });

async function header() {
  const select = document.getElementById("region");
  const current = region();
  const names = current && !REGIONS.includes(current) ? [current, ...REGIONS] : REGIONS;
  const health = await api("/health").catch(() => null);
  const def = health ? health.default_region : "us-east-1";
  for (const r of names) select.append(el("option", { value: r, selected: (current || def) === r }, r));
  select.addEventListener("change", () => {
    const u = new URL(location.href);
    u.searchParams.set("region", select.value);
    location.href = u;
  });
  const box = document.getElementById("search-box");
  const q = new URLSearchParams(location.search).get("q");
  if (q) box.value = q;
  const form = box.form;
  if (current) form.append(el("input", { type: "hidden", name: "region", value: current }));
  if (!health) return;
  const services = Object.entries(health.services);
  const running = services.filter(([, s]) => s === "running").map(([n]) => n);
  const h = document.getElementById("health");
  h.textContent = `store ${health.store.status} · ${running.length} of ${services.length} services running`;
  h.className = `health ${health.store.status === "ok" ? "st-ok" : "st-failed"}`;
  h.title = services.map(([n, s]) => `${n}: ${s}`).join("\n");
  document.getElementById("datadir").textContent = health.store.location ? `data: ${health.store.location}` : "in memory";
}

async function main() {
  const main = document.getElementById("main");
  const page = main.dataset.page;
  for (const a of document.querySelectorAll("header nav a, a.brand")) a.href = link(a.getAttribute("href"));
  header();
  if (page === "error") {
    document.getElementById("content").append(el("p", { class: "error" }, main.dataset.subject));
    return;
  }
  const module = await import(`./${page}.js`);
  await module.render({ subject: main.dataset.subject, content: document.getElementById("content") });
}

main();
