//! CloudFormation providers: AWS::Logs::LogGroup, AWS::Logs::LogStream and
//! AWS::Logs::SubscriptionFilter, over CloudWatch Logs' typed operations. A LogGroup's Ref is its
//! name and its `Arn` the `...:log-group:NAME:*` form; a LogStream's and a SubscriptionFilter's
//! Ref is its name and they have no attributes. The account records' types
//! (ResourcePolicy, QueryDefinition) are in `provider_account.rs`.

use super::{
    CreateLogGroupInput, LogsService, PutPolicyInput, PutSubscriptionInput, provider_account,
};
use crate::providers::declared::{self, Answer, Declared, Fault, Made};
use crate::providers::system_tags::{TagChange, system_tags};
use crate::providers::{
    ProviderServices, already_exists, check_known, failed, given_or_generated_name, json_text,
    object, required, scalar, tags,
};
use cumulo_engine::{
    Observed, Provider, ProviderContext, ProviderError, ProviderOutcome, ProviderRegistry,
};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

const LOG_GROUP: &str = "AWS::Logs::LogGroup";
const LOG_STREAM: &str = "AWS::Logs::LogStream";
const SUBSCRIPTION_FILTER: &str = "AWS::Logs::SubscriptionFilter";
const SERVICE: &str = "CloudWatchLogs";

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    r.register(
        LOG_GROUP,
        Arc::new(LogGroupProvider {
            logs: s.logs.clone(),
        }),
    );
    declared::register(
        r,
        LogStream {
            logs: s.logs.clone(),
        },
    );
    declared::register(
        r,
        provider_account::ResourcePolicy {
            logs: s.logs.clone(),
        },
    );
    declared::register(
        r,
        provider_account::QueryDefinition {
            logs: s.logs.clone(),
        },
    );
    declared::register(
        r,
        SubscriptionFilter {
            logs: s.logs.clone(),
        },
    );
}

struct LogGroupProvider {
    logs: Arc<LogsService>,
}

/// What a LogGroup's properties ask for, read and checked before anything is created.
struct GroupSpec {
    retention: Option<i64>,
    kms_key_id: Option<String>,
    class: Option<String>,
    tags: BTreeMap<String, String>,
    deletion_protection: bool,
    /// The group's resource-scoped policy (ResourcePolicyDocument), as JSON text.
    resource_policy: Option<String>,
}

fn group_spec(
    ctx: &ProviderContext,
    props: &Map<String, Value>,
) -> Result<GroupSpec, ProviderError> {
    const WHY: &str = "cumulo's CloudWatch Logs does not emulate it";
    check_known(
        LOG_GROUP,
        props,
        &[
            "KmsKeyId",
            "LogGroupClass",
            "LogGroupName",
            "RetentionInDays",
            "Tags",
            "DeletionProtectionEnabled",
            "ResourcePolicyDocument",
        ],
        &[
            ("DataProtectionPolicy", WHY),
            ("FieldIndexPolicies", WHY),
            ("BearerTokenAuthenticationEnabled", WHY),
        ],
    )?;
    let retention = match scalar(props, "RetentionInDays")? {
        None => None,
        Some(s) => Some(s.parse::<i64>().map_err(|_| {
            ProviderError::Failed(format!(
                "Properties validation failed for resource with message: #/RetentionInDays: expected type: Integer, found: {s}"
            ))
        })?),
    };
    Ok(GroupSpec {
        retention,
        kms_key_id: scalar(props, "KmsKeyId")?,
        class: scalar(props, "LogGroupClass")?,
        tags: tags(ctx, props)?.into_iter().collect(),
        deletion_protection: scalar(props, "DeletionProtectionEnabled")?
            .is_some_and(|v| v.eq_ignore_ascii_case("true")),
        resource_policy: json_text(props, "ResourcePolicyDocument")?,
    })
}

impl LogGroupProvider {
    /// Puts (or with `None` removes) the group's resource-scoped policy.
    fn set_policy(&self, region: &str, name: &str, doc: Option<String>) -> Result<(), AwsError> {
        let arn = self.logs.group_arn_bare(region, name);
        match doc {
            Some(doc) => self
                .logs
                .put_resource_policy(
                    region,
                    PutPolicyInput {
                        policy_name: None,
                        policy_document: Some(doc),
                        resource_arn: Some(arn),
                        expected_revision_id: None,
                    },
                )
                .map(drop),
            None => match self.logs.delete_resource_policy(region, None, Some(&arn)) {
                Err(e) if e.code != "ResourceNotFoundException" => Err(e),
                _ => Ok(()),
            },
        }
    }

