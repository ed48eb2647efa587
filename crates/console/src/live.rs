//! Live updates: one server-sent event stream per console tab (`events/stream`), and what it
//! follows.
//!
//! The stream's first event, `stream`, names it (`{"id"}`). Its task reads the same typed views
//! the API answers with, once a second, and sends an event only when what it read changed:
//! `stacks` (the stack tree, deleted stacks included; not with `stacks=false`) and, with
//! `stack=`, `stack` (that stack's status and event count; the page then reads what it shows).
//! A page subscribes the tab's one stream to more as it changes (`POST events/stream/{id}/logs`,
//! a log tail, sent as `logs` events; `DELETE` the same path ends it), so a tab never opens a
//! second stream. A comment line every few seconds keeps the connection honest: when the tab is
//! gone the write fails, the body is dropped, the task ends and its subscriptions with it. The
//! page closes its stream on `pagehide`, so a browser's six connections per host are never used
//! up by old pages.

use crate::api::Ctx;
use crate::logs::Tail;
use crate::stacks;
use crate::web::{ApiError, ApiResult, Body, Query, json_ok, respond};
use bytes::Bytes;
use cumulo_services::Gateway;
use cumulo_wire::AwsRequest;
use http::{HeaderValue, StatusCode, header};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use tokio::sync::mpsc;

const POLL: Duration = Duration::from_secs(1);
/// Polls between keep-alive comments.
const KEEPALIVE_EVERY: u32 = 5;

/// What one open stream follows besides what its URL asked for.
#[derive(Debug, Default)]
struct Subscriptions {
    logs: Option<Tail>,
}

/// The open streams' subscriptions, by the id each announced in its `stream` event.
#[derive(Debug, Default)]
pub struct Streams(Mutex<HashMap<String, Arc<Mutex<Subscriptions>>>>);

impl Streams {
    fn open(self: &Arc<Self>) -> (String, Arc<Mutex<Subscriptions>>, Registered) {
        let id = uuid::Uuid::new_v4().simple().to_string();
        let subs = Arc::new(Mutex::new(Subscriptions::default()));
        lock(&self.0).insert(id.clone(), subs.clone());
        let registered = Registered {
            streams: self.clone(),
            id: id.clone(),
        };
        (id, subs, registered)
    }

    fn get(&self, id: &str) -> Result<Arc<Mutex<Subscriptions>>, ApiError> {
        lock(&self.0).get(id).cloned().ok_or_else(|| {
            ApiError::not_found(
                "StreamNotFound",
                format!("No open event stream {id} (it ends when its tab's connection does)"),
            )
        })
    }

    /// How many streams are open (the health report's `console.streams`).
    pub fn count(&self) -> usize {
        lock(&self.0).len()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A stream's place in [`Streams`], given up when its task ends.
struct Registered {
    streams: Arc<Streams>,
    id: String,
}

impl Drop for Registered {
    fn drop(&mut self) {
        lock(&self.streams.0).remove(&self.id);
    }
}

/// `GET events/stream[?stack=NAME][&stacks=false]`.
pub fn stream(ctx: &Ctx<'_>) -> ApiResult {
    let q = Query::of(ctx.req);
    let stack = q.get("stack").filter(|s| !s.is_empty()).map(str::to_string);
    let tree = q.flag("stacks", true)?;
    let (tx, rx) = mpsc::channel::<Bytes>(8);
    let (id, subs, registered) = ctx.streams.open();
    tokio::spawn(run(
        Follow {
            gateway: ctx.gateway.clone(),
            streams: ctx.streams.clone(),
            req: ctx.req.clone(),
            region: ctx.region.clone(),
            tree,
            stack,
            subs,
        },
        id,
        registered,
        tx,
    ));
    let mut r = respond(StatusCode::OK, "text/event-stream", Bytes::new());
    *r.body_mut() = Body::Stream(rx);
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    Ok(r)
}

/// `POST events/stream/{id}/logs` (body: `{"group", "stream"?, "filter"?, "start_time"?}`):
/// the stream sends the group's new events as `logs` events, replacing any tail it had.
pub fn subscribe_logs(ctx: &Ctx<'_>, id: &str) -> ApiResult {
    let subs = ctx.streams.get(id)?;
    let body: Value = serde_json::from_slice(&ctx.req.body)
        .map_err(|e| ApiError::bad_request(format!("The body is not JSON: {e}")))?;
    let tail = Tail::subscribe(ctx, &body)?;
    lock(&subs).logs = Some(tail);
    json_ok(&json!({ "stream": id, "subscribed": "logs" }))
}

/// `DELETE events/stream/{id}/logs`: the stream stops tailing.
pub fn unsubscribe_logs(ctx: &Ctx<'_>, id: &str) -> ApiResult {
    let subs = ctx.streams.get(id)?;
    lock(&subs).logs = None;
    json_ok(&json!({ "stream": id, "unsubscribed": "logs" }))
}

fn event(name: &str, data: &str) -> Bytes {
    Bytes::from(format!("event: {name}\ndata: {data}\n\n"))
}

/// What one stream's task reads.
struct Follow {
    gateway: Arc<Gateway>,
    streams: Arc<Streams>,
    req: AwsRequest,
    region: String,
    tree: bool,
    stack: Option<String>,
    subs: Arc<Mutex<Subscriptions>>,
}

async fn run(f: Follow, id: String, _registered: Registered, tx: mpsc::Sender<Bytes>) {
    // Reconnect after 2 s if the connection drops (the browser's EventSource does; the new
    // stream has a new id, to which the page subscribes again).
    let hello = format!(
        "retry: 2000\n\n{}",
        String::from_utf8_lossy(&event("stream", &json!({ "id": id }).to_string()))
    );
    if tx.send(Bytes::from(hello)).await.is_err() {
        return;
    }
    let (mut last_tree, mut last_stack) = (String::new(), String::new());
    let mut quiet = 0;
    while !tx.is_closed() {
        let ctx = Ctx {
            gateway: &f.gateway,
            streams: &f.streams,
            req: &f.req,
            region: f.region.clone(),
        };
        let mut out = Vec::new();
        if f.tree {
            match stacks::stack_tree(&ctx, true).await {
                Ok(tree) => {
                    let text = Value::from(tree).to_string();
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
        }
        if let Some(name) = &f.stack {
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
        if let Some(text) = tail_logs(&ctx, &f.subs) {
            out.push(event("logs", &text));
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

/// The `logs` event's data when the stream tails a log group and it has new events (or the
/// read failed: the group was deleted, say, which ends the tail).
fn tail_logs(ctx: &Ctx<'_>, subs: &Mutex<Subscriptions>) -> Option<String> {
    let mut subs = lock(subs);
    let tail = subs.logs.as_mut()?;
    match tail.read(ctx) {
        Ok(events) if events.is_empty() => None,
        Ok(events) => Some(json!({ "events": events }).to_string()),
        Err(e) => {
            subs.logs = None;
            Some(json!({"error": {"code": e.code, "message": e.message}}).to_string())
        }
    }
}
