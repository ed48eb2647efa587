//! REST adapter for bucket-level requests: bucket CRUD, configurations, listings and
//! DeleteObjects.

use super::config::{self, ConfigKind};
use super::list::ListInput;
use super::rest::{empty, has, header, max_param, param, url_encode, xml};
use super::state::ObjectMeta;
use super::{S3Service, XMLNS, errors, iso8601, xml_in};
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as TOKEN;
use cumulo_wire::xml::XmlWriter;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use http::{Method, StatusCode};

const CONFIGS: &[(&str, ConfigKind)] = &[
    ("cors", ConfigKind::Cors),
    ("lifecycle", ConfigKind::Lifecycle),
    ("encryption", ConfigKind::Encryption),
    ("website", ConfigKind::Website),
    ("notification", ConfigKind::Notification),
    ("publicAccessBlock", ConfigKind::PublicAccessBlock),
    ("ownershipControls", ConfigKind::OwnershipControls),
    ("replication", ConfigKind::Replication),
];

pub(super) async fn route(
    svc: &S3Service,
    req: &AwsRequest,
    bucket: &str,
) -> Result<AwsResponse, AwsError> {
    let config = CONFIGS.iter().find(|(p, _)| has(req, p)).map(|(_, k)| *k);
    match req.method {
        Method::GET => {
            if let Some(kind) = config {
                return Ok(xml(svc.get_bucket_config(bucket, kind)?));
            }
            if has(req, "location") {
                let region = svc.bucket_region(bucket)?;
                // us-east-1 buckets report an empty constraint, as S3 does.
                let region = if region == "us-east-1" {
                    String::new()
                } else {
                    region
                };
                let mut w = XmlWriter::new();
                w.raw(&format!("<LocationConstraint xmlns=\"{XMLNS}\">"))
                    .raw(&cumulo_wire::xml::escape(&region))
                    .raw("</LocationConstraint>");
                return Ok(xml(w.finish()));
            }
            if has(req, "versioning") {
                let status = svc.get_bucket_versioning(bucket)?;
                let mut w = XmlWriter::new();
                w.open("VersioningConfiguration", Some(XMLNS))
                    .opt("Status", status.as_deref());
                return Ok(xml(w.finish()));
            }
            if has(req, "tagging") {
                let tags = svc.get_bucket_tagging(bucket)?;
                return Ok(xml(tagging_xml(&tags)));
            }
            if has(req, "policy") {
                let policy = svc.get_bucket_policy(bucket)?;
                return Ok(AwsResponse::new(StatusCode::OK, "application/json", policy));
            }
            if has(req, "acl") {
                svc.bucket_region(bucket)?;
                return Ok(xml(acl_xml(svc)));
            }
            if has(req, "uploads") {
                return list_uploads(svc, req, bucket);
            }
            if has(req, "versions") {
                return list_versions(svc, req, bucket);
            }
            if param(req, "list-type") == Some("2") {
                return list_v2(svc, req, bucket);
            }
            list_v1(svc, req, bucket)
        }
        Method::PUT => {
            if let Some(kind) = config {
                let doc = xml_in::parse(&req.body)?;
                svc.put_bucket_config(bucket, kind, &doc).await?;
                return Ok(empty(StatusCode::OK));
            }
            if has(req, "versioning") {
                let doc = xml_in::parse_root(&req.body, "VersioningConfiguration")?;
                let status = doc.child_text("Status").ok_or_else(errors::malformed_xml)?;
                svc.put_bucket_versioning(bucket, status).await?;
                return Ok(empty(StatusCode::OK));
            }
            if has(req, "tagging") {
                let tags = config::parse_tagging(&xml_in::parse(&req.body)?)?;
                svc.put_bucket_tagging(bucket, &tags).await?;
                return Ok(empty(StatusCode::NO_CONTENT));
            }
            if has(req, "policy") {
                let text = std::str::from_utf8(&req.body).map_err(|_| {
                    AwsError::bad_request(
                        "MalformedPolicy",
                        "Policies must be valid JSON and the first byte must be '{'",
                    )
                })?;
                svc.put_bucket_policy(bucket, text).await?;
                return Ok(empty(StatusCode::NO_CONTENT));
            }
            if has(req, "acl") {
                svc.bucket_region(bucket)?;
                check_acl(svc, req, &req.body)?;
                return Ok(empty(StatusCode::OK));
            }
            create_bucket(svc, req, bucket).await
        }
        Method::DELETE => {
            if let Some(kind) = config {
                svc.delete_bucket_config(bucket, kind).await?;
                return Ok(empty(StatusCode::NO_CONTENT));
            }
            if has(req, "tagging") {
                svc.delete_bucket_tagging(bucket).await?;
                return Ok(empty(StatusCode::NO_CONTENT));
            }
            if has(req, "policy") {
                svc.delete_bucket_policy(bucket).await?;
                return Ok(empty(StatusCode::NO_CONTENT));
            }
            svc.delete_bucket(bucket).await?;
            Ok(empty(StatusCode::NO_CONTENT))
        }
        Method::HEAD => {
            let region = svc.bucket_region(bucket)?;
            Ok(empty(StatusCode::OK)
                .with_header("x-amz-bucket-region", &region)
                .with_header("x-amz-access-point-alias", "false"))
        }
        Method::POST if has(req, "delete") => delete_objects(svc, req, bucket),
        Method::POST => Err(errors::not_implemented("PostObject")),
        _ => Err(errors::method_not_allowed(req.method.as_str(), "BUCKET")),
    }
}

