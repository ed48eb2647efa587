//! Topic operations: create (idempotent), attributes, listing, deletion, tags.

use super::SnsService;
use super::attributes::{
    check_topic_attribute, default_effective_delivery_policy, default_policy, invalid, not_found,
};
use super::state::{Topic, internal};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as TOKEN_B64;
use cumulo_wire::AwsError;
use std::collections::BTreeMap;

const PAGE: usize = 100;
const MAX_TAGS: usize = 50;

/// Decodes a listing token (the last ARN of the previous page).
pub(super) fn decode_token(token: Option<&str>) -> Result<Option<String>, AwsError> {
    token
        .map(|t| {
            TOKEN_B64
                .decode(t)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| invalid("NextToken"))
        })
        .transpose()
}

pub(super) fn encode_token(last: &str) -> String {
    TOKEN_B64.encode(last)
}

/// `arn:aws:sns:REGION:ACCOUNT:NAME` with a valid shape, else InvalidParameter naming `what`.
pub(super) fn check_arn(arn: &str, what: &str) -> Result<(), AwsError> {
    let parts: Vec<&str> = arn.split(':').collect();
    let ok = parts.len() >= 6
        && parts.first() == Some(&"arn")
        && parts.get(2) == Some(&"sns")
        && parts.iter().skip(3).all(|p| !p.is_empty());
    if ok {
        Ok(())
    } else {
        Err(invalid(format!(
            "{what} Reason: An ARN must have at least 6 elements, not {}",
            parts.len()
        )))
    }
}

fn topic_not_found() -> AwsError {
    not_found("Topic does not exist")
}

fn check_name(name: &str, fifo: bool) -> Result<(), AwsError> {
    let plain = |n: &str| {
        (1..=256).contains(&n.len())
            && n.chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    };
    if fifo {
        if !name.strip_suffix(".fifo").is_some_and(plain) {
            return Err(AwsError::bad_request(
                "InvalidParameter",
                "Fifo Topic names must end with .fifo and must be made up of only uppercase and lowercase ASCII letters, numbers, underscores, and hyphens, and must be between 1 and 256 characters long.",
            ));
        }
    } else if !plain(name) {
        return Err(invalid("Topic Name"));
    }
    Ok(())
}

pub(super) fn check_tags(tags: &[(String, String)]) -> Result<(), AwsError> {
    for (k, v) in tags {
        if k.is_empty() || k.chars().count() > 128 {
            return Err(invalid(
                "Tags Reason: Tag keys must be between 1 and 128 characters",
            ));
        }
        if v.chars().count() > 256 {
            return Err(invalid(
                "Tags Reason: Tag values must be at most 256 characters",
            ));
        }
        if k.to_ascii_lowercase().starts_with("aws:") {
            return Err(invalid("Tags Reason: Tag keys can't start with aws:"));
        }
    }
    if tags.len() > MAX_TAGS {
        return Err(tag_limit());
    }
    Ok(())
}

fn resource_not_found() -> AwsError {
    AwsError::not_found("ResourceNotFound", "Resource does not exist")
}

fn tag_limit() -> AwsError {
    AwsError::bad_request(
        "TagLimitExceeded",
        "Could not complete request: tag quota of per resource exceeded",
    )
}

impl SnsService {
    pub(super) fn topic_arn(&self, region: &str, name: &str) -> String {
        format!("arn:aws:sns:{region}:{}:{name}", self.account_id)
    }

    /// The topic `arn` in `region`, or NotFound.
    pub(super) fn topic(&self, region: &str, arn: &str) -> Result<Topic, AwsError> {
        check_arn(arn, "TopicArn")?;
        let mut parts = arn.splitn(6, ':');
        let arn_region = parts.nth(3).unwrap_or("");
        // A subscription ARN (one more `:` part) where a topic is expected is a bad topic name.
        if parts.nth(1).is_some_and(|name| name.contains(':')) {
            return Err(invalid("Topic Name"));
        }
        if arn_region != region {
            return Err(invalid("TopicArn"));
        }
        self.state
            .lock()
            .data
            .topics
            .get(arn)
            .filter(|t| t.region == region)
            .cloned()
            .ok_or_else(topic_not_found)
    }

