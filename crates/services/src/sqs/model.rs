//! The typed inputs and outputs of SQS operations, independent of the wire protocol, and the MD5
//! digests AWS returns over them (clients such as botocore and the Java SDK recompute and compare
//! them, so they must be bit-exact).

use md5::{Digest, Md5};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One message attribute (`MessageAttributeValue`). The data type is `String`, `Number` or
/// `Binary`, optionally followed by `.custom-label`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MessageAttributeValue {
    pub data_type: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub string_value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary_value: Option<Vec<u8>>,
}

/// Attributes by name; a `BTreeMap` because AWS digests them in name order.
pub type MessageAttributes = BTreeMap<String, MessageAttributeValue>;

/// What SendMessage (and each SendMessageBatch entry) asks for.
#[derive(Debug, Clone, Default)]
pub struct SendMessageInput {
    pub body: String,
    pub delay_seconds: Option<i64>,
    pub message_attributes: MessageAttributes,
    /// Only `AWSTraceHeader` is accepted by AWS.
    pub system_attributes: MessageAttributes,
    pub group_id: Option<String>,
    pub dedup_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SendMessageOutput {
    pub message_id: String,
    pub md5_of_body: String,
    pub md5_of_message_attributes: Option<String>,
    pub md5_of_system_attributes: Option<String>,
    pub sequence_number: Option<String>,
}

#[derive(Debug, Clone, Default)]
pub struct ReceiveMessageInput {
    pub max_number_of_messages: Option<i64>,
    pub visibility_timeout: Option<i64>,
    pub wait_time_seconds: Option<i64>,
    /// Union of `AttributeNames` and `MessageSystemAttributeNames`.
    pub system_attribute_names: Vec<String>,
    pub message_attribute_names: Vec<String>,
    /// FIFO only: a retry with the same id returns the same messages (see `Queue::attempts`).
    pub receive_request_attempt_id: Option<String>,
}

/// A message as a look into the queue shows it (the console's peek): what it holds and where
/// it is in its life, without a receipt handle, because looking is not a receive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PeekedMessage {
    pub message_id: String,
    pub body: String,
    pub md5_of_body: String,
    pub sent_timestamp_ms: i64,
    pub receive_count: i64,
    /// `visible` (receivable now), `in_flight` (received, not yet visible again) or `delayed`.
    pub state: &'static str,
    pub group_id: Option<String>,
    /// Message attribute names and their string (or base64 binary) values.
    pub attributes: Vec<(String, String)>,
}

/// A message as ReceiveMessage returns it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceivedMessage {
    pub message_id: String,
    pub receipt_handle: String,
    pub md5_of_body: String,
    pub body: String,
    pub attributes: BTreeMap<String, String>,
    pub md5_of_message_attributes: Option<String>,
    pub message_attributes: MessageAttributes,
}

/// The error half of a batch result entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchError {
    pub id: String,
    pub code: String,
    pub message: String,
    pub sender_fault: bool,
}

/// Outcome of a batch call: per-entry successes (with their payload) and failures.
#[derive(Debug, Clone)]
pub struct BatchOutput<T> {
    pub successful: Vec<(String, T)>,
    pub failed: Vec<BatchError>,
}

/// One queue URL page of ListQueues / ListDeadLetterSourceQueues.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueueUrlPage {
    pub queue_urls: Vec<String>,
    pub next_token: Option<String>,
}

/// Hex MD5 of a string (MD5OfMessageBody).
pub fn md5_hex(data: &[u8]) -> String {
    hex_lower(&Md5::digest(data))
}

/// MD5OfMessageAttributes (and MD5OfMessageSystemAttributes) exactly as AWS computes it: for each
/// attribute in name order, the length-prefixed (4-byte big-endian) name and data type, a transport
/// byte (1 = string, 2 = binary) and the length-prefixed value. `None` when there are none, since
/// AWS then omits the field.
pub fn md5_of_attributes(attrs: &MessageAttributes) -> Option<String> {
    if attrs.is_empty() {
        return None;
    }
    fn put(h: &mut Md5, bytes: &[u8]) {
        h.update((bytes.len() as u32).to_be_bytes());
        h.update(bytes);
    }
    let mut h = Md5::new();
    for (name, value) in attrs {
        put(&mut h, name.as_bytes());
        put(&mut h, value.data_type.as_bytes());
        if let Some(s) = &value.string_value {
            h.update([1u8]);
            put(&mut h, s.as_bytes());
        } else if let Some(b) = &value.binary_value {
            h.update([2u8]);
            put(&mut h, b);
        }
    }
    Some(hex_lower(&h.finalize()))
}

fn hex_lower(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attr(t: &str, s: Option<&str>, b: Option<&[u8]>) -> MessageAttributeValue {
        MessageAttributeValue {
            data_type: t.to_string(),
            string_value: s.map(str::to_string),
            binary_value: b.map(<[u8]>::to_vec),
        }
    }

    #[test]
    fn body_md5() {
        assert_eq!(md5_hex(b"hello"), "5d41402abc4b2a76b9719d911017c592");
    }

    #[test]
    fn attributes_md5_matches_botocore() {
        // Reference digests computed independently (Python hashlib) from the algorithm in the
        // SQS developer guide, which the Java and .NET SDKs verify responses against.
        let mut a = MessageAttributes::new();
        a.insert("s".into(), attr("String", Some("v"), None));
        assert_eq!(
            md5_of_attributes(&a).unwrap(),
            "f711c779386017be0858627ced765df3"
        );
        a.insert("n".into(), attr("Number", Some("1.5"), None));
        a.insert("b".into(), attr("Binary", None, Some(&[0, 1, 2])));
        assert_eq!(
            md5_of_attributes(&a).unwrap(),
            "fb6ddc002c61a73bc91c9d4342ca5222"
        );
        assert_eq!(md5_of_attributes(&MessageAttributes::new()), None);
    }
}
