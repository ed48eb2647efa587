//! DynamoDB Streams' operations (ListStreams, DescribeStream, GetShardIterator, GetRecords) as
//! typed methods, what Lambda's event source mappings also read through
//! ([`DynamoDbService::stream_start`], [`DynamoDbService::stream_records`]), and their wire
//! decoding (`DynamoDBStreams_20120810.*`, awsJson1_0, botocore's `dynamodbstreams` model).

use super::DynamoDbService;
use super::errors::validation;
use super::streams::{self, Iterator, Pending};
use cumulo_wire::{AwsError, AwsRequest};
use serde_json::{Value, json};

/// What GetRecords answers: the records and the next iterator (none once a closed shard is
/// read to its end).
pub struct RecordsPage {
    pub records: Vec<Value>,
    pub next: Option<u64>,
}

fn limit(v: Option<i64>, max: i64, member: &str) -> Result<usize, AwsError> {
    match v {
        None => Ok(max as usize),
        Some(n) if n < 1 => Err(validation(format!(
            "1 validation error detected: Value '{n}' at '{member}' failed to satisfy constraint: Member must have value greater than or equal to 1"
        ))),
        Some(n) if n > max => Err(validation(format!(
            "1 validation error detected: Value '{n}' at '{member}' failed to satisfy constraint: Member must have value less than or equal to {max}"
        ))),
        Some(n) => Ok(n as usize),
    }
}

impl DynamoDbService {
    /// Brings the streams in line with the tables (new streams, disabled ones, retention) and
    /// runs `f` over them.
    fn with_streams<T>(
        &self,
        f: impl FnOnce(&streams::Streams) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        let tables = self.lock();
        let mut st = self.lock_streams();
        let mut pending = Pending::default();
        st.reconcile(&tables, super::now_secs(), &mut pending);
        if !pending.streams.is_empty()
            || !pending.removed.is_empty()
            || pending.trim_before.is_some()
        {
            self.store
                .write(|tx| streams::write_pending(tx, &pending))
                .map_err(|e| AwsError::internal(format!("dynamodb: cannot store streams: {e}")))?;
        }
        drop(tables);
        f(&st)
    }

    /// ListStreams: the region's streams (of one table if named), in ARN order.
    pub fn list_streams(
        &self,
        region: &str,
        table: Option<&str>,
        limit_to: Option<i64>,
        start_after: Option<&str>,
    ) -> Result<Value, AwsError> {
        let limit = limit(limit_to, 100, "limit")?;
        self.with_streams(|st| {
            let all: Vec<&streams::Stream> = st
                .by_arn
                .values()
                .filter(|s| s.region == region && table.is_none_or(|t| s.table == t))
                .filter(|s| start_after.is_none_or(|a| s.arn.as_str() > a))
                .collect();
            let page: Vec<Value> = all
                .iter()
                .take(limit)
                .map(|s| json!({"StreamArn": s.arn, "TableName": s.table, "StreamLabel": s.label}))
                .collect();
            let mut out = json!({ "Streams": page });
            if all.len() > limit
                && let Some(last) = all.get(limit - 1)
            {
                out["LastEvaluatedStreamArn"] = json!(last.arn);
            }
            Ok(out)
        })
    }

    /// DescribeStream (one shard per stream: after `ExclusiveStartShardId` naming it, none).
    pub fn describe_stream(
        &self,
        arn: &str,
        limit_to: Option<i64>,
        start_after: Option<&str>,
    ) -> Result<Value, AwsError> {
        limit(limit_to, 100, "limit")?;
        self.with_streams(|st| {
            let s = st.get(arn)?;
            let mut d = streams::description(s);
            if start_after == Some(s.shard_id.as_str()) {
                d["Shards"] = json!([]);
            }
            Ok(json!({ "StreamDescription": d }))
        })
    }

