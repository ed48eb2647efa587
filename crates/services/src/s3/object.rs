//! Object operations: put, get, head, delete (single and batch), copy and tagging, plus the
//! pure helpers they share (ranges, preconditions, tag validation).

use super::checksum::{Algorithm, Checksum};
use super::replication;
use super::state::{self, ContentHeaders, NULL_VERSION, ObjectMeta, State};
use super::{S3Service, errors, now_ms};
use cumulo_store::rusqlite::params;
use cumulo_wire::AwsError;
use md5::{Digest, Md5};
use std::collections::HashMap;

/// The longest key S3 accepts, in bytes.
const MAX_KEY_BYTES: usize = 1024;

/// What PutObject stores.
#[derive(Debug, Clone, Default)]
pub struct PutInput {
    pub key: String,
    pub body: bytes::Bytes,
    pub headers: ContentHeaders,
    pub user_meta: Vec<(String, String)>,
    pub tags: Vec<(String, String)>,
    /// `x-amz-sdk-checksum-algorithm`: the checksum to compute when no value was sent.
    pub checksum_algorithm: Option<Algorithm>,
    /// Checksum values the client sent (`x-amz-checksum-*` headers or trailers), verified here.
    pub checksum_values: Vec<(Algorithm, String)>,
    /// `Content-MD5`, base64.
    pub content_md5: Option<String>,
    pub storage_class: Option<String>,
    pub website_redirect: Option<String>,
    pub sse: Option<String>,
    pub sse_kms_key_id: Option<String>,
    /// Conditional write: `If-None-Match: *` fails if the key exists; `If-Match` needs the ETag.
    pub if_none_match: Option<String>,
    pub if_match: Option<String>,
}

#[derive(Debug, Clone)]
pub struct PutOutput {
    pub meta: ObjectMeta,
    /// `Some` when the bucket has versioning configured (S3 then reports the version id).
    pub version_id: Option<String>,
}

