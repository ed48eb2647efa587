//! SNS through its typed operations: the region's topics with their subscription counts, and a
//! topic's attributes (GetTopicAttributes), tags and subscriptions with theirs.

use crate::api::Ctx;
use crate::web::{ApiError, ApiResult, json_ok};
use cumulo_services::sns::{SnsService, SubscriptionSummary};
use serde_json::{Map, Value, json};
use std::sync::Arc;

fn service(ctx: &Ctx<'_>) -> Result<Arc<SnsService>, ApiError> {
    ctx.service::<SnsService>()
}

/// A topic's ARN from what a console path holds: its name in the caller's region, or its ARN.
fn topic_arn(ctx: &Ctx<'_>, name_or_arn: &str) -> String {
    if name_or_arn.starts_with("arn:") {
        name_or_arn.to_string()
    } else {
        format!(
            "arn:aws:sns:{}:{}:{name_or_arn}",
            ctx.region,
            ctx.account_id()
        )
    }
}

fn name_of(arn: &str) -> &str {
    arn.rsplit(':').next().unwrap_or(arn)
}

/// Every topic ARN of the region (ListTopics, every page).
pub fn topic_arns(ctx: &Ctx<'_>) -> Result<Vec<String>, ApiError> {
    let svc = service(ctx)?;
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let (page, next) = svc
            .list_topics(&ctx.region, token.as_deref())
            .map_err(ApiError::from_aws)?;
        out.extend(page);
        match next {
            Some(t) => token = Some(t),
            None => return Ok(out),
        }
    }
}

fn all_subscriptions(
    svc: &SnsService,
    region: &str,
    topic: Option<&str>,
) -> Result<Vec<SubscriptionSummary>, ApiError> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let (page, next) = svc
            .list_subscriptions(region, topic, token.as_deref())
            .map_err(ApiError::from_aws)?;
        out.extend(page);
        match next {
            Some(t) => token = Some(t),
            None => return Ok(out),
        }
    }
}

fn pairs(list: Vec<(String, String)>) -> Map<String, Value> {
    list.into_iter()
        .map(|(k, v)| (k, Value::String(v)))
        .collect()
}

/// `GET sns/topics`: each topic with its display name and subscription counts.
pub fn topics(ctx: &Ctx<'_>) -> ApiResult {
    let svc = service(ctx)?;
    let mut list = Vec::new();
    for arn in topic_arns(ctx)? {
        let attrs = pairs(
            svc.get_topic_attributes(&ctx.region, &arn)
                .map_err(ApiError::from_aws)?,
        );
        let get = |k: &str| attrs.get(k).cloned().unwrap_or(Value::Null);
        list.push(json!({
            "name": name_of(&arn),
            "arn": arn,
            "display_name": get("DisplayName"),
            "fifo": attrs.get("FifoTopic").is_some_and(|v| v == "true"),
            "subscriptions_confirmed": get("SubscriptionsConfirmed"),
            "subscriptions_pending": get("SubscriptionsPending"),
        }));
    }
    json_ok(&json!({ "topics": list }))
}

/// `GET sns/topics/{name or ARN}`: attributes, tags, and the subscriptions with their
/// attributes (a subscription pending confirmation has no ARN yet, so only its summary).
pub fn topic(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let svc = service(ctx)?;
    let arn = topic_arn(ctx, name);
    let attributes = pairs(
        svc.get_topic_attributes(&ctx.region, &arn)
            .map_err(ApiError::from_aws)?,
    );
    let tags = svc
        .list_tags_for_resource(&ctx.region, &arn)
        .map_err(ApiError::from_aws)?;
    let subscriptions: Vec<Value> = all_subscriptions(&svc, &ctx.region, Some(&arn))?
        .into_iter()
        .map(|s| {
            let attributes = svc
                .get_subscription_attributes(&ctx.region, &s.subscription_arn)
                .map(pairs)
                .unwrap_or_default();
            json!({
                "arn": s.subscription_arn,
                "protocol": s.protocol,
                "endpoint": s.endpoint,
                "owner": s.owner,
                "attributes": attributes,
            })
        })
        .collect();
    json_ok(&json!({
        "name": name_of(&arn),
        "arn": arn,
        "attributes": attributes,
        "tags": tags,
        "subscriptions": subscriptions,
    }))
}
