//! BatchGetItem, BatchWriteItem, TransactWriteItems and TransactGetItems. A batch or transaction
//! commits in one store transaction, so nothing is ever left unprocessed (UnprocessedItems and
//! UnprocessedKeys are always empty) and a cancelled transaction changes nothing.

use super::DynamoDbService;
use super::errors::{DdbError, legacy_parameter, validation};
use super::eval;
use super::expr::Exprs;
use super::items::{Prepared, WriteKind, WriteRequest, check_item, prepare, table};
use super::state::Change;
use super::value::{Item, item_from_json, item_to_json};
use cumulo_wire::AwsError;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

/// How long DynamoDB remembers a TransactWriteItems ClientRequestToken.
const IDEMPOTENCY_WINDOW: Duration = Duration::from_secs(600);

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct KeysAndProjection {
    #[serde(default)]
    pub keys: Vec<Value>,
    #[serde(default)]
    pub projection_expression: Option<String>,
    #[serde(default)]
    pub expression_attribute_names: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub consistent_read: Option<bool>,
    #[serde(default)]
    pub attributes_to_get: Option<Value>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BatchWriteEntry {
    #[serde(default)]
    pub put_request: Option<BatchPut>,
    #[serde(default)]
    pub delete_request: Option<BatchDelete>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BatchPut {
    pub item: Value,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct BatchDelete {
    pub key: Value,
}

/// One TransactWriteItems action: exactly one member is set.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TransactWriteItem {
    #[serde(default)]
    pub condition_check: Option<WriteRequest>,
    #[serde(default)]
    pub put: Option<WriteRequest>,
    #[serde(default)]
    pub delete: Option<WriteRequest>,
    #[serde(default)]
    pub update: Option<WriteRequest>,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TransactGetItem {
    pub get: TransactGet,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct TransactGet {
    pub table_name: String,
    pub key: Value,
    #[serde(default)]
    pub projection_expression: Option<String>,
    #[serde(default)]
    pub expression_attribute_names: Option<BTreeMap<String, String>>,
}

fn too_many(member: &str, max: usize) -> AwsError {
    validation(format!(
        "1 validation error detected: Value at '{member}' failed to satisfy constraint: Member must have length less than or equal to {max}"
    ))
}

fn projection_of(
    names: &Option<BTreeMap<String, String>>,
    text: &Option<String>,
) -> Result<Option<Vec<super::expr::Path>>, AwsError> {
    let mut exprs = Exprs::new(names.clone(), None)?;
    let p = text.as_deref().map(|p| exprs.projection(p)).transpose()?;
    exprs.finish()?;
    Ok(p)
}

impl DynamoDbService {
    /// BatchGetItem: table name → the items found (missing keys are simply absent).
    pub fn batch_get_item(
        &self,
        region: &str,
        request: &BTreeMap<String, KeysAndProjection>,
    ) -> Result<BTreeMap<String, Vec<Item>>, AwsError> {
        let total: usize = request.values().map(|r| r.keys.len()).sum();
        if total > 100 {
            return Err(validation(
                "Too many items requested for the BatchGetItem call",
            ));
        }
        if request.is_empty() {
            return Err(validation(
                "1 validation error detected: Value null at 'requestItems' failed to satisfy constraint: Member must not be null",
            ));
        }
        let mut tables = self.lock();
        for name in request.keys() {
            let key = (region.to_string(), name.clone());
            self.sweep_ttl(&mut tables, &key)?;
        }
        let mut out = BTreeMap::new();
        for (name, r) in request {
            if r.attributes_to_get.is_some() {
                return Err(legacy_parameter("AttributesToGet", "ProjectionExpression"));
            }
            let t = table(&tables, region, name)?;
            let projection =
                projection_of(&r.expression_attribute_names, &r.projection_expression)?;
            let mut seen = HashSet::new();
            let mut found = Vec::new();
            for k in &r.keys {
                let pk = t.meta.key_param(&item_from_json(k)?)?;
                if !seen.insert(pk.clone()) {
                    return Err(validation("Provided list of item keys contains duplicates"));
                }
                if let Some(item) = t.items.get(&pk) {
                    found.push(match &projection {
                        Some(p) => eval::project(item, p),
                        None => item.clone(),
                    });
                }
            }
            out.insert(name.clone(), found);
        }
        Ok(out)
    }

    /// BatchWriteItem: every put and delete, committed together.
    pub fn batch_write_item(
        &self,
        region: &str,
        request: &BTreeMap<String, Vec<BatchWriteEntry>>,
    ) -> Result<(), AwsError> {
        let total: usize = request.values().map(Vec::len).sum();
        if total > 25 {
            return Err(too_many("requestItems", 25));
        }
        if request.is_empty() || request.values().any(Vec::is_empty) {
            return Err(validation(
                "1 validation error detected: Value at 'requestItems' failed to satisfy constraint: Member must have length greater than or equal to 1",
            ));
        }
        let mut tables = self.lock();
        for name in request.keys() {
            self.sweep_ttl(&mut tables, &(region.to_string(), name.clone()))?;
        }
        let mut changes = Vec::new();
        for (name, entries) in request {
            let t = table(&tables, region, name)?;
            let mut seen = HashSet::new();
            for e in entries {
                let (pk, change) = match (&e.put_request, &e.delete_request) {
                    (Some(p), None) => {
                        let item = item_from_json(&p.item)?;
                        let pk = check_item(&t.meta, &item, false)?;
                        (pk.clone(), Change::put(&t.meta, pk, item))
                    }
                    (None, Some(d)) => {
                        let key = item_from_json(&d.key)?;
                        let pk = t.meta.key_param(&key)?;
                        (pk.clone(), Change::delete(&t.meta, pk, &key))
                    }
                    _ => {
                        return Err(validation(
                            "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes",
                        ));
                    }
                };
                if !seen.insert(pk) {
                    return Err(validation("Provided list of item keys contains duplicates"));
                }
                changes.push(change);
            }
        }
        self.commit(&mut tables, changes)
    }

    /// TransactWriteItems: all conditions hold and every write commits, or nothing changes and
    /// the error lists a reason per action.
    pub fn transact_write_items(
        &self,
        region: &str,
        items: &[TransactWriteItem],
        client_request_token: Option<&str>,
    ) -> Result<(), DdbError> {
        let fingerprint = format!("{region}{items:?}");
        if let Some(token) = client_request_token {
            if token.is_empty() || token.chars().count() > 36 {
                return Err(super::schema::constraint(
                    token,
                    "clientRequestToken",
                    "Member must have length less than or equal to 36",
                )
                .into());
            }
            let mut tokens = self.tx_tokens.lock().unwrap_or_else(|p| p.into_inner());
            tokens.retain(|_, (_, at)| at.elapsed() < IDEMPOTENCY_WINDOW);
            match tokens.get(token) {
                Some((f, _)) if *f == fingerprint => return Ok(()),
                Some(_) => {
                    return Err(AwsError::bad_request(
                        "IdempotentParameterMismatchException",
                        "The request uses the same client token as a previous, but non-identical request.",
                    )
                    .into());
                }
                None => {}
            }
        }
        self.apply_transaction(region, items)?;
        if let Some(token) = client_request_token {
            self.tx_tokens
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(token.to_string(), (fingerprint, Instant::now()));
        }
        Ok(())
    }

    fn apply_transaction(&self, region: &str, items: &[TransactWriteItem]) -> Result<(), DdbError> {
        if items.is_empty() {
            return Err(validation(
                "1 validation error detected: Value at 'transactItems' failed to satisfy constraint: Member must have length greater than or equal to 1",
            )
            .into());
        }
        if items.len() > 100 {
            return Err(too_many("transactItems", 100).into());
        }
        let mut tables = self.lock();
        let mut prepared: Vec<(Prepared, bool)> = Vec::new();
        let mut seen = HashSet::new();
        for it in items {
            let (kind, req) = match (&it.condition_check, &it.put, &it.delete, &it.update) {
                (Some(r), None, None, None) => (WriteKind::Check, r),
                (None, Some(r), None, None) => (WriteKind::Put, r),
                (None, None, Some(r), None) => (WriteKind::Delete, r),
                (None, None, None, Some(r)) => (WriteKind::Update, r),
                _ => {
                    return Err(validation(
                        "TransactItems can only contain one of Check, Put, Update or Delete",
                    )
                    .into());
                }
            };
            if kind == WriteKind::Check && req.condition_expression.is_none() {
                return Err(validation(
                    "The ConditionCheck operation requires a ConditionExpression",
                )
                .into());
            }
            let want_old =
                req.return_values_on_condition_check_failure.as_deref() == Some("ALL_OLD");
            self.sweep_ttl(&mut tables, &(region.to_string(), req.table_name.clone()))?;
            let t = table(&tables, region, &req.table_name)?;
            let p = prepare(t, kind, req)?;
            if !seen.insert((p.table.clone(), p.pk.clone())) {
                return Err(validation(
                    "Transaction request cannot include multiple operations on one item",
                )
                .into());
            }
            prepared.push((p, want_old));
        }
        if prepared.iter().any(|(p, _)| !p.condition_met) {
            let reasons: Vec<Value> = prepared
                .iter()
                .map(|(p, want_old)| {
                    if p.condition_met {
                        return json!({"Code": "None"});
                    }
                    let mut r = Map::new();
                    r.insert("Code".into(), json!("ConditionalCheckFailed"));
                    r.insert("Message".into(), json!("The conditional request failed"));
                    if *want_old && let Some(old) = &p.old {
                        r.insert("Item".into(), item_to_json(old));
                    }
                    Value::Object(r)
                })
                .collect();
            let codes: Vec<&str> = reasons
                .iter()
                .map(|r| r["Code"].as_str().unwrap_or("None"))
                .collect();
            let mut e = DdbError::from(AwsError::bad_request(
                "TransactionCanceledException",
                format!(
                    "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
                    codes.join(", ")
                ),
            ));
            e.extra.insert("CancellationReasons".into(), json!(reasons));
            return Err(e);
        }
        let mut changes = Vec::new();
        for (p, _) in &prepared {
            if let Some(t) = tables.get(&p.table)
                && p.new.as_ref() != p.old.as_ref()
                && let Some(c) = p.change(&t.meta)
            {
                changes.push(c);
            }
        }
        self.commit(&mut tables, changes)?;
        Ok(())
    }

    /// TransactGetItems: one entry per request, `None` where the item does not exist.
    pub fn transact_get_items(
        &self,
        region: &str,
        items: &[TransactGetItem],
    ) -> Result<Vec<Option<Item>>, AwsError> {
        if items.len() > 100 {
            return Err(too_many("transactItems", 100));
        }
        let mut tables = self.lock();
        for it in items {
            self.sweep_ttl(
                &mut tables,
                &(region.to_string(), it.get.table_name.clone()),
            )?;
        }
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for it in items {
            let t = table(&tables, region, &it.get.table_name)?;
            let projection = projection_of(
                &it.get.expression_attribute_names,
                &it.get.projection_expression,
            )?;
            let pk = t.meta.key_param(&item_from_json(&it.get.key)?)?;
            if !seen.insert((it.get.table_name.clone(), pk.clone())) {
                return Err(validation(
                    "Transaction request cannot include multiple operations on one item",
                ));
            }
            out.push(t.items.get(&pk).map(|item| match &projection {
                Some(p) => eval::project(item, p),
                None => item.clone(),
            }));
        }
        Ok(out)
    }
}
