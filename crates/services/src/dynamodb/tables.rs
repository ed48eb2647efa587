//! Table operations: CreateTable, DescribeTable, ListTables, UpdateTable, DeleteTable, TTL,
//! continuous backups (the PITR flag), tags. Tables are usable as soon as they are created
//! (DynamoDB answers CREATING and turns ACTIVE shortly after; cumulo's next DescribeTable already
//! says ACTIVE, so waiters return on their first poll).

use super::errors::{invalid_param, resource_in_use, table_not_found_named, validation};
use super::schema::*;
use super::state::{self, Table, TableKey};
use super::{DynamoDbService, now_secs};
use cumulo_wire::AwsError;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeSet;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct UpdateTableInput {
    pub table_name: String,
    #[serde(default)]
    pub attribute_definitions: Option<Vec<AttributeDefinition>>,
    #[serde(default)]
    pub billing_mode: Option<String>,
    #[serde(default)]
    pub provisioned_throughput: Option<Throughput>,
    #[serde(default)]
    pub global_secondary_index_updates: Option<Vec<GsiUpdate>>,
    #[serde(default)]
    pub stream_specification: Option<StreamSpecification>,
    #[serde(default, rename = "SSESpecification")]
    pub sse_specification: Option<SseSpecification>,
    #[serde(default)]
    pub table_class: Option<String>,
    #[serde(default)]
    pub deletion_protection_enabled: Option<bool>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GsiUpdate {
    #[serde(default)]
    pub create: Option<IndexInput>,
    #[serde(default)]
    pub update: Option<GsiThroughputUpdate>,
    #[serde(default)]
    pub delete: Option<GsiDelete>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GsiThroughputUpdate {
    pub index_name: String,
    #[serde(default)]
    pub provisioned_throughput: Option<Throughput>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GsiDelete {
    pub index_name: String,
}

/// A table's TTL setting, as DescribeTimeToLive reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TtlDescription {
    pub enabled: bool,
    pub attribute_name: Option<String>,
}

const MAX_GSIS: usize = 20;
const MAX_LSIS: usize = 5;

fn stream_label() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.3f")
        .to_string()
}

/// Every key attribute of the table and its indexes, in order of first use.
fn key_attributes(key_schema: &[KeySchemaElement], indexes: &[&IndexMeta]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for k in key_schema
        .iter()
        .chain(indexes.iter().flat_map(|i| i.key_schema.iter()))
    {
        if !out.contains(&k.attribute_name) {
            out.push(k.attribute_name.clone());
        }
    }
    out
}

fn check_definitions(defs: &[AttributeDefinition], keys: &[String]) -> Result<(), AwsError> {
    let mut seen = BTreeSet::new();
    for d in defs {
        if !["S", "N", "B"].contains(&d.attribute_type.as_str()) {
            return Err(constraint(
                &d.attribute_type,
                "attributeDefinitions.member.attributeType",
                "Member must satisfy enum value set: [B, N, S]",
            ));
        }
        if !seen.insert(d.attribute_name.as_str()) {
            return Err(invalid_param(format!(
                "Cannot have two attributes with the same name: {}",
                d.attribute_name
            )));
        }
    }
    let missing = keys.iter().any(|k| !seen.contains(k.as_str()));
    if missing {
        let defined: Vec<&str> = defs.iter().map(|d| d.attribute_name.as_str()).collect();
        return Err(invalid_param(format!(
            "Some index key attributes are not defined in AttributeDefinitions. Keys: [{}], AttributeDefinitions: [{}]",
            keys.join(", "),
            defined.join(", ")
        )));
    }
    if defs.len() != keys.len() {
        return Err(invalid_param(
            "Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions",
        ));
    }
    Ok(())
}

fn check_billing(mode: &str, throughput: Option<&Throughput>) -> Result<Throughput, AwsError> {
    match mode {
        "PROVISIONED" => {
            let tp = throughput.ok_or_else(|| {
                invalid_param(
                    "ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED",
                )
            })?;
            check_throughput(tp)?;
            Ok(*tp)
        }
        "PAY_PER_REQUEST" => {
            if throughput.is_some() {
                return Err(invalid_param(
                    "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
                ));
            }
            Ok(Throughput::default())
        }
        other => Err(constraint(
            other,
            "billingMode",
            "Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]",
        )),
    }
}

fn gsi_meta(i: &IndexInput, mode: &str) -> Result<IndexMeta, AwsError> {
    check_index_name(&i.index_name)?;
    check_key_schema(&i.key_schema, "globalSecondaryIndexes.member.keySchema")?;
    check_projection(&i.projection, &i.index_name)?;
    let throughput = match (mode, &i.provisioned_throughput) {
        ("PROVISIONED", Some(tp)) => {
            check_throughput(tp)?;
            Some(*tp)
        }
        ("PROVISIONED", None) => {
            return Err(invalid_param(format!(
                "ProvisionedThroughput must be specified for index: {}",
                i.index_name
            )));
        }
        (_, Some(_)) => {
            return Err(invalid_param(format!(
                "ProvisionedThroughput should not be specified for index: {} when BillingMode is PAY_PER_REQUEST",
                i.index_name
            )));
        }
        _ => None,
    };
    Ok(IndexMeta {
        name: i.index_name.clone(),
        key_schema: i.key_schema.clone(),
        projection: normalized_projection(&i.projection),
        throughput,
    })
}

fn normalized_projection(p: &Projection) -> Projection {
    Projection {
        projection_type: Some(p.projection_type.clone().unwrap_or_else(|| "ALL".into())),
        non_key_attributes: p.non_key_attributes.clone(),
    }
}

fn check_index_name(name: &str) -> Result<(), AwsError> {
    if name.len() < 3
        || name.len() > 255
        || !name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'.')
    {
        return Err(constraint(
            name,
            "indexName",
            "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+ and have length between 3 and 255",
        ));
    }
    Ok(())
}

