//! SQS event source mappings: a poller per enabled mapping receives batches from the queue
//! through SQS's typed operations, invokes the function with `{"Records": [...]}` as AWS
//! does, and deletes what succeeded — all of the batch, or all but the `batchItemFailures` the
//! function reported when the mapping has ReportBatchItemFailures. A failed invocation leaves
//! the batch to reappear after the queue's visibility timeout. DynamoDB stream sources are
//! polled by `esm_streams`; Kinesis is not emulated, so its stream ARNs are refused.

use super::esm_streams::{self, is_dynamodb_stream, passes, patterns};
use super::invoke::InvocationType;
use super::model::{EventSourceMapping, StreamSettings};
use super::names::{function_arn, parse_function};
use super::ops::{invalid_parameter, validation};
use super::wire::{Body, body, flag, i, ok, s, strings};
use super::{Lambda, state, store_error};
use crate::sqs::Caller;
use crate::sqs::model::{ReceiveMessageInput, ReceivedMessage};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use http::{Method, StatusCode};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, PoisonError};
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// What Create/UpdateEventSourceMapping take (only what is present changes on update).
#[derive(Debug, Clone, Default)]
pub struct MappingInput {
    pub event_source_arn: Option<String>,
    pub function_name: Option<String>,
    pub enabled: Option<bool>,
    pub batch_size: Option<i64>,
    pub maximum_batching_window: Option<i64>,
    pub report_batch_item_failures: Option<bool>,
    /// Create only (UpdateEventSourceMapping takes no tags).
    pub tags: BTreeMap<String, String>,
    pub filter_criteria: Option<Value>,
    /// Create only.
    pub starting_position: Option<String>,
    pub maximum_retry_attempts: Option<i64>,
    pub bisect_batch_on_function_error: Option<bool>,
    /// `Some(None)`: the OnFailure destination removed.
    pub on_failure: Option<Option<String>>,
    pub maximum_record_age: Option<i64>,
    pub parallelization_factor: Option<i64>,
    pub tumbling_window: Option<i64>,
}

impl MappingInput {
    /// The stream-only settings given, for refusing them on an SQS source.
    fn stream_settings_given(&self) -> Option<&'static str> {
        [
            (self.starting_position.is_some(), "StartingPosition"),
            (
                self.maximum_retry_attempts.is_some(),
                "MaximumRetryAttempts",
            ),
            (
                self.bisect_batch_on_function_error.is_some(),
                "BisectBatchOnFunctionError",
            ),
            (self.on_failure.is_some(), "DestinationConfig"),
            (
                self.maximum_record_age.is_some(),
                "MaximumRecordAgeInSeconds",
            ),
            (
                self.parallelization_factor.is_some(),
                "ParallelizationFactor",
            ),
            (self.tumbling_window.is_some(), "TumblingWindowInSeconds"),
        ]
        .into_iter()
        .find(|(given, _)| *given)
        .map(|(_, name)| name)
    }

    /// Applies the stream settings given to a mapping's.
    fn apply_stream(&self, s: &mut StreamSettings) -> Result<(), AwsError> {
        if let Some(n) = self.maximum_retry_attempts {
            if !(-1..=10_000).contains(&n) {
                return Err(validation(
                    "maximumRetryAttempts",
                    n,
                    "Member must have value less than or equal to 10000",
                ));
            }
            s.maximum_retry_attempts = Some(n);
        }
        if let Some(b) = self.bisect_batch_on_function_error {
            s.bisect_batch_on_function_error = b;
        }
        if let Some(d) = &self.on_failure {
            if let Some(arn) = d
                && !matches!(arn.split(':').nth(2), Some("sqs" | "sns"))
            {
                return Err(invalid_parameter(format!(
                    "cumulo: the OnFailure destination {arn} is not an SQS queue or SNS topic"
                )));
            }
            s.on_failure = d.clone();
        }
        if self.maximum_record_age.is_some() {
            s.maximum_record_age = self.maximum_record_age;
        }
        if self.parallelization_factor.is_some() {
            s.parallelization_factor = self.parallelization_factor;
        }
        if self.tumbling_window.is_some() {
            s.tumbling_window = self.tumbling_window;
        }
        Ok(())
    }
}

