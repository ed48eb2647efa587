//! The awsJson1_0 adapter: `X-Amz-Target: AmazonSQS.<Operation>` with a JSON body, decoded into
//! the typed operations and encoded back in the shapes of botocore's SQS model. Errors carry the
//! legacy query code in `x-amzn-query-error` (SQS is awsQueryCompatible).

use super::errors::{missing_parameter, serialization};
use super::model::*;
use super::{Caller, SqsService};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

const CONTENT_TYPE: &str = "application/x-amz-json-1.0";

pub async fn handle(svc: &SqsService, req: &AwsRequest) -> AwsResponse {
    let op = req.target_operation().unwrap_or("").to_string();
    let result = match parse_body(req) {
        Ok(body) => dispatch(svc, req, &op, &body).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(v) => {
            AwsResponse::json(CONTENT_TYPE, &v).with_header("x-amzn-requestid", &req.request_id)
        }
        Err(e) => e.into_response(Protocol::Json10, &req.request_id),
    }
}

fn parse_body(req: &AwsRequest) -> Result<Value, AwsError> {
    if req.body.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    match serde_json::from_slice::<Value>(&req.body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        _ => Err(serialization(
            "The request body is not a valid JSON object.",
        )),
    }
}

async fn dispatch(
    svc: &SqsService,
    req: &AwsRequest,
    op: &str,
    b: &Value,
) -> Result<Value, AwsError> {
    let caller = Caller::from(req);
    let c = &caller;
    Ok(match op {
        "CreateQueue" => {
            let name = opt_str(b, "QueueName")?.unwrap_or_default();
            let url = svc
                .create_queue(
                    c,
                    &name,
                    &string_map(b, "Attributes")?,
                    &string_map(b, "tags")?,
                )
                .await?;
            json!({ "QueueUrl": url })
        }
        "DeleteQueue" => {
            svc.delete_queue(c, &queue_url(b)?).await?;
            json!({})
        }
        "GetQueueUrl" => {
            let name = opt_str(b, "QueueName")?.unwrap_or_default();
            let owner = opt_str(b, "QueueOwnerAWSAccountId")?;
            json!({ "QueueUrl": svc.get_queue_url(c, &name, owner.as_deref())? })
        }
        "ListQueues" => {
            let page = svc.list_queues(
                c,
                opt_str(b, "QueueNamePrefix")?.as_deref(),
                opt_int(b, "MaxResults")?,
                opt_str(b, "NextToken")?.as_deref(),
            )?;
            url_page(page, "QueueUrls", false)
        }
        "GetQueueAttributes" => {
            let names = string_list(b, "AttributeNames")?;
            let attrs = svc.get_queue_attributes(c, &queue_url(b)?, &names)?;
            if attrs.is_empty() {
                json!({})
            } else {
                let m: Map<String, Value> = attrs
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect();
                json!({ "Attributes": m })
            }
        }
        "SetQueueAttributes" => {
            svc.set_queue_attributes(c, &queue_url(b)?, &string_map(b, "Attributes")?)
                .await?;
            json!({})
        }
        "TagQueue" => {
            svc.tag_queue(c, &queue_url(b)?, &string_map(b, "Tags")?)
                .await?;
            json!({})
        }
        "UntagQueue" => {
            svc.untag_queue(c, &queue_url(b)?, &string_list(b, "TagKeys")?)
                .await?;
            json!({})
        }
        "ListQueueTags" => {
            let tags = svc.list_queue_tags(c, &queue_url(b)?)?;
            if tags.is_empty() {
                json!({})
            } else {
                json!({ "Tags": tags })
            }
        }
        "SendMessage" => {
            let out = svc.send_message(c, &queue_url(b)?, &send_input(b)?)?;
            send_result(None, &out)
        }
        "SendMessageBatch" => {
            let url = queue_url(b)?;
            let entries = entries(b)?
                .iter()
                .map(|e| Ok((entry_id(e)?, send_input(e)?)))
                .collect::<Result<Vec<_>, AwsError>>()?;
            let out = svc.send_message_batch(c, &url, &entries)?;
            batch_result(out, |id, r| send_result(Some(id), r))
        }
        "ReceiveMessage" => {
            let mut names = string_list(b, "AttributeNames")?;
            names.extend(string_list(b, "MessageSystemAttributeNames")?);
            let input = ReceiveMessageInput {
                max_number_of_messages: opt_int(b, "MaxNumberOfMessages")?,
                visibility_timeout: opt_int(b, "VisibilityTimeout")?,
                wait_time_seconds: opt_int(b, "WaitTimeSeconds")?,
                system_attribute_names: names,
                message_attribute_names: string_list(b, "MessageAttributeNames")?,
                receive_request_attempt_id: opt_str(b, "ReceiveRequestAttemptId")?,
            };
            let messages = svc.receive_message(c, &queue_url(b)?, &input).await?;
            if messages.is_empty() {
                json!({})
            } else {
                json!({ "Messages": messages.iter().map(received).collect::<Vec<_>>() })
            }
        }
        "DeleteMessage" => {
            let handle = required_str(b, "ReceiptHandle")?;
            svc.delete_message(c, &queue_url(b)?, &handle)?;
            json!({})
        }
        "DeleteMessageBatch" => {
            let url = queue_url(b)?;
            let entries = entries(b)?
                .iter()
                .map(|e| Ok((entry_id(e)?, required_str(e, "ReceiptHandle")?)))
                .collect::<Result<Vec<_>, AwsError>>()?;
            let out = svc.delete_message_batch(c, &url, &entries)?;
            batch_result(out, |id, _| json!({ "Id": id }))
        }
        "ChangeMessageVisibility" => {
            let handle = required_str(b, "ReceiptHandle")?;
            let timeout = opt_int(b, "VisibilityTimeout")?
                .ok_or_else(|| missing_parameter("VisibilityTimeout"))?;
            svc.change_message_visibility(c, &queue_url(b)?, &handle, timeout)?;
            json!({})
        }
        "ChangeMessageVisibilityBatch" => {
            let url = queue_url(b)?;
            let entries = entries(b)?
                .iter()
                .map(|e| {
                    let timeout = opt_int(e, "VisibilityTimeout")?
                        .ok_or_else(|| missing_parameter("VisibilityTimeout"))?;
                    Ok((entry_id(e)?, required_str(e, "ReceiptHandle")?, timeout))
                })
                .collect::<Result<Vec<_>, AwsError>>()?;
            let out = svc.change_message_visibility_batch(c, &url, &entries)?;
            batch_result(out, |id, _| json!({ "Id": id }))
        }
        "AddPermission" => {
            let label = opt_str(b, "Label")?.unwrap_or_default();
            let accounts = string_list(b, "AWSAccountIds")?;
            let actions = string_list(b, "Actions")?;
            svc.add_permission(c, &queue_url(b)?, &label, &accounts, &actions)
                .await?;
            json!({})
        }
        "RemovePermission" => {
            let label = opt_str(b, "Label")?.unwrap_or_default();
            svc.remove_permission(c, &queue_url(b)?, &label).await?;
            json!({})
        }
        "StartMessageMoveTask" => {
            let handle = svc.start_message_move_task(
                c,
                &required_str(b, "SourceArn")?,
                opt_str(b, "DestinationArn")?.as_deref(),
                opt_int(b, "MaxNumberOfMessagesPerSecond")?,
            )?;
            json!({ "TaskHandle": handle })
        }
        "ListMessageMoveTasks" => {
            let tasks = svc.list_message_move_tasks(
                c,
                &required_str(b, "SourceArn")?,
                opt_int(b, "MaxResults")?,
            )?;
            json!({ "Results": tasks.iter().map(move_task).collect::<Vec<_>>() })
        }
        "CancelMessageMoveTask" => {
            let moved = svc.cancel_message_move_task(c, &required_str(b, "TaskHandle")?)?;
            json!({ "ApproximateNumberOfMessagesMoved": moved })
        }
        "PurgeQueue" => {
            svc.purge_queue(c, &queue_url(b)?)?;
            json!({})
        }
        "ListDeadLetterSourceQueues" => {
            let page = svc.list_dead_letter_source_queues(
                c,
                &queue_url(b)?,
                opt_int(b, "MaxResults")?,
                opt_str(b, "NextToken")?.as_deref(),
            )?;
            url_page(page, "queueUrls", true)
        }
        other => return Err(super::unknown_operation(other)),
    })
}

