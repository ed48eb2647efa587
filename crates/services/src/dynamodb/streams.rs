//! DynamoDB Streams: the stream records of tables with a stream enabled, and the four read
//! operations (ListStreams, DescribeStream, GetShardIterator, GetRecords).
//!
//! A record is built for every item change a request commits (INSERT, MODIFY, REMOVE; none for
//! a write that leaves the item as it was, as DynamoDB), in the stream's view type, and written
//! in the same store transaction as the item change, so a record exists exactly when its change
//! does. Each stream has one shard, open while the stream is enabled and closed (with its
//! ending sequence number) once the stream is disabled or its table deleted; records and closed
//! streams are kept 24 hours, as DynamoDB keeps them. Streams follow their tables: a table's
//! current stream (`LatestStreamArn` while `StreamSpecification` is enabled) is registered on
//! first use and every other one known is disabled ([`Streams::reconcile`]).

use super::Tables;
use super::errors::validation;
use super::schema::{KeySchemaElement, TableMeta};
use super::state::Change;
use super::value::{Item, item_size, item_to_json};
use base64::Engine;
use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use cumulo_wire::AwsError;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use std::collections::{BTreeMap, VecDeque};

pub const MIGRATION: &str = "
    CREATE TABLE dynamodb_streams (
        arn TEXT PRIMARY KEY,
        data TEXT NOT NULL
    );
    CREATE TABLE dynamodb_stream_records (
        arn TEXT NOT NULL,
        seq INTEGER NOT NULL,
        at REAL NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (arn, seq)
    );
";

/// How long records and closed streams are kept (DynamoDB's 24 hours).
pub const RETENTION_SECS: f64 = 24.0 * 3600.0;
/// How long a shard iterator can be used (15 minutes, as DynamoDB Streams).
const ITERATOR_TTL_MS: i64 = 15 * 60 * 1000;
/// Sequence numbers are written as 21 digits, as DynamoDB's are: this plus a counter.
const SEQ_BASE: u128 = 100_000_000_000_000_000_000;

/// One stream (its single shard included).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Stream {
    pub arn: String,
    pub label: String,
    pub region: String,
    pub table: String,
    pub view_type: String,
    pub key_schema: Vec<KeySchemaElement>,
    pub created: f64,
    pub shard_id: String,
    /// When the stream was disabled (its shard closed); `None` while enabled.
    pub disabled_at: Option<f64>,
    /// The sequence number the shard started at.
    pub first_seq: u64,
    /// The last sequence number written when the shard closed.
    pub last_seq: Option<u64>,
    #[serde(skip)]
    pub records: VecDeque<StoredRecord>,
}

#[derive(Debug, Clone)]
pub struct StoredRecord {
    pub seq: u64,
    pub at: f64,
    pub record: Value,
}

/// Every stream by ARN, and the next sequence number (shared by all streams, so increasing).
#[derive(Default)]
pub struct Streams {
    pub by_arn: BTreeMap<String, Stream>,
    pub next_seq: u64,
}

/// What a commit adds: stream rows to write and records to append.
#[derive(Default)]
pub struct Pending {
    pub streams: Vec<Stream>,
    pub removed: Vec<String>,
    pub records: Vec<(String, StoredRecord)>,
    /// Records older than this were dropped from memory: delete them from the store too.
    pub trim_before: Option<f64>,
}

pub fn seq_text(seq: u64) -> String {
    (SEQ_BASE + seq as u128).to_string()
}

pub fn parse_seq(s: &str) -> Option<u64> {
    let n: u128 = s.parse().ok()?;
    n.checked_sub(SEQ_BASE).and_then(|n| u64::try_from(n).ok())
}

fn not_found(arn: &str) -> AwsError {
    AwsError::bad_request(
        "ResourceNotFoundException",
        format!("Requested resource not found: Stream: {arn} not found"),
    )
}

fn shard_id(created: f64) -> String {
    let hex = uuid::Uuid::new_v4().simple().to_string();
    format!("shardId-{:020}-{}", (created * 1000.0) as u64, &hex[..8])
}