fn check_tags(tags: &[Tag]) -> Result<(), AwsError> {
    for t in tags {
        if t.key.is_empty() || t.key.chars().count() > 128 {
            return Err(constraint(
                &t.key,
                "tags.member.key",
                "Member must have length less than or equal to 128",
            ));
        }
        if t.value.chars().count() > 256 {
            return Err(constraint(
                &t.value,
                "tags.member.value",
                "Member must have length less than or equal to 256",
            ));
        }
    }
    Ok(())
}

impl DynamoDbService {
    fn describe_locked(t: &Table, status: &str) -> Value {
        let mut stats = TableStats {
            count: t.items.len() as u64,
            size: t.size,
            indexes: Vec::new(),
        };
        for i in t.meta.gsis.iter().chain(t.meta.lsis.iter()) {
            let (c, s) = t.index_stats(&i.name);
            stats.indexes.push((i.name.clone(), c, s));
        }
        t.meta.describe(status, &stats)
    }

    fn save_meta(&self, meta: &TableMeta) -> Result<(), AwsError> {
        self.store
            .write(|tx| state::save_table(tx, meta))
            .map_err(|e| AwsError::internal(format!("dynamodb: cannot store table: {e}")))
    }

    pub fn create_table(
        &self,
        region: &str,
        account_id: &str,
        input: &CreateTableInput,
    ) -> Result<Value, AwsError> {
        check_table_name(&input.table_name, "tableName")?;
        check_key_schema(&input.key_schema, "keySchema")?;
        let mode = input
            .billing_mode
            .clone()
            .unwrap_or_else(|| "PROVISIONED".into());
        let throughput = check_billing(&mode, input.provisioned_throughput.as_ref())?;
        let gsis_in = input.global_secondary_indexes.clone().unwrap_or_default();
        let lsis_in = input.local_secondary_indexes.clone().unwrap_or_default();
        if input
            .global_secondary_indexes
            .as_ref()
            .is_some_and(Vec::is_empty)
        {
            return Err(invalid_param("List of GlobalSecondaryIndexes is empty"));
        }
        if input
            .local_secondary_indexes
            .as_ref()
            .is_some_and(Vec::is_empty)
        {
            return Err(invalid_param("List of LocalSecondaryIndexes is empty"));
        }
        if gsis_in.len() > MAX_GSIS {
            return Err(validation(format!(
                "One or more parameter values were invalid: GlobalSecondaryIndex count exceeds the per-table limit of {MAX_GSIS}"
            )));
        }
        if lsis_in.len() > MAX_LSIS {
            return Err(validation(format!(
                "One or more parameter values were invalid: Number of LocalSecondaryIndexes exceeds per-table limit of {MAX_LSIS}"
            )));
        }
        let mut gsis = Vec::new();
        for i in &gsis_in {
            gsis.push(gsi_meta(i, &mode)?);
        }
        let hash = input.key_schema[0].attribute_name.clone();
        let mut lsis = Vec::new();
        for i in &lsis_in {
            check_index_name(&i.index_name)?;
            check_key_schema(&i.key_schema, "localSecondaryIndexes.member.keySchema")?;
            check_projection(&i.projection, &i.index_name)?;
            if input.key_schema.len() < 2 {
                return Err(invalid_param(
                    "Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex",
                ));
            }
            if i.key_schema.len() < 2 {
                return Err(invalid_param(format!(
                    "Index KeySchema does not have a range key for index: {}",
                    i.index_name
                )));
            }
            if i.key_schema[0].attribute_name != hash {
                return Err(invalid_param(format!(
                    "Index KeySchema does not have the same leading hash key as table KeySchema for index: {}. index hash key: {}, table hash key: {hash}",
                    i.index_name, i.key_schema[0].attribute_name
                )));
            }
            if i.provisioned_throughput.is_some() {
                return Err(validation(
                    "One or more parameter values were invalid: ProvisionedThroughput should not be specified for a LocalSecondaryIndex",
                ));
            }
            lsis.push(IndexMeta {
                name: i.index_name.clone(),
                key_schema: i.key_schema.clone(),
                projection: normalized_projection(&i.projection),
                throughput: None,
            });
        }
        let mut names = BTreeSet::new();
        for i in gsis.iter().chain(lsis.iter()) {
            if !names.insert(i.name.clone()) {
                return Err(invalid_param(format!("Duplicate index name: {}", i.name)));
            }
        }
        let all: Vec<&IndexMeta> = gsis.iter().chain(lsis.iter()).collect();
        check_definitions(
            &input.attribute_definitions,
            &key_attributes(&input.key_schema, &all),
        )?;
        if let Some(s) = &input.stream_specification {
            check_stream(s)?;
        }
        let tags = input.tags.clone().unwrap_or_default();
        check_tags(&tags)?;
        let table_class = input
            .table_class
            .clone()
            .unwrap_or_else(|| "STANDARD".into());
        check_table_class(&table_class)?;
        let now = now_secs();
        let stream = input
            .stream_specification
            .clone()
            .filter(|s| s.stream_enabled);
        let meta = TableMeta {
            name: input.table_name.clone(),
            region: region.to_string(),
            account_id: account_id.to_string(),
            table_id: uuid::Uuid::new_v4().to_string(),
            created: now,
            attribute_definitions: input.attribute_definitions.clone(),
            key_schema: input.key_schema.clone(),
            pay_per_request_since: (mode == "PAY_PER_REQUEST").then_some(now),
            billing_mode: mode,
            throughput,
            last_increase: None,
            last_decrease: None,
            gsis,
            lsis,
            stream_label: stream.as_ref().map(|_| stream_label()),
            stream,
            sse: input
                .sse_specification
                .clone()
                .filter(|s| s.enabled == Some(true)),
            tags,
            table_class,
            deletion_protection: input.deletion_protection_enabled.unwrap_or(false),
            ttl_attribute: None,
            pitr_enabled: false,
        };
        let mut tables = self.lock();
        let key: TableKey = (region.to_string(), input.table_name.clone());
        if tables.contains_key(&key) {
            return Err(resource_in_use(format!(
                "Table already exists: {}",
                input.table_name
            )));
        }
        self.save_meta(&meta)?;
        let t = Table::new(meta);
        let desc = Self::describe_locked(&t, "CREATING");
        tables.insert(key, t);
        Ok(desc)
    }

