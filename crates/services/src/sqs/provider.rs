//! CloudFormation providers: AWS::SQS::Queue and AWS::SQS::QueuePolicy, over SQS's typed
//! operations. Every Queue property is a queue attribute of the same name (RedrivePolicy and
//! RedriveAllowPolicy accepted as objects or JSON text), so the mapping is the attribute set.

use super::{Caller, SqsService, attributes};
use crate::providers::attached_policy::{AttachedPolicy, PolicyTarget};
use crate::providers::readback;
use crate::providers::system_tags::TagChange;
use crate::providers::{
    ProviderServices, already_exists, check_known, endpoint_host, failed, json_text, object,
    scalar, scalar_value, tags,
};
use cumulo_engine::{
    Observed, Provider, ProviderContext, ProviderError, ProviderOutcome, ProviderRegistry,
};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

const QUEUE: &str = "AWS::SQS::Queue";
const QUEUE_POLICY: &str = "AWS::SQS::QueuePolicy";

/// Queue properties that are queue attributes, taken as scalars.
const SCALAR_ATTRIBUTES: &[&str] = &[
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "DelaySeconds",
    "FifoQueue",
    "FifoThroughputLimit",
    "KmsDataKeyReusePeriodSeconds",
    "KmsMasterKeyId",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds",
    "SqsManagedSseEnabled",
    "VisibilityTimeout",
];
/// Queue properties that are JSON documents.
const JSON_ATTRIBUTES: &[&str] = &["RedriveAllowPolicy", "RedrivePolicy"];

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    r.register(QUEUE, Arc::new(QueueProvider { sqs: s.sqs.clone() }));
    r.register(
        QUEUE_POLICY,
        Arc::new(AttachedPolicy(QueuePolicy(s.sqs.clone()))),
    );
}

/// The SQS caller a provider call acts as: queue URLs follow the host of the CloudFormation
/// call that started the operation.
fn caller(ctx: &ProviderContext) -> Caller {
    Caller {
        region: ctx.region.clone(),
        account_id: ctx.account_id.clone(),
        host: endpoint_host(ctx),
        sender_id: ctx.account_id.clone(),
    }
}

struct QueueProvider {
    sqs: Arc<SqsService>,
}

/// The queue attributes a Queue's properties stand for.
fn queue_attributes(props: &Map<String, Value>) -> Result<BTreeMap<String, String>, ProviderError> {
    let mut out = BTreeMap::new();
    for name in SCALAR_ATTRIBUTES {
        if let Some(v) = scalar(props, name)? {
            out.insert(name.to_string(), v);
        }
    }
    for name in JSON_ATTRIBUTES {
        if let Some(v) = json_text(props, name)? {
            out.insert(name.to_string(), v);
        }
    }
    Ok(out)
}

fn check_queue_props(props: &Map<String, Value>) -> Result<(), ProviderError> {
    let mut known: Vec<&str> = SCALAR_ATTRIBUTES.to_vec();
    known.extend(JSON_ATTRIBUTES);
    known.extend(["QueueName", "Tags"]);
    check_known(QUEUE, props, &known, &[])
}

fn is_fifo(props: &Map<String, Value>) -> bool {
    props
        .get("FifoQueue")
        .and_then(scalar_value)
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
}

impl QueueProvider {
    fn outcome(&self, ctx: &ProviderContext, url: &str) -> Result<ProviderOutcome, ProviderError> {
        let caller = caller(ctx);
        let arn = self
            .sqs
            .get_queue_attributes(&caller, url, &["QueueArn".to_string()])
            .map_err(|e| failed(ctx, "Sqs", e))?
            .into_iter()
            .find(|(k, _)| k == "QueueArn")
            .map(|(_, v)| v);
        // An attribute that could not be read is omitted, never stored as "" (seed 002): a
        // stored "" would make Fn::GetAtt resolve to the empty string.
        let mut attributes = Map::new();
        if let Some(arn) = arn {
            attributes.insert("Arn".into(), json!(arn));
        }
        if let Some(name) = super::ops::queue_name_from_url(url) {
            attributes.insert("QueueName".into(), json!(name));
        }
        attributes.insert("QueueUrl".into(), json!(url));
        Ok(ProviderOutcome {
            physical_id: url.to_string(),
            attributes,
            ..Default::default()
        })
    }
}