fn mapping_not_found(uuid: &str) -> AwsError {
    AwsError::not_found(
        "ResourceNotFoundException",
        format!(
            "The resource you requested does not exist. (Service: Lambda, Status Code: 404, Request ID: {uuid})"
        ),
    )
}

fn check_batching(batch: i64, window: i64, stream: bool) -> Result<(), AwsError> {
    if !(1..=10_000).contains(&batch) {
        let source = if stream { "DynamoDB streams" } else { "SQS" };
        return Err(invalid_parameter(format!(
            "BatchSize {batch} is out of range: for {source} it must be between 1 and 10000"
        )));
    }
    if stream {
        return if (0..=300).contains(&window) {
            Ok(())
        } else {
            Err(validation(
                "maximumBatchingWindowInSeconds",
                window,
                "Member must have value less than or equal to 300",
            ))
        };
    }
    if !(0..=300).contains(&window) {
        return Err(validation(
            "maximumBatchingWindowInSeconds",
            window,
            "Member must have value less than or equal to 300",
        ));
    }
    if batch > 10 && window < 1 {
        return Err(invalid_parameter(
            "Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10",
        ));
    }
    Ok(())
}

impl Lambda {
    /// CreateEventSourceMapping (SQS queues and DynamoDB streams). `host` is how the caller
    /// reached cumulo, for the queue URL the poller uses.
    pub fn create_event_source_mapping(
        self: &Arc<Self>,
        region: &str,
        input: MappingInput,
        host: &str,
    ) -> Result<EventSourceMapping, AwsError> {
        let source = input
            .event_source_arn
            .clone()
            .ok_or_else(|| invalid_parameter("EventSourceArn is required for SQS event sources"))?;
        if source.split(':').nth(2) == Some("kinesis") {
            return Err(invalid_parameter(format!(
                "cumulo: Amazon Kinesis is not emulated, so {source} cannot be an event source"
            )));
        }
        let stream = is_dynamodb_stream(&source);
        if !stream && crate::sqs::ops::parse_queue_arn(&source).is_none() {
            return Err(invalid_parameter(format!(
                "cumulo: only Amazon SQS queues and DynamoDB streams are emulated event sources; {source} is neither"
            )));
        }
        let function = input
            .function_name
            .clone()
            .ok_or_else(|| invalid_parameter("FunctionName is required"))?;
        super::config::refuse_reserved(&input.tags)?;
        self.resolve(region, &function, None)?;
        let batch = input.batch_size.unwrap_or(if stream { 100 } else { 10 });
        let window = input.maximum_batching_window.unwrap_or(0);
        check_batching(batch, window, stream)?;
        patterns(input.filter_criteria.as_ref())?;
        let mut settings = StreamSettings::default();
        if stream {
            let position = input.starting_position.clone().ok_or_else(|| {
                invalid_parameter("1 validation error detected: Value null at 'startingPosition' failed to satisfy constraint: Member must not be null.")
            })?;
            match position.as_str() {
                "TRIM_HORIZON" | "LATEST" => {}
                "AT_TIMESTAMP" => {
                    return Err(invalid_parameter(format!(
                        "Unsupported starting position for arn type: {source}"
                    )));
                }
                other => {
                    return Err(validation(
                        "startingPosition",
                        other,
                        "Member must satisfy enum value set: [LATEST, AT_TIMESTAMP, TRIM_HORIZON]",
                    ));
                }
            }
            let taken = self.lock().mappings.values().find_map(|m| {
                (m.event_source_arn == source
                    && parse_function(&m.function_name).ok() == parse_function(&function).ok())
                .then(|| m.uuid.clone())
            });
            if let Some(uuid) = taken {
                return Err(AwsError::new(
                    StatusCode::CONFLICT,
                    "ResourceConflictException",
                    format!(
                        "The event source arn (\" {source} \") and function (\" {function} \") provided mapping already exists. Please update or delete the existing mapping with UUID {uuid}"
                    ),
                ));
            }
            input.apply_stream(&mut settings)?;
            settings.position = Some(esm_streams::starting_checkpoint(self, &source, &position)?);
            settings.starting_position = Some(position);
        } else {
            if let Some(name) = input.stream_settings_given() {
                return Err(invalid_parameter(format!(
                    "cumulo: {name} applies to stream event sources, not to the SQS queue {source}"
                )));
            }
            let q_region = crate::sqs::ops::parse_queue_arn(&source)
                .map(|(r, _, _)| r)
                .unwrap_or(region);
            let caller = self.sqs_caller(q_region, host);
            self.sqs
                .get_queue_attributes(&caller, &queue_url(&caller, &source), &[])
                .map_err(|e| {
                    invalid_parameter(format!(
                        "Error occurred while ReceiveMessage. SQS Error Code: {}. SQS Error Message: {}",
                        e.code, e.message
                    ))
                })?;
        }
        let m = EventSourceMapping {
            uuid: uuid::Uuid::new_v4().to_string(),
            region: region.to_string(),
            event_source_arn: source,
            function_name: function,
            batch_size: batch,
            maximum_batching_window: window,
            enabled: input.enabled.unwrap_or(true),
            report_batch_item_failures: input.report_batch_item_failures.unwrap_or(false),
            last_modified: now_seconds(),
            host: host.to_string(),
            tags: input.tags,
            stream: settings,
            filter_criteria: input.filter_criteria.filter(|c| !c.is_null()),
        };
        self.store
            .write(|tx| state::put_mapping(tx, &m))
            .map_err(store_error)?;
        self.lock().mappings.insert(m.uuid.clone(), m.clone());
        start(self, &m.uuid);
        Ok(m)
    }

