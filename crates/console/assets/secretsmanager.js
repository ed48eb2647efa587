// Secrets Manager: the secrets and one secret's description, versions and tags. The value is
// never part of a page until "Reveal" asks the API for it (GetSecretValue, CSRF-checked).
import { api, el, fail, link, table } from "./app.js";
import { hidden, pairs } from "./views.js";

async function secrets(content) {
  const { secrets } = await api("/secretsmanager/secrets");
  content.replaceChildren(secrets.length
    ? table(["Name", "Description", "Last changed", "ARN"], secrets.map((s) => el("tr", { "data-secret": s.name },
      el("td", {}, el("a", { href: link(`/_cumulo/console/secretsmanager/${encodeURIComponent(s.arn)}`) }, s.name),
        s.deleted ? el("span", { class: "muted" }, ` (deletion scheduled ${s.deleted})`) : ""),
      el("td", {}, s.description || ""), el("td", {}, s.last_changed || ""), el("td", { class: "value" }, s.arn))), { id: "secrets-table" })
    : el("p", { class: "empty" }, "No secrets."));
}

async function secret(id, content) {
  const p = `/secretsmanager/secrets/${encodeURIComponent(id)}`;
  const s = await api(p);
  document.getElementById("title").textContent = s.name;
  content.replaceChildren(
    el("dl", { class: "overview", id: "secret-overview" },
      el("dt", {}, "ARN"), el("dd", {}, s.arn),
      el("dt", {}, "Value"), el("dd", { id: "secret-value" }, hidden(`${p}/reveal`, (r) => r.secret_string ?? `(binary, base64) ${r.secret_binary}`, "secret-string")),
      el("dt", {}, "Description"), el("dd", {}, s.description || ""),
      el("dt", {}, "KMS key"), el("dd", {}, s.kms_key_id || "aws/secretsmanager"),
      el("dt", {}, "Created"), el("dd", {}, s.created || ""),
      el("dt", {}, "Last changed"), el("dd", {}, s.last_changed || ""),
      el("dt", {}, "Last accessed"), el("dd", {}, s.last_accessed || "")),
    el("h2", {}, "Versions"),
    table(["Version ID", "Stages", "Created"], s.versions.map((v) => el("tr", {},
      el("td", { class: "value" }, v.version_id), el("td", {}, v.stages.join(", ")), el("td", {}, v.created || ""))), { id: "versions-table" }),
    el("h2", {}, "Tags"), pairs(s.tags, "tags-table"),
    s.policy ? el("div", {}, el("h2", {}, "Resource policy"), el("pre", { class: "json" }, s.policy)) : "");
}

export async function render({ subject, content }) {
  try {
    if (subject) await secret(subject, content); else await secrets(content);
  } catch (e) { fail(content, e); }
}