    pub fn describe_table(&self, region: &str, name: &str) -> Result<Value, AwsError> {
        let tables = self.lock();
        let t = tables
            .get(&(region.to_string(), name.to_string()))
            .ok_or_else(|| table_not_found_named(name))?;
        Ok(Self::describe_locked(t, "ACTIVE"))
    }

    /// The table's definition (for providers reading a table back).
    pub fn table_meta(&self, region: &str, name: &str) -> Option<TableMeta> {
        self.lock()
            .get(&(region.to_string(), name.to_string()))
            .map(|t| t.meta.clone())
    }

    /// One page of table names in order, and the name to continue after when there are more.
    pub fn list_tables(
        &self,
        region: &str,
        start_after: Option<&str>,
        limit: Option<i64>,
    ) -> Result<(Vec<String>, Option<String>), AwsError> {
        let limit = match limit {
            None => 100,
            Some(l) if (1..=100).contains(&l) => l as usize,
            Some(l) => {
                return Err(constraint(
                    &l.to_string(),
                    "limit",
                    if l < 1 {
                        "Member must have value greater than or equal to 1"
                    } else {
                        "Member must have value less than or equal to 100"
                    },
                ));
            }
        };
        let tables = self.lock();
        let mut names: Vec<&String> = tables
            .keys()
            .filter(|(r, _)| r == region)
            .map(|(_, n)| n)
            .filter(|n| start_after.is_none_or(|s| n.as_str() > s))
            .collect();
        names.sort();
        let more = names.len() > limit;
        let page: Vec<String> = names.into_iter().take(limit).cloned().collect();
        let last = if more { page.last().cloned() } else { None };
        Ok((page, last))
    }

