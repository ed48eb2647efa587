//! Live updates: one server-sent event stream per console tab (`events/stream[?stack=]`).
//!
//! The stream's task reads the same typed views the API answers with, once a second, and sends
//! an event only when what it read changed: `stacks` (the stack tree, deleted stacks included)
//! and, with `stack=`, `stack` (that stack's status and event count; the page then reads what
//! it shows). A comment line every few seconds keeps the connection honest: when the tab is
//! gone the write fails, the body is dropped, and the task ends. The page closes its stream on
//! `pagehide`, so a browser's six connections per host are never used up by old pages.

use crate::api::Ctx;
use crate::stacks;
use crate::web::{ApiResult, Body, Query, respond};
use bytes::Bytes;
use cumulo_services::Gateway;
use cumulo_wire::AwsRequest;
use http::{HeaderValue, StatusCode, header};
use serde_json::json;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

const POLL: Duration = Duration::from_secs(1);
/// Polls between keep-alive comments.
const KEEPALIVE_EVERY: u32 = 5;

/// `GET events/stream[?stack=NAME]`.
pub fn stream(ctx: &Ctx<'_>) -> ApiResult {
    let stack = Query::of(ctx.req)
        .get("stack")
        .filter(|s| !s.is_empty())
        .map(str::to_string);
    let (tx, rx) = mpsc::channel::<Bytes>(8);
    tokio::spawn(run(
        ctx.gateway.clone(),
        ctx.req.clone(),
        ctx.region.clone(),
        stack,
        tx,
    ));
    let mut r = respond(StatusCode::OK, "text/event-stream", Bytes::new());
    *r.body_mut() = Body::Stream(rx);
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(r)
}

fn event(name: &str, data: &str) -> Bytes {
    Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}

async fn run(
    gateway: Arc<Gateway>,
    req: AwsRequest,
    region: String,
    stack: Option<String>,
    tx: mpsc::Sender<Bytes>,
) {
    // Reconnect after 2 s if the connection drops (the browser's EventSource does).
    if tx
        .send(Bytes::from_static(b"retry: 2000\n\n"))
        .await
        .is_err()
    {
        return;
    }
    let (mut last_tree, mut last_stack) = (String::new(), String::new());
    let mut quiet = 0;
    while !tx.is_closed() {
        let ctx = Ctx {
            gateway: &gateway,
            req: &req,
            region: region.clone(),
        };
        let mut out = Vec::new();
        match stacks::stack_tree(&ctx, true).await {
            Ok(tree) => {
                let text = serde_json::Value::from(tree).to_string();
                if text != last_tree {
                    out.push(event("stacks", &text));
                    last_tree = text;
                }
            }
            Err(e) => {
                let text = json!({"code": e.code, "message": e.message}).to_string();
                let _ = tx.send(event("failure", &text)).await;
                return;
            }
        }
        if let Some(name) = &stack {
            let text = match stacks::all_events(&ctx, name).await {
                Ok(events) => json!({
                    "stack": name,
                    "events": events.len(),
                    "latest": events.first().map(|e| &e.event_id),
                    "status": events.iter().find(|e| e.resource_type == "AWS::CloudFormation::Stack"
                        && e.logical_resource_id == e.stack_name).map(|e| &e.resource_status),
                })
                .to_string(),
                Err(e) => json!({"stack": name, "error": e.code}).to_string(),
            };
            if text != last_stack {
                out.push(event("stack", &text));
                last_stack = text;
            }
        }
        if out.is_empty() {
            quiet += 1;
            if quiet >= KEEPALIVE_EVERY {
                out.push(Bytes::from_static(b": keep-alive\n\n"));
            }
        }
        if !out.is_empty() {
            quiet = 0;
        }
        for b in out {
            if tx.send(b).await.is_err() {
                return;
            }
        }
        tokio::time::sleep(POLL).await;
    }
}
