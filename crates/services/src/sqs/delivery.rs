//! The pure decision logic of message delivery: validating a send, choosing which messages a
//! receive takes (FIFO group locking, redrive, retention), and receipt handles. Nothing here
//! touches the store; [`super::messages`] commits what these functions decide.

use super::errors::*;
use super::model::*;
use super::ops::Caller;
use super::state::{DedupEntry, Message, Queue};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_wire::AwsError;
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};

/// Deduplication ids live for five minutes, as in AWS.
const DEDUP_WINDOW_MS: i64 = 5 * 60 * 1000;
/// Entries per batch request.
const MAX_BATCH: usize = 10;
/// The largest message (and batch) AWS accepts, whatever the queue's MaximumMessageSize.
pub const MAX_PAYLOAD: i64 = 1_048_576;

/// Encodes which delivery of which message a receipt handle names.
pub(super) fn encode_receipt(queue: &str, seq: u64, msg: &Message) -> String {
    let nonce = msg.receipt_nonce.as_deref().unwrap_or("");
    B64.encode(format!("{queue}\u{1}{seq}\u{1}{}\u{1}{nonce}", msg.id))
}

pub(super) struct Receipt {
    pub(super) seq: u64,
    pub(super) message_id: String,
    pub(super) nonce: String,
}

pub(super) fn decode_receipt(queue: &str, handle: &str) -> Result<Receipt, AwsError> {
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
pub(super) fn check_batch_ids<'a>(
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

pub(super) fn batch_error(id: &str, e: AwsError) -> BatchError {
    BatchError {
        id: id.to_string(),
        code: e.query_code.clone().unwrap_or(e.code.clone()),
        message: e.message,
        sender_fault: e.sender_fault,
    }
}

/// Message attribute rules from the SQS developer guide.
pub(super) fn validate_message_attributes(attrs: &MessageAttributes) -> Result<(), AwsError> {
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
                if t == "Number" && !is_number(s) {
                    return Err(invalid_parameter_value(format!(
                        "Can't cast the value of message (user) attribute '{name}' to a number."
                    )));
                }
            }
        }
    }
    Ok(())
}