    pub fn get_event_source_mapping(&self, uuid: &str) -> Result<EventSourceMapping, AwsError> {
        self.lock()
            .mappings
            .get(uuid)
            .cloned()
            .ok_or_else(|| mapping_not_found(uuid))
    }

    /// ListEventSourceMappings, optionally for one queue and/or one function.
    pub fn list_event_source_mappings(
        &self,
        region: &str,
        source: Option<&str>,
        function: Option<&str>,
    ) -> Result<Vec<EventSourceMapping>, AwsError> {
        let function = function.map(parse_function).transpose()?;
        let st = self.lock();
        let mut out: Vec<EventSourceMapping> = st
            .mappings
            .values()
            .filter(|m| m.region == region)
            .filter(|m| source.is_none_or(|s| m.event_source_arn == s))
            .filter(|m| {
                function.as_ref().is_none_or(|(name, _)| {
                    parse_function(&m.function_name).is_ok_and(|(n, _)| &n == name)
                })
            })
            .cloned()
            .collect();
        out.sort_by(|a, b| a.uuid.cmp(&b.uuid));
        Ok(out)
    }

    pub fn update_event_source_mapping(
        self: &Arc<Self>,
        region: &str,
        uuid: &str,
        input: MappingInput,
    ) -> Result<EventSourceMapping, AwsError> {
        let mut m = self.get_event_source_mapping(uuid)?;
        if let Some(f) = &input.function_name {
            self.resolve(region, f, None)?;
            m.function_name = f.clone();
        }
        if let Some(e) = input.enabled {
            m.enabled = e;
        }
        if let Some(b) = input.batch_size {
            m.batch_size = b;
        }
        if let Some(w) = input.maximum_batching_window {
            m.maximum_batching_window = w;
        }
        if let Some(r) = input.report_batch_item_failures {
            m.report_batch_item_failures = r;
        }
        if let Some(c) = input.filter_criteria.clone() {
            patterns(Some(&c))?;
            m.filter_criteria = Some(c).filter(|c| !c.is_null());
        }
        let stream = is_dynamodb_stream(&m.event_source_arn);
        if stream {
            input.apply_stream(&mut m.stream)?;
        } else if let Some(name) = input.stream_settings_given() {
            return Err(invalid_parameter(format!(
                "cumulo: {name} applies to stream event sources, not to an SQS queue"
            )));
        }
        check_batching(m.batch_size, m.maximum_batching_window, stream)?;
        m.last_modified = now_seconds();
        self.store
            .write(|tx| state::put_mapping(tx, &m))
            .map_err(store_error)?;
        self.lock().mappings.insert(m.uuid.clone(), m.clone());
        self.wake(uuid);
        Ok(m)
    }

    /// Changes one mapping and writes it through (its tags: nothing the poller reads).
    pub(super) fn mutate_mapping(
        &self,
        uuid: &str,
        f: impl FnOnce(&mut EventSourceMapping) -> Result<(), AwsError>,
    ) -> Result<(), AwsError> {
        let mut st = self.lock();
        let mut m = st
            .mappings
            .get(uuid)
            .cloned()
            .ok_or_else(|| mapping_not_found(uuid))?;
        f(&mut m)?;
        self.store
            .write(|tx| state::put_mapping(tx, &m))
            .map_err(store_error)?;
        st.mappings.insert(m.uuid.clone(), m);
        Ok(())
    }