/// A GET's result: the version's metadata and the (possibly ranged) body.
#[derive(Debug, Clone)]
pub struct GetOutput {
    pub meta: ObjectMeta,
    pub body: Vec<u8>,
    /// Inclusive byte range served, if the request asked for one.
    pub range: Option<(u64, u64)>,
    pub version_reported: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DeleteOutput {
    pub key: String,
    pub version_id: Option<String>,
    pub delete_marker: bool,
}

/// One DeleteObjects entry: what was asked and how it went.
#[derive(Debug, Clone)]
pub struct DeleteEntry {
    pub key: String,
    pub version_id: Option<String>,
    pub result: Result<DeleteOutput, AwsError>,
}

/// What CopyObject needs beyond the destination bucket.
#[derive(Debug, Clone, Default)]
pub struct CopyInput {
    pub src_bucket: String,
    pub src_key: String,
    pub src_version: Option<String>,
    pub key: String,
    /// `x-amz-metadata-directive: REPLACE`; otherwise the source's metadata is copied.
    pub replace_metadata: bool,
    pub headers: ContentHeaders,
    pub user_meta: Vec<(String, String)>,
    /// `x-amz-tagging-directive: REPLACE`.
    pub replace_tags: bool,
    pub tags: Vec<(String, String)>,
    pub storage_class: Option<String>,
    pub website_redirect: Option<String>,
    pub checksum_algorithm: Option<Algorithm>,
    pub sse: Option<String>,
    pub sse_kms_key_id: Option<String>,
    pub conditions: Conditions,
}

/// HTTP preconditions (`If-Match` ...; for copies the `x-amz-copy-source-if-*` headers).
#[derive(Debug, Clone, Default)]
pub struct Conditions {
    pub if_match: Option<String>,
    pub if_none_match: Option<String>,
    pub if_modified_since: Option<i64>,
    pub if_unmodified_since: Option<i64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Precondition {
    Pass,
    NotModified,
    /// Failed; names the header that failed, as S3's `Condition` element does.
    Failed(&'static str),
}

/// Whether an ETag header value (`"abc"`, `W/"abc"`, a list, or `*`) matches `etag`.
pub fn etag_matches(header: &str, etag: &str) -> bool {
    header
        .split(',')
        .map(str::trim)
        .any(|t| t == "*" || t.trim_start_matches("W/").trim_matches('"') == etag)
}

impl Conditions {
    /// S3's (RFC 7232's) evaluation order: If-Match beats If-Unmodified-Since, If-None-Match
    /// beats If-Modified-Since. Dates compare at second precision, like the headers.
    pub fn evaluate(&self, meta: &ObjectMeta) -> Precondition {
        let modified = meta.last_modified / 1000;
        match &self.if_match {
            Some(m) if !etag_matches(m, &meta.etag) => return Precondition::Failed("If-Match"),
            Some(_) => {}
            None => {
                if self
                    .if_unmodified_since
                    .is_some_and(|t| modified > t / 1000)
                {
                    return Precondition::Failed("If-Unmodified-Since");
                }
            }
        }
        match &self.if_none_match {
            Some(m) if etag_matches(m, &meta.etag) => Precondition::NotModified,
            Some(_) => Precondition::Pass,
            None if self.if_modified_since.is_some_and(|t| modified <= t / 1000) => {
                Precondition::NotModified
            }
            None => Precondition::Pass,
        }
    }
}

/// A `Range` that starts past the end of the object (S3's 416 `InvalidRange`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unsatisfiable;

/// Parses a `Range` header against an object size: `Ok(None)` when the header is not a single
/// byte range S3 understands (S3 then serves the whole object), `Err` when unsatisfiable.
pub fn parse_range(header: &str, size: u64) -> Result<Option<(u64, u64)>, Unsatisfiable> {
    let Some(spec) = header.trim().strip_prefix("bytes=") else {
        return Ok(None);
    };
    if spec.contains(',') {
        return Ok(None);
    }
    let Some((a, b)) = spec.split_once('-') else {
        return Ok(None);
    };
    let (a, b) = (a.trim(), b.trim());
    if a.is_empty() {
        let Ok(n) = b.parse::<u64>() else {
            return Ok(None);
        };
        if n == 0 || size == 0 {
            return Err(Unsatisfiable);
        }
        return Ok(Some((size.saturating_sub(n), size - 1)));
    }
    let Ok(start) = a.parse::<u64>() else {
        return Ok(None);
    };
    let end = if b.is_empty() {
        u64::MAX
    } else {
        match b.parse::<u64>() {
            Ok(e) if e >= start => e,
            _ => return Ok(None),
        }
    };
    if start >= size {
        return Err(Unsatisfiable);
    }
    Ok(Some((start, end.min(size - 1))))
}

/// Checks tags the way S3 does; `max` is 10 for objects, 50 for buckets.
pub fn validate_tags(tags: &[(String, String)], max: usize) -> Result<(), AwsError> {
    if tags.len() > max {
        return Err(errors::invalid_tag(&format!(
            "Object tags cannot be greater than {max}"
        )));
    }
    for (i, (k, v)) in tags.iter().enumerate() {
        if k.is_empty() || k.chars().count() > 128 {
            return Err(errors::invalid_tag(
                "The TagKey you have provided is invalid",
            ));
        }
        if v.chars().count() > 256 {
            return Err(errors::invalid_tag(
                "The TagValue you have provided is invalid",
            ));
        }
        if k.starts_with("aws:") {
            return Err(errors::invalid_tag(
                "Your TagKey cannot be prefixed with aws:",
            ));
        }
        if tags[..i].iter().any(|(k2, _)| k2 == k) {
            return Err(errors::invalid_tag(
                "Cannot provide multiple Tags with the same key",
            ));
        }
    }
    Ok(())
}

pub fn validate_key(key: &str) -> Result<(), AwsError> {
    if key.len() > MAX_KEY_BYTES {
        return Err(
            AwsError::bad_request("KeyTooLongError", "Your key is too long")
                .with_extra("MaxSizeAllowed", &MAX_KEY_BYTES.to_string())
                .with_extra("Size", &key.len().to_string()),
        );
    }
    Ok(())
}

pub fn validate_version_id(version_id: &str) -> Result<(), AwsError> {
    let ok = version_id == NULL_VERSION
        || (!version_id.is_empty()
            && version_id.len() <= 64
            && version_id
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b)));
    if ok {
        Ok(())
    } else {
        Err(errors::invalid_argument(
            "Invalid version id specified",
            "versionId",
            version_id,
        ))
    }
}

/// Where a new version's body comes from.
pub(super) enum BodySource<'a> {
    Bytes(&'a [u8]),
    /// An existing version's body, copied inside SQLite so it never passes through memory.
    Copy {
        bucket: &'a str,
        key: &'a str,
        version_id: &'a str,
    },
}

/// A fresh version id (32 URL-safe characters, like S3's).
pub(super) fn new_version_id() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

impl S3Service {
    /// Writes a new current version of `meta.key` (version id chosen by the bucket's versioning
    /// state) and commits it before returning the stored metadata; then replicates it to the
    /// destinations of the bucket's replication rules that match it (see `replication`).
    pub(super) fn commit_version(
        &self,
        state: &mut State,
        bucket: &str,
        mut meta: ObjectMeta,
        body: BodySource<'_>,
        completes_upload: Option<&str>,
    ) -> Result<ObjectMeta, AwsError> {
        let b = state
            .buckets
            .get(bucket)
            .ok_or_else(|| errors::no_such_bucket(bucket))?;
        meta.version_id = if b.versioning_enabled() {
            new_version_id()
        } else {
            NULL_VERSION.to_string()
        };
        let destinations = match b.configs.get(replication::KEY) {
            Some(doc) if b.versioning_enabled() => {
                replication::destinations(doc, &meta.key, &meta.tags)
            }
            _ => Vec::new(),
        };
        // A destination deleted (or its versioning suspended) since the rule was put fails.
        let reachable = destinations.iter().all(|d| {
            state
                .buckets
                .get(&d.bucket)
                .is_some_and(|b| b.versioning_enabled())
        });
        if !destinations.is_empty() {
            meta.replication_status = Some(if reachable { "COMPLETED" } else { "FAILED" }.into());
        }
        let meta = self.write_version(state, bucket, meta, body, completes_upload)?;
        if reachable {
            for d in destinations {
                let replica = ObjectMeta {
                    replication_status: Some("REPLICA".into()),
                    storage_class: d.storage_class.or_else(|| meta.storage_class.clone()),
                    ..meta.clone()
                };
                let source = BodySource::Copy {
                    bucket,
                    key: &meta.key,
                    version_id: &meta.version_id,
                };
                self.write_version(state, &d.bucket, replica, source, None)?;
            }
        }
        Ok(meta)
    }

