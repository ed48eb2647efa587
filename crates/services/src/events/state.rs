//! Event buses and rules (with their targets) in memory per region, written through to the
//! store. The `default` bus of every region exists without being stored.

use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

pub const MIGRATIONS: &[&str] = &["CREATE TABLE events_buses (
        region TEXT NOT NULL,
        name TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, name)
    );
    CREATE TABLE events_rules (
        region TEXT NOT NULL,
        bus TEXT NOT NULL,
        name TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, bus, name)
    );"];

pub const DEFAULT_BUS: &str = "default";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bus {
    pub name: String,
    pub description: Option<String>,
    pub kms_key: Option<String>,
    /// Seconds since the epoch.
    pub created: f64,
    pub modified: f64,
    pub tags: BTreeMap<String, String>,
    /// `DeadLetterConfig.Arn`: the SQS queue for events the bus cannot process (AWS sends
    /// there what fails its KMS encryption, which never happens locally): stored and reported.
    #[serde(default)]
    pub dead_letter_arn: Option<String>,
    /// `LogConfig` (IncludeDetail, Level): stored and reported; cumulo writes no bus logs.
    #[serde(default)]
    pub log_config: Option<LogConfig>,
    /// The bus's resource policy document (AWS::Events::EventBus `Policy`): stored and
    /// reported by DescribeEventBus, not evaluated (one local account).
    #[serde(default)]
    pub policy: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct LogConfig {
    pub include_detail: Option<String>,
    pub level: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InputTransformer {
    pub paths: BTreeMap<String, String>,
    pub template: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Target {
    pub id: String,
    pub arn: String,
    pub role_arn: Option<String>,
    pub input: Option<String>,
    pub input_path: Option<String>,
    pub input_transformer: Option<InputTransformer>,
    /// An SQS queue ARN that receives the event when delivery to the target fails.
    pub dead_letter_arn: Option<String>,
    /// `SqsParameters.MessageGroupId`, for FIFO queue targets.
    pub message_group_id: Option<String>,
    /// `RetryPolicy` as given (MaximumRetryAttempts, MaximumEventAgeInSeconds): stored and
    /// reported; cumulo's in-process deliveries either succeed or fail at once, so there is
    /// nothing to retry.
    #[serde(default)]
    pub retry_policy: Option<serde_json::Value>,
    /// The parameters of target kinds cumulo does not deliver to (KinesisParameters,
    /// EcsParameters, ...), as given: stored and reported; delivery to such a target fails
    /// (see `put.rs`) and goes to its dead-letter queue.
    #[serde(default)]
    pub parameters: BTreeMap<String, serde_json::Value>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Rule {
    pub name: String,
    pub bus: String,
    pub description: Option<String>,
    pub event_pattern: Option<String>,
    pub schedule: Option<String>,
    /// `ENABLED`, `DISABLED` or `ENABLED_WITH_ALL_CLOUDTRAIL_MANAGEMENT_EVENTS`.
    pub state: String,
    pub role_arn: Option<String>,
    pub tags: BTreeMap<String, String>,
    pub targets: Vec<Target>,
    /// When the schedule started counting (ms), for rate expressions.
    pub schedule_from: i64,
}

impl Rule {
    pub fn enabled(&self) -> bool {
        self.state.starts_with("ENABLED")
    }
}

/// One region's buses (without `default`, which always exists) and rules by (bus, name).
#[derive(Debug, Default)]
pub struct Region {
    pub buses: BTreeMap<String, Bus>,
    pub rules: BTreeMap<(String, String), Rule>,
}

pub type Regions = HashMap<String, Region>;

fn to_doc<T: Serialize>(v: &T) -> rusqlite::Result<String> {
    serde_json::to_string(v).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

pub fn load(c: &Connection) -> rusqlite::Result<(Regions, Vec<String>)> {
    let mut regions: Regions = HashMap::new();
    let mut problems = Vec::new();
    let mut stmt = c.prepare("SELECT region, doc FROM events_buses")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (region, doc) = row?;
        match serde_json::from_str::<Bus>(&doc) {
            Ok(b) => {
                regions
                    .entry(region)
                    .or_default()
                    .buses
                    .insert(b.name.clone(), b);
            }
            Err(e) => problems.push(format!("event bus in {region}: {e}")),
        }
    }
    let mut stmt = c.prepare("SELECT region, doc FROM events_rules")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (region, doc) = row?;
        match serde_json::from_str::<Rule>(&doc) {
            Ok(rule) => {
                regions
                    .entry(region)
                    .or_default()
                    .rules
                    .insert((rule.bus.clone(), rule.name.clone()), rule);
            }
            Err(e) => problems.push(format!("rule in {region}: {e}")),
        }
    }
    Ok((regions, problems))
}

pub fn save_bus(tx: &Transaction<'_>, region: &str, b: &Bus) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO events_buses(region, name, doc) VALUES (?1, ?2, ?3)",
        params![region, b.name, to_doc(b)?],
    )?;
    Ok(())
}

pub fn delete_bus(tx: &Transaction<'_>, region: &str, name: &str) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM events_buses WHERE region = ?1 AND name = ?2",
        params![region, name],
    )?;
    Ok(())
}

pub fn save_rule(tx: &Transaction<'_>, region: &str, r: &Rule) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO events_rules(region, bus, name, doc) VALUES (?1, ?2, ?3, ?4)",
        params![region, r.bus, r.name, to_doc(r)?],
    )?;
    Ok(())
}

pub fn delete_rule(
    tx: &Transaction<'_>,
    region: &str,
    bus: &str,
    name: &str,
) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM events_rules WHERE region = ?1 AND bus = ?2 AND name = ?3",
        params![region, bus, name],
    )?;
    Ok(())
}
