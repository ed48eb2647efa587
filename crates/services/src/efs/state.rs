//! EFS records in memory per region (file systems with their policies and settings, mount
//! targets, access points), each written through to the store as one JSON document. A mutation
//! works on a copy of the region and names the records it touched.

use crate::regional::{Table, records_by_kind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

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
}

/// The store table every record lives in.
pub const TABLE: Table = Table {
    name: "efs_records",
    key: "id",
};

records_by_kind!(Region {
    file_systems: FILE_SYSTEM,
    mount_targets: MOUNT_TARGET,
    access_points: ACCESS_POINT
});