    pub fn delete_table(&self, region: &str, name: &str) -> Result<Value, AwsError> {
        let mut tables = self.lock();
        let key = (region.to_string(), name.to_string());
        let t = tables
            .get(&key)
            .ok_or_else(|| table_not_found_named(name))?;
        if t.meta.deletion_protection {
            return Err(validation(
                "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.",
            ));
        }
        let desc = Self::describe_locked(t, "DELETING");
        self.store
            .write(|tx| state::delete_table(tx, region, name))
            .map_err(|e| AwsError::internal(format!("dynamodb: cannot delete table: {e}")))?;
        tables.remove(&key);
        Ok(desc)
    }

    pub fn update_table(&self, region: &str, input: &UpdateTableInput) -> Result<Value, AwsError> {
        let mut tables = self.lock();
        let key = (region.to_string(), input.table_name.clone());
        let t = tables
            .get_mut(&key)
            .ok_or_else(|| table_not_found_named(&input.table_name))?;
        let mut meta = t.meta.clone();
        let nothing = input.billing_mode.is_none()
            && input.provisioned_throughput.is_none()
            && input.global_secondary_index_updates.is_none()
            && input.stream_specification.is_none()
            && input.sse_specification.is_none()
            && input.table_class.is_none()
            && input.deletion_protection_enabled.is_none();
        if nothing {
            return Err(validation(
                "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates or SSESpecification or ReplicaUpdates is required",
            ));
        }
        let now = now_secs();
        let mode = input
            .billing_mode
            .clone()
            .unwrap_or_else(|| meta.billing_mode.clone());
        let switching = mode != meta.billing_mode;
        match mode.as_str() {
            "PAY_PER_REQUEST" => {
                if input.provisioned_throughput.is_some() {
                    return Err(invalid_param(
                        "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
                    ));
                }
                if switching {
                    meta.throughput = Throughput::default();
                    meta.pay_per_request_since = Some(now);
                    for g in &mut meta.gsis {
                        g.throughput = None;
                    }
                }
            }
            "PROVISIONED" => {
                if switching && input.provisioned_throughput.is_none() {
                    return Err(invalid_param(
                        "ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED",
                    ));
                }
                if let Some(tp) = &input.provisioned_throughput {
                    check_throughput(tp)?;
                    if !switching && *tp == meta.throughput {
                        return Err(validation(format!(
                            "The provisioned throughput for the table will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned for the table: {}. Requested ReadCapacityUnits: {}. Current WriteCapacityUnits provisioned for the table: {}. Requested WriteCapacityUnits: {}. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits.",
                            meta.throughput.read_capacity_units,
                            tp.read_capacity_units,
                            meta.throughput.write_capacity_units,
                            tp.write_capacity_units
                        )));
                    }
                    let up = tp.read_capacity_units > meta.throughput.read_capacity_units
                        || tp.write_capacity_units > meta.throughput.write_capacity_units;
                    if up {
                        meta.last_increase = Some(now);
                    } else {
                        meta.last_decrease = Some(now);
                    }
                    meta.throughput = *tp;
                }
            }
            other => {
                return Err(constraint(
                    other,
                    "billingMode",
                    "Member must satisfy enum value set: [PROVISIONED, PAY_PER_REQUEST]",
                ));
            }
        }
        meta.billing_mode = mode.clone();
        let mut defs = meta.attribute_definitions.clone();
        for d in input.attribute_definitions.iter().flatten() {
            if !["S", "N", "B"].contains(&d.attribute_type.as_str()) {
                return Err(constraint(
                    &d.attribute_type,
                    "attributeDefinitions.member.attributeType",
                    "Member must satisfy enum value set: [B, N, S]",
                ));
            }
            match defs
                .iter_mut()
                .find(|x| x.attribute_name == d.attribute_name)
            {
                Some(x) if x.attribute_type != d.attribute_type => {
                    return Err(invalid_param(format!(
                        "Cannot change the type of an attribute that is part of an existing key schema: {}",
                        d.attribute_name
                    )));
                }
                Some(_) => {}
                None => defs.push(d.clone()),
            }
        }
        let mut indexes_changed = false;
        for u in input.global_secondary_index_updates.iter().flatten() {
            let actions = usize::from(u.create.is_some())
                + usize::from(u.update.is_some())
                + usize::from(u.delete.is_some());
            if actions != 1 {
                return Err(validation(
                    "One or more parameter values were invalid: One of GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Update or GlobalSecondaryIndexUpdate.Delete must be specified",
                ));
            }
            if let Some(c) = &u.create {
                if meta.index(&c.index_name).is_some() {
                    return Err(validation(format!(
                        "One or more parameter values were invalid: Index with name {} already exists",
                        c.index_name
                    )));
                }
                if meta.gsis.len() >= MAX_GSIS {
                    return Err(validation(format!(
                        "One or more parameter values were invalid: GlobalSecondaryIndex count exceeds the per-table limit of {MAX_GSIS}"
                    )));
                }
                let g = gsi_meta(c, &mode)?;
                for k in &g.key_schema {
                    if !defs.iter().any(|d| d.attribute_name == k.attribute_name) {
                        let defined: Vec<&str> =
                            defs.iter().map(|d| d.attribute_name.as_str()).collect();
                        let keys: Vec<&str> = g
                            .key_schema
                            .iter()
                            .map(|k| k.attribute_name.as_str())
                            .collect();
                        return Err(invalid_param(format!(
                            "Some index key attributes are not defined in AttributeDefinitions. Keys: [{}], AttributeDefinitions: [{}]",
                            keys.join(", "),
                            defined.join(", ")
                        )));
                    }
                }
                meta.gsis.push(g);
                indexes_changed = true;
            }
            if let Some(up) = &u.update {
                let g = meta
                    .gsis
                    .iter_mut()
                    .find(|g| g.name == up.index_name)
                    .ok_or_else(|| {
                        AwsError::bad_request(
                            "ResourceNotFoundException",
                            format!(
                                "Requested resource not found: Index: {} not found",
                                up.index_name
                            ),
                        )
                    })?;
                match (&up.provisioned_throughput, mode.as_str()) {
                    (Some(tp), "PROVISIONED") => {
                        check_throughput(tp)?;
                        g.throughput = Some(*tp);
                    }
                    (Some(_), _) => {
                        return Err(invalid_param(format!(
                            "ProvisionedThroughput should not be specified for index: {} when BillingMode is PAY_PER_REQUEST",
                            up.index_name
                        )));
                    }
                    (None, _) => {
                        return Err(invalid_param(format!(
                            "ProvisionedThroughput must be specified for index: {}",
                            up.index_name
                        )));
                    }
                }
            }
            if let Some(d) = &u.delete {
                let before = meta.gsis.len();
                meta.gsis.retain(|g| g.name != d.index_name);
                if meta.gsis.len() == before {
                    return Err(AwsError::bad_request(
                        "ResourceNotFoundException",
                        format!(
                            "Requested resource not found: Index: {} not found",
                            d.index_name
                        ),
                    ));
                }
                indexes_changed = true;
            }
        }
        if mode == "PROVISIONED"
            && let Some(g) = meta.gsis.iter().find(|g| g.throughput.is_none())
        {
            return Err(invalid_param(format!(
                "ProvisionedThroughput must be specified for index: {}",
                g.name
            )));
        }
        // DynamoDB keeps only the definitions some key still uses.
        let all: Vec<&IndexMeta> = meta.gsis.iter().chain(meta.lsis.iter()).collect();
        let used = key_attributes(&meta.key_schema, &all);
        defs.retain(|d| used.contains(&d.attribute_name));
        meta.attribute_definitions = defs;
        if let Some(s) = &input.stream_specification {
            check_stream(s)?;
            let enabled = meta.stream.is_some();
            match (s.stream_enabled, enabled) {
                (true, true) => {
                    return Err(validation(format!(
                        "Table already has an enabled stream: TableName: {}",
                        meta.name
                    )));
                }
                (false, false) => {
                    return Err(validation(format!(
                        "Table does not have an enabled stream: TableName: {}",
                        meta.name
                    )));
                }
                (true, false) => {
                    meta.stream = Some(s.clone());
                    meta.stream_label = Some(stream_label());
                }
                (false, true) => meta.stream = None,
            }
        }
        if let Some(sse) = &input.sse_specification {
            meta.sse = Some(sse.clone()).filter(|s| s.enabled == Some(true));
        }
        if let Some(c) = &input.table_class {
            check_table_class(c)?;
            meta.table_class = c.clone();
        }
        if let Some(d) = input.deletion_protection_enabled {
            meta.deletion_protection = d;
        }
        self.save_meta(&meta)?;
        t.meta = meta;
        if indexes_changed {
            t.rebuild_indexes();
        }
        Ok(Self::describe_locked(t, "UPDATING"))
    }

