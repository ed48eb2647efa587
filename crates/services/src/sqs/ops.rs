//! SQS's operations as typed Rust functions: what the wire adapters, SNS delivery and (next issue)
//! CloudFormation's AWS::SQS::Queue provider call. Each mutating operation commits to the store
//! before it changes memory or answers, so an acknowledged change survives a crash.

use super::SqsService;
use super::attributes::{self, RedrivePolicy};
use super::errors::*;
use super::model::*;
use super::state::{self, Message, Queue, QueueKey, QueueMeta, now_ms};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_wire::AwsError;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::time::Duration;

/// Who is calling and how they reached us: queue URLs are built from the host the client used.
#[derive(Debug, Clone)]
pub struct Caller {
    pub region: String,
    pub account_id: String,
    /// `Host` the client called, e.g. `localhost:4566`.
    pub host: String,
    /// SenderId stamped on sent messages.
    pub sender_id: String,
}

impl Caller {
    pub fn queue_url(&self, name: &str) -> String {
        format!("http://{}/{}/{}", self.host, self.account_id, name)
    }

    fn key(&self, name: &str) -> QueueKey {
        (self.region.clone(), name.to_string())
    }
}

/// Deduplication ids live for five minutes, as in AWS.
const DEDUP_WINDOW_MS: i64 = 5 * 60 * 1000;
/// A queue can be purged once a minute.
const PURGE_INTERVAL_MS: i64 = 60 * 1000;
/// AWS's cap on tags per queue.
const MAX_TAGS: usize = 50;
/// Entries per batch request.
const MAX_BATCH: usize = 10;
/// The largest message (and batch) AWS accepts, whatever the queue's MaximumMessageSize.
const MAX_PAYLOAD: i64 = 1_048_576;

/// The queue name in a queue URL (`http://host/account/name`, or just its path). Any host is
/// accepted: clients keep URLs from whichever endpoint they used.
pub fn queue_name_from_url(url: &str) -> Option<&str> {
    let path = match url.split_once("://") {
        Some((_, rest)) => &rest[rest.find('/')?..],
        None => url,
    };
    let mut parts = path.trim_matches('/').split('/');
    let (_account, name) = (parts.next()?, parts.next()?);
    (parts.next().is_none() && !name.is_empty()).then_some(name)
}

/// `(region, name)` from a queue ARN.
pub fn parse_queue_arn(arn: &str) -> Option<(&str, &str, &str)> {
    let mut p = arn.split(':');
    if p.next()? != "arn" || p.next().is_none() || p.next()? != "sqs" {
        return None;
    }
    let (region, account, name) = (p.next()?, p.next()?, p.next()?);
    p.next().is_none().then_some((region, account, name))
}

fn valid_queue_name(name: &str) -> bool {
    let base = name.strip_suffix(".fifo").unwrap_or(name);
    !base.is_empty()
        && name.len() <= 80
        && base
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

fn store_err(e: cumulo_store::StoreError) -> AwsError {
    store_failure(e)
}

/// Encodes which delivery of which message a receipt handle names.
fn encode_receipt(queue: &str, seq: u64, msg: &Message) -> String {
    let nonce = msg.receipt_nonce.as_deref().unwrap_or("");
    B64.encode(format!("{queue}\u{1}{seq}\u{1}{}\u{1}{nonce}", msg.id))
}

struct Receipt {
    seq: u64,
    message_id: String,
    nonce: String,
}

fn decode_receipt(queue: &str, handle: &str) -> Result<Receipt, AwsError> {
    let invalid = || receipt_handle_is_invalid(handle);
    let bytes = B64.decode(handle.trim()).map_err(|_| invalid())?;
    let text = String::from_utf8(bytes).map_err(|_| invalid())?;
    let parts: Vec<&str> = text.split('\u{1}').collect();
    match parts.as_slice() {
        [q, seq, id, nonce] if *q == queue => Ok(Receipt {
            seq: seq.parse().map_err(|_| invalid())?,
            message_id: id.to_string(),
            nonce: nonce.to_string(),
        }),
        _ => Err(invalid()),
    }
}

/// Checks the ids of a batch request the way AWS does, before touching any entry.
fn check_batch_ids<'a>(
    ids: impl ExactSizeIterator<Item = &'a str>,
    entry_name: &str,
) -> Result<(), AwsError> {
    let count = ids.len();
    if count == 0 {
        return Err(empty_batch_request(entry_name));
    }
    if count > MAX_BATCH {
        return Err(too_many_entries(count));
    }
    let mut seen = HashSet::new();
    for id in ids {
        let ok = !id.is_empty()
            && id.len() <= 80
            && id
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !ok {
            return Err(invalid_batch_entry_id());
        }
        if !seen.insert(id) {
            return Err(batch_entry_ids_not_distinct(id));
        }
    }
    Ok(())
}

fn batch_error(id: &str, e: AwsError) -> BatchError {
    BatchError {
        id: id.to_string(),
        code: e.query_code.clone().unwrap_or(e.code.clone()),
        message: e.message,
        sender_fault: e.sender_fault,
    }
}

