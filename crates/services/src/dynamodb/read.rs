//! Query and Scan, on a table or one of its indexes: key conditions, ExclusiveStartKey /
//! LastEvaluatedKey pagination (a page ends at Limit evaluated items or 1 MB, as DynamoDB's),
//! filters applied after the read (Count vs ScannedCount), projections, Select and parallel
//! scan segments.

use super::DynamoDbService;
use super::errors::{invalid_param, legacy_parameter, validation};
use super::eval;
use super::expr::{CmpOp, Cond, Exprs, Kind, Operand, Path, PathElem};
use super::items::expression_values;
use super::schema::{IndexMeta, TableMeta, constraint};
use super::state::Table;
use super::value::{AttrValue, Item, KeyVal, PrimaryKey, item_from_json, item_size};
use cumulo_wire::AwsError;
use serde::Deserialize;
use serde_json::Value;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::ops::Bound;

/// A page stops once it has read this much (DynamoDB's 1 MB).
const PAGE_BYTES: usize = 1024 * 1024;

/// The parameters of Query and Scan (Scan has no key condition; Query has no segments).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct ReadInput {
    pub table_name: String,
    #[serde(default)]
    pub index_name: Option<String>,
    #[serde(default)]
    pub select: Option<String>,
    #[serde(default)]
    pub limit: Option<i64>,
    #[serde(default)]
    pub consistent_read: Option<bool>,
    #[serde(default)]
    pub scan_index_forward: Option<bool>,
    #[serde(default)]
    pub exclusive_start_key: Option<Value>,
    #[serde(default)]
    pub projection_expression: Option<String>,
    #[serde(default)]
    pub filter_expression: Option<String>,
    #[serde(default)]
    pub key_condition_expression: Option<String>,
    #[serde(default)]
    pub expression_attribute_names: Option<BTreeMap<String, String>>,
    #[serde(default)]
    pub expression_attribute_values: Option<Value>,
    #[serde(default)]
    pub segment: Option<i64>,
    #[serde(default)]
    pub total_segments: Option<i64>,
    #[serde(default)]
    pub attributes_to_get: Option<Value>,
    #[serde(default)]
    pub key_conditions: Option<Value>,
    #[serde(default)]
    pub query_filter: Option<Value>,
    #[serde(default)]
    pub scan_filter: Option<Value>,
    #[serde(default)]
    pub conditional_operator: Option<Value>,
}

/// One page of results.
#[derive(Debug, Clone, Default)]
pub struct Page {
    /// `None` when Select is COUNT (the response then has no Items).
    pub items: Option<Vec<Item>>,
    pub count: usize,
    pub scanned_count: usize,
    pub last_evaluated_key: Option<Item>,
}

/// The sort-key part of a key condition.
enum RangeCond {
    Cmp(CmpOp, KeyVal),
    Between(KeyVal, KeyVal),
    BeginsWith(AttrValue),
}

impl RangeCond {
    fn matches(&self, v: &Option<KeyVal>) -> bool {
        let Some(v) = v else { return false };
        match self {
            RangeCond::Cmp(op, x) => {
                let o = v.cmp(x);
                match op {
                    CmpOp::Eq => o == Ordering::Equal,
                    CmpOp::Lt => o == Ordering::Less,
                    CmpOp::Le => o != Ordering::Greater,
                    CmpOp::Gt => o == Ordering::Greater,
                    CmpOp::Ge => o != Ordering::Less,
                    CmpOp::Ne => o != Ordering::Equal,
                }
            }
            RangeCond::Between(lo, hi) => v >= lo && v <= hi,
            RangeCond::BeginsWith(prefix) => match (v, prefix) {
                (KeyVal::S(s), AttrValue::S(p)) => s.starts_with(p.as_str()),
                (KeyVal::B(b), AttrValue::B(p)) => b.starts_with(p),
                _ => false,
            },
        }
    }
}

/// Where an item sits in the read order: the index key (for an index) then the table key.
type Pos = (Option<KeyVal>, Option<KeyVal>, PrimaryKey);

fn key_cond_error(detail: &str) -> AwsError {
    validation(format!("Invalid KeyConditionExpression: {detail}"))
}