    pub fn delete_event_source_mapping(&self, uuid: &str) -> Result<EventSourceMapping, AwsError> {
        let m = self.get_event_source_mapping(uuid)?;
        self.store
            .write(|tx| state::delete_mapping(tx, uuid))
            .map_err(store_error)?;
        self.lock().mappings.remove(uuid);
        // Dropping the sender stops the poller.
        self.pollers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(uuid);
        Ok(m)
    }

    fn wake(&self, uuid: &str) {
        if let Some(tx) = self
            .pollers
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(uuid)
        {
            let _ = tx.send(true);
        }
    }

    fn sqs_caller(&self, region: &str, host: &str) -> Caller {
        Caller {
            region: region.to_string(),
            account_id: self.account_id.clone(),
            host: host.to_string(),
            sender_id: self.account_id.clone(),
        }
    }
}

fn queue_url(caller: &Caller, arn: &str) -> String {
    let name = arn.rsplit(':').next().unwrap_or_default();
    caller.queue_url(name)
}

fn now_seconds() -> f64 {
    chrono::Utc::now().timestamp_millis() as f64 / 1000.0
}

/// Starts the pollers of every stored mapping (on service start).
pub(super) fn start_all(core: &Arc<Lambda>) {
    if tokio::runtime::Handle::try_current().is_err() {
        return;
    }
    let ids: Vec<String> = core.lock().mappings.keys().cloned().collect();
    for id in ids {
        start(core, &id);
    }
}

fn start(core: &Arc<Lambda>, uuid: &str) {
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let (tx, rx) = watch::channel(false);
    core.pollers
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .insert(uuid.to_string(), tx);
    let stream = core
        .lock()
        .mappings
        .get(uuid)
        .is_some_and(|m| is_dynamodb_stream(&m.event_source_arn));
    if stream {
        handle.spawn(esm_streams::poll(core.clone(), uuid.to_string(), rx));
    } else {
        handle.spawn(poll(core.clone(), uuid.to_string(), rx));
    }
}

async fn poll(core: Arc<Lambda>, uuid: String, mut wake: watch::Receiver<bool>) {
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
        let Some((q_region, _, _)) = crate::sqs::ops::parse_queue_arn(&m.event_source_arn) else {
            return;
        };
        let caller = core.sqs_caller(q_region, &m.host);
        let url = queue_url(&caller, &m.event_source_arn);
        let batch = tokio::select! {
            b = gather(&core, &caller, &url, &m) => b,
            changed = wake.changed() => {
                if changed.is_err() {
                    return;
                }
                continue;
            }
        };
        let messages = match batch {
            Ok(b) if b.is_empty() => continue,
            Ok(b) => b,
            Err(_) => {
                // The queue is gone or refuses: try again later rather than spin.
                tokio::select! {
                    _ = tokio::time::sleep(Duration::from_secs(2)) => {}
                    changed = wake.changed() => if changed.is_err() { return; },
                }
                continue;
            }
        };
        let filters = patterns(m.filter_criteria.as_ref()).unwrap_or_default();
        let (records, dropped): (Vec<Value>, Vec<&ReceivedMessage>) = {
            let mut kept = Vec::new();
            let mut dropped = Vec::new();
            for msg in &messages {
                let r = record(msg, &m.event_source_arn, q_region);
                if passes(&filters, &filterable(&r)) {
                    kept.push(r);
                } else {
                    dropped.push(msg);
                }
            }
            (kept, dropped)
        };
        // Messages no filter matches are deleted without an invocation, as on AWS.
        for msg in dropped {
            let _ = core.sqs.delete_message(&caller, &url, &msg.receipt_handle);
        }
        if records.is_empty() {
            continue;
        }
        let delivered: Vec<String> = records
            .iter()
            .filter_map(|r| r["messageId"].as_str().map(str::to_string))
            .collect();
        let failed = match invoke_batch(&core, &m, &records).await {
            BatchResult::NotInvoked(_) => {
                tokio::time::sleep(Duration::from_secs(1)).await;
                continue;
            }
            // The messages stay, to be received again after their visibility timeout.
            BatchResult::Failed(_) => continue,
            BatchResult::Delivered(failed) => failed,
        };
        for msg in &messages {
            if delivered.contains(&msg.message_id) && !failed.contains(&msg.message_id) {
                let _ = core.sqs.delete_message(&caller, &url, &msg.receipt_handle);
            }
        }
    }
}