    fn outcome(&self, ctx: &ProviderContext, name: &str) -> ProviderOutcome {
        ProviderOutcome {
            physical_id: name.to_string(),
            attributes: Map::from_iter([(
                "Arn".to_string(),
                json!(self.logs.group_arn(&ctx.region, name)),
            )]),
            ..Default::default()
        }
    }
}

#[async_trait::async_trait]
impl Provider for LogGroupProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Arn"])
    }

    fn created_identity(&self, ctx: &ProviderContext, properties: &Value) -> Option<String> {
        let props = object(LOG_GROUP, properties).ok()?;
        given_or_generated_name(ctx, &props, "LogGroupName", 512).ok()
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(LOG_GROUP, properties)?;
        let spec = group_spec(ctx, &props)?;
        let name = given_or_generated_name(ctx, &props, "LogGroupName", 512)?;
        let input = CreateLogGroupInput {
            name: name.clone(),
            kms_key_id: spec.kms_key_id,
            tags: spec.tags,
            log_group_class: spec.class,
            // Set last, once nothing can fail the create any more (its clean-up deletes).
            deletion_protection: false,
        };
        match self.logs.create_log_group(&ctx.region, input) {
            Ok(()) => {}
            Err(e) if e.code == "ResourceAlreadyExistsException" => {
                return Err(already_exists(ctx, &name));
            }
            Err(e) => return Err(failed(ctx, SERVICE, e)),
        }
        let policy = spec.resource_policy.clone();
        let configured = spec
            .retention
            .map_or(Ok(()), |days| {
                self.logs.put_retention_policy(&ctx.region, &name, days)
            })
            .and_then(|()| match policy {
                Some(doc) => self.set_policy(&ctx.region, &name, Some(doc)),
                None => Ok(()),
            });
        if let Err(e) = configured {
            // The group must not outlive the failed create: CloudFormation would not know it.
            let _ = self.logs.delete_log_group(&ctx.region, &name);
            return Err(failed(ctx, SERVICE, e));
        }
        let system = system_tags(ctx);
        if !system.is_empty() {
            self.logs
                .add_system_tags(&ctx.region, &name, &system.into_iter().collect())
                .map_err(|e| failed(ctx, SERVICE, e))?;
        }
        if spec.deletion_protection {
            self.logs
                .put_deletion_protection(&ctx.region, &name, true)
                .map_err(|e| failed(ctx, SERVICE, e))?;
        }
        Ok(self.outcome(ctx, &name))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let old = group_spec(ctx, &*object(LOG_GROUP, old)?)?;
        let new = group_spec(ctx, &*object(LOG_GROUP, new)?)?;
        let region = &ctx.region;
        let current = self
            .logs
            .log_group(region, physical_id)
            .map_err(|e| failed(ctx, SERVICE, e))?;
        let wanted_class = new.class.clone().unwrap_or_else(|| "STANDARD".into());
        if wanted_class != current.log_group_class {
            return Err(ProviderError::Failed(format!(
                "cumulo: LogGroupClass of {physical_id} cannot change from {} to {wanted_class} in place (CloudWatch Logs has no operation for it)",
                current.log_group_class
            )));
        }
        let fail = |e: AwsError| failed(ctx, SERVICE, e);
        if new.retention != old.retention || new.retention != current.retention_in_days {
            match new.retention {
                Some(d) => self.logs.put_retention_policy(region, physical_id, d),
                None => self.logs.delete_retention_policy(region, physical_id),
            }
            .map_err(fail)?;
        }
        if new.kms_key_id != current.kms_key_id {
            self.logs
                .set_kms_key(region, physical_id, new.kms_key_id.clone())
                .map_err(fail)?;
        }
        let wanted: Vec<(String, String)> = new.tags.into_iter().collect();
        let change = TagChange::between(&current.tags, &wanted);
        if !change.remove.is_empty() {
            self.logs
                .untag_log_group(region, physical_id, &change.remove)
                .map_err(fail)?;
        }
        if !change.set.is_empty() {
            self.logs
                .tag_log_group(region, physical_id, &change.set.into_iter().collect())
                .map_err(fail)?;
        }
        if new.resource_policy != old.resource_policy {
            self.set_policy(region, physical_id, new.resource_policy.clone())
                .map_err(fail)?;
        }
        if new.deletion_protection != current.deletion_protection {
            self.logs
                .put_deletion_protection(region, physical_id, new.deletion_protection)
                .map_err(fail)?;
        }
        Ok(self.outcome(ctx, physical_id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        match self.logs.delete_log_group(&ctx.region, physical_id) {
            Ok(()) => Ok(()),
            Err(e) if e.code == "ResourceNotFoundException" => {
                Err(ProviderError::NotFound(physical_id.to_string()))
            }
            Err(e) => Err(failed(ctx, SERVICE, e)),
        }
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let g = match self.logs.log_group(&ctx.region, physical_id) {
            Ok(g) => g,
            Err(e) if e.code == "ResourceNotFoundException" => return Ok(None),
            Err(e) => return Err(failed(ctx, SERVICE, e)),
        };
        let mut properties = Map::new();
        properties.insert("LogGroupName".into(), json!(g.name));
        properties.insert("LogGroupClass".into(), json!(g.log_group_class));
        properties.insert(
            "DeletionProtectionEnabled".into(),
            json!(g.deletion_protection),
        );
        if let Some(d) = g.retention_in_days {
            properties.insert("RetentionInDays".into(), json!(d));
        }
        if let Some(k) = &g.kms_key_id {
            properties.insert("KmsKeyId".into(), json!(k));
        }
        if !g.tags.is_empty() {
            let tags: Vec<Value> = g
                .tags
                .iter()
                .map(|(k, v)| json!({"Key": k, "Value": v}))
                .collect();
            properties.insert("Tags".into(), Value::Array(tags));
        }
        Ok(Some(Observed {
            properties,
            attributes: self.outcome(ctx, physical_id).attributes,
        }))
    }
}

/// AWS::Logs::LogStream, declared: both properties are createOnly, so the engine replaces on
/// any change and the default in-place update (nothing to apply) is all it needs.
struct LogStream {
    logs: Arc<LogsService>,
}

#[async_trait::async_trait]
impl Declared for LogStream {
    const ATTRIBUTES: &'static [&'static str] = &[];
    const TYPE: &'static str = LOG_STREAM;
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &["LogGroupName", "LogStreamName"];
    const NOT_FOUND: &'static [&'static str] = &["ResourceNotFoundException"];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let group = required(props, "LogGroupName")?;
        let name = given_or_generated_name(ctx, props, "LogStreamName", 512)?;
        match self.logs.create_log_stream(&ctx.region, &group, &name) {
            Ok(()) => Ok(Made::new(name)),
            Err(e) if e.code == "ResourceAlreadyExistsException" => {
                Err(already_exists(ctx, &name).into())
            }
            Err(e) => Err(e.into()),
        }
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        id: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        let group = required(props, "LogGroupName")?;
        Ok(self.logs.delete_log_stream(&ctx.region, &group, id)?)
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        props: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        let group = required(props, "LogGroupName")?;
        let exists = self
            .logs
            .log_group(&ctx.region, &group)?
            .streams
            .contains_key(id);
        Ok(exists.then(|| Observed {
            properties: Map::from_iter([
                ("LogGroupName".to_string(), json!(group)),
                ("LogStreamName".to_string(), json!(id)),
            ]),
            attributes: Map::new(),
        }))
    }
}

