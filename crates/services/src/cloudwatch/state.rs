//! CloudWatch's records in memory (per region; dashboards are global, as their ARNs say) and
//! their tables: a row per datum put (appended, never rewritten), a document per alarm and
//! dashboard, and a row per alarm-history item.

use super::metrics::{Datum, MetricKey};
use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

pub const MIGRATIONS: &[&str] = &["CREATE TABLE cloudwatch_data (
        region TEXT NOT NULL,
        metric TEXT NOT NULL,
        doc TEXT NOT NULL
    );
    CREATE TABLE cloudwatch_alarms (
        region TEXT NOT NULL,
        name TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, name)
    );
    CREATE TABLE cloudwatch_history (
        region TEXT NOT NULL,
        doc TEXT NOT NULL
    );
    CREATE TABLE cloudwatch_dashboards (
        name TEXT PRIMARY KEY,
        doc TEXT NOT NULL
    );"];

/// An alarm: its API shape (MetricAlarm or CompositeAlarm, in member names, timestamps as
/// epoch seconds) and what the API keeps beside it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Alarm {
    pub body: Value,
    pub composite: bool,
    #[serde(default)]
    pub tags: Vec<(String, String)>,
    /// When its state was last decided (by evaluation or SetAlarmState), epoch seconds.
    pub evaluated: f64,
    /// Until when a state SetAlarmState gave it holds against evaluation (AWS keeps it until
    /// the next evaluation, a minute at most), epoch seconds.
    #[serde(default)]
    pub held_until: f64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Dashboard {
    pub body: String,
    pub modified: f64,
}

#[derive(Debug, Default)]
pub struct Region {
    pub data: BTreeMap<MetricKey, Vec<Datum>>,
    pub alarms: BTreeMap<String, Alarm>,
    /// AlarmHistoryItem shapes, oldest first.
    pub history: Vec<Value>,
}

#[derive(Debug, Default)]
pub struct State {
    pub regions: HashMap<String, Region>,
    pub dashboards: BTreeMap<String, Dashboard>,
}

/// One change to write through.
pub enum Write {
    Datum(String, MetricKey, Datum),
    Alarm(String, String, Option<Alarm>),
    History(String, Value),
    Dashboard(String, Option<Dashboard>),
}

fn text<T: Serialize>(v: &T) -> rusqlite::Result<String> {
    serde_json::to_string(v).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

pub fn save(tx: &Transaction<'_>, writes: &[Write]) -> rusqlite::Result<()> {
    for w in writes {
        match w {
            Write::Datum(region, key, d) => tx.execute(
                "INSERT INTO cloudwatch_data(region, metric, doc) VALUES (?1, ?2, ?3)",
                params![region, text(key)?, text(d)?],
            )?,
            Write::Alarm(region, name, Some(a)) => tx.execute(
                "INSERT OR REPLACE INTO cloudwatch_alarms(region, name, doc) VALUES (?1, ?2, ?3)",
                params![region, name, text(a)?],
            )?,
            Write::Alarm(region, name, None) => tx.execute(
                "DELETE FROM cloudwatch_alarms WHERE region = ?1 AND name = ?2",
                params![region, name],
            )?,
            Write::History(region, item) => tx.execute(
                "INSERT INTO cloudwatch_history(region, doc) VALUES (?1, ?2)",
                params![region, text(item)?],
            )?,
            Write::Dashboard(name, Some(d)) => tx.execute(
                "INSERT OR REPLACE INTO cloudwatch_dashboards(name, doc) VALUES (?1, ?2)",
                params![name, text(d)?],
            )?,
            Write::Dashboard(name, None) => tx.execute(
                "DELETE FROM cloudwatch_dashboards WHERE name = ?1",
                params![name],
            )?,
        };
    }
    Ok(())
}

fn rows(c: &Connection, sql: &str) -> rusqlite::Result<Vec<(String, String, String)>> {
    let mut stmt = c.prepare(sql)?;
    let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    rows.collect()
}

pub fn load(c: &Connection) -> rusqlite::Result<(State, Vec<String>)> {
    let mut s = State::default();
    let mut problems = Vec::new();
    for (region, metric, doc) in rows(
        c,
        "SELECT region, metric, doc FROM cloudwatch_data ORDER BY rowid",
    )? {
        match (
            serde_json::from_str::<MetricKey>(&metric),
            serde_json::from_str::<Datum>(&doc),
        ) {
            (Ok(k), Ok(d)) => s
                .regions
                .entry(region)
                .or_default()
                .data
                .entry(k)
                .or_default()
                .push(d),
            _ => problems.push(format!("datum of {metric}")),
        }
    }
    for (region, name, doc) in rows(c, "SELECT region, name, doc FROM cloudwatch_alarms")? {
        match serde_json::from_str::<Alarm>(&doc) {
            Ok(a) => {
                s.regions.entry(region).or_default().alarms.insert(name, a);
            }
            Err(e) => problems.push(format!("alarm {name}: {e}")),
        }
    }
    for (region, doc, _) in rows(
        c,
        "SELECT region, doc, '' FROM cloudwatch_history ORDER BY rowid",
    )? {
        match serde_json::from_str::<Value>(&doc) {
            Ok(v) => s.regions.entry(region).or_default().history.push(v),
            Err(e) => problems.push(format!("history item: {e}")),
        }
    }
    for (name, doc, _) in rows(c, "SELECT name, doc, '' FROM cloudwatch_dashboards")? {
        match serde_json::from_str::<Dashboard>(&doc) {
            Ok(d) => {
                s.dashboards.insert(name, d);
            }
            Err(e) => problems.push(format!("dashboard {name}: {e}")),
        }
    }
    Ok((s, problems))
}
