//! CloudFormation provider: AWS::DynamoDB::Table over DynamoDB's typed operations. Ref is the
//! table name; GetAtt Arn and StreamArn (the latter only while a stream is enabled, as AWS).
//!
//! The template's shapes differ from the API's in a few places (`SSESpecification.SSEEnabled`,
//! a `StreamSpecification` without `StreamEnabled`, TTL and PITR as table properties), so the
//! properties are translated into the API inputs here. An update is a sequence of the same
//! mutations a user would call (UpdateTable for billing, throughput, each GSI create/delete,
//! stream, table class, deletion protection; UpdateTimeToLive; tags); KeySchema, TableName and
//! LocalSecondaryIndexes changes never reach `update` (the engine replaces the table).

use super::DynamoDbService;
use super::schema::{
    AttributeDefinition, CreateTableInput, IndexInput, SseSpecification, StreamSpecification,
    TableMeta, Tag, Throughput,
};
use super::tables::{GsiDelete, GsiThroughputUpdate, GsiUpdate, UpdateTableInput};
use crate::providers::{
    ProviderServices, already_exists, check_known, failed, given_or_generated_name, list, object,
    scalar_value, tags, unsupported_prop,
};
use cumulo_engine::{
    Observed, Provider, ProviderContext, ProviderError, ProviderOutcome, ProviderRegistry,
};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::sync::Arc;

const TABLE: &str = "AWS::DynamoDB::Table";

const KNOWN: &[&str] = &[
    "AttributeDefinitions",
    "BillingMode",
    "DeletionProtectionEnabled",
    "GlobalSecondaryIndexes",
    "KeySchema",
    "LocalSecondaryIndexes",
    "PointInTimeRecoverySpecification",
    "ProvisionedThroughput",
    "SSESpecification",
    "StreamSpecification",
    "TableClass",
    "TableName",
    "Tags",
    "TimeToLiveSpecification",
];

const UNSUPPORTED: &[(&str, &str)] = &[
    (
        "ContributorInsightsSpecification",
        "cumulo's DynamoDB has no CloudWatch Contributor Insights",
    ),
    (
        "ImportSourceSpecification",
        "cumulo's DynamoDB does not import tables from S3",
    ),
    (
        "KinesisStreamSpecification",
        "cumulo's DynamoDB has no Kinesis streaming destination",
    ),
    (
        "OnDemandThroughput",
        "cumulo's DynamoDB does not cap on-demand throughput",
    ),
    (
        "ResourcePolicy",
        "cumulo's DynamoDB does not implement resource policies",
    ),
    (
        "WarmThroughput",
        "cumulo's DynamoDB does not implement warm throughput",
    ),
];

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    r.register(
        TABLE,
        Arc::new(TableProvider {
            ddb: s.dynamodb.clone(),
        }),
    );
}

struct TableProvider {
    ddb: Arc<DynamoDbService>,
}

fn invalid(path: &str, detail: impl std::fmt::Display) -> ProviderError {
    ProviderError::Failed(format!(
        "Properties validation failed for resource with message: #/{path}: {detail}"
    ))
}

/// Templates write numbers and booleans as strings too (`"5"`, `"true"`): the API shape's
/// scalars, recursively, for the members that are numbers or booleans in the API.
fn coerce(v: &Value) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let v = match (k.as_str(), v) {
                        ("ReadCapacityUnits" | "WriteCapacityUnits", Value::String(s)) => s
                            .parse::<i64>()
                            .map(Value::from)
                            .unwrap_or_else(|_| v.clone()),
                        (
                            "Enabled"
                            | "SSEEnabled"
                            | "PointInTimeRecoveryEnabled"
                            | "DeletionProtectionEnabled",
                            Value::String(s),
                        ) => match s.as_str() {
                            "true" => Value::Bool(true),
                            "false" => Value::Bool(false),
                            _ => v.clone(),
                        },
                        _ => coerce(v),
                    };
                    (k.clone(), v)
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(coerce).collect()),
        other => other.clone(),
    }
}

