//! Single-item operations: PutItem, GetItem, UpdateItem, DeleteItem. Each write is prepared
//! against the current item (condition checked, new item computed and validated) and then
//! committed; the transaction and batch operations reuse the same preparation.

use super::errors::{DdbError, condition_failed, invalid_param, legacy_parameter, validation};
use super::eval;
use super::expr::{Exprs, Kind, Path, PathElem};
use super::schema::TableMeta;
use super::state::{Change, Table};
use super::value::{Item, PrimaryKey, item_from_json, item_size};
use super::{DynamoDbService, Tables};
use cumulo_wire::AwsError;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// DynamoDB's item size limit.
pub const MAX_ITEM_SIZE: usize = 400 * 1024;

/// The parameters of PutItem, UpdateItem, DeleteItem and of each TransactWriteItems action
/// (which use the same member names).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct WriteRequest {
    pub table_name: String,
    #[serde(default)]
    pub item: Option<Value>,
    #[serde(default)]
    pub key: Option<Value>,
    #[serde(default)]
    pub condition_expression: Option<String>,
    #[serde(default)]
    pub update_expression: Option<String>,
    #[serde(default)]
    pub expression_attribute_names: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub expression_attribute_values: Option<Value>,
    #[serde(default)]
    pub return_values: Option<String>,
    #[serde(default)]
    pub return_values_on_condition_check_failure: Option<String>,
    #[serde(default)]
    pub expected: Option<Value>,
    #[serde(default)]
    pub conditional_operator: Option<Value>,
    #[serde(default)]
    pub attribute_updates: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct GetItemInput {
    pub table_name: String,
    #[serde(default)]
    pub key: Value,
    #[serde(default)]
    pub projection_expression: Option<String>,
    #[serde(default)]
    pub expression_attribute_names: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub consistent_read: Option<bool>,
    #[serde(default)]
    pub attributes_to_get: Option<Value>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteKind {
    Put,
    Update,
    Delete,
    Check,
}

/// A write worked out against the current state, not yet committed.
pub struct Prepared {
    pub table: (String, String),
    pub pk: PrimaryKey,
    pub old: Option<Item>,
    /// The item after the write (`None`: deleted; for a condition check, unchanged).
    pub new: Option<Item>,
    pub condition_met: bool,
    /// Paths an update wrote, for `UPDATED_OLD`/`UPDATED_NEW`.
    pub updated: Vec<Path>,
}

impl Prepared {
    pub fn change(&self, meta: &TableMeta) -> Option<Change> {
        match (&self.new, &self.old) {
            (Some(new), _) => Some(Change::put(meta, self.pk.clone(), new.clone())),
            (None, Some(old)) => Some(Change::delete(meta, self.pk.clone(), old)),
            (None, None) => None,
        }
    }
}

/// Refuses the pre-expression parameters cumulo does not implement.
fn check_legacy(req: &WriteRequest) -> Result<(), AwsError> {
    if req.expected.is_some() {
        return Err(legacy_parameter("Expected", "ConditionExpression"));
    }
    if req.conditional_operator.is_some() {
        return Err(legacy_parameter(
            "ConditionalOperator",
            "ConditionExpression",
        ));
    }
    if req.attribute_updates.is_some() {
        return Err(legacy_parameter("AttributeUpdates", "UpdateExpression"));
    }
    Ok(())
}

pub(crate) fn expression_values(v: &Option<Value>) -> Result<Option<Item>, AwsError> {
    v.as_ref().map(item_from_json).transpose()
}

/// Validates a whole item for the table: key, size, index keys.
pub(crate) fn check_item(
    meta: &TableMeta,
    item: &Item,
    updating: bool,
) -> Result<PrimaryKey, AwsError> {
    let pk = meta.item_key(item)?;
    if item_size(item) > MAX_ITEM_SIZE {
        return Err(validation(if updating {
            "Item size to update has exceeded the maximum allowed size"
        } else {
            "Item size has exceeded the maximum allowed size"
        }));
    }
    for index in meta.gsis.iter().chain(meta.lsis.iter()) {
        meta.index_key(index, item)?;
    }
    Ok(pk)
}

/// Works out one write against the table's current item.
pub(crate) fn prepare(
    table: &Table,
    kind: WriteKind,
    req: &WriteRequest,
) -> Result<Prepared, AwsError> {
    check_legacy(req)?;
    let meta = &table.meta;
    let mut exprs = Exprs::new(
        req.expression_attribute_names.clone(),
        expression_values(&req.expression_attribute_values)?,
    )?;
    let condition = req
        .condition_expression
        .as_deref()
        .map(|c| exprs.condition(c, Kind::Condition))
        .transpose()?;
    let update = match (kind, req.update_expression.as_deref()) {
        (WriteKind::Update, Some(u)) => Some(exprs.update(u)?),
        _ => None,
    };
    exprs.finish()?;
    let (pk, key_item, put_item) = match kind {
        WriteKind::Put => {
            let item = item_from_json(req.item.as_ref().unwrap_or(&Value::Null))?;
            let pk = check_item(meta, &item, false)?;
            (pk, meta.key_of(&item), Some(item))
        }
        _ => {
            let key = item_from_json(req.key.as_ref().unwrap_or(&Value::Null))?;
            let pk = meta.key_param(&key)?;
            (pk, key, None)
        }
    };
    let old = table.items.get(&pk).cloned();
    let empty = Item::new();
    let condition_met = condition
        .as_ref()
        .is_none_or(|c| eval::eval(c, old.as_ref().unwrap_or(&empty)));
    let mut updated = Vec::new();
    let new = match kind {
        WriteKind::Put => put_item,
        WriteKind::Delete => None,
        WriteKind::Check => old.clone(),
        WriteKind::Update => {
            let base = old.clone().unwrap_or_else(|| key_item.clone());
            match &update {
                Some(u) => {
                    for p in u.targets() {
                        if let Some(PathElem::Attr(a)) = p.first()
                            && meta.key_schema.iter().any(|k| &k.attribute_name == a)
                        {
                            return Err(invalid_param(format!(
                                "Cannot update attribute {a}. This attribute is part of the key"
                            )));
                        }
                    }
                    updated = u.targets().into_iter().cloned().collect();
                    let new = eval::apply(u, &base)?;
                    check_item(meta, &new, true)?;
                    Some(new)
                }
                None => Some(base),
            }
        }
    };
    Ok(Prepared {
        table: (meta.region.clone(), meta.name.clone()),
        pk,
        old,
        new,
        condition_met,
        updated,
    })
}

fn check_return_values(kind: WriteKind, rv: Option<&str>) -> Result<(), AwsError> {
    let ok = matches!(
        (kind, rv.unwrap_or("NONE")),
        (_, "NONE")
            | (WriteKind::Put | WriteKind::Delete, "ALL_OLD")
            | (
                WriteKind::Update,
                "ALL_OLD" | "UPDATED_OLD" | "ALL_NEW" | "UPDATED_NEW"
            )
    );
    if ok {
        Ok(())
    } else {
        Err(validation("Return values set to invalid value"))
    }
}

fn check_rvoccf(rv: Option<&str>) -> Result<bool, AwsError> {
    match rv.unwrap_or("NONE") {
        "NONE" => Ok(false),
        "ALL_OLD" => Ok(true),
        other => Err(super::schema::constraint(
            other,
            "returnValuesOnConditionCheckFailure",
            "Member must satisfy enum value set: [ALL_OLD, NONE]",
        )),
    }
}

impl DynamoDbService {
    /// PutItem, UpdateItem or DeleteItem: the attributes ReturnValues asked for, if any.
    pub fn write_item(
        &self,
        region: &str,
        kind: WriteKind,
        req: &WriteRequest,
    ) -> Result<Option<Item>, DdbError> {
        check_return_values(kind, req.return_values.as_deref())?;
        let want_old_on_fail =
            check_rvoccf(req.return_values_on_condition_check_failure.as_deref())?;
        let mut tables = self.lock();
        let table = self.table_for_items(&mut tables, region, &req.table_name)?;
        let p = prepare(table, kind, req)?;
        if !p.condition_met {
            return Err(condition_failed(
                p.old.as_ref().filter(|_| want_old_on_fail),
            ));
        }
        let change = p.change(&table.meta);
        self.commit(&mut tables, change.into_iter().collect())?;
        let empty = Item::new();
        let out = match req.return_values.as_deref().unwrap_or("NONE") {
            "ALL_OLD" => p.old.clone(),
            "ALL_NEW" => p.new.clone(),
            "UPDATED_OLD" => Some(eval::project(p.old.as_ref().unwrap_or(&empty), &p.updated)),
            "UPDATED_NEW" => Some(eval::project(p.new.as_ref().unwrap_or(&empty), &p.updated)),
            _ => None,
        };
        Ok(out.filter(|i| !i.is_empty()))
    }

    pub fn get_item(&self, region: &str, input: &GetItemInput) -> Result<Option<Item>, AwsError> {
        if input.attributes_to_get.is_some() {
            return Err(legacy_parameter("AttributesToGet", "ProjectionExpression"));
        }
        let mut exprs = Exprs::new(input.expression_attribute_names.clone(), None)?;
        let projection = input
            .projection_expression
            .as_deref()
            .map(|p| exprs.projection(p))
            .transpose()?;
        exprs.finish()?;
        let key = item_from_json(&input.key)?;
        let mut tables = self.lock();
        let table = self.table_for_items(&mut tables, region, &input.table_name)?;
        let pk = table.meta.key_param(&key)?;
        Ok(table.items.get(&pk).map(|item| match &projection {
            Some(paths) => eval::project(item, paths),
            None => item.clone(),
        }))
    }
}

/// Looks up a table for a multi-table operation.
pub(crate) fn table<'a>(
    tables: &'a Tables,
    region: &str,
    name: &str,
) -> Result<&'a Table, AwsError> {
    tables
        .get(&(region.to_string(), name.to_string()))
        .ok_or_else(super::errors::table_not_found)
}
