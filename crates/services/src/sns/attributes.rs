//! Which topic and subscription attributes exist, which can be set, and their value rules.

use cumulo_wire::AwsError;

pub fn invalid(message: impl std::fmt::Display) -> AwsError {
    AwsError::bad_request("InvalidParameter", format!("Invalid parameter: {message}"))
}

pub fn not_found(message: &str) -> AwsError {
    AwsError::not_found("NotFound", message)
}

/// AWS's default topic access policy.
pub fn default_policy(topic_arn: &str, account: &str) -> String {
    serde_json::json!({
        "Version": "2008-10-17",
        "Id": "__default_policy_ID",
        "Statement": [{
            "Sid": "__default_statement_ID",
            "Effect": "Allow",
            "Principal": {"AWS": "*"},
            "Action": [
                "SNS:GetTopicAttributes",
                "SNS:SetTopicAttributes",
                "SNS:AddPermission",
                "SNS:RemovePermission",
                "SNS:DeleteTopic",
                "SNS:Subscribe",
                "SNS:ListSubscriptionsByTopic",
                "SNS:Publish",
            ],
            "Resource": topic_arn,
            "Condition": {"StringEquals": {"AWS:SourceOwner": account}},
        }],
    })
    .to_string()
}

/// The delivery policy AWS reports when none is set.
pub fn default_effective_delivery_policy() -> String {
    serde_json::json!({
        "http": {
            "defaultHealthyRetryPolicy": {
                "minDelayTarget": 20,
                "maxDelayTarget": 20,
                "numRetries": 3,
                "numMaxDelayRetries": 0,
                "numNoDelayRetries": 0,
                "numMinDelayRetries": 0,
                "backoffFunction": "linear",
            },
            "disableSubscriptionOverrides": false,
            "defaultRequestPolicy": {"headerContentType": "text/plain; charset=UTF-8"},
        }
    })
    .to_string()
}

const FEEDBACK_PROTOCOLS: &[&str] = &["HTTP", "Firehose", "Lambda", "Application", "SQS"];
const FEEDBACK_SUFFIXES: &[&str] = &[
    "SuccessFeedbackRoleArn",
    "SuccessFeedbackSampleRate",
    "FailureFeedbackRoleArn",
];

fn is_feedback_attribute(name: &str) -> bool {
    FEEDBACK_PROTOCOLS.iter().any(|p| {
        name.strip_prefix(p)
            .is_some_and(|rest| FEEDBACK_SUFFIXES.contains(&rest))
    })
}

fn check_json(name: &str, value: &str) -> Result<(), AwsError> {
    if value.is_empty() {
        return Ok(());
    }
    serde_json::from_str::<serde_json::Value>(value)
        .ok()
        .filter(serde_json::Value::is_object)
        .map(|_| ())
        .ok_or_else(|| invalid(format!("{name}: failed to parse JSON")))
}

fn check_bool(name: &str, value: &str) -> Result<(), AwsError> {
    match value {
        "true" | "false" => Ok(()),
        _ => Err(invalid(format!(
            "Attributes Reason: {name}: Invalid value [{value}]. Must be true or false."
        ))),
    }
}