/// Message attribute rules from the SQS developer guide.
fn validate_message_attributes(attrs: &MessageAttributes) -> Result<(), AwsError> {
    if attrs.len() > 10 {
        return Err(invalid_parameter_value(format!(
            "Number of message attributes [{}] exceeds the allowed maximum [10].",
            attrs.len()
        )));
    }
    for (name, v) in attrs {
        let lower = name.to_ascii_lowercase();
        let name_ok = !name.is_empty()
            && name.len() <= 256
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
            && !name.starts_with('.')
            && !name.ends_with('.')
            && !name.contains("..")
            && !lower.starts_with("aws.")
            && !lower.starts_with("amazon.");
        if !name_ok {
            return Err(invalid_parameter_value(format!(
                "Message (user) attribute name '{name}' is invalid."
            )));
        }
        let base = v.data_type.split('.').next().unwrap_or("");
        if v.data_type.is_empty() {
            return Err(invalid_parameter_value(format!(
                "The message attribute '{name}' must contain non-empty message attribute type."
            )));
        }
        if !matches!(base, "String" | "Number" | "Binary") || v.data_type.len() > 256 {
            return Err(invalid_parameter_value(format!(
                "The type of message (user) attribute '{name}' is invalid. You must use only the following supported type prefixes: Binary, Number, String."
            )));
        }
        let empty = |t: &str| {
            invalid_parameter_value(format!(
                "The message attribute '{name}' must contain non-empty message attribute value for message attribute type '{t}'."
            ))
        };
        match base {
            "Binary" => {
                if v.binary_value.as_ref().is_none_or(Vec::is_empty) {
                    return Err(empty("Binary"));
                }
            }
            t => {
                let s = v.string_value.as_deref().unwrap_or("");
                if s.is_empty() {
                    return Err(empty(t));
                }
                if t == "Number" && s.trim().parse::<f64>().is_err() {
                    return Err(invalid_parameter_value(format!(
                        "Can't cast the value of message (user) attribute '{name}' to a number."
                    )));
                }
            }
        }
    }
    Ok(())
}

fn attributes_size(attrs: &MessageAttributes) -> usize {
    attrs
        .iter()
        .map(|(k, v)| {
            k.len()
                + v.data_type.len()
                + v.string_value.as_ref().map_or(0, String::len)
                + v.binary_value.as_ref().map_or(0, Vec::len)
        })
        .sum()
}

