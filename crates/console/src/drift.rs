//! A stack's drift as the last detection (DetectStackDrift, `cumulo drift`) left it: the
//! stack's drift status and each checked resource's, with the property differences of the
//! modified ones, as DescribeStackResourceDrifts reports them.

use crate::api::Ctx;
use crate::stacks::{caller, engine, engine_error, opt_time, time};
use crate::web::{ApiResult, json_ok};
use cumulo_engine::{
    DescribeStackResourceDriftsInput, DescribeStacksInput, EngineError, StackResourceDriftView,
};
use serde_json::{Value, json};

/// Pages read at most (each holds 100 resources: a stack holds at most 500).
const MAX_PAGES: usize = 10;

/// `GET stacks/{name}/drift`.
pub async fn drift(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let engine = engine(ctx)?;
    let caller = caller(ctx);
    let stacks = engine
        .describe_stacks(
            &caller,
            DescribeStacksInput {
                stack_name: Some(name.to_string()),
                next_token: None,
            },
        )
        .await
        .map_err(engine_error)?;
    let stack = stacks
        .stacks
        .first()
        .ok_or_else(|| engine_error(EngineError::stack_not_found(name)))?;
    let mut drifts = Vec::new();
    let mut next_token = None;
    for _ in 0..MAX_PAGES {
        let page = engine
            .describe_stack_resource_drifts(
                &caller,
                DescribeStackResourceDriftsInput {
                    stack_name: stack.stack_id.clone(),
                    next_token,
                    ..Default::default()
                },
            )
            .await
            .map_err(engine_error)?;
        drifts.extend(page.drifts.iter().map(resource_drift));
        next_token = page.next_token;
        if next_token.is_none() {
            break;
        }
    }
    json_ok(&json!({
        "stack_drift_status": stack.drift.status,
        "last_check": opt_time(&stack.drift.last_check),
        "resources": drifts,
    }))
}

/// One StackResourceDrift; the properties are the JSON values AWS sends as text.
fn resource_drift(d: &StackResourceDriftView) -> Value {
    let parsed = |t: &Option<String>| {
        t.as_deref()
            .map_or(Value::Null, |t| serde_json::from_str(t).unwrap_or(json!(t)))
    };
    json!({
        "logical_id": d.logical_resource_id,
        "physical_id": d.physical_resource_id,
        "type": d.resource_type,
        "status": d.status,
        "reason": d.reason,
        "timestamp": time(&d.timestamp),
        "expected_properties": parsed(&d.expected_properties),
        "actual_properties": parsed(&d.actual_properties),
        "differences": d.property_differences.iter().map(|p| json!({
            "path": p.property_path,
            "expected": p.expected_value,
            "actual": p.actual_value,
            "type": p.difference_type,
        })).collect::<Vec<_>>(),
    })
}
