//! Step Functions through its typed operations: the region's state machines, one machine's
//! definition and executions, and one execution's input, output and history.

use crate::api::Ctx;
use crate::web::{ApiError, ApiResult, json_ok};
use cumulo_services::stepfunctions::StepFunctionsService;
use serde_json::{Value, json};
use std::sync::Arc;

fn service(ctx: &Ctx<'_>) -> Result<Arc<StepFunctionsService>, ApiError> {
    ctx.service::<StepFunctionsService>()
}

fn seconds(t: f64) -> Value {
    chrono::DateTime::from_timestamp_millis((t * 1000.0).round() as i64)
        .map_or(Value::Null, |t| json!(crate::stacks::time(&t)))
}

/// JSON text parsed, or kept as text when it is not JSON.
fn parsed(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|_| json!(text))
}

fn machine_arn(ctx: &Ctx<'_>, name_or_arn: &str) -> String {
    if name_or_arn.starts_with("arn:") {
        name_or_arn.to_string()
    } else {
        format!(
            "arn:aws:states:{}:{}:stateMachine:{name_or_arn}",
            ctx.region,
            ctx.account_id()
        )
    }
}

/// `(name, arn)` of every state machine of the region.
pub fn machine_names(ctx: &Ctx<'_>) -> Result<Vec<(String, String)>, ApiError> {
    Ok(service(ctx)?
        .list_state_machines(&ctx.region)
        .into_iter()
        .map(|m| (m.name, m.arn))
        .collect())
}

/// `GET stepfunctions/machines`: each machine's name, ARN, type and creation date.
pub fn machines(ctx: &Ctx<'_>) -> ApiResult {
    let list: Vec<Value> = service(ctx)?
        .list_state_machines(&ctx.region)
        .into_iter()
        .map(|m| {
            json!({
                "name": m.name,
                "arn": m.arn,
                "type": m.kind,
                "creation_date": seconds(m.created),
            })
        })
        .collect();
    json_ok(&json!({ "state_machines": list }))
}

/// `GET stepfunctions/machines/{name or ARN}`: the definition (parsed), role, tags and the
/// executions newest first (an EXPRESS machine keeps none, as AWS lists none).
pub fn machine(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let svc = service(ctx)?;
    let arn = machine_arn(ctx, name);
    let m = svc.machine(&arn).map_err(ApiError::from_aws)?;
    let executions: Vec<Value> = if m.kind == "EXPRESS" {
        Vec::new()
    } else {
        svc.list_executions(&m.arn, None)
            .map_err(ApiError::from_aws)?
            .into_iter()
            .map(|x| {
                json!({
                    "name": x.name,
                    "arn": x.arn,
                    "status": x.status,
                    "start_date": seconds(x.start),
                    "stop_date": x.stop.map(seconds),
                })
            })
            .collect()
    };
    json_ok(&json!({
        "name": m.name,
        "arn": m.arn,
        "type": m.kind,
        "description": m.description,
        "role_arn": m.revision.role_arn,
        "definition": parsed(&m.revision.definition),
        "creation_date": seconds(m.created),
        "tags": m.tags,
        "executions": executions,
    }))
}

/// `GET stepfunctions/executions/{arn}`: DescribeExecution and GetExecutionHistory.
pub fn execution(ctx: &Ctx<'_>, arn: &str) -> ApiResult {
    let svc = service(ctx)?;
    let x = svc.describe_execution(arn).map_err(ApiError::from_aws)?;
    let history: Vec<Value> = svc
        .history(&x.arn)
        .map_err(ApiError::from_aws)?
        .into_iter()
        .map(|e| {
            let mut v = json!({
                "id": e.id,
                "previous_event_id": e.previous,
                "timestamp": seconds(e.timestamp),
                "type": e.kind,
            });
            if let Some((member, details)) = e.details {
                v[member] = details;
            }
            v
        })
        .collect();
    json_ok(&json!({
        "name": x.name,
        "arn": x.arn,
        "state_machine_arn": x.machine_arn,
        "status": x.status,
        "input": parsed(&x.input),
        "output": x.output.as_deref().map(parsed),
        "error": x.error,
        "cause": x.cause,
        "start_date": seconds(x.start),
        "stop_date": x.stop.map(seconds),
        "definition": parsed(&x.revision.definition),
        "history": history,
    }))
}
