//! Cloud Map records in memory per region (namespaces, services with their instances,
//! operations), each written through to the store as one JSON document. A mutation works on a
//! copy of the region and names the records it touched, as ECS's state does.

use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub const MIGRATIONS: &[&str] = &["CREATE TABLE servicediscovery_records (
        region TEXT NOT NULL,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, kind, key)
    );"];

pub type Tags = Vec<(String, String)>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Namespace {
    pub id: String,
    pub name: String,
    /// DNS_PRIVATE, DNS_PUBLIC or HTTP.
    pub kind: String,
    pub description: Option<String>,
    pub creator_request_id: Option<String>,
    pub vpc: Option<String>,
    pub hosted_zone_id: Option<String>,
    pub soa_ttl: Option<i64>,
    pub created_at: f64,
    pub tags: Tags,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Instance {
    pub id: String,
    pub creator_request_id: Option<String>,
    pub attributes: BTreeMap<String, String>,
    /// HEALTHY / UNHEALTHY, set by UpdateInstanceCustomHealthStatus or AWS_INIT_HEALTH_STATUS.
    pub health: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Service {
    pub id: String,
    pub name: String,
    pub namespace_id: String,
    pub description: Option<String>,
    /// HTTP, DNS_HTTP or DNS.
    pub kind: String,
    pub dns_config: Option<Value>,
    pub health_check_config: Option<Value>,
    pub health_check_custom_config: Option<Value>,
    pub creator_request_id: Option<String>,
    pub created_at: f64,
    pub instances: BTreeMap<String, Instance>,
    /// Bumped whenever instances change (DiscoverInstancesRevision).
    pub revision: i64,
    pub tags: Tags,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Operation {
    pub id: String,
    pub kind: String,
    pub created_at: f64,
    /// `(NAMESPACE|SERVICE|INSTANCE, id)`.
    pub targets: Vec<(String, String)>,
}

#[derive(Debug, Clone, Default)]
pub struct Region {
    pub namespaces: BTreeMap<String, Namespace>,
    pub services: BTreeMap<String, Service>,
    pub operations: BTreeMap<String, Operation>,
    pub dirty: BTreeSet<(&'static str, String)>,
}

pub const NAMESPACE: &str = "namespace";
pub const SERVICE: &str = "service";
pub const OPERATION: &str = "operation";

impl Region {
    pub fn touch(&mut self, kind: &'static str, key: &str) {
        self.dirty.insert((kind, key.to_string()));
    }

    fn doc(&self, kind: &str, key: &str) -> serde_json::Result<Option<String>> {
        match kind {
            NAMESPACE => self
                .namespaces
                .get(key)
                .map(serde_json::to_string)
                .transpose(),
            SERVICE => self
                .services
                .get(key)
                .map(serde_json::to_string)
                .transpose(),
            _ => self
                .operations
                .get(key)
                .map(serde_json::to_string)
                .transpose(),
        }
    }
}

pub type Regions = HashMap<String, Region>;

pub fn save_dirty(tx: &Transaction<'_>, region: &str, r: &Region) -> rusqlite::Result<()> {
    for (kind, key) in &r.dirty {
        match r
            .doc(kind, key)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?
        {
            Some(doc) => tx.execute(
                "INSERT OR REPLACE INTO servicediscovery_records(region, kind, key, doc) VALUES (?1, ?2, ?3, ?4)",
                params![region, kind, key, doc],
            )?,
            None => tx.execute(
                "DELETE FROM servicediscovery_records WHERE region = ?1 AND kind = ?2 AND key = ?3",
                params![region, kind, key],
            )?,
        };
    }
    Ok(())
}

pub fn load(c: &Connection) -> rusqlite::Result<(Regions, Vec<String>)> {
    let mut regions: Regions = HashMap::new();
    let mut problems = Vec::new();
    let mut stmt = c.prepare("SELECT region, kind, key, doc FROM servicediscovery_records")?;
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
        let r = regions.entry(region.clone()).or_default();
        let outcome = match kind.as_str() {
            NAMESPACE => serde_json::from_str(&doc).map(|v| {
                r.namespaces.insert(key.clone(), v);
            }),
            SERVICE => serde_json::from_str(&doc).map(|v| {
                r.services.insert(key.clone(), v);
            }),
            OPERATION => serde_json::from_str(&doc).map(|v| {
                r.operations.insert(key.clone(), v);
            }),
            _ => Ok(()),
        };
        if let Err(e) = outcome {
            problems.push(format!("{kind} {region}/{key}: {e}"));
        }
    }
    Ok((regions, problems))
}
