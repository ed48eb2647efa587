// Step Functions: the state machines; a machine's state graph (its definition's top-level
// states and transitions) and executions; an execution's input, output, the graph coloured by
// how far it got, and its history.
import { api, badge, el, fail, link, table } from "./app.js";
import { graph } from "./graph.js";
import { json, pairs } from "./views.js";

async function machines(content) {
  const { state_machines } = await api("/stepfunctions/machines");
  content.replaceChildren(state_machines.length
    ? table(["State machine", "Type", "Created"], state_machines.map((m) => el("tr", { "data-machine": m.name },
      el("td", {}, el("a", { href: link(`/_cumulo/console/stepfunctions/${encodeURIComponent(m.name)}`) }, m.name)),
      el("td", {}, m.type), el("td", {}, m.creation_date || ""))), { id: "machines-table" })
    : el("p", { class: "empty" }, "No state machines."));
}

/** Where a state goes next: Next, Default, each Choice's Next, each Catch's Next. */
function successors(state) {
  const out = [];
  if (state.Next) out.push([state.Next, "Next"]);
  if (state.Default) out.push([state.Default, "Default"]);
  for (const c of state.Choices || []) if (c.Next) out.push([c.Next, "Choice"]);
  for (const c of state.Catch || []) if (c.Next) out.push([c.Next, "Catch"]);
  return out;
}

/** The definition as graph nodes (column: steps from StartAt) and transition edges. */
function stateGraph(definition, statuses = {}) {
  const states = (definition && definition.States) || {};
  const level = {};
  const queue = definition && definition.StartAt in states ? [definition.StartAt] : [];
  if (queue.length) level[queue[0]] = 0;
  while (queue.length) {
    const s = queue.shift();
    for (const [n] of successors(states[s] || {})) if (n in states && !(n in level)) { level[n] = level[s] + 1; queue.push(n); }
  }
  const nodes = Object.entries(states).map(([id, s]) => ({ id, type: s.Type, level: level[id] ?? 0, status: statuses[id] || null, stubbed: false }));
  const edges = Object.entries(states).flatMap(([id, s]) => {
    const by = new Map();
    for (const [n, kind] of successors(s)) if (n in states) by.set(n, [...(by.get(n) || []), kind]);
    return [...by].map(([to, kinds]) => ({ from: id, to, kinds }));
  });
  return graph({ nodes, edges }, { flow: true, legend: "Arrows follow the transitions from StartAt (Next, Default, Choice, Catch)." });
}

async function machine(name, content) {
  const m = await api(`/stepfunctions/machines/${encodeURIComponent(name)}`);
  content.replaceChildren(
    el("p", { class: "muted" }, `${m.arn} · ${m.type} · role ${m.role_arn}`),
    el("h2", {}, "State graph"), stateGraph(m.definition),
    el("h2", {}, "Executions"),
    m.executions.length
      ? table(["Execution", "Status", "Started", "Stopped"], m.executions.map((x) => el("tr", { "data-execution": x.name },
        el("td", {}, el("a", { href: link(`/_cumulo/console/stepfunctions/executions/${encodeURIComponent(x.arn)}`) }, x.name)),
        el("td", {}, badge(x.status)), el("td", {}, x.start_date || ""), el("td", {}, x.stop_date || ""))), { id: "executions-table" })
      : el("p", { class: "empty" }, m.type === "EXPRESS" ? "Express workflows keep no execution list." : "No executions."),
    el("h2", {}, "Definition"), json(m.definition, "definition"),
    el("h2", {}, "Tags"), pairs(m.tags, "tags-table"));
}

async function execution(arn, content) {
  const x = await api(`/stepfunctions/executions/${encodeURIComponent(arn)}`);
  document.getElementById("title").textContent = x.name;
  const statuses = {};
  for (const e of x.history) {
    if (e.stateEnteredEventDetails) statuses[e.stateEnteredEventDetails.name] = x.status === "RUNNING" ? "RUNNING" : "FAILED";
    if (e.stateExitedEventDetails) statuses[e.stateExitedEventDetails.name] = "SUCCEEDED";
  }
  const machineName = x.state_machine_arn.split(":").pop();
  content.replaceChildren(
    el("p", {}, badge(x.status), " ", el("a", { href: link(`/_cumulo/console/stepfunctions/${encodeURIComponent(machineName)}`) }, machineName),
      ` · started ${x.start_date || ""}${x.stop_date ? ` · stopped ${x.stop_date}` : ""}`),
    x.error ? el("p", { class: "error", id: "execution-error" }, `${x.error}: ${x.cause || ""}`) : "",
    el("h2", {}, "State graph"), stateGraph(x.definition, statuses),
    el("div", { class: "columns" },
      el("section", {}, el("h2", {}, "Input"), json(x.input, "execution-input")),
      el("section", {}, el("h2", {}, "Output"), json(x.output, "execution-output"))),
    el("h2", {}, "History"),
    table(["ID", "Type", "Time", "State"], x.history.map((e) => el("tr", { "data-event-type": e.type },
      el("td", { class: "num" }, String(e.id)), el("td", {}, e.type), el("td", {}, e.timestamp || ""),
      el("td", {}, (e.stateEnteredEventDetails || e.stateExitedEventDetails || {}).name || ""))), { id: "history-table" }));
}

export async function render({ subject, content }) {
  try {
    if (!subject) await machines(content);
    else if (location.pathname.includes("/stepfunctions/executions/")) await execution(subject, content);
    else await machine(subject, content);
  } catch (e) { fail(content, e); }
}