/// ACLs: buckets enforce bucket-owner ownership (S3's default since 2023), so only ACLs that
/// grant nothing beyond the owner's FULL_CONTROL are accepted, as S3 does: the canned
/// `private` / `bucket-owner-full-control`, or a PutBucketAcl/PutObjectAcl document granting
/// only that.
pub(super) fn check_acl(svc: &S3Service, req: &AwsRequest, body: &[u8]) -> Result<(), AwsError> {
    let refused = || {
        AwsError::bad_request(
            "AccessControlListNotSupported",
            "The bucket does not allow ACLs",
        )
    };
    let grants = req
        .headers
        .keys()
        .any(|k| k.as_str().starts_with("x-amz-grant-"));
    if grants {
        return Err(refused());
    }
    match header(req, "x-amz-acl") {
        None | Some("private" | "bucket-owner-full-control") => {}
        Some(_) => return Err(refused()),
    }
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(());
    }
    let doc = xml_in::parse_root(body, "AccessControlPolicy")?;
    let owner_only = doc
        .child("AccessControlList")
        .map(|l| {
            l.children("Grant").all(|g| {
                g.child_text("Permission") == Some("FULL_CONTROL")
                    && g.child("Grantee").and_then(|e| e.child_text("ID")) == Some(svc.owner_id())
            })
        })
        .unwrap_or(true);
    if owner_only { Ok(()) } else { Err(refused()) }
}

pub(super) fn acl_xml(svc: &S3Service) -> String {
    let id = svc.owner_id();
    let mut w = XmlWriter::new();
    w.open("AccessControlPolicy", Some(XMLNS));
    w.open("Owner", None)
        .elem("ID", id)
        .elem("DisplayName", "cumulo")
        .close();
    w.open("AccessControlList", None).open("Grant", None);
    w.raw("<Grantee xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:type=\"CanonicalUser\">");
    w.elem("ID", id)
        .elem("DisplayName", "cumulo")
        .raw("</Grantee>");
    w.elem("Permission", "FULL_CONTROL");
    w.finish()
}

pub(super) fn tagging_xml(tags: &[(String, String)]) -> String {
    let mut w = XmlWriter::new();
    w.open("Tagging", Some(XMLNS)).open("TagSet", None);
    for (k, v) in tags {
        w.open("Tag", None).elem("Key", k).elem("Value", v).close();
    }
    w.finish()
}

fn owner(w: &mut XmlWriter, svc: &S3Service) {
    w.open("Owner", None)
        .elem("ID", svc.owner_id())
        .elem("DisplayName", "cumulo")
        .close();
}

