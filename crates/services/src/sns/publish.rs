//! Publish and PublishBatch: validation, FIFO sequencing and deduplication, filter policies, and
//! fan-out to the topic's subscriptions.

use super::SnsService;
use super::attributes::invalid;
use super::delivery::{Envelope, timestamp};
use super::filter::{AttributeValue, Scope};
use super::http_post;
use super::state::{Subscription, Topic};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_wire::AwsError;
use sha2::{Digest, Sha256};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// A message attribute as SNS accepts it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MessageAttribute {
    pub data_type: String,
    pub string_value: Option<String>,
    pub binary_value: Option<Vec<u8>>,
}

/// Input of `Publish` (and, without the target, of one PublishBatch entry).
#[derive(Debug, Clone, Default)]
pub struct PublishInput {
    pub topic_arn: Option<String>,
    pub target_arn: Option<String>,
    pub phone_number: Option<String>,
    pub message: String,
    pub subject: Option<String>,
    pub message_structure: Option<String>,
    pub message_attributes: Vec<(String, MessageAttribute)>,
    pub message_group_id: Option<String>,
    pub message_deduplication_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublishOutput {
    pub message_id: String,
    /// FIFO topics only.
    pub sequence_number: Option<String>,
}

/// One PublishBatch entry.
#[derive(Debug, Clone, Default)]
pub struct BatchEntry {
    pub id: String,
    pub input: PublishInput,
}

/// PublishBatch's result: (entry id, output) of the published entries, and the failed ones.
pub type BatchOutcome = (Vec<(String, PublishOutput)>, Vec<BatchFailure>);

/// A PublishBatch entry that failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchFailure {
    pub id: String,
    pub code: String,
    pub message: String,
    pub sender_fault: bool,
}

const MAX_MESSAGE_BYTES: usize = 262_144;
const DEDUP_WINDOW: Duration = Duration::from_secs(300);

/// FIFO bookkeeping: the last sequence number and the five-minute deduplication window. Kept in
/// memory only: after a restart, SQS's own deduplication still drops repeated deliveries to
/// FIFO queues, and sequence numbers stay increasing because they start from the clock.
#[derive(Default)]
pub struct FifoState {
    inner: Mutex<FifoInner>,
}

#[derive(Default)]
struct FifoInner {
    last_sequence: u128,
    seen: HashMap<(String, String), (Instant, PublishOutput)>,
}

/// A validated message, ready to fan out.
struct Prepared {
    message: String,
    subject: Option<String>,
    /// Per-protocol messages when MessageStructure is `json`.
    structure: Option<serde_json::Map<String, serde_json::Value>>,
    attributes: Vec<(String, MessageAttribute)>,
    group_id: Option<String>,
    dedup_id: Option<String>,
}

impl Prepared {
    fn message_for(&self, protocol: &str) -> String {
        self.structure
            .as_ref()
            .and_then(|m| m.get(protocol).or_else(|| m.get("default")))
            .and_then(|v| v.as_str())
            .map_or_else(|| self.message.clone(), str::to_string)
    }
}

fn check_attribute(name: &str, a: &MessageAttribute) -> Result<(), AwsError> {
    let lower = name.to_ascii_lowercase();
    let name_ok = !name.is_empty()
        && name.len() <= 256
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c))
        && !lower.starts_with("aws.")
        && !lower.starts_with("amazon.")
        && !name.starts_with('.')
        && !name.ends_with('.')
        && !name.contains("..");
    if !name_ok {
        return Err(invalid(format!(
            "MessageAttributes Reason: The message attribute name '{name}' is invalid. Names can contain alphanumeric characters, hyphens, underscores and periods, must not start or end with a period, contain consecutive periods, or start with AWS. or Amazon."
        )));
    }
    let base = a.data_type.split('.').next().unwrap_or("");
    if !matches!(base, "String" | "Number" | "Binary") {
        return Err(invalid(format!(
            "The message attribute '{name}' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String."
        )));
    }
    if base == "Binary" {
        if a.binary_value.as_ref().is_none_or(Vec::is_empty) {
            return Err(invalid(format!(
                "The message attribute '{name}' with type 'Binary' must use field 'Binary'."
            )));
        }
        return Ok(());
    }
    let Some(value) = a.string_value.as_deref().filter(|v| !v.is_empty()) else {
        return Err(invalid(format!(
            "The message attribute '{name}' must contain non-empty message attribute value for message attribute type '{}'.",
            a.data_type
        )));
    };
    if base == "Number" && value.trim().parse::<f64>().map_or(true, |n| !n.is_finite()) {
        return Err(invalid(format!(
            "Could not cast message attribute '{name}' value to number."
        )));
    }
    if a.data_type == "String.Array"
        && !matches!(
            serde_json::from_str::<serde_json::Value>(value),
            Ok(serde_json::Value::Array(_))
        )
    {
        return Err(invalid(format!(
            "The message attribute '{name}' with type 'String.Array' must contain a JSON array."
        )));
    }
    Ok(())
}

