// Elastic Load Balancing: the load balancers, and one with its listeners and their rules
// (conditions and actions) and its target groups with their targets' health.
import { api, el, fail, link, table } from "./app.js";

async function balancers(content) {
  const { load_balancers } = await api("/elb/loadbalancers");
  content.replaceChildren(load_balancers.length
    ? table(["Load balancer", "Type", "Scheme", "State", "DNS name", "VPC"], load_balancers.map((b) => el("tr", { "data-load-balancer": b.LoadBalancerName },
      el("td", {}, el("a", { href: link(`/_cumulo/console/elb/${encodeURIComponent(b.LoadBalancerArn)}`) }, b.LoadBalancerName)),
      el("td", {}, b.Type || ""), el("td", {}, b.Scheme || ""), el("td", {}, (b.State || {}).Code || ""),
      el("td", { class: "value" }, b.DNSName || ""), el("td", {}, b.VpcId || ""))), { id: "load-balancers-table" })
    : el("p", { class: "empty" }, "No load balancers."));
}

const conditions = (r) => (r.Conditions || []).map((c) => {
  const values = c.Values || (c.PathPatternConfig || c.HostHeaderConfig || {}).Values || [];
  return `${c.Field} ${values.join(" | ")}`;
}).join("; ") || "(default)";

const actions = (r) => (r.Actions || r.DefaultActions || []).map((a) => {
  if (a.Type === "forward") return `forward → ${(a.TargetGroupArn || "").split("/").slice(-2, -1)[0] || ((a.ForwardConfig || {}).TargetGroups || []).map((t) => t.TargetGroupArn.split("/").slice(-2, -1)[0]).join(", ")}`;
  if (a.Type === "fixed-response") return `fixed-response ${(a.FixedResponseConfig || {}).StatusCode || ""}`;
  if (a.Type === "redirect") return `redirect ${JSON.stringify(a.RedirectConfig || {})}`;
  return a.Type;
}).join("; ");

async function balancer(id, content) {
  const d = await api(`/elb/loadbalancers/${encodeURIComponent(id)}`);
  const b = d.load_balancer;
  document.getElementById("title").textContent = b.LoadBalancerName;
  content.replaceChildren(
    el("p", { class: "muted" }, `${b.Type} · ${b.Scheme} · ${b.DNSName} · ${b.VpcId || ""}`),
    el("h2", {}, "Listeners"),
    d.listeners.length
      ? el("div", { id: "listeners" }, d.listeners.map((l) => el("section", { "data-listener": `${l.Protocol}:${l.Port}` },
        el("h3", {}, `${l.Protocol} :${l.Port}`),
        table(["Priority", "Conditions", "Actions"], (l.Rules || []).map((r) => el("tr", { "data-priority": r.Priority },
          el("td", {}, r.Priority), el("td", { class: "value" }, conditions(r)), el("td", { class: "value" }, actions(r))))))))
      : el("p", { class: "empty" }, "No listeners."),
    el("h2", {}, "Target groups"),
    d.target_groups.length
      ? table(["Target group", "Protocol", "Port", "Target type", "Targets"], d.target_groups.map((g) => el("tr", { "data-target-group": g.TargetGroupName },
        el("td", {}, g.TargetGroupName), el("td", {}, g.Protocol || ""), el("td", { class: "num" }, g.Port === undefined ? "" : String(g.Port)),
        el("td", {}, g.TargetType || ""),
        el("td", { class: "value" }, (g.TargetHealthDescriptions || []).map((t) => `${t.Target.Id}:${t.Target.Port || ""} ${(t.TargetHealth || {}).State || ""}`).join(", ")))), { id: "target-groups-table" })
      : el("p", { class: "empty" }, "No target groups."));
}

export async function render({ subject, content }) {
  try {
    if (subject) await balancer(subject, content); else await balancers(content);
  } catch (e) { fail(content, e); }
}
