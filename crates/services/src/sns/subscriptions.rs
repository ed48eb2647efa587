//! Subscription operations: subscribe (idempotent), confirm, unsubscribe, listing, attributes.

use super::SnsService;
use super::attributes::{check_subscription_attribute, invalid, not_found};
use super::filter::{FilterPolicy, Scope};
use super::state::Subscription;
use super::topics::{check_arn, decode_token, paginate};
use cumulo_wire::AwsError;
use rand::Rng;
use std::collections::BTreeMap;

/// Input of `Subscribe`.
#[derive(Debug, Clone, Default)]
pub struct SubscribeInput {
    pub topic_arn: String,
    pub protocol: String,
    pub endpoint: Option<String>,
    pub attributes: Vec<(String, String)>,
    pub return_subscription_arn: bool,
}

/// One entry of ListSubscriptions(ByTopic).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SubscriptionSummary {
    /// The ARN, or `PendingConfirmation` while unconfirmed (as AWS lists them).
    pub subscription_arn: String,
    pub owner: String,
    pub protocol: String,
    pub endpoint: String,
    pub topic_arn: String,
}

const PROTOCOLS: &[&str] = &[
    "http",
    "https",
    "email",
    "email-json",
    "sms",
    "sqs",
    "application",
    "lambda",
    "firehose",
];

/// Protocols AWS confirms without a handshake.
fn confirmed_at_once(protocol: &str) -> bool {
    matches!(
        protocol,
        "sqs" | "sms" | "lambda" | "firehose" | "application"
    )
}

fn arn_of_service(endpoint: &str, service: &str) -> bool {
    let parts: Vec<&str> = endpoint.split(':').collect();
    parts.len() >= 6
        && parts.first() == Some(&"arn")
        && parts.get(2) == Some(&service)
        && parts.iter().skip(3).all(|p| !p.is_empty())
}

fn check_endpoint(protocol: &str, endpoint: &str) -> Result<(), AwsError> {
    let ok = match protocol {
        "sqs" => arn_of_service(endpoint, "sqs"),
        "http" => endpoint.starts_with("http://") && endpoint.len() > 7,
        "https" => endpoint.starts_with("https://") && endpoint.len() > 8,
        "email" | "email-json" => endpoint
            .split_once('@')
            .is_some_and(|(u, d)| !u.is_empty() && d.contains('.')),
        "sms" => {
            let digits = endpoint.strip_prefix('+').unwrap_or(endpoint);
            (7..=15).contains(&digits.len()) && digits.chars().all(|c| c.is_ascii_digit())
        }
        "lambda" => arn_of_service(endpoint, "lambda"),
        "firehose" => arn_of_service(endpoint, "firehose"),
        "application" => arn_of_service(endpoint, "sns") && endpoint.contains(":endpoint/"),
        _ => false,
    };
    if ok {
        return Ok(());
    }
    Err(invalid(match protocol {
        "sqs" => "SQS endpoint ARN".to_string(),
        "lambda" => "Lambda endpoint ARN".to_string(),
        "firehose" => "Firehose endpoint ARN".to_string(),
        "application" => "Application endpoint ARN".to_string(),
        "email" | "email-json" => "Email address".to_string(),
        "sms" => format!("Invalid SMS endpoint: {endpoint}"),
        _ => "Endpoint must match the specified protocol".to_string(),
    }))
}

fn subscription_not_found() -> AwsError {
    not_found("Subscription does not exist")
}

/// Validates a subscription's attribute set, compiling its filter policy against its scope.
fn check_attributes(protocol: &str, attrs: &BTreeMap<String, String>) -> Result<(), AwsError> {
    for (k, v) in attrs {
        check_subscription_attribute(k, v)?;
    }
    if attrs.contains_key("RawMessageDelivery")
        && !matches!(protocol, "sqs" | "http" | "https" | "firehose")
    {
        return Err(invalid(format!(
            "Delivery protocol [{protocol}] does not support raw message delivery."
        )));
    }
    if let Some(policy) = attrs.get("FilterPolicy").filter(|p| !p.is_empty()) {
        let scope = match attrs.get("FilterPolicyScope").map(String::as_str) {
            Some("MessageBody") => Scope::MessageBody,
            _ => Scope::MessageAttributes,
        };
        FilterPolicy::parse(policy, scope)
            .map_err(|m| AwsError::bad_request("InvalidParameter", m))?;
    }
    Ok(())
}

fn new_token() -> String {
    let bytes: [u8; 32] = rand::rng().random();
    hex::encode(bytes)
}

impl SnsService {
    fn summary(s: &Subscription) -> SubscriptionSummary {
        SubscriptionSummary {
            subscription_arn: if s.confirmed {
                s.arn.clone()
            } else {
                "PendingConfirmation".to_string()
            },
            owner: s.owner.clone(),
            protocol: s.protocol.clone(),
            endpoint: s.endpoint.clone(),
            topic_arn: s.topic_arn.clone(),
        }
    }