/// A table's stream as a new enabled stream.
fn new_stream(meta: &TableMeta, arn: String, label: String, first_seq: u64) -> Stream {
    let created = chrono::NaiveDateTime::parse_from_str(&label, "%Y-%m-%dT%H:%M:%S%.3f")
        .map(|t| t.and_utc().timestamp_millis() as f64 / 1000.0)
        .unwrap_or_else(|_| super::now_secs());
    Stream {
        arn,
        label,
        region: meta.region.clone(),
        table: meta.name.clone(),
        view_type: meta
            .stream
            .as_ref()
            .and_then(|s| s.stream_view_type.clone())
            .unwrap_or_else(|| "NEW_AND_OLD_IMAGES".into()),
        key_schema: meta.key_schema.clone(),
        created,
        shard_id: shard_id(created),
        disabled_at: None,
        first_seq,
        last_seq: None,
        records: VecDeque::new(),
    }
}

/// The ARN of the table's enabled stream, if any.
fn enabled_arn(meta: &TableMeta) -> Option<String> {
    meta.stream.as_ref().and(meta.stream_arn())
}

/// One stream record as DynamoDB Streams (and Lambda) deliver it.
pub fn build_record(
    meta: &TableMeta,
    view_type: &str,
    old: Option<&Item>,
    new: Option<&Item>,
    seq: u64,
    at: f64,
    by_ttl: bool,
) -> Option<Value> {
    let event = match (old, new) {
        (None, Some(_)) => "INSERT",
        (Some(o), Some(n)) if item_to_json(o) == item_to_json(n) => return None,
        (Some(_), Some(_)) => "MODIFY",
        (Some(_), None) => "REMOVE",
        (None, None) => return None,
    };
    let keys = meta.key_of(new.or(old)?);
    let mut size = item_size(&keys);
    let mut d = serde_json::Map::new();
    d.insert("ApproximateCreationDateTime".into(), json!(at.floor()));
    d.insert("Keys".into(), item_to_json(&keys));
    if matches!(view_type, "NEW_IMAGE" | "NEW_AND_OLD_IMAGES")
        && let Some(n) = new
    {
        size += item_size(n);
        d.insert("NewImage".into(), item_to_json(n));
    }
    if matches!(view_type, "OLD_IMAGE" | "NEW_AND_OLD_IMAGES")
        && let Some(o) = old
    {
        size += item_size(o);
        d.insert("OldImage".into(), item_to_json(o));
    }
    d.insert("SequenceNumber".into(), json!(seq_text(seq)));
    d.insert("SizeBytes".into(), json!(size));
    d.insert("StreamViewType".into(), json!(view_type));
    let mut r = json!({
        "eventID": uuid::Uuid::new_v4().simple().to_string(),
        "eventName": event,
        "eventVersion": "1.1",
        "eventSource": "aws:dynamodb",
        "awsRegion": meta.region,
        "dynamodb": d,
    });
    if by_ttl {
        // The API's Identity shape; Lambda's event spells it `type`/`principalId`.
        r["userIdentity"] = json!({"Type": "Service", "PrincipalId": "dynamodb.amazonaws.com"});
    }
    Some(r)
}

impl Streams {
    /// Registers the tables' current streams, closes the streams no table has enabled any more
    /// and drops what is past retention at `now`. What changed is added to `pending`.
    pub fn reconcile(&mut self, tables: &Tables, now: f64, pending: &mut Pending) {
        let enabled: BTreeMap<String, &TableMeta> = tables
            .values()
            .filter_map(|t| enabled_arn(&t.meta).map(|a| (a, &t.meta)))
            .collect();
        for (arn, meta) in &enabled {
            if !self.by_arn.contains_key(arn) {
                let label = meta.stream_label.clone().unwrap_or_default();
                let s = new_stream(meta, arn.clone(), label, self.next_seq);
                pending.streams.push(s.clone());
                self.by_arn.insert(arn.clone(), s);
            }
        }
        let closing: Vec<String> = self
            .by_arn
            .values()
            .filter(|s| s.disabled_at.is_none() && !enabled.contains_key(&s.arn))
            .map(|s| s.arn.clone())
            .collect();
        for arn in closing {
            if let Some(s) = self.by_arn.get_mut(&arn) {
                s.disabled_at = Some(super::now_secs());
                s.last_seq = s.records.back().map(|r| r.seq);
                pending.streams.push(s.clone());
            }
        }
        for s in self.by_arn.values_mut() {
            while s
                .records
                .front()
                .is_some_and(|r| r.at < now - RETENTION_SECS)
            {
                s.records.pop_front();
                pending.trim_before = Some(now - RETENTION_SECS);
            }
        }
        let expired: Vec<String> = self
            .by_arn
            .values()
            .filter(|s| s.disabled_at.is_some_and(|d| d < now - RETENTION_SECS))
            .map(|s| s.arn.clone())
            .collect();
        for arn in expired {
            self.by_arn.remove(&arn);
            pending.removed.push(arn);
        }
    }