/// ListBuckets, with its optional prefix / region filters and `max-buckets` pages (the
/// continuation token is the last bucket name returned).
pub(super) fn list_buckets(svc: &S3Service, req: &AwsRequest) -> Result<AwsResponse, AwsError> {
    let prefix = param(req, "prefix").unwrap_or("");
    let region = param(req, "bucket-region");
    let max = max_param(req, "max-buckets", 10000, 10000)?;
    let after = match param(req, "continuation-token") {
        Some(t) => TOKEN
            .decode(t)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| {
                errors::invalid_argument(
                    "The continuation token provided is incorrect",
                    "continuation-token",
                    t,
                )
            })?,
        None => String::new(),
    };
    let mut matching = svc
        .list_buckets()
        .into_iter()
        .filter(|b| b.name.starts_with(prefix) && *b.name > *after)
        .filter(|b| region.is_none_or(|r| r == b.region));
    let page: Vec<_> = matching.by_ref().take(max).collect();
    let truncated = matching.next().is_some();
    let mut w = XmlWriter::new();
    w.open("ListAllMyBucketsResult", Some(XMLNS));
    owner(&mut w, svc);
    w.open("Buckets", None);
    for b in &page {
        w.open("Bucket", None)
            .elem("Name", &b.name)
            .elem("CreationDate", &iso8601(b.created))
            .elem("BucketRegion", &b.region)
            .close();
    }
    w.close();
    if truncated && let Some(last) = page.last() {
        w.elem("ContinuationToken", &TOKEN.encode(last.name.as_bytes()));
    }
    if !prefix.is_empty() {
        w.elem("Prefix", prefix);
    }
    Ok(xml(w.finish()))
}

async fn create_bucket(
    svc: &S3Service,
    req: &AwsRequest,
    bucket: &str,
) -> Result<AwsResponse, AwsError> {
    let constraint = if req.body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        let doc = xml_in::parse_root(&req.body, "CreateBucketConfiguration")?;
        doc.child_text("LocationConstraint").map(str::to_string)
    };
    if header(req, "x-amz-acl").is_some_and(|a| a != "private" && a != "bucket-owner-full-control")
    {
        return Err(AwsError::bad_request(
            "InvalidBucketAclWithObjectOwnership",
            "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting",
        ));
    }
    if header(req, "x-amz-bucket-object-lock-enabled")
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
    {
        return Err(errors::not_implemented(
            "CreateBucket with ObjectLockEnabledForBucket",
        ));
    }
    svc.create_bucket(&req.region, bucket, constraint.as_deref())
        .await?;
    Ok(empty(StatusCode::OK).with_header("location", &format!("/{bucket}")))
}

fn contents(w: &mut XmlWriter, m: &ObjectMeta, key: &str, owner_of: Option<&S3Service>) {
    w.open("Contents", None)
        .elem("Key", key)
        .elem("LastModified", &iso8601(m.last_modified))
        .elem("ETag", &format!("\"{}\"", m.etag));
    if let Some(c) = &m.checksum {
        w.elem("ChecksumAlgorithm", c.algorithm.name())
            .elem("ChecksumType", c.type_name());
    }
    w.elem("Size", &m.size.to_string());
    if let Some(svc) = owner_of {
        owner(w, svc);
    }
    w.elem(
        "StorageClass",
        m.storage_class.as_deref().unwrap_or("STANDARD"),
    );
    w.close();
}

fn encoding(req: &AwsRequest) -> Result<bool, AwsError> {
    match param(req, "encoding-type") {
        None => Ok(false),
        Some("url") => Ok(true),
        Some(v) => Err(errors::invalid_argument(
            "Invalid Encoding Method specified in Request",
            "encoding-type",
            v,
        )),
    }
}

fn list_input(req: &AwsRequest, marker: String) -> Result<ListInput, AwsError> {
    Ok(ListInput {
        prefix: param(req, "prefix").unwrap_or("").to_string(),
        delimiter: param(req, "delimiter").unwrap_or("").to_string(),
        marker,
        max_keys: max_param(req, "max-keys", 1000, 1000)?,
    })
}

fn list_v1(svc: &S3Service, req: &AwsRequest, bucket: &str) -> Result<AwsResponse, AwsError> {
    let url = encoding(req)?;
    let enc = |s: &str| if url { url_encode(s) } else { s.to_string() };
    let input = list_input(req, param(req, "marker").unwrap_or("").to_string())?;
    let out = svc.list_objects(bucket, &input)?;
    let mut w = XmlWriter::new();
    w.open("ListBucketResult", Some(XMLNS))
        .elem("Name", bucket)
        .elem("Prefix", &input.prefix)
        .elem("Marker", &enc(&input.marker));
    if out.is_truncated && !input.delimiter.is_empty() {
        w.opt("NextMarker", out.next_marker.as_deref().map(enc).as_deref());
    }
    w.elem("MaxKeys", &input.max_keys.to_string());
    if !input.delimiter.is_empty() {
        w.elem("Delimiter", &enc(&input.delimiter));
    }
    w.elem("IsTruncated", &out.is_truncated.to_string());
    for m in &out.entries {
        contents(&mut w, m, &enc(&m.key), Some(svc));
    }
    for p in &out.common_prefixes {
        w.open("CommonPrefixes", None)
            .elem("Prefix", &enc(p))
            .close();
    }
    if url {
        w.elem("EncodingType", "url");
    }
    Ok(xml(w.finish()))
}

