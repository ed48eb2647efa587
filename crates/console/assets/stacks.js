// The stacks list: every stack with its status (text and colour), nested stacks under their
// parents, deleted ones on request; live through the page's event stream.
import { api, badge, el, fail, link, live, table } from "./app.js";

function rows(stacks, depth, out) {
  for (const s of stacks) {
    out.push(el("tr", { class: `stack depth-${Math.min(depth, 4)}`, "data-stack": s.name },
      el("td", {}, depth ? el("span", { class: "nest" }, "↳ ") : "",
        el("a", { href: link(`/_cumulo/console/stacks/${encodeURIComponent(s.id)}`) }, s.name)),
      el("td", {}, badge(s.status)),
      el("td", { class: "reason" }, s.status_reason || ""),
      el("td", {}, s.creation_time),
      el("td", {}, s.last_updated_time || "")));
    rows(s.nested || [], depth + 1, out);
  }
  return out;
}

export async function render({ content }) {
  const showDeleted = new URLSearchParams(location.search).get("deleted") === "true";
  const toggle = el("label", { class: "toggle" },
    el("input", { type: "checkbox", id: "show-deleted", checked: showDeleted, onchange: (e) => {
      const u = new URL(location.href);
      if (e.target.checked) u.searchParams.set("deleted", "true"); else u.searchParams.delete("deleted");
      location.href = u;
    } }), " show deleted stacks");
  const holder = el("div", { id: "stacks" });
  content.replaceChildren(toggle, holder);
  let drawn = "";
  const draw = (stacks) => {
    // The stream's first event repeats what the page just read: redraw only what changed.
    const shown = showDeleted ? stacks : stacks.filter((s) => s.status !== "DELETE_COMPLETE");
    const text = JSON.stringify(shown);
    if (text === drawn) return;
    drawn = text;
    holder.replaceChildren(shown.length
      ? table(["Stack", "Status", "Reason", "Created", "Updated"], rows(shown, 0, []), { id: "stacks-table" })
      : el("p", { class: "empty" }, "No stacks in this region."));
  };
  try {
    draw((await api(`/stacks${showDeleted ? "?deleted=true" : ""}`)).stacks);
  } catch (e) { fail(holder, e); return; }
  live({}, { stacks: draw });
}