    /// Writes `meta` (its version id already decided) and commits it.
    fn write_version(
        &self,
        state: &mut State,
        bucket: &str,
        mut meta: ObjectMeta,
        body: BodySource<'_>,
        completes_upload: Option<&str>,
    ) -> Result<ObjectMeta, AwsError> {
        meta.seq = state.next_seq;
        let json = state::to_json(&meta).map_err(errors::internal)?;
        self.persist(|tx| {
            if let Some(upload_id) = completes_upload {
                tx.execute("DELETE FROM s3_parts WHERE upload_id = ?1", [upload_id])?;
                tx.execute("DELETE FROM s3_uploads WHERE upload_id = ?1", [upload_id])?;
            }
            match body {
            BodySource::Bytes(data) => tx.execute(
                "INSERT OR REPLACE INTO s3_objects (bucket, key, version_id, meta, body) VALUES (?1, ?2, ?3, ?4, ?5)",
                params![bucket, meta.key, meta.version_id, json, data],
            ),
            BodySource::Copy { bucket: sb, key: sk, version_id: sv } => tx.execute(
                "INSERT OR REPLACE INTO s3_objects (bucket, key, version_id, meta, body)
                 SELECT ?1, ?2, ?3, ?4, body FROM s3_objects WHERE bucket = ?5 AND key = ?6 AND version_id = ?7",
                params![bucket, meta.key, meta.version_id, json, sb, sk, sv],
            ),
            }
        })?;
        state.next_seq += 1;
        if let Some(b) = state.buckets.get_mut(bucket) {
            let versions = b.objects.entry(meta.key.clone()).or_default();
            versions.retain(|v| v.version_id != meta.version_id);
            versions.push(meta.clone());
        }
        Ok(meta)
    }