fn list_v2(svc: &S3Service, req: &AwsRequest, bucket: &str) -> Result<AwsResponse, AwsError> {
    let url = encoding(req)?;
    let enc = |s: &str| if url { url_encode(s) } else { s.to_string() };
    let token = param(req, "continuation-token");
    let start_after = param(req, "start-after").unwrap_or("");
    let marker = match token {
        Some(t) => TOKEN
            .decode(t)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .ok_or_else(|| {
                errors::invalid_argument(
                    "The continuation token provided is incorrect",
                    "continuation-token",
                    t,
                )
            })?,
        None => start_after.to_string(),
    };
    let input = list_input(req, marker.max(start_after.to_string()))?;
    let out = svc.list_objects(bucket, &input)?;
    let fetch_owner = param(req, "fetch-owner") == Some("true");
    let mut w = XmlWriter::new();
    w.open("ListBucketResult", Some(XMLNS))
        .elem("Name", bucket)
        .elem("Prefix", &enc(&input.prefix));
    if let Some(t) = token {
        w.elem("ContinuationToken", t);
    }
    if out.is_truncated
        && let Some(next) = &out.next_marker
    {
        w.elem("NextContinuationToken", &TOKEN.encode(next.as_bytes()));
    }
    if !start_after.is_empty() {
        w.elem("StartAfter", &enc(start_after));
    }
    w.elem(
        "KeyCount",
        &(out.entries.len() + out.common_prefixes.len()).to_string(),
    )
    .elem("MaxKeys", &input.max_keys.to_string());
    if !input.delimiter.is_empty() {
        w.elem("Delimiter", &enc(&input.delimiter));
    }
    w.elem("IsTruncated", &out.is_truncated.to_string());
    for m in &out.entries {
        contents(&mut w, m, &enc(&m.key), fetch_owner.then_some(svc));
    }
    for p in &out.common_prefixes {
        w.open("CommonPrefixes", None)
            .elem("Prefix", &enc(p))
            .close();
    }
    if url {
        w.elem("EncodingType", "url");
    }
    Ok(xml(w.finish()))
}

fn list_versions(svc: &S3Service, req: &AwsRequest, bucket: &str) -> Result<AwsResponse, AwsError> {
    let url = encoding(req)?;
    let enc = |s: &str| if url { url_encode(s) } else { s.to_string() };
    let key_marker = param(req, "key-marker").unwrap_or("");
    let vid_marker = param(req, "version-id-marker").filter(|v| !v.is_empty());
    if vid_marker.is_some() && key_marker.is_empty() {
        return Err(errors::invalid_argument(
            "A version-id marker cannot be specified without a key marker.",
            "version-id-marker",
            vid_marker.unwrap_or(""),
        ));
    }
    let input = list_input(req, key_marker.to_string())?;
    let out = svc.list_object_versions(bucket, &input, vid_marker)?;
    let mut w = XmlWriter::new();
    w.open("ListVersionsResult", Some(XMLNS))
        .elem("Name", bucket)
        .elem("Prefix", &enc(&input.prefix))
        .elem("KeyMarker", &enc(key_marker))
        .elem("VersionIdMarker", vid_marker.unwrap_or(""));
    if let Some(k) = &out.next_key_marker {
        w.elem("NextKeyMarker", &enc(k));
    }
    if let Some(v) = &out.next_version_id_marker {
        w.elem("NextVersionIdMarker", v);
    }
    w.elem("MaxKeys", &input.max_keys.to_string());
    if !input.delimiter.is_empty() {
        w.elem("Delimiter", &enc(&input.delimiter));
    }
    w.elem("IsTruncated", &out.is_truncated.to_string());
    for (m, latest) in &out.versions {
        w.open(
            if m.delete_marker {
                "DeleteMarker"
            } else {
                "Version"
            },
            None,
        )
        .elem("Key", &enc(&m.key))
        .elem("VersionId", &m.version_id)
        .elem("IsLatest", &latest.to_string())
        .elem("LastModified", &iso8601(m.last_modified));
        if !m.delete_marker {
            w.elem("ETag", &format!("\"{}\"", m.etag))
                .elem("Size", &m.size.to_string());
            if let Some(c) = &m.checksum {
                w.elem("ChecksumAlgorithm", c.algorithm.name())
                    .elem("ChecksumType", c.type_name());
            }
            w.elem(
                "StorageClass",
                m.storage_class.as_deref().unwrap_or("STANDARD"),
            );
        }
        owner(&mut w, svc);
        w.close();
    }
    for p in &out.common_prefixes {
        w.open("CommonPrefixes", None)
            .elem("Prefix", &enc(p))
            .close();
    }
    if url {
        w.elem("EncodingType", "url");
    }
    Ok(xml(w.finish()))
}