fn typed<T: DeserializeOwned>(
    props: &Map<String, Value>,
    key: &str,
) -> Result<Option<T>, ProviderError> {
    match props.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => serde_json::from_value(coerce(v))
            .map(Some)
            .map_err(|e| invalid(key, e)),
    }
}

fn flag(props: &Map<String, Value>, obj: &str, key: &str) -> Result<Option<bool>, ProviderError> {
    let Some(o) = props.get(obj).and_then(Value::as_object) else {
        return Ok(None);
    };
    match o.get(key).map(coerce_scalar) {
        None => Ok(None),
        Some(Some(b)) => Ok(Some(b)),
        Some(None) => Err(invalid(&format!("{obj}/{key}"), "expected type: Boolean")),
    }
}

fn coerce_scalar(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        v => scalar_value(v).and_then(|s| s.parse().ok()),
    }
}

fn string_in(props: &Map<String, Value>, obj: &str, key: &str) -> Option<String> {
    props
        .get(obj)
        .and_then(Value::as_object)
        .and_then(|o| o.get(key))
        .and_then(scalar_value)
}

/// The table's definition from the template, in the API's shapes.
struct Desired {
    name: Option<String>,
    attribute_definitions: Vec<AttributeDefinition>,
    key_schema: Vec<super::schema::KeySchemaElement>,
    billing_mode: String,
    throughput: Option<Throughput>,
    gsis: Vec<IndexInput>,
    lsis: Option<Vec<IndexInput>>,
    stream_view_type: Option<String>,
    sse: Option<SseSpecification>,
    table_class: Option<String>,
    deletion_protection: bool,
    ttl: Option<(bool, String)>,
    pitr: bool,
    tags: Vec<Tag>,
}

fn desired(ctx: &ProviderContext, properties: &Value) -> Result<Desired, ProviderError> {
    let props = object(TABLE, properties)?;
    check_known(TABLE, &props, KNOWN, UNSUPPORTED)?;
    let gsis: Vec<IndexInput> = typed(&props, "GlobalSecondaryIndexes")?.unwrap_or_default();
    for (i, g) in list(&props, "GlobalSecondaryIndexes")?.iter().enumerate() {
        for key in [
            "ContributorInsightsSpecification",
            "OnDemandThroughput",
            "WarmThroughput",
        ] {
            if g.get(key).is_some() {
                return Err(unsupported_prop(
                    TABLE,
                    &format!("GlobalSecondaryIndexes/{i}/{key}"),
                    "cumulo's DynamoDB does not implement it",
                ));
            }
        }
    }
    if props
        .get("StreamSpecification")
        .and_then(|s| s.get("ResourcePolicy"))
        .is_some()
    {
        return Err(unsupported_prop(
            TABLE,
            "StreamSpecification/ResourcePolicy",
            "cumulo's DynamoDB does not implement resource policies",
        ));
    }
    let ttl = match props.get("TimeToLiveSpecification") {
        None | Some(Value::Null) => None,
        Some(_) => {
            let enabled = flag(&props, "TimeToLiveSpecification", "Enabled")?.unwrap_or(false);
            let attr = string_in(&props, "TimeToLiveSpecification", "AttributeName");
            match (enabled, attr) {
                (true, None) => {
                    return Err(invalid(
                        "TimeToLiveSpecification",
                        "required key [AttributeName] not found",
                    ));
                }
                (e, a) => Some((e, a.unwrap_or_default())),
            }
        }
    };
    let sse = match props.get("SSESpecification") {
        None | Some(Value::Null) => None,
        Some(_) => Some(SseSpecification {
            enabled: flag(&props, "SSESpecification", "SSEEnabled")?,
            sse_type: string_in(&props, "SSESpecification", "SSEType"),
            kms_master_key_id: string_in(&props, "SSESpecification", "KMSMasterKeyId"),
        }),
    };
    Ok(Desired {
        name: props.get("TableName").and_then(scalar_value),
        attribute_definitions: typed(&props, "AttributeDefinitions")?.unwrap_or_default(),
        key_schema: typed(&props, "KeySchema")?.ok_or_else(|| {
            ProviderError::Failed(
                "Properties validation failed for resource with message: #: required key [KeySchema] not found".into(),
            )
        })?,
        billing_mode: props
            .get("BillingMode")
            .and_then(scalar_value)
            .unwrap_or_else(|| "PROVISIONED".into()),
        throughput: typed(&props, "ProvisionedThroughput")?,
        gsis,
        lsis: typed(&props, "LocalSecondaryIndexes")?,
        stream_view_type: string_in(&props, "StreamSpecification", "StreamViewType"),
        sse,
        table_class: props.get("TableClass").and_then(scalar_value),
        deletion_protection: props
            .get("DeletionProtectionEnabled")
            .and_then(coerce_scalar)
            .unwrap_or(false),
        ttl,
        pitr: flag(
            &props,
            "PointInTimeRecoverySpecification",
            "PointInTimeRecoveryEnabled",
        )?
        .unwrap_or(false),
        tags: tags(ctx, &props)?
            .into_iter()
            .map(|(key, value)| Tag { key, value })
            .collect(),
    })
}