fn operator_name(c: &Cond) -> &'static str {
    match c {
        Cond::Or(..) => "OR",
        Cond::Not(..) => "NOT",
        Cond::In(..) => "IN",
        Cond::Exists(_) => "attribute_exists",
        Cond::NotExists(_) => "attribute_not_exists",
        Cond::Type(..) => "attribute_type",
        Cond::Contains(..) => "contains",
        Cond::Cmp(_, CmpOp::Ne, _) => "<>",
        _ => "",
    }
}

fn single_name(p: &Path) -> Option<&str> {
    match p.as_slice() {
        [PathElem::Attr(a)] => Some(a),
        _ => None,
    }
}

/// Splits a key condition into the partition value and the sort-key condition.
fn analyze_key_condition(
    cond: &Cond,
    hash: &str,
    range: Option<&str>,
    types: &dyn Fn(&str) -> String,
) -> Result<(KeyVal, Option<RangeCond>), AwsError> {
    let mut parts = Vec::new();
    fn flatten<'c>(c: &'c Cond, out: &mut Vec<&'c Cond>) {
        if let Cond::And(a, b) = c {
            flatten(a, out);
            flatten(b, out);
        } else {
            out.push(c);
        }
    }
    flatten(cond, &mut parts);
    let mut found: Vec<(&str, RangeCondRaw)> = Vec::new();
    for p in parts {
        let (name, raw) = match p {
            Cond::Cmp(Operand::Path(path), op, Operand::Value(v)) if *op != CmpOp::Ne => {
                (single_name(path), RangeCondRaw::Cmp(*op, v.clone()))
            }
            Cond::Cmp(Operand::Value(v), op, Operand::Path(path)) if *op != CmpOp::Ne => {
                let flipped = match op {
                    CmpOp::Lt => CmpOp::Gt,
                    CmpOp::Le => CmpOp::Ge,
                    CmpOp::Gt => CmpOp::Lt,
                    CmpOp::Ge => CmpOp::Le,
                    o => *o,
                };
                (single_name(path), RangeCondRaw::Cmp(flipped, v.clone()))
            }
            Cond::Between(Operand::Path(path), Operand::Value(lo), Operand::Value(hi)) => (
                single_name(path),
                RangeCondRaw::Between(lo.clone(), hi.clone()),
            ),
            Cond::BeginsWith(Operand::Path(path), Operand::Value(v)) => {
                (single_name(path), RangeCondRaw::BeginsWith(v.clone()))
            }
            other => {
                let op = operator_name(other);
                return Err(if op.is_empty() {
                    key_cond_error(
                        "Invalid condition in KeyConditionExpression: only comparisons of key attributes with values are allowed",
                    )
                } else {
                    key_cond_error(&format!(
                        "Invalid operator used in KeyConditionExpression: {op}"
                    ))
                });
            }
        };
        let name = name.ok_or_else(|| {
            key_cond_error("KeyConditionExpressions cannot contain nested attributes")
        })?;
        if found.iter().any(|(n, _)| *n == name) {
            return Err(key_cond_error(
                "KeyConditionExpressions must only contain one condition per key",
            ));
        }
        found.push((name, raw));
    }
    let hash_cond = found.iter().position(|(n, _)| *n == hash);
    let Some(hi) = hash_cond else {
        return Err(validation(format!(
            "Query condition missed key schema element: {hash}"
        )));
    };
    for (n, _) in &found {
        if *n != hash && Some(*n) != range {
            return Err(validation(format!(
                "Query condition missed key schema element: {}",
                range.unwrap_or(hash)
            )));
        }
    }
    let check_type = |name: &str, v: &AttrValue| -> Result<KeyVal, AwsError> {
        if v.type_name() != types(name) {
            return Err(invalid_param(
                "Condition parameter type does not match schema type",
            ));
        }
        KeyVal::from_attr(v)
            .ok_or_else(|| invalid_param("Condition parameter type does not match schema type"))
    };
    let hash_val = match &found[hi].1 {
        RangeCondRaw::Cmp(CmpOp::Eq, v) => check_type(hash, v)?,
        _ => return Err(validation("Query key condition not supported")),
    };
    let mut range_cond = None;
    for (n, raw) in &found {
        if *n == hash {
            continue;
        }
        range_cond = Some(match raw {
            RangeCondRaw::Cmp(op, v) => RangeCond::Cmp(*op, check_type(n, v)?),
            RangeCondRaw::Between(lo, hi) => {
                RangeCond::Between(check_type(n, lo)?, check_type(n, hi)?)
            }
            RangeCondRaw::BeginsWith(v) => {
                if types(n) == "N" {
                    return Err(key_cond_error(
                        "Incorrect operand type for operator or function; operator or function: begins_with, operand type: N",
                    ));
                }
                check_type(n, v)?;
                RangeCond::BeginsWith(v.clone())
            }
        });
    }
    Ok((hash_val, range_cond))
}

