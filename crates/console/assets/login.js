// Sign in (under --verify-signatures): one of the endpoint's access key id / secret pairs,
// exchanged for a session cookie; then the page asked for is shown.
import { api, el } from "./app.js";

export async function render({ content }) {
  document.getElementById("title").textContent = "Sign in";
  const id = el("input", { id: "access-key-id", autocomplete: "username", required: true });
  const secret = el("input", { id: "secret-access-key", type: "password", autocomplete: "current-password", required: true });
  const status = el("p", { id: "login-status", role: "status" });
  content.replaceChildren(
    el("p", { class: "muted" }, "This endpoint verifies signatures: sign in with one of its credentials."),
    el("form", { id: "login-form", onsubmit: async (ev) => {
      ev.preventDefault();
      try {
        await api("/login", { method: "POST", headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ access_key_id: id.value, secret_access_key: secret.value }) });
        location.reload();
      } catch (e) { status.textContent = e.message; status.className = "error"; }
    } },
    el("label", {}, "Access key ID ", id), " ",
    el("label", {}, "Secret access key ", secret), " ",
    el("button", { type: "submit", id: "login-button" }, "Sign in")),
    status);
}
