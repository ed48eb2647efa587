//! ECS records in memory per region, each written through to the store as one JSON document
//! keyed by its kind and key. A mutation works on a copy of the region, names the records it
//! touched, and the copy replaces the region only once those records are committed.

use crate::regional::{Table, Touched, records_by_kind};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

pub const MIGRATIONS: &[&str] = &["CREATE TABLE ecs_records (
        region TEXT NOT NULL,
        kind TEXT NOT NULL,
        key TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, kind, key)
    );"];

pub type Tags = Vec<(String, String)>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    pub name: String,
    /// ACTIVE, or INACTIVE once deleted (AWS keeps describing a deleted cluster).
    pub status: String,
    pub capacity_providers: Vec<String>,
    /// `[{capacityProvider, weight, base}]` as the API takes it.
    pub default_strategy: Vec<Value>,
    /// `[{name, value}]`.
    pub settings: Vec<Value>,
    pub configuration: Option<Value>,
    pub service_connect_defaults: Option<Value>,
    pub tags: Tags,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskDefinition {
    pub family: String,
    pub revision: i64,
    /// ACTIVE, INACTIVE (deregistered) or DELETE_IN_PROGRESS (deleted).
    pub status: String,
    /// The registration's members (containerDefinitions, cpu, memory, networkMode, ...) as
    /// the API takes and answers them.
    pub body: Map<String, Value>,
    pub compatibilities: Vec<String>,
    pub registered_at: f64,
    pub deregistered_at: Option<f64>,
    pub tags: Tags,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Deployment {
    /// `ecs-svc/<19 digits>`.
    pub id: String,
    /// PRIMARY or ACTIVE (an older deployment still draining).
    pub status: String,
    pub task_definition: String,
    pub desired: i64,
    pub created_at: f64,
    pub updated_at: f64,
    pub launch_type: Option<String>,
    pub capacity_provider_strategy: Vec<Value>,
    pub platform_version: Option<String>,
    pub network_configuration: Option<Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Event {
    pub id: String,
    pub created_at: f64,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Service {
    pub name: String,
    pub cluster: String,
    /// ACTIVE, or DRAINING from DeleteService on (INACTIVE once its tasks have stopped).
    pub status: String,
    pub deleted_at: Option<f64>,
    pub task_definition: String,
    pub desired: i64,
    pub launch_type: Option<String>,
    pub capacity_provider_strategy: Vec<Value>,
    pub platform_version: Option<String>,
    /// The other members the service was created or updated with (loadBalancers,
    /// serviceRegistries, networkConfiguration, deploymentConfiguration,
    /// serviceConnectConfiguration, ...), kept and answered as given.
    pub config: Map<String, Value>,
    pub deployments: Vec<Deployment>,
    /// Newest first, as DescribeServices lists them.
    pub events: Vec<Event>,
    pub created_at: f64,
    /// The Cloud Map services Service Connect registers its tasks in.
    #[serde(default)]
    pub connect: Vec<ConnectService>,
    pub tags: Tags,
}

/// One Service Connect service: a Cloud Map service of the namespace, with the container port
/// its port name maps to.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ConnectService {
    pub discovery_name: String,
    pub arn: String,
    pub port: Option<i64>,
}

/// A task's elastic network interface (awsvpc).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Eni {
    pub attachment_id: String,
    pub eni_id: String,
    pub subnet_id: String,
    pub private_ip: String,
    pub mac_address: String,
    /// Whether the ENI came from the EC2 service (and goes back to it when the task stops).
    pub managed: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub id: String,
    pub cluster: String,
    pub task_definition: String,
    pub group: String,
    pub started_by: Option<String>,
    /// The service whose deployment started it.
    pub service: Option<String>,
    pub launch_type: Option<String>,
    pub capacity_provider: Option<String>,
    pub platform_version: Option<String>,
    pub cpu: Option<String>,
    pub memory: Option<String>,
    /// `(name, image)` of each container.
    pub containers: Vec<(String, String)>,
    pub overrides: Value,
    pub availability_zone: String,
    pub eni: Option<Eni>,
    pub created_at: f64,
    pub stop_requested_at: Option<f64>,
    pub stopped_reason: Option<String>,
    pub stop_code: Option<String>,
    /// The Cloud Map services (ARNs) the task is registered in as an instance.
    #[serde(default)]
    pub registries: Vec<String>,
    /// The load balancer targets it was registered as: (target group ARN, IP, port).
    #[serde(default)]
    pub targets: Vec<(String, String, i64)>,
    pub tags: Tags,
}

#[derive(Debug, Clone, Default)]
pub struct Region {
    pub clusters: BTreeMap<String, Cluster>,
    /// Family -> revisions, oldest first.
    pub task_definitions: BTreeMap<String, Vec<TaskDefinition>>,
    /// `cluster/name` -> service.
    pub services: BTreeMap<String, Service>,
    pub tasks: BTreeMap<String, Task>,
    /// Account settings set by PutAccountSetting(Default): name -> value.
    pub settings: BTreeMap<String, String>,
    /// Records changed by the mutation in progress.
    pub dirty: BTreeSet<Key>,
}

/// A record's identity in the store.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Key {
    Cluster(String),
    Family(String),
    Service(String),
    Task(String),
    Setting(String),
}

impl Touched for Key {
    fn parts(&self) -> (&'static str, &str) {
        match self {
            Key::Cluster(k) => ("cluster", k),
            Key::Family(k) => ("family", k),
            Key::Service(k) => ("service", k),
            Key::Task(k) => ("task", k),
            Key::Setting(k) => ("setting", k),
        }
    }
}

pub fn service_key(cluster: &str, name: &str) -> String {
    format!("{cluster}/{name}")
}

impl Region {
    pub fn touch(&mut self, key: Key) {
        self.dirty.insert(key);
    }
}

/// The store table every record lives in.
pub const TABLE: Table = Table {
    name: "ecs_records",
    key: "key",
};

records_by_kind!(Region {
    clusters: "cluster",
    task_definitions: "family",
    services: "service",
    tasks: "task",
    settings: "setting",
});
