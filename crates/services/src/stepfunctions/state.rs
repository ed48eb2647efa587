//! State machines (with their versions and aliases), activities and executions in memory,
//! each written through to the store as one document; an execution's history events are rows
//! of their own, appended as the interpreter writes them.

use super::asl::{Checkpoint, Event};
use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

pub const MIGRATIONS: &[&str] = &["CREATE TABLE sfn_machines (
        arn TEXT PRIMARY KEY,
        doc TEXT NOT NULL
    );
    CREATE TABLE sfn_activities (
        arn TEXT PRIMARY KEY,
        doc TEXT NOT NULL
    );
    CREATE TABLE sfn_executions (
        arn TEXT PRIMARY KEY,
        doc TEXT NOT NULL
    );
    CREATE TABLE sfn_checkpoints (
        execution TEXT PRIMARY KEY,
        doc TEXT NOT NULL
    );
    CREATE TABLE sfn_events (
        execution TEXT NOT NULL,
        id INTEGER NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (execution, id)
    );"];

/// What a state machine and each of its versions run and report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Revision {
    pub definition: String,
    pub role_arn: String,
    /// `loggingConfiguration` as the API reports it.
    pub logging: Value,
    /// `tracingConfiguration` as the API reports it.
    pub tracing: Value,
    /// None until the first update (AWS reports no revisionId for a never-updated machine).
    pub revision_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Version {
    pub number: u64,
    pub revision: Revision,
    pub description: Option<String>,
    pub created: f64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Alias {
    pub name: String,
    pub description: Option<String>,
    /// (version ARN, weight)
    pub routing: Vec<(String, u64)>,
    pub created: f64,
    pub updated: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    pub arn: String,
    pub name: String,
    pub region: String,
    /// STANDARD or EXPRESS.
    pub kind: String,
    pub revision: Revision,
    pub description: Option<String>,
    pub created: f64,
    pub updated: Option<f64>,
    pub tags: BTreeMap<String, String>,
    pub versions: BTreeMap<u64, Version>,
    /// The number the next published version gets (numbers are never reused).
    pub next_version: u64,
    pub aliases: BTreeMap<String, Alias>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Activity {
    pub arn: String,
    pub name: String,
    pub created: f64,
    pub tags: BTreeMap<String, String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Execution {
    pub arn: String,
    pub name: String,
    pub region: String,
    /// The machine's own ARN (never a version's or an alias's).
    pub machine_arn: String,
    pub version_arn: Option<String>,
    pub alias_arn: Option<String>,
    pub kind: String,
    /// The definition and role the execution runs (a snapshot: updates do not reach it).
    pub revision: Revision,
    pub machine_updated: f64,
    pub input: String,
    /// RUNNING, SUCCEEDED, FAILED, TIMED_OUT, ABORTED.
    pub status: String,
    pub output: Option<String>,
    pub error: Option<String>,
    pub cause: Option<String>,
    pub start: f64,
    pub stop: Option<f64>,
    /// The top-level state a restart resumes from (stored in its own small row, written at
    /// every top-level state entry, so the execution's document is not rewritten each time).
    #[serde(skip)]
    pub checkpoint: Option<Checkpoint>,
    pub trace_header: Option<String>,
    #[serde(default)]
    pub redrive_count: u64,
    #[serde(default)]
    pub redrive_date: Option<f64>,
    /// The last top-level state the execution entered before it ended: where a redrive
    /// starts again.
    #[serde(default)]
    pub last_state: Option<Checkpoint>,
    /// Set by RedriveExecution until the redrive's first event is written.
    #[serde(default)]
    pub redriving: bool,
}

#[derive(Default)]
pub struct State {
    pub machines: BTreeMap<String, Machine>,
    pub activities: BTreeMap<String, Activity>,
    pub executions: BTreeMap<String, Execution>,
    pub events: HashMap<String, Vec<Event>>,
}

fn rows(c: &Connection, table: &str) -> rusqlite::Result<Vec<(String, String)>> {
    let mut stmt = c.prepare(&format!("SELECT arn, doc FROM {table}"))?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    rows.collect()
}

fn decode<T: for<'de> Deserialize<'de>>(
    c: &Connection,
    table: &str,
    problems: &mut Vec<String>,
) -> rusqlite::Result<BTreeMap<String, T>> {
    let mut out = BTreeMap::new();
    for (arn, doc) in rows(c, table)? {
        match serde_json::from_str(&doc) {
            Ok(v) => {
                out.insert(arn, v);
            }
            Err(e) => problems.push(format!("{table} {arn}: {e}")),
        }
    }
    Ok(out)
}

pub fn load(c: &Connection) -> rusqlite::Result<(State, Vec<String>)> {
    let mut problems = Vec::new();
    let mut state = State {
        machines: decode(c, "sfn_machines", &mut problems)?,
        activities: decode(c, "sfn_activities", &mut problems)?,
        executions: decode(c, "sfn_executions", &mut problems)?,
        events: HashMap::new(),
    };
    let mut stmt = c.prepare("SELECT execution, doc FROM sfn_checkpoints")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (exec, doc) = row?;
        match (
            serde_json::from_str::<Checkpoint>(&doc),
            state.executions.get_mut(&exec),
        ) {
            (Ok(cp), Some(x)) => x.checkpoint = Some(cp),
            (Err(e), _) => problems.push(format!("checkpoint of {exec}: {e}")),
            (Ok(_), None) => {}
        }
    }
    let mut stmt = c.prepare("SELECT execution, doc FROM sfn_events ORDER BY execution, id")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (exec, doc) = row?;
        match serde_json::from_str::<Event>(&doc) {
            Ok(e) => state.events.entry(exec).or_default().push(e),
            Err(e) => problems.push(format!("event of {exec}: {e}")),
        }
    }
    Ok((state, problems))
}

fn json<T: Serialize>(v: &T) -> rusqlite::Result<String> {
    serde_json::to_string(v).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

pub fn save_machine(tx: &Transaction<'_>, m: &Machine) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO sfn_machines(arn, doc) VALUES (?1, ?2)",
        params![m.arn, json(m)?],
    )?;
    Ok(())
}

pub fn delete_machine(tx: &Transaction<'_>, arn: &str) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM sfn_machines WHERE arn = ?1", params![arn])?;
    Ok(())
}

pub fn save_activity(tx: &Transaction<'_>, a: &Activity) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO sfn_activities(arn, doc) VALUES (?1, ?2)",
        params![a.arn, json(a)?],
    )?;
    Ok(())
}

pub fn delete_activity(tx: &Transaction<'_>, arn: &str) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM sfn_activities WHERE arn = ?1", params![arn])?;
    Ok(())
}

pub fn save_execution(tx: &Transaction<'_>, e: &Execution) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO sfn_executions(arn, doc) VALUES (?1, ?2)",
        params![e.arn, json(e)?],
    )?;
    Ok(())
}

pub fn save_event(tx: &Transaction<'_>, execution: &str, e: &Event) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO sfn_events(execution, id, doc) VALUES (?1, ?2, ?3)",
        params![execution, e.id as i64, json(e)?],
    )?;
    Ok(())
}

/// Where a running execution resumes; `None` removes it (the execution ended).
pub fn save_checkpoint(
    tx: &Transaction<'_>,
    execution: &str,
    cp: Option<&Checkpoint>,
) -> rusqlite::Result<()> {
    match cp {
        Some(cp) => tx.execute(
            "INSERT OR REPLACE INTO sfn_checkpoints(execution, doc) VALUES (?1, ?2)",
            params![execution, json(cp)?],
        )?,
        None => tx.execute(
            "DELETE FROM sfn_checkpoints WHERE execution = ?1",
            params![execution],
        )?,
    };
    Ok(())
}
