//! Queue attributes: which exist, their defaults and the ranges AWS accepts. Values are kept as the
//! strings AWS returns (`"30"`, `"true"`), already normalised, so GetQueueAttributes just copies
//! them and CreateQueue's idempotency check compares like with like.

use super::errors::{invalid_attribute_name, invalid_attribute_value, invalid_parameter_value};
use cumulo_wire::AwsError;
use std::collections::BTreeMap;

/// Every attribute GetQueueAttributes knows, in the order AWS lists them for `All`.
pub const ALL_NAMES: &[&str] = &[
    "QueueArn",
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "CreatedTimestamp",
    "LastModifiedTimestamp",
    "VisibilityTimeout",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "DelaySeconds",
    "Policy",
    "RedrivePolicy",
    "RedriveAllowPolicy",
    "ReceiveMessageWaitTimeSeconds",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled",
    "FifoQueue",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
];

/// Attributes computed by SQS, never set by callers.
pub const READ_ONLY: &[&str] = &[
    "QueueArn",
    "ApproximateNumberOfMessages",
    "ApproximateNumberOfMessagesNotVisible",
    "ApproximateNumberOfMessagesDelayed",
    "CreatedTimestamp",
    "LastModifiedTimestamp",
];

/// Attributes that exist only on FIFO queues (AWS calls them unknown on standard queues).
pub const FIFO_ONLY: &[&str] = &[
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
];

/// Attributes that a caller may set but that can be cleared with an empty string.
const CLEARABLE: &[&str] = &[
    "Policy",
    "RedrivePolicy",
    "RedriveAllowPolicy",
    "KmsMasterKeyId",
];

/// Integer attributes and their inclusive ranges.
const INTEGER_RANGES: &[(&str, i64, i64)] = &[
    ("DelaySeconds", 0, 900),
    ("MaximumMessageSize", 1024, 1_048_576),
    ("MessageRetentionPeriod", 60, 1_209_600),
    ("ReceiveMessageWaitTimeSeconds", 0, 20),
    ("VisibilityTimeout", 0, 43_200),
    ("KmsDataKeyReusePeriodSeconds", 60, 86_400),
];

