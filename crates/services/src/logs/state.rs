//! Log groups and streams in memory per region, written through to the store; log events live
//! only in the store (`logs_events`), indexed for the stream- and group-ordered reads
//! GetLogEvents and FilterLogEvents make, so a chatty function does not grow the process.

use super::account::{self, AccountRecords};
use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use cumulo_wire::AwsError;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

pub const MIGRATIONS: &[&str] = &[
    "CREATE TABLE logs_groups (
        region TEXT NOT NULL,
        name TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, name)
    );
    CREATE TABLE logs_streams (
        region TEXT NOT NULL,
        grp TEXT NOT NULL,
        name TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, grp, name)
    );
    CREATE TABLE logs_events (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        region TEXT NOT NULL,
        grp TEXT NOT NULL,
        stream TEXT NOT NULL,
        ts INTEGER NOT NULL,
        ingestion INTEGER NOT NULL,
        message TEXT NOT NULL
    );
    CREATE INDEX logs_events_stream ON logs_events(region, grp, stream, ts, id);
    CREATE INDEX logs_events_group ON logs_events(region, grp, ts, id);",
    // Resource policies and query definitions (`account.rs`), one JSON document per row.
    "CREATE TABLE logs_account (
        region TEXT NOT NULL,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, kind, key)
    );",
];

/// A log group's settings (its streams are kept beside it, persisted as rows of their own).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogGroup {
    pub name: String,
    /// Milliseconds since the epoch.
    pub creation_time: i64,
    pub retention_in_days: Option<i64>,
    pub kms_key_id: Option<String>,
    pub log_group_class: String,
    pub tags: BTreeMap<String, String>,
    /// While set, DeleteLogGroup is refused (PutLogGroupDeletionProtection).
    #[serde(default)]
    pub deletion_protection: bool,
    /// Subscription filters by name (at most two); documents written before them have none.
    #[serde(default)]
    pub subscription_filters: BTreeMap<String, SubscriptionFilter>,
    #[serde(skip)]
    pub streams: BTreeMap<String, LogStream>,
}

impl LogGroup {
    /// Bytes of every event the group holds (what DescribeLogGroups reports as storedBytes).
    pub fn stored_bytes(&self) -> i64 {
        self.streams.values().map(|s| s.stored_bytes).sum()
    }
}

/// A PutSubscriptionFilter record, stored and reported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionFilter {
    pub filter_name: String,
    pub filter_pattern: String,
    pub destination_arn: String,
    pub role_arn: Option<String>,
    /// `ByLogStream` (AWS's default) or `Random`.
    pub distribution: String,
    pub apply_on_transformed_logs: bool,
    /// Milliseconds since the epoch.
    pub creation_time: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LogStream {
    pub name: String,
    pub creation_time: i64,
    pub first_event: Option<i64>,
    pub last_event: Option<i64>,
    pub last_ingestion: Option<i64>,
    /// How many PutLogEvents batches were accepted: the sequence token's source.
    pub uploads: u64,
    pub stored_bytes: i64,
}

impl LogStream {
    pub fn new(name: &str, now: i64) -> Self {
        LogStream {
            name: name.to_string(),
            creation_time: now,
            first_event: None,
            last_event: None,
            last_ingestion: None,
            uploads: 0,
            stored_bytes: 0,
        }
    }

    /// AWS's 56-digit sequence token; accepted and ignored on input, as AWS now does.
    pub fn sequence_token(&self) -> String {
        format!("{:056}", self.uploads)
    }
}

/// Region -> group name -> group, name-ordered (DescribeLogGroups lists in name order).
pub type Regions = HashMap<String, BTreeMap<String, LogGroup>>;

/// One stored log event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    pub id: i64,
    pub stream: String,
    pub timestamp: i64,
    pub ingestion_time: i64,
    pub message: String,
}

pub fn internal(e: impl std::fmt::Display) -> AwsError {
    AwsError::internal(e.to_string())
}

/// Loads every group and stream; rows that do not parse were not written by cumulo and are
/// reported, not fatal.
pub fn load(c: &Connection) -> rusqlite::Result<(Regions, Vec<String>)> {
    let mut regions: Regions = HashMap::new();
    let mut problems = Vec::new();
    let mut stmt = c.prepare("SELECT region, name, doc FROM logs_groups")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    for row in rows {
        let (region, name, doc) = row?;
        match serde_json::from_str::<LogGroup>(&doc) {
            Ok(g) => {
                regions.entry(region).or_default().insert(name, g);
            }
            Err(e) => problems.push(format!("log group {region}/{name}: {e}")),
        }
    }
    let mut stmt = c.prepare("SELECT region, grp, name, doc FROM logs_streams")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
        ))
    })?;
    for row in rows {
        let (region, grp, name, doc) = row?;
        let group = regions.get_mut(&region).and_then(|m| m.get_mut(&grp));
        match (group, serde_json::from_str::<LogStream>(&doc)) {
            (Some(g), Ok(s)) => {
                g.streams.insert(name, s);
            }
            (None, _) => problems.push(format!("log stream {region}/{grp}/{name}: no group")),
            (_, Err(e)) => problems.push(format!("log stream {region}/{grp}/{name}: {e}")),
        }
    }
    Ok((regions, problems))
}

fn to_doc<T: Serialize>(v: &T) -> rusqlite::Result<String> {
    serde_json::to_string(v).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

pub fn save_group(tx: &Transaction<'_>, region: &str, g: &LogGroup) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO logs_groups(region, name, doc) VALUES (?1, ?2, ?3)",
        params![region, g.name, to_doc(g)?],
    )?;
    Ok(())
}