    /// `CreateTopic`: idempotent for the same name, attributes and tags; an existing topic with
    /// different ones is an InvalidParameter, as AWS answers.
    pub async fn create_topic(
        &self,
        region: &str,
        name: &str,
        attributes: &[(String, String)],
        tags: &[(String, String)],
    ) -> Result<String, AwsError> {
        let fifo = attributes
            .iter()
            .any(|(k, v)| k == "FifoTopic" && v.eq_ignore_ascii_case("true"));
        check_name(name, fifo)?;
        let mut attrs = BTreeMap::new();
        for (k, v) in attributes {
            let v = if k == "FifoTopic" || k == "ContentBasedDeduplication" {
                v.to_ascii_lowercase()
            } else {
                v.clone()
            };
            check_topic_attribute(k, &v, fifo, true)?;
            attrs.insert(k.clone(), v);
        }
        if !fifo {
            attrs.remove("FifoTopic");
        }
        check_tags(tags)?;
        let arn = self.topic_arn(region, name);
        let commit = {
            let mut locked = self.state.lock();
            if let Some(existing) = locked.data.topics.get(&arn) {
                let same_attrs = attrs.iter().all(|(k, v)| {
                    existing.attributes.get(k).map(String::as_str).unwrap_or(
                        if k == "ContentBasedDeduplication" {
                            "false"
                        } else {
                            ""
                        },
                    ) == v
                });
                if !same_attrs {
                    return Err(invalid(
                        "Attributes Reason: Topic already exists with different attributes",
                    ));
                }
                let same_tags = tags.is_empty()
                    || tags.iter().cloned().collect::<BTreeMap<String, String>>() == existing.tags;
                if !same_tags {
                    return Err(invalid(
                        "Tags Reason: Topic already exists with different tags",
                    ));
                }
                return Ok(arn);
            }
            locked.save_topic(Topic {
                arn: arn.clone(),
                name: name.to_string(),
                region: region.to_string(),
                attributes: attrs,
                tags: tags.iter().cloned().collect(),
                subscriptions_deleted: 0,
            })?
        };
        commit.await.map_err(internal)?;
        Ok(arn)
    }

    /// `DeleteTopic`: removes the topic and its subscriptions; deleting a topic that does not
    /// exist succeeds, as in AWS.
    pub async fn delete_topic(&self, region: &str, arn: &str) -> Result<(), AwsError> {
        check_arn(arn, "TopicArn")?;
        let commit = {
            let mut locked = self.state.lock();
            locked
                .data
                .topics
                .get(arn)
                .is_some_and(|t| t.region == region)
                .then(|| locked.remove_topic(arn))
        };
        match commit {
            Some(c) => c.await.map_err(internal),
            None => Ok(()),
        }
    }

    /// `GetTopicAttributes`: stored attributes plus those AWS computes, in AWS's order.
    pub fn get_topic_attributes(
        &self,
        region: &str,
        arn: &str,
    ) -> Result<Vec<(String, String)>, AwsError> {
        let topic = self.topic(region, arn)?;
        let (confirmed, pending) = {
            let locked = self.state.lock();
            let subs = locked
                .data
                .subscriptions
                .values()
                .filter(|s| s.topic_arn == arn);
            subs.fold(
                (0, 0),
                |(c, p), s| {
                    if s.confirmed { (c + 1, p) } else { (c, p + 1) }
                },
            )
        };
        let a = &topic.attributes;
        let get = |k: &str| a.get(k).cloned();
        let mut out: Vec<(String, String)> = vec![
            (
                "Policy".into(),
                get("Policy").unwrap_or_else(|| default_policy(arn, &self.account_id)),
            ),
            ("Owner".into(), self.account_id.clone()),
            ("SubscriptionsPending".into(), pending.to_string()),
            ("TopicArn".into(), arn.to_string()),
            (
                "EffectiveDeliveryPolicy".into(),
                get("DeliveryPolicy").unwrap_or_else(default_effective_delivery_policy),
            ),
            ("SubscriptionsConfirmed".into(), confirmed.to_string()),
        ];
        if topic.is_fifo() {
            out.push(("FifoTopic".into(), "true".into()));
            out.push((
                "ContentBasedDeduplication".into(),
                topic.content_based_dedup().to_string(),
            ));
        }
        out.push(("DisplayName".into(), get("DisplayName").unwrap_or_default()));
        out.push((
            "SubscriptionsDeleted".into(),
            topic.subscriptions_deleted.to_string(),
        ));
        const LISTED: &[&str] = &[
            "Policy",
            "DisplayName",
            "FifoTopic",
            "ContentBasedDeduplication",
        ];
        for (k, v) in a {
            if !LISTED.contains(&k.as_str()) && !v.is_empty() {
                out.push((k.clone(), v.clone()));
            }
        }
        Ok(out)
    }

