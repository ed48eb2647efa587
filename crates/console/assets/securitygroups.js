// EC2 security groups: the groups (of one VPC with `?vpc=`), and one group with its inbound
// and outbound rules (their sgr- ids; a source or destination is a CIDR, a referenced group,
// linked, or a prefix list) and the groups whose rules reference it.
import { api, el, fail, link, table } from "./app.js";
import { pairs, view } from "./views.js";

const nameOf = (g) => ((g.Tags || []).find((t) => t.Key === "Name") || {}).Value || "";
const protocol = (p) => (p === "-1" ? "All" : p.toUpperCase());
const ports = (r) => (r.IpProtocol === "-1" || r.FromPort === -1 ? "All" : r.FromPort === r.ToPort ? String(r.FromPort) : `${r.FromPort}-${r.ToPort}`);

/** A link to a group's page. */
export const groupLink = (id) => view(`ec2/securitygroups/${encodeURIComponent(id)}`, id);

function peer(r) {
  if (r.ReferencedGroupInfo) return el("span", { class: "peer-group" }, groupLink(r.ReferencedGroupInfo.GroupId));
  if (r.PrefixListId) return el("span", { class: "peer-prefix-list" }, r.PrefixListId);
  return r.CidrIpv4 || r.CidrIpv6 || "";
}

function rules(list, id) {
  if (!list.length) return el("p", { class: "empty", id }, "No rules.");
  return table(["Rule ID", "Protocol", "Ports", list[0].IsEgress ? "Destination" : "Source", "Description"], list.map((r) =>
    el("tr", { "data-rule-id": r.SecurityGroupRuleId },
      el("td", {}, r.SecurityGroupRuleId), el("td", {}, protocol(r.IpProtocol)), el("td", {}, ports(r)),
      el("td", { class: "value" }, peer(r)), el("td", {}, r.Description || ""))), { id });
}

/** The groups as a table (the VPC page shows its own with this). */
export function groupsTable(groups) {
  return groups.length
    ? table(["Group ID", "Name", "VPC", "Description", "Inbound", "Outbound"], groups.map((g) => el("tr", { "data-group-id": g.GroupId },
      el("td", {}, groupLink(g.GroupId)), el("td", {}, g.GroupName), el("td", {}, view(`ec2/${encodeURIComponent(g.VpcId)}`, g.VpcId)),
      el("td", {}, g.Description || ""),
      el("td", { class: "num" }, String(g.SecurityGroupRules.filter((r) => !r.IsEgress).length)),
      el("td", { class: "num" }, String(g.SecurityGroupRules.filter((r) => r.IsEgress).length)))), { id: "security-groups-table" })
    : el("p", { class: "empty" }, "No security groups.");
}

async function groups(content) {
  const vpc = new URLSearchParams(location.search).get("vpc");
  const { security_groups } = await api(`/ec2/securitygroups${vpc ? `?vpc=${encodeURIComponent(vpc)}` : ""}`);
  if (vpc) document.getElementById("title").textContent = `Security groups of ${vpc}`;
  content.replaceChildren(groupsTable(security_groups));
}

async function group(id, content) {
  const { security_group: g, referenced_by } = await api(`/ec2/securitygroups/${encodeURIComponent(id)}`);
  document.getElementById("title").textContent = `${g.GroupId} · ${g.GroupName}`;
  content.replaceChildren(
    el("p", { class: "muted" }, g.Description || "", " · VPC ", view(`ec2/${encodeURIComponent(g.VpcId)}`, g.VpcId),
      nameOf(g) ? ` · ${nameOf(g)}` : ""),
    el("h2", {}, "Inbound rules"), rules(g.SecurityGroupRules.filter((r) => !r.IsEgress), "ingress-table"),
    el("h2", {}, "Outbound rules"), rules(g.SecurityGroupRules.filter((r) => r.IsEgress), "egress-table"),
    el("h2", {}, "Referenced by"),
    referenced_by.length
      ? el("ul", { id: "referenced-by" }, referenced_by.map((r) => el("li", {}, groupLink(r))))
      : el("p", { class: "empty", id: "referenced-by" }, "No other group's rules reference it."),
    el("h2", {}, "Tags"), pairs(g.Tags, "tags-table"));
}

export async function render({ subject, content }) {
  try {
    if (subject) await group(subject, content); else await groups(content);
  } catch (e) { fail(content, e); }
}
