//! DynamoDB stream event source mappings: a poller per enabled mapping reads the stream through
//! DynamoDB's typed operations from its checkpoint (`StreamSettings::position`, stored with the
//! mapping, so a restart resumes where delivery stopped), drops the records FilterCriteria does
//! not match, and invokes the function with `{"Records": [...]}` (each record with its
//! `eventSourceARN`, a TTL deletion's `userIdentity` spelt as Lambda's event spells it), synchronously, one batch at a time, so records arrive in stream order.
//!
//! A batch the function fails is retried, in order, until it succeeds or its retries are spent
//! (`MaximumRetryAttempts`, -1 for ever as AWS's default); with `BisectBatchOnFunctionError`
//! each failure halves the batch first (without counting as a retry while it can still halve,
//! as AWS). A batch whose retries are spent goes, described as AWS describes it, to the
//! `DestinationConfig.OnFailure` queue or topic, and delivery moves past it. With
//! ReportBatchItemFailures, the `batchItemFailures` the function answers (sequence numbers)
//! move the checkpoint to the lowest one named and retry from there, as AWS does.

use super::Lambda;
use super::esm::{BatchResult, invoke_batch};
use super::model::EventSourceMapping;
use cumulo_wire::AwsError;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// Whether an event source ARN names a DynamoDB stream.
pub fn is_dynamodb_stream(arn: &str) -> bool {
    arn.starts_with("arn:") && arn.split(':').nth(2) == Some("dynamodb") && arn.contains("/stream/")
}

/// Whether a record passes the mapping's FilterCriteria (no filters: every record).
pub fn passes(filters: &[crate::events::Pattern], record: &Value) -> bool {
    filters.is_empty() || filters.iter().any(|p| p.matches(record))
}

/// The mapping's filter patterns, parsed (checked when the mapping is created or updated).
pub fn patterns(criteria: Option<&Value>) -> Result<Vec<crate::events::Pattern>, AwsError> {
    let Some(filters) = criteria
        .and_then(|c| c.get("Filters"))
        .and_then(Value::as_array)
    else {
        return Ok(Vec::new());
    };
    filters
        .iter()
        .map(|f| {
            let text = f.get("Pattern").and_then(Value::as_str).unwrap_or("{}");
            // AWS's message names no reason.
            crate::events::Pattern::parse(text)
                .map_err(|_| super::ops::invalid_parameter("Invalid filter pattern definition."))
        })
        .collect()
}

enum Outcome {
    Done,
    Failed(Option<String>),
    /// ReportBatchItemFailures named this sequence number (the lowest it named): what came
    /// before it is done, and the batch is retried from it.
    Partial(u64),
}

fn parse_seq(s: &str) -> Option<u64> {
    crate::dynamodb::streams::parse_seq(s)
}

