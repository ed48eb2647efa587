//! Scalable targets, their scaling policies and scheduled actions, per region, keyed
//! `namespace|resource|dimension` (a target) and `<target key>|policy|<name>` /
//! `<target key>|scheduled|<name>` (what hangs off it), each written through as one document.

use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

pub const MIGRATIONS: &[&str] = &["CREATE TABLE appautoscaling_records (
        region TEXT NOT NULL,
        key TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, key)
    );"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Kind {
    Target,
    Policy,
    Scheduled,
}

/// One record in the API's shape (member names, timestamps as epoch seconds).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub kind: Kind,
    pub body: Value,
    #[serde(default)]
    pub tags: Vec<(String, String)>,
}

#[derive(Debug, Default)]
pub struct Region {
    pub records: BTreeMap<String, Record>,
}

pub type Regions = HashMap<String, Region>;

pub fn load(c: &Connection) -> rusqlite::Result<(Regions, Vec<String>)> {
    let mut regions = Regions::new();
    let mut problems = Vec::new();
    let mut stmt = c.prepare("SELECT region, key, doc FROM appautoscaling_records")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    for row in rows {
        let (region, key, doc) = row?;
        match serde_json::from_str::<Record>(&doc) {
            Ok(rec) => {
                regions.entry(region).or_default().records.insert(key, rec);
            }
            Err(e) => problems.push(format!("{key}: {e}")),
        }
    }
    Ok((regions, problems))
}

/// Writes each touched key: saved when present, deleted when gone.
pub fn save(
    tx: &Transaction<'_>,
    region: &str,
    docs: &[(String, Option<String>)],
) -> rusqlite::Result<()> {
    for (key, doc) in docs {
        match doc {
            Some(doc) => tx.execute(
                "INSERT OR REPLACE INTO appautoscaling_records(region, key, doc) VALUES (?1, ?2, ?3)",
                params![region, key, doc],
            )?,
            None => tx.execute(
                "DELETE FROM appautoscaling_records WHERE region = ?1 AND key = ?2",
                params![region, key],
            )?,
        };
    }
    Ok(())
}
