// Elastic Load Balancing: the load balancers (v2 and classic), one v2 balancer with its
// listeners and their rules (conditions and actions) and its target groups with their targets'
// health, and one classic balancer with its listeners, health check and instances' health.
import { api, el, fail, link, table } from "./app.js";
import { json, pairs } from "./views.js";
import { groupLink } from "./securitygroups.js";

const groupLinks = (ids, id) => el("p", { id }, "Security groups: ", (ids || []).length ? ids.flatMap((g, i) => [i ? ", " : "", groupLink(g)]) : "none");

async function balancers(content) {
  const [{ load_balancers }, classic] = await Promise.all([api("/elb/loadbalancers"), api("/elb/classic")]);
  content.replaceChildren(el("h2", {}, "Application and network load balancers"), load_balancers.length
    ? table(["Load balancer", "Type", "Scheme", "State", "DNS name", "VPC"], load_balancers.map((b) => el("tr", { "data-load-balancer": b.LoadBalancerName },
      el("td", {}, el("a", { href: link(`/_cumulo/console/elb/${encodeURIComponent(b.LoadBalancerArn)}`) }, b.LoadBalancerName)),
      el("td", {}, b.Type || ""), el("td", {}, b.Scheme || ""), el("td", {}, (b.State || {}).Code || ""),
      el("td", { class: "value" }, b.DNSName || ""), el("td", {}, b.VpcId || ""))), { id: "load-balancers-table" })
    : el("p", { class: "empty" }, "No load balancers."),
  el("h2", {}, "Classic load balancers"), classic.load_balancers.length
    ? table(["Load balancer", "Scheme", "DNS name", "VPC", "Listeners", "Instances"], classic.load_balancers.map((b) => el("tr", { "data-load-balancer": b.LoadBalancerName },
      el("td", {}, el("a", { href: link(`/_cumulo/console/elb/classic/${encodeURIComponent(b.LoadBalancerName)}`) }, b.LoadBalancerName)),
      el("td", {}, b.Scheme || ""), el("td", { class: "value" }, b.DNSName || ""), el("td", {}, b.VPCId || ""),
      el("td", { class: "num" }, String((b.ListenerDescriptions || []).length)), el("td", { class: "num" }, String((b.Instances || []).length)))),
    { id: "classic-load-balancers-table" })
    : el("p", { class: "empty", id: "classic-load-balancers-table" }, "No classic load balancers."));
}

async function classicBalancer(name, content) {
  const d = await api(`/elb/classic/${encodeURIComponent(name)}`);
  const b = d.load_balancer;
  content.replaceChildren(
    el("p", { class: "muted" }, `classic · ${b.Scheme} · ${b.DNSName} · ${b.VPCId || ""}`),
    groupLinks(b.SecurityGroups, "security-groups"),
    el("h2", {}, "Listeners"),
    (b.ListenerDescriptions || []).length
      ? table(["Load balancer", "Instance", "Certificate", "Policies"], b.ListenerDescriptions.map(({ Listener: l, PolicyNames }) =>
        el("tr", { "data-listener": `${l.Protocol}:${l.LoadBalancerPort}` },
          el("td", {}, `${l.Protocol} :${l.LoadBalancerPort}`), el("td", {}, `${l.InstanceProtocol || l.Protocol} :${l.InstancePort}`),
          el("td", { class: "value" }, l.SSLCertificateId || ""), el("td", {}, (PolicyNames || []).join(", ")))), { id: "classic-listeners-table" })
      : el("p", { class: "empty" }, "No listeners."),
    el("h2", {}, "Health check"), pairs(b.HealthCheck, "health-check"),
    el("h2", {}, "Instances"),
    (d.instance_health || []).length
      ? table(["Instance", "State", "Reason", "Description"], d.instance_health.map((i) => el("tr", { "data-instance": i.InstanceId },
        el("td", {}, i.InstanceId), el("td", { class: i.State === "InService" ? "st-ok" : "st-failed" }, i.State),
        el("td", {}, i.ReasonCode || ""), el("td", {}, i.Description || ""))), { id: "instances-table" })
      : el("p", { class: "empty", id: "instances-table" }, "No instances."),
    el("h2", {}, "Subnets and zones"),
    pairs({ Subnets: (b.Subnets || []).join(", "), AvailabilityZones: (b.AvailabilityZones || []).join(", ") }, "placement"),
    el("h2", {}, "Attributes"), json(d.attributes, "attributes"));
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
    groupLinks(b.SecurityGroups, "security-groups"),
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
    if (subject.startsWith("classic/")) await classicBalancer(subject.slice(8), content);
    else if (subject) await balancer(subject, content); else await balancers(content);
  } catch (e) { fail(content, e); }
}