    /// GetShardIterator.
    pub fn get_shard_iterator(
        &self,
        arn: &str,
        shard_id: &str,
        kind: &str,
        seq: Option<&str>,
    ) -> Result<String, AwsError> {
        self.with_streams(|st| {
            let s = st.get(arn)?;
            if s.shard_id != shard_id {
                return Err(AwsError::bad_request(
                    "ResourceNotFoundException",
                    format!(
                        "Requested resource not found: Shard: {shard_id} in Stream: {arn} not found"
                    ),
                ));
            }
            let from_seq = streams::start_position(s, st.next_seq, kind, seq)?;
            Ok(Iterator {
                arn: arn.to_string(),
                shard_id: shard_id.to_string(),
                from_seq,
                created_ms: chrono::Utc::now().timestamp_millis(),
            }
            .encode())
        })
    }

    /// GetRecords through an iterator GetShardIterator (or a previous GetRecords) gave.
    pub fn get_records(
        &self,
        iterator: &str,
        limit_to: Option<i64>,
    ) -> Result<(Vec<Value>, Option<String>), AwsError> {
        let limit = limit(limit_to, 1000, "limit")?;
        let it = Iterator::decode(iterator)?;
        let now = chrono::Utc::now().timestamp_millis();
        it.check_fresh(now)?;
        let page = self.stream_records(&it.arn, it.from_seq, limit)?;
        let next = page.next.map(|from_seq| {
            Iterator {
                from_seq,
                created_ms: now,
                ..it
            }
            .encode()
        });
        Ok((page.records, next))
    }

    /// Where a reader starting at `TRIM_HORIZON` or `LATEST` of a stream starts (Lambda's
    /// StartingPosition).
    pub fn stream_start(&self, arn: &str, position: &str) -> Result<u64, AwsError> {
        self.with_streams(|st| streams::start_position(st.get(arn)?, st.next_seq, position, None))
    }

    /// Up to `limit` records of a stream from sequence number `from_seq` on.
    pub fn stream_records(
        &self,
        arn: &str,
        from_seq: u64,
        limit: usize,
    ) -> Result<RecordsPage, AwsError> {
        self.with_streams(|st| {
            let s = st.get(arn)?;
            let it = Iterator {
                arn: arn.to_string(),
                shard_id: s.shard_id.clone(),
                from_seq,
                created_ms: 0,
            };
            let (records, next) = streams::read(s, &it, limit);
            Ok(RecordsPage { records, next })
        })
    }
}

fn string<'a>(b: &'a Value, member: &str) -> Result<&'a str, AwsError> {
    b.get(member).and_then(Value::as_str).ok_or_else(|| {
        let mut c = member.chars();
        let first = c.next().map(|f| f.to_ascii_lowercase()).unwrap_or_default();
        validation(format!(
            "1 validation error detected: Value null at '{first}{}' failed to satisfy constraint: Member must not be null",
            c.as_str()
        ))
    })
}

/// One `DynamoDBStreams_20120810.<op>` request.
pub(super) fn dispatch(
    svc: &DynamoDbService,
    req: &AwsRequest,
    op: &str,
    b: &Value,
) -> Result<Value, AwsError> {
    let limit = b.get("Limit").and_then(Value::as_i64);
    match op {
        "ListStreams" => svc.list_streams(
            &req.region,
            b.get("TableName").and_then(Value::as_str),
            limit,
            b.get("ExclusiveStartStreamArn").and_then(Value::as_str),
        ),
        "DescribeStream" => svc.describe_stream(
            string(b, "StreamArn")?,
            limit,
            b.get("ExclusiveStartShardId").and_then(Value::as_str),
        ),
        "GetShardIterator" => {
            let arn = string(b, "StreamArn")?;
            let shard = string(b, "ShardId")?;
            let kind = string(b, "ShardIteratorType")?;
            let seq = b.get("SequenceNumber").and_then(Value::as_str);
            let it = svc.get_shard_iterator(arn, shard, kind, seq)?;
            Ok(json!({ "ShardIterator": it }))
        }
        "GetRecords" => {
            let (records, next) = svc.get_records(string(b, "ShardIterator")?, limit)?;
            let mut out = json!({ "Records": records });
            if let Some(n) = next {
                out["NextShardIterator"] = json!(n);
            }
            Ok(out)
        }
        _ => Err(AwsError::bad_request("UnknownOperationException", "")),
    }
}
