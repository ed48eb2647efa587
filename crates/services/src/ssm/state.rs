//! Parameters and their version history, in memory per region with write-through to SQLite.

use cumulo_store::rusqlite::{self, params};
use cumulo_store::{Commit, Store, StoreError};
use cumulo_wire::AwsError;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

const MIGRATIONS: &[&str] = &["CREATE TABLE ssm_parameters (
        region TEXT NOT NULL,
        name TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (region, name)
    );"];

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum ParameterType {
    String,
    StringList,
    SecureString,
}

impl ParameterType {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "String" => Some(Self::String),
            "StringList" => Some(Self::StringList),
            "SecureString" => Some(Self::SecureString),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::String => "String",
            Self::StringList => "StringList",
            Self::SecureString => "SecureString",
        }
    }
}

/// The storage tier a parameter is in (Intelligent-Tiering resolves to one of these on write).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Tier {
    Standard,
    Advanced,
}

impl Tier {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Standard => "Standard",
            Self::Advanced => "Advanced",
        }
    }
}

/// One version of a parameter. For SecureString, `value` is the encrypted blob, never plaintext.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Version {
    pub version: i64,
    pub value: String,
    pub param_type: ParameterType,
    pub description: Option<String>,
    pub allowed_pattern: Option<String>,
    pub key_id: Option<String>,
    pub tier: Tier,
    pub data_type: String,
    /// The policies JSON as given (accepted and reported; expiration is not enforced).
    pub policies: Option<String>,
    pub labels: Vec<String>,
    /// Seconds since the epoch, with milliseconds.
    pub last_modified: f64,
    pub last_modified_user: String,
}

/// A parameter: its versions (oldest first, never empty) and its tags.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Parameter {
    pub name: String,
    pub versions: Vec<Version>,
    pub tags: BTreeMap<String, String>,
}

impl Parameter {
    /// The newest version. Versions are never empty (a parameter is created with one and
    /// deleted whole), the `expect`-free fallback keeps that invariant from panicking.
    pub fn latest(&self) -> Option<&Version> {
        self.versions.last()
    }
}

/// Region -> name -> parameter, ordered by name (listings are name-ordered and paginate by name).
type Regions = HashMap<String, BTreeMap<String, Parameter>>;

pub struct ParameterStore {
    store: Arc<Store>,
    regions: Mutex<Regions>,
}

pub(super) fn internal(e: impl std::fmt::Display) -> AwsError {
    AwsError::internal(e.to_string())
}

impl ParameterStore {
    pub fn open(store: Arc<Store>) -> Result<Self, StoreError> {
        store.migrate("ssm", MIGRATIONS)?;
        let rows: Vec<(String, String)> = store.read(|c| {
            let mut stmt = c.prepare("SELECT region, doc FROM ssm_parameters")?;
            let rows = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })?;
        let mut regions: Regions = HashMap::new();
        for (region, doc) in rows {
            // A row that does not parse was not written by cumulo; skipping it keeps the server up.
            if let Ok(p) = serde_json::from_str::<Parameter>(&doc) {
                regions.entry(region).or_default().insert(p.name.clone(), p);
            }
        }
        Ok(ParameterStore {
            store,
            regions: Mutex::new(regions),
        })
    }

    /// Exclusive access to all parameters; mutations go through [`Locked::save`]/[`Locked::remove`].
    pub fn lock(&self) -> Locked<'_> {
        Locked {
            store: &self.store,
            regions: self.regions.lock().unwrap_or_else(|p| p.into_inner()),
        }
    }
}

pub struct Locked<'a> {
    store: &'a Store,
    regions: MutexGuard<'a, Regions>,
}

impl Locked<'_> {
    pub fn get(&self, region: &str, name: &str) -> Option<&Parameter> {
        self.regions.get(region)?.get(name)
    }

    /// All parameters of a region in name order.
    pub fn all(&self, region: &str) -> impl Iterator<Item = &Parameter> {
        self.regions
            .get(region)
            .into_iter()
            .flat_map(|m| m.values())
    }

    /// Queues the parameter's write on the store's group commit and replaces it in memory.
    /// The caller drops the lock and awaits the [`Commit`] before it answers: the store sees
    /// writes in the order memory does (they are queued under this lock), and concurrent
    /// requests share one commit.
    pub fn save(&mut self, region: &str, param: Parameter) -> Result<Commit, AwsError> {
        let doc = serde_json::to_string(&param).map_err(internal)?;
        let (r, name) = (region.to_string(), param.name.clone());
        let commit = self.store.write_grouped(move |tx| {
            tx.prepare_cached(
                "INSERT OR REPLACE INTO ssm_parameters(region, name, doc) VALUES (?1, ?2, ?3)",
            )?
            .execute(params![r, name, doc])
        });
        self.regions
            .entry(region.to_string())
            .or_default()
            .insert(param.name.clone(), param);
        Ok(commit)
    }

    /// Deletes several parameters in one grouped write (awaited as for [`Locked::save`]).
    pub fn remove(&mut self, region: &str, names: &[String]) -> Commit {
        if let Some(m) = self.regions.get_mut(region) {
            for n in names {
                m.remove(n);
            }
        }
        let (region, names) = (region.to_string(), names.to_vec());
        self.store.write_grouped(move |tx| {
            for n in &names {
                tx.prepare_cached("DELETE FROM ssm_parameters WHERE region = ?1 AND name = ?2")?
                    .execute(params![region, n])?;
            }
            Ok(())
        })
    }
}