fn gsi_for_mode(g: &IndexInput, mode: &str) -> IndexInput {
    let mut g = g.clone();
    if mode == "PAY_PER_REQUEST" {
        g.provisioned_throughput = None;
    }
    g
}

impl TableProvider {
    fn outcome(&self, ctx: &ProviderContext, name: &str) -> Result<ProviderOutcome, ProviderError> {
        let meta = self
            .ddb
            .table_meta(&ctx.region, name)
            .ok_or_else(|| ProviderError::NotFound(name.to_string()))?;
        Ok(ProviderOutcome {
            physical_id: name.to_string(),
            attributes: attributes(&meta),
            ..Default::default()
        })
    }

    fn update_table(
        &self,
        ctx: &ProviderContext,
        input: UpdateTableInput,
    ) -> Result<(), ProviderError> {
        self.ddb
            .update_table(&ctx.region, &input)
            .map(|_| ())
            .map_err(|e| failed(ctx, "DynamoDb", e))
    }

    fn apply_ttl(
        &self,
        ctx: &ProviderContext,
        name: &str,
        old: Option<&(bool, String)>,
        new: Option<&(bool, String)>,
    ) -> Result<(), ProviderError> {
        let old_on = old.filter(|(e, _)| *e).map(|(_, a)| a.as_str());
        let new_on = new.filter(|(e, _)| *e).map(|(_, a)| a.as_str());
        if old_on == new_on {
            return Ok(());
        }
        let current = self
            .ddb
            .describe_time_to_live(&ctx.region, name)
            .map_err(|e| failed(ctx, "DynamoDb", e))?;
        if let Some(attr) = current.attribute_name.as_deref()
            && new_on != Some(attr)
        {
            self.ddb
                .update_time_to_live(&ctx.region, name, false, attr)
                .map_err(|e| failed(ctx, "DynamoDb", e))?;
        }
        if let Some(attr) = new_on
            && current.attribute_name.as_deref() != Some(attr)
        {
            self.ddb
                .update_time_to_live(&ctx.region, name, true, attr)
                .map_err(|e| failed(ctx, "DynamoDb", e))?;
        }
        Ok(())
    }

    fn apply_tags(
        &self,
        ctx: &ProviderContext,
        name: &str,
        old: &[Tag],
        new: &[Tag],
    ) -> Result<(), ProviderError> {
        let arn = super::schema::table_arn(&ctx.region, &ctx.account_id, name);
        let gone: Vec<String> = old
            .iter()
            .filter(|t| !new.iter().any(|n| n.key == t.key))
            .map(|t| t.key.clone())
            .collect();
        if !gone.is_empty() {
            self.ddb
                .untag_resource(&ctx.region, &arn, &gone)
                .map_err(|e| failed(ctx, "DynamoDb", e))?;
        }
        let changed: Vec<Tag> = new.iter().filter(|t| !old.contains(t)).cloned().collect();
        if !changed.is_empty() {
            self.ddb
                .tag_resource(&ctx.region, &arn, &changed)
                .map_err(|e| failed(ctx, "DynamoDb", e))?;
        }
        Ok(())
    }
}