/// Receives up to the mapping's batch size, waiting at most its batching window once the first
/// message has arrived (or long-polling for the first).
async fn gather(
    core: &Lambda,
    caller: &Caller,
    url: &str,
    m: &EventSourceMapping,
) -> Result<Vec<ReceivedMessage>, AwsError> {
    let mut batch: Vec<ReceivedMessage> = Vec::new();
    let window = Duration::from_secs(m.maximum_batching_window as u64);
    let mut first_at: Option<Instant> = None;
    loop {
        let want = (m.batch_size as usize - batch.len()).min(10);
        let wait = match first_at {
            None => 20,
            Some(t) => window.saturating_sub(t.elapsed()).as_secs().min(20) as i64,
        };
        let input = ReceiveMessageInput {
            max_number_of_messages: Some(want as i64),
            wait_time_seconds: Some(wait),
            system_attribute_names: vec!["All".into()],
            message_attribute_names: vec!["All".into()],
            ..Default::default()
        };
        let got = core.sqs.receive_message(caller, url, &input).await?;
        if !got.is_empty() && first_at.is_none() {
            first_at = Some(Instant::now());
        }
        let empty = got.is_empty();
        batch.extend(got);
        let window_over = first_at.is_some_and(|t| t.elapsed() >= window);
        if batch.len() >= m.batch_size as usize || window_over || (empty && first_at.is_some()) {
            return Ok(batch);
        }
        if empty {
            return Ok(batch);
        }
    }
}

/// One SQS record as Lambda delivers it.
fn record(msg: &ReceivedMessage, arn: &str, region: &str) -> Value {
    let attrs: serde_json::Map<String, Value> = msg
        .message_attributes
        .iter()
        .map(|(k, v)| {
            use base64::Engine;
            let mut a = json!({
                "stringListValues": [],
                "binaryListValues": [],
                "dataType": v.data_type,
            });
            if let Some(s) = &v.string_value {
                a["stringValue"] = json!(s);
            }
            if let Some(b) = &v.binary_value {
                a["binaryValue"] = json!(base64::engine::general_purpose::STANDARD.encode(b));
            }
            (k.clone(), a)
        })
        .collect();
    json!({
        "messageId": msg.message_id,
        "receiptHandle": msg.receipt_handle,
        "body": msg.body,
        "attributes": msg.attributes,
        "messageAttributes": attrs,
        "md5OfBody": msg.md5_of_body,
        "eventSource": "aws:sqs",
        "eventSourceARN": arn,
        "awsRegion": region,
    })
}

/// An SQS record as filter patterns see it: a JSON body as the JSON it holds, as on AWS.
fn filterable(record: &Value) -> Value {
    let mut r = record.clone();
    if let Some(body) = record["body"].as_str()
        && let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(body)
    {
        r["body"] = v;
    }
    r
}

/// What a poller's synchronous `{"Records": [...]}` invocation came to: the SQS and stream
/// pollers act on the same three answers.
pub(super) enum BatchResult {
    /// The function did not run (throttled, missing): the error's code.
    NotInvoked(String),
    /// The whole batch failed: the function's error type when it raised, `None` when its
    /// answer is not a readable batchItemFailures report.
    Failed(Option<String>),
    /// Delivered; the item identifiers the function reported failed (always empty without
    /// ReportBatchItemFailures).
    Delivered(Vec<String>),
}

/// Invokes the mapping's function with a batch of event records and waits for its answer.
pub(super) async fn invoke_batch(
    core: &Arc<Lambda>,
    m: &EventSourceMapping,
    records: &[Value],
) -> BatchResult {
    let payload = json!({ "Records": records }).to_string();
    let kind = InvocationType::RequestResponse;
    let invoked = core
        .invoke(
            &m.region,
            &m.function_name,
            None,
            payload.into(),
            kind,
            &m.host,
        )
        .await;
    match invoked.map(|i| i.output) {
        Err(e) => BatchResult::NotInvoked(e.code),
        // A RequestResponse invocation always has output; none is a failure, not a delivery.
        Ok(None) => BatchResult::Failed(None),
        Ok(Some(out)) if out.function_error.is_some() => BatchResult::Failed(out.function_error),
        Ok(Some(out)) if m.report_batch_item_failures => match batch_item_failures(&out.payload) {
            Some(failed) => BatchResult::Delivered(failed),
            // An answer that cannot be read fails the whole batch, as on AWS.
            None => BatchResult::Failed(None),
        },
        Ok(Some(_)) => BatchResult::Delivered(Vec::new()),
    }
}

