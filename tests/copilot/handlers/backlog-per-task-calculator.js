// backlog-per-task-calculator.js (Worker Service; a scheduled function, not a custom resource):
// every minute, logs an embedded-metric-format record of BacklogPerTask per queue,
// ceil(visible messages / max(running tasks, 1)).
exports.handler = async () => {
  const ecs = require("@aws-sdk/client-ecs");
  const sqs = require("@aws-sdk/client-sqs");
  const svc = await new ecs.ECSClient({}).send(
    new ecs.DescribeServicesCommand({ cluster: process.env.CLUSTER_NAME, services: [process.env.SERVICE_NAME] })
  );
  const running = Math.max((svc.services[0] || {}).runningCount || 0, 1);
  const client = new sqs.SQSClient({});
  for (const name of process.env.QUEUE_NAMES.split(",").filter(Boolean)) {
    const { QueueUrl } = await client.send(new sqs.GetQueueUrlCommand({ QueueName: name }));
    const attrs = await client.send(
      new sqs.GetQueueAttributesCommand({ QueueUrl, AttributeNames: ["ApproximateNumberOfMessages"] })
    );
    const backlog = Math.ceil(Number(attrs.Attributes.ApproximateNumberOfMessages) / running);
    console.log(
      JSON.stringify({
        _aws: {
          Timestamp: Date.now(),
          CloudWatchMetrics: [{ Namespace: process.env.NAMESPACE, Dimensions: [["QueueName"]], Metrics: [{ Name: "BacklogPerTask", Unit: "Count" }] }],
        },
        QueueName: name,
        BacklogPerTask: backlog,
      })
    );
  }
};