    /// `Subscribe`. Returns the subscription ARN, or `pending confirmation` for a pending one
    /// unless `return_subscription_arn` is set. `endpoint_base` (`http://host:port`) is where the
    /// confirmation of an http subscription points.
    pub fn subscribe(
        &self,
        region: &str,
        endpoint_base: &str,
        input: SubscribeInput,
    ) -> Result<String, AwsError> {
        let topic = self.topic(region, &input.topic_arn)?;
        let protocol = input.protocol.to_ascii_lowercase();
        if !PROTOCOLS.contains(&protocol.as_str()) {
            return Err(invalid(format!(
                "Amazon SNS does not support this protocol string: {}",
                input.protocol
            )));
        }
        let endpoint = input
            .endpoint
            .clone()
            .filter(|e| !e.is_empty())
            .ok_or_else(|| invalid("Endpoint Reason: An endpoint must be specified"))?;
        check_endpoint(&protocol, &endpoint)?;
        if topic.is_fifo() && protocol != "sqs" {
            return Err(invalid(format!("Invalid protocol type: {protocol}")));
        }
        if !topic.is_fifo() && protocol == "sqs" && endpoint.ends_with(".fifo") {
            return Err(invalid(
                // AWS repeats the prefix in this one message.
                "Invalid parameter: Endpoint Reason: FIFO SQS Queues can not be subscribed to standard SNS topics",
            ));
        }
        let attrs: BTreeMap<String, String> = input.attributes.iter().cloned().collect();
        check_attributes(&protocol, &attrs)?;

        let mut locked = self.state.lock();
        let existing = locked
            .data
            .subscriptions
            .values()
            .find(|s| {
                s.topic_arn == input.topic_arn && s.protocol == protocol && s.endpoint == endpoint
            })
            .cloned();
        if let Some(s) = existing {
            let same = attrs.iter().all(|(k, v)| s.attributes.get(k) == Some(v));
            if !same {
                return Err(invalid(
                    "Attributes Reason: Subscription already exists with different attributes",
                ));
            }
            drop(locked);
            // A repeated Subscribe of a pending http endpoint sends the confirmation again, as
            // AWS does, so a lost first POST can be recovered.
            if !s.confirmed && s.protocol == "http" {
                self.send_confirmation(&s, endpoint_base);
            }
            return Ok(if s.confirmed || input.return_subscription_arn {
                s.arn
            } else {
                "pending confirmation".to_string()
            });
        }
        let confirmed = confirmed_at_once(&protocol);
        let sub = Subscription {
            arn: format!("{}:{}", input.topic_arn, uuid::Uuid::new_v4()),
            topic_arn: input.topic_arn.clone(),
            region: region.to_string(),
            protocol: protocol.clone(),
            endpoint: endpoint.clone(),
            owner: self.account_id.clone(),
            attributes: attrs,
            confirmed,
            token: (!confirmed).then(new_token),
            filter: None,
        };
        locked.save_subscription(sub.clone())?;
        drop(locked);
        if protocol == "http" {
            self.send_confirmation(&sub, endpoint_base);
        }
        Ok(if confirmed || input.return_subscription_arn {
            sub.arn
        } else {
            "pending confirmation".to_string()
        })
    }

    /// `ConfirmSubscription`: the token sent to (or, for protocols cumulo does not deliver,
    /// recorded for) a pending subscription of the topic.
    pub fn confirm_subscription(
        &self,
        region: &str,
        topic_arn: &str,
        token: &str,
    ) -> Result<String, AwsError> {
        self.topic(region, topic_arn)?;
        let mut locked = self.state.lock();
        let mut sub = locked
            .data
            .subscriptions
            .values()
            .find(|s| s.topic_arn == topic_arn && s.token.as_deref() == Some(token))
            .cloned()
            .ok_or_else(|| invalid("Token"))?;
        if !sub.confirmed {
            sub.confirmed = true;
            locked.save_subscription(sub.clone())?;
        }
        Ok(sub.arn)
    }

    /// `Unsubscribe`: idempotent, as in AWS.
    pub fn unsubscribe(&self, region: &str, arn: &str) -> Result<(), AwsError> {
        check_arn(arn, "SubscriptionArn")?;
        // A topic ARN has no subscription id part.
        if arn.split(':').count() == 6 {
            return Err(invalid("SubscriptionId"));
        }
        let mut locked = self.state.lock();
        if locked
            .data
            .subscriptions
            .get(arn)
            .is_some_and(|s| s.region == region)
        {
            locked.remove_subscription(arn)?;
        }
        Ok(())
    }

    /// `ListSubscriptions`: the region's subscriptions, 100 per page.
    pub fn list_subscriptions(
        &self,
        region: &str,
        topic_arn: Option<&str>,
        next_token: Option<&str>,
    ) -> Result<(Vec<SubscriptionSummary>, Option<String>), AwsError> {
        if let Some(t) = topic_arn {
            self.topic(region, t)?;
        }
        let after = decode_token(next_token)?;
        let locked = self.state.lock();
        let subs: Vec<&Subscription> = locked
            .data
            .subscriptions
            .values()
            .filter(|s| s.region == region)
            .filter(|s| topic_arn.is_none_or(|t| s.topic_arn == t))
            .filter(|s| after.as_ref().is_none_or(|a| s.arn > *a))
            .collect();
        let arns: Vec<String> = subs.iter().map(|s| s.arn.clone()).take(101).collect();
        let (page, token) = paginate(arns);
        let out = subs
            .iter()
            .take(page.len())
            .map(|s| Self::summary(s))
            .collect();
        Ok((out, token))
    }

