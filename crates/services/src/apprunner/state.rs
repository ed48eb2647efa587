//! App Runner's records per region, keyed by ARN, each written through to the store as one JSON
//! document. Statuses are not stored: `lifecycle` derives them from the timestamps kept here.

use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

pub const MIGRATIONS: &[&str] = &["CREATE TABLE apprunner_records (
        region TEXT NOT NULL,
        arn TEXT NOT NULL,
        kind TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, arn)
    );"];

/// One recorded operation on a service (ListOperations).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Operation {
    pub id: String,
    /// `CREATE_SERVICE`, `UPDATE_SERVICE`, ...
    pub kind: String,
    pub started: f64,
    /// When it completes (it is IN_PROGRESS until then).
    pub ends: f64,
}

/// A custom domain associated with a service.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CustomDomain {
    pub name: String,
    pub www: bool,
}

/// An App Runner service. The configuration members are kept in the API's shapes, as
/// DescribeService reports them (defaults filled in).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AppService {
    pub name: String,
    pub id: String,
    /// `<10 alnum>.<region>.awsapprunner.com`.
    pub url: String,
    pub created: f64,
    pub updated: f64,
    pub source: Value,
    pub instance: Value,
    pub health: Value,
    pub network: Value,
    pub observability: Value,
    pub encryption: Option<Value>,
    pub auto_scaling_arn: String,
    pub tags: Vec<(String, String)>,
    pub paused: bool,
    /// OPERATION_IN_PROGRESS until then.
    pub busy_until: f64,
    /// DeleteService's time: in progress for a moment, then gone.
    pub deleted_at: Option<f64>,
    /// Oldest first.
    pub operations: Vec<Operation>,
    pub domains: Vec<CustomDomain>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VpcConnector {
    pub name: String,
    pub revision: i64,
    pub subnets: Vec<String>,
    pub security_groups: Vec<String>,
    pub created: f64,
    /// Deleted connectors stay describable as INACTIVE, as on AWS.
    pub deleted_at: Option<f64>,
    pub tags: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IngressConnection {
    pub name: String,
    pub service_arn: String,
    pub vpc_id: String,
    pub vpc_endpoint_id: String,
    pub domain_name: String,
    pub created: f64,
    /// The PENDING_* status shown until `busy_until`.
    pub pending: String,
    pub busy_until: f64,
    pub deleted_at: Option<f64>,
    pub tags: Vec<(String, String)>,
}

/// Which revisioned configuration a [`Versioned`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ConfigKind {
    AutoScaling,
    Observability,
}

/// One revision of an auto scaling or observability configuration; `settings` holds the
/// kind's own members (MaxConcurrency/MinSize/MaxSize, or TraceConfiguration).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Versioned {
    pub kind: ConfigKind,
    pub name: String,
    pub revision: i64,
    pub created: f64,
    pub deleted_at: Option<f64>,
    pub settings: Value,
    pub tags: Vec<(String, String)>,
}

/// One region's records, each map keyed by ARN.
#[derive(Debug, Clone, Default)]
pub struct Region {
    pub services: BTreeMap<String, AppService>,
    pub connectors: BTreeMap<String, VpcConnector>,
    pub ingress: BTreeMap<String, IngressConnection>,
    pub configs: BTreeMap<String, Versioned>,
}

pub type Regions = HashMap<String, Region>;

/// A record to write, by kind.
pub enum Doc<'a> {
    Service(&'a AppService),
    Connector(&'a VpcConnector),
    Ingress(&'a IngressConnection),
    Config(&'a Versioned),
}

pub fn load(c: &Connection) -> rusqlite::Result<(Regions, Vec<String>)> {
    let mut regions: Regions = HashMap::new();
    let mut problems = Vec::new();
    let mut stmt = c.prepare("SELECT region, arn, kind, doc FROM apprunner_records")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, String>(3)?,
        ))
    })?;
    for row in rows {
        let (region, arn, kind, doc) = row?;
        let r = regions.entry(region).or_default();
        let ok = match kind.as_str() {
            "service" => serde_json::from_str(&doc).map(|s| {
                r.services.insert(arn.clone(), s);
            }),
            "connector" => serde_json::from_str(&doc).map(|s| {
                r.connectors.insert(arn.clone(), s);
            }),
            "ingress" => serde_json::from_str(&doc).map(|s| {
                r.ingress.insert(arn.clone(), s);
            }),
            _ => serde_json::from_str(&doc).map(|s| {
                r.configs.insert(arn.clone(), s);
            }),
        };
        if let Err(e) = ok {
            problems.push(format!("{kind} {arn}: {e}"));
        }
    }
    Ok((regions, problems))
}

pub fn save(tx: &Transaction<'_>, region: &str, arn: &str, doc: Doc<'_>) -> rusqlite::Result<()> {
    let (kind, text) = match doc {
        Doc::Service(s) => ("service", serde_json::to_string(s)),
        Doc::Connector(c) => ("connector", serde_json::to_string(c)),
        Doc::Ingress(i) => ("ingress", serde_json::to_string(i)),
        Doc::Config(v) => ("config", serde_json::to_string(v)),
    };
    let text = text.map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    tx.execute(
        "INSERT OR REPLACE INTO apprunner_records(region, arn, kind, doc) VALUES (?1, ?2, ?3, ?4)",
        params![region, arn, kind, text],
    )?;
    Ok(())
}

pub fn delete(tx: &Transaction<'_>, region: &str, arn: &str) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM apprunner_records WHERE region = ?1 AND arn = ?2",
        params![region, arn],
    )?;
    Ok(())
}