pub(super) async fn poll(core: Arc<Lambda>, uuid: String, mut wake: watch::Receiver<bool>) {
    // Failures of the batch at the checkpoint, and how far bisection has narrowed it.
    let mut attempts: i64 = 0;
    let mut narrowed: Option<usize> = None;
    loop {
        let Some(m) = core.lock().mappings.get(&uuid).cloned() else {
            return;
        };
        if !m.enabled {
            if wake.changed().await.is_err() {
                return;
            }
            continue;
        }
        let position = m.stream.position.unwrap_or(0);
        let batch = narrowed.unwrap_or(m.batch_size as usize).max(1);
        let page = match gather(&core, &m, position, batch, &mut wake).await {
            Some(p) => p,
            None => return,
        };
        let (records, next) = match page {
            Ok(p) => (p.records, p.next),
            Err(_) => {
                // The stream is gone (past retention): nothing more will come.
                if wait(&mut wake, Duration::from_secs(5)).await.is_err() {
                    return;
                }
                continue;
            }
        };
        if records.is_empty() {
            if next.is_none() {
                // A closed shard read to its end.
                if wake.changed().await.is_err() {
                    return;
                }
                continue;
            }
            if wait(&mut wake, Duration::from_millis(250)).await.is_err() {
                return;
            }
            continue;
        }
        let Some(next) = next.or_else(|| last_seq(&records).map(|s| s + 1)) else {
            continue;
        };
        let filters = patterns(m.filter_criteria.as_ref()).unwrap_or_default();
        let delivered: Vec<Value> = records
            .iter()
            .filter(|r| passes(&filters, r))
            .map(|r| {
                let mut r = r.clone();
                r["eventSourceARN"] = json!(m.event_source_arn);
                if let Some(id) = r.get("userIdentity").cloned() {
                    r["userIdentity"] =
                        json!({"type": id["Type"], "principalId": id["PrincipalId"]});
                }
                r
            })
            .collect();
        let outcome = if delivered.is_empty() {
            Outcome::Done
        } else {
            invoke(&core, &m, &delivered).await
        };
        match outcome {
            Outcome::Done => {
                attempts = 0;
                narrowed = None;
                checkpoint(&core, &uuid, next);
            }
            Outcome::Partial(seq) if seq >= next => {
                // A sequence number outside the batch: nothing of it failed.
                attempts = 0;
                narrowed = None;
                checkpoint(&core, &uuid, next);
            }
            Outcome::Partial(seq) => {
                checkpoint(&core, &uuid, seq.max(position));
                attempts += 1;
                let max = m.stream.maximum_retry_attempts.unwrap_or(-1);
                if max >= 0 && attempts > max {
                    let rest: Vec<Value> = records
                        .iter()
                        .filter(|r| last_seq(std::slice::from_ref(r)).is_some_and(|s| s >= seq))
                        .cloned()
                        .collect();
                    on_failure(&core, &m, &rest, attempts, None);
                    attempts = 0;
                    checkpoint(&core, &uuid, next);
                } else if wait(&mut wake, Duration::from_millis(500)).await.is_err() {
                    return;
                }
            }
            Outcome::Failed(error) => {
                if m.stream.bisect_batch_on_function_error && records.len() > 1 {
                    narrowed = Some(records.len() / 2);
                    continue;
                }
                attempts += 1;
                let max = m.stream.maximum_retry_attempts.unwrap_or(-1);
                if max >= 0 && attempts > max {
                    on_failure(&core, &m, &records, attempts, error.as_deref());
                    attempts = 0;
                    narrowed = None;
                    checkpoint(&core, &uuid, next);
                } else if wait(&mut wake, Duration::from_millis(500)).await.is_err() {
                    return;
                }
            }
        }
    }
}

/// Reads a batch, waiting up to the batching window for it to fill; `None` when the mapping
/// was deleted meanwhile.
async fn gather(
    core: &Lambda,
    m: &EventSourceMapping,
    position: u64,
    batch: usize,
    wake: &mut watch::Receiver<bool>,
) -> Option<Result<crate::dynamodb::RecordsPage, AwsError>> {
    let window = Duration::from_secs(m.maximum_batching_window as u64);
    let started = Instant::now();
    loop {
        let page = core
            .dynamodb
            .stream_records(&m.event_source_arn, position, batch);
        let full = page
            .as_ref()
            .map_or(true, |p| p.records.len() >= batch || p.next.is_none());
        let empty = page.as_ref().is_ok_and(|p| p.records.is_empty());
        if full || empty || started.elapsed() >= window {
            return Some(page);
        }
        if wait(wake, Duration::from_millis(200)).await.is_err() {
            return None;
        }
    }
}

/// Sleeps, or returns early when the mapping changes; `Err` when it was deleted.
async fn wait(wake: &mut watch::Receiver<bool>, d: Duration) -> Result<(), ()> {
    tokio::select! {
        _ = tokio::time::sleep(d) => Ok(()),
        changed = wake.changed() => changed.map_err(|_| ()),
    }
}

fn last_seq(records: &[Value]) -> Option<u64> {
    records
        .last()?
        .pointer("/dynamodb/SequenceNumber")?
        .as_str()
        .and_then(parse_seq)
}

async fn invoke(core: &Arc<Lambda>, m: &EventSourceMapping, records: &[Value]) -> Outcome {
    match invoke_batch(core, m, records).await {
        BatchResult::NotInvoked(code) => Outcome::Failed(Some(code)),
        BatchResult::Failed(error) => Outcome::Failed(error),
        BatchResult::Delivered(failed) => match failed.iter().filter_map(|f| parse_seq(f)).min() {
            None => Outcome::Done,
            Some(seq) => Outcome::Partial(seq),
        },
    }
}

