//! CloudFormation providers: AWS::SNS::Topic (its Subscription list included),
//! AWS::SNS::Subscription and AWS::SNS::TopicPolicy, over SNS's typed operations.

use super::{SnsService, SubscribeInput};
use crate::providers::attached_policy::{AttachedPolicy, PolicyTarget};
use crate::providers::readback;
use crate::providers::system_tags::{TagChange, system_tags};
use crate::providers::{
    ProviderServices, check_known, endpoint_host, failed, json_text, list, object, required,
    scalar, scalar_value, tags, unsupported_prop,
};
use cumulo_engine::{
    Observed, Provider, ProviderContext, ProviderError, ProviderOutcome, ProviderRegistry,
};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

const TOPIC: &str = "AWS::SNS::Topic";
const SUBSCRIPTION: &str = "AWS::SNS::Subscription";
const TOPIC_POLICY: &str = "AWS::SNS::TopicPolicy";

/// Topic properties that are topic attributes of the same name.
const TOPIC_SCALARS: &[&str] = &[
    "ContentBasedDeduplication",
    "DisplayName",
    "FifoThroughputScope",
    "FifoTopic",
    "KmsMasterKeyId",
    "SignatureVersion",
    "TracingConfig",
];
const TOPIC_JSON: &[&str] = &["ArchivePolicy", "DataProtectionPolicy"];
/// What a removed topic attribute goes back to (an empty value restores SNS's default).
const TOPIC_RESETS: &[(&str, &str)] = &[
    ("ContentBasedDeduplication", "false"),
    ("SignatureVersion", "1"),
    ("TracingConfig", "PassThrough"),
];

/// Subscription properties that are subscription attributes of the same name.
const SUB_SCALARS: &[&str] = &[
    "FilterPolicyScope",
    "RawMessageDelivery",
    "SubscriptionRoleArn",
];
const SUB_JSON: &[&str] = &[
    "DeliveryPolicy",
    "FilterPolicy",
    "RedrivePolicy",
    "ReplayPolicy",
];
const SUB_RESETS: &[(&str, &str)] = &[
    ("FilterPolicyScope", "MessageAttributes"),
    ("RawMessageDelivery", "false"),
];

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    r.register(TOPIC, Arc::new(TopicProvider { sns: s.sns.clone() }));
    r.register(
        SUBSCRIPTION,
        Arc::new(SubscriptionProvider { sns: s.sns.clone() }),
    );
    r.register(
        TOPIC_POLICY,
        Arc::new(AttachedPolicy(TopicPolicy(s.sns.clone()))),
    );
}

