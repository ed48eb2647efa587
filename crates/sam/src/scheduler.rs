//! The `ScheduleV2` event of functions and state machines: an AWS::Scheduler::Schedule whose
//! target is the function (or state machine), and unless the event gives a RoleArn, the
//! execution role Scheduler assumes to invoke it (with SendMessage on the dead-letter queue,
//! when there is one). As samtranslator writes them: the schedule is named after the event's
//! logical id unless `Name` is given or `OmitName` is true, and its FlexibleTimeWindow is OFF
//! unless given. Unlike a `Schedule` rule's, a generated dead-letter queue gets no queue
//! policy: Scheduler sends with the execution role.

use crate::events::{Event, dead_letter_queue};
use crate::resource::{Res, get_att};
use serde_json::{Map, Value, json};

/// What a schedule invokes, which names the execution role's permission.
pub enum Invoked {
    Function,
    StateMachine,
}

const KNOWN: &[&str] = &[
    "PermissionsBoundary",
    "ScheduleExpression",
    "FlexibleTimeWindow",
    "Name",
    "State",
    "Description",
    "StartDate",
    "EndDate",
    "ScheduleExpressionTimezone",
    "GroupName",
    "KmsKeyArn",
    "Input",
    "RoleArn",
    "DeadLetterConfig",
    "RetryPolicy",
    "OmitName",
];

/// Passed through to the schedule as given.
const PASSED: &[&str] = &[
    "Description",
    "StartDate",
    "EndDate",
    "ScheduleExpressionTimezone",
    "GroupName",
    "KmsKeyArn",
];

pub fn schedule_v2(
    owner: &str,
    event: &Event,
    target_arn: Value,
    invoked: Invoked,
    attrs: &Map<String, Value>,
) -> Result<Vec<Res>, String> {
    event.check_known(KNOWN)?;
    let expression = event.require("ScheduleExpression")?;
    let mut schedule = Res::new(&event.id, "AWS::Scheduler::Schedule", attrs.clone());
    schedule.put("ScheduleExpression", expression);
    schedule.set("State", event.get("State").cloned());
    if event.get("OmitName").and_then(Value::as_bool) == Some(true) {
        if event.get("Name").is_some() {
            return Err(crate::invalid(
                owner,
                format!(
                    "Event with id [{}] is invalid. Name cannot be set when OmitName is True",
                    event.id
                ),
            ));
        }
    } else {
        schedule.put(
            "Name",
            event
                .get("Name")
                .cloned()
                .unwrap_or_else(|| json!(event.id)),
        );
    }
    for p in PASSED {
        schedule.set(p, event.get(p).cloned());
    }
    schedule.put(
        "FlexibleTimeWindow",
        event
            .get("FlexibleTimeWindow")
            .cloned()
            .unwrap_or_else(|| json!({"Mode": "OFF"})),
    );
    let mut out = Vec::new();
    let mut dlq_arn = None;
    if let Some(config) = event.get("DeadLetterConfig") {
        let (arn, queue) = dead_letter_queue(owner, &event.id, config, attrs)?;
        out.extend(queue);
        dlq_arn = Some(arn);
    }
    let role_arn = match event.get("RoleArn") {
        Some(arn) => arn.clone(),
        None => {
            let role = execution_role(event, &target_arn, invoked, dlq_arn.as_ref(), attrs);
            let arn = get_att(&role.id, "Arn");
            out.push(role);
            arn
        }
    };
    let mut target = json!({"Arn": target_arn, "RoleArn": role_arn});
    if let Some(i) = event.get("Input") {
        target["Input"] = i.clone();
    }
    if let Some(arn) = dlq_arn {
        target["DeadLetterConfig"] = json!({"Arn": arn});
    }
    if let Some(r) = event.get("RetryPolicy") {
        target["RetryPolicy"] = r.clone();
    }
    schedule.put("Target", target);
    out.insert(0, schedule);
    Ok(out)
}

fn execution_role(
    event: &Event,
    target_arn: &Value,
    invoked: Invoked,
    dlq_arn: Option<&Value>,
    attrs: &Map<String, Value>,
) -> Res {
    let id = &event.id;
    let (action, suffix) = match invoked {
        Invoked::Function => ("lambda:InvokeFunction", "LambdaPolicy"),
        Invoked::StateMachine => ("states:StartExecution", "StartExecutionPolicy"),
    };
    let mut policies = vec![json!({
        "PolicyName": format!("{id}{suffix}"),
        "PolicyDocument": {"Statement": [{"Action": action, "Effect": "Allow", "Resource": target_arn}]},
    })];
    if let Some(arn) = dlq_arn {
        policies.push(json!({
            "PolicyName": format!("{id}SQSPolicy"),
            "PolicyDocument": {"Statement": [{"Action": "sqs:SendMessage", "Effect": "Allow", "Resource": arn}]},
        }));
    }
    let mut role = Res::new(format!("{id}Role"), "AWS::IAM::Role", attrs.clone());
    role.put(
        "AssumeRolePolicyDocument",
        json!({"Version": "2012-10-17", "Statement": [{"Action": ["sts:AssumeRole"], "Effect": "Allow", "Principal": {"Service": ["scheduler.amazonaws.com"]}}]}),
    );
    role.put("Policies", Value::Array(policies));
    role.set(
        "PermissionsBoundary",
        event.get("PermissionsBoundary").cloned(),
    );
    role
}
