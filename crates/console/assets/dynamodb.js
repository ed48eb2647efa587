// DynamoDB: the tables, and a table's description and items a page at a time: Scan, or Query
// with a key condition (expression, names and values as DynamoDB takes them).
import { api, el, fail, link, region, table } from "./app.js";
import { json, pairs } from "./views.js";

async function tables(content) {
  const { tables } = await api("/dynamodb/tables");
  content.replaceChildren(tables.length
    ? table(["Table", "Status", "Keys", "Items", "Billing"], tables.map((t) => el("tr", { "data-table": t.name },
      el("td", {}, el("a", { href: link(`/_cumulo/console/dynamodb/${encodeURIComponent(t.name)}`) }, t.name)),
      el("td", {}, t.status), el("td", {}, t.key_schema.map((k) => `${k.AttributeName} (${k.KeyType})`).join(", ")),
      el("td", { class: "num" }, String(t.item_count)), el("td", {}, t.billing_mode))), { id: "tables-table" })
    : el("p", { class: "empty" }, "No tables."));
}

/** An attribute value as text: `{"S": "x"}` is x, anything else its JSON. */
function cell(v) {
  if (v === undefined) return "";
  const [type, inner] = Object.entries(v)[0] || [];
  if (type === "S" || type === "N") return inner;
  if (type === "BOOL") return String(inner);
  if (type === "NULL") return "null";
  return JSON.stringify(v);
}

async function tablePage(name, content) {
  const t = await api(`/dynamodb/tables/${encodeURIComponent(name)}`);
  const params = new URLSearchParams(location.search);
  const form = el("form", { id: "items-form", class: "query" });
  const field = (id, label, placeholder) => el("label", {}, label, " ",
    el("input", { id, name: id, value: params.get(id) || "", placeholder, size: 40 }));
  form.append(field("key_condition", "Key condition", "pk = :pk (empty: Scan)"), " ",
    field("filter", "Filter", "attr > :v"), " ",
    field("values", "Values", '{":pk": {"S": "x"}}'), " ",
    field("names", "Names", '{"#n": "name"}'), " ",
    field("index", "Index", ""), " ",
    el("button", { type: "submit", id: "items-run" }, "Run"),
    region() ? el("input", { type: "hidden", name: "region", value: region() }) : "");
  const items = el("div", { id: "items" });
  content.replaceChildren(
    el("p", { class: "muted" }, t.table.TableArn),
    el("h2", {}, "Items"), form, items,
    el("h2", {}, "Tags"), pairs(t.tags, "tags-table"),
    el("h2", {}, "Description"), json(t.table, "table-description"));
  const qs = new URLSearchParams();
  for (const k of ["key_condition", "filter", "values", "names", "index", "start"]) if (params.get(k)) qs.set(k, params.get(k));
  qs.set("limit", "50");
  try {
    const page = await api(`/dynamodb/tables/${encodeURIComponent(name)}/items?${qs}`);
    const columns = [...new Set(page.items.flatMap((i) => Object.keys(i)))];
    const keys = t.table.KeySchema.map((k) => k.AttributeName);
    columns.sort((a, b) => (keys.includes(b) - keys.includes(a)) || (keys.indexOf(a) - keys.indexOf(b)) || a.localeCompare(b));
    const next = () => {
      const u = new URL(location.href);
      u.searchParams.set("start", JSON.stringify(page.last_evaluated_key));
      return u.pathname + u.search;
    };
    items.replaceChildren(
      el("p", { class: "muted", id: "items-count" }, `${page.operation}: ${page.count} items (${page.scanned_count} scanned)`),
      page.items.length
        ? table(columns, page.items.map((i) => el("tr", {}, columns.map((c) => el("td", { class: "value", "data-column": c }, cell(i[c]))))), { id: "items-table" })
        : el("p", { class: "empty" }, "No items."),
      page.last_evaluated_key ? el("p", {}, el("a", { id: "next-page", href: next() }, "Next page →")) : "");
  } catch (e) { fail(items, e); }
}

export async function render({ subject, content }) {
  try {
    if (subject) await tablePage(subject, content); else await tables(content);
  } catch (e) { fail(content, e); }
}