/// Validates one topic attribute. `creating` allows FifoTopic (it cannot change later).
pub fn check_topic_attribute(
    name: &str,
    value: &str,
    fifo: bool,
    creating: bool,
) -> Result<(), AwsError> {
    match name {
        "DisplayName" => {
            if value.chars().count() > 100 {
                return Err(invalid("DisplayName"));
            }
            Ok(())
        }
        "Policy" | "DeliveryPolicy" | "DataProtectionPolicy" => check_json(name, value),
        "KmsMasterKeyId" => Ok(()),
        "SignatureVersion" => match value {
            "1" | "2" => Ok(()),
            _ => Err(invalid(format!(
                "Attributes Reason: SignatureVersion: Invalid value [{value}]. Must be 1 or 2."
            ))),
        },
        "TracingConfig" => match value {
            "PassThrough" | "Active" => Ok(()),
            _ => Err(invalid(format!(
                "Attributes Reason: TracingConfig: Invalid value [{value}]. Must be PassThrough or Active."
            ))),
        },
        "FifoTopic" if creating => check_bool(name, value),
        "ContentBasedDeduplication" => {
            check_bool(name, value)?;
            if !fifo && value == "true" {
                return Err(invalid(
                    "ContentBasedDeduplication Reason: Content-based deduplication can only be set for FIFO topics",
                ));
            }
            Ok(())
        }
        "ArchivePolicy" | "FifoThroughputScope" if !fifo => Err(invalid(format!(
            "{name} Reason: The request includes {name} that is only valid for FIFO topics"
        ))),
        "ArchivePolicy" => check_json(name, value),
        "FifoThroughputScope" => match value {
            "Topic" | "MessageGroup" => Ok(()),
            _ => Err(invalid(format!(
                "Attributes Reason: FifoThroughputScope: Invalid value [{value}]. Must be Topic or MessageGroup."
            ))),
        },
        n if is_feedback_attribute(n) => Ok(()),
        _ => Err(invalid("AttributeName")),
    }
}

/// Validates one subscription attribute (FilterPolicy is checked by the caller, which compiles
/// it against the scope).
pub fn check_subscription_attribute(name: &str, value: &str) -> Result<(), AwsError> {
    match name {
        "RawMessageDelivery" => {
            if value.eq_ignore_ascii_case("true") || value.eq_ignore_ascii_case("false") {
                Ok(())
            } else {
                Err(invalid(format!(
                    "Attributes Reason: RawMessageDelivery: Invalid value [{value}]. Must be true or false."
                )))
            }
        }
        "FilterPolicy" => Ok(()),
        "FilterPolicyScope" => match value {
            "MessageAttributes" | "MessageBody" => Ok(()),
            _ => Err(invalid(format!(
                "Attributes Reason: FilterPolicyScope: Invalid value [{value}]. Please use either MessageBody or MessageAttributes"
            ))),
        },
        "RedrivePolicy" => {
            if value.is_empty() {
                return Ok(());
            }
            let v: serde_json::Value = serde_json::from_str(value)
                .map_err(|_| invalid("RedrivePolicy: failed to parse JSON"))?;
            match v.get("deadLetterTargetArn").and_then(|a| a.as_str()) {
                Some(arn) if arn.starts_with("arn:") && arn.split(':').count() == 6 => Ok(()),
                Some(_) => Err(invalid(
                    "RedrivePolicy: deadLetterTargetArn is an invalid arn",
                )),
                None => Err(invalid(
                    "RedrivePolicy: Redrive policy must contain deadLetterTargetArn",
                )),
            }
        }
        "DeliveryPolicy" | "ReplayPolicy" => check_json(name, value),
        "SubscriptionRoleArn" => Ok(()),
        _ => Err(invalid("AttributeName")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_attribute_rules() {
        assert!(check_topic_attribute("DisplayName", "x", false, false).is_ok());
        assert!(check_topic_attribute("FifoTopic", "true", false, true).is_ok());
        assert!(check_topic_attribute("FifoTopic", "true", true, false).is_err());
        assert!(check_topic_attribute("ContentBasedDeduplication", "true", false, false).is_err());
        assert!(check_topic_attribute("ContentBasedDeduplication", "true", true, false).is_ok());
        assert!(check_topic_attribute("SignatureVersion", "3", false, false).is_err());
        assert!(check_topic_attribute("SQSSuccessFeedbackRoleArn", "arn:x", false, false).is_ok());
        assert_eq!(
            check_topic_attribute("Nope", "x", false, false)
                .unwrap_err()
                .message,
            "Invalid parameter: AttributeName"
        );
    }

    #[test]
    fn default_policy_names_the_topic_and_owner() {
        let p: serde_json::Value =
            serde_json::from_str(&default_policy("arn:aws:sns:us-east-1:1:t", "1")).unwrap();
        assert_eq!(p["Statement"][0]["Resource"], "arn:aws:sns:us-east-1:1:t");
        assert_eq!(
            p["Statement"][0]["Condition"]["StringEquals"]["AWS:SourceOwner"],
            "1"
        );
    }
}