fn is_fifo(props: &Map<String, Value>) -> bool {
    props
        .get("FifoTopic")
        .and_then(scalar_value)
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

/// The topic attributes a Topic's properties stand for; DeliveryStatusLogging entries become
/// the `<Protocol>SuccessFeedbackRoleArn`-style attributes SNS has.
fn topic_attributes(props: &Map<String, Value>) -> Result<BTreeMap<String, String>, ProviderError> {
    let mut out = BTreeMap::new();
    for name in TOPIC_SCALARS {
        if let Some(v) = scalar(props, name)? {
            out.insert(name.to_string(), v);
        }
    }
    for name in TOPIC_JSON {
        if let Some(v) = json_text(props, name)? {
            out.insert(name.to_string(), v);
        }
    }
    for entry in list(props, "DeliveryStatusLogging")? {
        let e = entry.as_object().cloned().unwrap_or_default();
        check_known(
            TOPIC,
            &e,
            &[
                "Protocol",
                "SuccessFeedbackRoleArn",
                "SuccessFeedbackSampleRate",
                "FailureFeedbackRoleArn",
            ],
            &[],
        )?;
        let prefix = match required(&e, "Protocol")?.as_str() {
            "http/s" | "http" | "https" => "HTTP",
            "sqs" => "SQS",
            "lambda" => "Lambda",
            "firehose" => "Firehose",
            "application" => "Application",
            other => {
                return Err(ProviderError::Failed(format!(
                    "Properties validation failed for resource with message: #/DeliveryStatusLogging/Protocol: {other} is not a valid enum value"
                )));
            }
        };
        for suffix in [
            "SuccessFeedbackRoleArn",
            "SuccessFeedbackSampleRate",
            "FailureFeedbackRoleArn",
        ] {
            if let Some(v) = scalar(&e, suffix)? {
                out.insert(format!("{prefix}{suffix}"), v);
            }
        }
    }
    Ok(out)
}

/// `(Protocol, Endpoint)` pairs of a Topic's Subscription list.
fn topic_subscriptions(props: &Map<String, Value>) -> Result<Vec<(String, String)>, ProviderError> {
    list(props, "Subscription")?
        .iter()
        .map(|s| {
            let s = s.as_object().cloned().unwrap_or_default();
            check_known(TOPIC, &s, &["Endpoint", "Protocol"], &[])?;
            Ok((required(&s, "Protocol")?, required(&s, "Endpoint")?))
        })
        .collect()
}

struct TopicProvider {
    sns: Arc<SnsService>,
}

impl TopicProvider {
    fn subscribe(
        &self,
        ctx: &ProviderContext,
        topic_arn: &str,
        protocol: &str,
        endpoint: &str,
    ) -> Result<String, ProviderError> {
        self.sns
            .subscribe(
                &ctx.region,
                &format!("http://{}", endpoint_host(ctx)),
                SubscribeInput {
                    topic_arn: topic_arn.to_string(),
                    protocol: protocol.to_string(),
                    endpoint: Some(endpoint.to_string()),
                    attributes: Vec::new(),
                    return_subscription_arn: true,
                },
            )
            .map_err(|e| failed(ctx, "Sns", e))
    }
}

fn topic_outcome(arn: &str) -> ProviderOutcome {
    let name = arn.rsplit(':').next().unwrap_or_default();
    ProviderOutcome {
        physical_id: arn.to_string(),
        attributes: Map::from_iter([
            ("TopicArn".to_string(), json!(arn)),
            ("TopicName".to_string(), json!(name)),
        ]),
        ..Default::default()
    }
}

fn check_topic_props(props: &Map<String, Value>) -> Result<(), ProviderError> {
    let mut known: Vec<&str> = TOPIC_SCALARS.to_vec();
    known.extend(TOPIC_JSON);
    known.extend(["DeliveryStatusLogging", "Subscription", "Tags", "TopicName"]);
    check_known(TOPIC, props, &known, &[])
}

/// The topic's name: the template's, or generated (one rule for create and its identity).
fn topic_name(ctx: &ProviderContext, props: &Map<String, Value>) -> Result<String, ProviderError> {
    Ok(match scalar(props, "TopicName")? {
        Some(n) => n,
        None => ctx.generated_name(256, if is_fifo(props) { ".fifo" } else { "" }),
    })
}

#[async_trait::async_trait]
impl Provider for TopicProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["TopicArn", "TopicName"])
    }

    fn created_identity(&self, ctx: &ProviderContext, properties: &Value) -> Option<String> {
        let props = object(TOPIC, properties).ok()?;
        let name = topic_name(ctx, &props).ok()?;
        Some(format!(
            "arn:aws:sns:{}:{}:{name}",
            ctx.region, ctx.account_id
        ))
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(TOPIC, properties)?;
        check_topic_props(&props)?;
        let name = topic_name(ctx, &props)?;
        let attrs: Vec<(String, String)> = topic_attributes(&props)?.into_iter().collect();
        let tags = tags(ctx, &props)?;
        let subs = topic_subscriptions(&props)?;
        let arn = format!("arn:aws:sns:{}:{}:{name}", ctx.region, ctx.account_id);
        if self.sns.get_topic_attributes(&ctx.region, &arn).is_ok() {
            return Err(crate::providers::already_exists(ctx, &name));
        }
        let arn = self
            .sns
            .create_topic(&ctx.region, &name, &attrs, &tags)
            .await
            .map_err(|e| failed(ctx, "Sns", e))?;
        let system = system_tags(ctx);
        if !system.is_empty() {
            self.sns
                .add_system_tags(&ctx.region, &arn, &system)
                .await
                .map_err(|e| failed(ctx, "Sns", e))?;
        }
        for (protocol, endpoint) in &subs {
            if let Err(e) = self.subscribe(ctx, &arn, protocol, endpoint) {
                // Leave nothing behind: the resource failed as a whole.
                let _ = self.sns.delete_topic(&ctx.region, &arn).await;
                return Err(e);
            }
        }
        Ok(topic_outcome(&arn))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let old_props = object(TOPIC, old)?;
        let new_props = object(TOPIC, new)?;
        check_topic_props(&new_props)?;
        let old_attrs = topic_attributes(&old_props)?;
        let new_attrs = topic_attributes(&new_props)?;
        for (k, v) in &new_attrs {
            if old_attrs.get(k) != Some(v) && k != "FifoTopic" {
                self.sns
                    .set_topic_attribute(&ctx.region, physical_id, k, v)
                    .await
                    .map_err(|e| failed(ctx, "Sns", e))?;
            }
        }
        for k in old_attrs.keys().filter(|k| !new_attrs.contains_key(*k)) {
            if k == "FifoTopic" {
                continue;
            }
            let reset = TOPIC_RESETS
                .iter()
                .find(|(n, _)| n == k)
                .map_or("", |(_, v)| v);
            self.sns
                .set_topic_attribute(&ctx.region, physical_id, k, reset)
                .await
                .map_err(|e| failed(ctx, "Sns", e))?;
        }
        let old_subs = topic_subscriptions(&old_props)?;
        let new_subs = topic_subscriptions(&new_props)?;
        for (p, e) in new_subs.iter().filter(|s| !old_subs.contains(s)) {
            self.subscribe(ctx, physical_id, p, e)?;
        }
        for (p, e) in old_subs.iter().filter(|s| !new_subs.contains(s)) {
            // Subscribe is idempotent and answers the existing subscription's ARN.
            let arn = self.subscribe(ctx, physical_id, p, e)?;
            self.sns
                .unsubscribe(&ctx.region, &arn)
                .map_err(|e| failed(ctx, "Sns", e))?;
        }
        let live = self
            .sns
            .list_tags_for_resource(&ctx.region, physical_id)
            .map_err(|e| failed(ctx, "Sns", e))?;
        let change = TagChange::between(&live, &tags(ctx, &new_props)?);
        if !change.remove.is_empty() {
            self.sns
                .untag_resource(&ctx.region, physical_id, &change.remove)
                .await
                .map_err(|e| failed(ctx, "Sns", e))?;
        }
        if !change.set.is_empty() {
            self.sns
                .tag_resource(&ctx.region, physical_id, &change.set)
                .await
                .map_err(|e| failed(ctx, "Sns", e))?;
        }
        Ok(topic_outcome(physical_id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        self.sns
            .delete_topic(&ctx.region, physical_id)
            .await
            .map_err(|e| failed(ctx, "Sns", e))
    }

    /// The topic's attributes in the template's shape (DeliveryStatusLogging rebuilt from the
    /// `<Protocol>SuccessFeedbackRoleArn`-style attributes), its subscriptions and tags.
    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let attrs = match self.sns.get_topic_attributes(&ctx.region, physical_id) {
            Ok(a) => a,
            Err(e) if e.code == "NotFound" => return Ok(None),
            Err(e) => return Err(failed(ctx, "Sns", e)),
        };
        let attrs: BTreeMap<String, String> = attrs.into_iter().collect();
        let mut props = Map::new();
        for name in TOPIC_SCALARS {
            if let Some(v) = attrs.get(*name).filter(|v| !v.is_empty()) {
                props.insert(name.to_string(), json!(v));
            }
        }
        for name in TOPIC_JSON {
            if let Some(v) = attrs.get(*name).filter(|v| !v.is_empty()) {
                props.insert(name.to_string(), readback::document(&json!(v)));
            }
        }
        let mut logging = Vec::new();
        for (protocol, prefix) in [
            ("http/s", "HTTP"),
            ("sqs", "SQS"),
            ("lambda", "Lambda"),
            ("firehose", "Firehose"),
            ("application", "Application"),
        ] {
            let mut entry = Map::new();
            for suffix in [
                "SuccessFeedbackRoleArn",
                "SuccessFeedbackSampleRate",
                "FailureFeedbackRoleArn",
            ] {
                if let Some(v) = attrs
                    .get(&format!("{prefix}{suffix}"))
                    .filter(|v| !v.is_empty())
                {
                    entry.insert(suffix.to_string(), json!(v));
                }
            }
            if !entry.is_empty() {
                entry.insert("Protocol".into(), json!(protocol));
                logging.push(Value::Object(entry));
            }
        }
        if !logging.is_empty() {
            props.insert("DeliveryStatusLogging".into(), Value::Array(logging));
        }
        let (subs, _) = self
            .sns
            .list_subscriptions(&ctx.region, Some(physical_id), None)
            .map_err(|e| failed(ctx, "Sns", e))?;
        let subs: Vec<Value> = subs
            .into_iter()
            .map(|s| json!({"Endpoint": s.endpoint, "Protocol": s.protocol}))
            .collect();
        if !subs.is_empty() {
            props.insert("Subscription".into(), Value::Array(subs));
        }
        let name = physical_id.rsplit(':').next().unwrap_or_default();
        props.insert("TopicName".into(), json!(name));
        let tags = self
            .sns
            .list_tags_for_resource(&ctx.region, physical_id)
            .map_err(|e| failed(ctx, "Sns", e))?;
        if let Some(t) = readback::tags_value(tags) {
            props.insert("Tags".into(), t);
        }
        Ok(Some(Observed {
            properties: props,
            attributes: topic_outcome(physical_id).attributes,
        }))
    }

    /// Attribute scalars as SNS's strings, policies as objects, subscriptions and tags in one
    /// order (SNS keeps them as sets).
    fn canonicalize(&self, properties: Value) -> Value {
        let mut out = readback::canonical_attributes(properties, TOPIC_SCALARS, TOPIC_JSON);
        if let Some(Value::Array(subs)) = out.get_mut("Subscription") {
            subs.sort_by_key(|s| s.to_string());
        }
        out
    }
}