    /// The stream records of a request's changes (`tables` still holds the items before them).
    pub fn records_for(
        &mut self,
        tables: &Tables,
        changes: &[Change],
        by_ttl: bool,
        pending: &mut Pending,
    ) {
        let at = super::now_secs();
        for c in changes {
            let (key, pk, new) = match c {
                Change::Put {
                    meta_key, pk, item, ..
                } => (meta_key, pk, Some(item)),
                Change::Delete { meta_key, pk, .. } => (meta_key, pk, None),
            };
            let Some(table) = tables.get(key) else {
                continue;
            };
            let Some(arn) = enabled_arn(&table.meta) else {
                continue;
            };
            if !self.by_arn.contains_key(&arn) {
                // The table's stream, first written to: registered now (the full reconcile
                // runs with the Streams API's reads, not on every write).
                let label = table.meta.stream_label.clone().unwrap_or_default();
                let s = new_stream(&table.meta, arn.clone(), label, self.next_seq);
                pending.streams.push(s.clone());
                self.by_arn.insert(arn.clone(), s);
            }
            let Some(stream) = self.by_arn.get(&arn) else {
                continue;
            };
            let old = table.items.get(pk);
            let seq = self.next_seq;
            if let Some(record) =
                build_record(&table.meta, &stream.view_type, old, new, seq, at, by_ttl)
            {
                self.next_seq += 1;
                pending
                    .records
                    .push((arn, StoredRecord { seq, at, record }));
            }
        }
    }

    /// Applies a committed [`Pending`] to memory.
    pub fn apply(&mut self, pending: Pending) {
        for (arn, r) in pending.records {
            if let Some(s) = self.by_arn.get_mut(&arn) {
                s.records.push_back(r);
            }
        }
    }

    pub fn get(&self, arn: &str) -> Result<&Stream, AwsError> {
        self.by_arn.get(arn).ok_or_else(|| not_found(arn))
    }
}

/// Writes a [`Pending`] in the caller's transaction.
pub fn write_pending(tx: &Transaction<'_>, p: &Pending) -> rusqlite::Result<()> {
    for s in &p.streams {
        let data = serde_json::to_string(s)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(e.into()))?;
        tx.execute(
            "INSERT INTO dynamodb_streams(arn, data) VALUES (?1, ?2)
             ON CONFLICT(arn) DO UPDATE SET data = excluded.data",
            params![s.arn, data],
        )?;
    }
    for arn in &p.removed {
        tx.execute("DELETE FROM dynamodb_streams WHERE arn = ?1", params![arn])?;
        tx.execute(
            "DELETE FROM dynamodb_stream_records WHERE arn = ?1",
            params![arn],
        )?;
    }
    if let Some(before) = p.trim_before {
        tx.execute(
            "DELETE FROM dynamodb_stream_records WHERE at < ?1",
            params![before],
        )?;
    }
    for (arn, r) in &p.records {
        tx.execute(
            "INSERT INTO dynamodb_stream_records(arn, seq, at, data) VALUES (?1, ?2, ?3, ?4)",
            params![arn, r.seq as i64, r.at, r.record.to_string()],
        )?;
    }
    Ok(())
}

/// Rebuilds every stream and its records from the store.
pub fn load(conn: &Connection) -> rusqlite::Result<(Streams, Vec<String>)> {
    let mut streams = Streams::default();
    let mut problems = Vec::new();
    let mut stmt = conn.prepare("SELECT arn, data FROM dynamodb_streams")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (arn, data) = row?;
        match serde_json::from_str::<Stream>(&data) {
            Ok(s) => {
                streams.next_seq = streams.next_seq.max(s.first_seq);
                streams.by_arn.insert(arn, s);
            }
            Err(e) => problems.push(format!("stream {arn}: {e}")),
        }
    }
    let mut stmt =
        conn.prepare("SELECT arn, seq, at, data FROM dynamodb_stream_records ORDER BY seq")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, f64>(2)?,
            r.get::<_, String>(3)?,
        ))
    })?;
    for row in rows {
        let (arn, seq, at, data) = row?;
        let seq = seq.max(0) as u64;
        streams.next_seq = streams.next_seq.max(seq + 1);
        match (
            streams.by_arn.get_mut(&arn),
            serde_json::from_str::<Value>(&data),
        ) {
            (Some(s), Ok(record)) => s.records.push_back(StoredRecord { seq, at, record }),
            _ => problems.push(format!("stream record {seq} of {arn}")),
        }
    }
    Ok((streams, problems))
}