enum RangeCondRaw {
    Cmp(CmpOp, AttrValue),
    Between(AttrValue, AttrValue),
    BeginsWith(AttrValue),
}

/// FNV-1a over the partition value: which parallel-scan segment an item belongs to.
fn segment_of(hash: &KeyVal, total: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in hash.hash_bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h % total
}

struct Plan<'a> {
    meta: &'a TableMeta,
    index: Option<(&'a IndexMeta, bool)>,
    filter: Option<Cond>,
    projection: Option<Vec<Path>>,
    count_only: bool,
    limit: Option<usize>,
}

impl<'a> Plan<'a> {
    /// The item as the index holds it (a GSI has only its projected attributes).
    fn as_stored(&self, item: &Item) -> Item {
        match self.index {
            Some((idx, true)) if idx.projection_type() != "ALL" => {
                let mut out = self.meta.key_of(item);
                for k in &idx.key_schema {
                    if let Some(v) = item.get(&k.attribute_name) {
                        out.insert(k.attribute_name.clone(), v.clone());
                    }
                }
                if idx.projection_type() == "INCLUDE" {
                    for a in idx.projection.non_key_attributes.iter().flatten() {
                        if let Some(v) = item.get(a) {
                            out.insert(a.clone(), v.clone());
                        }
                    }
                }
                out
            }
            _ => item.clone(),
        }
    }

    /// The key of the last evaluated item: the table's key, plus the index's for an index.
    fn last_key(&self, item: &Item) -> Item {
        let mut k = self.meta.key_of(item);
        if let Some((idx, _)) = self.index {
            for e in &idx.key_schema {
                if let Some(v) = item.get(&e.attribute_name) {
                    k.insert(e.attribute_name.clone(), v.clone());
                }
            }
        }
        k
    }

    fn run<'i>(&self, candidates: impl Iterator<Item = &'i Item>) -> Page {
        let mut page = Page::default();
        let mut items = Vec::new();
        let mut bytes = 0;
        for item in candidates {
            page.scanned_count += 1;
            bytes += item_size(item);
            let stored = self.as_stored(item);
            if self.filter.as_ref().is_none_or(|f| eval::eval(f, &stored)) {
                page.count += 1;
                if !self.count_only {
                    items.push(match &self.projection {
                        Some(p) => eval::project(&stored, p),
                        None => stored,
                    });
                }
            }
            if self.limit.is_some_and(|l| page.scanned_count >= l) || bytes >= PAGE_BYTES {
                page.last_evaluated_key = Some(self.last_key(item));
                break;
            }
        }
        if !self.count_only {
            page.items = Some(items);
        }
        page
    }
}

fn check_legacy(input: &ReadInput) -> Result<(), AwsError> {
    for (v, name, instead) in [
        (
            &input.attributes_to_get,
            "AttributesToGet",
            "ProjectionExpression",
        ),
        (
            &input.key_conditions,
            "KeyConditions",
            "KeyConditionExpression",
        ),
        (&input.query_filter, "QueryFilter", "FilterExpression"),
        (&input.scan_filter, "ScanFilter", "FilterExpression"),
        (
            &input.conditional_operator,
            "ConditionalOperator",
            "FilterExpression",
        ),
    ] {
        if v.is_some() {
            return Err(legacy_parameter(name, instead));
        }
    }
    Ok(())
}

