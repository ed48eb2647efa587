//! CloudFront's records (global: one set per account): distributions with their invalidations
//! and tags, origin access controls and identities, custom policies, functions. Each is written
//! through to the store as one JSON document; a mutation works on a copy and names what it
//! touched.

use cumulo_store::rusqlite::{self, Connection, Transaction, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};

pub const MIGRATIONS: &[&str] = &["CREATE TABLE cloudfront_records (
        kind TEXT NOT NULL,
        id TEXT NOT NULL,
        doc TEXT NOT NULL,
        PRIMARY KEY (kind, id)
    );"];

pub type Tags = Vec<(String, String)>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Distribution {
    pub id: String,
    pub domain: String,
    /// InProgress (until its first Get after a change), Deployed.
    pub status: String,
    pub etag: String,
    pub last_modified: String,
    /// The DistributionConfig as the API shapes it, with AWS's defaults filled in.
    pub config: Value,
    pub tags: Tags,
    /// Invalidation objects as the API shapes them, newest last.
    pub invalidations: Vec<Value>,
    /// The ACM certificate whose InUseBy names this distribution.
    pub certificate: Option<String>,
}

/// An origin access control, an origin access identity or a custom cache, origin request or
/// response headers policy: an id, an ETag and a config.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Configured {
    pub id: String,
    pub etag: String,
    pub last_modified: String,
    pub config: Value,
    /// An origin access identity's S3 canonical user id.
    #[serde(default)]
    pub canonical_user: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FunctionStage {
    pub config: Value,
    /// The code, base64 as the API carries it.
    pub code: String,
    pub etag: String,
    pub last_modified: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Function {
    pub name: String,
    pub created: String,
    pub development: FunctionStage,
    pub live: Option<FunctionStage>,
    pub tags: Tags,
}

#[derive(Debug, Clone, Default)]
pub struct State {
    pub distributions: BTreeMap<String, Distribution>,
    /// By kind (`origin-access-control`, `origin-access-identity`, `cache-policy`,
    /// `origin-request-policy`, `response-headers-policy`), then id.
    pub configured: BTreeMap<&'static str, BTreeMap<String, Configured>>,
    pub functions: BTreeMap<String, Function>,
    pub dirty: BTreeSet<(&'static str, String)>,
}

pub const DISTRIBUTION: &str = "distribution";
pub const FUNCTION: &str = "function";
pub const OAC: &str = "origin-access-control";
pub const OAI: &str = "origin-access-identity";
pub const CACHE_POLICY: &str = "cache-policy";
pub const ORIGIN_REQUEST_POLICY: &str = "origin-request-policy";
pub const RESPONSE_HEADERS_POLICY: &str = "response-headers-policy";
const CONFIGURED: &[&str] = &[
    OAC,
    OAI,
    CACHE_POLICY,
    ORIGIN_REQUEST_POLICY,
    RESPONSE_HEADERS_POLICY,
];

impl State {
    pub fn touch(&mut self, kind: &'static str, id: &str) {
        self.dirty.insert((kind, id.to_string()));
    }

    pub fn configured(&self, kind: &'static str) -> impl Iterator<Item = &Configured> {
        self.configured
            .get(kind)
            .into_iter()
            .flat_map(|m| m.values())
    }

    pub fn configured_mut(&mut self, kind: &'static str) -> &mut BTreeMap<String, Configured> {
        self.configured.entry(kind).or_default()
    }

    fn doc(&self, kind: &str, id: &str) -> serde_json::Result<Option<String>> {
        match kind {
            DISTRIBUTION => self.distributions.get(id).map(serde_json::to_string),
            FUNCTION => self.functions.get(id).map(serde_json::to_string),
            k => self
                .configured
                .get(k)
                .and_then(|m| m.get(id))
                .map(serde_json::to_string),
        }
        .transpose()
    }
}

pub fn save_dirty(tx: &Transaction<'_>, s: &State) -> rusqlite::Result<()> {
    for (kind, id) in &s.dirty {
        match s
            .doc(kind, id)
            .map_err(|e| rusqlite::Error::ToSqlConversionFailure(Box::new(e)))?
        {
            Some(doc) => tx.execute(
                "INSERT OR REPLACE INTO cloudfront_records(kind, id, doc) VALUES (?1, ?2, ?3)",
                params![kind, id, doc],
            )?,
            None => tx.execute(
                "DELETE FROM cloudfront_records WHERE kind = ?1 AND id = ?2",
                params![kind, id],
            )?,
        };
    }
    Ok(())
}

pub fn load(c: &Connection) -> rusqlite::Result<(State, Vec<String>)> {
    let mut s = State::default();
    let mut problems = Vec::new();
    let mut stmt = c.prepare("SELECT kind, id, doc FROM cloudfront_records")?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    for row in rows {
        let (kind, id, doc) = row?;
        let outcome = match kind.as_str() {
            DISTRIBUTION => serde_json::from_str(&doc).map(|v| {
                s.distributions.insert(id.clone(), v);
            }),
            FUNCTION => serde_json::from_str(&doc).map(|v| {
                s.functions.insert(id.clone(), v);
            }),
            k => match CONFIGURED.iter().find(|c| **c == k) {
                Some(c) => serde_json::from_str(&doc).map(|v| {
                    s.configured_mut(c).insert(id.clone(), v);
                }),
                None => Ok(()),
            },
        };
        if let Err(e) = outcome {
            problems.push(format!("{kind}/{id}: {e}"));
        }
    }
    Ok((s, problems))
}
