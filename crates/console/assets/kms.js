// KMS: the keys with their aliases, and a key's metadata (DescribeKey), policy and tags.
import { api, el, fail, link, table } from "./app.js";
import { json, pairs } from "./views.js";

async function keys(content) {
  const { keys } = await api("/kms/keys");
  content.replaceChildren(keys.length
    ? table(["Key ID", "Aliases", "State", "Manager", "Description"], keys.map((k) => el("tr", { "data-key-id": k.key_id },
      el("td", {}, el("a", { href: link(`/_cumulo/console/kms/${encodeURIComponent(k.key_id)}`) }, k.key_id)),
      el("td", {}, k.aliases.join(", ")), el("td", {}, k.key_state), el("td", {}, k.key_manager), el("td", {}, k.description || ""))), { id: "keys-table" })
    : el("p", { class: "empty" }, "No keys."));
}

async function key(id, content) {
  const k = await api(`/kms/keys/${encodeURIComponent(id)}`);
  content.replaceChildren(
    el("p", { class: "muted" }, k.metadata.Arn),
    el("p", {}, `Aliases: ${k.aliases.join(", ") || "none"} · rotation ${k.rotation_enabled ? "enabled" : "disabled"}`),
    el("h2", {}, "Metadata"), pairs(k.metadata, "metadata-table"),
    el("h2", {}, "Key policy"), json(k.policy, "key-policy"),
    el("h2", {}, "Tags"), pairs(k.tags, "tags-table"));
}

export async function render({ subject, content }) {
  try {
    if (subject) await key(subject, content); else await keys(content);
  } catch (e) { fail(content, e); }
}
