//! The query-protocol adapter: form-encoded `Action=...&Version=2012-11-05` (in the body or URL,
//! POSTed to `/` or to the queue URL itself), answered with XML in SQS's 2012-11-05 namespace.
//! Older CLIs and SDKs speak this; errors carry the legacy query codes.

use super::model::*;
use super::{Caller, SqsService, unknown_operation};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_wire::query::QueryParams;
use cumulo_wire::xml::escape;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use std::collections::BTreeMap;
use std::fmt::Write;

pub const NAMESPACE: &str = "http://queue.amazonaws.com/doc/2012-11-05/";

/// Actions whose response carries only ResponseMetadata.
const NO_RESULT: &[&str] = &[
    "DeleteQueue",
    "SetQueueAttributes",
    "TagQueue",
    "UntagQueue",
    "DeleteMessage",
    "ChangeMessageVisibility",
    "PurgeQueue",
    "AddPermission",
    "RemovePermission",
];

pub async fn handle(svc: &SqsService, req: &AwsRequest) -> AwsResponse {
    let params = QueryParams::from_request(req);
    let action = params.get("Action").unwrap_or("").to_string();
    let mut body = String::new();
    match dispatch(svc, req, &action, &params, &mut body).await {
        Ok(()) => {
            // Operations without output have no `<XResult>` element in AWS's responses.
            let result = if NO_RESULT.contains(&action.as_str()) {
                String::new()
            } else {
                format!("<{action}Result>{body}</{action}Result>")
            };
            let doc = format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?><{action}Response xmlns=\"{NAMESPACE}\">{result}<ResponseMetadata><RequestId>{}</RequestId></ResponseMetadata></{action}Response>",
                escape(&req.request_id)
            );
            AwsResponse::xml(doc).with_header("x-amzn-requestid", &req.request_id)
        }
        Err(mut e) => {
            if let Some(code) = e.query_code.take() {
                e.code = code;
            }
            e.into_response(Protocol::Query(NAMESPACE), &req.request_id)
        }
    }
}

/// `<name>text</name>`, escaped.
fn el(out: &mut String, name: &str, text: &str) {
    let _ = write!(out, "<{name}>{}</{name}>", escape(text));
}

/// The queue URL: the `QueueUrl` parameter, else the path the request was POSTed to.
fn queue_url(req: &AwsRequest, p: &QueryParams) -> Result<String, AwsError> {
    if let Some(u) = p.get("QueueUrl") {
        return Ok(u.to_string());
    }
    let path = req.path();
    if super::ops::queue_name_from_url(&path).is_some() {
        Ok(path)
    } else {
        Err(super::errors::missing_parameter("QueueUrl"))
    }
}

fn opt_int(p: &QueryParams, name: &str) -> Result<Option<i64>, AwsError> {
    match p.get(name) {
        None => Ok(None),
        Some(v) => v.trim().parse().map(Some).map_err(|_| {
            super::errors::invalid_parameter(name, v, &format!("{name} must be an integer."))
        }),
    }
}

fn required(p: &QueryParams, name: &str) -> Result<String, AwsError> {
    p.get(name)
        .map(str::to_string)
        .ok_or_else(|| super::errors::missing_parameter(name))
}

fn name_value_map(
    p: &QueryParams,
    prefix: &str,
    key: &str,
    value: &str,
) -> BTreeMap<String, String> {
    p.map(prefix, key, value).into_iter().collect()
}

/// `Prefix.N.Name` + `Prefix.N.Value.DataType|StringValue|BinaryValue`.
fn message_attributes(p: &QueryParams, prefix: &str) -> Result<MessageAttributes, AwsError> {
    p.list_of_structs(prefix)
        .into_iter()
        .filter_map(|fields| {
            let get = |f: &str| fields.iter().find(|(k, _)| k == f).map(|(_, v)| v.clone());
            let name = get("Name")?;
            let binary_value = match get("Value.BinaryValue") {
                Some(b) => match B64.decode(b.trim()) {
                    Ok(bytes) => Some(bytes),
                    Err(_) => {
                        return Some(Err(super::errors::invalid_parameter_value(format!(
                            "The message attribute '{name}' has an invalid BinaryValue (not base64)."
                        ))));
                    }
                },
                None => None,
            };
            Some(Ok((
                name,
                MessageAttributeValue {
                    data_type: get("Value.DataType").unwrap_or_default(),
                    string_value: get("Value.StringValue"),
                    binary_value,
                },
            )))
        })
        .collect()
}

