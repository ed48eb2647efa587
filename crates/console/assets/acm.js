// ACM: the certificates and one certificate's description (DescribeCertificate).
import { api, el, fail, link, table } from "./app.js";
import { json } from "./views.js";

async function certificates(content) {
  const { certificates } = await api("/acm/certificates");
  content.replaceChildren(certificates.length
    ? table(["Domain", "Status", "Type", "Key", "ARN"], certificates.map((c) => el("tr", { "data-certificate": c.CertificateArn },
      el("td", {}, el("a", { href: link(`/_cumulo/console/acm/${encodeURIComponent(c.CertificateArn)}`) }, c.DomainName)),
      el("td", {}, c.Status || ""), el("td", {}, c.Type || ""), el("td", {}, c.KeyAlgorithm || ""), el("td", { class: "value" }, c.CertificateArn))), { id: "certificates-table" })
    : el("p", { class: "empty" }, "No certificates."));
}

async function certificate(arn, content) {
  const c = await api(`/acm/certificates/${encodeURIComponent(arn)}`);
  document.getElementById("title").textContent = c.DomainName;
  content.replaceChildren(
    el("p", {}, el("span", { class: "status", id: "certificate-status" }, c.Status), ` ${c.CertificateArn}`),
    el("h2", {}, "Names"), el("p", { class: "value" }, (c.SubjectAlternativeNames || [c.DomainName]).join(", ")),
    el("h2", {}, "Validation"),
    table(["Domain", "Method", "Status", "Record"], (c.DomainValidationOptions || []).map((d) => el("tr", {},
      el("td", {}, d.DomainName), el("td", {}, d.ValidationMethod || ""), el("td", {}, d.ValidationStatus || ""),
      el("td", { class: "value" }, d.ResourceRecord ? `${d.ResourceRecord.Name} ${d.ResourceRecord.Type} ${d.ResourceRecord.Value}` : ""))), { id: "validation-table" }),
    el("h2", {}, "Description"), json(c, "certificate-description"));
}

export async function render({ subject, content }) {
  try {
    if (subject) await certificate(subject, content); else await certificates(content);
  } catch (e) { fail(content, e); }
}
