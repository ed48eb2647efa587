//! ECS records in memory per region, each written through to the store as one JSON document
//! keyed by its kind and key. A mutation works on a copy of the region, names the records it
//! touched, and the copy replaces the region only once those records are committed.

use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet, HashMap};

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

impl Key {
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

    /// The document a key holds now, `None` when it is gone.
    fn doc(&self, key: &Key) -> serde_json::Result<Option<String>> {
        match key {
            Key::Cluster(k) => self.clusters.get(k).map(serde_json::to_string).transpose(),
            Key::Family(k) => self
                .task_definitions
                .get(k)
                .map(serde_json::to_string)
                .transpose(),
            Key::Service(k) => self.services.get(k).map(serde_json::to_string).transpose(),
            Key::Task(k) => self.tasks.get(k).map(serde_json::to_string).transpose(),
            Key::Setting(k) => self.settings.get(k).map(serde_json::to_string).transpose(),
        }
    }
}

pub type Regions = HashMap<String, Region>;

/// Writes every record the region marks dirty (deleting those that are gone).
pub fn save_dirty(tx: &Transaction<'_>, region: &str, r: &Region) -> rusqlite::Result<()> {
    for key in &r.dirty {
        let (kind, k) = key.parts();
        match r
            .doc(key)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?
        {
            Some(doc) => tx.execute(
                "INSERT OR REPLACE INTO ecs_records(region, kind, key, doc) VALUES (?1, ?2, ?3, ?4)",
                params![region, kind, k, doc],
            )?,
            None => tx.execute(
                "DELETE FROM ecs_records WHERE region = ?1 AND kind = ?2 AND key = ?3",
                params![region, kind, k],
            )?,
        };
    }
    Ok(())
}

pub fn load(c: &Connection) -> rusqlite::Result<(Regions, Vec<String>)> {
    let mut regions: Regions = HashMap::new();
    let mut problems = Vec::new();
    let mut stmt = c.prepare("SELECT region, kind, key, doc FROM ecs_records")?;
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
            "cluster" => serde_json::from_str(&doc).map(|v| {
                r.clusters.insert(key.clone(), v);
            }),
            "family" => serde_json::from_str(&doc).map(|v| {
                r.task_definitions.insert(key.clone(), v);
            }),
            "service" => serde_json::from_str(&doc).map(|v| {
                r.services.insert(key.clone(), v);
            }),
            "task" => serde_json::from_str(&doc).map(|v| {
                r.tasks.insert(key.clone(), v);
            }),
            "setting" => serde_json::from_str(&doc).map(|v| {
                r.settings.insert(key.clone(), v);
            }),
            _ => Ok(()),
        };
        if let Err(e) = outcome {
            problems.push(format!("{kind} {region}/{key}: {e}"));
        }
    }
    Ok((regions, problems))
}