fn send_input(p: &QueryParams) -> Result<SendMessageInput, AwsError> {
    Ok(SendMessageInput {
        body: required(p, "MessageBody")?,
        delay_seconds: opt_int(p, "DelaySeconds")?,
        message_attributes: message_attributes(p, "MessageAttribute")?,
        system_attributes: message_attributes(p, "MessageSystemAttribute")?,
        group_id: p.get("MessageGroupId").map(str::to_string),
        dedup_id: p.get("MessageDeduplicationId").map(str::to_string),
    })
}

/// The entries of a batch request, each as its own parameter set.
fn batch_entries(p: &QueryParams, prefix: &str) -> Vec<QueryParams> {
    p.list_of_structs(prefix)
        .into_iter()
        .map(QueryParams)
        .collect()
}

fn write_send_result(out: &mut String, r: &SendMessageOutput) {
    el(out, "MessageId", &r.message_id);
    el(out, "MD5OfMessageBody", &r.md5_of_body);
    if let Some(v) = &r.md5_of_message_attributes {
        el(out, "MD5OfMessageAttributes", v);
    }
    if let Some(v) = &r.md5_of_system_attributes {
        el(out, "MD5OfMessageSystemAttributes", v);
    }
    if let Some(v) = &r.sequence_number {
        el(out, "SequenceNumber", v);
    }
}

fn write_batch<T>(
    out: &mut String,
    result: &BatchOutput<T>,
    entry: &str,
    write_ok: impl Fn(&mut String, &T),
) {
    for (id, r) in &result.successful {
        let _ = write!(out, "<{entry}>");
        el(out, "Id", id);
        write_ok(out, r);
        let _ = write!(out, "</{entry}>");
    }
    for f in &result.failed {
        out.push_str("<BatchResultErrorEntry>");
        el(out, "Id", &f.id);
        el(
            out,
            "SenderFault",
            if f.sender_fault { "true" } else { "false" },
        );
        el(out, "Code", &f.code);
        el(out, "Message", &f.message);
        out.push_str("</BatchResultErrorEntry>");
    }
}

fn write_page(out: &mut String, page: &QueueUrlPage) {
    for u in &page.queue_urls {
        el(out, "QueueUrl", u);
    }
    if let Some(t) = &page.next_token {
        el(out, "NextToken", t);
    }
}

fn write_message(out: &mut String, m: &ReceivedMessage) {
    out.push_str("<Message>");
    el(out, "MessageId", &m.message_id);
    el(out, "ReceiptHandle", &m.receipt_handle);
    el(out, "MD5OfBody", &m.md5_of_body);
    el(out, "Body", &m.body);
    for (k, v) in &m.attributes {
        out.push_str("<Attribute>");
        el(out, "Name", k);
        el(out, "Value", v);
        out.push_str("</Attribute>");
    }
    if let Some(md5) = &m.md5_of_message_attributes {
        el(out, "MD5OfMessageAttributes", md5);
    }
    for (k, v) in &m.message_attributes {
        out.push_str("<MessageAttribute>");
        el(out, "Name", k);
        out.push_str("<Value>");
        if let Some(s) = &v.string_value {
            el(out, "StringValue", s);
        }
        if let Some(b) = &v.binary_value {
            el(out, "BinaryValue", &B64.encode(b));
        }
        el(out, "DataType", &v.data_type);
        out.push_str("</Value></MessageAttribute>");
    }
    out.push_str("</Message>");
}