fn list_uploads(svc: &S3Service, req: &AwsRequest, bucket: &str) -> Result<AwsResponse, AwsError> {
    let url = encoding(req)?;
    let enc = |s: &str| if url { url_encode(s) } else { s.to_string() };
    let prefix = param(req, "prefix").unwrap_or("");
    let key_marker = param(req, "key-marker").unwrap_or("");
    let id_marker = param(req, "upload-id-marker").unwrap_or("");
    let max = max_param(req, "max-uploads", 1000, 1000)?;
    let (uploads, truncated) =
        svc.list_multipart_uploads(bucket, prefix, key_marker, id_marker, max)?;
    let mut w = XmlWriter::new();
    w.open("ListMultipartUploadsResult", Some(XMLNS))
        .elem("Bucket", bucket)
        .elem("KeyMarker", &enc(key_marker))
        .elem("UploadIdMarker", id_marker);
    if truncated && let Some(last) = uploads.last() {
        w.elem("NextKeyMarker", &enc(&last.key))
            .elem("NextUploadIdMarker", &last.upload_id);
    }
    if !prefix.is_empty() {
        w.elem("Prefix", &enc(prefix));
    }
    w.elem("MaxUploads", &max.to_string())
        .elem("IsTruncated", &truncated.to_string());
    for u in &uploads {
        w.open("Upload", None)
            .elem("Key", &enc(&u.key))
            .elem("UploadId", &u.upload_id);
        w.open("Initiator", None)
            .elem("ID", svc.owner_id())
            .elem("DisplayName", "cumulo")
            .close();
        owner(&mut w, svc);
        w.elem(
            "StorageClass",
            u.template.storage_class.as_deref().unwrap_or("STANDARD"),
        )
        .elem("Initiated", &iso8601(u.initiated));
        if let Some(a) = u.checksum_algorithm {
            w.elem("ChecksumAlgorithm", a.name());
        }
        w.close();
    }
    if url {
        w.elem("EncodingType", "url");
    }
    Ok(xml(w.finish()))
}

fn delete_objects(
    svc: &S3Service,
    req: &AwsRequest,
    bucket: &str,
) -> Result<AwsResponse, AwsError> {
    let (body, _) = super::rest::payload(req)?;
    let doc = xml_in::parse_root(&body, "Delete")?;
    let quiet = doc.child_text("Quiet") == Some("true");
    let objects: Vec<(String, Option<String>)> = doc
        .children("Object")
        .map(|o| {
            let key = o
                .child("Key")
                .ok_or_else(errors::malformed_xml)?
                .text
                .clone();
            Ok((key, o.child_text("VersionId").map(str::to_string)))
        })
        .collect::<Result<_, AwsError>>()?;
    if objects.is_empty() || objects.len() > 1000 {
        return Err(errors::malformed_xml());
    }
    let results = svc.delete_objects(bucket, &objects)?;
    let mut w = XmlWriter::new();
    w.open("DeleteResult", Some(XMLNS));
    for entry in results {
        let requested = entry.version_id;
        match entry.result {
            Ok(d) => {
                if quiet {
                    continue;
                }
                w.open("Deleted", None).elem("Key", &d.key);
                if let Some(v) = &d.version_id {
                    if d.delete_marker && requested.is_none() {
                        w.elem("DeleteMarker", "true")
                            .elem("DeleteMarkerVersionId", v);
                    } else {
                        w.elem("VersionId", v);
                        if d.delete_marker {
                            w.elem("DeleteMarker", "true");
                        }
                    }
                }
                w.close();
            }
            Err(e) => {
                w.open("Error", None).elem("Key", &entry.key);
                w.opt("VersionId", requested.as_deref());
                w.elem("Code", &e.code).elem("Message", &e.message).close();
            }
        }
    }
    Ok(xml(w.finish()))
}