/// A shard iterator: where reading continues, opaque to clients.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Iterator {
    pub arn: String,
    pub shard_id: String,
    /// The first sequence number the next GetRecords may return.
    pub from_seq: u64,
    pub created_ms: i64,
}

impl Iterator {
    pub fn encode(&self) -> String {
        let raw = format!(
            "{}|{}|{}|{}",
            self.created_ms, self.from_seq, self.shard_id, self.arn
        );
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
    }

    pub fn decode(text: &str) -> Result<Iterator, AwsError> {
        let invalid = || validation("Invalid ShardIterator");
        let raw = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(text)
            .map_err(|_| invalid())?;
        let raw = String::from_utf8(raw).map_err(|_| invalid())?;
        let mut parts = raw.splitn(4, '|');
        let created_ms = parts
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(invalid)?;
        let from_seq = parts
            .next()
            .and_then(|p| p.parse().ok())
            .ok_or_else(invalid)?;
        let shard_id = parts.next().ok_or_else(invalid)?.to_string();
        let arn = parts.next().ok_or_else(invalid)?.to_string();
        Ok(Iterator {
            arn,
            shard_id,
            from_seq,
            created_ms,
        })
    }

    /// DynamoDB Streams' refusal of an iterator older than 15 minutes.
    pub fn check_fresh(&self, now_ms: i64) -> Result<(), AwsError> {
        if now_ms - self.created_ms <= ITERATOR_TTL_MS {
            return Ok(());
        }
        let fmt = |ms: i64| {
            chrono::DateTime::from_timestamp_millis(ms)
                .map(|t| t.format("%a %b %d %H:%M:%S UTC %Y").to_string())
                .unwrap_or_default()
        };
        Err(AwsError::bad_request(
            "ExpiredIteratorException",
            format!(
                "Iterator expired. The iterator was created at time {} while right now it is {} which is further in the future than the tolerated delay of {ITERATOR_TTL_MS} milliseconds.",
                fmt(self.created_ms),
                fmt(now_ms)
            ),
        ))
    }
}

/// Where GetShardIterator positions a new iterator.
pub fn start_position(
    stream: &Stream,
    next_seq: u64,
    kind: &str,
    seq: Option<&str>,
) -> Result<u64, AwsError> {
    let at = |s: Option<&str>| -> Result<u64, AwsError> {
        let s = s.ok_or_else(|| {
            validation(format!(
                "Must specify a sequence number for iterator type {kind}"
            ))
        })?;
        let n = parse_seq(s).ok_or_else(|| {
            validation(format!(
                "1 validation error detected: Value '{s}' at 'sequenceNumber' failed to satisfy constraint: Member must satisfy regular expression pattern: [0-9]+ and be a sequence number of this shard"
            ))
        })?;
        if n < stream.first_seq || n >= next_seq {
            return Err(validation(format!(
                "Invalid SequenceNumber {s} for shard {}",
                stream.shard_id
            )));
        }
        // Sequence numbers are shared by all streams: this shard's are its records'.
        if !stream.records.iter().any(|r| r.seq == n) {
            return Err(if stream.records.front().is_none_or(|r| n < r.seq) {
                AwsError::bad_request(
                    "TrimmedDataAccessException",
                    format!(
                        "The operation attempted to read past the oldest stream record in a shard: {s}"
                    ),
                )
            } else {
                validation(format!(
                    "Invalid SequenceNumber {s} for shard {}",
                    stream.shard_id
                ))
            });
        }
        Ok(n)
    };
    match kind {
        "TRIM_HORIZON" => Ok(stream.first_seq),
        "LATEST" => Ok(stream.last_seq.map_or(next_seq, |l| l + 1)),
        "AT_SEQUENCE_NUMBER" => at(seq),
        "AFTER_SEQUENCE_NUMBER" => at(seq).map(|n| n + 1),
        other => Err(validation(format!(
            "1 validation error detected: Value '{other}' at 'shardIteratorType' failed to satisfy constraint: Member must satisfy enum value set: [AFTER_SEQUENCE_NUMBER, LATEST, AT_SEQUENCE_NUMBER, TRIM_HORIZON]"
        ))),
    }
}