struct SubscriptionProvider {
    sns: Arc<SnsService>,
}

fn sub_attributes(props: &Map<String, Value>) -> Result<BTreeMap<String, String>, ProviderError> {
    let mut out = BTreeMap::new();
    for name in SUB_SCALARS {
        if let Some(v) = scalar(props, name)? {
            out.insert(name.to_string(), v);
        }
    }
    for name in SUB_JSON {
        if let Some(v) = json_text(props, name)? {
            out.insert(name.to_string(), v);
        }
    }
    Ok(out)
}

fn check_sub_props(ctx: &ProviderContext, props: &Map<String, Value>) -> Result<(), ProviderError> {
    let mut known: Vec<&str> = SUB_SCALARS.to_vec();
    known.extend(SUB_JSON);
    known.extend(["Endpoint", "Protocol", "TopicArn", "Region"]);
    check_known(SUBSCRIPTION, props, &known, &[])?;
    match scalar(props, "Region")? {
        Some(r) if r != ctx.region => Err(unsupported_prop(
            SUBSCRIPTION,
            "Region",
            "cross-region subscriptions are not emulated",
        )),
        _ => Ok(()),
    }
}

#[async_trait::async_trait]
impl Provider for SubscriptionProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Arn"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(SUBSCRIPTION, properties)?;
        check_sub_props(ctx, &props)?;
        let arn = self
            .sns
            .subscribe(
                &ctx.region,
                &format!("http://{}", endpoint_host(ctx)),
                SubscribeInput {
                    topic_arn: required(&props, "TopicArn")?,
                    protocol: required(&props, "Protocol")?,
                    endpoint: scalar(&props, "Endpoint")?,
                    attributes: sub_attributes(&props)?.into_iter().collect(),
                    return_subscription_arn: true,
                },
            )
            .map_err(|e| failed(ctx, "Sns", e))?;
        Ok(ProviderOutcome {
            physical_id: arn.clone(),
            attributes: Map::from_iter([("Arn".to_string(), json!(arn))]),
            ..Default::default()
        })
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let new_props = object(SUBSCRIPTION, new)?;
        check_sub_props(ctx, &new_props)?;
        let old_attrs = sub_attributes(&*object(SUBSCRIPTION, old)?)?;
        let new_attrs = sub_attributes(&new_props)?;
        // Scope first, so a new filter policy is checked against the scope it will have.
        let mut order: Vec<&String> = new_attrs.keys().collect();
        order.sort_by_key(|k| *k != "FilterPolicyScope");
        for k in order {
            let v = &new_attrs[k];
            if old_attrs.get(k) != Some(v) {
                self.sns
                    .set_subscription_attribute(&ctx.region, physical_id, k, v)
                    .map_err(|e| failed(ctx, "Sns", e))?;
            }
        }
        for k in old_attrs.keys().filter(|k| !new_attrs.contains_key(*k)) {
            let reset = SUB_RESETS
                .iter()
                .find(|(n, _)| n == k)
                .map_or("", |(_, v)| v);
            self.sns
                .set_subscription_attribute(&ctx.region, physical_id, k, reset)
                .map_err(|e| failed(ctx, "Sns", e))?;
        }
        Ok(ProviderOutcome {
            physical_id: physical_id.to_string(),
            attributes: Map::from_iter([("Arn".to_string(), json!(physical_id))]),
            ..Default::default()
        })
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        self.sns
            .unsubscribe(&ctx.region, physical_id)
            .map_err(|e| failed(ctx, "Sns", e))
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let attrs = match self
            .sns
            .get_subscription_attributes(&ctx.region, physical_id)
        {
            Ok(a) => a,
            Err(e) if e.code == "NotFound" => return Ok(None),
            Err(e) => return Err(failed(ctx, "Sns", e)),
        };
        let mut props = Map::new();
        for (k, v) in attrs {
            if matches!(k.as_str(), "TopicArn" | "Endpoint" | "Protocol")
                || SUB_SCALARS.contains(&k.as_str())
            {
                props.insert(k, json!(v));
            } else if SUB_JSON.contains(&k.as_str()) && !v.is_empty() {
                props.insert(k, readback::document(&json!(v)));
            }
        }
        props.insert("Region".into(), json!(ctx.region));
        Ok(Some(Observed {
            properties: props,
            attributes: Map::from_iter([("Arn".to_string(), json!(physical_id))]),
        }))
    }

    fn canonicalize(&self, properties: Value) -> Value {
        readback::canonical_attributes(properties, SUB_SCALARS, SUB_JSON)
    }
}