fn opt_str(b: &Value, field: &str) -> Result<Option<String>, AwsError> {
    match b.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(serialization(format!("{field} must be a string."))),
    }
}

fn required_str(b: &Value, field: &str) -> Result<String, AwsError> {
    opt_str(b, field)?.ok_or_else(|| missing_parameter(field))
}

fn queue_url(b: &Value) -> Result<String, AwsError> {
    required_str(b, "QueueUrl")
}

fn opt_int(b: &Value, field: &str) -> Result<Option<i64>, AwsError> {
    match b.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_i64()
            .map(Some)
            .ok_or_else(|| serialization(format!("{field} must be an integer."))),
        Some(_) => Err(serialization(format!("{field} must be an integer."))),
    }
}

fn string_map(b: &Value, field: &str) -> Result<BTreeMap<String, String>, AwsError> {
    match b.get(field) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(m)) => m
            .iter()
            .map(|(k, v)| match v {
                Value::String(s) => Ok((k.clone(), s.clone())),
                _ => Err(serialization(format!("{field}.{k} must be a string."))),
            })
            .collect(),
        Some(_) => Err(serialization(format!("{field} must be a map."))),
    }
}

fn string_list(b: &Value, field: &str) -> Result<Vec<String>, AwsError> {
    match b.get(field) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| {
                v.as_str()
                    .map(str::to_string)
                    .ok_or_else(|| serialization(format!("{field} must be a list of strings.")))
            })
            .collect(),
        Some(_) => Err(serialization(format!("{field} must be a list."))),
    }
}

