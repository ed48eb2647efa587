// trigger-state-machine.js (Custom::TriggerStateMachine, Static Site): runs the asset-copying
// state machine synchronously and fails unless it SUCCEEDED. Delete is a no-op.
exports.handler = (event, context) =>
  run(event, context, async () => {
    const physicalId = event.LogicalResourceId;
    if (event.RequestType === "Delete") return { physicalId };
    const sfn = require("@aws-sdk/client-sfn");
    const out = await new sfn.SFNClient({}).send(
      new sfn.StartSyncExecutionCommand({ stateMachineArn: event.ResourceProperties.StateMachineARN })
    );
    if (out.status !== "SUCCEEDED") throw new Error(`state machine execution ${out.status}: ${out.error || ""} ${out.cause || ""}`);
    return { physicalId };
  });