/// The queue's name: the template's, or generated (one rule for create and its identity).
fn queue_name(ctx: &ProviderContext, props: &Map<String, Value>) -> Result<String, ProviderError> {
    Ok(match scalar(props, "QueueName")? {
        Some(n) => n,
        None => ctx.generated_name(80, if is_fifo(props) { ".fifo" } else { "" }),
    })
}

#[async_trait::async_trait]
impl Provider for QueueProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Arn", "QueueName", "QueueUrl"])
    }

    fn created_identity(&self, ctx: &ProviderContext, properties: &Value) -> Option<String> {
        let props = object(QUEUE, properties).ok()?;
        Some(caller(ctx).queue_url(&queue_name(ctx, &props).ok()?))
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(QUEUE, properties)?;
        check_queue_props(&props)?;
        let name = queue_name(ctx, &props)?;
        let attrs = queue_attributes(&props)?;
        let tags: BTreeMap<String, String> = tags(ctx, &props)?.into_iter().collect();
        let caller = caller(ctx);
        if self.sqs.get_queue_url(&caller, &name, None).is_ok() {
            return Err(already_exists(ctx, &name));
        }
        let url = self
            .sqs
            .create_queue(&caller, &name, &attrs, &tags)
            .await
            .map_err(|e| failed(ctx, "Sqs", e))?;
        self.outcome(ctx, &url)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let old_props = object(QUEUE, old)?;
        let new_props = object(QUEUE, new)?;
        check_queue_props(&new_props)?;
        let caller = caller(ctx);
        let old_attrs = queue_attributes(&old_props)?;
        let mut changes = queue_attributes(&new_props)?;
        // FifoQueue is createOnly: the engine replaces the queue when it changes.
        changes.remove("FifoQueue");
        changes.retain(|k, v| old_attrs.get(k) != Some(v));
        // A property removed from the template goes back to SQS's default.
        let defaults = attributes::defaults(is_fifo(&new_props));
        let new_attrs = queue_attributes(&new_props)?;
        for k in old_attrs.keys() {
            if !new_attrs.contains_key(k) && k != "FifoQueue" {
                changes.insert(k.clone(), defaults.get(k).cloned().unwrap_or_default());
            }
        }
        if !changes.is_empty() {
            self.sqs
                .set_queue_attributes(&caller, physical_id, &changes)
                .await
                .map_err(|e| failed(ctx, "Sqs", e))?;
        }
        let live = self
            .sqs
            .list_queue_tags(&caller, physical_id)
            .map_err(|e| failed(ctx, "Sqs", e))?;
        let change = TagChange::between(&live, &tags(ctx, &new_props)?);
        if !change.remove.is_empty() {
            self.sqs
                .untag_queue(&caller, physical_id, &change.remove)
                .await
                .map_err(|e| failed(ctx, "Sqs", e))?;
        }
        if !change.set.is_empty() {
            self.sqs
                .tag_queue(&caller, physical_id, &change.set.into_iter().collect())
                .await
                .map_err(|e| failed(ctx, "Sqs", e))?;
        }
        self.outcome(ctx, physical_id)
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        match self.sqs.delete_queue(&caller(ctx), physical_id).await {
            Ok(()) => Ok(()),
            Err(e)
                if e.code.contains("NonExistentQueue") || e.code.contains("QueueDoesNotExist") =>
            {
                Err(ProviderError::NotFound(physical_id.to_string()))
            }
            Err(e) => Err(failed(ctx, "Sqs", e)),
        }
    }

    /// The queue's attributes in the template's shape (SQS reports every one as a string,
    /// RedrivePolicy and RedriveAllowPolicy as JSON text), its name and tags.
    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let caller = caller(ctx);
        let all = match self
            .sqs
            .get_queue_attributes(&caller, physical_id, &["All".to_string()])
        {
            Ok(a) => a,
            Err(e) if gone(&e.code) => return Ok(None),
            Err(e) => return Err(failed(ctx, "Sqs", e)),
        };
        let mut props = Map::new();
        for (k, v) in all {
            if SCALAR_ATTRIBUTES.contains(&k.as_str()) {
                props.insert(k, Value::String(v));
            } else if JSON_ATTRIBUTES.contains(&k.as_str()) && !v.is_empty() {
                props.insert(k, readback::document(&Value::String(v)));
            }
        }
        if let Some(name) = super::ops::queue_name_from_url(physical_id) {
            props.insert("QueueName".into(), json!(name));
        }
        let tags = self
            .sqs
            .list_queue_tags(&caller, physical_id)
            .map_err(|e| failed(ctx, "Sqs", e))?;
        if let Some(t) = readback::tags_value(tags) {
            props.insert("Tags".into(), t);
        }
        let attributes = self.outcome(ctx, physical_id)?.attributes;
        Ok(Some(Observed {
            properties: props,
            attributes,
        }))
    }

    /// Numbers and booleans as SQS's strings, redrive policies as objects, tags sorted.
    fn canonicalize(&self, properties: Value) -> Value {
        readback::canonical_attributes(properties, SCALAR_ATTRIBUTES, JSON_ATTRIBUTES)
    }
}

