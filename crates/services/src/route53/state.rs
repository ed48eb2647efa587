//! Hosted zones (with their record sets) in memory, each written through to the store as one
//! document.

use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const MIGRATIONS: &[&str] = &["CREATE TABLE route53_zones (
        id TEXT PRIMARY KEY,
        doc TEXT NOT NULL
    );"];

/// One resource record set; `name` is normalized (lower case, trailing dot, `\052` for `*`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordSet {
    pub name: String,
    pub rtype: String,
    pub ttl: Option<i64>,
    pub values: Vec<String>,
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
}

pub type Zones = BTreeMap<String, HostedZone>;

pub fn load(c: &Connection) -> rusqlite::Result<(Zones, Vec<String>)> {
    let mut zones = Zones::new();
    let mut problems = Vec::new();
    let mut stmt = c.prepare("SELECT id, doc FROM route53_zones")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (id, doc) = row?;
        match serde_json::from_str::<HostedZone>(&doc) {
            Ok(z) => {
                zones.insert(id, z);
            }
            Err(e) => problems.push(format!("hosted zone {id}: {e}")),
        }
    }
    Ok((zones, problems))
}

pub fn save(tx: &Transaction<'_>, zone: &HostedZone) -> rusqlite::Result<()> {
    let doc = serde_json::to_string(zone)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    tx.execute(
        "INSERT OR REPLACE INTO route53_zones(id, doc) VALUES (?1, ?2)",
        params![zone.id, doc],
    )?;
    Ok(())
}

pub fn delete(tx: &Transaction<'_>, id: &str) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM route53_zones WHERE id = ?1", params![id])?;
    Ok(())
}