fn entries(b: &Value) -> Result<Vec<Value>, AwsError> {
    match b.get("Entries") {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => Ok(a.clone()),
        Some(_) => Err(serialization("Entries must be a list.")),
    }
}

fn entry_id(e: &Value) -> Result<String, AwsError> {
    required_str(e, "Id")
}

/// Decodes the JSON shape of message attributes (`{"n": {"DataType": .., "StringValue": ..}}`,
/// binary values base64) — also what SNS hands to `send_message_to_arn`.
pub fn message_attributes(v: &Value) -> Result<MessageAttributes, AwsError> {
    let obj = match v {
        Value::Null => return Ok(MessageAttributes::new()),
        Value::Object(o) => o,
        _ => return Err(serialization("MessageAttributes must be a map.")),
    };
    obj.iter()
        .map(|(name, a)| {
            let binary_value = match opt_str(a, "BinaryValue")? {
                Some(s) => Some(B64.decode(s).map_err(|_| {
                    serialization(format!("BinaryValue of {name} is not valid base64."))
                })?),
                None => None,
            };
            Ok((
                name.clone(),
                MessageAttributeValue {
                    data_type: opt_str(a, "DataType")?.unwrap_or_default(),
                    string_value: opt_str(a, "StringValue")?,
                    binary_value,
                },
            ))
        })
        .collect()
}

fn send_input(b: &Value) -> Result<SendMessageInput, AwsError> {
    Ok(SendMessageInput {
        body: required_str(b, "MessageBody")?,
        delay_seconds: opt_int(b, "DelaySeconds")?,
        message_attributes: message_attributes(b.get("MessageAttributes").unwrap_or(&Value::Null))?,
        system_attributes: message_attributes(
            b.get("MessageSystemAttributes").unwrap_or(&Value::Null),
        )?,
        group_id: opt_str(b, "MessageGroupId")?,
        dedup_id: opt_str(b, "MessageDeduplicationId")?,
    })
}