/// The position of an ExclusiveStartKey in the read order, validated against the schema.
fn start_position(
    meta: &TableMeta,
    index: Option<(&IndexMeta, bool)>,
    esk: &Value,
) -> Result<Pos, AwsError> {
    let invalid = || {
        validation(
            "The provided starting key is invalid: The provided key element does not match the schema",
        )
    };
    let key = item_from_json(esk)?;
    let table_part: Item = meta
        .key_schema
        .iter()
        .filter_map(|k| {
            key.get(&k.attribute_name)
                .map(|v| (k.attribute_name.clone(), v.clone()))
        })
        .collect();
    let pk = meta.key_param(&table_part).map_err(|_| invalid())?;
    match index {
        None => {
            if key.len() != table_part.len() {
                return Err(invalid());
            }
            Ok((None, None, pk))
        }
        Some((idx, _)) => {
            let (h, r) = meta
                .index_key(idx, &key)
                .map_err(|_| invalid())?
                .ok_or_else(invalid)?;
            Ok((Some(h), r, pk))
        }
    }
}

impl DynamoDbService {
    pub fn query(&self, region: &str, input: &ReadInput) -> Result<Page, AwsError> {
        self.read(region, input, true)
    }

    pub fn scan(&self, region: &str, input: &ReadInput) -> Result<Page, AwsError> {
        self.read(region, input, false)
    }