pub(super) fn attributes_size(attrs: &MessageAttributes) -> usize {
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

/// A Number attribute: a decimal number (AWS allows up to 38 significant digits and exponents),
/// never `inf` or `NaN`, which Rust's float parser would accept.
fn is_number(s: &str) -> bool {
    let t = s.trim();
    t.starts_with(|c: char| c.is_ascii_digit() || matches!(c, '-' | '+' | '.'))
        && t.chars()
            .all(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'))
        && t.parse::<f64>().is_ok_and(f64::is_finite)
}

/// Characters AWS accepts in bodies and string values (the XML 1.0 character set).
pub(super) fn valid_message_chars(s: &str) -> bool {
    s.chars().all(|c| {
        matches!(c, '\u{9}' | '\u{A}' | '\u{D}' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}')
            || c >= '\u{10000}'
    })
}

/// A FIFO group or deduplication id: 1-128 alphanumeric or punctuation characters.
pub(super) fn valid_fifo_id(s: &str) -> bool {
    !s.is_empty() && s.len() <= 128 && s.chars().all(|c| c.is_ascii_graphic())
}

pub(super) fn sequence_number(seq: u64) -> String {
    // 20 digits, increasing, not consecutive — the shape of AWS's 128-bit sequence numbers.
    (18_000_000_000_000_000_000u128 + u128::from(seq) * 1_000).to_string()
}

pub(super) fn system_attribute(name: &str, m: &Message) -> Option<String> {
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
pub(super) fn wants_message_attribute(patterns: &[String], name: &str) -> bool {
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

pub(super) fn render_received(
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
pub(super) struct ReceivePlan {
    pub(super) expired: Vec<u64>,
    /// Messages to move to the dead-letter queue: (source seq, message as it lands there).
    pub(super) redrive: Vec<(u64, Message)>,
    pub(super) received: Vec<(u64, Message)>,
    /// When the next invisible message becomes visible, to bound a long poll's sleep.
    pub(super) next_visible_ms: Option<i64>,
}

/// A validated send, not yet committed.
pub(super) struct PreparedSend {
    pub(super) seq: u64,
    /// The new message; for a FIFO duplicate, a copy carrying the original's ids.
    pub(super) message: Message,
    /// False for a FIFO duplicate within the deduplication window: nothing is enqueued.
    pub(super) is_new: bool,
    /// The deduplication record a new FIFO message creates, by scope key.
    pub(super) dedup: Option<(String, DedupEntry)>,
}

pub(super) fn send_output(input: &SendMessageInput, p: &PreparedSend) -> SendMessageOutput {
    SendMessageOutput {
        message_id: p.message.id.clone(),
        md5_of_body: p.message.md5_of_body.clone(),
        md5_of_message_attributes: md5_of_attributes(&input.message_attributes),
        md5_of_system_attributes: md5_of_attributes(&input.system_attributes),
        sequence_number: p.message.sequence_number.clone(),
    }
}

/// Validates a send against the queue and builds the message with sequence `seq`. `pending`
/// holds deduplication records created earlier in the same batch, not yet in the queue.
pub(super) fn prepare_send(
    q: &Queue,
    pending: &HashMap<String, DedupEntry>,
    seq: u64,
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
    if let Some(g) = &input.group_id
        && !valid_fifo_id(g)
    {
        return Err(invalid_parameter(
            "MessageGroupId",
            g,
            "MessageGroupId can only include alphanumeric and punctuation characters. 1 to 128 in length.",
        ));
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
            dedup: None,
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
    if let Some(prev) = pending
        .get(&scope_key)
        .or_else(|| q.dedup.get(&scope_key, now))
    {
        msg.id = prev.message_id.clone();
        msg.sequence_number = prev.sequence_number.clone();
        return Ok(PreparedSend {
            seq,
            message: msg,
            is_new: false,
            dedup: None,
        });
    }
    msg.dedup_id = Some(dedup);
    msg.sequence_number = Some(sequence_number(seq));
    let entry = DedupEntry {
        expires_ms: now + DEDUP_WINDOW_MS,
        message_id: msg.id.clone(),
        sequence_number: msg.sequence_number.clone(),
    };
    Ok(PreparedSend {
        seq,
        message: msg,
        is_new: true,
        dedup: Some((scope_key, entry)),
    })
}

/// Decides one receive pass over `q` without changing it (see [`ReceivePlan`]); the caller has
/// promoted messages that became visible. FIFO queues deliver in order per message group and
/// never deliver from a group with a message in flight, nor past a group's delayed message;
/// `max_receive` is the redrive policy's maxReceiveCount when its target exists.
pub(super) fn plan_receive(
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
    let mut in_flight_groups: HashSet<&str> = HashSet::new();
    let mut first_delayed: HashMap<&str, u64> = HashMap::new();
    if fifo {
        for (seq, m) in q.messages.waiting() {
            let group = m.group_id.as_deref().unwrap_or("");
            if m.receive_count > 0 {
                in_flight_groups.insert(group);
            } else {
                let first = first_delayed.entry(group).or_insert(seq);
                *first = (*first).min(seq);
            }
        }
    }
    let mut plan = ReceivePlan {
        next_visible_ms: q.messages.next_visible_ms(),
        ..Default::default()
    };
    for (seq, m) in q.messages.ready() {
        if plan.received.len() >= max {
            break;
        }
        if m.sent_ms + retention_ms <= now {
            plan.expired.push(seq);
            continue;
        }
        let group = m.group_id.as_deref().unwrap_or("");
        let blocked =
            in_flight_groups.contains(group) || first_delayed.get(group).is_some_and(|d| *d < seq);
        if fifo && blocked {
            continue;
        }
        if max_receive.is_some_and(|n| m.receive_count >= n) {
            plan.redrive.push((seq, m.clone()));
            continue;
        }
        let mut m = m.clone();
        m.receive_count += 1;
        m.first_receive_ms.get_or_insert(now);
        m.visible_at_ms = now + visibility_s * 1000;
        m.receipt_nonce = Some(uuid::Uuid::new_v4().simple().to_string());
        plan.received.push((seq, m));
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_decimal_and_finite() {
        for ok in ["0", "-1", "+2.5", ".5", "1e10", "-12.5E-3", " 7 "] {
            assert!(is_number(ok), "{ok}");
        }
        for bad in ["", "abc", "NaN", "inf", "-infinity", "1e999", "0x10", "1,5"] {
            assert!(!is_number(bad), "{bad}");
        }
    }

    #[test]
    fn message_characters_follow_xml() {
        assert!(valid_message_chars("tab\tnewline\n cr\r ✓ 𝄞"));
        assert!(!valid_message_chars("nul\0"));
        assert!(!valid_message_chars("bell\u{7}"));
        assert!(!valid_message_chars("\u{FFFE}"));
    }

    #[test]
    fn attribute_selection_patterns() {
        let p = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(wants_message_attribute(&p(&["All"]), "x"));
        assert!(wants_message_attribute(&p(&[".*"]), "x"));
        assert!(wants_message_attribute(&p(&["foo.*"]), "foo.bar"));
        assert!(!wants_message_attribute(&p(&["foo.*"]), "foobar"));
        assert!(!wants_message_attribute(&p(&["foo.*"]), "foo"));
        assert!(wants_message_attribute(&p(&["exact"]), "exact"));
        assert!(!wants_message_attribute(&p(&[]), "x"));
    }

    #[test]
    fn batch_ids_are_validated_before_any_entry() {
        let ids = |v: &[&str]| check_batch_ids(v.iter().copied(), "E").map_err(|e| e.code);
        assert_eq!(ids(&[]).unwrap_err(), "EmptyBatchRequest");
        assert_eq!(ids(&["a"; 11]).unwrap_err(), "TooManyEntriesInBatchRequest");
        assert_eq!(ids(&["a", "a"]).unwrap_err(), "BatchEntryIdsNotDistinct");
        assert_eq!(ids(&["a b"]).unwrap_err(), "InvalidBatchEntryId");
        assert!(ids(&["a-1", "B_2"]).is_ok());
    }
}
