// CloudWatch Logs: the log groups; a group's streams; its events across streams (filter
// pattern) or one stream's, with "Follow" tailing new events over the tab's one event stream.
import { api, el, fail, link, live, subscribe, table, unsubscribe } from "./app.js";

async function groups(content) {
  const { groups } = await api("/logs/groups");
  content.replaceChildren(groups.length
    ? table(["Log group", "Retention", "Class", "Created"], groups.map((g) => el("tr", { "data-group": g.name },
      el("td", {}, el("a", { href: link(`/_cumulo/console/logs/${encodeURIComponent(g.name)}`) }, g.name)),
      el("td", {}, g.retention_in_days ? `${g.retention_in_days} days` : "Never expire"), el("td", {}, g.log_group_class),
      el("td", {}, g.creation_time || ""))), { id: "groups-table" })
    : el("p", { class: "empty" }, "No log groups."));
}

/** This page showing one stream's events (or, with none, every stream's). */
function streamLink(stream) {
  const u = new URL(location.href);
  if (stream) u.searchParams.set("stream", stream); else u.searchParams.delete("stream");
  u.searchParams.delete("filter");
  return u.pathname + u.search;
}

async function group(name, content) {
  const base = `/logs/groups/${encodeURIComponent(name)}`;
  const params = new URLSearchParams(location.search);
  const stream = params.get("stream") || "";
  const info = await api(`${base}/streams`);
  const events = el("tbody", {});
  const list = el("table", { id: "events-table" }, el("thead", {}, el("tr", {}, el("th", {}, "Time"), el("th", {}, "Stream"), el("th", {}, "Message"))), events);
  const filter = el("input", { id: "filter-pattern", name: "filter", value: params.get("filter") || "", placeholder: "Filter pattern", size: 40 });
  const follow = el("input", { type: "checkbox", id: "follow" });
  const status = el("p", { class: "muted", id: "events-status" });
  let last = 0, seen = new Set(), streamOpen = false;
  const add = (e) => {
    // GetLogEvents (one stream's page) has no event ids; FilterLogEvents (the tail) has.
    const key = stream ? `${e.timestamp}/${e.message}` : e.event_id;
    if (seen.has(key)) return;
    seen.add(key);
    last = Math.max(last, e.timestamp);
    events.append(el("tr", {}, el("td", {}, e.time || ""), el("td", {}, e.stream || stream), el("td", { class: "value log" }, e.message)));
  };
  async function load() {
    try {
      const qs = new URLSearchParams({ limit: "500" });
      let page;
      if (stream) {
        if (last) qs.set("start_time", String(last));
        qs.set("start_from_head", "true");
        page = await api(`${base}/streams/${encodeURIComponent(stream)}/events?${qs}`);
      } else {
        if (filter.value) qs.set("filter", filter.value);
        if (last) qs.set("start_time", String(last));
        page = await api(`${base}/events?${qs}`);
      }
      page.events.forEach(add);
      counted();
    } catch (e) { status.textContent = e.message; status.className = "error"; }
  }
  const counted = () => { status.textContent = `${seen.size} events${follow.checked ? " · following" : ""}`; status.className = "muted"; };
  const onTail = (d) => {
    if (d.error) { follow.checked = false; status.textContent = `${d.error.code}: ${d.error.message}`; status.className = "error"; return; }
    d.events.forEach(add);
    counted();
  };
  /** Tails from the last event shown, over the tab's stream (opened on the first follow). */
  async function tail() {
    if (!follow.checked) { await unsubscribe("logs").catch(() => {}); counted(); return; }
    if (!streamOpen) { live({ stacks: "false" }, { logs: onTail }); streamOpen = true; }
    try {
      await subscribe("logs", { group: name, stream: stream || null, filter: stream ? null : filter.value || null, start_time: last });
      counted();
    } catch (e) { follow.checked = false; status.textContent = e.message; status.className = "error"; }
  }
  follow.addEventListener("change", tail);
  const form = el("form", { id: "filter-form", onsubmit: (ev) => {
    ev.preventDefault(); events.replaceChildren(); seen = new Set(); last = 0; load().then(() => { if (follow.checked) tail(); });
  } }, filter, " ", el("button", { type: "submit" }, "Filter"), " ", el("label", {}, follow, " Follow"));
  content.replaceChildren(
    el("p", { class: "muted" }, info.arn, ` · retention: ${info.retention_in_days ? `${info.retention_in_days} days` : "never expire"}`),
    el("h2", {}, stream ? `Events of ${stream}` : "Events (all streams)"),
    stream ? el("p", {}, el("a", { href: streamLink("") }, "← all streams"), " ", el("label", {}, follow, " Follow")) : form,
    status, list,
    el("h2", {}, "Streams"),
    info.streams.length
      ? table(["Stream", "Last event", "First event", "Created"], info.streams.map((s) => el("tr", { "data-stream": s.name },
        el("td", {}, el("a", { href: streamLink(s.name) }, s.name)),
        el("td", {}, s.last_event || ""), el("td", {}, s.first_event || ""), el("td", {}, s.creation_time || ""))), { id: "streams-table" })
      : el("p", { class: "empty" }, "No streams."));
  await load();
}

export async function render({ subject, content }) {
  try {
    if (subject) await group(subject, content); else await groups(content);
  } catch (e) { fail(content, e); }
}
