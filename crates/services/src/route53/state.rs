//! Route 53's records in memory, each written through to the store as one document: hosted
//! zones (with their record sets), health checks and the changes GetChange reports.

use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

pub const MIGRATIONS: &[&str] = &[
    "CREATE TABLE route53_zones (
        id TEXT PRIMARY KEY,
        doc TEXT NOT NULL
    );",
    "CREATE TABLE route53_health_checks (
        id TEXT PRIMARY KEY,
        doc TEXT NOT NULL
    );
    CREATE TABLE route53_changes (
        id TEXT PRIMARY KEY,
        doc TEXT NOT NULL
    );",
    "CREATE TABLE route53_caller_references (
        reference TEXT PRIMARY KEY
    );
    INSERT OR IGNORE INTO route53_caller_references(reference)
        SELECT json_extract(doc, '$.caller_reference') FROM route53_zones;",
];

/// One resource record set; `name` is normalized (lower case, trailing dot, `\052` for `*`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordSet {
    pub name: String,
    pub rtype: String,
    pub ttl: Option<i64>,
    pub values: Vec<String>,
    /// SetIdentifier of a weighted, latency, failover, geolocation or multivalue record.
    #[serde(default)]
    pub set_identifier: Option<String>,
    /// The other members in the API's names (AliasTarget, Weight, Region, Failover,
    /// GeoLocation, MultiValueAnswer, HealthCheckId, ...), kept as given.
    #[serde(default)]
    pub routing: Map<String, Value>,
}

impl RecordSet {
    pub fn simple(name: &str, rtype: &str, ttl: i64, values: Vec<String>) -> RecordSet {
        RecordSet {
            name: name.to_string(),
            rtype: rtype.to_string(),
            ttl: Some(ttl),
            values,
            set_identifier: None,
            routing: Map::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostedZone {
    /// Bare id, `Z...`.
    pub id: String,
    /// Normalized, with the trailing dot.
    pub name: String,
    pub caller_reference: String,
    pub comment: String,
    pub private: bool,
    /// `(region, vpc id)` of each associated VPC (private zones).
    pub vpcs: Vec<(String, String)>,
    pub name_servers: Vec<String>,
    pub records: Vec<RecordSet>,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    /// Milliseconds since the epoch: ListHostedZones answers in creation order.
    #[serde(default)]
    pub created_ms: i64,
    /// The zone's query logging configuration, if any: `(id, CloudWatch Logs group ARN)`.
    /// Stored and reported; no query reaches a local zone, so nothing is logged.
    #[serde(default)]
    pub query_logging: Option<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HealthCheck {
    pub id: String,
    pub caller_reference: String,
    /// HealthCheckConfig in the API's member names, AWS's defaults filled in.
    pub config: Map<String, Value>,
    pub version: i64,
    #[serde(default)]
    pub tags: BTreeMap<String, String>,
    #[serde(default)]
    pub created_ms: i64,
}

/// A change batch (or zone operation) as GetChange reports it: PENDING until it is first
/// looked at, INSYNC from then on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Change {
    pub id: String,
    pub submitted_at: String,
    pub comment: Option<String>,
    pub insync: bool,
}

pub type Zones = BTreeMap<String, HostedZone>;

#[derive(Debug, Clone, Default)]
pub struct State {
    pub zones: Zones,
    pub health_checks: BTreeMap<String, HealthCheck>,
    pub changes: BTreeMap<String, Change>,
    /// Every CallerReference a zone was ever created with: AWS never accepts one twice, even
    /// after the zone is deleted.
    pub caller_references: std::collections::BTreeSet<String>,
}

/// Every row of one table, decoded; rows that no longer decode are reported, not fatal.
fn rows<T: serde::de::DeserializeOwned>(
    c: &Connection,
    table: &str,
    problems: &mut Vec<String>,
) -> rusqlite::Result<BTreeMap<String, T>> {
    let mut out = BTreeMap::new();
    let mut stmt = c.prepare(&format!("SELECT id, doc FROM {table}"))?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (id, doc) = row?;
        match serde_json::from_str::<T>(&doc) {
            Ok(v) => {
                out.insert(id, v);
            }
            Err(e) => problems.push(format!("{table} {id}: {e}")),
        }
    }
    Ok(out)
}

pub fn load(c: &Connection) -> rusqlite::Result<(State, Vec<String>)> {
    let mut problems = Vec::new();
    let state = State {
        zones: rows(c, "route53_zones", &mut problems)?,
        health_checks: rows(c, "route53_health_checks", &mut problems)?,
        changes: rows(c, "route53_changes", &mut problems)?,
        caller_references: {
            let mut stmt = c.prepare("SELECT reference FROM route53_caller_references")?;
            stmt.query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<_>>()?
        },
    };
    Ok((state, problems))
}

fn put<T: Serialize>(tx: &Transaction<'_>, table: &str, id: &str, v: &T) -> rusqlite::Result<()> {
    let doc = serde_json::to_string(v)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    tx.execute(
        &format!("INSERT OR REPLACE INTO {table}(id, doc) VALUES (?1, ?2)"),
        params![id, doc],
    )?;
    Ok(())
}

pub fn save(tx: &Transaction<'_>, zone: &HostedZone) -> rusqlite::Result<()> {
    put(tx, "route53_zones", &zone.id, zone)
}

pub fn delete(tx: &Transaction<'_>, id: &str) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM route53_zones WHERE id = ?1", params![id])?;
    Ok(())
}

pub fn save_health_check(tx: &Transaction<'_>, hc: &HealthCheck) -> rusqlite::Result<()> {
    put(tx, "route53_health_checks", &hc.id, hc)
}

pub fn delete_health_check(tx: &Transaction<'_>, id: &str) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM route53_health_checks WHERE id = ?1",
        params![id],
    )?;
    Ok(())
}

pub fn save_change(tx: &Transaction<'_>, change: &Change) -> rusqlite::Result<()> {
    put(tx, "route53_changes", &change.id, change)
}

pub fn delete_change(tx: &Transaction<'_>, id: &str) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM route53_changes WHERE id = ?1", params![id])?;
    Ok(())
}

pub fn save_caller_reference(tx: &Transaction<'_>, reference: &str) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR IGNORE INTO route53_caller_references(reference) VALUES (?1)",
        params![reference],
    )?;
    Ok(())
}
