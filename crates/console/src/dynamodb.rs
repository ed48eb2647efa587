//! DynamoDB through its typed operations: the region's tables (DescribeTable each), one table's
//! description and tags, and its items a page at a time by Scan, or by Query when a key
//! condition is given. Items are shown in DynamoDB's own typed JSON (`{"S": "x"}`), as the AWS
//! API reports them, so nothing is lost or guessed in translation.

use crate::api::Ctx;
use crate::web::{ApiError, ApiResult, Query, json_ok};
use cumulo_services::dynamodb::DynamoDbService;
use cumulo_services::dynamodb::read::ReadInput;
use cumulo_services::dynamodb::value::item_to_json;
use serde_json::{Value, json};
use std::sync::Arc;

/// Items per page, at most and by default.
const MAX_PAGE: usize = 1000;
const DEFAULT_PAGE: usize = 50;

fn service(ctx: &Ctx<'_>) -> Result<Arc<DynamoDbService>, ApiError> {
    ctx.service::<DynamoDbService>()
}

/// Every table name of the region (ListTables, every page).
pub fn table_names(ctx: &Ctx<'_>) -> Result<Vec<String>, ApiError> {
    let svc = service(ctx)?;
    let mut out: Vec<String> = Vec::new();
    loop {
        let (page, last) = svc
            .list_tables(&ctx.region, out.last().map(String::as_str), None)
            .map_err(ApiError::from_aws)?;
        out.extend(page);
        if last.is_none() {
            return Ok(out);
        }
    }
}

/// `GET dynamodb/tables`: each table's name, status, key schema, item count and ARN.
pub fn tables(ctx: &Ctx<'_>) -> ApiResult {
    let svc = service(ctx)?;
    let mut list = Vec::new();
    for name in table_names(ctx)? {
        let t = svc
            .describe_table(&ctx.region, &name)
            .map_err(ApiError::from_aws)?;
        list.push(json!({
            "name": name,
            "arn": t["TableArn"],
            "status": t["TableStatus"],
            "key_schema": t["KeySchema"],
            "item_count": t["ItemCount"],
            "billing_mode": t.pointer("/BillingModeSummary/BillingMode").cloned()
                .unwrap_or_else(|| json!("PROVISIONED")),
        }));
    }
    json_ok(&json!({ "tables": list }))
}

/// `GET dynamodb/tables/{name}`: DescribeTable's `Table` and the table's tags.
pub fn table(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let svc = service(ctx)?;
    let description = svc
        .describe_table(&ctx.region, name)
        .map_err(ApiError::from_aws)?;
    let arn = description["TableArn"].as_str().unwrap_or_default();
    let tags: Vec<Value> = svc
        .list_tags(&ctx.region, arn)
        .map_err(ApiError::from_aws)?
        .into_iter()
        .map(|t| json!({"key": t.key, "value": t.value}))
        .collect();
    json_ok(&json!({ "name": name, "table": description, "tags": tags }))
}

/// A query parameter holding a JSON object (`start`, `names`, `values`).
fn json_param(q: &Query<'_>, name: &str) -> Result<Option<Value>, ApiError> {
    match q.get(name).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(v @ Value::Object(_)) => Ok(Some(v)),
            _ => Err(ApiError::bad_request(format!(
                "Query parameter {name} must be a JSON object"
            ))),
        },
    }
}

fn text_param(q: &Query<'_>, name: &str) -> Option<String> {
    q.get(name)
        .map(str::trim)
        .filter(|v| !v.is_empty())
        .map(str::to_string)
}

/// `GET dynamodb/tables/{name}/items?limit=&start=&index=&key_condition=&filter=&names=&values=&forward=`:
/// one page of Scan, or of Query when `key_condition` is given (`names` and `values` are
/// ExpressionAttributeNames/Values as JSON; `start` is the previous page's
/// `last_evaluated_key`). DynamoDB's own validation answers a bad expression.
pub fn items(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let q = Query::of(ctx.req);
    let limit = q.number("limit", DEFAULT_PAGE, MAX_PAGE)?;
    let names = match json_param(&q, "names")? {
        None => None,
        Some(v) => Some(serde_json::from_value(v).map_err(|_| {
            ApiError::bad_request("Query parameter names must map #names to attribute names")
        })?),
    };
    let key_condition = text_param(&q, "key_condition");
    let forward = q.flag("forward", true)?;
    let input = ReadInput {
        table_name: name.to_string(),
        index_name: text_param(&q, "index"),
        limit: Some(limit as i64),
        exclusive_start_key: json_param(&q, "start")?,
        filter_expression: text_param(&q, "filter"),
        key_condition_expression: key_condition.clone(),
        expression_attribute_names: names,
        expression_attribute_values: json_param(&q, "values")?,
        scan_index_forward: key_condition.is_some().then_some(forward),
        ..Default::default()
    };
    let svc = service(ctx)?;
    let page = if key_condition.is_some() {
        svc.query(&ctx.region, &input)
    } else {
        svc.scan(&ctx.region, &input)
    }
    .map_err(ApiError::from_aws)?;
    let items: Vec<Value> = page
        .items
        .unwrap_or_default()
        .iter()
        .map(item_to_json)
        .collect();
    json_ok(&json!({
        "table": name,
        "operation": if key_condition.is_some() { "Query" } else { "Scan" },
        "items": items,
        "count": page.count,
        "scanned_count": page.scanned_count,
        "last_evaluated_key": page.last_evaluated_key.as_ref().map(item_to_json),
    }))
}
