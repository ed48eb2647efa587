//! The awsJson1_0 adapter: `X-Amz-Target: DynamoDB_20120810.<Operation>` with a JSON body,
//! decoded into the typed operations' inputs (which deserialize straight from the wire shapes)
//! and encoded back in the shapes of botocore's DynamoDB model.

use super::DynamoDbService;
use super::batch::{BatchWriteEntry, KeysAndProjection, TransactGetItem, TransactWriteItem};
use super::errors::{DdbError, serialization, validation};
use super::items::{GetItemInput, WriteKind, WriteRequest};
use super::read::{Page, ReadInput};
use super::schema::{CreateTableInput, Tag};
use super::tables::UpdateTableInput;
use super::value::item_to_json;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

const CONTENT_TYPE: &str = "application/x-amz-json-1.0";

/// Operations of DynamoDB's model cumulo does not implement (each answers 501 naming it).
const NOT_IMPLEMENTED: &[&str] = &[
    "BatchExecuteStatement",
    "CreateBackup",
    "CreateGlobalTable",
    "DeleteBackup",
    "DeleteResourcePolicy",
    "DescribeBackup",
    "DescribeContributorInsights",
    "DescribeExport",
    "DescribeGlobalTable",
    "DescribeGlobalTableSettings",
    "DescribeImport",
    "DescribeKinesisStreamingDestination",
    "DescribeTableReplicaAutoScaling",
    "DisableKinesisStreamingDestination",
    "EnableKinesisStreamingDestination",
    "ExecuteStatement",
    "ExecuteTransaction",
    "ExportTableToPointInTime",
    "GetResourcePolicy",
    "ImportTable",
    "ListBackups",
    "ListContributorInsights",
    "ListExports",
    "ListGlobalTables",
    "ListImports",
    "PutResourcePolicy",
    "RestoreTableFromBackup",
    "RestoreTableToPointInTime",
    "UpdateContributorInsights",
    "UpdateGlobalTable",
    "UpdateGlobalTableSettings",
    "UpdateKinesisStreamingDestination",
    "UpdateTableReplicaAutoScaling",
];

pub fn handle(svc: &DynamoDbService, req: &AwsRequest) -> AwsResponse {
    let target = req.header("x-amz-target").unwrap_or("");
    let op = req.target_operation().unwrap_or("").to_string();
    let result = if target.starts_with("DynamoDBStreams_20120810.") {
        parse_body(req)
            .and_then(|body| super::streams_ops::dispatch(svc, req, &op, &body))
            .map_err(DdbError::from)
    } else {
        match parse_body(req) {
            Ok(body) => dispatch(svc, req, &op, &body),
            Err(e) => Err(e.into()),
        }
    };
    match result {
        Ok(v) => {
            AwsResponse::json(CONTENT_TYPE, &v).with_header("x-amzn-requestid", &req.request_id)
        }
        Err(e) => e.into_response(&req.request_id),
    }
}

fn unknown_operation() -> DdbError {
    AwsError::bad_request("UnknownOperationException", "").into()
}

fn parse_body(req: &AwsRequest) -> Result<Value, AwsError> {
    if req.body.iter().all(u8::is_ascii_whitespace) {
        return Ok(json!({}));
    }
    match serde_json::from_slice::<Value>(&req.body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        _ => Err(serialization(
            "Start of structure or map found where not expected.",
        )),
    }
}

/// A request member DynamoDB requires, with its message for a missing one.
fn require(body: &Value, members: &[&str]) -> Result<(), AwsError> {
    let missing: Vec<String> = members
        .iter()
        .filter(|m| body.get(**m).is_none_or(Value::is_null))
        .map(|m| {
            let mut c = m.chars();
            let first = c.next().map(|f| f.to_ascii_lowercase()).unwrap_or_default();
            format!(
                "Value null at '{first}{}' failed to satisfy constraint: Member must not be null",
                c.as_str()
            )
        })
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    Err(validation(format!(
        "{} validation error{} detected: {}",
        missing.len(),
        if missing.len() == 1 { "" } else { "s" },
        missing.join("; ")
    )))
}

