// desired-count-delegation.js (Custom::DynamicDesiredCountFunction): the running service's
// desired count (found by its copilot tags), else DefaultDesiredCount; any error still succeeds
// with the default. Delete is a no-op.
exports.handler = (event, context) =>
  run(event, context, async () => {
    const p = event.ResourceProperties;
    const physicalId = `copilot/apps/${p.App}/envs/${p.Env}/services/${p.Svc}/autoscaling`;
    if (event.RequestType === "Delete") return { physicalId };
    let count = Number(p.DefaultDesiredCount);
    try {
      const tagging = require("@aws-sdk/client-resource-groups-tagging-api");
      const ecs = require("@aws-sdk/client-ecs");
      const out = await new tagging.ResourceGroupsTaggingAPIClient({}).send(
        new tagging.GetResourcesCommand({
          ResourceTypeFilters: ["ecs:service"],
          TagFilters: [
            { Key: "copilot-application", Values: [p.App] },
            { Key: "copilot-environment", Values: [p.Env] },
            { Key: "copilot-service", Values: [p.Svc] },
          ],
        })
      );
      const arns = (out.ResourceTagMappingList || []).map((m) => m.ResourceARN);
      if (arns.length === 1) {
        const svc = await new ecs.ECSClient({}).send(
          new ecs.DescribeServicesCommand({ cluster: p.Cluster, services: arns })
        );
        count = svc.services[0].desiredCount;
      }
    } catch (e) {
      console.log(`using DefaultDesiredCount: ${e.message}`);
    }
    return { physicalId, data: { DesiredCount: count } };
  });
