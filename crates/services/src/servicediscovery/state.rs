//! Cloud Map records in memory per region (namespaces, services with their instances,
//! operations), each written through to the store as one JSON document. A mutation works on a
//! copy of the region and names the records it touched, as ECS's state does.

use crate::regional::{Table, records_by_kind};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

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
}

/// The store table every record lives in.
pub const TABLE: Table = Table {
    name: "servicediscovery_records",
    key: "key",
};

records_by_kind!(Region {
    namespaces: NAMESPACE,
    services: SERVICE,
    operations: OPERATION
});
