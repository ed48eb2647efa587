// The VPC map: the VPCs; a VPC's subnets by availability zone, each with the route table that
// serves it (its own association, or the VPC's main table) and where that table's routes go.
// A subnet whose table routes 0.0.0.0/0 to an internet gateway is marked public.
import { api, el, fail, link, table } from "./app.js";
import { pairs, view } from "./views.js";
import { groupsTable } from "./securitygroups.js";

const nameOf = (x) => ((x.Tags || []).find((t) => t.Key === "Name") || {}).Value || "";
const destination = (r) => r.DestinationCidrBlock || r.DestinationIpv6CidrBlock || r.DestinationPrefixListId;

async function vpcs(content) {
  const { Vpcs } = await api("/ec2/vpcs");
  content.replaceChildren(Vpcs.length
    ? table(["VPC", "Name", "CIDR", "Default", "Subnets", "Route tables"], Vpcs.map((v) => el("tr", { "data-vpc": v.VpcId },
      el("td", {}, el("a", { href: link(`/_cumulo/console/ec2/${encodeURIComponent(v.VpcId)}`) }, v.VpcId)),
      el("td", {}, nameOf(v)), el("td", { class: "value" }, v.CidrBlock), el("td", {}, v.IsDefault ? "yes" : ""),
      el("td", { class: "num" }, String(v.Subnets.length)), el("td", { class: "num" }, String(v.RouteTables.length)))), { id: "vpcs-table" })
    : el("p", { class: "empty" }, "No VPCs."));
}

async function vpc(id, content) {
  const [{ vpc: v }, { security_groups }] = await Promise.all([
    api(`/ec2/vpcs/${encodeURIComponent(id)}`), api(`/ec2/securitygroups?vpc=${encodeURIComponent(id)}`)]);
  const main = v.RouteTables.find((t) => t.Main);
  const tableOf = (subnet) => v.RouteTables.find((t) => t.Associations.some((a) => a.SubnetId === subnet)) || main;
  const zones = [...new Set(v.Subnets.map((s) => s.AvailabilityZone))].sort();
  const card = (s) => {
    const t = tableOf(s.SubnetId);
    const routes = t ? t.Routes : [];
    const open = routes.some((r) => destination(r) === "0.0.0.0/0" && (r.Target || "").startsWith("igw-"));
    return el("div", { class: `subnet${open ? " public" : ""}`, "data-subnet": s.SubnetId, "data-route-table": t ? t.RouteTableId : "" },
      el("h3", {}, `${s.SubnetId}${nameOf(s) ? ` · ${nameOf(s)}` : ""}`),
      el("div", { class: "value" }, `${s.CidrBlock} · ${open ? "public" : "private"}`),
      el("div", { class: "muted" }, t ? `${t.RouteTableId}${t === main && !t.Associations.some((a) => a.SubnetId === s.SubnetId) ? " (main)" : ""}` : "no route table"),
      el("ul", { class: "routes" }, routes.map((r) => el("li", {}, `${destination(r)} → ${r.Target}`))));
  };
  content.replaceChildren(
    el("p", { class: "muted" }, `${v.CidrBlock}${v.IsDefault ? " · default VPC" : ""}${nameOf(v) ? ` · ${nameOf(v)}` : ""}`),
    el("h2", {}, "Subnets by availability zone"),
    v.Subnets.length
      ? el("div", { id: "vpc-map" }, zones.map((z) => el("div", { "data-zone": z },
        el("h3", {}, z), el("div", { class: "vpc-map" }, v.Subnets.filter((s) => s.AvailabilityZone === z).map(card)))))
      : el("p", { class: "empty" }, "No subnets."),
    el("h2", {}, "Route tables"),
    table(["Route table", "Main", "Subnets", "Routes"], v.RouteTables.map((t) => el("tr", { "data-route-table": t.RouteTableId },
      el("td", {}, t.RouteTableId), el("td", {}, t.Main ? "yes" : ""),
      el("td", { class: "value" }, t.Associations.filter((a) => a.SubnetId).map((a) => a.SubnetId).join(", ")),
      el("td", { class: "value log" }, t.Routes.map((r) => `${destination(r)} → ${r.Target}`).join("\n")))), { id: "route-tables-table" }),
    el("h2", {}, "Security groups"), groupsTable(security_groups),
    el("p", {}, view(`ec2/securitygroups?vpc=${encodeURIComponent(v.VpcId)}`, "All security groups of this VPC")),
    el("h2", {}, "Tags"), pairs(v.Tags, "tags-table"));
}

export async function render({ subject, content }) {
  try {
    if (subject) await vpc(subject, content); else await vpcs(content);
  } catch (e) { fail(content, e); }
}