/// Whether SQS's error says the queue does not exist.
fn gone(code: &str) -> bool {
    code.contains("NonExistentQueue") || code.contains("QueueDoesNotExist")
}

/// AWS::SQS::QueuePolicy: the policy document becomes the `Policy` attribute of each queue
/// (by URL).
struct QueuePolicy(Arc<SqsService>);

#[async_trait::async_trait]
impl PolicyTarget for QueuePolicy {
    const TYPE: &'static str = QUEUE_POLICY;
    const TARGETS: &'static str = "Queues";
    const SERVICE: &'static str = "Sqs";

    async fn set_policy(
        &self,
        ctx: &ProviderContext,
        url: &str,
        policy: &str,
    ) -> Result<(), AwsError> {
        let changes = BTreeMap::from([("Policy".to_string(), policy.to_string())]);
        self.0
            .set_queue_attributes(&caller(ctx), url, &changes)
            .await
    }

    fn attributes(
        &self,
        ctx: &ProviderContext,
        url: &str,
    ) -> Result<Option<Vec<(String, String)>>, AwsError> {
        match self
            .0
            .get_queue_attributes(&caller(ctx), url, &["Policy".to_string()])
        {
            Ok(attrs) => Ok(Some(attrs)),
            Err(e) if gone(&e.code) => Ok(None),
            Err(e) => Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::test_support::{ctx, services};

    fn attrs(s: &ProviderServices, url: &str) -> BTreeMap<String, String> {
        let c = caller(&ctx("Q", QUEUE));
        s.sqs
            .get_queue_attributes(&c, url, &["All".to_string()])
            .expect("attributes")
            .into_iter()
            .collect()
    }

    #[tokio::test]
    async fn queue_properties_become_attributes_and_update_in_place() {
        let s = services();
        let reg = crate::providers::registry(&s);
        let p = reg.get(QUEUE).expect("registered").clone();
        let c = ctx("Jobs", QUEUE);
        let dlq = p
            .create(&c, &json!({"QueueName": "dlq"}))
            .await
            .expect("dlq");
        let dlq_arn = dlq.attributes["Arn"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let props = json!({
            "VisibilityTimeout": 45,
            "DelaySeconds": "5",
            "RedrivePolicy": {"deadLetterTargetArn": dlq_arn, "maxReceiveCount": 3},
            "Tags": [{"Key": "team", "Value": "a"}],
        });
        let out = p.create(&c, &props).await.expect("create");
        assert!(
            out.physical_id
                .starts_with("http://localhost:4566/000000000000/teststack-Jobs-")
        );
        assert_eq!(out.attributes["QueueUrl"], json!(out.physical_id));
        let a = attrs(&s, &out.physical_id);
        assert_eq!(a["VisibilityTimeout"], "45");
        assert_eq!(a["DelaySeconds"], "5");
        assert!(a["RedrivePolicy"].contains("\"maxReceiveCount\":3"));

        let new = json!({"VisibilityTimeout": 60, "Tags": [{"Key": "team", "Value": "b"}]});
        p.update(&c, &out.physical_id, &props, &new)
            .await
            .expect("update");
        let a = attrs(&s, &out.physical_id);
        assert_eq!(a["VisibilityTimeout"], "60");
        assert_eq!(
            a["DelaySeconds"], "0",
            "a removed property goes back to the default"
        );
        assert!(!a.contains_key("RedrivePolicy"));
        let tags = s
            .sqs
            .list_queue_tags(&caller(&c), &out.physical_id)
            .expect("tags");
        assert_eq!(tags.get("team").map(String::as_str), Some("b"));

        p.delete(&c, &out.physical_id, &new).await.expect("delete");
        assert!(matches!(
            p.delete(&c, &out.physical_id, &new).await,
            Err(ProviderError::NotFound(_))
        ));
    }

    /// The URL is built with the host of the CloudFormation call that started the operation,
    /// per operation: two stacks created through different hosts get different URL hosts.
    #[tokio::test]
    async fn queue_url_follows_the_callers_host() {
        let s = services();
        let reg = crate::providers::registry(&s);
        let p = reg.get(QUEUE).expect("queue provider");
        let mut first = ctx("A", QUEUE);
        first.host = "127.0.0.1:4999".into();
        let mut second = ctx("B", QUEUE);
        second.host = "cumulo.internal:8080".into();
        let a = p
            .create(&first, &json!({"QueueName": "via-first"}))
            .await
            .expect("create A");
        let b = p
            .create(&second, &json!({"QueueName": "via-second"}))
            .await
            .expect("create B");
        assert_eq!(
            a.physical_id,
            "http://127.0.0.1:4999/000000000000/via-first"
        );
        assert_eq!(a.attributes["QueueUrl"], json!(a.physical_id));
        assert_eq!(
            b.physical_id,
            "http://cumulo.internal:8080/000000000000/via-second"
        );
        // A later operation from yet another host still reaches the queue by its URL.
        let mut third = ctx("A", QUEUE);
        third.host = "localhost:4566".into();
        p.delete(&third, &a.physical_id, &Value::Null)
            .await
            .expect("delete");
        assert!(
            s.sqs
                .get_queue_attributes(&caller(&third), &a.physical_id, &[])
                .is_err(),
            "deleted"
        );
        // An in-process caller (no host) gets the default endpoint.
        let mut none = ctx("C", QUEUE);
        none.host = String::new();
        let c = p
            .create(&none, &json!({"QueueName": "in-process"}))
            .await
            .expect("create C");
        assert_eq!(
            c.physical_id,
            "http://localhost:4566/000000000000/in-process"
        );
    }

    #[tokio::test]
    async fn invalid_attribute_and_unknown_property_fail_with_reasons() {
        let s = services();
        let p = crate::providers::registry(&s)
            .get(QUEUE)
            .expect("q")
            .clone();
        let c = ctx("Bad", QUEUE);
        let e = p
            .create(&c, &json!({"VisibilityTimeout": 999999}))
            .await
            .expect_err("invalid");
        assert!(e.to_string().contains("VisibilityTimeout"), "{e}");
        assert!(
            e.to_string().contains("Service: Sqs, Status Code: 400"),
            "{e}"
        );
        let e = p
            .create(&c, &json!({"Bogus": 1}))
            .await
            .expect_err("unknown");
        assert!(e.to_string().contains("Bogus"), "{e}");
        let fifo = p
            .create(&c, &json!({"FifoQueue": true}))
            .await
            .expect("fifo");
        assert!(fifo.physical_id.ends_with(".fifo"));
        let e = p
            .create(
                &c,
                &json!({"QueueName": fifo.attributes["QueueName"], "FifoQueue": true}),
            )
            .await
            .expect_err("exists");
        assert!(e.to_string().contains("already exists"), "{e}");
    }

    #[tokio::test]
    async fn queue_policy_sets_and_clears_the_policy() {
        let s = services();
        let reg = crate::providers::registry(&s);
        let c = ctx("Q", QUEUE);
        let q = reg
            .get(QUEUE)
            .expect("q")
            .create(&c, &json!({}))
            .await
            .expect("queue");
        let pp = reg.get(QUEUE_POLICY).expect("qp").clone();
        let props = json!({
            "Queues": [q.physical_id],
            "PolicyDocument": {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage", "Resource": "*"}]},
        });
        let out = pp.create(&c, &props).await.expect("policy");
        assert!(attrs(&s, &q.physical_id)["Policy"].contains("sqs:SendMessage"));
        pp.delete(&c, &out.physical_id, &props)
            .await
            .expect("delete");
        assert!(!attrs(&s, &q.physical_id).contains_key("Policy"));
    }
}