    /// `SetTopicAttributes`.
    pub async fn set_topic_attribute(
        &self,
        region: &str,
        arn: &str,
        name: &str,
        value: &str,
    ) -> Result<(), AwsError> {
        self.update_topic(region, arn, topic_not_found, |topic| {
            check_topic_attribute(name, value, topic.is_fifo(), false)?;
            let value = if name == "ContentBasedDeduplication" {
                value.to_ascii_lowercase()
            } else {
                value.to_string()
            };
            // An empty Policy/DeliveryPolicy restores the default, as in AWS.
            if value.is_empty() && matches!(name, "Policy" | "DeliveryPolicy" | "KmsMasterKeyId") {
                topic.attributes.remove(name);
            } else {
                topic.attributes.insert(name.to_string(), value);
            }
            Ok(())
        })
        .await
    }

    /// `ListTopics`: ARNs of the region's topics, 100 per page.
    pub fn list_topics(
        &self,
        region: &str,
        next_token: Option<&str>,
    ) -> Result<(Vec<String>, Option<String>), AwsError> {
        let after = decode_token(next_token)?;
        let locked = self.state.lock();
        let arns: Vec<String> = locked
            .data
            .topics
            .values()
            .filter(|t| t.region == region)
            .filter(|t| after.as_ref().is_none_or(|a| t.arn > *a))
            .take(PAGE + 1)
            .map(|t| t.arn.clone())
            .collect();
        Ok(paginate(arns))
    }

    /// Read-modify-write of one topic under a single lock, so concurrent changes (a counter, a
    /// tag) are never lost.
    async fn update_topic(
        &self,
        region: &str,
        arn: &str,
        missing: fn() -> AwsError,
        change: impl FnOnce(&mut Topic) -> Result<(), AwsError>,
    ) -> Result<(), AwsError> {
        check_arn(arn, "TopicArn")?;
        let commit = {
            let mut locked = self.state.lock();
            let mut topic = locked
                .data
                .topics
                .get(arn)
                .filter(|t| t.region == region)
                .cloned()
                .ok_or_else(missing)?;
            change(&mut topic)?;
            locked.save_topic(topic)?
        };
        commit.await.map_err(internal)
    }

    fn tagged_topic(&self, region: &str, arn: &str) -> Result<Topic, AwsError> {
        check_arn(arn, "ResourceArn").map_err(|_| resource_not_found())?;
        self.topic(region, arn).map_err(|_| resource_not_found())
    }

    /// `TagResource` (topics).
    pub async fn tag_resource(
        &self,
        region: &str,
        arn: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        check_tags(tags)?;
        self.put_tags(region, arn, tags).await
    }

    /// CloudFormation's `aws:cloudformation:*` tags on a topic it creates, which `TagResource`
    /// refuses from users.
    pub async fn add_system_tags(
        &self,
        region: &str,
        arn: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        self.put_tags(region, arn, tags).await
    }

    async fn put_tags(
        &self,
        region: &str,
        arn: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        check_arn(arn, "ResourceArn").map_err(|_| resource_not_found())?;
        self.update_topic(region, arn, resource_not_found, |topic| {
            topic.tags.extend(tags.iter().cloned());
            if crate::providers::system_tags::counted(topic.tags.keys()) > MAX_TAGS {
                return Err(tag_limit());
            }
            Ok(())
        })
        .await
    }

    /// `UntagResource`.
    pub async fn untag_resource(
        &self,
        region: &str,
        arn: &str,
        keys: &[String],
    ) -> Result<(), AwsError> {
        check_arn(arn, "ResourceArn").map_err(|_| resource_not_found())?;
        self.update_topic(region, arn, resource_not_found, |topic| {
            for k in keys {
                topic.tags.remove(k);
            }
            Ok(())
        })
        .await
    }

    /// `ListTagsForResource`.
    pub fn list_tags_for_resource(
        &self,
        region: &str,
        arn: &str,
    ) -> Result<BTreeMap<String, String>, AwsError> {
        Ok(self.tagged_topic(region, arn)?.tags)
    }
}

/// Splits `PAGE + 1` items into a page and the token for the rest.
pub(super) fn paginate(mut items: Vec<String>) -> (Vec<String>, Option<String>) {
    if items.len() > PAGE {
        items.truncate(PAGE);
        let token = items.last().map(|l| encode_token(l));
        (items, token)
    } else {
        (items, None)
    }
}