    /// PutObject.
    pub fn put_object(&self, bucket: &str, input: PutInput) -> Result<PutOutput, AwsError> {
        validate_key(&input.key)?;
        validate_tags(&input.tags, 10)?;
        if let Some(md5) = &input.content_md5 {
            use base64::Engine;
            let sent = base64::engine::general_purpose::STANDARD
                .decode(md5)
                .ok()
                .filter(|d| d.len() == 16)
                .ok_or_else(|| {
                    AwsError::bad_request(
                        "InvalidDigest",
                        "The Content-MD5 you specified was invalid.",
                    )
                })?;
            if sent[..] != Md5::digest(&input.body)[..] {
                return Err(AwsError::bad_request(
                    "BadDigest",
                    "The Content-MD5 you specified did not match what we received.",
                ));
            }
        }
        let checksum = verify_checksums(
            &input.body,
            &input.checksum_values,
            input.checksum_algorithm,
        )?;
        let mut state = self.write();
        let b = state
            .buckets
            .get(bucket)
            .ok_or_else(|| errors::no_such_bucket(bucket))?;
        let current = b.latest(&input.key);
        if let Some(m) = &input.if_none_match
            && current.is_some_and(|c| etag_matches(m, &c.etag))
        {
            return Err(errors::precondition_failed("If-None-Match"));
        }
        if let Some(m) = &input.if_match {
            match current {
                Some(c) if etag_matches(m, &c.etag) => {}
                Some(_) => return Err(errors::precondition_failed("If-Match")),
                None => return Err(errors::no_such_key(&input.key)),
            }
        }
        let versioned = b.versioning.is_some();
        let meta = ObjectMeta {
            key: input.key,
            size: input.body.len() as u64,
            etag: hex::encode(Md5::digest(&input.body)),
            last_modified: now_ms(),
            headers: input.headers,
            user_meta: input.user_meta,
            tags: input.tags,
            checksum,
            storage_class: input.storage_class,
            website_redirect: input.website_redirect,
            sse: input.sse,
            sse_kms_key_id: input.sse_kms_key_id,
            ..Default::default()
        };
        let meta = self.commit_version(
            &mut state,
            bucket,
            meta,
            BodySource::Bytes(&input.body),
            None,
        )?;
        Ok(PutOutput {
            version_id: versioned.then(|| meta.version_id.clone()),
            meta,
        })
    }

    /// The metadata of a version (the current one without `version_id`), for HEAD and GET.
    pub fn head_object(
        &self,
        bucket: &str,
        key: &str,
        version_id: Option<&str>,
    ) -> Result<ObjectMeta, AwsError> {
        let state = self.read();
        lookup(&state, bucket, key, version_id, "HEAD").cloned()
    }

    /// GetObject, optionally ranged (`range` is the raw `Range` header).
    pub fn get_object(
        &self,
        bucket: &str,
        key: &str,
        version_id: Option<&str>,
        range: Option<&str>,
        conditions: &Conditions,
    ) -> Result<Result<GetOutput, (Precondition, ObjectMeta)>, AwsError> {
        // Held while the body is read so a concurrent delete cannot remove it in between.
        let state = self.read();
        let meta = lookup(&state, bucket, key, version_id, "GET")?;
        match conditions.evaluate(meta) {
            Precondition::Pass => {}
            other => return Ok(Err((other, meta.clone()))),
        }
        let range = match range {
            Some(r) => {
                parse_range(r, meta.size).map_err(|_| errors::invalid_range(r, meta.size))?
            }
            None => None,
        };
        let body = state::read_body(&self.store, bucket, key, &meta.version_id, range)
            .map_err(errors::internal)?
            .ok_or_else(|| errors::internal("object body missing from the store"))?;
        let version_reported = state
            .buckets
            .get(bucket)
            .is_some_and(|b| b.versioning.is_some());
        Ok(Ok(GetOutput {
            meta: meta.clone(),
            body,
            range,
            version_reported,
        }))
    }

    /// When a GET/HEAD hit a delete marker: its version id (S3 reports it in headers).
    pub fn delete_marker_at(
        &self,
        bucket: &str,
        key: &str,
        version_id: Option<&str>,
    ) -> Option<String> {
        let state = self.read();
        let versions = state.buckets.get(bucket)?.objects.get(key)?;
        let v = match version_id {
            Some(id) => versions.iter().find(|v| v.version_id == id)?,
            None => versions.last()?,
        };
        v.delete_marker.then(|| v.version_id.clone())
    }

