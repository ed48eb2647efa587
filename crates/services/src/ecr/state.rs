//! Repositories (with their images' manifests) in memory per region, each written through to
//! the store as one document.

use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

pub const MIGRATIONS: &[&str] = &["CREATE TABLE ecr_repositories (
        region TEXT NOT NULL,
        name TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, name)
    );"];

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Image {
    /// `sha256:<hex>` of the manifest bytes.
    pub digest: String,
    pub tags: Vec<String>,
    pub manifest: String,
    pub media_type: String,
    /// The config's media type, when the manifest names one.
    pub artifact_media_type: Option<String>,
    /// Seconds since the epoch.
    pub pushed_at: f64,
    /// Sum of the layer sizes the manifest declares.
    pub size: i64,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Repository {
    pub name: String,
    pub created: f64,
    pub tag_mutability: String,
    pub scan_on_push: bool,
    pub encryption_type: String,
    pub kms_key: Option<String>,
    pub tags: BTreeMap<String, String>,
    pub policy: Option<String>,
    pub lifecycle_policy: Option<String>,
    /// Oldest push first.
    pub images: Vec<Image>,
}

pub type Regions = HashMap<String, BTreeMap<String, Repository>>;

pub fn load(c: &Connection) -> rusqlite::Result<(Regions, Vec<String>)> {
    let mut regions: Regions = HashMap::new();
    let mut problems = Vec::new();
    let mut stmt = c.prepare("SELECT region, name, doc FROM ecr_repositories")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    for row in rows {
        let (region, name, doc) = row?;
        match serde_json::from_str::<Repository>(&doc) {
            Ok(repo) => {
                regions.entry(region).or_default().insert(name, repo);
            }
            Err(e) => problems.push(format!("repository {region}/{name}: {e}")),
        }
    }
    Ok((regions, problems))
}

pub fn save(tx: &Transaction<'_>, region: &str, repo: &Repository) -> rusqlite::Result<()> {
    let doc = serde_json::to_string(repo)
        .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?;
    tx.execute(
        "INSERT OR REPLACE INTO ecr_repositories(region, name, doc) VALUES (?1, ?2, ?3)",
        params![region, repo.name, doc],
    )?;
    Ok(())
}

pub fn delete(tx: &Transaction<'_>, region: &str, name: &str) -> rusqlite::Result<()> {
    tx.execute(
        "DELETE FROM ecr_repositories WHERE region = ?1 AND name = ?2",
        params![region, name],
    )?;
    Ok(())
}