/// Characters AWS accepts in bodies and string values (the XML 1.0 character set).
fn valid_message_chars(s: &str) -> bool {
    s.chars().all(|c| {
        matches!(c, '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
            || c >= '\u{10000}'
    })
}

/// A FIFO group or deduplication id: 1-128 alphanumeric or punctuation characters.
fn valid_fifo_id(s: &str) -> bool {
    !s.is_empty() && s.len() <= 128 && s.chars().all(|c| c.is_ascii_graphic())
}

fn sequence_number(seq: u64) -> String {
    // 20 digits, increasing, not consecutive — the shape of AWS's 128-bit sequence numbers.
    (18_000_000_000_000_000_000u128 + u128::from(seq) * 1_000).to_string()
}

fn system_attribute(name: &str, m: &Message) -> Option<String> {
    Some(match name {
        "SenderId" => m.sender_id.clone(),
        "SentTimestamp" => m.sent_ms.to_string(),
        "ApproximateReceiveCount" => m.receive_count.to_string(),
        "ApproximateFirstReceiveTimestamp" => m.first_receive_ms.unwrap_or(m.sent_ms).to_string(),
        "SequenceNumber" => m.sequence_number.clone()?,
        "MessageDeduplicationId" => m.dedup_id.clone()?,
        "MessageGroupId" => m.group_id.clone()?,
        "AWSTraceHeader" => m
            .system_attributes
            .get("AWSTraceHeader")?
            .string_value
            .clone()?,
        "DeadLetterQueueSourceArn" => m.dead_letter_source_arn.clone()?,
        _ => return None,
    })
}

const SYSTEM_ATTRIBUTE_NAMES: &[&str] = &[
    "SenderId",
    "SentTimestamp",
    "ApproximateReceiveCount",
    "ApproximateFirstReceiveTimestamp",
    "SequenceNumber",
    "MessageDeduplicationId",
    "MessageGroupId",
    "AWSTraceHeader",
    "DeadLetterQueueSourceArn",
];

/// Which message attributes a receive asked for: `All`, `.*`, exact names or `prefix.*`.
fn wants_message_attribute(patterns: &[String], name: &str) -> bool {
    patterns.iter().any(|p| {
        p == "All"
            || p == ".*"
            || p == name
            || p.strip_suffix(".*").is_some_and(|prefix| {
                name.strip_prefix(prefix)
                    .is_some_and(|r| r.starts_with('.'))
            })
    })
}

fn render_received(
    queue: &str,
    seq: u64,
    m: &Message,
    input: &ReceiveMessageInput,
) -> ReceivedMessage {
    let all = input.system_attribute_names.iter().any(|n| n == "All");
    let attributes = SYSTEM_ATTRIBUTE_NAMES
        .iter()
        .filter(|n| all || input.system_attribute_names.iter().any(|x| x == *n))
        .filter_map(|n| system_attribute(n, m).map(|v| (n.to_string(), v)))
        .collect();
    let message_attributes: MessageAttributes = m
        .attributes
        .iter()
        .filter(|(k, _)| wants_message_attribute(&input.message_attribute_names, k))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    ReceivedMessage {
        message_id: m.id.clone(),
        receipt_handle: encode_receipt(queue, seq, m),
        md5_of_body: m.md5_of_body.clone(),
        body: m.body.clone(),
        attributes,
        md5_of_message_attributes: md5_of_attributes(&message_attributes),
        message_attributes,
    }
}

/// What one pass over a queue decided, applied to memory only after it is committed.
#[derive(Default)]
struct ReceivePlan {
    expired: Vec<u64>,
    /// Messages to move to the dead-letter queue: (source seq, message as it lands there).
    redrive: Vec<(u64, Message)>,
    received: Vec<(u64, Message)>,
    /// When the next invisible message becomes visible, to bound a long poll's sleep.
    next_visible_ms: Option<i64>,
}

impl SqsService {
    fn with_queue<R>(
        &self,
        caller: &Caller,
        url: &str,
        f: impl FnOnce(&mut Queue) -> Result<R, AwsError>,
    ) -> Result<R, AwsError> {
        let name = queue_name_from_url(url).ok_or_else(queue_does_not_exist)?;
        let mut queues = self.lock();
        let q = queues
            .get_mut(&caller.key(name))
            .ok_or_else(queue_does_not_exist)?;
        f(q)
    }

    /// CreateQueue: idempotent when the given attributes match an existing queue's.
    pub fn create_queue(
        &self,
        caller: &Caller,
        name: &str,
        attributes: &BTreeMap<String, String>,
        tags: &BTreeMap<String, String>,
    ) -> Result<String, AwsError> {
        if name.is_empty() {
            return Err(missing_parameter("QueueName"));
        }
        if !valid_queue_name(name) {
            return Err(invalid_parameter_value(
                "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
            ));
        }
        let fifo = name.ends_with(".fifo");
        let mut changes = attributes.clone();
        match changes.get("FifoQueue").map(|v| v.to_ascii_lowercase()) {
            Some(v) if v == "true" && !fifo => {
                return Err(invalid_parameter_value(
                    "The name of a FIFO queue can only include alphanumeric characters, hyphens, or underscores, must end with .fifo suffix and be 1 to 80 in length.",
                ));
            }
            Some(v) if v == "false" && !fifo => {
                changes.remove("FifoQueue");
            }
            Some(v) if v == "true" || v == "false" => {}
            Some(_) => return Err(invalid_attribute_value("FifoQueue")),
            None if fifo => {
                return Err(invalid_parameter_value(
                    "Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length",
                ));
            }
            None => {}
        }
        if fifo
            && changes
                .get("FifoQueue")
                .map(|v| v.to_ascii_lowercase())
                .as_deref()
                == Some("false")
        {
            return Err(invalid_attribute_value("FifoQueue"));
        }
        if tags.len() > MAX_TAGS {
            return Err(too_many_tags());
        }
        let mut attrs = attributes::defaults(fifo);
        attributes::apply(&mut attrs, &changes, fifo)?;
        let mut queues = self.lock();
        if let Some(rp) = attrs.get("RedrivePolicy") {
            check_dead_letter_target(&queues, caller, rp, fifo)?;
        }
        let key = caller.key(name);
        if let Some(existing) = queues.get(&key) {
            // AWS compares only the attributes the caller gave.
            let mut wanted = existing.meta.attributes.clone();
            attributes::apply(&mut wanted, &changes, fifo)?;
            if let Some(diff) = changes
                .keys()
                .find(|k| wanted.get(*k) != existing.meta.attributes.get(*k))
            {
                return Err(queue_name_exists(format!(
                    "A queue already exists with the same name and a different value for attribute {diff}"
                )));
            }
            return Ok(caller.queue_url(name));
        }
        let now = now_ms();
        let meta = QueueMeta {
            region: caller.region.clone(),
            name: name.to_string(),
            account_id: caller.account_id.clone(),
            attributes: attrs,
            tags: tags.clone(),
            created_s: now / 1000,
            last_modified_s: now / 1000,
            next_seq: 1,
            last_purge_ms: None,
            dedup: HashMap::new(),
        };
        self.store
            .write(|tx| state::put_queue(tx, &meta))
            .map_err(store_err)?;
        queues.insert(key, Queue::new(meta));
        Ok(caller.queue_url(name))
    }

    /// DeleteQueue: the queue and its messages go at once (AWS takes up to 60 s; immediate is a
    /// valid observation of that).
    pub fn delete_queue(&self, caller: &Caller, url: &str) -> Result<(), AwsError> {
        let name = queue_name_from_url(url).ok_or_else(queue_does_not_exist)?;
        let mut queues = self.lock();
        let key = caller.key(name);
        let q = queues.get(&key).ok_or_else(queue_does_not_exist)?;
        self.store
            .write(|tx| state::delete_queue(tx, &q.meta.region, &q.meta.name))
            .map_err(store_err)?;
        if let Some(q) = queues.remove(&key) {
            q.notify.notify_waiters();
        }
        Ok(())
    }

    pub fn get_queue_url(&self, caller: &Caller, name: &str) -> Result<String, AwsError> {
        if name.is_empty() {
            return Err(missing_parameter("QueueName"));
        }
        let queues = self.lock();
        queues
            .contains_key(&caller.key(name))
            .then(|| caller.queue_url(name))
            .ok_or_else(queue_does_not_exist)
    }

    /// ListQueues: queue URLs in name order; a page token only when MaxResults was given.
    pub fn list_queues(
        &self,
        caller: &Caller,
        prefix: Option<&str>,
        max_results: Option<i64>,
        next_token: Option<&str>,
    ) -> Result<QueueUrlPage, AwsError> {
        let mut names: Vec<String> = {
            let queues = self.lock();
            queues
                .keys()
                .filter(|(r, n)| *r == caller.region && n.starts_with(prefix.unwrap_or("")))
                .map(|(_, n)| n.clone())
                .collect()
        };
        names.sort();
        paginate(caller, names, max_results, next_token)
    }

    /// GetQueueAttributes for the given names (`All` for every one that has a value).
    pub fn get_queue_attributes(
        &self,
        caller: &Caller,
        url: &str,
        names: &[String],
    ) -> Result<Vec<(String, String)>, AwsError> {
        self.with_queue(caller, url, |q| {
            let fifo = q.meta.is_fifo();
            for n in names {
                let known = n == "All" || attributes::ALL_NAMES.contains(&n.as_str());
                if !known || (!fifo && attributes::FIFO_ONLY.contains(&n.as_str())) {
                    return Err(invalid_attribute_name(n));
                }
            }
            let all = names.iter().any(|n| n == "All");
            let now = now_ms();
            let count = |f: &dyn Fn(&Message) -> bool| {
                q.messages.values().filter(|m| f(m)).count().to_string()
            };
            let mut out = Vec::new();
            for name in attributes::ALL_NAMES {
                if !all && !names.iter().any(|n| n == name) {
                    continue;
                }
                let value = match *name {
                    "QueueArn" => Some(q.meta.arn()),
                    "ApproximateNumberOfMessages" => Some(count(&|m| m.visible_at_ms <= now)),
                    "ApproximateNumberOfMessagesNotVisible" => Some(count(&|m| m.in_flight(now))),
                    "ApproximateNumberOfMessagesDelayed" => Some(count(&|m| m.delayed(now))),
                    "CreatedTimestamp" => Some(q.meta.created_s.to_string()),
                    "LastModifiedTimestamp" => Some(q.meta.last_modified_s.to_string()),
                    other => q.meta.attributes.get(other).cloned(),
                };
                if let Some(v) = value {
                    out.push((name.to_string(), v));
                }
            }
            Ok(out)
        })
    }

    pub fn set_queue_attributes(
        &self,
        caller: &Caller,
        url: &str,
        changes: &BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        let name = queue_name_from_url(url).ok_or_else(queue_does_not_exist)?;
        let mut queues = self.lock();
        let key = caller.key(name);
        let q = queues.get(&key).ok_or_else(queue_does_not_exist)?;
        let fifo = q.meta.is_fifo();
        let mut changes = changes.clone();
        if changes.contains_key("FifoQueue") {
            // FifoQueue is fixed at creation; AWS rejects changing it.
            return Err(invalid_attribute_name("FifoQueue"));
        }
        changes.retain(|_, _| true);
        let mut meta = q.meta.clone();
        attributes::apply(&mut meta.attributes, &changes, fifo)?;
        if let Some(rp) = meta.attributes.get("RedrivePolicy") {
            if changes.contains_key("RedrivePolicy") {
                check_dead_letter_target(&queues, caller, rp, fifo)?;
            }
        }
        meta.last_modified_s = now_ms() / 1000;
        self.store
            .write(|tx| state::put_queue(tx, &meta))
            .map_err(store_err)?;
        if let Some(q) = queues.get_mut(&key) {
            q.meta = meta;
            // A shorter delay or new redrive policy can make messages deliverable now.
            q.notify.notify_waiters();
        }
        Ok(())
    }

    pub fn tag_queue(
        &self,
        caller: &Caller,
        url: &str,
        tags: &BTreeMap<String, String>,
    ) -> Result<(), AwsError> {
        self.update_meta(caller, url, |meta| {
            let mut next = meta.tags.clone();
            next.extend(tags.iter().map(|(k, v)| (k.clone(), v.clone())));
            if next.len() > MAX_TAGS {
                return Err(too_many_tags());
            }
            meta.tags = next;
            Ok(())
        })
    }

    pub fn untag_queue(&self, caller: &Caller, url: &str, keys: &[String]) -> Result<(), AwsError> {
        self.update_meta(caller, url, |meta| {
            for k in keys {
                meta.tags.remove(k);
            }
            Ok(())
        })
    }

    pub fn list_queue_tags(
        &self,
        caller: &Caller,
        url: &str,
    ) -> Result<BTreeMap<String, String>, AwsError> {
        self.with_queue(caller, url, |q| Ok(q.meta.tags.clone()))
    }

    /// Applies `f` to a copy of the queue's description, commits it, then installs it.
    fn update_meta(
        &self,
        caller: &Caller,
        url: &str,
        f: impl FnOnce(&mut QueueMeta) -> Result<(), AwsError>,
    ) -> Result<(), AwsError> {
        self.with_queue(caller, url, |q| {
            let mut meta = q.meta.clone();
            f(&mut meta)?;
            self.store
                .write(|tx| state::put_queue(tx, &meta))
                .map_err(store_err)?;
            q.meta = meta;
            Ok(())
        })
    }

    /// SendMessage.
    pub fn send_message(
        &self,
        caller: &Caller,
        url: &str,
        input: &SendMessageInput,
    ) -> Result<SendMessageOutput, AwsError> {
        self.with_queue(caller, url, |q| {
            let p = prepare_send(q, caller, input, now_ms())?;
            let out = send_output(input, &p);
            self.store
                .write(|tx| {
                    if let Some(meta) = &p.meta {
                        state::put_queue(tx, meta)?;
                    }
                    if p.is_new {
                        state::put_message(tx, &q.meta.region, &q.meta.name, p.seq, &p.message)?;
                    }
                    Ok(())
                })
                .map_err(store_err)?;
            if let Some(meta) = p.meta {
                q.meta = meta;
            }
            if p.is_new {
                q.meta.next_seq = q.meta.next_seq.max(p.seq + 1);
                q.messages.insert(p.seq, p.message);
                q.notify.notify_waiters();
            }
            Ok(out)
        })
    }

    /// SendMessageBatch: every entry is validated and enqueued independently, all committed
    /// in one transaction.
    pub fn send_message_batch(
        &self,
        caller: &Caller,
        url: &str,
        entries: &[(String, SendMessageInput)],
    ) -> Result<BatchOutput<SendMessageOutput>, AwsError> {
        check_batch_ids(
            entries.iter().map(|(id, _)| id.as_str()),
            "SendMessageBatchRequestEntry",
        )?;
        self.with_queue(caller, url, |q| {
            let total: usize = entries
                .iter()
                .map(|(_, e)| e.body.len() + attributes_size(&e.message_attributes))
                .sum();
            if total as i64 > MAX_PAYLOAD {
                return Err(batch_request_too_long(total, MAX_PAYLOAD));
            }
            let now = now_ms();
            // Work on a scratch copy of the queue's description so dedup within the batch works
            // and nothing changes if the commit fails.
            let mut scratch = Queue::new(q.meta.clone());
            let mut staged = Vec::new();
            let mut out = BatchOutput {
                successful: Vec::new(),
                failed: Vec::new(),
            };
            for (id, input) in entries {
                match prepare_send(&scratch, caller, input, now) {
                    Ok(p) => {
                        out.successful.push((id.clone(), send_output(input, &p)));
                        if let Some(meta) = p.meta {
                            scratch.meta = meta;
                        }
                        if p.is_new {
                            scratch.meta.next_seq = p.seq + 1;
                            staged.push((p.seq, p.message));
                        }
                    }
                    Err(e) => out.failed.push(batch_error(id, e)),
                }
            }
            let meta_changed = q.meta.is_fifo();
            self.store
                .write(|tx| {
                    if meta_changed {
                        state::put_queue(tx, &scratch.meta)?;
                    }
                    for (seq, m) in &staged {
                        state::put_message(tx, &q.meta.region, &q.meta.name, *seq, m)?;
                    }
                    Ok(())
                })
                .map_err(store_err)?;
            q.meta = scratch.meta;
            for (seq, m) in staged {
                q.messages.insert(seq, m);
            }
            q.notify.notify_waiters();
            Ok(out)
        })
    }

    /// ReceiveMessage, long-polling up to WaitTimeSeconds without busy-waiting: it sleeps on the
    /// queue's `Notify` (woken by sends and visibility changes) or until the next message
    /// becomes visible.
    pub async fn receive_message(
        &self,
        caller: &Caller,
        url: &str,
        input: &ReceiveMessageInput,
    ) -> Result<Vec<ReceivedMessage>, AwsError> {
        let max = input.max_number_of_messages.unwrap_or(1);
        if !(1..=10).contains(&max) {
            return Err(invalid_parameter(
                "MaxNumberOfMessages",
                max,
                "Must be between 1 and 10, if provided.",
            ));
        }
        if let Some(v) = input.visibility_timeout {
            if !(0..=43_200).contains(&v) {
                return Err(invalid_parameter(
                    "VisibilityTimeout",
                    v,
                    "Must be >= 0 and <= 43200, if provided.",
                ));
            }
        }
        if let Some(w) = input.wait_time_seconds {
            if !(0..=20).contains(&w) {
                return Err(invalid_parameter(
                    "WaitTimeSeconds",
                    w,
                    "Must be >= 0 and <= 20, if provided.",
                ));
            }
        }
        let name = queue_name_from_url(url).ok_or_else(queue_does_not_exist)?;
        let key = caller.key(name);
        let wait_s = match input.wait_time_seconds {
            Some(w) => w,
            None => self.with_queue(caller, url, |q| {
                Ok(q.meta.int_attr("ReceiveMessageWaitTimeSeconds", 0))
            })?,
        };
        let deadline = tokio::time::Instant::now() + Duration::from_secs(wait_s as u64);
        loop {
            let notify = self
                .lock()
                .get(&key)
                .map(|q| q.notify.clone())
                .ok_or_else(queue_does_not_exist)?;
            let notified = notify.notified();
            tokio::pin!(notified);
            // Registered before looking, so a send between the look and the wait still wakes us.
            notified.as_mut().enable();
            let (messages, next_visible_ms) = self.receive_once(&key, max as usize, input)?;
            let now = tokio::time::Instant::now();
            if !messages.is_empty() || now >= deadline {
                return Ok(messages);
            }
            let mut wake = deadline;
            if let Some(at) = next_visible_ms {
                let in_ms = (at - now_ms()).max(1) as u64;
                wake = wake.min(now + Duration::from_millis(in_ms));
            }
            tokio::select! {
                _ = &mut notified => {}
                _ = tokio::time::sleep_until(wake) => {}
            }
        }
    }

    /// One non-blocking pass of ReceiveMessage: expires old messages, redrives over-received
    /// ones to the dead-letter queue and takes up to `max` deliverable messages.
    fn receive_once(
        &self,
        key: &QueueKey,
        max: usize,
        input: &ReceiveMessageInput,
    ) -> Result<(Vec<ReceivedMessage>, Option<i64>), AwsError> {
        let mut queues = self.lock();
        let q = queues.get(key).ok_or_else(queue_does_not_exist)?;
        let now = now_ms();
        let redrive = q
            .meta
            .attributes
            .get("RedrivePolicy")
            .and_then(|rp| RedrivePolicy::parse(rp).ok())
            .and_then(|rp| {
                let (region, _, name) = parse_queue_arn(&rp.dead_letter_target_arn)?;
                let dlq_key = (region.to_string(), name.to_string());
                queues
                    .contains_key(&dlq_key)
                    .then_some((dlq_key, rp.max_receive_count))
            });
        let plan = plan_receive(q, now, max, input, redrive.as_ref().map(|(_, n)| *n));
        if plan.expired.is_empty() && plan.redrive.is_empty() && plan.received.is_empty() {
            return Ok((Vec::new(), plan.next_visible_ms));
        }
        let (region, name) = (q.meta.region.clone(), q.meta.name.clone());
        let source_arn = q.meta.arn();
        let mut dlq_seqs = Vec::new();
        let redriven: Vec<Message> = plan
            .redrive
            .iter()
            .map(|(_, m)| {
                let mut m = m.clone();
                m.dead_letter_source_arn = Some(source_arn.clone());
                m
            })
            .collect();
        if let Some((dlq_key, _)) = &redrive {
            if let Some(dlq) = queues.get(dlq_key) {
                let first = dlq.meta.next_seq;
                dlq_seqs = (0..redriven.len() as u64).map(|i| first + i).collect();
            }
        }
        self.store
            .write(|tx| {
                for seq in &plan.expired {
                    state::delete_message(tx, &region, &name, *seq)?;
                }
                for (seq, _) in &plan.redrive {
                    state::delete_message(tx, &region, &name, *seq)?;
                }
                if let Some((dlq_key, _)) = &redrive {
                    for (seq, m) in dlq_seqs.iter().zip(&redriven) {
                        state::put_message(tx, &dlq_key.0, &dlq_key.1, *seq, m)?;
                    }
                }
                for (seq, m) in &plan.received {
                    state::put_message(tx, &region, &name, *seq, m)?;
                }
                Ok(())
            })
            .map_err(store_err)?;
        let out = {
            let q = queues.get_mut(key).ok_or_else(queue_does_not_exist)?;
            for seq in plan
                .expired
                .iter()
                .chain(plan.redrive.iter().map(|(s, _)| s))
            {
                q.messages.remove(seq);
            }
            let out = plan
                .received
                .iter()
                .map(|(seq, m)| render_received(&name, *seq, m, input))
                .collect();
            for (seq, m) in plan.received {
                q.messages.insert(seq, m);
            }
            out
        };
        if let Some((dlq_key, _)) = &redrive {
            if let Some(dlq) = queues.get_mut(dlq_key) {
                for (seq, m) in dlq_seqs.into_iter().zip(redriven) {
                    dlq.meta.next_seq = seq + 1;
                    dlq.messages.insert(seq, m);
                }
                dlq.notify.notify_waiters();
            }
        }
        Ok((out, plan.next_visible_ms))
    }

    /// DeleteMessage. Deleting a message that is already gone succeeds, as in AWS.
    pub fn delete_message(&self, caller: &Caller, url: &str, handle: &str) -> Result<(), AwsError> {
        self.with_queue(caller, url, |q| {
            let r = decode_receipt(&q.meta.name, handle)?;
            if q.messages.get(&r.seq).is_some_and(|m| m.id == r.message_id) {
                self.store
                    .write(|tx| state::delete_message(tx, &q.meta.region, &q.meta.name, r.seq))
                    .map_err(store_err)?;
                q.messages.remove(&r.seq);
            }
            Ok(())
        })
    }

    pub fn delete_message_batch(
        &self,
        caller: &Caller,
        url: &str,
        entries: &[(String, String)],
    ) -> Result<BatchOutput<()>, AwsError> {
        check_batch_ids(
            entries.iter().map(|(id, _)| id.as_str()),
            "DeleteMessageBatchRequestEntry",
        )?;
        let mut out = BatchOutput {
            successful: Vec::new(),
            failed: Vec::new(),
        };
        for (id, handle) in entries {
            match self.delete_message(caller, url, handle) {
                Ok(()) => out.successful.push((id.clone(), ())),
                Err(e) if e.code == "QueueDoesNotExist" => return Err(e),
                Err(e) => out.failed.push(batch_error(id, e)),
            }
        }
        Ok(out)
    }

    /// ChangeMessageVisibility: only for a message in flight, through its current receipt.
    pub fn change_message_visibility(
        &self,
        caller: &Caller,
        url: &str,
        handle: &str,
        timeout: i64,
    ) -> Result<(), AwsError> {
        self.with_queue(caller, url, |q| {
            let r = decode_receipt(&q.meta.name, handle)?;
            if !(0..=43_200).contains(&timeout) {
                return Err(invalid_parameter(
                    "VisibilityTimeout",
                    timeout,
                    "VisibilityTimeout must be an integer between 0 and 43200",
                ));
            }
            let now = now_ms();
            let Some(m) = q.messages.get(&r.seq).filter(|m| m.id == r.message_id) else {
                return Err(message_not_inflight());
            };
            if !m.in_flight(now) {
                return Err(message_not_inflight());
            }
            if m.receipt_nonce.as_deref() != Some(r.nonce.as_str()) {
                return Err(invalid_parameter(
                    "ReceiptHandle",
                    handle,
                    "The receipt handle has expired.",
                ));
            }
            let mut m = m.clone();
            m.visible_at_ms = now + timeout * 1000;
            self.store
                .write(|tx| state::put_message(tx, &q.meta.region, &q.meta.name, r.seq, &m))
                .map_err(store_err)?;
            q.messages.insert(r.seq, m);
            if timeout == 0 {
                q.notify.notify_waiters();
            }
            Ok(())
        })
    }

    pub fn change_message_visibility_batch(
        &self,
        caller: &Caller,
        url: &str,
        entries: &[(String, String, i64)],
    ) -> Result<BatchOutput<()>, AwsError> {
        check_batch_ids(
            entries.iter().map(|(id, _, _)| id.as_str()),
            "ChangeMessageVisibilityBatchRequestEntry",
        )?;
        let mut out = BatchOutput {
            successful: Vec::new(),
            failed: Vec::new(),
        };
        for (id, handle, timeout) in entries {
            match self.change_message_visibility(caller, url, handle, *timeout) {
                Ok(()) => out.successful.push((id.clone(), ())),
                Err(e) if e.code == "QueueDoesNotExist" => return Err(e),
                Err(e) => out.failed.push(batch_error(id, e)),
            }
        }
        Ok(out)
    }

    /// PurgeQueue: deletes every message; a second purge within 60 s is refused as in AWS.
    pub fn purge_queue(&self, caller: &Caller, url: &str) -> Result<(), AwsError> {
        self.with_queue(caller, url, |q| {
            let now = now_ms();
            if q.meta
                .last_purge_ms
                .is_some_and(|t| now - t < PURGE_INTERVAL_MS)
            {
                return Err(purge_queue_in_progress(&q.meta.name));
            }
            let mut meta = q.meta.clone();
            meta.last_purge_ms = Some(now);
            self.store
                .write(|tx| {
                    state::put_queue(tx, &meta)?;
                    state::delete_all_messages(tx, &meta.region, &meta.name)
                })
                .map_err(store_err)?;
            q.meta = meta;
            q.messages.clear();
            Ok(())
        })
    }

    /// ListDeadLetterSourceQueues: queues whose RedrivePolicy targets this one.
    pub fn list_dead_letter_source_queues(
        &self,
        caller: &Caller,
        url: &str,
        max_results: Option<i64>,
        next_token: Option<&str>,
    ) -> Result<QueueUrlPage, AwsError> {
        let arn = self.with_queue(caller, url, |q| Ok(q.meta.arn()))?;
        let mut names: Vec<String> = {
            let queues = self.lock();
            queues
                .values()
                .filter(|q| q.meta.region == caller.region)
                .filter(|q| {
                    q.meta
                        .attributes
                        .get("RedrivePolicy")
                        .and_then(|rp| RedrivePolicy::parse(rp).ok())
                        .is_some_and(|rp| rp.dead_letter_target_arn == arn)
                })
                .map(|q| q.meta.name.clone())
                .collect()
        };
        names.sort();
        paginate(caller, names, max_results, next_token)
    }

    /// The delivery path of SNS and EventBridge: SendMessage addressed by queue ARN.
    pub fn send_to_arn(
        &self,
        queue_arn: &str,
        input: &SendMessageInput,
    ) -> Result<SendMessageOutput, AwsError> {
        let (region, account, name) =
            parse_queue_arn(queue_arn).ok_or_else(queue_does_not_exist)?;
        let caller = Caller {
            region: region.to_string(),
            account_id: account.to_string(),
            host: "localhost".to_string(),
            sender_id: account.to_string(),
        };
        self.send_message(&caller, &format!("/{account}/{name}"), input)
    }
}

/// Validates a RedrivePolicy's target: it must exist in this region and be of the same type.
fn check_dead_letter_target(
    queues: &HashMap<QueueKey, Queue>,
    caller: &Caller,
    policy: &str,
    fifo: bool,
) -> Result<(), AwsError> {
    let rp = RedrivePolicy::parse(policy)?;
    let bad = |reason: &str| {
        invalid_parameter_value(format!(
            "Value {policy} for parameter RedrivePolicy is invalid. Reason: {reason}"
        ))
    };
    let target = parse_queue_arn(&rp.dead_letter_target_arn)
        .filter(|(region, _, _)| *region == caller.region)
        .and_then(|(region, _, name)| queues.get(&(region.to_string(), name.to_string())))
        .ok_or_else(|| bad("Dead-letter target does not exist."))?;
    if target.meta.is_fifo() != fifo {
        return Err(bad(
            "Dead-letter queue must be same type of queue as the source.",
        ));
    }
    Ok(())
}

fn paginate(
    caller: &Caller,
    names: Vec<String>,
    max_results: Option<i64>,
    next_token: Option<&str>,
) -> Result<QueueUrlPage, AwsError> {
    if let Some(m) = max_results {
        if !(1..=1000).contains(&m) {
            return Err(invalid_parameter(
                "MaxResults",
                m,
                "MaxResults must be an integer between 1 and 1000.",
            ));
        }
    }
    let start = match next_token {
        Some(t) if !t.is_empty() => {
            let after = B64
                .decode(t)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| invalid_parameter_value("Invalid NextToken value."))?;
            names.partition_point(|n| *n <= after)
        }
        _ => 0,
    };
    let limit = max_results.unwrap_or(1000) as usize;
    let page: Vec<String> = names.iter().skip(start).take(limit).cloned().collect();
    let more = start + page.len() < names.len();
    let next_token = (max_results.is_some() && more)
        .then(|| page.last().map(|n| B64.encode(n)))
        .flatten();
    Ok(QueueUrlPage {
        queue_urls: page.iter().map(|n| caller.queue_url(n)).collect(),
        next_token,
    })
}

