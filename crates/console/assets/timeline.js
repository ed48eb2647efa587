// Events as a Gantt-style timeline: one bar per resource operation, from its IN_PROGRESS event
// to its terminal one (COMPLETE, FAILED, SKIPPED), on one time axis, so parallel work and the
// slow resource show at a glance; failures red with their reason. Updates and rollbacks are
// further bars on the same row.
import { el, statusClass } from "./app.js";

const terminal = (s) => /_(COMPLETE|FAILED|SKIPPED)$/.test(s);

/** Bars from events (newest first, as the API gives them). */
export function bars(events) {
  const chrono = [...events].reverse();
  const open = new Map();
  const rows = new Map();
  for (const e of chrono) {
    const key = e.logical_id;
    if (!rows.has(e.logical_id)) rows.set(e.logical_id, { id: e.logical_id, type: e.type, bars: [] });
    const t = Date.parse(e.timestamp);
    if (e.status.endsWith("_IN_PROGRESS")) {
      if (!open.has(key)) open.set(key, { start: t, from: e.status });
      // A stack's own row: each IN_PROGRESS phase (create, rollback, cleanup) is its own bar.
      else if (e.type === "AWS::CloudFormation::Stack") {
        const o = open.get(key);
        rows.get(e.logical_id).bars.push({ start: o.start, end: t, status: o.from, reason: null, open: false });
        open.set(key, { start: t, from: e.status });
      }
    } else if (terminal(e.status)) {
      const o = open.get(key) || { start: t };
      open.delete(key);
      rows.get(e.logical_id).bars.push({ start: o.start, end: t, status: e.status, reason: e.status_reason, open: false });
    }
  }
  const last = chrono.length ? Date.parse(chrono[chrono.length - 1].timestamp) : 0;
  for (const [id, o] of open) {
    rows.get(id).bars.push({ start: o.start, end: Math.max(last, Date.now()), status: o.from, reason: null, open: true });
  }
  return [...rows.values()];
}

export function timeline(events) {
  if (!events.length) return el("p", { class: "empty" }, "No events.");
  const rows = bars(events);
  const all = rows.flatMap((r) => r.bars);
  const t0 = Math.min(...all.map((b) => b.start));
  const t1 = Math.max(...all.map((b) => b.end), t0 + 1);
  const pct = (t) => ((t - t0) / (t1 - t0)) * 100;
  const ms = t1 - t0;
  const span = ms < 1000 ? `${ms} ms` : `${(ms / 1000).toFixed(1)} s`;
  const list = el("div", { class: "timeline", id: "events-timeline" },
    el("div", { class: "tl-axis" }, el("span", {}, "0"), el("span", {}, span)),
    rows.map((r) => el("div", { class: "tl-row", "data-logical-id": r.id },
      el("div", { class: "tl-label", title: r.type }, r.id, el("small", {}, r.type)),
      el("div", { class: "tl-track" }, r.bars.map((b) => {
        const bar = el("div", {
          class: `tl-bar ${statusClass(b.status)}${b.open ? " open" : ""}`,
          "data-status": b.status,
          title: `${b.status} · ${((b.end - b.start) / 1000).toFixed(2)} s${b.reason ? `\n${b.reason}` : ""}`,
        });
        bar.style.left = `${pct(b.start)}%`;
        bar.style.width = `${Math.max(pct(b.end) - pct(b.start), 0.6)}%`;
        return bar;
      })),
      el("div", { class: "tl-reason" }, r.bars.filter((b) => b.status.endsWith("FAILED") && b.reason)
        .map((b) => el("div", { class: "failure", "data-status": b.status }, `${b.status}: ${b.reason}`))))));
  const log = el("details", { class: "event-log" }, el("summary", {}, `All ${events.length} events`),
    el("table", { id: "events-table" }, el("tbody", {}, events.map((e) => el("tr", { "data-event-id": e.event_id },
      el("td", {}, e.timestamp), el("td", {}, e.logical_id), el("td", {}, e.type),
      el("td", { class: statusClass(e.status) }, e.status), el("td", { class: "reason" }, e.status_reason || ""))))));
  return el("div", {}, list, log);
}
