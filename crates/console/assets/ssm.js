// SSM Parameter Store: the parameters and one parameter's versions and tags. A SecureString's
// value shows as **** until "Reveal" asks the API for it (a separate, CSRF-checked request).
import { el, fail, link, table, api } from "./app.js";
import { hidden, pairs } from "./views.js";

const path = (name) => `/ssm/parameters/${encodeURIComponent(name)}`;

async function parameters(content) {
  const { parameters } = await api("/ssm/parameters");
  content.replaceChildren(parameters.length
    ? table(["Name", "Type", "Value", "Version", "Last modified"], parameters.map((p) => el("tr", { "data-parameter": p.name },
      el("td", {}, el("a", { href: link(`/_cumulo/console/ssm/${encodeURIComponent(p.name)}`) }, p.name)),
      el("td", {}, p.type), el("td", { class: "value" }, p.hidden ? hidden(`${path(p.name)}/reveal`, (r) => r.value) : p.value),
      el("td", { class: "num" }, String(p.version)), el("td", {}, p.last_modified || ""))), { id: "parameters-table" })
    : el("p", { class: "empty" }, "No parameters."));
}

async function parameter(name, content) {
  const p = await api(path(name));
  content.replaceChildren(
    el("dl", { class: "overview", id: "parameter-overview" },
      el("dt", {}, "ARN"), el("dd", {}, p.arn),
      el("dt", {}, "Type"), el("dd", {}, p.type),
      el("dt", {}, "Value"), el("dd", { id: "parameter-value" }, p.hidden ? hidden(`${path(name)}/reveal`, (r) => r.value, "secure-value") : p.value),
      el("dt", {}, "Version"), el("dd", {}, String(p.version)),
      el("dt", {}, "Tier"), el("dd", {}, p.tier),
      el("dt", {}, "Data type"), el("dd", {}, p.data_type),
      el("dt", {}, "Description"), el("dd", {}, p.description || ""),
      el("dt", {}, "Last modified"), el("dd", {}, p.last_modified || "")),
    el("h2", {}, "History"),
    table(["Version", "Type", "Labels", "Last modified"], p.versions.map((v) => el("tr", {},
      el("td", { class: "num" }, String(v.version)), el("td", {}, v.type), el("td", {}, v.labels.join(", ")), el("td", {}, v.last_modified || ""))), { id: "versions-table" }),
    el("h2", {}, "Tags"), pairs(p.tags, "tags-table"));
}

export async function render({ subject, content }) {
  try {
    if (subject) await parameter(subject, content); else await parameters(content);
  } catch (e) { fail(content, e); }
}
