//! EFS records in memory per region (file systems with their policies and settings, mount
//! targets, access points), each written through to the store as one JSON document. A mutation
//! works on a copy of the region and names the records it touched.

use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};

pub const MIGRATIONS: &[&str] = &["CREATE TABLE efs_records (
        region TEXT NOT NULL,
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, kind, id)
    );"];

pub type Tags = Vec<(String, String)>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSystem {
    pub id: String,
    pub creation_token: String,
    pub created_at: f64,
    /// creating (until its first Describe), available.
    pub state: String,
    pub performance_mode: String,
    pub throughput_mode: String,
    pub provisioned_mibps: Option<f64>,
    pub encrypted: bool,
    pub kms_key_id: Option<String>,
    pub availability_zone: Option<(String, String)>,
    /// ENABLED / DISABLED.
    pub backup: String,
    pub replication_overwrite_protection: String,
    pub policy: Option<String>,
    /// LifecyclePolicies as the API shapes them.
    pub lifecycle: Vec<Value>,
    pub tags: Tags,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MountTarget {
    pub id: String,
    pub file_system_id: String,
    pub subnet_id: String,
    pub vpc_id: String,
    pub availability_zone: String,
    pub availability_zone_id: String,
    pub ip_address: String,
    pub network_interface_id: String,
    pub security_groups: Vec<String>,
    /// creating (until its first Describe), available.
    pub state: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccessPoint {
    pub id: String,
    pub file_system_id: String,
    pub client_token: String,
    pub posix_user: Option<Value>,
    pub root_directory: Value,
    pub tags: Tags,
}

#[derive(Debug, Clone, Default)]
pub struct Region {
    pub file_systems: BTreeMap<String, FileSystem>,
    pub mount_targets: BTreeMap<String, MountTarget>,
    pub access_points: BTreeMap<String, AccessPoint>,
    pub dirty: BTreeSet<(&'static str, String)>,
}

pub const FILE_SYSTEM: &str = "file-system";
pub const MOUNT_TARGET: &str = "mount-target";
pub const ACCESS_POINT: &str = "access-point";

impl Region {
    pub fn touch(&mut self, kind: &'static str, id: &str) {
        self.dirty.insert((kind, id.to_string()));
    }

    fn doc(&self, kind: &str, id: &str) -> serde_json::Result<Option<String>> {
        match kind {
            FILE_SYSTEM => self.file_systems.get(id).map(serde_json::to_string),
            MOUNT_TARGET => self.mount_targets.get(id).map(serde_json::to_string),
            _ => self.access_points.get(id).map(serde_json::to_string),
        }
        .transpose()
    }
}

pub type Regions = HashMap<String, Region>;

pub fn save_dirty(tx: &Transaction<'_>, region: &str, r: &Region) -> rusqlite::Result<()> {
    for (kind, id) in &r.dirty {
        match r
            .doc(kind, id)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?
        {
            Some(doc) => tx.execute(
                "INSERT OR REPLACE INTO efs_records(region, kind, id, doc) VALUES (?1, ?2, ?3, ?4)",
                params![region, kind, id, doc],
            )?,
            None => tx.execute(
                "DELETE FROM efs_records WHERE region = ?1 AND kind = ?2 AND id = ?3",
                params![region, kind, id],
            )?,
        };
    }
    Ok(())
}

pub fn load(c: &Connection) -> rusqlite::Result<(Regions, Vec<String>)> {
    let mut regions: Regions = HashMap::new();
    let mut problems = Vec::new();
    let mut stmt = c.prepare("SELECT region, kind, id, doc FROM efs_records")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
        ))
    })?;
    for row in rows {
        let (region, kind, id, doc) = row?;
        let r = regions.entry(region.clone()).or_default();
        let outcome = match kind.as_str() {
            FILE_SYSTEM => serde_json::from_str(&doc).map(|v| {
                r.file_systems.insert(id.clone(), v);
            }),
            MOUNT_TARGET => serde_json::from_str(&doc).map(|v| {
                r.mount_targets.insert(id.clone(), v);
            }),
            ACCESS_POINT => serde_json::from_str(&doc).map(|v| {
                r.access_points.insert(id.clone(), v);
            }),
            _ => Ok(()),
        };
        if let Err(e) = outcome {
            problems.push(format!("{kind} {region}/{id}: {e}"));
        }
    }
    Ok((regions, problems))
}
