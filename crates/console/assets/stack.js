// One stack: overview, parameters, outputs, tags, the events timeline, resources, the resource
// graph, the template (original and processed, highlighted) and change sets; live while the
// page is open (the stream says when the stack's events change, the page re-reads them).
import { api, badge, el, fail, link, live, section, table } from "./app.js";
import { timeline } from "./timeline.js";
import { graph } from "./graph.js";
import { highlight } from "./highlight.js";

const kv = (list, empty) => list.length
  ? table(["Key", "Value"], list.map((x) => el("tr", {}, el("td", {}, x.key), el("td", { class: "value" }, x.value))))
  : el("p", { class: "empty" }, empty);

function overview(s) {
  const dl = el("dl", { class: "overview" });
  const add = (k, v) => { if (v !== null && v !== undefined && v !== "") dl.append(el("dt", {}, k), el("dd", {}, v)); };
  add("Status", badge(s.status));
  add("Status reason", s.status_reason);
  add("Stack ID", s.id);
  add("Description", s.description);
  add("Created", s.creation_time);
  add("Last updated", s.last_updated_time);
  add("Deleted", s.deletion_time);
  if (s.parent_id) add("Parent", el("a", { href: link(`/_cumulo/console/stacks/${encodeURIComponent(s.parent_id)}`) }, s.parent_id));
  add("Termination protection", s.termination_protection ? "enabled" : "disabled");
  add("Drift", s.drift_status);
  return dl;
}

/** The resources; with `drifted` (a detection has run), each one's drift status too. */
function resources(list, drifted) {
  return table(["Logical ID", "Physical ID", "Type", "Status", drifted && "Drift", "Reason"].filter(Boolean), list.map((r) =>
    el("tr", { "data-logical-id": r.logical_id, class: r.stubbed ? "stubbed" : "" },
      el("td", {}, r.logical_id),
      el("td", {}, r.view ? el("a", { href: link(r.view) }, r.physical_id) : (r.physical_id || "")),
      el("td", {}, r.type),
      el("td", {}, badge(r.status)),
      drifted && el("td", { class: `drift drift-${r.drift_status.toLowerCase()}`, "data-drift": r.drift_status }, r.drift_status),
      el("td", { class: "reason" }, r.stubbed ? el("span", { class: "stub-mark" }, "stub ") : "", r.status_reason || ""))),
  { id: "resources-table" });
}

/** The last drift detection: each checked resource's status, and what differs in each
 * modified one (DescribeStackResourceDrifts' PropertyDifferences). */
function drift(d) {
  if (d.stack_drift_status === "NOT_CHECKED") return el("p", { class: "empty" }, "Drift has not been detected on this stack.");
  return el("div", {},
    el("p", {}, "Stack drift: ", el("span", { id: "stack-drift", "data-drift": d.stack_drift_status }, d.stack_drift_status),
      d.last_check ? el("span", { class: "muted" }, ` · checked ${d.last_check}`) : ""),
    table(["Logical ID", "Type", "Drift", "Checked"], d.resources.map((r) =>
      el("tr", { "data-logical-id": r.logical_id, "data-drift": r.status },
        el("td", {}, r.logical_id), el("td", {}, r.type),
        el("td", { class: `drift drift-${r.status.toLowerCase()}` }, r.status, r.reason ? el("span", { class: "muted" }, ` ${r.reason}`) : ""),
        el("td", {}, r.timestamp))), { id: "drift-table" }),
    d.resources.filter((r) => r.differences.length).map((r) => el("div", { class: "drift-diff", "data-logical-id": r.logical_id },
      el("h3", {}, `${r.logical_id}: ${r.status}`),
      table(["Property", "Expected", "Actual", "Difference"], r.differences.map((x) =>
        el("tr", { "data-path": x.path, "data-difference": x.type },
          el("td", {}, x.path), el("td", { class: "value expected" }, x.expected),
          el("td", { class: "value actual" }, x.actual), el("td", {}, x.type)))))));
}

