//! SQS through its typed operations: queues with their attributes, a look at the messages that
//! consumes nothing (`peek_messages`), send and purge.

use crate::api::Ctx;
use crate::web::{ApiError, ApiResult, Query, json_ok};
use cumulo_services::sqs::model::SendMessageInput;
use cumulo_services::sqs::{Caller, SqsService};
use serde_json::{Value, json};
use std::sync::Arc;

/// Messages a peek shows at most.
const MAX_PEEK: usize = 100;

fn service(ctx: &Ctx<'_>) -> Result<Arc<SqsService>, ApiError> {
    ctx.service::<SqsService>()
}

fn caller(ctx: &Ctx<'_>) -> Caller {
    Caller {
        region: ctx.region.clone(),
        account_id: ctx.account_id().to_string(),
        host: ctx.req.host.clone(),
        // What the SenderId of a console-sent message says: the account, as for an unsigned call.
        sender_id: ctx.account_id().to_string(),
    }
}

/// `(name, url, arn)` of every queue of the region.
pub fn queue_names(ctx: &Ctx<'_>) -> Result<Vec<(String, String, String)>, ApiError> {
    let c = caller(ctx);
    let urls = service(ctx)?
        .list_queues(&c, None, None, None)
        .map_err(ApiError::from_aws)?
        .queue_urls;
    Ok(urls
        .into_iter()
        .map(|url| {
            let name = url.rsplit('/').next().unwrap_or_default().to_string();
            let arn = format!("arn:aws:sqs:{}:{}:{name}", c.region, c.account_id);
            (name, url, arn)
        })
        .collect())
}

/// `GET sqs/queues`.
pub fn queues(ctx: &Ctx<'_>) -> ApiResult {
    let svc = service(ctx)?;
    let c = caller(ctx);
    let mut list = Vec::new();
    for (name, url, arn) in queue_names(ctx)? {
        let attrs = attributes(&svc, &c, &url).unwrap_or_default();
        list.push(json!({
            "name": name,
            "url": url,
            "arn": arn,
            "messages": attrs.get("ApproximateNumberOfMessages"),
            "messages_in_flight": attrs.get("ApproximateNumberOfMessagesNotVisible"),
            "messages_delayed": attrs.get("ApproximateNumberOfMessagesDelayed"),
        }));
    }
    json_ok(&json!({ "queues": list }))
}

fn attributes(
    svc: &SqsService,
    c: &Caller,
    url: &str,
) -> Result<serde_json::Map<String, Value>, ApiError> {
    Ok(svc
        .get_queue_attributes(c, url, &["All".to_string()])
        .map_err(ApiError::from_aws)?
        .into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect())
}

/// The queue's URL as this caller reaches it, after checking it exists (an unknown queue is a
/// 404 with SQS's own code).
fn queue_url(ctx: &Ctx<'_>, svc: &SqsService, name: &str) -> Result<String, ApiError> {
    svc.get_queue_url(&caller(ctx), name, None)
        .map_err(|e| ApiError::not_found("QueueDoesNotExist", e.message))
}

/// `GET sqs/queues/{name}`: URL and every attribute (GetQueueAttributes `All`).
pub fn queue(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let svc = service(ctx)?;
    let url = queue_url(ctx, &svc, name)?;
    let attrs = attributes(&svc, &caller(ctx), &url)?;
    json_ok(&json!({ "name": name, "url": url, "attributes": attrs }))
}

/// `GET sqs/queues/{name}/messages?max=`: the messages as they are, consuming nothing.
pub fn peek(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let max = Query::of(ctx.req).number("max", 10, MAX_PEEK)?;
    let svc = service(ctx)?;
    let url = queue_url(ctx, &svc, name)?;
    let messages: Vec<Value> = svc
        .peek_messages(&caller(ctx), &url, max)
        .map_err(ApiError::from_aws)?
        .into_iter()
        .map(|m| {
            json!({
                "message_id": m.message_id,
                "body": m.body,
                "md5_of_body": m.md5_of_body,
                "sent_timestamp": m.sent_timestamp_ms,
                "receive_count": m.receive_count,
                "state": m.state,
                "group_id": m.group_id,
                "attributes": m.attributes.into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect::<serde_json::Map<_, _>>(),
            })
        })
        .collect();
    json_ok(&json!({ "messages": messages }))
}

/// `POST sqs/queues/{name}/messages` with `{"body", "delay_seconds"?, "group_id"?,
/// "deduplication_id"?}`: SendMessage, with SQS's own validation and errors.
pub fn send(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let v: Value = serde_json::from_slice(&ctx.req.body)
        .map_err(|e| ApiError::bad_request(format!("The body is not JSON: {e}")))?;
    let text = |k: &str| -> Result<Option<String>, ApiError> {
        match v.get(k) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(ApiError::bad_request(format!("{k} must be a string"))),
        }
    };
    let body = text("body")?.ok_or_else(|| ApiError::bad_request("body is required"))?;
    let delay_seconds = match v.get("delay_seconds") {
        None | Some(Value::Null) => None,
        Some(d) => Some(
            d.as_i64()
                .ok_or_else(|| ApiError::bad_request("delay_seconds must be a whole number"))?,
        ),
    };
    let input = SendMessageInput {
        body,
        delay_seconds,
        group_id: text("group_id")?,
        dedup_id: text("deduplication_id")?,
        ..Default::default()
    };
    let svc = service(ctx)?;
    let url = queue_url(ctx, &svc, name)?;
    let out = svc
        .send_message(&caller(ctx), &url, &input)
        .map_err(ApiError::from_aws)?;
    json_ok(&json!({
        "message_id": out.message_id,
        "md5_of_body": out.md5_of_body,
        "sequence_number": out.sequence_number,
    }))
}

/// `POST sqs/queues/{name}/purge`: PurgeQueue (once a minute, as SQS allows).
pub fn purge(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let svc = service(ctx)?;
    let url = queue_url(ctx, &svc, name)?;
    svc.purge_queue(&caller(ctx), &url)
        .map_err(ApiError::from_aws)?;
    json_ok(&json!({ "purged": name }))
}