fn attributes(meta: &TableMeta) -> Map<String, Value> {
    let mut a = Map::new();
    a.insert("Arn".into(), json!(meta.arn()));
    if meta.stream.is_some()
        && let Some(s) = meta.stream_arn()
    {
        a.insert("StreamArn".into(), json!(s));
    }
    a
}

#[async_trait::async_trait]
impl Provider for TableProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Arn", "StreamArn"])
    }

    fn created_identity(&self, ctx: &ProviderContext, properties: &Value) -> Option<String> {
        let props = object(TABLE, properties).ok()?;
        given_or_generated_name(ctx, &props, "TableName", 255).ok()
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let d = desired(ctx, properties)?;
        let name = d
            .name
            .clone()
            .unwrap_or_else(|| ctx.generated_name(255, ""));
        if self.ddb.table_meta(&ctx.region, &name).is_some() {
            return Err(already_exists(ctx, &name));
        }
        let input = CreateTableInput {
            table_name: name.clone(),
            attribute_definitions: d.attribute_definitions.clone(),
            key_schema: d.key_schema.clone(),
            local_secondary_indexes: d.lsis.clone(),
            global_secondary_indexes: (!d.gsis.is_empty()).then(|| d.gsis.clone()),
            billing_mode: Some(d.billing_mode.clone()),
            provisioned_throughput: d.throughput,
            stream_specification: d.stream_view_type.clone().map(|t| StreamSpecification {
                stream_enabled: true,
                stream_view_type: Some(t),
            }),
            sse_specification: d.sse.clone(),
            tags: (!d.tags.is_empty()).then(|| d.tags.clone()),
            table_class: d.table_class.clone(),
            deletion_protection_enabled: Some(d.deletion_protection),
        };
        self.ddb
            .create_table(&ctx.region, &ctx.account_id, &input)
            .map_err(|e| failed(ctx, "DynamoDb", e))?;
        // A table that cannot be finished is not left behind.
        let finish = || -> Result<(), ProviderError> {
            self.apply_ttl(ctx, &name, None, d.ttl.as_ref())?;
            if d.pitr {
                self.ddb
                    .set_point_in_time_recovery(&ctx.region, &name, true)
                    .map_err(|e| failed(ctx, "DynamoDb", e))?;
            }
            Ok(())
        };
        if let Err(e) = finish() {
            let _ = self.ddb.delete_table(&ctx.region, &name);
            return Err(e);
        }
        self.outcome(ctx, &name)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let o = desired(ctx, old)?;
        let n = desired(ctx, new)?;
        let name = physical_id;
        let meta = self
            .ddb
            .table_meta(&ctx.region, name)
            .ok_or_else(|| ProviderError::NotFound(name.to_string()))?;
        let base = || UpdateTableInput {
            table_name: name.to_string(),
            ..Default::default()
        };
        // 1. Indexes that go away (or whose definition changed: deleted, then created again).
        let same_def = |a: &IndexInput, b: &IndexInput| {
            a.key_schema == b.key_schema
                && a.projection.projection_type.as_deref().unwrap_or("ALL")
                    == b.projection.projection_type.as_deref().unwrap_or("ALL")
                && a.projection.non_key_attributes == b.projection.non_key_attributes
        };
        let kept: Vec<&IndexInput> = n
            .gsis
            .iter()
            .filter(|g| {
                meta.gsis.iter().any(|m| {
                    m.name == g.index_name
                        && same_def(
                            g,
                            &IndexInput {
                                index_name: m.name.clone(),
                                key_schema: m.key_schema.clone(),
                                projection: m.projection.clone(),
                                provisioned_throughput: None,
                            },
                        )
                })
            })
            .collect();
        for m in &meta.gsis {
            if !kept.iter().any(|g| g.index_name == m.name) {
                self.update_table(
                    ctx,
                    UpdateTableInput {
                        global_secondary_index_updates: Some(vec![GsiUpdate {
                            delete: Some(GsiDelete {
                                index_name: m.name.clone(),
                            }),
                            ..Default::default()
                        }]),
                        ..base()
                    },
                )?;
            }
        }
        // 2. Billing mode and table throughput, with the kept indexes' throughput.
        let current = self
            .ddb
            .table_meta(&ctx.region, name)
            .ok_or_else(|| ProviderError::NotFound(name.to_string()))?;
        let mode_changes = n.billing_mode != current.billing_mode;
        let tp_changes = n.billing_mode == "PROVISIONED"
            && n.throughput.is_some_and(|tp| tp != current.throughput);
        let index_tp: Vec<GsiUpdate> = if n.billing_mode == "PROVISIONED" {
            kept.iter()
                .filter(|g| {
                    let now = current.gsis.iter().find(|m| m.name == g.index_name);
                    mode_changes || now.and_then(|m| m.throughput) != g.provisioned_throughput
                })
                .map(|g| GsiUpdate {
                    update: Some(GsiThroughputUpdate {
                        index_name: g.index_name.clone(),
                        provisioned_throughput: g.provisioned_throughput,
                    }),
                    ..Default::default()
                })
                .collect()
        } else {
            Vec::new()
        };
        if mode_changes || tp_changes || !index_tp.is_empty() {
            self.update_table(
                ctx,
                UpdateTableInput {
                    billing_mode: mode_changes.then(|| n.billing_mode.clone()),
                    provisioned_throughput: if mode_changes || tp_changes {
                        n.throughput.filter(|_| n.billing_mode == "PROVISIONED")
                    } else {
                        None
                    },
                    global_secondary_index_updates: (!index_tp.is_empty()).then_some(index_tp),
                    ..base()
                },
            )?;
        }
        // 3. New indexes, one per call as DynamoDB requires.
        for g in &n.gsis {
            if kept.iter().any(|k| k.index_name == g.index_name) {
                continue;
            }
            let defs: Vec<AttributeDefinition> = n
                .attribute_definitions
                .iter()
                .filter(|d| {
                    g.key_schema
                        .iter()
                        .any(|k| k.attribute_name == d.attribute_name)
                })
                .cloned()
                .collect();
            self.update_table(
                ctx,
                UpdateTableInput {
                    attribute_definitions: Some(defs),
                    global_secondary_index_updates: Some(vec![GsiUpdate {
                        create: Some(gsi_for_mode(g, &n.billing_mode)),
                        ..Default::default()
                    }]),
                    ..base()
                },
            )?;
        }
        // 4. Stream, encryption, class, deletion protection.
        if o.stream_view_type != n.stream_view_type {
            if current.stream.is_some() {
                self.update_table(
                    ctx,
                    UpdateTableInput {
                        stream_specification: Some(StreamSpecification {
                            stream_enabled: false,
                            stream_view_type: None,
                        }),
                        ..base()
                    },
                )?;
            }
            if let Some(t) = &n.stream_view_type {
                self.update_table(
                    ctx,
                    UpdateTableInput {
                        stream_specification: Some(StreamSpecification {
                            stream_enabled: true,
                            stream_view_type: Some(t.clone()),
                        }),
                        ..base()
                    },
                )?;
            }
        }
        let sse_changes = o.sse != n.sse;
        let class_changes = n.table_class.as_deref().unwrap_or("STANDARD") != current.table_class;
        if sse_changes || class_changes || n.deletion_protection != current.deletion_protection {
            self.update_table(
                ctx,
                UpdateTableInput {
                    sse_specification: sse_changes.then(|| {
                        n.sse.clone().unwrap_or(SseSpecification {
                            enabled: Some(false),
                            ..Default::default()
                        })
                    }),
                    table_class: class_changes
                        .then(|| n.table_class.clone().unwrap_or_else(|| "STANDARD".into())),
                    deletion_protection_enabled: Some(n.deletion_protection),
                    ..base()
                },
            )?;
        }
        // 5. TTL, point-in-time recovery, tags.
        self.apply_ttl(ctx, name, o.ttl.as_ref(), n.ttl.as_ref())?;
        if n.pitr != current.pitr_enabled {
            self.ddb
                .set_point_in_time_recovery(&ctx.region, name, n.pitr)
                .map_err(|e| failed(ctx, "DynamoDb", e))?;
        }
        self.apply_tags(ctx, name, &current.tags, &n.tags)?;
        self.outcome(ctx, name)
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        match self.ddb.delete_table(&ctx.region, physical_id) {
            Ok(_) => Ok(()),
            Err(e) if e.code == "ResourceNotFoundException" => {
                Err(ProviderError::NotFound(physical_id.to_string()))
            }
            Err(e) => Err(failed(ctx, "DynamoDb", e)),
        }
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let Some(meta) = self.ddb.table_meta(&ctx.region, physical_id) else {
            return Ok(None);
        };
        Ok(Some(Observed {
            properties: template_properties(&meta),
            attributes: attributes(&meta),
        }))
    }
}