/// The message ids of `{"batchItemFailures": [{"itemIdentifier": id}]}`; `None` when the
/// answer is not of that shape.
fn batch_item_failures(payload: &[u8]) -> Option<Vec<String>> {
    let v: Value = serde_json::from_slice(payload).ok()?;
    match v.get("batchItemFailures") {
        None | Some(Value::Null) => Some(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| i.get("itemIdentifier")?.as_str().map(str::to_string))
            .collect(),
        Some(_) => None,
    }
}

fn mapping_json(core: &Lambda, m: &EventSourceMapping, state: Option<&str>) -> Value {
    let (name, q) = parse_function(&m.function_name).unwrap_or_default();
    let mut out = json!({
        "UUID": m.uuid,
        "BatchSize": m.batch_size,
        "MaximumBatchingWindowInSeconds": m.maximum_batching_window,
        "EventSourceArn": m.event_source_arn,
        "FunctionArn": function_arn(&m.region, core.account_id(), &name, q.as_deref()),
        "LastModified": m.last_modified,
        "State": state.unwrap_or(if m.enabled { "Enabled" } else { "Disabled" }),
        "StateTransitionReason": "USER_INITIATED",
        "FunctionResponseTypes": if m.report_batch_item_failures { json!(["ReportBatchItemFailures"]) } else { json!([]) },
        "EventSourceMappingArn": format!("arn:aws:lambda:{}:{}:event-source-mapping:{}", m.region, core.account_id(), m.uuid),
    });
    if let Some(c) = &m.filter_criteria {
        out["FilterCriteria"] = c.clone();
    }
    if is_dynamodb_stream(&m.event_source_arn) {
        let s = &m.stream;
        out["StartingPosition"] = json!(s.starting_position);
        out["MaximumRetryAttempts"] = json!(s.maximum_retry_attempts.unwrap_or(-1));
        out["BisectBatchOnFunctionError"] = json!(s.bisect_batch_on_function_error);
        out["MaximumRecordAgeInSeconds"] = json!(s.maximum_record_age.unwrap_or(-1));
        out["ParallelizationFactor"] = json!(s.parallelization_factor.unwrap_or(1));
        out["DestinationConfig"] = match &s.on_failure {
            Some(d) => json!({"OnFailure": {"Destination": d}}),
            None => json!({"OnFailure": {}}),
        };
        if let Some(t) = s.tumbling_window {
            out["TumblingWindowInSeconds"] = json!(t);
        }
    }
    out
}

/// Properties cumulo does not apply to a mapping: refused rather than ignored.
const UNSUPPORTED: &[&str] = &[
    "ScalingConfig",
    "StartingPositionTimestamp",
    "Topics",
    "Queues",
    "SourceAccessConfigurations",
    "SelfManagedEventSource",
    "AmazonManagedKafkaEventSourceConfig",
    "SelfManagedKafkaEventSourceConfig",
    "DocumentDBEventSourceConfig",
    "KMSKeyArn",
    "MetricsConfig",
    "ProvisionedPollerConfig",
];