    /// Whether the bucket reports version ids (versioning ever configured).
    pub fn bucket_versioned(&self, bucket: &str) -> bool {
        self.read()
            .buckets
            .get(bucket)
            .is_some_and(|b| b.versioning.is_some())
    }

    /// DeleteObject: without a version id, removes the object (unversioned) or adds a delete
    /// marker (versioned); with one, permanently removes that version. Deleting what does not
    /// exist succeeds, as in S3.
    pub fn delete_object(
        &self,
        bucket: &str,
        key: &str,
        version_id: Option<&str>,
    ) -> Result<DeleteOutput, AwsError> {
        let mut entries =
            self.delete_objects(bucket, &[(key.to_string(), version_id.map(str::to_string))])?;
        match entries.pop() {
            Some(entry) => entry.result,
            None => Err(errors::internal("delete produced no result")),
        }
    }

    /// DeleteObjects: each entry succeeds or fails on its own; all the changes are committed
    /// in one transaction before any is visible.
    pub fn delete_objects(
        &self,
        bucket: &str,
        objects: &[(String, Option<String>)],
    ) -> Result<Vec<DeleteEntry>, AwsError> {
        let mut state = self.write();
        let mut seq = state.next_seq;
        let b = state
            .buckets
            .get(bucket)
            .ok_or_else(|| errors::no_such_bucket(bucket))?;
        // The touched keys' versions as they will be after the batch.
        let mut scratch: HashMap<&str, Vec<ObjectMeta>> = HashMap::new();
        let mut changes: Vec<(&str, DeleteChange)> = Vec::new();
        let mut entries = Vec::with_capacity(objects.len());
        for (key, version) in objects {
            let result = match version {
                Some(v) => validate_version_id(v),
                None => Ok(()),
            }
            .map(|_| {
                let versions = scratch
                    .entry(key.as_str())
                    .or_insert_with(|| b.objects.get(key).cloned().unwrap_or_default());
                let (out, change) = plan_delete(
                    b.versioning.as_deref(),
                    versions,
                    key,
                    version.as_deref(),
                    seq,
                );
                if let Some(change) = change {
                    change.apply(versions);
                    if matches!(change, DeleteChange::Marker(_)) {
                        seq += 1;
                    }
                    changes.push((key.as_str(), change));
                }
                out
            });
            entries.push(DeleteEntry {
                key: key.clone(),
                version_id: version.clone(),
                result,
            });
        }
        if changes.is_empty() {
            return Ok(entries);
        }
        let rows: Vec<(&str, &DeleteChange, Option<String>)> = changes
            .iter()
            .map(|(k, c)| {
                let json = match c {
                    DeleteChange::Marker(m) => Some(state::to_json(m).map_err(errors::internal)),
                    DeleteChange::Remove(_) => None,
                }
                .transpose()?;
                Ok((*k, c, json))
            })
            .collect::<Result<_, AwsError>>()?;
        self.persist(|tx| {
            for (key, change, json) in &rows {
                match change {
                    DeleteChange::Remove(v) => tx.execute(
                        "DELETE FROM s3_objects WHERE bucket = ?1 AND key = ?2 AND version_id = ?3",
                        params![bucket, key, v],
                    )?,
                    DeleteChange::Marker(m) => tx.execute(
                        "INSERT OR REPLACE INTO s3_objects (bucket, key, version_id, meta, body) VALUES (?1, ?2, ?3, ?4, x'')",
                        params![bucket, key, m.version_id, json],
                    )?,
                };
            }
            Ok(())
        })?;
        let scratch: Vec<(String, Vec<ObjectMeta>)> = scratch
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect();
        state.next_seq = seq;
        if let Some(b) = state.buckets.get_mut(bucket) {
            for (key, versions) in scratch {
                if versions.is_empty() {
                    b.objects.remove(&key);
                } else {
                    b.objects.insert(key, versions);
                }
            }
        }
        Ok(entries)
    }

