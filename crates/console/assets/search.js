// Search results: stacks, stack resources, buckets and queues whose name, id or ARN holds the text.
import { api, el, fail, link, table } from "./app.js";

export async function render({ content }) {
  const q = new URLSearchParams(location.search).get("q") || "";
  if (!q.trim()) { content.replaceChildren(el("p", { class: "empty" }, "Type a name, id or ARN in the search box.")); return; }
  try {
    const { results } = await api(`/search?q=${encodeURIComponent(q)}`);
    content.replaceChildren(results.length
      ? table(["Kind", "Name", "ID / ARN", "Stack"], results.map((r) => el("tr", { "data-kind": r.kind },
        el("td", {}, r.kind), el("td", {}, el("a", { href: link(r.view) }, r.name)), el("td", { class: "value" }, r.id || ""), el("td", {}, r.stack || ""))), { id: "search-results" })
      : el("p", { class: "empty" }, `Nothing matches “${q}”.`));
  } catch (e) { fail(content, e); }
}
