// alb-rule-priority-generator.js (Custom::RulePriorityFunction): the next free listener rule
// priorities, one per RulePath entry: root paths count down from 50000, others up from 1.
// Delete is a no-op.
const elb = require("@aws-sdk/client-elastic-load-balancing-v2");

async function priorities(listenerArn) {
  const client = new elb.ElasticLoadBalancingV2Client({});
  const found = [];
  let marker;
  do {
    const out = await client.send(new elb.DescribeRulesCommand({ ListenerArn: listenerArn, Marker: marker }));
    for (const r of out.Rules || []) if (r.Priority !== "default") found.push(Number(r.Priority));
    marker = out.NextMarker;
  } while (marker);
  return found;
}

exports.nextAvailableRulePriorityHandler = (event, context) =>
  run(event, context, async () => {
    const physicalId = `alb-rule-priority-${event.LogicalResourceId}`;
    if (event.RequestType === "Delete") return { physicalId };
    const p = event.ResourceProperties;
    const taken = await priorities(p.ListenerArn);
    const data = {};
    (p.RulePath || []).forEach((path, i) => {
      let next;
      if (path === "/") {
        const high = taken.filter((x) => x >= 48000);
        next = high.length ? Math.min(...high) - 1 : 50000;
      } else {
        const low = taken.filter((x) => x < 48000);
        next = low.length ? Math.max(...low) + 1 : 1;
      }
      taken.push(next);
      data[i === 0 ? "Priority" : `Priority${i}`] = next;
    });
    return { physicalId, data };
  });