/// AWS::Logs::SubscriptionFilter, declared: FilterName and LogGroupName are createOnly; the
/// rest is put again in place (PutSubscriptionFilter replaces the filter of that name).
struct SubscriptionFilter {
    logs: Arc<LogsService>,
}

impl SubscriptionFilter {
    fn put(
        &self,
        ctx: &ProviderContext,
        name: &str,
        props: &Map<String, Value>,
    ) -> Result<(), Fault> {
        let apply = match scalar(props, "ApplyOnTransformedLogs")?.as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(other) => {
                return Err(ProviderError::Failed(format!(
                    "Properties validation failed for resource with message: #/ApplyOnTransformedLogs: expected type: Boolean, found: {other}"
                ))
                .into());
            }
        };
        Ok(self.logs.put_subscription_filter(
            &ctx.region,
            PutSubscriptionInput {
                log_group_name: required(props, "LogGroupName")?,
                filter_name: name.to_string(),
                filter_pattern: required(props, "FilterPattern")?,
                destination_arn: required(props, "DestinationArn")?,
                role_arn: scalar(props, "RoleArn")?,
                distribution: scalar(props, "Distribution")?,
                apply_on_transformed_logs: apply,
            },
        )?)
    }
}

#[async_trait::async_trait]
impl Declared for SubscriptionFilter {
    const ATTRIBUTES: &'static [&'static str] = &[];
    const TYPE: &'static str = SUBSCRIPTION_FILTER;
    const SERVICE: &'static str = SERVICE;
    const PROPERTIES: &'static [&'static str] = &[
        "ApplyOnTransformedLogs",
        "DestinationArn",
        "Distribution",
        "FilterName",
        "FilterPattern",
        "LogGroupName",
        "RoleArn",
    ];
    const NOT_FOUND: &'static [&'static str] = &["ResourceNotFoundException"];

    async fn create(&self, ctx: &ProviderContext, props: &Map<String, Value>) -> Answer<Made> {
        let group = required(props, "LogGroupName")?;
        let name = given_or_generated_name(ctx, props, "FilterName", 512)?;
        if self
            .logs
            .describe_subscription_filters(&ctx.region, &group, Some(&name))?
            .iter()
            .any(|f| f.filter_name == name)
        {
            return Err(already_exists(ctx, &name).into());
        }
        self.put(ctx, &name, props)?;
        Ok(Made::new(name))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        id: &str,
        _old: &Map<String, Value>,
        new: &Map<String, Value>,
    ) -> Answer<Made> {
        self.put(ctx, id, new)?;
        Ok(Made::new(id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        id: &str,
        props: &Map<String, Value>,
    ) -> Answer<()> {
        let group = required(props, "LogGroupName")?;
        Ok(self
            .logs
            .delete_subscription_filter(&ctx.region, &group, id)?)
    }

    fn read(
        &self,
        ctx: &ProviderContext,
        id: &str,
        props: &Map<String, Value>,
    ) -> Answer<Option<Observed>> {
        let group = required(props, "LogGroupName")?;
        let found = self
            .logs
            .describe_subscription_filters(&ctx.region, &group, Some(id))?
            .into_iter()
            .find(|f| f.filter_name == id);
        Ok(found.map(|f| {
            let mut properties = Map::from_iter([
                ("LogGroupName".to_string(), json!(group)),
                ("FilterName".to_string(), json!(f.filter_name)),
                ("FilterPattern".to_string(), json!(f.filter_pattern)),
                ("DestinationArn".to_string(), json!(f.destination_arn)),
                ("Distribution".to_string(), json!(f.distribution)),
                (
                    "ApplyOnTransformedLogs".to_string(),
                    json!(f.apply_on_transformed_logs),
                ),
            ]);
            if let Some(r) = f.role_arn {
                properties.insert("RoleArn".into(), json!(r));
            }
            Observed {
                properties,
                attributes: Map::new(),
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::test_support::{ctx, services};

    #[tokio::test]
    async fn log_group_create_update_read_delete() {
        let s = services();
        let r = crate::providers::registry(&s);
        let p = r.get(LOG_GROUP).expect("registered").clone();
        let c = ctx("Logs", LOG_GROUP);
        let props = json!({"RetentionInDays": 7, "Tags": [{"Key": "a", "Value": "1"}]});
        let out = p.create(&c, &props).await.expect("create");
        assert!(out.physical_id.starts_with("teststack-Logs-"));
        assert_eq!(
            out.attributes["Arn"],
            json!(format!(
                "arn:aws:logs:us-east-1:000000000000:log-group:{}:*",
                out.physical_id
            ))
        );
        let new =
            json!({"RetentionInDays": 14, "KmsKeyId": "k1", "Tags": [{"Key": "b", "Value": "2"}]});
        p.update(&c, &out.physical_id, &props, &new)
            .await
            .expect("update");
        let g = s
            .logs
            .log_group("us-east-1", &out.physical_id)
            .expect("group");
        assert_eq!(g.retention_in_days, Some(14));
        assert_eq!(g.kms_key_id.as_deref(), Some("k1"));
        let user: BTreeMap<_, _> = g
            .tags
            .iter()
            .filter(|(k, _)| !k.starts_with("aws:"))
            .collect();
        assert_eq!(user, BTreeMap::from([(&"b".to_string(), &"2".to_string())]));
        assert_eq!(g.tags["aws:cloudformation:logical-id"], "Logs");
        let seen = p
            .read(&c, &out.physical_id, &new)
            .await
            .expect("read")
            .expect("exists");
        assert_eq!(seen.properties["RetentionInDays"], json!(14));
        p.delete(&c, &out.physical_id, &new).await.expect("delete");
        assert!(matches!(
            p.delete(&c, &out.physical_id, &new).await,
            Err(ProviderError::NotFound(_))
        ));
        assert_eq!(p.read(&c, &out.physical_id, &new).await, Ok(None));
    }

    #[tokio::test]
    async fn bad_retention_leaves_nothing_behind_and_unsupported_is_refused() {
        let s = services();
        let p = crate::providers::registry(&s)
            .get(LOG_GROUP)
            .expect("p")
            .clone();
        let c = ctx("L", LOG_GROUP);
        let e = p
            .create(&c, &json!({"LogGroupName": "g1", "RetentionInDays": 4}))
            .await
            .expect_err("bad retention");
        assert!(e.to_string().contains("retentionInDays"), "{e}");
        assert!(s.logs.log_group("us-east-1", "g1").is_err());
        let e = p
            .create(&c, &json!({"DataProtectionPolicy": {}}))
            .await
            .expect_err("unsupported");
        assert!(matches!(e, ProviderError::Unsupported { .. }), "{e}");
    }
}
