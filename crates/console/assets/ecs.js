// ECS: the clusters, and a cluster's services (deployments, counts) and tasks (running and
// stopped, with their containers and why they stopped).
import { api, el, fail, link, table } from "./app.js";
import { pairs } from "./views.js";
import { groupLink } from "./securitygroups.js";

const tail = (arn) => (arn || "").split("/").pop();

async function clusters(content) {
  const { clusters } = await api("/ecs/clusters");
  content.replaceChildren(clusters.length
    ? table(["Cluster", "Status", "Services", "Running tasks", "Pending tasks"], clusters.map((c) => el("tr", { "data-cluster": c.clusterName },
      el("td", {}, el("a", { href: link(`/_cumulo/console/ecs/${encodeURIComponent(c.clusterName)}`) }, c.clusterName)),
      el("td", {}, c.status), el("td", { class: "num" }, String(c.activeServicesCount)),
      el("td", { class: "num" }, String(c.runningTasksCount)), el("td", { class: "num" }, String(c.pendingTasksCount)))), { id: "clusters-table" })
    : el("p", { class: "empty" }, "No clusters."));
}

async function cluster(name, content) {
  const c = await api(`/ecs/clusters/${encodeURIComponent(name)}`);
  content.replaceChildren(
    el("p", { class: "muted" }, c.cluster.clusterArn),
    el("h2", {}, "Services"),
    c.services.length
      ? table(["Service", "Status", "Desired", "Running", "Pending", "Task definition", "Launch type", "Security groups"], c.services.map((s) => el("tr", { "data-service": s.serviceName },
        el("td", {}, s.serviceName), el("td", {}, s.status), el("td", { class: "num" }, String(s.desiredCount)),
        el("td", { class: "num" }, String(s.runningCount)), el("td", { class: "num" }, String(s.pendingCount)),
        el("td", { class: "value" }, tail(s.taskDefinition)), el("td", {}, s.launchType || ""),
        el("td", { class: "security-groups" }, (((s.networkConfiguration || {}).awsvpcConfiguration || {}).securityGroups || [])
          .flatMap((g, i) => [i ? ", " : "", groupLink(g)])))), { id: "services-table" })
      : el("p", { class: "empty" }, "No services."),
    el("h2", {}, "Tasks"),
    c.tasks.length
      ? table(["Task", "Last status", "Desired", "Task definition", "Containers", "Stopped reason"], c.tasks.map((t) => el("tr", { "data-task": tail(t.taskArn) },
        el("td", { class: "value" }, tail(t.taskArn)), el("td", {}, t.lastStatus), el("td", {}, t.desiredStatus),
        el("td", { class: "value" }, tail(t.taskDefinitionArn)),
        el("td", {}, (t.containers || []).map((x) => `${x.name}: ${x.lastStatus}${x.exitCode !== undefined ? ` (exit ${x.exitCode})` : ""}`).join(", ")),
        el("td", { class: "reason" }, t.stoppedReason || ""))), { id: "tasks-table" })
      : el("p", { class: "empty" }, "No tasks."),
    el("h2", {}, "Tags"), pairs(c.cluster.tags || [], "tags-table"));
}

export async function render({ subject, content }) {
  try {
    if (subject) await cluster(subject, content); else await clusters(content);
  } catch (e) { fail(content, e); }
}