function changeSets(list) {
  if (!list.length) return el("p", { class: "empty" }, "No change sets.");
  return el("div", {}, list.map((c) => el("div", { class: "changeset", "data-change-set": c.name },
    el("h3", {}, c.name, " ", badge(c.status), " ", el("span", { class: "muted" }, c.execution_status)),
    c.status_reason ? el("p", { class: "reason" }, c.status_reason) : "",
    table(["Action", "Logical ID", "Type", "Replacement"], c.changes.map((x) =>
      el("tr", {}, el("td", {}, x.action), el("td", {}, x.logical_id), el("td", {}, x.type), el("td", {}, x.replacement || "")))))));
}

function templateView(t) {
  const pre = el("pre", { class: "template", id: "template-text" });
  const show = (which) => {
    pre.replaceChildren(highlight(t[which]));
    for (const b of buttons.children) b.classList.toggle("active", b.dataset.which === which);
  };
  const buttons = el("div", { class: "tabs" },
    ["original", "processed"].map((w) => el("button", { type: "button", "data-which": w, onclick: () => show(w) }, w)));
  const wrap = el("div", {}, buttons, pre);
  show("original");
  return wrap;
}

export async function render({ subject, content }) {
  const name = subject;
  const parts = {
    overview: el("div", { id: "overview" }),
    parameters: el("div", { id: "parameters" }),
    outputs: el("div", { id: "outputs" }),
    tags: el("div", { id: "tags" }),
    timeline: el("div", { id: "timeline" }),
    resources: el("div", { id: "resources" }),
    graph: el("div", { id: "graph" }),
    template: el("div", { id: "template" }),
    changesets: el("div", { id: "changesets" }),
    drift: el("div", { id: "drift" }),
  };
  content.replaceChildren(
    section("Overview", parts.overview),
    el("div", { class: "columns" },
      section("Parameters", parts.parameters), section("Outputs", parts.outputs), section("Tags", parts.tags)),
    section("Events", parts.timeline),
    section("Resources", parts.resources),
    section("Drift", parts.drift),
    section("Graph", parts.graph),
    section("Template", parts.template),
    section("Change sets", parts.changesets));
  const q = encodeURIComponent(name);
  async function refresh() {
    let s;
    try {
      s = await api(`/stacks/${q}`);
      document.getElementById("title").textContent = s.name;
      document.title = `${s.name} · cumulo console`;
      parts.overview.replaceChildren(overview(s));
      parts.parameters.replaceChildren(kv(s.parameters, "No parameters."));
      parts.outputs.replaceChildren(s.outputs.length
        ? table(["Key", "Value", "Description", "Export"], s.outputs.map((o) =>
          el("tr", {}, el("td", {}, o.key), el("td", { class: "value" }, o.value), el("td", {}, o.description || ""), el("td", {}, o.export_name || ""))))
        : el("p", { class: "empty" }, "No outputs."));
      parts.tags.replaceChildren(kv(s.tags, "No tags."));
    } catch (e) { fail(parts.overview, e); return false; }
    const [events, res, g, cs, d] = await Promise.allSettled([
      api(`/stacks/${q}/events`), api(`/stacks/${q}/resources`), api(`/stacks/${q}/graph`), api(`/stacks/${q}/changesets`),
      api(`/stacks/${q}/drift`)]);
    if (events.status === "fulfilled") parts.timeline.replaceChildren(timeline(events.value.events)); else fail(parts.timeline, events.reason);
    if (res.status === "fulfilled") parts.resources.replaceChildren(resources(res.value.resources, s.drift_status !== "NOT_CHECKED")); else fail(parts.resources, res.reason);
    if (d.status === "fulfilled") parts.drift.replaceChildren(drift(d.value)); else fail(parts.drift, d.reason);
    if (g.status === "fulfilled") parts.graph.replaceChildren(graph(g.value)); else fail(parts.graph, g.reason);
    if (cs.status === "fulfilled") parts.changesets.replaceChildren(changeSets(cs.value.change_sets)); else fail(parts.changesets, cs.reason);
    return true;
  }
  if (!(await refresh())) return;
  api(`/stacks/${q}/template`).then((t) => parts.template.replaceChildren(templateView(t)), (e) => fail(parts.template, e));
  let first = true;
  // Only this stack's progress: the stack tree is the list page's.
  live({ stack: name, stacks: "false" }, { stack: () => { if (first) { first = false; return; } refresh(); } });
}
