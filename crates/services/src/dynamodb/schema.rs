//! A table's definition: the CreateTable/UpdateTable input shapes (deserialized straight from the
//! wire JSON, so the typed operations and the wire adapter share them), their validation with
//! DynamoDB's messages, and the persisted [`TableMeta`] with its DescribeTable rendering.

use super::errors::{invalid_param, validation};
use super::value::{AttrValue, Item, KeyVal, PrimaryKey};
use cumulo_wire::AwsError;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct KeySchemaElement {
    pub attribute_name: String,
    pub key_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct AttributeDefinition {
    pub attribute_name: String,
    pub attribute_type: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Projection {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub projection_type: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_key_attributes: Option<Vec<String>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Throughput {
    pub read_capacity_units: i64,
    pub write_capacity_units: i64,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct IndexInput {
    pub index_name: String,
    pub key_schema: Vec<KeySchemaElement>,
    #[serde(default)]
    pub projection: Projection,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provisioned_throughput: Option<Throughput>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct StreamSpecification {
    pub stream_enabled: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream_view_type: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct SseSpecification {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    #[serde(default, rename = "SSEType", skip_serializing_if = "Option::is_none")]
    pub sse_type: Option<String>,
    #[serde(
        default,
        rename = "KMSMasterKeyId",
        skip_serializing_if = "Option::is_none"
    )]
    pub kms_master_key_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct Tag {
    pub key: String,
    pub value: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct CreateTableInput {
    pub table_name: String,
    #[serde(default)]
    pub attribute_definitions: Vec<AttributeDefinition>,
    #[serde(default)]
    pub key_schema: Vec<KeySchemaElement>,
    #[serde(default)]
    pub local_secondary_indexes: Option<Vec<IndexInput>>,
    #[serde(default)]
    pub global_secondary_indexes: Option<Vec<IndexInput>>,
    #[serde(default)]
    pub billing_mode: Option<String>,
    #[serde(default)]
    pub provisioned_throughput: Option<Throughput>,
    #[serde(default)]
    pub stream_specification: Option<StreamSpecification>,
    #[serde(default, rename = "SSESpecification")]
    pub sse_specification: Option<SseSpecification>,
    #[serde(default)]
    pub tags: Option<Vec<Tag>>,
    #[serde(default)]
    pub table_class: Option<String>,
    #[serde(default)]
    pub deletion_protection_enabled: Option<bool>,
}

/// One index as stored.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexMeta {
    pub name: String,
    pub key_schema: Vec<KeySchemaElement>,
    pub projection: Projection,
    pub throughput: Option<Throughput>,
}

impl IndexMeta {
    pub fn hash_key(&self) -> &str {
        self.key_schema
            .first()
            .map(|k| k.attribute_name.as_str())
            .unwrap_or_default()
    }

    pub fn range_key(&self) -> Option<&str> {
        self.key_schema.get(1).map(|k| k.attribute_name.as_str())
    }

    pub fn projection_type(&self) -> &str {
        self.projection.projection_type.as_deref().unwrap_or("ALL")
    }
}

/// The persisted definition of a table.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TableMeta {
    pub name: String,
    pub region: String,
    pub account_id: String,
    pub table_id: String,
    pub created: f64,
    pub attribute_definitions: Vec<AttributeDefinition>,
    pub key_schema: Vec<KeySchemaElement>,
    pub billing_mode: String,
    pub throughput: Throughput,
    pub last_increase: Option<f64>,
    pub last_decrease: Option<f64>,
    pub pay_per_request_since: Option<f64>,
    pub gsis: Vec<IndexMeta>,
    pub lsis: Vec<IndexMeta>,
    pub stream: Option<StreamSpecification>,
    /// The label of the latest stream (kept after a stream is disabled, as DynamoDB does).
    pub stream_label: Option<String>,
    pub sse: Option<SseSpecification>,
    pub tags: Vec<Tag>,
    pub table_class: String,
    pub deletion_protection: bool,
    pub ttl_attribute: Option<String>,
    pub pitr_enabled: bool,
}

impl TableMeta {
    pub fn arn(&self) -> String {
        table_arn(&self.region, &self.account_id, &self.name)
    }

    pub fn hash_key(&self) -> &str {
        self.key_schema
            .first()
            .map(|k| k.attribute_name.as_str())
            .unwrap_or_default()
    }

    pub fn range_key(&self) -> Option<&str> {
        self.key_schema.get(1).map(|k| k.attribute_name.as_str())
    }

    pub fn attr_type(&self, name: &str) -> &str {
        self.attribute_definitions
            .iter()
            .find(|d| d.attribute_name == name)
            .map(|d| d.attribute_type.as_str())
            .unwrap_or("S")
    }

    pub fn index(&self, name: &str) -> Option<(&IndexMeta, bool)> {
        self.gsis
            .iter()
            .find(|i| i.name == name)
            .map(|i| (i, true))
            .or_else(|| {
                self.lsis
                    .iter()
                    .find(|i| i.name == name)
                    .map(|i| (i, false))
            })
    }

    pub fn stream_arn(&self) -> Option<String> {
        self.stream_label
            .as_ref()
            .map(|l| format!("{}/stream/{l}", self.arn()))
    }

    /// Extracts and validates an item's primary key, with DynamoDB's messages for a missing key
    /// attribute, a wrong type and an empty value.
    pub fn item_key(&self, item: &Item) -> Result<PrimaryKey, AwsError> {
        let hash = self.key_value(item, self.hash_key(), true)?;
        let range = match self.range_key() {
            Some(r) => Some(self.key_value(item, r, false)?),
            None => None,
        };
        Ok((hash, range))
    }

    fn key_value(&self, item: &Item, name: &str, hash: bool) -> Result<KeyVal, AwsError> {
        let v = item
            .get(name)
            .ok_or_else(|| invalid_param(format!("Missing the key {name} in the item")))?;
        let want = self.attr_type(name);
        if v.type_name() != want {
            return Err(invalid_param(format!(
                "Type mismatch for key {name} expected: {want} actual: {}",
                v.type_name()
            )));
        }
        check_key_value(v, name, hash)
    }

    /// Validates a `Key` parameter: exactly the key attributes, of the right types.
    pub fn key_param(&self, key: &Item) -> Result<PrimaryKey, AwsError> {
        let expected = 1 + usize::from(self.range_key().is_some());
        if key.len() != expected
            || !key.contains_key(self.hash_key())
            || self.range_key().is_some_and(|r| !key.contains_key(r))
        {
            return Err(validation(
                "The provided key element does not match the schema",
            ));
        }
        for (name, v) in key {
            if v.type_name() != self.attr_type(name) {
                return Err(validation(
                    "The provided key element does not match the schema",
                ));
            }
        }
        self.item_key(key)
    }

    /// The key attributes of an item as an item (`LastEvaluatedKey`, `KEYS_ONLY`).
    pub fn key_of(&self, item: &Item) -> Item {
        self.key_schema
            .iter()
            .filter_map(|k| {
                item.get(&k.attribute_name)
                    .map(|v| (k.attribute_name.clone(), v.clone()))
            })
            .collect()
    }

    /// The index's key of an item, when the item has every index key attribute (indexes are
    /// sparse); a key attribute of the wrong type is refused as DynamoDB refuses it.
    pub fn index_key(
        &self,
        index: &IndexMeta,
        item: &Item,
    ) -> Result<Option<(KeyVal, Option<KeyVal>)>, AwsError> {
        let mut parts = Vec::new();
        for k in &index.key_schema {
            let Some(v) = item.get(&k.attribute_name) else {
                return Ok(None);
            };
            let want = self.attr_type(&k.attribute_name);
            if v.type_name() != want {
                return Err(invalid_param(format!(
                    "Type mismatch for Index Key {} Expected: {want} Actual: {} IndexName: {}",
                    k.attribute_name,
                    v.type_name(),
                    index.name
                )));
            }
            if matches!(v, AttrValue::S(s) if s.is_empty())
                || matches!(v, AttrValue::B(b) if b.is_empty())
            {
                return Err(validation(format!(
                    "One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty {} value. IndexName: {}, IndexKey: {}",
                    if v.type_name() == "S" {
                        "string"
                    } else {
                        "binary"
                    },
                    index.name,
                    k.attribute_name
                )));
            }
            parts.push(KeyVal::from_attr(v));
        }
        let mut it = parts.into_iter();
        match it.next().flatten() {
            Some(h) => Ok(Some((h, it.next().flatten()))),
            None => Ok(None),
        }
    }

    /// DescribeTable's `Table`.
    pub fn describe(&self, status: &str, stats: &TableStats) -> Value {
        let mut t = Map::new();
        t.insert(
            "AttributeDefinitions".into(),
            json!(self.attribute_definitions),
        );
        t.insert("TableName".into(), json!(self.name));
        t.insert("KeySchema".into(), json!(self.key_schema));
        t.insert("TableStatus".into(), json!(status));
        t.insert("CreationDateTime".into(), json!(self.created));
        t.insert(
            "ProvisionedThroughput".into(),
            throughput_description(&self.throughput, self.last_increase, self.last_decrease),
        );
        t.insert("TableSizeBytes".into(), json!(stats.size));
        t.insert("ItemCount".into(), json!(stats.count));
        t.insert("TableArn".into(), json!(self.arn()));
        t.insert("TableId".into(), json!(self.table_id));
        let mut billing = Map::new();
        billing.insert("BillingMode".into(), json!(self.billing_mode));
        if let Some(at) = self.pay_per_request_since {
            billing.insert("LastUpdateToPayPerRequestDateTime".into(), json!(at));
        }
        t.insert("BillingModeSummary".into(), Value::Object(billing));
        let index_json = |i: &IndexMeta, global: bool| {
            let (count, size) = stats
                .indexes
                .iter()
                .find(|(n, _, _)| *n == i.name)
                .map(|(_, c, s)| (*c, *s))
                .unwrap_or((0, 0));
            let mut m = Map::new();
            m.insert("IndexName".into(), json!(i.name));
            m.insert("KeySchema".into(), json!(i.key_schema));
            m.insert("Projection".into(), json!(i.projection));
            if global {
                m.insert("IndexStatus".into(), json!("ACTIVE"));
                let tp = i.throughput.unwrap_or_default();
                m.insert(
                    "ProvisionedThroughput".into(),
                    throughput_description(&tp, None, None),
                );
            }
            m.insert("IndexSizeBytes".into(), json!(size));
            m.insert("ItemCount".into(), json!(count));
            m.insert(
                "IndexArn".into(),
                json!(format!("{}/index/{}", self.arn(), i.name)),
            );
            Value::Object(m)
        };
        if !self.lsis.is_empty() {
            let v: Vec<Value> = self.lsis.iter().map(|i| index_json(i, false)).collect();
            t.insert("LocalSecondaryIndexes".into(), json!(v));
        }
        if !self.gsis.is_empty() {
            let v: Vec<Value> = self.gsis.iter().map(|i| index_json(i, true)).collect();
            t.insert("GlobalSecondaryIndexes".into(), json!(v));
        }
        if let Some(s) = &self.stream {
            t.insert("StreamSpecification".into(), json!(s));
        }
        if let (Some(label), Some(arn)) = (&self.stream_label, self.stream_arn()) {
            t.insert("LatestStreamLabel".into(), json!(label));
            t.insert("LatestStreamArn".into(), json!(arn));
        }
        if let Some(sse) = &self.sse
            && sse.enabled == Some(true)
        {
            let key = sse.kms_master_key_id.clone().unwrap_or_else(|| {
                format!(
                    "arn:aws:kms:{}:{}:key/aws-dynamodb-managed",
                    self.region, self.account_id
                )
            });
            let key = if key.starts_with("arn:") {
                key
            } else {
                format!("arn:aws:kms:{}:{}:key/{key}", self.region, self.account_id)
            };
            t.insert(
                "SSEDescription".into(),
                json!({"Status": "ENABLED", "SSEType": "KMS", "KMSMasterKeyArn": key}),
            );
        }
        t.insert(
            "TableClassSummary".into(),
            json!({"TableClass": self.table_class}),
        );
        t.insert(
            "DeletionProtectionEnabled".into(),
            json!(self.deletion_protection),
        );
        Value::Object(t)
    }
}

/// Live counts for DescribeTable: the table's, then each index's `(name, count, bytes)`.
#[derive(Debug, Default)]
pub struct TableStats {
    pub count: u64,
    pub size: u64,
    pub indexes: Vec<(String, u64, u64)>,
}

fn throughput_description(tp: &Throughput, inc: Option<f64>, dec: Option<f64>) -> Value {
    let mut m = Map::new();
    if let Some(t) = inc {
        m.insert("LastIncreaseDateTime".into(), json!(t));
    }
    if let Some(t) = dec {
        m.insert("LastDecreaseDateTime".into(), json!(t));
    }
    m.insert("NumberOfDecreasesToday".into(), json!(0));
    m.insert("ReadCapacityUnits".into(), json!(tp.read_capacity_units));
    m.insert("WriteCapacityUnits".into(), json!(tp.write_capacity_units));
    Value::Object(m)
}

pub fn table_arn(region: &str, account_id: &str, name: &str) -> String {
    format!("arn:aws:dynamodb:{region}:{account_id}:table/{name}")
}

/// A key attribute's value must be non-empty.
pub fn check_key_value(v: &AttrValue, name: &str, hash: bool) -> Result<KeyVal, AwsError> {
    let empty = matches!(v, AttrValue::S(s) if s.is_empty())
        || matches!(v, AttrValue::B(b) if b.is_empty());
    if empty {
        return Err(validation(format!(
            "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty {} value. Key: {name}",
            if v.type_name() == "S" {
                "string"
            } else {
                "binary"
            }
        )));
    }
    let too_long = match v {
        AttrValue::S(s) => s.len() > if hash { 2048 } else { 1024 },
        AttrValue::B(b) => b.len() > if hash { 2048 } else { 1024 },
        _ => false,
    };
    if too_long {
        return Err(if hash {
            invalid_param("Size of hashkey has exceeded the maximum size limit of2048 bytes")
        } else {
            invalid_param(
                "Aggregated size of all range keys has exceeded the size limit of 1024 bytes",
            )
        });
    }
    KeyVal::from_attr(v)
        .ok_or_else(|| validation("The provided key element does not match the schema"))
}

/// The `1 validation error detected` message of a constraint on a request member.
pub fn constraint(value: &str, member: &str, rule: &str) -> AwsError {
    validation(format!(
        "1 validation error detected: Value '{value}' at '{member}' failed to satisfy constraint: {rule}"
    ))
}

pub fn check_table_name(name: &str, member: &str) -> Result<(), AwsError> {
    if name.len() < 3 {
        return Err(constraint(
            name,
            member,
            "Member must have length greater than or equal to 3",
        ));
    }
    if name.len() > 255 {
        return Err(constraint(
            name,
            member,
            "Member must have length less than or equal to 255",
        ));
    }
    if !name
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.')
    {
        return Err(constraint(
            name,
            member,
            "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+",
        ));
    }
    Ok(())
}

/// KeySchema rules shared by the table and its indexes.
pub fn check_key_schema(ks: &[KeySchemaElement], member: &str) -> Result<(), AwsError> {
    if ks.is_empty() || ks.len() > 2 {
        let rule = if ks.is_empty() {
            "Member must have length greater than or equal to 1"
        } else {
            "Member must have length less than or equal to 2"
        };
        return Err(constraint(&format!("{ks:?}"), member, rule));
    }
    for k in ks {
        if k.key_type != "HASH" && k.key_type != "RANGE" {
            return Err(constraint(
                &k.key_type,
                &format!("{member}.member.keyType"),
                "Member must satisfy enum value set: [HASH, RANGE]",
            ));
        }
    }
    if ks[0].key_type != "HASH" {
        return Err(validation(
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
        ));
    }
    if let Some(second) = ks.get(1) {
        if second.key_type != "RANGE" {
            return Err(validation(
                "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type",
            ));
        }
        if second.attribute_name == ks[0].attribute_name {
            return Err(validation(
                "Both the Hash Key and the Range Key element in the KeySchema have the same name",
            ));
        }
    }
    Ok(())
}

/// ProvisionedThroughput's allowed range.
pub fn check_throughput(tp: &Throughput) -> Result<(), AwsError> {
    for (v, member) in [
        (
            tp.read_capacity_units,
            "provisionedThroughput.readCapacityUnits",
        ),
        (
            tp.write_capacity_units,
            "provisionedThroughput.writeCapacityUnits",
        ),
    ] {
        if v < 1 {
            return Err(constraint(
                &v.to_string(),
                member,
                "Member must have value greater than or equal to 1",
            ));
        }
    }
    Ok(())
}

pub fn check_projection(p: &Projection, index: &str) -> Result<(), AwsError> {
    match p.projection_type.as_deref().unwrap_or("ALL") {
        "ALL" | "KEYS_ONLY" => {
            if p.non_key_attributes.is_some() {
                return Err(invalid_param(format!(
                    "ProjectionType is {}, but NonKeyAttributes is specified",
                    p.projection_type.as_deref().unwrap_or("ALL")
                )));
            }
        }
        "INCLUDE" => {
            if p.non_key_attributes.as_ref().is_none_or(Vec::is_empty) {
                return Err(invalid_param(format!(
                    "NonKeyAttributes must not be empty for index: {index}"
                )));
            }
        }
        other => {
            return Err(constraint(
                other,
                "projection.projectionType",
                "Member must satisfy enum value set: [INCLUDE, ALL, KEYS_ONLY]",
            ));
        }
    }
    Ok(())
}

pub fn check_stream(s: &StreamSpecification) -> Result<(), AwsError> {
    match (s.stream_enabled, s.stream_view_type.as_deref()) {
        (true, None) => Err(invalid_param(
            "You must specify a StreamViewType when enabling a stream",
        )),
        (false, Some(_)) => Err(invalid_param(
            "You cannot specify a StreamViewType when disabling a stream",
        )),
        (_, Some(t))
            if !["NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES", "KEYS_ONLY"].contains(&t) =>
        {
            Err(constraint(
                t,
                "streamSpecification.streamViewType",
                "Member must satisfy enum value set: [NEW_IMAGE, OLD_IMAGE, KEYS_ONLY, NEW_AND_OLD_IMAGES]",
            ))
        }
        _ => Ok(()),
    }
}