fn send_result(id: Option<&str>, out: &SendMessageOutput) -> Value {
    let mut m = Map::new();
    if let Some(id) = id {
        m.insert("Id".into(), id.into());
    }
    m.insert("MessageId".into(), out.message_id.clone().into());
    m.insert("MD5OfMessageBody".into(), out.md5_of_body.clone().into());
    if let Some(v) = &out.md5_of_message_attributes {
        m.insert("MD5OfMessageAttributes".into(), v.clone().into());
    }
    if let Some(v) = &out.md5_of_system_attributes {
        m.insert("MD5OfMessageSystemAttributes".into(), v.clone().into());
    }
    if let Some(v) = &out.sequence_number {
        m.insert("SequenceNumber".into(), v.clone().into());
    }
    Value::Object(m)
}

fn batch_result<T>(out: BatchOutput<T>, ok: impl Fn(&str, &T) -> Value) -> Value {
    json!({
        "Successful": out.successful.iter().map(|(id, r)| ok(id, r)).collect::<Vec<_>>(),
        "Failed": out.failed.iter().map(|f| json!({
            "Id": f.id, "SenderFault": f.sender_fault, "Code": f.code, "Message": f.message,
        })).collect::<Vec<_>>(),
    })
}

/// `required` lists (ListDeadLetterSourceQueues' `queueUrls`) are sent even when empty.
fn url_page(page: QueueUrlPage, field: &str, required: bool) -> Value {
    let mut m = Map::new();
    if required || !page.queue_urls.is_empty() {
        m.insert(field.into(), page.queue_urls.into());
    }
    if let Some(t) = page.next_token {
        m.insert("NextToken".into(), t.into());
    }
    Value::Object(m)
}

fn received(m: &ReceivedMessage) -> Value {
    let mut o = Map::new();
    o.insert("MessageId".into(), m.message_id.clone().into());
    o.insert("ReceiptHandle".into(), m.receipt_handle.clone().into());
    o.insert("MD5OfBody".into(), m.md5_of_body.clone().into());
    o.insert("Body".into(), m.body.clone().into());
    if !m.attributes.is_empty() {
        o.insert("Attributes".into(), json!(m.attributes));
    }
    if let Some(md5) = &m.md5_of_message_attributes {
        o.insert("MD5OfMessageAttributes".into(), md5.clone().into());
    }
    if !m.message_attributes.is_empty() {
        let attrs: Map<String, Value> = m
            .message_attributes
            .iter()
            .map(|(k, v)| {
                let mut a = Map::new();
                if let Some(s) = &v.string_value {
                    a.insert("StringValue".into(), s.clone().into());
                }
                if let Some(b) = &v.binary_value {
                    a.insert("BinaryValue".into(), B64.encode(b).into());
                }
                a.insert("DataType".into(), v.data_type.clone().into());
                (k.clone(), Value::Object(a))
            })
            .collect();
        o.insert("MessageAttributes".into(), Value::Object(attrs));
    }
    Value::Object(o)
}

fn move_task(t: &super::state::MoveTask) -> Value {
    let mut o = Map::new();
    o.insert("Status".into(), t.status.clone().into());
    o.insert("SourceArn".into(), t.source_arn.clone().into());
    if let Some(d) = &t.destination_arn {
        o.insert("DestinationArn".into(), d.clone().into());
    }
    if let Some(r) = t.max_per_second {
        o.insert("MaxNumberOfMessagesPerSecond".into(), r.into());
    }
    o.insert("ApproximateNumberOfMessagesMoved".into(), t.moved.into());
    o.insert("ApproximateNumberOfMessagesToMove".into(), t.to_move.into());
    if let Some(f) = &t.failure_reason {
        o.insert("FailureReason".into(), f.clone().into());
    }
    o.insert("StartedTimestamp".into(), t.started_ms.into());
    Value::Object(o)
}
