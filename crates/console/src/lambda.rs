//! Lambda through its typed operations: the region's functions, one function's configuration
//! (GetFunctionConfiguration's answer) and tags, and invoke with a JSON payload (a
//! RequestResponse Invoke, state-changing: it runs the function, so it passes the CSRF check).

use crate::api::Ctx;
use crate::web::{ApiError, ApiResult, json_ok};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use cumulo_services::lambda::{InvocationType, LambdaService};
use cumulo_services::logs::{FilterInput, LogsService};
use serde_json::{Value, json};
use std::sync::Arc;

/// The largest payload the console sends (Lambda's own synchronous limit).
const MAX_PAYLOAD: usize = 6 * 1024 * 1024;

fn service(ctx: &Ctx<'_>) -> Result<Arc<LambdaService>, ApiError> {
    ctx.service::<LambdaService>()
}

/// `(name, arn)` of every function of the region.
pub fn function_names(ctx: &Ctx<'_>) -> Result<Vec<(String, String)>, ApiError> {
    let svc = service(ctx)?;
    Ok(svc
        .list_functions(&ctx.region)
        .into_iter()
        .map(|f| {
            let arn =
                cumulo_services::lambda::function_arn(&ctx.region, svc.account_id(), &f.name, None);
            (f.name, arn)
        })
        .collect())
}

/// `GET lambda/functions`: each function's name, ARN, runtime, handler, state and last change.
pub fn functions(ctx: &Ctx<'_>) -> ApiResult {
    let svc = service(ctx)?;
    let mut list = Vec::new();
    for f in svc.list_functions(&ctx.region) {
        let c = svc
            .function_configuration(&ctx.region, &f.name)
            .map_err(ApiError::from_aws)?;
        list.push(json!({
            "name": f.name,
            "arn": c["FunctionArn"],
            "runtime": c["Runtime"],
            "handler": c["Handler"],
            "package_type": c["PackageType"],
            "state": c["State"],
            "memory_size": c["MemorySize"],
            "timeout": c["Timeout"],
            "last_modified": c["LastModified"],
        }));
    }
    json_ok(&json!({ "functions": list }))
}

/// `GET lambda/functions/{name or ARN}`: the configuration as GetFunctionConfiguration reports
/// it, the tags, and where its logs go.
pub fn function(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let svc = service(ctx)?;
    let configuration = svc
        .function_configuration(&ctx.region, name)
        .map_err(ApiError::from_aws)?;
    let arn = configuration["FunctionArn"].as_str().unwrap_or_default();
    let tags = svc
        .list_tags(&ctx.region, arn)
        .map_err(ApiError::from_aws)?;
    let log_group = configuration
        .pointer("/LoggingConfig/LogGroup")
        .cloned()
        .unwrap_or_else(|| {
            json!(format!(
                "/aws/lambda/{}",
                configuration["FunctionName"].as_str().unwrap_or(name)
            ))
        });
    let recent = recent_invocations(ctx, log_group.as_str().unwrap_or_default())?;
    json_ok(&json!({
        "name": configuration["FunctionName"],
        "configuration": configuration,
        "tags": tags,
        "log_group": log_group,
        "recent_invocations": recent,
    }))
}

/// How many invocations the function page lists.
const RECENT: usize = 20;

/// The function's last invocations, newest first, from the `REPORT` lines its runtime writes to
/// its log group (request id, stream, when, and the line: duration, billed duration, memory),
/// read through CloudWatch Logs' FilterLogEvents; none while the group does not exist yet.
fn recent_invocations(ctx: &Ctx<'_>, group: &str) -> Result<Vec<Value>, ApiError> {
    let logs = ctx.service::<LogsService>()?;
    if logs.log_group(&ctx.region, group).is_err() {
        return Ok(Vec::new());
    }
    let mut reports = Vec::new();
    let mut next_token = None;
    loop {
        let page = logs
            .filter_log_events(
                &ctx.region,
                FilterInput {
                    group: group.to_string(),
                    pattern: Some("REPORT RequestId".to_string()),
                    next_token,
                    ..Default::default()
                },
            )
            .map_err(ApiError::from_aws)?;
        reports.extend(page.events);
        match page.next_token {
            Some(t) => next_token = Some(t),
            None => break,
        }
    }
    reports.sort_by_key(|e| std::cmp::Reverse(e.timestamp));
    Ok(reports
        .into_iter()
        .take(RECENT)
        .map(|e| {
            let request_id = e
                .message
                .split_whitespace()
                .skip_while(|w| *w != "RequestId:")
                .nth(1)
                .unwrap_or_default()
                .to_string();
            json!({
                "request_id": request_id,
                "timestamp": e.timestamp,
                "time": chrono::DateTime::from_timestamp_millis(e.timestamp)
                    .map(|t| crate::stacks::time(&t)),
                "stream": e.stream,
                "report": e.message.trim_end(),
            })
        })
        .collect())
}

/// `POST lambda/functions/{name or ARN}/invoke`: the body is the event (JSON, as Lambda takes
/// it); the answer is the function's result, whether it failed (`function_error`) and the tail
/// of its log, as `Invoke` with `LogType=Tail` reports them.
pub async fn invoke(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let body = &ctx.req.body;
    if body.len() > MAX_PAYLOAD {
        return Err(ApiError::new(
            http::StatusCode::PAYLOAD_TOO_LARGE,
            "RequestTooLargeException",
            format!(
                "The payload is {} bytes; Lambda accepts at most {MAX_PAYLOAD}",
                body.len()
            ),
        ));
    }
    let core = service(ctx)?.core();
    let invoked = core
        .invoke(
            &ctx.region,
            name,
            None,
            body.clone(),
            InvocationType::RequestResponse,
            &ctx.req.host,
        )
        .await
        .map_err(ApiError::from_aws)?;
    let Some(out) = invoked.output else {
        return json_ok(&json!({ "executed_version": invoked.executed_version }));
    };
    let payload = String::from_utf8_lossy(&out.payload).into_owned();
    let log_tail = BASE64
        .decode(out.log_tail.as_bytes())
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
    json_ok(&json!({
        "executed_version": invoked.executed_version,
        "function_error": out.function_error,
        "payload": payload,
        "payload_json": serde_json::from_str::<Value>(&payload).ok(),
        "log_tail": log_tail,
    }))
}