    fn read(&self, region: &str, input: &ReadInput, query: bool) -> Result<Page, AwsError> {
        check_legacy(input)?;
        if let Some(l) = input.limit
            && l < 1
        {
            return Err(constraint(
                &l.to_string(),
                "limit",
                "Member must have value greater than or equal to 1",
            ));
        }
        let segments = if query {
            None
        } else {
            match (input.segment, input.total_segments) {
                (None, None) => None,
                (Some(_), None) => {
                    return Err(validation(
                        "The TotalSegments parameter is required but was not present in the request when Segment parameter is present",
                    ));
                }
                (None, Some(_)) => {
                    return Err(validation(
                        "The Segment parameter is required but was not present in the request when parameter TotalSegments is present",
                    ));
                }
                (Some(s), Some(t)) => {
                    if !(1..=1_000_000).contains(&t) {
                        return Err(constraint(
                            &t.to_string(),
                            "totalSegments",
                            "Member must have value less than or equal to 1000000",
                        ));
                    }
                    if s < 0 || s >= t {
                        return Err(validation(format!(
                            "The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: {s} is not less than TotalSegments: {t}"
                        )));
                    }
                    Some((s as u64, t as u64))
                }
            }
        };
        let mut exprs = Exprs::new(
            input.expression_attribute_names.clone(),
            expression_values(&input.expression_attribute_values)?,
        )?;
        let key_cond = match (query, input.key_condition_expression.as_deref()) {
            (true, Some(k)) => Some(exprs.condition(k, Kind::KeyCondition)?),
            (true, None) => {
                return Err(validation(
                    "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.",
                ));
            }
            _ => None,
        };
        let filter = input
            .filter_expression
            .as_deref()
            .map(|f| exprs.condition(f, Kind::Filter))
            .transpose()?;
        let projection = input
            .projection_expression
            .as_deref()
            .map(|p| exprs.projection(p))
            .transpose()?;
        exprs.finish()?;

        let mut tables = self.lock();
        let table: &Table = self.table_for_items(&mut tables, region, &input.table_name)?;
        let meta = &table.meta;
        let index = match &input.index_name {
            Some(name) => Some(meta.index(name).ok_or_else(|| {
                validation(format!(
                    "The table does not have the specified index: {name}"
                ))
            })?),
            None => None,
        };
        if let Some((_, true)) = index
            && input.consistent_read == Some(true)
        {
            return Err(validation(
                "Consistent reads are not supported on global secondary indexes",
            ));
        }
        let select = input.select.as_deref().unwrap_or(if projection.is_some() {
            "SPECIFIC_ATTRIBUTES"
        } else if index.is_some() {
            "ALL_PROJECTED_ATTRIBUTES"
        } else {
            "ALL_ATTRIBUTES"
        });
        match select {
            "ALL_ATTRIBUTES" | "ALL_PROJECTED_ATTRIBUTES" | "COUNT" if projection.is_some() => {
                return Err(invalid_param(format!(
                    "Cannot specify the ProjectionExpression when choosing to get {select}"
                )));
            }
            "SPECIFIC_ATTRIBUTES" if projection.is_none() => {
                return Err(invalid_param(
                    "Select type SPECIFIC_ATTRIBUTES requires a ProjectionExpression",
                ));
            }
            "ALL_PROJECTED_ATTRIBUTES" if index.is_none() => {
                return Err(invalid_param(
                    "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName",
                ));
            }
            "ALL_ATTRIBUTES" => {
                if let Some((idx, true)) = index
                    && idx.projection_type() != "ALL"
                {
                    return Err(invalid_param(format!(
                        "Select type ALL_ATTRIBUTES is not supported for global secondary index {} because its projection type is not ALL",
                        idx.name
                    )));
                }
            }
            "ALL_PROJECTED_ATTRIBUTES" | "COUNT" | "SPECIFIC_ATTRIBUTES" => {}
            other => {
                return Err(constraint(
                    other,
                    "select",
                    "Member must satisfy enum value set: [SPECIFIC_ATTRIBUTES, COUNT, ALL_ATTRIBUTES, ALL_PROJECTED_ATTRIBUTES]",
                ));
            }
        }
        let start = input
            .exclusive_start_key
            .as_ref()
            .map(|esk| start_position(meta, index, esk))
            .transpose()?;
        let plan = Plan {
            meta,
            index,
            filter,
            projection,
            count_only: select == "COUNT",
            limit: input.limit.map(|l| l as usize),
        };
        let forward = input.scan_index_forward.unwrap_or(true);
        let after = |pos: &Pos| match &start {
            None => true,
            Some(s) => {
                if forward {
                    pos > s
                } else {
                    pos < s
                }
            }
        };

        // The candidates, in read order, after the start key.
        let mut ordered: Vec<(Pos, &Item)> = Vec::new();
        match (&key_cond, index) {
            (Some(kc), None) => {
                let (hash, range) =
                    analyze_key_condition(kc, meta.hash_key(), meta.range_key(), &|n| {
                        meta.attr_type(n).to_string()
                    })?;
                let from = (hash.clone(), None);
                for (pk, item) in table
                    .items
                    .range((Bound::Included(&from), Bound::Unbounded))
                    .take_while(|(pk, _)| pk.0 == hash)
                {
                    if range.as_ref().is_none_or(|r| r.matches(&pk.1)) {
                        ordered.push(((None, None, pk.clone()), item));
                    }
                }
            }
            (Some(kc), Some((idx, _))) => {
                let (hash, range) =
                    analyze_key_condition(kc, idx.hash_key(), idx.range_key(), &|n| {
                        meta.attr_type(n).to_string()
                    })?;
                if let Some(set) = table.indexes.get(&idx.name).and_then(|m| m.get(&hash)) {
                    for (r, pk) in set {
                        if range.as_ref().is_none_or(|rc| rc.matches(r))
                            && let Some(item) = table.items.get(pk)
                        {
                            ordered.push(((Some(hash.clone()), r.clone(), pk.clone()), item));
                        }
                    }
                }
            }
            (None, None) => {
                let lower = match &start {
                    Some((_, _, pk)) => Bound::Excluded(pk),
                    None => Bound::Unbounded,
                };
                for (pk, item) in table.items.range((lower, Bound::Unbounded)) {
                    if segments.is_none_or(|(s, t)| segment_of(&pk.0, t) == s) {
                        ordered.push(((None, None, pk.clone()), item));
                    }
                    if plan.limit.is_some_and(|l| ordered.len() >= l) {
                        break;
                    }
                }
            }
            (None, Some((idx, _))) => {
                if let Some(map) = table.indexes.get(&idx.name) {
                    for (h, set) in map {
                        for (r, pk) in set {
                            if segments.is_none_or(|(s, t)| segment_of(h, t) == s)
                                && let Some(item) = table.items.get(pk)
                            {
                                ordered.push(((Some(h.clone()), r.clone(), pk.clone()), item));
                            }
                        }
                    }
                }
            }
        }
        if !forward {
            ordered.reverse();
        }
        Ok(plan.run(
            ordered
                .into_iter()
                .filter(|(pos, _)| after(pos))
                .map(|(_, item)| item),
        ))
    }
}
