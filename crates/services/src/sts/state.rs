//! Issued temporary credentials: in memory for lookups, written through to SQLite.

use super::ops::IssuedCredentials;
use cumulo_store::rusqlite::{self, params};
use cumulo_store::{Store, StoreError};
use cumulo_wire::AwsError;
use std::collections::HashMap;
use std::sync::{Arc, RwLock};

const MIGRATIONS: &[&str] = &["CREATE TABLE sts_credentials (
        access_key_id TEXT PRIMARY KEY,
        doc TEXT NOT NULL
    );"];

/// Credentials by access key id.
pub struct CredentialStore {
    store: Arc<Store>,
    by_key: RwLock<HashMap<String, IssuedCredentials>>,
}

impl CredentialStore {
    pub fn open(store: Arc<Store>) -> Result<Self, StoreError> {
        store.migrate("sts", MIGRATIONS)?;
        let docs: Vec<String> = store.read(|c| {
            let mut stmt = c.prepare("SELECT doc FROM sts_credentials")?;
            let rows = stmt.query_map([], |r| r.get::<_, String>(0))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })?;
        // A row that no longer parses (hand-edited database) is skipped rather than fatal: the
        // only consequence is that its holder is treated as the default caller.
        let by_key = docs
            .iter()
            .filter_map(|d| serde_json::from_str::<IssuedCredentials>(d).ok())
            .map(|c| (c.credentials.access_key_id.clone(), c))
            .collect();
        Ok(CredentialStore {
            store,
            by_key: RwLock::new(by_key),
        })
    }

    /// Commits the credentials, then makes them visible.
    pub fn insert(&self, issued: IssuedCredentials) -> Result<(), AwsError> {
        let doc = serde_json::to_string(&issued).map_err(|e| AwsError::internal(e.to_string()))?;
        let key = issued.credentials.access_key_id.clone();
        self.store
            .write(|tx| {
                tx.execute(
                    "INSERT OR REPLACE INTO sts_credentials(access_key_id, doc) VALUES (?1, ?2)",
                    params![key, doc],
                )
            })
            .map_err(|e| AwsError::internal(e.to_string()))?;
        self.by_key
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, issued);
        Ok(())
    }

    pub fn get(&self, access_key_id: &str) -> Option<IssuedCredentials> {
        self.by_key
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .get(access_key_id)
            .cloned()
    }
}