    pub fn update_time_to_live(
        &self,
        region: &str,
        name: &str,
        enabled: bool,
        attribute_name: &str,
    ) -> Result<(), AwsError> {
        if attribute_name.is_empty() || attribute_name.len() > 255 {
            return Err(constraint(
                attribute_name,
                "timeToLiveSpecification.attributeName",
                "Member must have length greater than or equal to 1",
            ));
        }
        let mut tables = self.lock();
        let t = tables
            .get_mut(&(region.to_string(), name.to_string()))
            .ok_or_else(|| table_not_found_named(name))?;
        let mut meta = t.meta.clone();
        match (enabled, &meta.ttl_attribute) {
            (true, Some(_)) => return Err(validation("TimeToLive is already enabled")),
            (false, None) => return Err(validation("TimeToLive is already disabled")),
            (false, Some(current)) if current != attribute_name => {
                return Err(validation(format!(
                    "TimeToLive is active on a different AttributeName: current AttributeName is {current}"
                )));
            }
            _ => {}
        }
        meta.ttl_attribute = enabled.then(|| attribute_name.to_string());
        self.save_meta(&meta)?;
        t.meta = meta;
        t.last_ttl_sweep = None;
        Ok(())
    }

    pub fn describe_time_to_live(
        &self,
        region: &str,
        name: &str,
    ) -> Result<TtlDescription, AwsError> {
        let tables = self.lock();
        let t = tables
            .get(&(region.to_string(), name.to_string()))
            .ok_or_else(|| table_not_found_named(name))?;
        Ok(TtlDescription {
            enabled: t.meta.ttl_attribute.is_some(),
            attribute_name: t.meta.ttl_attribute.clone(),
        })
    }