    /// CopyObject; returns the new version and the source's version id.
    pub fn copy_object(
        &self,
        bucket: &str,
        input: CopyInput,
    ) -> Result<(ObjectMeta, String, Option<String>), AwsError> {
        validate_key(&input.key)?;
        if input.replace_tags {
            validate_tags(&input.tags, 10)?;
        }
        if let Some(v) = &input.src_version {
            validate_version_id(v)?;
        }
        let mut state = self.write();
        if !state.buckets.contains_key(bucket) {
            return Err(errors::no_such_bucket(bucket));
        }
        let src = lookup(
            &state,
            &input.src_bucket,
            &input.src_key,
            input.src_version.as_deref(),
            "GET",
        )?
        .clone();
        match input.conditions.evaluate(&src) {
            Precondition::Pass => {}
            Precondition::NotModified => {
                return Err(errors::precondition_failed(
                    "x-amz-copy-source-If-None-Match",
                ));
            }
            Precondition::Failed(h) => {
                let h = if h == "If-Match" {
                    "x-amz-copy-source-If-Match"
                } else {
                    "x-amz-copy-source-If-Unmodified-Since"
                };
                return Err(errors::precondition_failed(h));
            }
        }
        let same = input.src_bucket == bucket && input.src_key == input.key;
        if same
            && !input.replace_metadata
            && input.storage_class.is_none()
            && input.website_redirect.is_none()
            && input.checksum_algorithm.is_none()
            && input.sse.is_none()
        {
            return Err(errors::invalid_request(
                "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.",
            ));
        }
        let mut meta = ObjectMeta {
            key: input.key.clone(),
            size: src.size,
            etag: src.etag.clone(),
            last_modified: now_ms(),
            headers: src.headers.clone(),
            user_meta: src.user_meta.clone(),
            tags: src.tags.clone(),
            checksum: src.checksum.clone().filter(|c| !c.composite),
            part_sizes: Vec::new(),
            storage_class: input.storage_class.clone().or(src.storage_class.clone()),
            website_redirect: input.website_redirect.clone(),
            sse: input.sse.clone(),
            sse_kms_key_id: input.sse_kms_key_id.clone(),
            ..Default::default()
        };
        // A copied multipart object becomes a single-part object: S3 gives it a plain MD5 ETag.
        let needs_body = src.etag.contains('-')
            || input
                .checksum_algorithm
                .is_some_and(|a| meta.checksum.as_ref().is_none_or(|c| c.algorithm != a));
        if needs_body {
            let body = state::read_body(
                &self.store,
                &input.src_bucket,
                &input.src_key,
                &src.version_id,
                None,
            )
            .map_err(errors::internal)?
            .ok_or_else(|| errors::internal("object body missing from the store"))?;
            meta.etag = hex::encode(Md5::digest(&body));
            if let Some(a) = input.checksum_algorithm {
                meta.checksum = Some(Checksum::full(a, &body));
            }
        }
        if input.replace_metadata {
            meta.headers = input.headers;
            meta.user_meta = input.user_meta;
        }
        if input.replace_tags {
            meta.tags = input.tags;
        }
        let versioned = state
            .buckets
            .get(bucket)
            .is_some_and(|b| b.versioning.is_some());
        let meta = self.commit_version(
            &mut state,
            bucket,
            meta,
            BodySource::Copy {
                bucket: &input.src_bucket,
                key: &input.src_key,
                version_id: &src.version_id,
            },
            None,
        )?;
        let new_version = versioned.then(|| meta.version_id.clone());
        Ok((meta, src.version_id, new_version))
    }

    /// GetObjectTagging.
    pub fn get_object_tagging(
        &self,
        bucket: &str,
        key: &str,
        version_id: Option<&str>,
    ) -> Result<ObjectMeta, AwsError> {
        self.head_object(bucket, key, version_id)
    }