/// AWS::SNS::TopicPolicy: the document becomes each topic's `Policy` attribute; removing it
/// restores SNS's default policy.
struct TopicPolicy(Arc<SnsService>);

#[async_trait::async_trait]
impl PolicyTarget for TopicPolicy {
    const TYPE: &'static str = TOPIC_POLICY;
    const TARGETS: &'static str = "Topics";
    const SERVICE: &'static str = "Sns";

    async fn set_policy(
        &self,
        ctx: &ProviderContext,
        arn: &str,
        policy: &str,
    ) -> Result<(), AwsError> {
        self.0
            .set_topic_attribute(&ctx.region, arn, "Policy", policy)
            .await
    }

    fn attributes(
        &self,
        ctx: &ProviderContext,
        arn: &str,
    ) -> Result<Option<Vec<(String, String)>>, AwsError> {
        match self.0.get_topic_attributes(&ctx.region, arn) {
            Ok(attrs) => Ok(Some(attrs)),
            Err(e) if e.code == "NotFound" => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::test_support::{ctx, services};

    fn attr(s: &ProviderServices, arn: &str, name: &str) -> Option<String> {
        s.sns
            .get_topic_attributes("us-east-1", arn)
            .expect("topic")
            .into_iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v)
    }

    #[tokio::test]
    async fn topic_with_subscription_list_and_in_place_update() {
        let s = services();
        let reg = crate::providers::registry(&s);
        let c = ctx("Alerts", TOPIC);
        let q = reg
            .get("AWS::SQS::Queue")
            .expect("q")
            .create(&c, &json!({"QueueName": "sink"}))
            .await
            .expect("queue");
        let qarn = q.attributes["Arn"].as_str().unwrap_or_default().to_string();
        let p = reg.get(TOPIC).expect("topic").clone();
        let props = json!({
            "DisplayName": "Alerts",
            "Subscription": [{"Protocol": "sqs", "Endpoint": qarn}],
            "DeliveryStatusLogging": [{"Protocol": "sqs", "SuccessFeedbackSampleRate": "50"}],
        });
        let out = p.create(&c, &props).await.expect("create");
        assert!(
            out.physical_id
                .starts_with("arn:aws:sns:us-east-1:000000000000:teststack-Alerts-")
        );
        assert_eq!(out.attributes["TopicArn"], json!(out.physical_id));
        assert_eq!(
            attr(&s, &out.physical_id, "DisplayName").as_deref(),
            Some("Alerts")
        );
        assert_eq!(
            attr(&s, &out.physical_id, "SQSSuccessFeedbackSampleRate").as_deref(),
            Some("50")
        );
        let (subs, _) = s
            .sns
            .list_subscriptions("us-east-1", Some(&out.physical_id), None)
            .expect("subs");
        assert_eq!(subs.len(), 1);

        let new = json!({"DisplayName": "Renamed"});
        p.update(&c, &out.physical_id, &props, &new)
            .await
            .expect("update");
        assert_eq!(
            attr(&s, &out.physical_id, "DisplayName").as_deref(),
            Some("Renamed")
        );
        assert_eq!(
            attr(&s, &out.physical_id, "SQSSuccessFeedbackSampleRate"),
            None
        );
        let (subs, _) = s
            .sns
            .list_subscriptions("us-east-1", Some(&out.physical_id), None)
            .expect("subs");
        assert!(subs.is_empty(), "the removed subscription is gone");
        p.delete(&c, &out.physical_id, &new).await.expect("delete");
        assert!(
            s.sns
                .get_topic_attributes("us-east-1", &out.physical_id)
                .is_err()
        );
    }

    #[tokio::test]
    async fn subscription_attributes_and_topic_policy() {
        let s = services();
        let reg = crate::providers::registry(&s);
        let c = ctx("Sub", SUBSCRIPTION);
        let topic = reg
            .get(TOPIC)
            .expect("t")
            .create(&c, &json!({"TopicName": "t1"}))
            .await
            .expect("topic");
        let sub = reg.get(SUBSCRIPTION).expect("s").clone();
        let props = json!({
            "TopicArn": topic.physical_id,
            "Protocol": "sqs",
            "Endpoint": "arn:aws:sqs:us-east-1:000000000000:q",
            "RawMessageDelivery": true,
            "FilterPolicy": {"color": ["red"]},
        });
        let out = sub.create(&c, &props).await.expect("subscribe");
        let a: BTreeMap<String, String> = s
            .sns
            .get_subscription_attributes("us-east-1", &out.physical_id)
            .expect("attrs")
            .into_iter()
            .collect();
        assert_eq!(a["RawMessageDelivery"], "true");
        assert!(a["FilterPolicy"].contains("red"));
        let new = json!({
            "TopicArn": topic.physical_id,
            "Protocol": "sqs",
            "Endpoint": "arn:aws:sqs:us-east-1:000000000000:q",
        });
        sub.update(&c, &out.physical_id, &props, &new)
            .await
            .expect("update");
        let a: BTreeMap<String, String> = s
            .sns
            .get_subscription_attributes("us-east-1", &out.physical_id)
            .expect("attrs")
            .into_iter()
            .collect();
        assert_eq!(a["RawMessageDelivery"], "false");
        assert!(!a.contains_key("FilterPolicy"));

        let tp = reg.get(TOPIC_POLICY).expect("tp").clone();
        let pprops = json!({"Topics": [topic.physical_id], "PolicyDocument": {"Statement": [{"Effect": "Allow", "Action": "sns:Publish", "Principal": "*", "Resource": "*"}]}});
        let pol = tp.create(&c, &pprops).await.expect("policy");
        assert!(
            attr(&s, &topic.physical_id, "Policy")
                .unwrap_or_default()
                .contains("\"Principal\":\"*\"")
        );
        tp.delete(&c, &pol.physical_id, &pprops)
            .await
            .expect("delete");
        assert!(
            !attr(&s, &topic.physical_id, "Policy")
                .unwrap_or_default()
                .contains("\"Principal\":\"*\"")
        );
    }
}