    /// UpdateContinuousBackups: point-in-time recovery is a stored flag (no backups are made).
    pub fn set_point_in_time_recovery(
        &self,
        region: &str,
        name: &str,
        enabled: bool,
    ) -> Result<(), AwsError> {
        let mut tables = self.lock();
        let t = tables
            .get_mut(&(region.to_string(), name.to_string()))
            .ok_or_else(|| {
                AwsError::bad_request("TableNotFoundException", format!("Table not found: {name}"))
            })?;
        let mut meta = t.meta.clone();
        meta.pitr_enabled = enabled;
        self.save_meta(&meta)?;
        t.meta = meta;
        Ok(())
    }

    pub fn continuous_backups(&self, region: &str, name: &str) -> Result<Value, AwsError> {
        let tables = self.lock();
        let t = tables
            .get(&(region.to_string(), name.to_string()))
            .ok_or_else(|| {
                AwsError::bad_request("TableNotFoundException", format!("Table not found: {name}"))
            })?;
        let mut pitr = json!({"PointInTimeRecoveryStatus": if t.meta.pitr_enabled { "ENABLED" } else { "DISABLED" }});
        if t.meta.pitr_enabled {
            pitr["RecoveryPeriodInDays"] = json!(35);
        }
        Ok(json!({
            "ContinuousBackupsStatus": "ENABLED",
            "PointInTimeRecoveryDescription": pitr,
        }))
    }