fn mapping_input(b: &Body) -> Result<MappingInput, AwsError> {
    if let Some(k) = UNSUPPORTED
        .iter()
        .find(|k| b.get(**k).is_some_and(|v| !v.is_null()))
    {
        return Err(invalid_parameter(format!(
            "cumulo: {k} is not supported for event source mappings"
        )));
    }
    let report = match strings(b, "FunctionResponseTypes")? {
        None => None,
        Some(types) => {
            if let Some(t) = types.iter().find(|t| *t != "ReportBatchItemFailures") {
                return Err(validation(
                    "functionResponseTypes",
                    t,
                    "Member must satisfy enum value set: [ReportBatchItemFailures]",
                ));
            }
            Some(!types.is_empty())
        }
    };
    Ok(MappingInput {
        event_source_arn: s(b, "EventSourceArn")?.map(str::to_string),
        function_name: s(b, "FunctionName")?.map(str::to_string),
        enabled: flag(b, "Enabled")?,
        batch_size: i(b, "BatchSize")?,
        maximum_batching_window: i(b, "MaximumBatchingWindowInSeconds")?,
        report_batch_item_failures: report,
        tags: super::wire::string_map(b.get("Tags"), "Tags")?.unwrap_or_default(),
        filter_criteria: b.get("FilterCriteria").cloned(),
        starting_position: s(b, "StartingPosition")?.map(str::to_string),
        maximum_retry_attempts: i(b, "MaximumRetryAttempts")?,
        bisect_batch_on_function_error: flag(b, "BisectBatchOnFunctionError")?,
        on_failure: on_failure(b.get("DestinationConfig")),
        maximum_record_age: i(b, "MaximumRecordAgeInSeconds")?,
        parallelization_factor: i(b, "ParallelizationFactor")?,
        tumbling_window: i(b, "TumblingWindowInSeconds")?,
    })
}

/// `DestinationConfig.OnFailure.Destination` (`Some(None)`: a config without one).
pub(super) fn on_failure(config: Option<&Value>) -> Option<Option<String>> {
    let config = config.filter(|c| !c.is_null())?;
    Some(
        config
            .pointer("/OnFailure/Destination")
            .and_then(Value::as_str)
            .map(str::to_string),
    )
}

/// The event-source-mappings routes (`rest` is the path after `/2015-03-31/event-source-mappings`).
pub(super) fn wire(
    core: &Arc<Lambda>,
    req: &AwsRequest,
    rest: &[&str],
) -> Result<AwsResponse, AwsError> {
    let region = req.region.as_str();
    let host = if req.host.is_empty() {
        "localhost:4566"
    } else {
        req.host.as_str()
    };
    match (&req.method, rest) {
        (&Method::POST, []) => {
            let input = mapping_input(&body(req)?)?;
            let m = core.create_event_source_mapping(region, input, host)?;
            Ok(ok(
                StatusCode::ACCEPTED,
                mapping_json(core, &m, Some("Creating")),
            ))
        }
        (&Method::GET, []) => {
            let list = core.list_event_source_mappings(
                region,
                req.query_param("EventSourceArn"),
                req.query_param("FunctionName"),
            )?;
            let items: Vec<Value> = list.iter().map(|m| mapping_json(core, m, None)).collect();
            Ok(ok(StatusCode::OK, json!({"EventSourceMappings": items})))
        }
        (&Method::GET, [uuid]) => {
            let m = core.get_event_source_mapping(uuid)?;
            Ok(ok(StatusCode::OK, mapping_json(core, &m, None)))
        }
        (&Method::PUT, [uuid]) => {
            let input = mapping_input(&body(req)?)?;
            let m = core.update_event_source_mapping(region, uuid, input)?;
            Ok(ok(
                StatusCode::ACCEPTED,
                mapping_json(core, &m, Some("Updating")),
            ))
        }
        (&Method::DELETE, [uuid]) => {
            let m = core.delete_event_source_mapping(uuid)?;
            Ok(ok(
                StatusCode::ACCEPTED,
                mapping_json(core, &m, Some("Deleting")),
            ))
        }
        _ => Err(AwsError::not_implemented(
            "lambda",
            &format!("{} {}", req.method, req.raw_path),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_item_failures_are_read_as_aws_does() {
        assert_eq!(batch_item_failures(b"null"), Some(vec![]));
        assert_eq!(batch_item_failures(b"{}"), Some(vec![]));
        assert_eq!(
            batch_item_failures(br#"{"batchItemFailures":[{"itemIdentifier":"m1"}]}"#),
            Some(vec!["m1".to_string()])
        );
        // A malformed answer fails the whole batch.
        assert_eq!(batch_item_failures(br#"{"batchItemFailures":[{}]}"#), None);
        assert_eq!(batch_item_failures(b"not json"), None);
        assert!(check_batching(11, 0, false).is_err());
        assert!(check_batching(11, 1, false).is_ok());
        assert!(check_batching(1000, 0, true).is_ok());
        assert!(check_batching(0, 0, true).is_err());
    }
}
