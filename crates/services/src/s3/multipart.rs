//! Multipart uploads: create, upload part (and part copy), complete, abort and the two listings.
//!
//! Part bodies are stored as they arrive; completing concatenates them into the object's body
//! in the same transaction that removes the upload, so a crash leaves either the upload or the
//! object, never both or neither.

use super::checksum::{self, Algorithm, Checksum};
use super::object::{self, BodySource, Conditions, Precondition};
use super::state::{self, ObjectMeta, PartMeta, Upload};
use super::{S3Service, errors, now_ms};
use cumulo_store::rusqlite::{OptionalExtension, params};
use cumulo_wire::AwsError;
use http::StatusCode;
use md5::{Digest, Md5};

/// Every part but the last must be at least this big.
pub const MIN_PART_SIZE: u64 = 5 * 1024 * 1024;

/// One entry of CompleteMultipartUpload's part list.
#[derive(Debug, Clone, Default)]
pub struct CompletedPart {
    pub number: u32,
    pub etag: String,
    /// `ChecksumCRC32` etc. as the client listed it; checked against the stored part.
    pub checksum: Option<(Algorithm, String)>,
}

/// UploadPartCopy's source.
#[derive(Debug, Clone, Default)]
pub struct PartCopySource {
    pub bucket: String,
    pub key: String,
    pub version_id: Option<String>,
    /// `x-amz-copy-source-range: bytes=first-last`.
    pub range: Option<String>,
    pub conditions: Conditions,
}

fn check_part_number(n: u32) -> Result<(), AwsError> {
    if (1..=10000).contains(&n) {
        Ok(())
    } else {
        Err(errors::invalid_argument(
            "Part number must be an integer between 1 and 10000, inclusive",
            "partNumber",
            &n.to_string(),
        ))
    }
}

impl S3Service {
    /// CreateMultipartUpload; `template` carries the final object's headers, metadata and tags.
    /// `full_object` asks for a whole-body checksum (CRC algorithms only, as in S3; CRC64NVME
    /// always is). Returns the upload id and whether its checksum is full-object.
    pub fn create_multipart_upload(
        &self,
        bucket: &str,
        template: ObjectMeta,
        checksum_algorithm: Option<Algorithm>,
        full_object: bool,
    ) -> Result<(String, bool), AwsError> {
        let full_object = match checksum_algorithm {
            Some(Algorithm::Crc64Nvme) => true,
            Some(Algorithm::Sha1 | Algorithm::Sha256) if full_object => {
                return Err(errors::invalid_request(&format!(
                    "The FULL_OBJECT checksum type cannot be used with the {} checksum algorithm.",
                    checksum_algorithm
                        .map(|a| a.name().to_ascii_lowercase())
                        .unwrap_or_default()
                )));
            }
            None if full_object => {
                return Err(errors::invalid_request(
                    "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.",
                ));
            }
            _ => full_object,
        };
        object::validate_key(&template.key)?;
        object::validate_tags(&template.tags, 10)?;
        let mut state = self.write();
        if !state.buckets.contains_key(bucket) {
            return Err(errors::no_such_bucket(bucket));
        }
        let upload = Upload {
            upload_id: format!("{}{}", object::new_version_id(), object::new_version_id()),
            key: template.key.clone(),
            initiated: now_ms(),
            template,
            checksum_algorithm,
            full_object,
            parts: Default::default(),
        };
        let json = state::to_json(&upload).map_err(errors::internal)?;
        self.persist(|tx| {
            tx.execute(
                "INSERT INTO s3_uploads (upload_id, bucket, meta) VALUES (?1, ?2, ?3)",
                params![upload.upload_id, bucket, json],
            )
        })?;
        let id = upload.upload_id.clone();
        if let Some(b) = state.buckets.get_mut(bucket) {
            b.uploads.insert(id.clone(), upload);
        }
        Ok((id, full_object))
    }