/// A validated send, not yet committed.
struct PreparedSend {
    seq: u64,
    /// The new message; for a FIFO duplicate, a copy carrying the original's ids.
    message: Message,
    /// False for a FIFO duplicate within the deduplication window: nothing is enqueued.
    is_new: bool,
    /// The queue description when the send changes it (FIFO dedup records, sequence counter).
    meta: Option<QueueMeta>,
}

fn send_output(input: &SendMessageInput, p: &PreparedSend) -> SendMessageOutput {
    SendMessageOutput {
        message_id: p.message.id.clone(),
        md5_of_body: p.message.md5_of_body.clone(),
        md5_of_message_attributes: md5_of_attributes(&input.message_attributes),
        md5_of_system_attributes: md5_of_attributes(&input.system_attributes),
        sequence_number: p.message.sequence_number.clone(),
    }
}

/// Validates a send against the queue and builds the message.
fn prepare_send(
    q: &Queue,
    caller: &Caller,
    input: &SendMessageInput,
    now: i64,
) -> Result<PreparedSend, AwsError> {
    let meta = &q.meta;
    let fifo = meta.is_fifo();
    if input.body.is_empty() {
        return Err(missing_parameter("MessageBody"));
    }
    if !valid_message_chars(&input.body)
        || input
            .message_attributes
            .values()
            .filter_map(|v| v.string_value.as_deref())
            .any(|s| !valid_message_chars(s))
    {
        return Err(invalid_message_contents());
    }
    validate_message_attributes(&input.message_attributes)?;
    for (name, v) in &input.system_attributes {
        if name != "AWSTraceHeader" || v.data_type != "String" || v.string_value.is_none() {
            return Err(invalid_parameter_value(format!(
                "Message system attribute name '{name}' is invalid."
            )));
        }
    }
    let max_size = meta.int_attr("MaximumMessageSize", MAX_PAYLOAD);
    let size = input.body.len() + attributes_size(&input.message_attributes);
    if size as i64 > max_size {
        return Err(invalid_parameter_value(format!(
            "One or more parameters are invalid. Reason: Message must be shorter than {max_size} bytes."
        )));
    }
    let delay = match input.delay_seconds {
        Some(d) if fifo => {
            return Err(invalid_parameter(
                "DelaySeconds",
                d,
                "The request include parameter that is not valid for this queue type.",
            ));
        }
        Some(d) if !(0..=900).contains(&d) => {
            return Err(invalid_parameter(
                "DelaySeconds",
                d,
                "DelaySeconds must be >= 0 and <= 900.",
            ));
        }
        Some(d) => d,
        None => meta.int_attr("DelaySeconds", 0),
    };
    if let Some(g) = &input.group_id {
        if !valid_fifo_id(g) {
            return Err(invalid_parameter(
                "MessageGroupId",
                g,
                "MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.",
            ));
        }
    }
    if let Some(d) = &input.dedup_id {
        if !fifo {
            return Err(invalid_parameter(
                "MessageDeduplicationId",
                d,
                "The request include parameter that is not valid for this queue type.",
            ));
        }
        if !valid_fifo_id(d) {
            return Err(invalid_parameter(
                "MessageDeduplicationId",
                d,
                "MessageDeduplicationId can only include alphanumeric and punctuation characters. 1 to 128 in length.",
            ));
        }
    }
    let seq = meta.next_seq;
    let mut msg = Message {
        id: uuid::Uuid::new_v4().to_string(),
        body: input.body.clone(),
        md5_of_body: md5_hex(input.body.as_bytes()),
        attributes: input.message_attributes.clone(),
        system_attributes: input.system_attributes.clone(),
        sender_id: caller.sender_id.clone(),
        sent_ms: now,
        visible_at_ms: now + delay * 1000,
        receive_count: 0,
        first_receive_ms: None,
        receipt_nonce: None,
        group_id: input.group_id.clone(),
        dedup_id: None,
        sequence_number: None,
        dead_letter_source_arn: None,
    };
    if !fifo {
        return Ok(PreparedSend {
            seq,
            message: msg,
            is_new: true,
            meta: None,
        });
    }
    let group = input
        .group_id
        .as_deref()
        .ok_or_else(|| missing_parameter("MessageGroupId"))?;
    let dedup = match &input.dedup_id {
        Some(d) => d.clone(),
        None if meta
            .attributes
            .get("ContentBasedDeduplication")
            .map(String::as_str)
            == Some("true") =>
        {
            Sha256::digest(input.body.as_bytes())
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect()
        }
        None => {
            return Err(invalid_parameter_value(
                "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
            ));
        }
    };
    let scope_key = if meta
        .attributes
        .get("DeduplicationScope")
        .map(String::as_str)
        == Some("messageGroup")
    {
        format!("{group}\u{1}{dedup}")
    } else {
        dedup.clone()
    };
    let mut next = meta.clone();
    next.dedup.retain(|_, e| e.expires_ms > now);
    if let Some(prev) = next.dedup.get(&scope_key) {
        msg.id = prev.message_id.clone();
        msg.sequence_number = prev.sequence_number.clone();
        return Ok(PreparedSend {
            seq,
            message: msg,
            is_new: false,
            meta: Some(next),
        });
    }
    msg.dedup_id = Some(dedup);
    msg.sequence_number = Some(sequence_number(seq));
    next.dedup.insert(
        scope_key,
        state::DedupEntry {
            expires_ms: now + DEDUP_WINDOW_MS,
            message_id: msg.id.clone(),
            sequence_number: msg.sequence_number.clone(),
        },
    );
    next.next_seq = seq + 1;
    Ok(PreparedSend {
        seq,
        message: msg,
        is_new: true,
        meta: Some(next),
    })
}

