// Lambda: the functions, and a function's configuration (GetFunctionConfiguration), tags, a
// link to its log group, and invoke with a JSON payload (runs it: a CSRF-checked POST).
import { api, el, fail, link, table } from "./app.js";
import { json, pairs, view } from "./views.js";

async function functions(content) {
  const { functions } = await api("/lambda/functions");
  content.replaceChildren(functions.length
    ? table(["Function", "Runtime", "Handler", "State", "Memory", "Timeout", "Last modified"], functions.map((f) => el("tr", { "data-function": f.name },
      el("td", {}, el("a", { href: link(`/_cumulo/console/lambda/${encodeURIComponent(f.name)}`) }, f.name)),
      el("td", {}, f.runtime || f.package_type || ""), el("td", {}, f.handler || ""), el("td", {}, f.state || ""),
      el("td", { class: "num" }, String(f.memory_size)), el("td", { class: "num" }, String(f.timeout)), el("td", {}, f.last_modified || ""))), { id: "functions-table" })
    : el("p", { class: "empty" }, "No functions."));
}

async function fn(name, content) {
  const p = `/lambda/functions/${encodeURIComponent(name)}`;
  const f = await api(p);
  const c = f.configuration;
  const payload = el("textarea", { id: "invoke-payload", rows: 5 }, "{}");
  const result = el("div", { id: "invoke-result" });
  const form = el("form", { id: "invoke-form", onsubmit: async (ev) => {
    ev.preventDefault();
    result.replaceChildren(el("p", { class: "muted" }, "Invoking…"));
    try {
      const r = await api(`${p}/invoke`, { method: "POST", body: payload.value, headers: { "Content-Type": "application/json" } });
      result.replaceChildren(
        el("p", { id: "invoke-status", class: r.function_error ? "error" : "st-ok" },
          r.function_error ? `Function error (${r.function_error})` : `Succeeded (version ${r.executed_version})`),
        el("h3", {}, "Response"), el("pre", { class: "json", id: "invoke-response" }, r.payload_json !== null && r.payload_json !== undefined ? JSON.stringify(r.payload_json, null, 2) : r.payload || ""),
        el("h3", {}, "Log tail"), el("pre", { class: "log", id: "invoke-log" }, r.log_tail || ""));
    } catch (e) { fail(result, e); }
  } }, payload, el("button", { type: "submit", id: "invoke-button" }, "Invoke"));
  content.replaceChildren(
    el("dl", { class: "overview", id: "function-overview" },
      el("dt", {}, "ARN"), el("dd", {}, c.FunctionArn),
      el("dt", {}, "Runtime"), el("dd", {}, c.Runtime || c.PackageType || ""),
      el("dt", {}, "Handler"), el("dd", {}, c.Handler || ""),
      el("dt", {}, "Role"), el("dd", {}, c.Role || ""),
      el("dt", {}, "State"), el("dd", {}, `${c.State || ""} ${c.StateReason || ""}`),
      el("dt", {}, "Memory / timeout"), el("dd", {}, `${c.MemorySize} MB / ${c.Timeout} s`),
      el("dt", {}, "Logs"), el("dd", {}, view(`logs/${encodeURIComponent(f.log_group)}`, f.log_group))),
    el("h2", {}, "Invoke"),
    el("p", { class: "muted" }, "Runs the function with this event (a RequestResponse invocation)."),
    form, result,
    el("h2", {}, "Recent invocations"),
    f.recent_invocations.length
      ? table(["Time", "Request ID", "Report"], f.recent_invocations.map((r) => el("tr", { "data-request-id": r.request_id },
        el("td", {}, r.time || ""), el("td", { class: "value" }, view(`logs/${encodeURIComponent(f.log_group)}?stream=${encodeURIComponent(r.stream)}`, r.request_id)),
        el("td", { class: "value" }, r.report))), { id: "invocations-table" })
      : el("p", { class: "empty", id: "invocations-table" }, "No invocations logged yet."),
    el("h2", {}, "Environment"), pairs((c.Environment || {}).Variables || {}, "environment-table"),
    el("h2", {}, "Tags"), pairs(f.tags, "tags-table"),
    el("h2", {}, "Configuration"), json(c, "function-configuration"));
}

export async function render({ subject, content }) {
  try {
    if (subject) await fn(subject, content); else await functions(content);
  } catch (e) { fail(content, e); }
}
