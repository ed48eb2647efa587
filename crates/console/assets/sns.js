// SNS: the topics with their subscription counts, and a topic's attributes, tags and
// subscriptions (read through SNS's own operations).
import { api, el, fail, link, table } from "./app.js";
import { pairs } from "./views.js";

async function topics(content) {
  const { topics } = await api("/sns/topics");
  content.replaceChildren(topics.length
    ? table(["Topic", "Display name", "Confirmed", "Pending", "ARN"], topics.map((t) => el("tr", { "data-topic": t.name },
      el("td", {}, el("a", { href: link(`/_cumulo/console/sns/${encodeURIComponent(t.name)}`) }, t.name)),
      el("td", {}, t.display_name || ""), el("td", { class: "num" }, t.subscriptions_confirmed),
      el("td", { class: "num" }, t.subscriptions_pending), el("td", { class: "value" }, t.arn))), { id: "topics-table" })
    : el("p", { class: "empty" }, "No topics."));
}

async function topic(name, content) {
  const t = await api(`/sns/topics/${encodeURIComponent(name)}`);
  content.replaceChildren(
    el("p", { class: "muted" }, t.arn),
    el("h2", {}, "Subscriptions"),
    t.subscriptions.length
      ? table(["Protocol", "Endpoint", "Subscription ARN", "Raw delivery", "Filter policy"], t.subscriptions.map((s) => el("tr", { "data-subscription": s.arn },
        el("td", {}, s.protocol), el("td", { class: "value" }, s.endpoint), el("td", { class: "value" }, s.arn),
        el("td", {}, s.attributes.RawMessageDelivery || ""), el("td", { class: "value" }, s.attributes.FilterPolicy || ""))), { id: "subscriptions-table" })
      : el("p", { class: "empty" }, "No subscriptions."),
    el("h2", {}, "Attributes"), pairs(t.attributes, "attributes-table"),
    el("h2", {}, "Tags"), pairs(t.tags, "tags-table"));
}

export async function render({ subject, content }) {
  try {
    if (subject) await topic(subject, content); else await topics(content);
  } catch (e) { fail(content, e); }
}
