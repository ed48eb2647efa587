//! Secrets in memory per region, written through to `secretsmanager_secrets` (one JSON record
//! per secret). Version values are only ever held as [`sealed`](super::sealed) blobs.

use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use serde::{Deserialize, Serialize};

pub const MIGRATIONS: &[&str] = &["CREATE TABLE secretsmanager_secrets (
        region TEXT NOT NULL, name TEXT NOT NULL, record TEXT NOT NULL,
        PRIMARY KEY (region, name));"];

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SecretVersion {
    pub id: String,
    pub stages: Vec<String>,
    pub created_ms: i64,
    pub last_accessed_ms: Option<i64>,
    /// base64 of the envelope-encrypted value (see `sealed`).
    pub sealed: String,
    pub binary: bool,
    /// The ARN of the KMS key the value is encrypted under.
    pub kms_key_arn: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Secret {
    pub name: String,
    pub arn: String,
    pub description: Option<String>,
    /// As the caller gave it; `None` means the account's `aws/secretsmanager` key.
    pub kms_key_id: Option<String>,
    pub tags: Vec<(String, String)>,
    pub policy: Option<String>,
    pub created_ms: i64,
    pub last_changed_ms: i64,
    pub last_accessed_ms: Option<i64>,
    /// When a scheduled deletion takes effect (DescribeSecret's DeletedDate).
    pub deletion_ms: Option<i64>,
    /// In creation order.
    pub versions: Vec<SecretVersion>,
    /// On a replica: the region of its primary (DescribeSecret's PrimaryRegion).
    #[serde(default)]
    pub primary_region: Option<String>,
    /// On a primary: its replicas, as DescribeSecret's ReplicationStatus lists them.
    #[serde(default)]
    pub replicas: Vec<Replica>,
}

/// One region a secret is replicated to.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Replica {
    pub region: String,
    /// As given; `None` means that region's `aws/secretsmanager` key.
    pub kms_key_id: Option<String>,
    /// `InSync` or `Failed` (replication is done as the call is answered, never `InProgress`).
    pub status: String,
    pub status_message: String,
}

impl Secret {
    pub fn version_with_stage(&self, stage: &str) -> Option<&SecretVersion> {
        self.versions
            .iter()
            .find(|v| v.stages.iter().any(|s| s == stage))
    }
}

fn json_err(e: serde_json::Error) -> rusqlite::Error {
    rusqlite::Error::ToSqlConversionFailure(Box::new(e))
}

pub fn save(tx: &Transaction<'_>, region: &str, s: &Secret) -> rusqlite::Result<()> {
    let text = serde_json::to_string(s).map_err(json_err)?;
    tx.execute(
        "INSERT OR REPLACE INTO secretsmanager_secrets(region, name, record) VALUES (?1, ?2, ?3)",
        params![region, s.name, text],
    )?;
    Ok(())
}

pub fn delete(tx: &Transaction<'_>, region: &str, name: &str) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM secretsmanager_secrets WHERE region = ?1 AND name = ?2",
        params![region, name],
    )?;
    Ok(())
}

/// `(region, secret)` rows and the problems of rows that could not be read.
pub type Loaded = (Vec<(String, Secret)>, Vec<String>);

/// Every stored secret as `(region, secret)`; unreadable rows are reported, not fatal.
pub fn load(conn: &Connection) -> rusqlite::Result<Loaded> {
    let mut stmt = conn.prepare("SELECT region, name, record FROM secretsmanager_secrets")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    let (mut out, mut problems) = (Vec::new(), Vec::new());
    for row in rows {
        let (region, name, text) = row?;
        match serde_json::from_str::<Secret>(&text) {
            Ok(s) => out.push((region, s)),
            Err(e) => problems.push(format!("secret {region}/{name}: {e}")),
        }
    }
    Ok((out, problems))
}