async fn dispatch(
    svc: &SqsService,
    req: &AwsRequest,
    action: &str,
    p: &QueryParams,
    out: &mut String,
) -> Result<(), AwsError> {
    let caller = Caller::from(req);
    let c = &caller;
    match action {
        "CreateQueue" => {
            let name = p.get("QueueName").unwrap_or("");
            let url = svc
                .create_queue(
                    c,
                    name,
                    &name_value_map(p, "Attribute", "Name", "Value"),
                    &name_value_map(p, "Tag", "Key", "Value"),
                )
                .await?;
            el(out, "QueueUrl", &url);
        }
        "DeleteQueue" => svc.delete_queue(c, &queue_url(req, p)?).await?,
        "GetQueueUrl" => {
            let url = svc.get_queue_url(
                c,
                p.get("QueueName").unwrap_or(""),
                p.get("QueueOwnerAWSAccountId"),
            )?;
            el(out, "QueueUrl", &url);
        }
        "ListQueues" => {
            let page = svc.list_queues(
                c,
                p.get("QueueNamePrefix"),
                opt_int(p, "MaxResults")?,
                p.get("NextToken"),
            )?;
            write_page(out, &page);
        }
        "GetQueueAttributes" => {
            let attrs =
                svc.get_queue_attributes(c, &queue_url(req, p)?, &p.list("AttributeName"))?;
            for (k, v) in attrs {
                out.push_str("<Attribute>");
                el(out, "Name", &k);
                el(out, "Value", &v);
                out.push_str("</Attribute>");
            }
        }
        "SetQueueAttributes" => {
            svc.set_queue_attributes(
                c,
                &queue_url(req, p)?,
                &name_value_map(p, "Attribute", "Name", "Value"),
            )
            .await?
        }
        "TagQueue" => {
            svc.tag_queue(
                c,
                &queue_url(req, p)?,
                &name_value_map(p, "Tag", "Key", "Value"),
            )
            .await?
        }
        "UntagQueue" => {
            svc.untag_queue(c, &queue_url(req, p)?, &p.list("TagKey"))
                .await?
        }
        "ListQueueTags" => {
            for (k, v) in svc.list_queue_tags(c, &queue_url(req, p)?)? {
                out.push_str("<Tag>");
                el(out, "Key", &k);
                el(out, "Value", &v);
                out.push_str("</Tag>");
            }
        }
        "SendMessage" => {
            let r = svc.send_message(c, &queue_url(req, p)?, &send_input(p)?)?;
            write_send_result(out, &r);
        }
        "SendMessageBatch" => {
            let url = queue_url(req, p)?;
            let entries = batch_entries(p, "SendMessageBatchRequestEntry")
                .iter()
                .map(|e| Ok((required(e, "Id")?, send_input(e)?)))
                .collect::<Result<Vec<_>, AwsError>>()?;
            let r = svc.send_message_batch(c, &url, &entries)?;
            write_batch(out, &r, "SendMessageBatchResultEntry", write_send_result);
        }
        "ReceiveMessage" => {
            let mut names = p.list("AttributeName");
            names.extend(p.list("MessageSystemAttributeName"));
            let input = ReceiveMessageInput {
                max_number_of_messages: opt_int(p, "MaxNumberOfMessages")?,
                visibility_timeout: opt_int(p, "VisibilityTimeout")?,
                wait_time_seconds: opt_int(p, "WaitTimeSeconds")?,
                system_attribute_names: names,
                message_attribute_names: p.list("MessageAttributeName"),
                receive_request_attempt_id: p.get("ReceiveRequestAttemptId").map(str::to_string),
            };
            for m in svc.receive_message(c, &queue_url(req, p)?, &input).await? {
                write_message(out, &m);
            }
        }
        "DeleteMessage" => {
            svc.delete_message(c, &queue_url(req, p)?, &required(p, "ReceiptHandle")?)?
        }
        "DeleteMessageBatch" => {
            let url = queue_url(req, p)?;
            let entries = batch_entries(p, "DeleteMessageBatchRequestEntry")
                .iter()
                .map(|e| Ok((required(e, "Id")?, required(e, "ReceiptHandle")?)))
                .collect::<Result<Vec<_>, AwsError>>()?;
            let r = svc.delete_message_batch(c, &url, &entries)?;
            write_batch(out, &r, "DeleteMessageBatchResultEntry", |_, _| {});
        }
        "ChangeMessageVisibility" => {
            let timeout = opt_int(p, "VisibilityTimeout")?
                .ok_or_else(|| super::errors::missing_parameter("VisibilityTimeout"))?;
            svc.change_message_visibility(
                c,
                &queue_url(req, p)?,
                &required(p, "ReceiptHandle")?,
                timeout,
            )?;
        }
        "ChangeMessageVisibilityBatch" => {
            let url = queue_url(req, p)?;
            let entries = batch_entries(p, "ChangeMessageVisibilityBatchRequestEntry")
                .iter()
                .map(|e| {
                    let timeout = opt_int(e, "VisibilityTimeout")?
                        .ok_or_else(|| super::errors::missing_parameter("VisibilityTimeout"))?;
                    Ok((required(e, "Id")?, required(e, "ReceiptHandle")?, timeout))
                })
                .collect::<Result<Vec<_>, AwsError>>()?;
            let r = svc.change_message_visibility_batch(c, &url, &entries)?;
            write_batch(
                out,
                &r,
                "ChangeMessageVisibilityBatchResultEntry",
                |_, _| {},
            );
        }
        "AddPermission" => {
            svc.add_permission(
                c,
                &queue_url(req, p)?,
                p.get("Label").unwrap_or(""),
                &p.list("AWSAccountId"),
                &p.list("ActionName"),
            )
            .await?
        }
        "RemovePermission" => {
            svc.remove_permission(c, &queue_url(req, p)?, p.get("Label").unwrap_or(""))
                .await?
        }
        "StartMessageMoveTask" => {
            let handle = svc.start_message_move_task(
                c,
                &required(p, "SourceArn")?,
                p.get("DestinationArn"),
                opt_int(p, "MaxNumberOfMessagesPerSecond")?,
            )?;
            el(out, "TaskHandle", &handle);
        }
        "ListMessageMoveTasks" => {
            let tasks = svc.list_message_move_tasks(
                c,
                &required(p, "SourceArn")?,
                opt_int(p, "MaxResults")?,
            )?;
            for t in tasks {
                out.push_str("<Results>");
                el(out, "Status", &t.status);
                el(out, "SourceArn", &t.source_arn);
                if let Some(d) = &t.destination_arn {
                    el(out, "DestinationArn", d);
                }
                if let Some(r) = t.max_per_second {
                    el(out, "MaxNumberOfMessagesPerSecond", &r.to_string());
                }
                el(
                    out,
                    "ApproximateNumberOfMessagesMoved",
                    &t.moved.to_string(),
                );
                el(
                    out,
                    "ApproximateNumberOfMessagesToMove",
                    &t.to_move.to_string(),
                );
                if let Some(f) = &t.failure_reason {
                    el(out, "FailureReason", f);
                }
                el(out, "StartedTimestamp", &t.started_ms.to_string());
                out.push_str("</Results>");
            }
        }
        "CancelMessageMoveTask" => {
            let moved = svc.cancel_message_move_task(c, &required(p, "TaskHandle")?)?;
            el(out, "ApproximateNumberOfMessagesMoved", &moved.to_string());
        }
        "PurgeQueue" => svc.purge_queue(c, &queue_url(req, p)?)?,
        "ListDeadLetterSourceQueues" => {
            let page = svc.list_dead_letter_source_queues(
                c,
                &queue_url(req, p)?,
                opt_int(p, "MaxResults")?,
                p.get("NextToken"),
            )?;
            write_page(out, &page);
        }
        other => return Err(unknown_operation(other)),
    }
    Ok(())
}