fn decode<T: DeserializeOwned>(body: &Value) -> Result<T, AwsError> {
    serde_json::from_value(body.clone()).map_err(|e| serialization(e.to_string()))
}

fn table_name(body: &Value) -> Result<String, AwsError> {
    require(body, &["TableName"])?;
    body["TableName"]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| serialization("NUMBER_VALUE cannot be converted to String"))
}

fn page_json(page: Page) -> Value {
    let mut m = Map::new();
    if let Some(items) = page.items {
        m.insert(
            "Items".into(),
            Value::Array(items.iter().map(item_to_json).collect()),
        );
    }
    m.insert("Count".into(), json!(page.count));
    m.insert("ScannedCount".into(), json!(page.scanned_count));
    if let Some(k) = page.last_evaluated_key {
        m.insert("LastEvaluatedKey".into(), item_to_json(&k));
    }
    Value::Object(m)
}

fn attributes_json(attrs: Option<super::value::Item>) -> Value {
    match attrs {
        Some(a) => json!({ "Attributes": item_to_json(&a) }),
        None => json!({}),
    }
}

fn dispatch(
    svc: &DynamoDbService,
    req: &AwsRequest,
    op: &str,
    b: &Value,
) -> Result<Value, DdbError> {
    let region = req.region.as_str();
    Ok(match op {
        "CreateTable" => {
            require(b, &["TableName", "AttributeDefinitions", "KeySchema"])?;
            let input: CreateTableInput = decode(b)?;
            json!({ "TableDescription": svc.create_table(region, &req.account_id, &input)? })
        }
        "DescribeTable" => json!({ "Table": svc.describe_table(region, &table_name(b)?)? }),
        "DeleteTable" => json!({ "TableDescription": svc.delete_table(region, &table_name(b)?)? }),
        "UpdateTable" => {
            table_name(b)?;
            let input: UpdateTableInput = decode(b)?;
            json!({ "TableDescription": svc.update_table(region, &input)? })
        }
        "ListTables" => {
            let start = b.get("ExclusiveStartTableName").and_then(Value::as_str);
            let limit = b.get("Limit").and_then(Value::as_i64);
            let (names, last) = svc.list_tables(region, start, limit)?;
            let mut out = json!({ "TableNames": names });
            if let Some(last) = last {
                out["LastEvaluatedTableName"] = json!(last);
            }
            out
        }
        "UpdateTimeToLive" => {
            require(b, &["TableName", "TimeToLiveSpecification"])?;
            let spec = &b["TimeToLiveSpecification"];
            require(spec, &["Enabled", "AttributeName"])?;
            let enabled = spec["Enabled"].as_bool().unwrap_or(false);
            let attr = spec["AttributeName"].as_str().unwrap_or_default();
            svc.update_time_to_live(region, &table_name(b)?, enabled, attr)?;
            json!({ "TimeToLiveSpecification": { "Enabled": enabled, "AttributeName": attr } })
        }
        "DescribeTimeToLive" => {
            let d = svc.describe_time_to_live(region, &table_name(b)?)?;
            let mut desc =
                json!({ "TimeToLiveStatus": if d.enabled { "ENABLED" } else { "DISABLED" } });
            if let Some(a) = d.attribute_name {
                desc["AttributeName"] = json!(a);
            }
            json!({ "TimeToLiveDescription": desc })
        }
        "UpdateContinuousBackups" => {
            require(b, &["TableName", "PointInTimeRecoverySpecification"])?;
            let name = table_name(b)?;
            let enabled = b["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"]
                .as_bool()
                .unwrap_or(false);
            svc.set_point_in_time_recovery(region, &name, enabled)?;
            json!({ "ContinuousBackupsDescription": svc.continuous_backups(region, &name)? })
        }
        "DescribeContinuousBackups" => {
            json!({ "ContinuousBackupsDescription": svc.continuous_backups(region, &table_name(b)?)? })
        }
        "TagResource" => {
            require(b, &["ResourceArn", "Tags"])?;
            let tags: Vec<Tag> = decode(&b["Tags"])?;
            svc.tag_resource(region, b["ResourceArn"].as_str().unwrap_or_default(), &tags)?;
            json!({})
        }
        "UntagResource" => {
            require(b, &["ResourceArn", "TagKeys"])?;
            let keys: Vec<String> = decode(&b["TagKeys"])?;
            svc.untag_resource(region, b["ResourceArn"].as_str().unwrap_or_default(), &keys)?;
            json!({})
        }
        "ListTagsOfResource" => {
            require(b, &["ResourceArn"])?;
            let tags = svc.list_tags(region, b["ResourceArn"].as_str().unwrap_or_default())?;
            json!({ "Tags": tags })
        }
        "PutItem" | "UpdateItem" | "DeleteItem" => {
            let (kind, member) = match op {
                "PutItem" => (WriteKind::Put, "Item"),
                "UpdateItem" => (WriteKind::Update, "Key"),
                _ => (WriteKind::Delete, "Key"),
            };
            require(b, &["TableName", member])?;
            let input: WriteRequest = decode(b)?;
            attributes_json(svc.write_item(region, kind, &input)?)
        }
        "GetItem" => {
            require(b, &["TableName", "Key"])?;
            let input: GetItemInput = decode(b)?;
            match svc.get_item(region, &input)? {
                Some(item) => json!({ "Item": item_to_json(&item) }),
                None => json!({}),
            }
        }
        "Query" | "Scan" => {
            require(b, &["TableName"])?;
            let input: ReadInput = decode(b)?;
            let page = if op == "Query" {
                svc.query(region, &input)?
            } else {
                svc.scan(region, &input)?
            };
            page_json(page)
        }
        "BatchGetItem" => {
            require(b, &["RequestItems"])?;
            let request: BTreeMap<String, KeysAndProjection> = decode(&b["RequestItems"])?;
            let found = svc.batch_get_item(region, &request)?;
            let responses: Map<String, Value> = found
                .into_iter()
                .map(|(t, items)| (t, Value::Array(items.iter().map(item_to_json).collect())))
                .collect();
            json!({ "Responses": responses, "UnprocessedKeys": {} })
        }
        "BatchWriteItem" => {
            require(b, &["RequestItems"])?;
            let request: BTreeMap<String, Vec<BatchWriteEntry>> = decode(&b["RequestItems"])?;
            svc.batch_write_item(region, &request)?;
            json!({ "UnprocessedItems": {} })
        }
        "TransactWriteItems" => {
            require(b, &["TransactItems"])?;
            let items: Vec<TransactWriteItem> = decode(&b["TransactItems"])?;
            let token = b.get("ClientRequestToken").and_then(Value::as_str);
            svc.transact_write_items(region, &items, token)?;
            json!({})
        }
        "TransactGetItems" => {
            require(b, &["TransactItems"])?;
            let items: Vec<TransactGetItem> = decode(&b["TransactItems"])?;
            let found = svc.transact_get_items(region, &items)?;
            let responses: Vec<Value> = found
                .into_iter()
                .map(|i| match i {
                    Some(item) => json!({ "Item": item_to_json(&item) }),
                    None => json!({}),
                })
                .collect();
            json!({ "Responses": responses })
        }
        "DescribeLimits" => json!({
            "AccountMaxReadCapacityUnits": 80000,
            "AccountMaxWriteCapacityUnits": 80000,
            "TableMaxReadCapacityUnits": 40000,
            "TableMaxWriteCapacityUnits": 40000,
        }),
        "DescribeEndpoints" => json!({
            "Endpoints": [{
                "Address": format!("dynamodb.{region}.amazonaws.com"),
                "CachePeriodInMinutes": 1440,
            }]
        }),
        op if NOT_IMPLEMENTED.contains(&op) => {
            return Err(AwsError::not_implemented("dynamodb", op).into());
        }
        _ => return Err(unknown_operation()),
    })
}
