// S3: the buckets, and a bucket's objects a page at a time (folders by "/"), with download and
// upload (through the API, which calls S3's own PutObject).
import { api, el, fail, link, region, table } from "./app.js";

const API = "/_cumulo/api/v1";

async function buckets(content) {
  const { buckets } = await api("/s3/buckets");
  content.replaceChildren(buckets.length
    ? table(["Bucket", "Region", "Created"], buckets.map((b) => el("tr", { "data-bucket": b.name },
      el("td", {}, el("a", { href: link(`/_cumulo/console/s3/${encodeURIComponent(b.name)}`) }, b.name)),
      el("td", {}, b.region), el("td", {}, b.creation_time || ""))), { id: "buckets-table" })
    : el("p", { class: "empty" }, "No buckets."));
}

function objectUrl(bucket, key) {
  return `${API}/s3/buckets/${encodeURIComponent(bucket)}/objects/${key.split("/").map(encodeURIComponent).join("/")}`;
}

async function objects(bucket, content) {
  const params = new URLSearchParams(location.search);
  const prefix = params.get("prefix") || "";
  const marker = params.get("marker") || "";
  const qs = new URLSearchParams({ delimiter: "/", prefix, "max-keys": "100" });
  if (marker) qs.set("marker", marker);
  const page = await api(`/s3/buckets/${encodeURIComponent(bucket)}/objects?${qs}`);
  const go = (p) => {
    const u = new URL(location.href);
    for (const [k, v] of Object.entries(p)) { if (v) u.searchParams.set(k, v); else u.searchParams.delete(k); }
    return u.pathname + u.search;
  };
  const rows = [
    ...page.common_prefixes.map((p) => el("tr", { class: "folder" },
      el("td", {}, el("a", { href: go({ prefix: p, marker: "" }) }, p.slice(prefix.length))), el("td", {}, ""), el("td", {}, ""), el("td", {}, ""))),
    ...page.objects.map((o) => el("tr", { "data-key": o.key },
      el("td", {}, el("a", { href: objectUrl(bucket, o.key), download: o.key.split("/").pop() }, o.key.slice(prefix.length))),
      el("td", { class: "num" }, String(o.size)), el("td", {}, o.last_modified || ""), el("td", {}, o.etag))),
  ];
  const status = el("p", { id: "upload-status", role: "status" });
  const file = el("input", { type: "file", id: "upload-file" });
  const upload = el("form", { class: "upload", onsubmit: async (ev) => {
    ev.preventDefault();
    const f = file.files[0];
    if (!f) return;
    const r = await fetch(objectUrl(bucket, prefix + f.name) + (region() ? `?region=${region()}` : ""), {
      method: "PUT", body: f, headers: { "X-Cumulo-Console": "1", "Content-Type": f.type || "application/octet-stream" },
    });
    const body = await r.json().catch(() => ({}));
    status.textContent = r.ok ? `Uploaded ${body.key} (${body.size} bytes)` : `Upload refused: ${body.error ? body.error.message : r.status}`;
    status.className = r.ok ? "st-ok" : "error";
    if (r.ok) setTimeout(() => location.reload(), 400);
  } }, file, el("button", { type: "submit" }, "Upload"));
  content.replaceChildren(
    prefix ? el("p", {}, el("a", { href: go({ prefix: prefix.replace(/[^/]*\/$/, ""), marker: "" }) }, "↑ up"), ` ${prefix}`) : "",
    rows.length ? table(["Key", "Size", "Last modified", "ETag"], rows, { id: "objects-table" }) : el("p", { class: "empty" }, "No objects."),
    page.is_truncated ? el("p", {}, el("a", { id: "next-page", href: go({ marker: page.next_marker }) }, "Next page →")) : "",
    el("h2", {}, "Upload"), upload, status);
}

export async function render({ subject, content }) {
  try {
    if (subject) await objects(subject, content); else await buckets(content);
  } catch (e) { fail(content, e); }
}
