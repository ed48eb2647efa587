// SQS: the queues with their message counts, and a queue's attributes and messages: peek
// (looks without receiving), send and purge, through the API and SQS's own operations.
import { api, el, fail, link, table } from "./app.js";

async function queues(content) {
  const { queues } = await api("/sqs/queues");
  content.replaceChildren(queues.length
    ? table(["Queue", "Messages", "In flight", "Delayed"], queues.map((q) => el("tr", { "data-queue": q.name },
      el("td", {}, el("a", { href: link(`/_cumulo/console/sqs/${encodeURIComponent(q.name)}`) }, q.name)),
      el("td", { class: "num" }, q.messages), el("td", { class: "num" }, q.messages_in_flight), el("td", { class: "num" }, q.messages_delayed))), { id: "queues-table" })
    : el("p", { class: "empty" }, "No queues."));
}

async function queue(name, content) {
  const q = encodeURIComponent(name);
  const info = await api(`/sqs/queues/${q}`);
  const messages = el("div", { id: "messages" });
  const status = el("p", { id: "sqs-status", role: "status" });
  const say = (text, ok) => { status.textContent = text; status.className = ok ? "st-ok" : "error"; };
  async function peek() {
    try {
      const { messages: list } = await api(`/sqs/queues/${q}/messages?max=50`);
      messages.replaceChildren(list.length
        ? table(["Message ID", "Body", "State", "Receives", "Sent"], list.map((m) => el("tr", { "data-message-id": m.message_id },
          el("td", {}, m.message_id), el("td", { class: "value body" }, m.body), el("td", {}, m.state),
          el("td", { class: "num" }, String(m.receive_count)), el("td", {}, new Date(m.sent_timestamp).toISOString()))), { id: "messages-table" })
        : el("p", { class: "empty" }, "No messages."));
    } catch (e) { fail(messages, e); }
  }
  const body = el("textarea", { id: "send-body", rows: 4, placeholder: "Message body" });
  const send = el("form", { id: "send-form", onsubmit: async (ev) => {
    ev.preventDefault();
    try {
      const r = await api(`/sqs/queues/${q}/messages`, { method: "POST", body: JSON.stringify({ body: body.value }), headers: { "Content-Type": "application/json" } });
      say(`Sent message ${r.message_id}`, true);
      body.value = "";
      peek();
    } catch (e) { say(e.message, false); }
  } }, body, el("button", { type: "submit", id: "send-button" }, "Send"));
  const purge = el("button", { type: "button", id: "purge-button", onclick: async () => {
    if (!confirm(`Delete every message in ${name}?`)) return;
    try { await api(`/sqs/queues/${q}/purge`, { method: "POST" }); say("Purged", true); peek(); } catch (e) { say(e.message, false); }
  } }, "Purge");
  content.replaceChildren(
    el("p", { class: "muted" }, info.url),
    el("h2", {}, "Send a message"), send, status,
    el("h2", {}, "Messages ", el("button", { type: "button", id: "peek-button", onclick: peek }, "Peek"), " ", purge),
    el("p", { class: "muted" }, "Peeking shows messages without receiving them: nothing is consumed."),
    messages,
    el("h2", {}, "Attributes"),
    table(["Attribute", "Value"], Object.entries(info.attributes).map(([k, v]) => el("tr", {}, el("td", {}, k), el("td", { class: "value" }, v))), { id: "attributes-table" }));
  peek();
}

export async function render({ subject, content }) {
  try {
    if (subject) await queue(subject, content); else await queues(content);
  } catch (e) { fail(content, e); }
}
