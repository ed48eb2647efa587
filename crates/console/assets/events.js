// EventBridge: the buses with their rules, and a rule's pattern or schedule and targets.
import { api, el, fail, link, table } from "./app.js";
import { json, pairs } from "./views.js";

const ruleId = (bus, name) => (bus === "default" ? name : `${bus}|${name}`);

async function rules(content) {
  const { event_buses } = await api("/events/rules");
  content.replaceChildren(...event_buses.flatMap((b) => [
    el("h2", {}, `Bus ${b.name}`),
    b.rules.length
      ? table(["Rule", "State", "Pattern / schedule", "Targets"], b.rules.map((r) => el("tr", { "data-rule": r.name },
        el("td", {}, el("a", { href: link(`/_cumulo/console/events/${encodeURIComponent(ruleId(b.name, r.name))}`) }, r.name)),
        el("td", {}, r.state), el("td", { class: "value" }, r.schedule_expression || JSON.stringify(r.event_pattern)),
        el("td", { class: "num" }, String(r.targets)))), { class: "rules-table", "data-bus": b.name })
      : el("p", { class: "empty" }, "No rules."),
  ]));
}

async function rule(id, content) {
  const r = await api(`/events/rules/${encodeURIComponent(id)}`);
  content.replaceChildren(
    el("p", { class: "muted" }, `${r.arn} · bus ${r.event_bus} · ${r.state}`),
    r.description ? el("p", {}, r.description) : "",
    el("h2", {}, r.schedule_expression ? "Schedule" : "Event pattern"),
    r.schedule_expression ? el("p", { class: "value" }, r.schedule_expression) : json(r.event_pattern, "event-pattern"),
    el("h2", {}, "Targets"),
    r.targets.length
      ? table(["ID", "ARN", "Input"], r.targets.map((t) => el("tr", { "data-target": t.id },
        el("td", {}, t.id), el("td", { class: "value" }, t.arn), el("td", { class: "value" }, t.input || t.input_path || ""))), { id: "targets-table" })
      : el("p", { class: "empty" }, "No targets."),
    el("h2", {}, "Tags"), pairs(r.tags, "tags-table"));
}

export async function render({ subject, content }) {
  try {
    if (subject) await rule(subject, content); else await rules(content);
  } catch (e) { fail(content, e); }
}