/// The attributes a new queue has before the caller's are applied.
pub fn defaults(fifo: bool) -> BTreeMap<String, String> {
    let mut m: BTreeMap<String, String> = [
        ("VisibilityTimeout", "30"),
        ("MaximumMessageSize", "1048576"),
        ("MessageRetentionPeriod", "345600"),
        ("DelaySeconds", "0"),
        ("ReceiveMessageWaitTimeSeconds", "0"),
        ("SqsManagedSseEnabled", "true"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    if fifo {
        for (k, v) in [
            ("FifoQueue", "true"),
            ("ContentBasedDeduplication", "false"),
            ("DeduplicationScope", "queue"),
            ("FifoThroughputLimit", "perQueue"),
        ] {
            m.insert(k.to_string(), v.to_string());
        }
    }
    m
}

/// A parsed RedrivePolicy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedrivePolicy {
    pub dead_letter_target_arn: String,
    pub max_receive_count: i64,
}

impl RedrivePolicy {
    /// Parses the JSON AWS accepts (`maxReceiveCount` as number or numeric string).
    pub fn parse(value: &str) -> Result<Self, AwsError> {
        let bad = |reason: &str| {
            invalid_parameter_value(format!(
                "Value {value} for parameter RedrivePolicy is invalid. Reason: {reason}"
            ))
        };
        let v: serde_json::Value = serde_json::from_str(value)
            .map_err(|_| bad("Redrive policy is not a valid JSON map."))?;
        let obj = v
            .as_object()
            .ok_or_else(|| bad("Redrive policy is not a valid JSON map."))?;
        let arn = obj
            .get("deadLetterTargetArn")
            .and_then(|a| a.as_str())
            .ok_or_else(|| {
                bad("Redrive policy does not contain mandatory attribute: deadLetterTargetArn.")
            })?;
        let count = match obj.get("maxReceiveCount") {
            Some(serde_json::Value::Number(n)) => n.as_i64(),
            Some(serde_json::Value::String(s)) => s.parse::<i64>().ok(),
            None => {
                return Err(bad(
                    "Redrive policy does not contain mandatory attribute: maxReceiveCount.",
                ));
            }
            _ => None,
        };
        let count = count.filter(|c| (1..=1000).contains(c)).ok_or_else(|| {
            bad("Invalid value for maxReceiveCount: valid values are from 1 to 1000 both inclusive.")
        })?;
        Ok(RedrivePolicy {
            dead_letter_target_arn: arn.to_string(),
            max_receive_count: count,
        })
    }

    /// The normalised JSON AWS returns.
    pub fn to_json(&self) -> String {
        serde_json::json!({
            "deadLetterTargetArn": self.dead_letter_target_arn,
            "maxReceiveCount": self.max_receive_count,
        })
        .to_string()
    }
}

/// Validates and normalises one caller-supplied attribute. `Ok(None)` means "clear it".
pub fn validate(name: &str, value: &str, fifo: bool) -> Result<Option<String>, AwsError> {
    if READ_ONLY.contains(&name) || !ALL_NAMES.contains(&name) {
        return Err(invalid_attribute_name(name));
    }
    if !fifo && FIFO_ONLY.contains(&name) {
        return Err(invalid_attribute_name(name));
    }
    if CLEARABLE.contains(&name) && value.is_empty() {
        return Ok(None);
    }
    if let Some((_, lo, hi)) = INTEGER_RANGES.iter().find(|(n, _, _)| *n == name) {
        return match value.trim().parse::<i64>() {
            Ok(n) if (*lo..=*hi).contains(&n) => Ok(Some(n.to_string())),
            _ => Err(invalid_attribute_value(name)),
        };
    }
    match name {
        "FifoQueue" | "ContentBasedDeduplication" | "SqsManagedSseEnabled" => {
            match value.to_ascii_lowercase().as_str() {
                b @ ("true" | "false") => Ok(Some(b.to_string())),
                _ => Err(invalid_attribute_value(name)),
            }
        }
        "DeduplicationScope" => match value {
            "messageGroup" | "queue" => Ok(Some(value.to_string())),
            _ => Err(invalid_attribute_value(name)),
        },
        "FifoThroughputLimit" => match value {
            "perQueue" | "perMessageGroupId" => Ok(Some(value.to_string())),
            _ => Err(invalid_attribute_value(name)),
        },
        "Policy" => match serde_json::from_str::<serde_json::Value>(value) {
            Ok(serde_json::Value::Object(_)) => Ok(Some(value.to_string())),
            _ => Err(invalid_attribute_value(name)),
        },
        "RedrivePolicy" => Ok(Some(RedrivePolicy::parse(value)?.to_json())),
        "RedriveAllowPolicy" => validate_redrive_allow(value).map(Some),
        _ => Ok(Some(value.to_string())),
    }
}

fn validate_redrive_allow(value: &str) -> Result<String, AwsError> {
    let bad = |reason: &str| {
        invalid_parameter_value(format!(
            "Value {value} for parameter RedriveAllowPolicy is invalid. Reason: {reason}"
        ))
    };
    let v: serde_json::Value = serde_json::from_str(value)
        .map_err(|_| bad("Amazon SQS can't parse the redrive allow policy."))?;
    let permission = v
        .get("redrivePermission")
        .and_then(|p| p.as_str())
        .ok_or_else(|| bad("Amazon SQS can't parse the redrive allow policy."))?;
    let sources = v.get("sourceQueueArns").and_then(|s| s.as_array());
    match (permission, sources) {
        ("allowAll" | "denyAll", None) => Ok(value.to_string()),
        ("byQueue", Some(list)) if !list.is_empty() && list.len() <= 10 => Ok(value.to_string()),
        ("byQueue", _) => Err(bad(
            "Specify between 1 and 10 source queue ARNs when redrivePermission is byQueue.",
        )),
        ("allowAll" | "denyAll", Some(_)) => Err(bad(
            "Only specify source queue ARNs when redrivePermission is byQueue.",
        )),
        _ => Err(bad("Invalid value for redrivePermission.")),
    }
}

/// Applies validated changes to `attrs`, enforcing the rules that span several attributes.
pub fn apply(
    attrs: &mut BTreeMap<String, String>,
    changes: &BTreeMap<String, String>,
    fifo: bool,
) -> Result<(), AwsError> {
    let mut next = attrs.clone();
    for (name, value) in changes {
        match validate(name, value, fifo)? {
            Some(v) => next.insert(name.clone(), v),
            None => next.remove(name),
        };
    }
    if changes.contains_key("KmsMasterKeyId") && next.contains_key("KmsMasterKeyId") {
        if changes.get("SqsManagedSseEnabled").map(String::as_str) == Some("true") {
            return Err(invalid_parameter_value(
                "You can use one type of server-side encryption (SSE) at one time. You can either enable KMS SSE or SQS SSE.",
            ));
        }
        next.insert("SqsManagedSseEnabled".into(), "false".into());
        next.entry("KmsDataKeyReusePeriodSeconds".into())
            .or_insert_with(|| "300".into());
    } else if next.get("SqsManagedSseEnabled").map(String::as_str) == Some("true") {
        next.remove("KmsMasterKeyId");
        next.remove("KmsDataKeyReusePeriodSeconds");
    }
    if next.get("FifoThroughputLimit").map(String::as_str) == Some("perMessageGroupId")
        && next.get("DeduplicationScope").map(String::as_str) != Some("messageGroup")
    {
        return Err(invalid_parameter_value(
            "The perMessageGroupId value is allowed only when the value for DeduplicationScope is messageGroup.",
        ));
    }
    *attrs = next;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integer_ranges() {
        assert_eq!(
            validate("VisibilityTimeout", "0", false).unwrap(),
            Some("0".into())
        );
        assert_eq!(
            validate("VisibilityTimeout", "43200", false).unwrap(),
            Some("43200".into())
        );
        assert_eq!(
            validate("VisibilityTimeout", "43201", false)
                .unwrap_err()
                .code,
            "InvalidAttributeValue"
        );
        assert_eq!(
            validate("DelaySeconds", "-1", false).unwrap_err().code,
            "InvalidAttributeValue"
        );
        assert_eq!(
            validate("MaximumMessageSize", "1023", false)
                .unwrap_err()
                .code,
            "InvalidAttributeValue"
        );
        assert_eq!(
            validate("MessageRetentionPeriod", "abc", false)
                .unwrap_err()
                .code,
            "InvalidAttributeValue"
        );
        assert_eq!(
            validate("ReceiveMessageWaitTimeSeconds", "20", false).unwrap(),
            Some("20".into())
        );
    }

    #[test]
    fn names_are_checked() {
        assert_eq!(
            validate("Bogus", "1", false).unwrap_err().code,
            "InvalidAttributeName"
        );
        assert_eq!(
            validate("QueueArn", "x", false).unwrap_err().code,
            "InvalidAttributeName"
        );
        assert_eq!(
            validate("ContentBasedDeduplication", "true", false)
                .unwrap_err()
                .code,
            "InvalidAttributeName"
        );
        assert_eq!(
            validate("ContentBasedDeduplication", "TRUE", true).unwrap(),
            Some("true".into())
        );
        assert_eq!(validate("Policy", "", false).unwrap(), None);
        assert_eq!(
            validate("Policy", "[1]", false).unwrap_err().code,
            "InvalidAttributeValue"
        );
    }

    #[test]
    fn redrive_policy_is_normalised_and_checked() {
        let v = validate(
            "RedrivePolicy",
            r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:d","maxReceiveCount":"3"}"#,
            false,
        )
        .unwrap()
        .unwrap();
        assert_eq!(
            v,
            r#"{"deadLetterTargetArn":"arn:aws:sqs:us-east-1:000000000000:d","maxReceiveCount":3}"#
        );
        let e = validate(
            "RedrivePolicy",
            r#"{"deadLetterTargetArn":"a","maxReceiveCount":0}"#,
            false,
        );
        assert_eq!(e.unwrap_err().code, "InvalidParameterValue");
        assert!(validate("RedrivePolicy", "nope", false).is_err());
    }

    #[test]
    fn cross_attribute_rules() {
        let mut a = defaults(true);
        let mut c = BTreeMap::new();
        c.insert(
            "FifoThroughputLimit".to_string(),
            "perMessageGroupId".to_string(),
        );
        assert!(apply(&mut a, &c, true).is_err());
        assert_eq!(
            a["FifoThroughputLimit"], "perQueue",
            "a failed apply changes nothing"
        );
        c.insert("DeduplicationScope".to_string(), "messageGroup".to_string());
        apply(&mut a, &c, true).unwrap();
        assert_eq!(a["FifoThroughputLimit"], "perMessageGroupId");

        let mut a = defaults(false);
        let mut c = BTreeMap::new();
        c.insert("KmsMasterKeyId".to_string(), "alias/aws/sqs".to_string());
        apply(&mut a, &c, false).unwrap();
        assert_eq!(a["SqsManagedSseEnabled"], "false");
        assert_eq!(a["KmsDataKeyReusePeriodSeconds"], "300");
    }
}