pub fn save_account<T: Serialize>(
    tx: &Transaction<'_>,
    region: &str,
    kind: &str,
    key: &str,
    record: &T,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO logs_account(region, kind, key, doc) VALUES (?1, ?2, ?3, ?4)",
        params![region, kind, key, to_doc(record)?],
    )?;
    Ok(())
}

pub fn delete_account(
    tx: &Transaction<'_>,
    region: &str,
    kind: &str,
    key: &str,
) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM logs_account WHERE region = ?1 AND kind = ?2 AND key = ?3",
        params![region, kind, key],
    )?;
    Ok(())
}

/// Loads the resource policies and query definitions; unreadable rows are reported.
pub fn load_account(
    c: &Connection,
) -> rusqlite::Result<(HashMap<String, AccountRecords>, Vec<String>)> {
    let mut records = HashMap::new();
    let mut problems = Vec::new();
    let mut stmt = c.prepare("SELECT region, kind, key, doc FROM logs_account")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
        ))
    })?;
    for row in rows {
        let (region, kind, key, doc) = row?;
        let label = format!("{kind} {region}/{key}");
        if let Err(e) = account::load_row(&mut records, region, &kind, key, &doc) {
            problems.push(format!("{label}: {e}"));
        }
    }
    Ok((records, problems))
}

pub fn save_stream(
    tx: &Transaction<'_>,
    region: &str,
    group: &str,
    s: &LogStream,
) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO logs_streams(region, grp, name, doc) VALUES (?1, ?2, ?3, ?4)",
        params![region, group, s.name, to_doc(s)?],
    )?;
    Ok(())
}

/// Deletes a group with its streams and events.
pub fn delete_group(tx: &Transaction<'_>, region: &str, group: &str) -> rusqlite::Result<()> {
    for table in ["logs_groups", "logs_streams", "logs_events"] {
        let key = if table == "logs_groups" {
            "name"
        } else {
            "grp"
        };
        tx.execute(
            &format!("DELETE FROM {table} WHERE region = ?1 AND {key} = ?2"),
            params![region, group],
        )?;
    }
    Ok(())
}

pub fn delete_stream(
    tx: &Transaction<'_>,
    region: &str,
    group: &str,
    stream: &str,
) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM logs_streams WHERE region = ?1 AND grp = ?2 AND name = ?3",
        params![region, group, stream],
    )?;
    tx.execute(
        "DELETE FROM logs_events WHERE region = ?1 AND grp = ?2 AND stream = ?3",
        params![region, group, stream],
    )?;
    Ok(())
}

pub fn insert_event(
    tx: &Transaction<'_>,
    region: &str,
    group: &str,
    stream: &str,
    timestamp: i64,
    ingestion: i64,
    message: &str,
) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO logs_events(region, grp, stream, ts, ingestion, message)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![region, group, stream, timestamp, ingestion, message],
    )?;
    Ok(tx.last_insert_rowid())
}

/// Where a read is in the (timestamp, id) order events are read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cursor {
    pub timestamp: i64,
    pub id: i64,
}

/// A page of one stream's events in `[start, end)` time, strictly after (`forward`) or before
/// `cursor`, at most `limit`, always returned oldest first.
pub struct StreamQuery<'a> {
    pub region: &'a str,
    pub group: &'a str,
    pub stream: &'a str,
    pub start: i64,
    pub end: i64,
    pub cursor: Option<Cursor>,
    pub forward: bool,
    pub limit: usize,
}

fn row_event(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredEvent> {
    Ok(StoredEvent {
        id: r.get(0)?,
        stream: r.get(1)?,
        timestamp: r.get(2)?,
        ingestion_time: r.get(3)?,
        message: r.get(4)?,
    })
}

pub fn stream_events(c: &Connection, q: &StreamQuery<'_>) -> rusqlite::Result<Vec<StoredEvent>> {
    let (cmp, order) = if q.forward {
        (">", "ASC")
    } else {
        ("<", "DESC")
    };
    let (cts, cid) = match q.cursor {
        Some(c) => (c.timestamp, c.id),
        None if q.forward => (i64::MIN, i64::MIN),
        None => (i64::MAX, i64::MAX),
    };
    let sql = format!(
        "SELECT id, stream, ts, ingestion, message FROM logs_events
         WHERE region = ?1 AND grp = ?2 AND stream = ?3 AND ts >= ?4 AND ts < ?5
           AND (ts, id) {cmp} (?6, ?7)
         ORDER BY ts {order}, id {order} LIMIT ?8"
    );
    let mut stmt = c.prepare_cached(&sql)?;
    let rows = stmt.query_map(
        params![
            q.region,
            q.group,
            q.stream,
            q.start,
            q.end,
            cts,
            cid,
            q.limit as i64
        ],
        row_event,
    )?;
    let mut out = rows.collect::<rusqlite::Result<Vec<_>>>()?;
    if !q.forward {
        out.reverse();
    }
    Ok(out)
}

/// Up to `limit` events of a group in `[start, end)` after `cursor`, oldest first, across
/// every stream (FilterLogEvents narrows the streams afterwards).
pub fn group_events(
    c: &Connection,
    region: &str,
    group: &str,
    (start, end): (i64, i64),
    cursor: Option<Cursor>,
    limit: usize,
) -> rusqlite::Result<Vec<StoredEvent>> {
    let (cts, cid) = cursor.map_or((i64::MIN, i64::MIN), |c| (c.timestamp, c.id));
    let mut stmt = c.prepare_cached(
        "SELECT id, stream, ts, ingestion, message FROM logs_events
         WHERE region = ?1 AND grp = ?2 AND ts >= ?3 AND ts < ?4 AND (ts, id) > (?5, ?6)
         ORDER BY ts ASC, id ASC LIMIT ?7",
    )?;
    let rows = stmt.query_map(
        params![region, group, start, end, cts, cid, limit as i64],
        row_event,
    )?;
    rows.collect()
}
