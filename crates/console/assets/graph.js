// The resource graph as SVG: a layered drawing (a resource one column right of the deepest
// resource it depends on), edges from a resource to what it depends on labelled by how
// (DependsOn, Ref, GetAtt, Sub), nodes coloured by status, stubbed resources dashed and marked
// with their `cumulo:` reason, each node linking to its service view where the console has one.
import { el, link, statusClass, svg as s } from "./app.js";

const W = 190, H = 46, GAP_X = 70, GAP_Y = 22, PAD = 16;

/** `flow`: edges run left to right from `from` to `to` (a state machine's transitions) rather
 * than from a dependent back to its dependency; `legend` replaces the resource legend. */
export function graph({ nodes, edges }, { flow = false, legend: text = null } = {}) {
  if (!nodes.length) return el("p", { class: "empty" }, "No resources.");
  const columns = [];
  for (const n of nodes) (columns[n.level] ||= []).push(n);
  const pos = new Map();
  columns.forEach((col, x) => (col || []).forEach((n, y) => pos.set(n.id, {
    x: PAD + x * (W + GAP_X), y: PAD + y * (H + GAP_Y),
  })));
  const width = PAD * 2 + columns.length * (W + GAP_X) - GAP_X;
  const height = PAD * 2 + Math.max(...columns.map((c) => (c || []).length)) * (H + GAP_Y) - GAP_Y;
  const drawing = s("svg", { id: "resource-graph", class: "graph", width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "Resource graph" },
    s("defs", {}, s("marker", { id: "arrow", viewBox: "0 0 10 10", refX: "10", refY: "5", markerWidth: "7", markerHeight: "7", orient: "auto-start-reverse" },
      s("path", { d: "M 0 0 L 10 5 L 0 10 z", class: "arrowhead" }))));
  for (const e of edges) {
    const a = pos.get(e.from), b = pos.get(e.to);
    if (!a || !b) continue;
    // From the dependent's left side to the dependency's right side.
    const [x1, x2] = flow ? [a.x + W, b.x] : [a.x, b.x + W];
    const y1 = a.y + H / 2, y2 = b.y + H / 2;
    const mx = (x1 + x2) / 2;
    drawing.append(s("g", { class: "edge", "data-from": e.from, "data-to": e.to, "data-kinds": e.kinds.join(" ") },
      s("path", { d: `M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2} ${y2}`, "marker-end": "url(#arrow)" }),
      s("title", {}, `${e.from} → ${e.to} (${e.kinds.join(", ")})`)));
  }
  for (const n of nodes) {
    const p = pos.get(n.id);
    const g = s("g", { class: `node ${statusClass(n.status)}${n.stubbed ? " stubbed" : ""}`, "data-logical-id": n.id, "data-status": n.status || "", transform: `translate(${p.x},${p.y})` },
      s("title", {}, [n.id, n.type, n.status || "not created", n.status_reason || ""].filter(Boolean).join("\n")),
      s("rect", { width: W, height: H, rx: 6 }),
      s("text", { x: 10, y: 19, class: "node-id" }, n.id.length > 24 ? `${n.id.slice(0, 23)}…` : n.id),
      s("text", { x: 10, y: 36, class: "node-type" }, (n.stubbed ? "stub · " : "") + n.type.replace(/^AWS::/, "")));
    if (n.view) {
      const a = s("a", { href: link(n.view) });
      a.append(g);
      drawing.append(a);
    } else drawing.append(g);
  }
  const legend = text ? el("p", { class: "legend" }, text) : el("p", { class: "legend" }, "Arrows point from a resource to what it depends on. ",
    el("span", { class: "stub-mark" }, "Dashed"), ": stubbed or inert (cumulo: reason in the tooltip).");
  return el("div", { class: "graph-wrap" }, drawing, legend);
}