fn attributes_size(attrs: &[(String, MessageAttribute)]) -> usize {
    attrs
        .iter()
        .map(|(n, a)| {
            n.len()
                + a.data_type.len()
                + a.string_value.as_ref().map_or(0, String::len)
                + a.binary_value.as_ref().map_or(0, Vec::len)
        })
        .sum()
}

fn prepare(topic: &Topic, input: &PublishInput) -> Result<Prepared, AwsError> {
    if input.message.is_empty() {
        return Err(invalid("Empty message"));
    }
    if input.message.len() + attributes_size(&input.message_attributes) > MAX_MESSAGE_BYTES {
        return Err(invalid("Message too long"));
    }
    if let Some(s) = &input.subject {
        let ok = !s.is_empty()
            && s.chars().count() <= 100
            && s.chars().all(|c| c.is_ascii() && !c.is_ascii_control())
            && s.starts_with(|c: char| !c.is_whitespace());
        if !ok {
            return Err(invalid("Subject"));
        }
    }
    let structure = match input.message_structure.as_deref() {
        None => None,
        Some("json") => {
            let parsed: serde_json::Value = serde_json::from_str(&input.message)
                .map_err(|_| invalid("Message Structure - JSON message body failed to parse"))?;
            let map = parsed
                .as_object()
                .cloned()
                .ok_or_else(|| invalid("Message Structure - JSON message body failed to parse"))?;
            if !map.get("default").is_some_and(serde_json::Value::is_string) {
                return Err(invalid(
                    "Message Structure - No default entry in JSON message body",
                ));
            }
            Some(map)
        }
        Some(_) => return Err(invalid("MessageStructure")),
    };
    for (name, a) in &input.message_attributes {
        check_attribute(name, a)?;
    }
    let (group_id, dedup_id) = if topic.is_fifo() {
        let group = input
            .message_group_id
            .clone()
            .filter(|g| !g.is_empty())
            .ok_or_else(|| invalid("The MessageGroupId parameter is required for FIFO topics"))?;
        if group.len() > 128 || !group.chars().all(|c| c.is_ascii_graphic()) {
            return Err(invalid("MessageGroupId"));
        }
        let dedup = match &input.message_deduplication_id {
            Some(d)
                if d.len() <= 128 && !d.is_empty() && d.chars().all(|c| c.is_ascii_graphic()) =>
            {
                d.clone()
            }
            Some(_) => return Err(invalid("MessageDeduplicationId")),
            None if topic.content_based_dedup() => {
                hex::encode(Sha256::digest(input.message.as_bytes()))
            }
            None => {
                return Err(invalid(
                    "The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
                ));
            }
        };
        (Some(group), Some(dedup))
    } else {
        if input.message_deduplication_id.is_some() {
            return Err(invalid(
                "MessageDeduplicationId Reason: The request includes MessageDeduplicationId parameter that is not valid for this topic type",
            ));
        }
        if input.message_group_id.is_some() {
            return Err(invalid(
                "MessageGroupId Reason: The request includes MessageGroupId parameter that is not valid for this topic type",
            ));
        }
        (None, None)
    };
    Ok(Prepared {
        message: input.message.clone(),
        subject: input.subject.clone(),
        structure,
        attributes: input.message_attributes.clone(),
        group_id,
        dedup_id,
    })
}