    fn table_by_arn<'a>(
        tables: &'a mut super::Tables,
        region: &str,
        arn: &str,
    ) -> Result<&'a mut Table, AwsError> {
        let not_found = || {
            AwsError::bad_request(
                "ResourceNotFoundException",
                format!("Requested resource not found: ResourcArn: {arn} not found"),
            )
        };
        let name = arn
            .strip_prefix("arn:aws:dynamodb:")
            .and_then(|rest| rest.split_once(":table/"))
            .map(|(_, name)| name)
            .ok_or_else(|| {
                validation(format!(
                    "Invalid TableArn: Invalid ResourceArn provided as input {arn}"
                ))
            })?;
        let t = tables
            .get_mut(&(region.to_string(), name.to_string()))
            .ok_or_else(not_found)?;
        if t.meta.arn() != arn {
            return Err(not_found());
        }
        Ok(t)
    }

    pub fn tag_resource(&self, region: &str, arn: &str, tags: &[Tag]) -> Result<(), AwsError> {
        check_tags(tags)?;
        let mut tables = self.lock();
        let t = Self::table_by_arn(&mut tables, region, arn)?;
        let mut meta = t.meta.clone();
        for tag in tags {
            match meta.tags.iter_mut().find(|x| x.key == tag.key) {
                Some(x) => x.value = tag.value.clone(),
                None => meta.tags.push(tag.clone()),
            }
        }
        if meta.tags.len() > 50 {
            return Err(validation(
                "One or more parameter values were invalid: Too many tags: the number of tags on the resource would exceed 50",
            ));
        }
        self.save_meta(&meta)?;
        t.meta = meta;
        Ok(())
    }

    pub fn untag_resource(&self, region: &str, arn: &str, keys: &[String]) -> Result<(), AwsError> {
        let mut tables = self.lock();
        let t = Self::table_by_arn(&mut tables, region, arn)?;
        let mut meta = t.meta.clone();
        meta.tags.retain(|x| !keys.contains(&x.key));
        self.save_meta(&meta)?;
        t.meta = meta;
        Ok(())
    }

    pub fn list_tags(&self, region: &str, arn: &str) -> Result<Vec<Tag>, AwsError> {
        let mut tables = self.lock();
        Ok(Self::table_by_arn(&mut tables, region, arn)?
            .meta
            .tags
            .clone())
    }
}

fn check_table_class(c: &str) -> Result<(), AwsError> {
    if c != "STANDARD" && c != "STANDARD_INFREQUENT_ACCESS" {
        return Err(constraint(
            c,
            "tableClass",
            "Member must satisfy enum value set: [STANDARD_INFREQUENT_ACCESS, STANDARD]",
        ));
    }
    Ok(())
}
