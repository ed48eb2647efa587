// env-controller.js (Custom::EnvControllerFunction, every ECS workload, RDWS and job): adds the
// workload to the environment stack's *Workloads parameters it asks for and removes it from the
// others (from all of them on Delete), keeps its Aliases entry, runs UpdateStack with the previous
// template when anything changed, and answers the environment's outputs.
const cfn = require("@aws-sdk/client-cloudformation");

const OMITTED = ["EnabledFeatures", "LastForceDeployID"];

function outputsOf(stack) {
  const out = {};
  for (const o of stack.Outputs || []) if (!OMITTED.includes(o.OutputKey)) out[o.OutputKey] = o.OutputValue;
  return out;
}

function withWorkload(params, workload, requested, aliases) {
  let changed = false;
  const next = params.map((p) => {
    let value = p.ParameterValue || "";
    if (p.ParameterKey.endsWith("Workloads")) {
      const list = value ? value.split(",") : [];
      const want = requested.includes(p.ParameterKey);
      const has = list.includes(workload);
      if (want && !has) value = [...list, workload].join(",");
      if (!want && has) value = list.filter((w) => w !== workload).join(",");
    } else if (p.ParameterKey === "Aliases") {
      const map = value ? JSON.parse(value) : {};
      if (aliases.length) map[workload] = aliases;
      else delete map[workload];
      value = Object.keys(map).length ? JSON.stringify(map) : "";
    }
    if (value !== (p.ParameterValue || "")) changed = true;
    return { ParameterKey: p.ParameterKey, ParameterValue: value };
  });
  return { changed, next };
}

async function controlEnv(stackName, workload, requested, aliases) {
  const client = new cfn.CloudFormationClient({});
  const describe = async () =>
    (await client.send(new cfn.DescribeStacksCommand({ StackName: stackName }))).Stacks[0];
  for (let attempt = 0; attempt < 200; attempt++) {
    const stack = await describe();
    if (stack.StackStatus.endsWith("_IN_PROGRESS")) {
      await sleep(2000);
      continue;
    }
    const { changed, next } = withWorkload(stack.Parameters || [], workload, requested, aliases);
    if (!changed) return outputsOf(stack);
    const role = (stack.Outputs || []).find((o) => o.OutputKey === "CFNExecutionRoleARN");
    try {
      await client.send(
        new cfn.UpdateStackCommand({
          StackName: stackName,
          UsePreviousTemplate: true,
          Parameters: next,
          Capabilities: stack.Capabilities,
          RoleARN: role ? role.OutputValue : undefined,
        })
      );
    } catch (e) {
      if (/_IN_PROGRESS state/.test(String(e.message))) {
        await sleep(2000);
        continue;
      }
      throw e;
    }
    await waitFor("the environment stack's update", 435, 2000, async () => {
      const s = await describe();
      if (s.StackStatus === "UPDATE_COMPLETE") return true;
      if (/ROLLBACK_COMPLETE|FAILED/.test(s.StackStatus)) throw new Error(`environment stack ${s.StackStatus}`);
      return false;
    });
    return outputsOf(await describe());
  }
  throw new Error(`environment stack ${stackName} stayed busy`);
}

exports.handler = (event, context) =>
  run(event, context, async () => {
    const p = event.ResourceProperties;
    const deleting = event.RequestType === "Delete";
    const data = await controlEnv(
      p.EnvStack,
      p.Workload,
      deleting ? [] : p.Parameters || [],
      deleting ? [] : p.Aliases || []
    );
    return { physicalId: `envcontoller/${p.EnvStack}/${p.Workload}`, data };
  });
