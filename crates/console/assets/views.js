// Pieces the service views share: a name/value table, a JSON block, a hidden value with its
// explicit reveal button, and links between views.
import { api, el, link } from "./app.js";

/** A two-column table of an object's (or a `[{key, value}]` list's) entries. */
export function pairs(obj, id) {
  const entries = Array.isArray(obj) ? obj.map((t) => [t.key ?? t.Key, t.value ?? t.Value]) : Object.entries(obj || {});
  if (!entries.length) return el("p", { class: "empty", id }, "None.");
  return el("table", { id },
    el("thead", {}, el("tr", {}, el("th", {}, "Name"), el("th", {}, "Value"))),
    el("tbody", {}, entries.map(([k, v]) => el("tr", { "data-key": k },
      el("td", {}, k), el("td", { class: "value" }, typeof v === "string" ? v : JSON.stringify(v))))));
}

/** Pretty JSON as text. */
export const json = (v, id) => el("pre", { class: "json", id }, JSON.stringify(v, null, 2));

/** A hidden value: "****" until the button asks the API (`POST path`) for it. */
export function hidden(path, pick, id) {
  const out = el("span", { class: "value secret", id }, "****");
  const button = el("button", { type: "button", class: "reveal", id: id && `${id}-reveal`, onclick: async () => {
    try {
      const r = await api(path, { method: "POST" });
      out.textContent = pick(r);
      out.classList.add("revealed");
      button.remove();
    } catch (e) { out.textContent = e.message; out.classList.add("error"); }
  } }, "Reveal");
  return el("span", {}, out, " ", button);
}

/** A link to another console view. */
export const view = (path, text) => el("a", { href: link(`/_cumulo/console/${path}`) }, text);