/// Whether the subscription's filter policy lets the message through.
fn passes_filter(sub: &Subscription, p: &Prepared) -> bool {
    let Some(policy) = &sub.filter else {
        return true;
    };
    match sub.filter_scope() {
        Scope::MessageAttributes => {
            let attrs: Vec<(&str, AttributeValue<'_>)> = p
                .attributes
                .iter()
                .map(|(n, a)| {
                    (
                        n.as_str(),
                        AttributeValue {
                            data_type: &a.data_type,
                            string_value: a.string_value.as_deref(),
                        },
                    )
                })
                .collect();
            policy.matches_attributes(&attrs)
        }
        Scope::MessageBody => policy.matches_body(&p.message_for(&sub.protocol)),
    }
}

/// Message attributes in the JSON shape `send_message_to_arn` takes.
fn sqs_attributes(attrs: &[(String, MessageAttribute)]) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    for (name, a) in attrs {
        let v = match &a.binary_value {
            Some(b) => serde_json::json!({"DataType": a.data_type, "BinaryValue": B64.encode(b)}),
            None => serde_json::json!({"DataType": a.data_type, "StringValue": a.string_value}),
        };
        m.insert(name.clone(), v);
    }
    serde_json::Value::Object(m)
}

/// Percent-encodes a query parameter value for the URLs placed in envelopes.
fn query_escape(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl SnsService {
    fn cert_url(endpoint_base: &str) -> String {
        format!("{endpoint_base}/_cumulo/sns/SimpleNotificationService.pem")
    }

    fn signature_version(&self, topic_arn: &str) -> String {
        self.state
            .lock()
            .data
            .topics
            .get(topic_arn)
            .and_then(|t| t.attributes.get("SignatureVersion").cloned())
            .unwrap_or_else(|| "1".to_string())
    }

    /// POSTs the SubscriptionConfirmation of a new `http` subscription.
    pub(super) fn send_confirmation(&self, sub: &Subscription, endpoint_base: &str) {
        let Some(token) = &sub.token else {
            return;
        };
        let message_id = uuid::Uuid::new_v4().to_string();
        // With Version, as the UnsubscribeURL below, so the gateway routes the unsigned GET.
        let subscribe_url = format!(
            "{endpoint_base}/?Action=ConfirmSubscription&TopicArn={}&Token={}&Version=2010-03-31",
            query_escape(&sub.topic_arn),
            query_escape(token)
        );
        let message = format!(
            "You have chosen to subscribe to the topic {}.\nTo confirm the subscription, visit the SubscribeURL included in this message.",
            sub.topic_arn
        );
        let body = Envelope {
            kind: "SubscriptionConfirmation",
            message_id: &message_id,
            sequence_number: None,
            token: Some(token),
            topic_arn: &sub.topic_arn,
            subject: None,
            message: &message,
            subscribe_url: Some(&subscribe_url),
            timestamp: &timestamp(),
            signature_version: &self.signature_version(&sub.topic_arn),
            cert_url: &Self::cert_url(endpoint_base),
            unsubscribe_url: None,
            attributes: &[],
        }
        .render(&self.signer);
        http_post::post(
            &sub.endpoint,
            vec![
                (
                    "x-amz-sns-message-type".into(),
                    "SubscriptionConfirmation".into(),
                ),
                ("x-amz-sns-message-id".into(), message_id),
                ("x-amz-sns-topic-arn".into(), sub.topic_arn.clone()),
                ("Content-Type".into(), "text/plain; charset=UTF-8".into()),
            ],
            body,
        );
    }

    fn next_sequence(inner: &mut FifoInner) -> String {
        let now = chrono::Utc::now()
            .timestamp_nanos_opt()
            .map_or(0, |n| u128::try_from(n).unwrap_or(0));
        inner.last_sequence = (inner.last_sequence + 1).max(now);
        format!("{:020}", inner.last_sequence % 100_000_000_000_000_000_000)
    }

    fn publish_prepared(&self, topic: &Topic, endpoint_base: &str, p: &Prepared) -> PublishOutput {
        let message_id = uuid::Uuid::new_v4().to_string();
        let output = if let (true, Some(dedup)) = (topic.is_fifo(), &p.dedup_id) {
            let mut inner = self.fifo.inner.lock().unwrap_or_else(|e| e.into_inner());
            let now = Instant::now();
            inner
                .seen
                .retain(|_, (at, _)| now.duration_since(*at) < DEDUP_WINDOW);
            let key = (topic.arn.clone(), dedup.clone());
            if let Some((_, previous)) = inner.seen.get(&key) {
                // A duplicate within the window is acknowledged again but not delivered again.
                return previous.clone();
            }
            let out = PublishOutput {
                message_id,
                sequence_number: Some(Self::next_sequence(&mut inner)),
            };
            inner.seen.insert(key, (now, out.clone()));
            out
        } else {
            PublishOutput {
                message_id,
                sequence_number: None,
            }
        };
        self.fan_out(topic, endpoint_base, p, &output);
        output
    }

    /// Delivers to every confirmed subscription whose filter policy matches.
    fn fan_out(&self, topic: &Topic, endpoint_base: &str, p: &Prepared, out: &PublishOutput) {
        let subs: Vec<Subscription> = self
            .state
            .lock()
            .data
            .subscriptions
            .values()
            .filter(|s| s.topic_arn == topic.arn && s.confirmed)
            .cloned()
            .collect();
        let ts = timestamp();
        let signature_version = topic
            .attributes
            .get("SignatureVersion")
            .cloned()
            .unwrap_or_else(|| "1".to_string());
        for sub in subs.iter().filter(|s| passes_filter(s, p)) {
            let message = p.message_for(&sub.protocol);
            // AWS's URL has no Version; cumulo adds it so that an unsigned GET of the URL is
            // routed to SNS by the gateway (which tells query APIs apart by Version).
            let unsubscribe_url = format!(
                "{endpoint_base}/?Action=Unsubscribe&SubscriptionArn={}&Version=2010-03-31",
                query_escape(&sub.arn)
            );
            let body = if sub.raw() {
                message.clone()
            } else {
                Envelope {
                    kind: "Notification",
                    message_id: &out.message_id,
                    sequence_number: out.sequence_number.as_deref(),
                    token: None,
                    topic_arn: &topic.arn,
                    subject: p.subject.as_deref(),
                    message: &message,
                    subscribe_url: None,
                    timestamp: &ts,
                    signature_version: &signature_version,
                    cert_url: &Self::cert_url(endpoint_base),
                    unsubscribe_url: Some(&unsubscribe_url),
                    attributes: &p.attributes,
                }
                .render(&self.signer)
            };
            match sub.protocol.as_str() {
                "sqs" => self.deliver_sqs(sub, &body, p),
                "http" => {
                    let mut headers = vec![
                        (
                            "x-amz-sns-message-type".to_string(),
                            "Notification".to_string(),
                        ),
                        ("x-amz-sns-message-id".to_string(), out.message_id.clone()),
                        ("x-amz-sns-topic-arn".to_string(), topic.arn.clone()),
                        ("x-amz-sns-subscription-arn".to_string(), sub.arn.clone()),
                        (
                            "Content-Type".to_string(),
                            "text/plain; charset=UTF-8".to_string(),
                        ),
                    ];
                    if sub.raw() {
                        headers.push(("x-amz-sns-rawdelivery".to_string(), "true".to_string()));
                    }
                    http_post::post(&sub.endpoint, headers, body);
                }
                // Other protocols' targets are not emulated yet (see the module docs).
                _ => {}
            }
        }
    }

    /// Sends to the queue; on failure, to the RedrivePolicy's dead-letter queue if any.
    fn deliver_sqs(&self, sub: &Subscription, body: &str, p: &Prepared) {
        let attrs = if sub.raw() {
            sqs_attributes(&p.attributes)
        } else {
            serde_json::json!({})
        };
        let send = |queue_arn: &str| {
            let fifo_queue = queue_arn.ends_with(".fifo");
            let group = p.group_id.as_deref().filter(|_| fifo_queue);
            let dedup = p.dedup_id.as_deref().filter(|_| fifo_queue);
            self.sqs
                .send_message_to_arn(queue_arn, body, &attrs, group, dedup)
        };
        if send(&sub.endpoint).is_ok() {
            return;
        }
        let dlq = sub
            .attributes
            .get("RedrivePolicy")
            .and_then(|r| serde_json::from_str::<serde_json::Value>(r).ok())
            .and_then(|v| v.get("deadLetterTargetArn")?.as_str().map(str::to_string));
        if let Some(dlq) = dlq {
            // The message is lost if the dead-letter queue fails too, as in AWS.
            let _ = send(&dlq);
        }
    }

    /// `Publish` to a topic. `endpoint_base` (`http://host:port`) is where the envelope's
    /// UnsubscribeURL and SigningCertURL point.
    pub fn publish(
        &self,
        region: &str,
        endpoint_base: &str,
        input: PublishInput,
    ) -> Result<PublishOutput, AwsError> {
        let targets = [
            input.topic_arn.is_some(),
            input.target_arn.is_some(),
            input.phone_number.is_some(),
        ];
        if targets.iter().filter(|t| **t).count() > 1 {
            return Err(invalid(
                "TopicArn or TargetArn Reason: Only one of TopicArn, TargetArn or PhoneNumber may be specified",
            ));
        }
        if input.phone_number.is_some() {
            return Err(AwsError::not_implemented(
                "sns",
                "Publish to a PhoneNumber (SMS)",
            ));
        }
        let arn = input
            .topic_arn
            .clone()
            .or_else(|| input.target_arn.clone())
            .ok_or_else(|| {
                invalid("TopicArn or TargetArn Reason: no value for required parameter")
            })?;
        if arn.contains(":endpoint/") {
            return Err(AwsError::not_implemented(
                "sns",
                "Publish to a platform application endpoint",
            ));
        }
        let topic = self.topic(region, &arn)?;
        let prepared = prepare(&topic, &input)?;
        Ok(self.publish_prepared(&topic, endpoint_base, &prepared))
    }

    /// `PublishBatch`: up to ten entries; each succeeds or fails on its own.
    pub fn publish_batch(
        &self,
        region: &str,
        endpoint_base: &str,
        topic_arn: &str,
        entries: &[BatchEntry],
    ) -> Result<BatchOutcome, AwsError> {
        let topic = self.topic(region, topic_arn)?;
        if entries.is_empty() {
            return Err(AwsError::bad_request(
                "EmptyBatchRequest",
                "The batch request doesn't contain any entries",
            ));
        }
        if entries.len() > 10 {
            return Err(AwsError::bad_request(
                "TooManyEntriesInBatchRequest",
                "The batch request contains more entries than permissible",
            ));
        }
        for (i, e) in entries.iter().enumerate() {
            let id_ok = !e.id.is_empty()
                && e.id.len() <= 80
                && e.id
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !id_ok {
                return Err(AwsError::bad_request(
                    "InvalidBatchEntryId",
                    "The Id of a batch entry in a batch request doesn't abide by the specification",
                ));
            }
            if entries.iter().skip(i + 1).any(|o| o.id == e.id) {
                return Err(AwsError::bad_request(
                    "BatchEntryIdsNotDistinct",
                    "Two or more batch entries in the request have the same Id",
                ));
            }
        }
        let total: usize = entries
            .iter()
            .map(|e| e.input.message.len() + attributes_size(&e.input.message_attributes))
            .sum();
        if total > MAX_MESSAGE_BYTES {
            return Err(AwsError::bad_request(
                "BatchRequestTooLong",
                "The length of all the messages put together is more than the limit",
            ));
        }
        let mut ok = Vec::new();
        let mut failed = Vec::new();
        for e in entries {
            match prepare(&topic, &e.input) {
                Ok(p) => ok.push((
                    e.id.clone(),
                    self.publish_prepared(&topic, endpoint_base, &p),
                )),
                Err(err) => failed.push(BatchFailure {
                    id: e.id.clone(),
                    code: err.code,
                    message: err.message,
                    sender_fault: err.sender_fault,
                }),
            }
        }
        Ok((ok, failed))
    }
}