/// Moves the checkpoint past a delivered (or given up) batch, written through.
fn checkpoint(core: &Lambda, uuid: &str, next: u64) {
    let done = core.mutate_mapping(uuid, |m| {
        m.stream.position = Some(next);
        Ok(())
    });
    if let Err(e) = done {
        eprintln!("cumulo: lambda: cannot store the checkpoint of mapping {uuid}: {e}");
    }
}

/// Sends AWS's description of a batch whose retries are spent to the OnFailure destination.
fn on_failure(
    core: &Lambda,
    m: &EventSourceMapping,
    records: &[Value],
    attempts: i64,
    error: Option<&str>,
) {
    let Some(dest) = &m.stream.on_failure else {
        return;
    };
    let seq = |r: Option<&Value>| {
        r.and_then(|r| r.pointer("/dynamodb/SequenceNumber"))
            .cloned()
            .unwrap_or(Value::Null)
    };
    let at = |r: Option<&Value>| {
        r.and_then(|r| r.pointer("/dynamodb/ApproximateCreationDateTime"))
            .and_then(Value::as_f64)
            .and_then(|s| chrono::DateTime::from_timestamp(s as i64, 0))
            .map(|t| t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string())
    };
    let shard = core
        .dynamodb
        .describe_stream(&m.event_source_arn, None, None)
        .ok()
        .and_then(|d| {
            d.pointer("/StreamDescription/Shards/0/ShardId")
                .and_then(Value::as_str)
                .map(str::to_string)
        });
    let message = json!({
        "requestContext": {
            "requestId": uuid::Uuid::new_v4().to_string(),
            "functionArn": super::names::function_arn(&m.region, core.account_id(), &m.function_name, None),
            "condition": "RetryAttemptsExhausted",
            "approximateInvokeCount": attempts,
        },
        "responseContext": {
            "statusCode": 200,
            "executedVersion": "$LATEST",
            "functionError": error.unwrap_or("Unhandled"),
        },
        "version": "1.0",
        "timestamp": chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        "DDBStreamBatchInfo": {
            "shardId": shard,
            "startSequenceNumber": seq(records.first()),
            "endSequenceNumber": seq(records.last()),
            "approximateArrivalOfFirstRecord": at(records.first()),
            "approximateArrivalOfLastRecord": at(records.last()),
            "batchSize": records.len(),
            "streamArn": m.event_source_arn,
        },
    })
    .to_string();
    let sent = match dest.split(':').nth(2) {
        Some("sqs") => core
            .sqs
            .send_message_to_arn(dest, &message, &json!({}), None, None)
            .map(|_| ()),
        Some("sns") => {
            let region = dest.split(':').nth(3).unwrap_or(&m.region);
            core.sns
                .publish(
                    region,
                    &format!("http://{}", m.host),
                    crate::sns::PublishInput {
                        topic_arn: Some(dest.clone()),
                        message,
                        ..Default::default()
                    },
                )
                .map(|_| ())
        }
        _ => Ok(()),
    };
    if let Err(e) = sent {
        eprintln!(
            "cumulo: lambda: mapping {}: cannot send the failed batch to {dest}: {e}",
            m.uuid
        );
    }
}

/// The checkpoint a new mapping starts from (its StartingPosition).
pub fn starting_checkpoint(core: &Lambda, arn: &str, position: &str) -> Result<u64, AwsError> {
    core.dynamodb
        .stream_start(arn, position)
        .map_err(|_| super::ops::invalid_parameter(format!("Stream not found: {arn}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_arns_and_filters() {
        assert!(is_dynamodb_stream(
            "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/2026-01-01T00:00:00.000"
        ));
        assert!(!is_dynamodb_stream("arn:aws:sqs:us-east-1:000000000000:q"));
        assert!(!is_dynamodb_stream(
            "arn:aws:dynamodb:us-east-1:000000000000:table/t"
        ));
        let criteria = json!({"Filters": [{"Pattern": "{\"eventName\": [\"INSERT\"]}"}]});
        let f = patterns(Some(&criteria)).expect("patterns");
        assert!(passes(&f, &json!({"eventName": "INSERT"})));
        assert!(!passes(&f, &json!({"eventName": "REMOVE"})));
        assert!(passes(&[], &json!({"eventName": "REMOVE"})));
        let bad = json!({"Filters": [{"Pattern": "{\"eventName\": \"INSERT\"}"}]});
        assert!(patterns(Some(&bad)).is_err());
    }
}
