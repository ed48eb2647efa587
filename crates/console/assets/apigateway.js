// API Gateway: REST APIs (resources and their methods) and HTTP/WebSocket APIs (routes).
import { api, el, fail, link, table } from "./app.js";
import { json } from "./views.js";

async function apis(content) {
  const { rest_apis, apis } = await api("/apigateway/apis");
  const rows = [
    ...rest_apis.map((a) => ({ id: a.id, name: a.name, kind: "REST", created: a.createdDate })),
    ...apis.map((a) => ({ id: a.apiId, name: a.name, kind: a.protocolType, created: a.createdDate, endpoint: a.apiEndpoint })),
  ];
  content.replaceChildren(rows.length
    ? table(["API", "ID", "Protocol", "Endpoint"], rows.map((a) => el("tr", { "data-api": a.id },
      el("td", {}, el("a", { href: link(`/_cumulo/console/apigateway/${encodeURIComponent(a.id)}`) }, a.name)),
      el("td", { class: "value" }, a.id), el("td", {}, a.kind), el("td", { class: "value" }, a.endpoint || ""))), { id: "apis-table" })
    : el("p", { class: "empty" }, "No APIs."));
}

async function one(id, content) {
  const a = await api(`/apigateway/apis/${encodeURIComponent(id)}`);
  document.getElementById("title").textContent = a.api.name;
  const body = a.kind === "REST"
    ? table(["Path", "Methods"], a.resources.map((r) => el("tr", { "data-path": r.path },
      el("td", { class: "value" }, r.path), el("td", {}, Object.keys(r.resourceMethods || {}).join(", ")))), { id: "resources-table" })
    : table(["Route", "Target", "Authorization"], a.routes.map((r) => el("tr", { "data-route": r.routeKey },
      el("td", { class: "value" }, r.routeKey), el("td", { class: "value" }, r.target || ""), el("td", {}, r.authorizationType || ""))), { id: "routes-table" });
  content.replaceChildren(
    el("p", { class: "muted" }, `${a.kind} · ${id}${a.api.apiEndpoint ? ` · ${a.api.apiEndpoint}` : ""}`),
    el("h2", {}, a.kind === "REST" ? "Resources" : "Routes"), body,
    el("h2", {}, "API"), json(a.api, "api-description"));
}

export async function render({ subject, content }) {
  try {
    if (subject) await one(subject, content); else await apis(content);
  } catch (e) { fail(content, e); }
}