    /// PutObjectTagging (`tags` empty = DeleteObjectTagging). Returns the version tagged.
    pub fn put_object_tagging(
        &self,
        bucket: &str,
        key: &str,
        version_id: Option<&str>,
        tags: Vec<(String, String)>,
    ) -> Result<String, AwsError> {
        validate_tags(&tags, 10)?;
        let mut state = self.write();
        let mut meta = lookup(&state, bucket, key, version_id, "PUT")?.clone();
        meta.tags = tags;
        let json = state::to_json(&meta).map_err(errors::internal)?;
        self.persist(|tx| {
            tx.execute(
                "UPDATE s3_objects SET meta = ?4 WHERE bucket = ?1 AND key = ?2 AND version_id = ?3",
                params![bucket, key, meta.version_id, json],
            )
        })?;
        let version = meta.version_id.clone();
        if let Some(v) = state
            .buckets
            .get_mut(bucket)
            .and_then(|b| b.objects.get_mut(key))
            .and_then(|vs| vs.iter_mut().find(|m| m.version_id == version))
        {
            *v = meta;
        }
        Ok(version)
    }
}

/// What one delete changes: a version removed, or a delete marker added.
#[derive(Debug, Clone, PartialEq, Eq)]
enum DeleteChange {
    Remove(String),
    Marker(Box<ObjectMeta>),
}

impl DeleteChange {
    fn apply(&self, versions: &mut Vec<ObjectMeta>) {
        match self {
            DeleteChange::Remove(v) => versions.retain(|m| m.version_id != *v),
            DeleteChange::Marker(m) => {
                versions.retain(|x| x.version_id != m.version_id);
                versions.push(ObjectMeta::clone(m));
            }
        }
    }
}

/// S3's delete semantics for one key, given its versions (oldest first): with a version id,
/// that version goes; without one, an unversioned bucket drops the object and a versioned one
/// gets a delete marker (`null`-versioned while suspended).
fn plan_delete(
    versioning: Option<&str>,
    versions: &[ObjectMeta],
    key: &str,
    version_id: Option<&str>,
    seq: i64,
) -> (DeleteOutput, Option<DeleteChange>) {
    let mut out = DeleteOutput {
        key: key.to_string(),
        ..Default::default()
    };
    let remove = match version_id {
        Some(v) => Some(v),
        None if versioning.is_none() => Some(NULL_VERSION),
        None => None,
    };
    if let Some(v) = remove {
        let existing = versions.iter().find(|m| m.version_id == v);
        if version_id.is_some() {
            out.version_id = Some(v.to_string());
            out.delete_marker = existing.is_some_and(|m| m.delete_marker);
        }
        return (out, existing.map(|_| DeleteChange::Remove(v.to_string())));
    }
    let marker = ObjectMeta {
        key: key.to_string(),
        version_id: if versioning == Some("Enabled") {
            new_version_id()
        } else {
            NULL_VERSION.to_string()
        },
        seq,
        delete_marker: true,
        last_modified: now_ms(),
        ..Default::default()
    };
    out.version_id = Some(marker.version_id.clone());
    out.delete_marker = true;
    (out, Some(DeleteChange::Marker(Box::new(marker))))
}

/// Finds a version: the current one, or by id. Delete markers answer NoSuchKey (current) or
/// MethodNotAllowed (by id), as S3 does.
pub(super) fn lookup<'a>(
    state: &'a State,
    bucket: &str,
    key: &str,
    version_id: Option<&str>,
    method: &str,
) -> Result<&'a ObjectMeta, AwsError> {
    let b = state
        .buckets
        .get(bucket)
        .ok_or_else(|| errors::no_such_bucket(bucket))?;
    let versions = b.objects.get(key);
    match version_id {
        None => versions
            .and_then(|v| v.last())
            .filter(|m| !m.delete_marker)
            .ok_or_else(|| errors::no_such_key(key)),
        Some(id) => {
            validate_version_id(id)?;
            let m = versions
                .and_then(|vs| vs.iter().find(|m| m.version_id == id))
                .ok_or_else(|| errors::no_such_version(key, id))?;
            if m.delete_marker {
                return Err(errors::method_not_allowed(method, "DeleteMarker"));
            }
            Ok(m)
        }
    }
}