fn index_json(i: &super::schema::IndexMeta, global: bool) -> Value {
    let mut m = Map::new();
    m.insert("IndexName".into(), json!(i.name));
    m.insert("KeySchema".into(), json!(i.key_schema));
    m.insert("Projection".into(), json!(i.projection));
    if global && let Some(tp) = i.throughput {
        m.insert("ProvisionedThroughput".into(), json!(tp));
    }
    Value::Object(m)
}

/// The live table in the template's shape (drift, import).
fn template_properties(meta: &TableMeta) -> Map<String, Value> {
    let mut p = Map::new();
    p.insert("TableName".into(), json!(meta.name));
    p.insert("KeySchema".into(), json!(meta.key_schema));
    p.insert(
        "AttributeDefinitions".into(),
        json!(meta.attribute_definitions),
    );
    p.insert("BillingMode".into(), json!(meta.billing_mode));
    if meta.billing_mode == "PROVISIONED" {
        p.insert("ProvisionedThroughput".into(), json!(meta.throughput));
    }
    if !meta.gsis.is_empty() {
        let g: Vec<Value> = meta.gsis.iter().map(|i| index_json(i, true)).collect();
        p.insert("GlobalSecondaryIndexes".into(), json!(g));
    }
    if !meta.lsis.is_empty() {
        let l: Vec<Value> = meta.lsis.iter().map(|i| index_json(i, false)).collect();
        p.insert("LocalSecondaryIndexes".into(), json!(l));
    }
    if let Some(s) = &meta.stream {
        p.insert(
            "StreamSpecification".into(),
            json!({"StreamViewType": s.stream_view_type}),
        );
    }
    if let Some(sse) = &meta.sse {
        let mut m = Map::new();
        m.insert("SSEEnabled".into(), json!(sse.enabled.unwrap_or(false)));
        if let Some(t) = &sse.sse_type {
            m.insert("SSEType".into(), json!(t));
        }
        if let Some(k) = &sse.kms_master_key_id {
            m.insert("KMSMasterKeyId".into(), json!(k));
        }
        p.insert("SSESpecification".into(), Value::Object(m));
    }
    p.insert("TableClass".into(), json!(meta.table_class));
    p.insert(
        "DeletionProtectionEnabled".into(),
        json!(meta.deletion_protection),
    );
    if let Some(attr) = &meta.ttl_attribute {
        p.insert(
            "TimeToLiveSpecification".into(),
            json!({"AttributeName": attr, "Enabled": true}),
        );
    }
    p.insert(
        "PointInTimeRecoverySpecification".into(),
        json!({"PointInTimeRecoveryEnabled": meta.pitr_enabled}),
    );
    if !meta.tags.is_empty() {
        p.insert("Tags".into(), json!(meta.tags));
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::test_support::{ctx, services};

    #[tokio::test]
    async fn table_is_created_updated_in_place_and_deleted() {
        let s = services();
        let reg = crate::providers::registry(&s);
        let p = reg.get(TABLE).expect("registered").clone();
        let c = ctx("Orders", TABLE);
        let v1 = json!({
            "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "ProvisionedThroughput": {"ReadCapacityUnits": "2", "WriteCapacityUnits": 2},
            "Tags": [{"Key": "team", "Value": "a"}],
        });
        let out = p.create(&c, &v1).await.expect("create");
        assert!(
            out.physical_id.starts_with("teststack-Orders-"),
            "{}",
            out.physical_id
        );
        assert_eq!(
            out.attributes["Arn"],
            json!(format!(
                "arn:aws:dynamodb:us-east-1:000000000000:table/{}",
                out.physical_id
            ))
        );
        assert!(!out.attributes.contains_key("StreamArn"));
        let v2 = json!({
            "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}, {"AttributeName": "email", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
            "BillingMode": "PAY_PER_REQUEST",
            "GlobalSecondaryIndexes": [{"IndexName": "byEmail", "KeySchema": [{"AttributeName": "email", "KeyType": "HASH"}], "Projection": {"ProjectionType": "ALL"}}],
            "StreamSpecification": {"StreamViewType": "NEW_IMAGE"},
            "TimeToLiveSpecification": {"AttributeName": "exp", "Enabled": true},
            "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": true},
            "Tags": [{"Key": "team", "Value": "b"}],
        });
        let out2 = p
            .update(&c, &out.physical_id, &v1, &v2)
            .await
            .expect("update");
        assert!(out2.attributes.contains_key("StreamArn"));
        let meta = s
            .dynamodb
            .table_meta("us-east-1", &out.physical_id)
            .expect("table");
        assert_eq!(meta.billing_mode, "PAY_PER_REQUEST");
        assert_eq!(meta.gsis.len(), 1);
        assert_eq!(meta.ttl_attribute.as_deref(), Some("exp"));
        assert!(meta.pitr_enabled);
        assert_eq!(
            meta.tags,
            vec![Tag {
                key: "team".into(),
                value: "b".into()
            }]
        );
        let observed = p
            .read(&c, &out.physical_id, &v2)
            .await
            .expect("read")
            .expect("exists");
        assert_eq!(observed.properties["BillingMode"], json!("PAY_PER_REQUEST"));
        assert_eq!(observed.attributes, out2.attributes);
        // Back to provisioned: the index needs its throughput in the same call.
        let mut v3 = v2.clone();
        v3["BillingMode"] = json!("PROVISIONED");
        v3["ProvisionedThroughput"] = json!({"ReadCapacityUnits": 3, "WriteCapacityUnits": 3});
        v3["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"] =
            json!({"ReadCapacityUnits": 1, "WriteCapacityUnits": 1});
        p.update(&c, &out.physical_id, &v2, &v3)
            .await
            .expect("back to provisioned");
        let meta = s
            .dynamodb
            .table_meta("us-east-1", &out.physical_id)
            .expect("table");
        assert_eq!(meta.throughput.read_capacity_units, 3);
        p.delete(&c, &out.physical_id, &v3).await.expect("delete");
        assert!(matches!(
            p.delete(&c, &out.physical_id, &v3).await,
            Err(ProviderError::NotFound(_))
        ));
        assert_eq!(p.read(&c, &out.physical_id, &v3).await.expect("read"), None);
        let e = p
            .create(
                &c,
                &json!({"KeySchema": [], "KinesisStreamSpecification": {}}),
            )
            .await
            .expect_err("unsupported");
        assert!(e.to_string().contains("KinesisStreamSpecification"), "{e}");
    }
}
