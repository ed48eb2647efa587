// Route 53: the hosted zones and a zone's record sets (as ListResourceRecordSets reports them).
import { api, el, fail, link, table } from "./app.js";
import { json } from "./views.js";

const bare = (id) => id.replace(/^\/hostedzone\//, "");

async function zones(content) {
  const { hosted_zones } = await api("/route53/zones");
  content.replaceChildren(hosted_zones.length
    ? table(["Zone", "ID", "Type", "Records"], hosted_zones.map((z) => el("tr", { "data-zone": bare(z.Id) },
      el("td", {}, el("a", { href: link(`/_cumulo/console/route53/${encodeURIComponent(bare(z.Id))}`) }, z.Name)),
      el("td", { class: "value" }, bare(z.Id)), el("td", {}, z.Config && z.Config.PrivateZone ? "Private" : "Public"),
      el("td", { class: "num" }, String(z.ResourceRecordSetCount)))), { id: "zones-table" })
    : el("p", { class: "empty" }, "No hosted zones."));
}

const values = (r) => r.AliasTarget
  ? `ALIAS ${r.AliasTarget.DNSName}`
  : (r.ResourceRecords || []).map((v) => v.Value).join("\n");

async function zone(id, content) {
  const z = await api(`/route53/zones/${encodeURIComponent(id)}`);
  document.getElementById("title").textContent = z.HostedZone.Name;
  content.replaceChildren(
    el("p", { class: "muted" }, `${bare(z.HostedZone.Id)} · ${z.HostedZone.Config && z.HostedZone.Config.PrivateZone ? "private" : "public"}`),
    el("h2", {}, "Records"),
    table(["Name", "Type", "TTL", "Value"], z.ResourceRecordSets.map((r) => el("tr", { "data-record": `${r.Name} ${r.Type}` },
      el("td", {}, r.Name), el("td", {}, r.Type), el("td", { class: "num" }, r.TTL === undefined ? "" : String(r.TTL)),
      el("td", { class: "value log" }, values(r)))), { id: "records-table" }),
    z.DelegationSet ? el("div", {}, el("h2", {}, "Name servers"), json(z.DelegationSet.NameServers)) : "",
    z.VPCs ? el("div", {}, el("h2", {}, "VPCs"), json(z.VPCs)) : "");
}

export async function render({ subject, content }) {
  try {
    if (subject) await zone(subject, content); else await zones(content);
  } catch (e) { fail(content, e); }
}