/// Decides one receive pass over `q` without changing it (see [`ReceivePlan`]). FIFO queues
/// deliver in order per message group and never deliver from a group that has a message in
/// flight; `max_receive` is the redrive policy's maxReceiveCount when its target exists.
fn plan_receive(
    q: &Queue,
    now: i64,
    max: usize,
    input: &ReceiveMessageInput,
    max_receive: Option<i64>,
) -> ReceivePlan {
    let fifo = q.meta.is_fifo();
    let retention_ms = q.meta.int_attr("MessageRetentionPeriod", 345_600) * 1000;
    let visibility_s = input
        .visibility_timeout
        .unwrap_or_else(|| q.meta.int_attr("VisibilityTimeout", 30));
    let mut locked: HashSet<&str> = HashSet::new();
    if fifo {
        for m in q.messages.values().filter(|m| m.in_flight(now)) {
            if let Some(g) = &m.group_id {
                locked.insert(g);
            }
        }
    }
    let mut plan = ReceivePlan::default();
    for (seq, m) in &q.messages {
        if plan.received.len() >= max {
            break;
        }
        if m.sent_ms + retention_ms <= now {
            plan.expired.push(*seq);
            continue;
        }
        let group = m.group_id.as_deref().unwrap_or("");
        if m.visible_at_ms > now {
            plan.next_visible_ms = Some(
                plan.next_visible_ms
                    .map_or(m.visible_at_ms, |t: i64| t.min(m.visible_at_ms)),
            );
            if fifo {
                locked.insert(group);
            }
            continue;
        }
        if fifo && locked.contains(group) {
            continue;
        }
        if max_receive.is_some_and(|n| m.receive_count >= n) {
            plan.redrive.push((*seq, m.clone()));
            continue;
        }
        let mut m = m.clone();
        m.receive_count += 1;
        m.first_receive_ms.get_or_insert(now);
        m.visible_at_ms = now + visibility_s * 1000;
        m.receipt_nonce = Some(uuid::Uuid::new_v4().simple().to_string());
        plan.received.push((*seq, m));
    }
    plan
}