/// Verifies every checksum the client sent and picks the one to store (the first sent, else
/// the requested algorithm computed here).
pub(super) fn verify_checksums(
    body: &[u8],
    sent: &[(Algorithm, String)],
    requested: Option<Algorithm>,
) -> Result<Option<Checksum>, AwsError> {
    for (alg, value) in sent {
        if alg.compute(body) != *value {
            return Err(errors::bad_digest(alg.name()));
        }
    }
    Ok(match sent.first() {
        Some((alg, value)) => Some(Checksum {
            algorithm: *alg,
            value: value.clone(),
            composite: false,
        }),
        None => requested.map(|a| Checksum::full(a, body)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(parse_range("bytes=0-4", 10), Ok(Some((0, 4))));
        assert_eq!(parse_range("bytes=5-", 10), Ok(Some((5, 9))));
        assert_eq!(parse_range("bytes=-3", 10), Ok(Some((7, 9))));
        assert_eq!(parse_range("bytes=-30", 10), Ok(Some((0, 9))));
        assert_eq!(parse_range("bytes=8-100", 10), Ok(Some((8, 9))));
        assert_eq!(parse_range("bytes=10-", 10), Err(Unsatisfiable));
        assert_eq!(parse_range("bytes=-0", 10), Err(Unsatisfiable));
        assert_eq!(parse_range("bytes=0-0", 0), Err(Unsatisfiable));
        assert_eq!(parse_range("bytes=5-2", 10), Ok(None));
        assert_eq!(parse_range("items=0-1", 10), Ok(None));
        assert_eq!(parse_range("bytes=0-1,3-4", 10), Ok(None));
        assert_eq!(parse_range("bytes=x-1", 10), Ok(None));
    }

    #[test]
    fn preconditions() {
        let meta = ObjectMeta {
            etag: "abc".into(),
            last_modified: 10_000_500,
            ..Default::default()
        };
        let c = |f: fn(&mut Conditions)| {
            let mut c = Conditions::default();
            f(&mut c);
            c.evaluate(&meta)
        };
        assert_eq!(
            c(|c| c.if_match = Some("\"abc\"".into())),
            Precondition::Pass
        );
        assert_eq!(
            c(|c| c.if_match = Some("\"x\"".into())),
            Precondition::Failed("If-Match")
        );
        assert_eq!(
            c(|c| c.if_none_match = Some("\"abc\"".into())),
            Precondition::NotModified
        );
        assert_eq!(
            c(|c| c.if_none_match = Some("*".into())),
            Precondition::NotModified
        );
        assert_eq!(
            c(|c| c.if_modified_since = Some(10_000_000)),
            Precondition::NotModified
        );
        assert_eq!(
            c(|c| c.if_modified_since = Some(9_000_000)),
            Precondition::Pass
        );
        assert_eq!(
            c(|c| c.if_unmodified_since = Some(9_000_000)),
            Precondition::Failed("If-Unmodified-Since")
        );
        // If-Match true wins over a failing If-Unmodified-Since.
        assert_eq!(
            c(|c| {
                c.if_match = Some("abc".into());
                c.if_unmodified_since = Some(0);
            }),
            Precondition::Pass
        );
    }

    #[test]
    fn tags() {
        let t = |k: &str, v: &str| (k.to_string(), v.to_string());
        assert!(validate_tags(&[t("a", "1"), t("b", "")], 10).is_ok());
        assert!(validate_tags(&[t("a", "1"), t("a", "2")], 10).is_err());
        assert!(validate_tags(&[t("aws:x", "1")], 10).is_err());
        assert!(validate_tags(&[t("", "1")], 10).is_err());
        let many: Vec<_> = (0..11).map(|i| t(&i.to_string(), "v")).collect();
        assert!(validate_tags(&many, 10).is_err());
        assert!(validate_tags(&many, 50).is_ok());
    }

    #[test]
    fn checksums_verified() {
        let body = b"hello world";
        let ok = vec![(Algorithm::Crc32, "DUoRhQ==".to_string())];
        assert_eq!(
            verify_checksums(body, &ok, None).unwrap().unwrap().value,
            "DUoRhQ=="
        );
        let bad = vec![(Algorithm::Crc32, "AAAAAA==".to_string())];
        assert_eq!(
            verify_checksums(body, &bad, None).unwrap_err().code,
            "BadDigest"
        );
        let req = verify_checksums(body, &[], Some(Algorithm::Sha1))
            .unwrap()
            .unwrap();
        assert_eq!(req.algorithm, Algorithm::Sha1);
    }
}
