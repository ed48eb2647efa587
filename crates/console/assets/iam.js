// IAM: the roles and the account's managed policies; a role's trust policy, inline and
// attached policies and tags; a managed policy's default version's document.
import { api, el, fail, link, table } from "./app.js";
import { json, pairs, view } from "./views.js";

async function lists(content) {
  const [{ roles }, { policies }] = await Promise.all([api("/iam/roles"), api("/iam/policies")]);
  content.replaceChildren(
    el("h2", {}, "Roles"),
    roles.length
      ? table(["Role", "Path", "Description", "Created"], roles.map((r) => el("tr", { "data-role": r.name },
        el("td", {}, el("a", { href: link(`/_cumulo/console/iam/roles/${encodeURIComponent(r.name)}`) }, r.name)),
        el("td", {}, r.path), el("td", {}, r.description || ""), el("td", {}, r.create_date))), { id: "roles-table" })
      : el("p", { class: "empty" }, "No roles."),
    el("h2", {}, "Customer managed policies"),
    policies.length
      ? table(["Policy", "Path", "Default version", "Attachments"], policies.map((p) => el("tr", { "data-policy": p.name },
        el("td", {}, el("a", { href: link(`/_cumulo/console/iam/policies/${encodeURIComponent(p.arn)}`) }, p.name)),
        el("td", {}, p.path), el("td", {}, p.default_version), el("td", { class: "num" }, String(p.attachment_count)))), { id: "policies-table" })
      : el("p", { class: "empty" }, "No customer managed policies."));
}

async function role(name, content) {
  const r = await api(`/iam/roles/${encodeURIComponent(name)}`);
  content.replaceChildren(
    el("p", { class: "muted" }, r.arn),
    el("h2", {}, "Trust policy"), json(r.assume_role_policy, "trust-policy"),
    el("h2", {}, "Attached policies"),
    r.attached_policies.length
      ? el("ul", { id: "attached-policies" }, r.attached_policies.map((a) => el("li", {}, view(`iam/policies/${encodeURIComponent(a)}`, a))))
      : el("p", { class: "empty" }, "None."),
    el("h2", {}, "Inline policies"),
    r.inline_policies.length
      ? el("div", { id: "inline-policies" }, r.inline_policies.map((p) => el("div", { "data-policy": p.name }, el("h3", {}, p.name), json(p.document))))
      : el("p", { class: "empty" }, "None."),
    el("h2", {}, "Tags"), pairs(r.tags, "tags-table"));
}

async function policy(arn, content) {
  const p = await api(`/iam/policies/${encodeURIComponent(arn)}`);
  document.getElementById("title").textContent = p.name;
  content.replaceChildren(
    el("p", { class: "muted" }, `${p.arn} · default version ${p.default_version} · ${p.attachment_count} attachments`),
    el("h2", {}, "Document"), json(p.document, "policy-document"),
    el("h2", {}, "Tags"), pairs(p.tags, "tags-table"));
}

export async function render({ subject, content }) {
  try {
    if (!subject) await lists(content);
    else if (location.pathname.includes("/iam/policies/")) await policy(subject, content);
    else await role(subject, content);
  } catch (e) { fail(content, e); }
}
