//! S3's state: the in-memory index of buckets, object versions and uploads, and its tables.
//!
//! Metadata lives in memory for fast reads and is written through to SQLite before a mutation is
//! acknowledged; object bodies live only in SQLite (`s3_objects.body`, `s3_parts.body`) and are
//! read per GET, so memory holds no payloads. Bucket names are global (as in AWS); each bucket
//! remembers its region.

use super::checksum::Checksum;
use cumulo_store::rusqlite::{self, OptionalExtension, params};
use cumulo_store::{Store, StoreError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// The version id of objects written while versioning is off or suspended.
pub const NULL_VERSION: &str = "null";

pub const MIGRATIONS: &[&str] = &["
CREATE TABLE s3_buckets (
    name TEXT PRIMARY KEY,
    region TEXT NOT NULL,
    created INTEGER NOT NULL,
    versioning TEXT
);
CREATE TABLE s3_bucket_configs (
    bucket TEXT NOT NULL,
    kind TEXT NOT NULL,
    body TEXT NOT NULL,
    PRIMARY KEY (bucket, kind)
);
CREATE TABLE s3_objects (
    bucket TEXT NOT NULL,
    key TEXT NOT NULL,
    version_id TEXT NOT NULL,
    meta TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (bucket, key, version_id)
);
CREATE TABLE s3_uploads (
    upload_id TEXT PRIMARY KEY,
    bucket TEXT NOT NULL,
    meta TEXT NOT NULL
);
CREATE TABLE s3_parts (
    upload_id TEXT NOT NULL,
    part_number INTEGER NOT NULL,
    meta TEXT NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (upload_id, part_number)
);
"];

/// Standard HTTP headers S3 stores with an object and returns on GET/HEAD.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContentHeaders {
    pub content_type: Option<String>,
    pub content_encoding: Option<String>,
    pub content_disposition: Option<String>,
    pub content_language: Option<String>,
    pub cache_control: Option<String>,
    pub expires: Option<String>,
}

/// Everything about one object version except its body. Fields added later default when
/// older rows are loaded.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ObjectMeta {
    pub key: String,
    pub version_id: String,
    /// Write order: versions of a key sort by it (newest last).
    pub seq: i64,
    pub delete_marker: bool,
    pub size: u64,
    /// Hex MD5 (or `md5-of-md5s-N`), without quotes.
    pub etag: String,
    /// Milliseconds since the epoch.
    pub last_modified: i64,
    pub headers: ContentHeaders,
    /// `x-amz-meta-*` names (lowercase, without the prefix) and values.
    pub user_meta: Vec<(String, String)>,
    pub tags: Vec<(String, String)>,
    pub checksum: Option<Checksum>,
    /// Sizes of the parts of a multipart object (empty for a single PUT).
    pub part_sizes: Vec<u64>,
    pub storage_class: Option<String>,
    pub website_redirect: Option<String>,
    /// `x-amz-server-side-encryption` as requested (`None`: the bucket default, SSE-S3).
    pub sse: Option<String>,
    pub sse_kms_key_id: Option<String>,
    /// `x-amz-replication-status`: `COMPLETED` / `FAILED` on a replicated source version,
    /// `REPLICA` on its copy (see `replication`).
    pub replication_status: Option<String>,
}

/// One uploaded part's metadata.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PartMeta {
    pub number: u32,
    pub etag: String,
    pub size: u64,
    pub last_modified: i64,
    pub checksum: Option<Checksum>,
}

/// An in-progress multipart upload; `template` holds what the final object will carry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Upload {
    pub upload_id: String,
    pub key: String,
    pub initiated: i64,
    pub template: ObjectMeta,
    pub checksum_algorithm: Option<super::checksum::Algorithm>,
    /// `x-amz-checksum-type: FULL_OBJECT`: the object's checksum covers its whole body instead
    /// of being the composite of its parts' checksums.
    #[serde(default)]
    pub full_object: bool,
    #[serde(skip)]
    pub parts: BTreeMap<u32, PartMeta>,
}

#[derive(Debug, Clone, Default)]
pub struct Bucket {
    pub name: String,
    pub region: String,
    pub created: i64,
    /// `Enabled` / `Suspended`, or `None` if never enabled.
    pub versioning: Option<String>,
    /// Stored configuration documents by kind (`policy`, `cors`, `tagging`, ...).
    pub configs: HashMap<String, String>,
    /// Versions of each key, oldest first.
    pub objects: BTreeMap<String, Vec<ObjectMeta>>,
    pub uploads: BTreeMap<String, Upload>,
}