/// The records an iterator reads (at most `limit`) and where the next read starts; `None` for
/// the next iterator once a closed shard has been read to its end.
pub fn read(stream: &Stream, it: &Iterator, limit: usize) -> (Vec<Value>, Option<u64>) {
    let records: Vec<&StoredRecord> = stream
        .records
        .iter()
        .filter(|r| r.seq >= it.from_seq)
        .take(limit)
        .collect();
    let next = records.last().map_or(it.from_seq, |r| r.seq + 1);
    let at_end = stream.records.back().is_none_or(|r| next > r.seq);
    let next = if stream.disabled_at.is_some() && at_end {
        None
    } else {
        Some(next)
    };
    (
        records.into_iter().map(|r| r.record.clone()).collect(),
        next,
    )
}

/// DescribeStream's `StreamDescription`.
pub fn description(s: &Stream) -> Value {
    let mut range = json!({"StartingSequenceNumber": seq_text(s.first_seq)});
    if s.disabled_at.is_some() {
        range["EndingSequenceNumber"] = json!(seq_text(s.last_seq.unwrap_or(s.first_seq)));
    }
    json!({
        "StreamArn": s.arn,
        "StreamLabel": s.label,
        "StreamStatus": if s.disabled_at.is_some() { "DISABLED" } else { "ENABLED" },
        "StreamViewType": s.view_type,
        "CreationRequestDateTime": s.created,
        "TableName": s.table,
        "KeySchema": s.key_schema,
        "Shards": [{"ShardId": s.shard_id, "SequenceNumberRange": range}],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::dynamodb::value::AttrValue;

    fn meta() -> TableMeta {
        serde_json::from_value(json!({
            "name": "t", "region": "us-east-1", "account_id": "000000000000", "table_id": "x",
            "created": 0.0, "attribute_definitions": [{"AttributeName": "id", "AttributeType": "S"}],
            "key_schema": [{"AttributeName": "id", "KeyType": "HASH"}], "billing_mode": "PAY_PER_REQUEST",
            "throughput": {"ReadCapacityUnits": 0, "WriteCapacityUnits": 0},
            "last_increase": null, "last_decrease": null, "pay_per_request_since": null,
            "gsis": [], "lsis": [], "stream": {"StreamEnabled": true, "StreamViewType": "NEW_AND_OLD_IMAGES"},
            "stream_label": "2026-01-02T03:04:05.678", "sse": null, "tags": [], "table_class": "STANDARD",
            "deletion_protection": false, "ttl_attribute": null, "pitr_enabled": false
        }))
        .expect("meta")
    }

    fn item(id: &str, v: &str) -> Item {
        let mut i = Item::new();
        i.insert(
            "id".into(),
            AttrValue::from_json(&json!({"S": id})).expect("id"),
        );
        i.insert(
            "v".into(),
            AttrValue::from_json(&json!({"S": v})).expect("v"),
        );
        i
    }

    #[test]
    fn records_follow_the_view_type_and_aws_shape() {
        let m = meta();
        let (a, b) = (item("Fred", "1"), item("Fred", "2"));
        let r = build_record(&m, "KEYS_ONLY", None, Some(&a), 1, 10.5, false).expect("insert");
        assert_eq!(r["eventName"], "INSERT");
        assert_eq!(r["eventSource"], "aws:dynamodb");
        assert_eq!(r["dynamodb"]["Keys"], json!({"id": {"S": "Fred"}}));
        assert!(r["dynamodb"].get("NewImage").is_none());
        assert_eq!(r["dynamodb"]["SizeBytes"], 6);
        assert_eq!(r["dynamodb"]["SequenceNumber"], "100000000000000000001");
        let r = build_record(&m, "NEW_AND_OLD_IMAGES", Some(&a), Some(&b), 2, 1.0, false)
            .expect("modify");
        assert_eq!(r["eventName"], "MODIFY");
        assert_eq!(r["dynamodb"]["OldImage"]["v"], json!({"S": "1"}));
        assert_eq!(r["dynamodb"]["NewImage"]["v"], json!({"S": "2"}));
        let r = build_record(&m, "OLD_IMAGE", Some(&a), None, 3, 1.0, true).expect("remove");
        assert_eq!(r["eventName"], "REMOVE");
        assert_eq!(r["userIdentity"]["PrincipalId"], "dynamodb.amazonaws.com");
        assert!(r["dynamodb"].get("NewImage").is_none());
        // A write that changes nothing records nothing.
        assert!(build_record(&m, "NEW_IMAGE", Some(&a), Some(&a), 4, 1.0, false).is_none());
    }

    #[test]
    fn streams_follow_their_tables_and_expire_after_24_hours() {
        let m = meta();
        let arn = m.stream_arn().expect("arn");
        let mut tables = Tables::new();
        tables.insert(
            (m.region.clone(), m.name.clone()),
            crate::dynamodb::state::Table::new(m.clone()),
        );
        let mut st = Streams::default();
        let now = super::super::now_secs();
        let mut p = Pending::default();
        st.reconcile(&tables, now, &mut p);
        assert_eq!(p.streams.len(), 1);
        assert!(st.get(&arn).expect("registered").disabled_at.is_none());
        st.by_arn
            .get_mut(&arn)
            .expect("s")
            .records
            .push_back(StoredRecord {
                seq: 0,
                at: now - RETENTION_SECS - 1.0,
                record: json!(0),
            });
        // The table goes: its stream closes; a day later, its old record and then the stream go.
        tables.clear();
        let mut p = Pending::default();
        st.reconcile(&tables, now, &mut p);
        assert!(st.get(&arn).expect("kept").disabled_at.is_some());
        assert!(st.get(&arn).expect("kept").records.is_empty());
        assert!(p.trim_before.is_some());
        let mut p = Pending::default();
        st.reconcile(&tables, now + RETENTION_SECS + 1.0, &mut p);
        assert!(st.get(&arn).is_err());
        assert_eq!(p.removed, vec![arn]);
    }

    #[test]
    fn iterators_round_trip_expire_and_read_in_order() {
        let it = Iterator {
            arn: "arn:aws:dynamodb:us-east-1:0:table/t/stream/x|y".into(),
            shard_id: "shardId-1".into(),
            from_seq: 7,
            created_ms: 1_000,
        };
        assert_eq!(Iterator::decode(&it.encode()).expect("decode"), it);
        assert!(Iterator::decode("garbage!").is_err());
        assert!(it.check_fresh(1_000 + ITERATOR_TTL_MS).is_ok());
        let e = it
            .check_fresh(2_000 + ITERATOR_TTL_MS)
            .expect_err("expired");
        assert_eq!(e.code, "ExpiredIteratorException");

        let m = meta();
        let mut s = new_stream(&m, "arn".into(), "2026-01-02T03:04:05.678".into(), 5);
        for seq in 5..10 {
            s.records.push_back(StoredRecord {
                seq,
                at: 0.0,
                record: json!(seq),
            });
        }
        assert_eq!(start_position(&s, 10, "TRIM_HORIZON", None).ok(), Some(5));
        assert_eq!(start_position(&s, 10, "LATEST", None).ok(), Some(10));
        let seven = seq_text(7);
        assert_eq!(
            start_position(&s, 10, "AFTER_SEQUENCE_NUMBER", Some(&seven)).ok(),
            Some(8)
        );
        assert!(start_position(&s, 10, "AT_SEQUENCE_NUMBER", None).is_err());
        assert!(start_position(&s, 10, "AT_SEQUENCE_NUMBER", Some(&seq_text(42))).is_err());
        let from = |from_seq| Iterator {
            from_seq,
            ..it.clone()
        };
        let (got, next) = read(&s, &from(6), 2);
        assert_eq!(got, vec![json!(6), json!(7)]);
        assert_eq!(next, Some(8));
        // An open shard always has a next iterator; a closed one read to its end has none.
        assert_eq!(read(&s, &from(10), 5), (vec![], Some(10)));
        s.disabled_at = Some(1.0);
        s.last_seq = Some(9);
        assert_eq!(read(&s, &from(8), 5).1, None);
        assert_eq!(read(&s, &from(8), 1).1, Some(9));
        assert_eq!(description(&s)["StreamStatus"], "DISABLED");
    }
}
