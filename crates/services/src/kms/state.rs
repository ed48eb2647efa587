//! KMS keys and aliases: in memory per region, written through to `kms_keys` / `kms_aliases`.
//! A key row holds its metadata as JSON and its material only wrapped by the master key
//! ([`cumulo_store::master`]).

use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub const MIGRATIONS: &[&str] = &["CREATE TABLE kms_keys (
        region TEXT NOT NULL, key_id TEXT NOT NULL, record TEXT NOT NULL, material BLOB NOT NULL,
        PRIMARY KEY (region, key_id));
     CREATE TABLE kms_aliases (
        region TEXT NOT NULL, name TEXT NOT NULL, record TEXT NOT NULL,
        PRIMARY KEY (region, name));"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeyState {
    Enabled,
    Disabled,
    PendingDeletion,
}

impl KeyState {
    pub fn as_str(self) -> &'static str {
        match self {
            KeyState::Enabled => "Enabled",
            KeyState::Disabled => "Disabled",
            KeyState::PendingDeletion => "PendingDeletion",
        }
    }
}

/// Who manages a key: the account (`CUSTOMER`) or an AWS service (`AWS`, the `alias/aws/...`
/// keys, which the account cannot change or delete).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum KeyManager {
    Customer,
    Aws,
}

/// A key's metadata (everything but its material).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct KeyRecord {
    pub key_id: String,
    pub arn: String,
    pub account_id: String,
    pub description: String,
    pub state: KeyState,
    pub manager: KeyManager,
    pub creation_ms: i64,
    pub deletion_ms: Option<i64>,
    pub pending_window_days: Option<i64>,
    pub policy: String,
    pub rotation_enabled: bool,
    pub rotation_period_days: Option<i64>,
    pub tags: Vec<(String, String)>,
}

/// A key as the service holds it: metadata plus material (in memory in clear, as any running
/// KMS must; at rest only wrapped).
pub struct Key {
    pub record: KeyRecord,
    pub material: Vec<u8>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Alias {
    pub name: String,
    pub target_key_id: String,
    pub creation_ms: i64,
    pub updated_ms: i64,
}

#[derive(Default)]
pub struct Region {
    pub keys: BTreeMap<String, Key>,
    pub aliases: BTreeMap<String, Alias>,
}

fn json_err(e: serde_json::Error) -> rusqlite::Error {
    rusqlite::Error::ToSqlConversionFailure(Box::new(e))
}

/// A new key: its record and its material wrapped by the master key.
pub fn insert_key(
    tx: &Transaction<'_>,
    region: &str,
    record: &KeyRecord,
    wrapped: &[u8],
) -> rusqlite::Result<()> {
    let text = serde_json::to_string(record).map_err(json_err)?;
    tx.execute(
        "INSERT INTO kms_keys(region, key_id, record, material) VALUES (?1, ?2, ?3, ?4)",
        params![region, record.key_id, text, wrapped],
    )?;
    Ok(())
}

/// A changed record; the material never changes.
pub fn update_key(tx: &Transaction<'_>, region: &str, record: &KeyRecord) -> rusqlite::Result<()> {
    let text = serde_json::to_string(record).map_err(json_err)?;
    tx.execute(
        "UPDATE kms_keys SET record = ?3 WHERE region = ?1 AND key_id = ?2",
        params![region, record.key_id, text],
    )?;
    Ok(())
}

pub fn delete_key(tx: &Transaction<'_>, region: &str, key_id: &str) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM kms_keys WHERE region = ?1 AND key_id = ?2",
        params![region, key_id],
    )?;
    tx.execute(
        "DELETE FROM kms_aliases WHERE region = ?1 AND json_extract(record, '$.target_key_id') = ?2",
        params![region, key_id],
    )?;
    Ok(())
}

pub fn save_alias(tx: &Transaction<'_>, region: &str, alias: &Alias) -> rusqlite::Result<()> {
    let text = serde_json::to_string(alias).map_err(json_err)?;
    tx.execute(
        "INSERT OR REPLACE INTO kms_aliases(region, name, record) VALUES (?1, ?2, ?3)",
        params![region, alias.name, text],
    )?;
    Ok(())
}

pub fn delete_alias(tx: &Transaction<'_>, region: &str, name: &str) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM kms_aliases WHERE region = ?1 AND name = ?2",
        params![region, name],
    )?;
    Ok(())
}

/// Rows as stored: (region, record, wrapped material) and (region, alias).
pub type Loaded = (Vec<(String, KeyRecord, Vec<u8>)>, Vec<(String, Alias)>);

/// Every stored key and alias; a row that cannot be read is reported, not fatal.
pub fn load(conn: &Connection) -> rusqlite::Result<(Loaded, Vec<String>)> {
    let mut problems = Vec::new();
    let mut keys = Vec::new();
    let mut stmt = conn.prepare("SELECT region, key_id, record, material FROM kms_keys")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, Vec<u8>>(3)?,
        ))
    })?;
    for row in rows {
        let (region, id, text, wrapped) = row?;
        match serde_json::from_str::<KeyRecord>(&text) {
            Ok(rec) => keys.push((region, rec, wrapped)),
            Err(e) => problems.push(format!("key {region}/{id}: {e}")),
        }
    }
    let mut aliases = Vec::new();
    let mut stmt = conn.prepare("SELECT region, name, record FROM kms_aliases")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    for row in rows {
        let (region, name, text) = row?;
        match serde_json::from_str::<Alias>(&text) {
            Ok(a) => aliases.push((region, a)),
            Err(e) => problems.push(format!("alias {region}/{name}: {e}")),
        }
    }
    Ok(((keys, aliases), problems))
}