    fn upload_mut<'a>(
        state: &'a mut super::state::State,
        bucket: &str,
        key: &str,
        upload_id: &str,
    ) -> Result<&'a mut Upload, AwsError> {
        state
            .buckets
            .get_mut(bucket)
            .ok_or_else(|| errors::no_such_bucket(bucket))?
            .uploads
            .get_mut(upload_id)
            .filter(|u| u.key == key)
            .ok_or_else(|| errors::no_such_upload(upload_id))
    }

    fn store_part(
        &self,
        state: &mut super::state::State,
        bucket: &str,
        key: &str,
        upload_id: &str,
        part: PartMeta,
        body: &[u8],
    ) -> Result<PartMeta, AwsError> {
        let upload = Self::upload_mut(state, bucket, key, upload_id)?;
        let json = state::to_json(&part).map_err(errors::internal)?;
        self.persist(|tx| {
            tx.execute(
                "INSERT OR REPLACE INTO s3_parts (upload_id, part_number, meta, body) VALUES (?1, ?2, ?3, ?4)",
                params![upload_id, part.number, json, body],
            )
        })?;
        upload.parts.insert(part.number, part.clone());
        Ok(part)
    }

    /// UploadPart: verifies the sent checksums (and the upload's algorithm) and stores the part.
    pub fn upload_part(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        number: u32,
        body: &[u8],
        checksum_values: &[(Algorithm, String)],
    ) -> Result<PartMeta, AwsError> {
        check_part_number(number)?;
        let mut state = self.write();
        let algorithm = Self::upload_mut(&mut state, bucket, key, upload_id)?.checksum_algorithm;
        let checksum = object::verify_checksums(body, checksum_values, algorithm)?;
        let checksum = match (algorithm, checksum) {
            (Some(a), Some(c)) if c.algorithm != a => Some(Checksum::full(a, body)),
            (_, c) => c,
        };
        let part = PartMeta {
            number,
            etag: hex::encode(Md5::digest(body)),
            size: body.len() as u64,
            last_modified: now_ms(),
            checksum,
        };
        self.store_part(&mut state, bucket, key, upload_id, part, body)
    }

    /// UploadPartCopy: a part whose bytes come from (a range of) an existing object.
    pub fn upload_part_copy(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        number: u32,
        source: &PartCopySource,
    ) -> Result<(PartMeta, String), AwsError> {
        check_part_number(number)?;
        let mut state = self.write();
        let algorithm = Self::upload_mut(&mut state, bucket, key, upload_id)?.checksum_algorithm;
        let src = object::lookup(
            &state,
            &source.bucket,
            &source.key,
            source.version_id.as_deref(),
            "GET",
        )?
        .clone();
        if source.conditions.evaluate(&src) != Precondition::Pass {
            return Err(errors::precondition_failed("x-amz-copy-source-If-Match"));
        }
        let range = match &source.range {
            Some(r) => {
                let parsed = r
                    .strip_prefix("bytes=")
                    .and_then(|s| s.split_once('-'))
                    .and_then(|(a, b)| Some((a.parse::<u64>().ok()?, b.parse::<u64>().ok()?)))
                    .filter(|(a, b)| a <= b);
                match parsed {
                    Some((a, b)) if b < src.size => Some((a, b)),
                    _ => {
                        return Err(AwsError::bad_request(
                            "InvalidArgument",
                            "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy",
                        ));
                    }
                }
            }
            None => None,
        };
        let body = state::read_body(
            &self.store,
            &source.bucket,
            &source.key,
            &src.version_id,
            range,
        )
        .map_err(errors::internal)?
        .ok_or_else(|| errors::internal("object body missing from the store"))?;
        let part = PartMeta {
            number,
            etag: hex::encode(Md5::digest(&body)),
            size: body.len() as u64,
            last_modified: now_ms(),
            checksum: algorithm.map(|a| Checksum::full(a, &body)),
        };
        let part = self.store_part(&mut state, bucket, key, upload_id, part, &body)?;
        Ok((part, src.version_id))
    }

    /// CompleteMultipartUpload: checks the list against the stored parts (order, ETags, the
    /// 5 MiB minimum), builds the `md5-of-md5s-N` ETag and the object. Returns the object and
    /// its version id when the bucket is versioned.
    pub fn complete_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        parts: &[CompletedPart],
        expected: &[(Algorithm, String)],
    ) -> Result<(ObjectMeta, Option<String>), AwsError> {
        let mut state = self.write();
        let upload = Self::upload_mut(&mut state, bucket, key, upload_id)?.clone();
        if parts.is_empty() {
            return Err(errors::malformed_xml());
        }
        if parts.windows(2).any(|w| w[0].number >= w[1].number) {
            return Err(AwsError::bad_request(
                "InvalidPartOrder",
                "The list of parts was not in ascending order. Parts must be ordered by part number.",
            )
            .with_extra("UploadId", upload_id));
        }
        let mut chosen = Vec::with_capacity(parts.len());
        for (i, p) in parts.iter().enumerate() {
            let etag = p.etag.trim().trim_matches('"');
            let stored = upload
                .parts
                .get(&p.number)
                .filter(|s| s.etag == etag)
                .ok_or_else(|| {
                    AwsError::bad_request(
                        "InvalidPart",
                        "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
                    )
                    .with_extra("UploadId", upload_id)
                    .with_extra("PartNumber", &p.number.to_string())
                    .with_extra("ETag", etag)
                })?;
            if let (Some((alg, value)), Some(c)) = (&p.checksum, &stored.checksum)
                && (*alg != c.algorithm || *value != c.value)
            {
                return Err(errors::bad_digest(alg.name()));
            }
            if i + 1 < parts.len() && stored.size < MIN_PART_SIZE {
                return Err(AwsError::new(
                    StatusCode::BAD_REQUEST,
                    "EntityTooSmall",
                    "Your proposed upload is smaller than the minimum allowed size",
                )
                .with_extra("ProposedSize", &stored.size.to_string())
                .with_extra("MinSizeAllowed", &MIN_PART_SIZE.to_string())
                .with_extra("PartNumber", &p.number.to_string())
                .with_extra("ETag", etag));
            }
            chosen.push(stored.clone());
        }
        let mut md5s = Vec::with_capacity(16 * chosen.len());
        for p in &chosen {
            md5s.extend(hex::decode(&p.etag).map_err(errors::internal)?);
        }
        let composite = upload
            .checksum_algorithm
            .filter(|_| !upload.full_object)
            .and_then(|a| {
                let values: Option<Vec<&str>> = chosen
                    .iter()
                    .map(|p| {
                        p.checksum
                            .as_ref()
                            .filter(|c| c.algorithm == a)
                            .map(|c| c.value.as_str())
                    })
                    .collect();
                Some(Checksum {
                    algorithm: a,
                    value: checksum::composite(a, &values?)?,
                    composite: true,
                })
            });
        let body = self
            .store
            .read(|c| {
                let mut q = c.prepare(
                    "SELECT body FROM s3_parts WHERE upload_id = ?1 AND part_number = ?2",
                )?;
                let mut body = Vec::with_capacity(chosen.iter().map(|p| p.size as usize).sum());
                for p in &chosen {
                    let part: Option<Vec<u8>> = q
                        .query_row(params![upload_id, p.number], |r| r.get(0))
                        .optional()?;
                    body.extend(part.unwrap_or_default());
                }
                Ok(body)
            })
            .map_err(errors::internal)?;
        let checksum = match upload.checksum_algorithm {
            Some(a) if upload.full_object => Some(Checksum::full(a, &body)),
            _ => composite,
        };
        for (alg, value) in expected {
            match &checksum {
                Some(c) if c.algorithm == *alg && c.value != *value => {
                    return Err(errors::bad_digest(alg.name()));
                }
                None if !upload.full_object && alg.compute(&body) != *value => {
                    return Err(errors::bad_digest(alg.name()));
                }
                _ => {}
            }
        }
        let meta = ObjectMeta {
            key: key.to_string(),
            size: body.len() as u64,
            etag: format!("{}-{}", hex::encode(Md5::digest(&md5s)), chosen.len()),
            last_modified: now_ms(),
            checksum,
            part_sizes: chosen.iter().map(|p| p.size).collect(),
            ..upload.template.clone()
        };
        let versioned = state
            .buckets
            .get(bucket)
            .is_some_and(|b| b.versioning.is_some());
        let meta = self.commit_version(
            &mut state,
            bucket,
            meta,
            BodySource::Bytes(&body),
            Some(upload_id),
        )?;
        if let Some(b) = state.buckets.get_mut(bucket) {
            b.uploads.remove(upload_id);
        }
        let version = versioned.then(|| meta.version_id.clone());
        Ok((meta, version))
    }

    fn drop_upload(
        &self,
        state: &mut super::state::State,
        bucket: &str,
        upload_id: &str,
    ) -> Result<(), AwsError> {
        self.persist(|tx| {
            tx.execute("DELETE FROM s3_parts WHERE upload_id = ?1", [upload_id])?;
            tx.execute("DELETE FROM s3_uploads WHERE upload_id = ?1", [upload_id])
        })?;
        if let Some(b) = state.buckets.get_mut(bucket) {
            b.uploads.remove(upload_id);
        }
        Ok(())
    }

    /// AbortMultipartUpload: discards the upload and its parts.
    pub fn abort_multipart_upload(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
    ) -> Result<(), AwsError> {
        let mut state = self.write();
        Self::upload_mut(&mut state, bucket, key, upload_id)?;
        self.drop_upload(&mut state, bucket, upload_id)
    }

    /// ListParts: the upload (with only the page's parts) and whether more remain.
    pub fn list_parts(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        marker: u32,
        max_parts: usize,
    ) -> Result<(Upload, bool), AwsError> {
        let mut state = self.write();
        let upload = Self::upload_mut(&mut state, bucket, key, upload_id)?;
        let mut page = upload.clone();
        page.parts = upload
            .parts
            .range(marker.saturating_add(1)..)
            .take(max_parts)
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        let last = page.parts.keys().next_back().copied().unwrap_or(marker);
        let truncated = upload
            .parts
            .range(last.saturating_add(1)..)
            .next()
            .is_some();
        Ok((page, truncated))
    }

    /// ListMultipartUploads: uploads by key then initiation, after the markers.
    pub fn list_multipart_uploads(
        &self,
        bucket: &str,
        prefix: &str,
        key_marker: &str,
        upload_id_marker: &str,
        max_uploads: usize,
    ) -> Result<(Vec<Upload>, bool), AwsError> {
        let state = self.read();
        let b = state
            .buckets
            .get(bucket)
            .ok_or_else(|| errors::no_such_bucket(bucket))?;
        let mut all: Vec<&Upload> = b
            .uploads
            .values()
            .filter(|u| u.key.starts_with(prefix))
            .filter(|u| {
                u.key.as_str() > key_marker
                    || (u.key == key_marker
                        && !upload_id_marker.is_empty()
                        && u.upload_id.as_str() > upload_id_marker)
            })
            .collect();
        all.sort_by(|a, b| {
            (&a.key, a.initiated, &a.upload_id).cmp(&(&b.key, b.initiated, &b.upload_id))
        });
        let truncated = all.len() > max_uploads;
        Ok((
            all.into_iter().take(max_uploads).cloned().collect(),
            truncated,
        ))
    }
}