    fn subscription(&self, region: &str, arn: &str) -> Result<Subscription, AwsError> {
        check_arn(arn, "SubscriptionArn")?;
        self.state
            .lock()
            .data
            .subscriptions
            .get(arn)
            .filter(|s| s.region == region)
            .cloned()
            .ok_or_else(subscription_not_found)
    }

    /// `GetSubscriptionAttributes`.
    pub fn get_subscription_attributes(
        &self,
        region: &str,
        arn: &str,
    ) -> Result<Vec<(String, String)>, AwsError> {
        let s = self.subscription(region, arn)?;
        let mut out: Vec<(String, String)> = vec![
            ("Owner".into(), s.owner.clone()),
            ("RawMessageDelivery".into(), s.raw().to_string()),
            ("TopicArn".into(), s.topic_arn.clone()),
            ("Endpoint".into(), s.endpoint.clone()),
            ("Protocol".into(), s.protocol.clone()),
            ("PendingConfirmation".into(), (!s.confirmed).to_string()),
            (
                "ConfirmationWasAuthenticated".into(),
                s.confirmed.to_string(),
            ),
            ("SubscriptionArn".into(), s.arn.clone()),
            (
                "SubscriptionPrincipal".into(),
                format!("arn:aws:iam::{}:root", self.account_id),
            ),
        ];
        for (k, v) in &s.attributes {
            if k != "RawMessageDelivery" && !v.is_empty() {
                out.push((k.clone(), v.clone()));
            }
        }
        if s.attributes.contains_key("FilterPolicy")
            && !s.attributes.contains_key("FilterPolicyScope")
        {
            out.push(("FilterPolicyScope".into(), "MessageAttributes".into()));
        }
        if matches!(s.protocol.as_str(), "http" | "https") {
            out.push((
                "EffectiveDeliveryPolicy".into(),
                super::attributes::default_effective_delivery_policy(),
            ));
        }
        Ok(out)
    }

    /// `SetSubscriptionAttributes`: validated against the whole resulting attribute set, so a
    /// scope change re-checks the existing filter policy.
    pub fn set_subscription_attribute(
        &self,
        region: &str,
        arn: &str,
        name: &str,
        value: &str,
    ) -> Result<(), AwsError> {
        check_arn(arn, "SubscriptionArn")?;
        let mut locked = self.state.lock();
        let mut s = locked
            .data
            .subscriptions
            .get(arn)
            .filter(|s| s.region == region)
            .cloned()
            .ok_or_else(subscription_not_found)?;
        check_subscription_attribute(name, value)?;
        let mut attrs = s.attributes.clone();
        if value.is_empty() && matches!(name, "FilterPolicy" | "RedrivePolicy" | "DeliveryPolicy") {
            attrs.remove(name);
        } else {
            attrs.insert(name.to_string(), value.to_string());
        }
        check_attributes(&s.protocol, &attrs)?;
        s.attributes = attrs;
        locked.save_subscription(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_match_their_protocol() {
        assert!(check_endpoint("sqs", "arn:aws:sqs:us-east-1:000000000000:q").is_ok());
        assert!(check_endpoint("sqs", "https://sqs.example/q").is_err());
        assert!(check_endpoint("http", "http://127.0.0.1:9/x").is_ok());
        assert!(check_endpoint("https", "http://127.0.0.1:9/x").is_err());
        assert!(check_endpoint("email", "a@example.com").is_ok());
        assert!(check_endpoint("email", "a@localhost").is_err());
        assert!(check_endpoint("sms", "+15555550100").is_ok());
        assert!(check_endpoint("sms", "call me").is_err());
        assert!(
            check_endpoint("lambda", "arn:aws:lambda:us-east-1:000000000000:function:f").is_ok()
        );
        let e = check_endpoint("firehose", "arn:aws:sqs:us-east-1:000000000000:q").unwrap_err();
        assert_eq!(e.message, "Invalid parameter: Firehose endpoint ARN");
    }

    #[test]
    fn raw_delivery_only_where_aws_allows_it() {
        let attrs: BTreeMap<String, String> =
            [("RawMessageDelivery".to_string(), "true".to_string())].into();
        assert!(check_attributes("sqs", &attrs).is_ok());
        assert!(check_attributes("email", &attrs).is_err());
        let scoped: BTreeMap<String, String> = [
            (
                "FilterPolicy".to_string(),
                r#"{"a": {"b": ["c"]}}"#.to_string(),
            ),
            ("FilterPolicyScope".to_string(), "MessageBody".to_string()),
        ]
        .into();
        assert!(check_attributes("sqs", &scoped).is_ok());
    }
}