impl Bucket {
    /// The current version of a key, if it is not a delete marker.
    pub fn latest(&self, key: &str) -> Option<&ObjectMeta> {
        self.objects
            .get(key)
            .and_then(|v| v.last())
            .filter(|m| !m.delete_marker)
    }

    pub fn versioning_enabled(&self) -> bool {
        self.versioning.as_deref() == Some("Enabled")
    }
}

#[derive(Debug, Default)]
pub struct State {
    pub buckets: BTreeMap<String, Bucket>,
    pub next_seq: i64,
}

fn json_err(e: serde_json::Error) -> rusqlite::Error {
    rusqlite::Error::ToSqlConversionFailure(Box::new(e))
}

pub fn to_json<T: Serialize>(v: &T) -> rusqlite::Result<String> {
    serde_json::to_string(v).map_err(json_err)
}

fn from_json<T: for<'a> Deserialize<'a>>(s: &str) -> rusqlite::Result<T> {
    serde_json::from_str(s).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(0, rusqlite::types::Type::Text, Box::new(e))
    })
}

/// Loads the whole metadata index (no bodies) from the store.
pub fn load(store: &Store) -> Result<State, StoreError> {
    store.read(|c| {
        let mut state = State::default();
        let mut q = c.prepare("SELECT name, region, created, versioning FROM s3_buckets")?;
        let rows = q.query_map([], |r| {
            Ok(Bucket {
                name: r.get(0)?,
                region: r.get(1)?,
                created: r.get(2)?,
                versioning: r.get(3)?,
                ..Default::default()
            })
        })?;
        for b in rows {
            let b = b?;
            state.buckets.insert(b.name.clone(), b);
        }
        let mut q = c.prepare("SELECT bucket, kind, body FROM s3_bucket_configs")?;
        let rows = q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get(1)?, r.get(2)?)))?;
        for row in rows {
            let (bucket, kind, body) = row?;
            if let Some(b) = state.buckets.get_mut(&bucket) {
                b.configs.insert(kind, body);
            }
        }
        let mut q = c.prepare("SELECT bucket, meta FROM s3_objects")?;
        let rows = q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            let (bucket, meta) = row?;
            let meta: ObjectMeta = from_json(&meta)?;
            state.next_seq = state.next_seq.max(meta.seq + 1);
            if let Some(b) = state.buckets.get_mut(&bucket) {
                b.objects.entry(meta.key.clone()).or_default().push(meta);
            }
        }
        for b in state.buckets.values_mut() {
            for versions in b.objects.values_mut() {
                versions.sort_by_key(|m| m.seq);
            }
        }
        let mut q = c.prepare("SELECT bucket, meta FROM s3_uploads")?;
        let rows = q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut owner = HashMap::new();
        for row in rows {
            let (bucket, meta) = row?;
            let up: Upload = from_json(&meta)?;
            owner.insert(up.upload_id.clone(), bucket.clone());
            if let Some(b) = state.buckets.get_mut(&bucket) {
                b.uploads.insert(up.upload_id.clone(), up);
            }
        }
        let mut q = c.prepare("SELECT upload_id, meta FROM s3_parts")?;
        let rows = q.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        for row in rows {
            let (upload_id, meta) = row?;
            let part: PartMeta = from_json(&meta)?;
            let up = owner
                .get(&upload_id)
                .and_then(|b| state.buckets.get_mut(b))
                .and_then(|b| b.uploads.get_mut(&upload_id));
            if let Some(up) = up {
                up.parts.insert(part.number, part);
            }
        }
        Ok(state)
    })
}

/// Reads an object version's body (or a byte range of it) from the store.
pub fn read_body(
    store: &Store,
    bucket: &str,
    key: &str,
    version_id: &str,
    range: Option<(u64, u64)>,
) -> Result<Option<Vec<u8>>, StoreError> {
    store.read(|c| {
        match range {
            // substr on a blob works on bytes (1-based), so a range never loads the whole body.
            Some((start, end)) => c
                .query_row(
                    "SELECT substr(body, ?4, ?5) FROM s3_objects WHERE bucket = ?1 AND key = ?2 AND version_id = ?3",
                    params![bucket, key, version_id, (start + 1) as i64, (end - start + 1) as i64],
                    |r| r.get::<_, Vec<u8>>(0),
                )
                .optional(),
            None => c
                .query_row(
                    "SELECT body FROM s3_objects WHERE bucket = ?1 AND key = ?2 AND version_id = ?3",
                    params![bucket, key, version_id],
                    |r| r.get::<_, Vec<u8>>(0),
                )
                .optional(),
        }
    })
}
