//! Lambda's persisted state: functions, layers and event source mappings as JSON documents, and
//! deployment packages as blobs keyed by their SHA-256 (shared by every version and layer that
//! uses the same bytes). Memory holds the documents; packages are read back only to unpack them.

use super::model::{EventSourceMapping, Function, Layer};
use cumulo_store::rusqlite::{self, Connection, OptionalExtension, Transaction, params};
use std::collections::HashMap;

pub const MIGRATIONS: &[&str] = &["
    CREATE TABLE lambda_functions (
        region TEXT NOT NULL,
        name TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (region, name)
    );
    CREATE TABLE lambda_layers (
        region TEXT NOT NULL,
        name TEXT NOT NULL,
        data TEXT NOT NULL,
        PRIMARY KEY (region, name)
    );
    CREATE TABLE lambda_code (
        sha256 TEXT PRIMARY KEY,
        zip BLOB NOT NULL
    );
    CREATE TABLE lambda_esm (
        uuid TEXT PRIMARY KEY,
        data TEXT NOT NULL
    );
"];

/// `(region, name)`.
pub type Key = (String, String);

#[derive(Default)]
pub struct State {
    pub functions: HashMap<Key, Function>,
    pub layers: HashMap<Key, Layer>,
    pub mappings: HashMap<String, EventSourceMapping>,
}

fn to_json<T: serde::Serialize>(v: &T) -> rusqlite::Result<String> {
    serde_json::to_string(v).map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))
}

pub fn put_function(tx: &Transaction<'_>, region: &str, f: &Function) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO lambda_functions (region, name, data) VALUES (?1, ?2, ?3)",
        params![region, f.name, to_json(f)?],
    )?;
    Ok(())
}

pub fn delete_function(tx: &Transaction<'_>, region: &str, name: &str) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM lambda_functions WHERE region = ?1 AND name = ?2",
        params![region, name],
    )?;
    Ok(())
}

pub fn put_layer(tx: &Transaction<'_>, region: &str, l: &Layer) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO lambda_layers (region, name, data) VALUES (?1, ?2, ?3)",
        params![region, l.name, to_json(l)?],
    )?;
    Ok(())
}

pub fn put_mapping(tx: &Transaction<'_>, m: &EventSourceMapping) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR REPLACE INTO lambda_esm (uuid, data) VALUES (?1, ?2)",
        params![m.uuid, to_json(m)?],
    )?;
    Ok(())
}

pub fn delete_mapping(tx: &Transaction<'_>, uuid: &str) -> rusqlite::Result<()> {
    tx.execute("DELETE FROM lambda_esm WHERE uuid = ?1", params![uuid])?;
    Ok(())
}

pub fn put_code(tx: &Transaction<'_>, sha: &str, zip: &[u8]) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT OR IGNORE INTO lambda_code (sha256, zip) VALUES (?1, ?2)",
        params![sha, zip],
    )?;
    Ok(())
}

pub fn get_code(conn: &Connection, sha: &str) -> rusqlite::Result<Option<Vec<u8>>> {
    conn.query_row(
        "SELECT zip FROM lambda_code WHERE sha256 = ?1",
        params![sha],
        |r| r.get(0),
    )
    .optional()
}

/// Everything stored, plus a note per record that could not be read (skipped, not fatal).
pub fn load(conn: &Connection) -> rusqlite::Result<(State, Vec<String>)> {
    let mut state = State::default();
    let mut problems = Vec::new();
    let mut stmt = conn.prepare("SELECT region, name, data FROM lambda_functions")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    for row in rows {
        let (region, name, data) = row?;
        match serde_json::from_str::<Function>(&data) {
            Ok(mut f) => {
                // A package being unpacked when the process stopped is unpacked on first use.
                f.state = "Active".into();
                f.last_update_status = "Successful".into();
                state.functions.insert((region, name), f);
            }
            Err(e) => problems.push(format!("function {region}/{name}: {e}")),
        }
    }
    let mut stmt = conn.prepare("SELECT region, name, data FROM lambda_layers")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    for row in rows {
        let (region, name, data) = row?;
        match serde_json::from_str::<Layer>(&data) {
            Ok(l) => {
                state.layers.insert((region, name), l);
            }
            Err(e) => problems.push(format!("layer {region}/{name}: {e}")),
        }
    }
    let mut stmt = conn.prepare("SELECT uuid, data FROM lambda_esm")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    for row in rows {
        let (uuid, data) = row?;
        match serde_json::from_str::<EventSourceMapping>(&data) {
            Ok(m) => {
                state.mappings.insert(uuid, m);
            }
            Err(e) => problems.push(format!("event source mapping {uuid}: {e}")),
        }
    }
    Ok((state, problems))
}
