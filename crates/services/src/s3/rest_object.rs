//! REST adapter for object-level requests: objects, tagging, ACLs and multipart uploads.

use super::checksum::{self, Algorithm};
use super::config;
use super::multipart::{CompletedPart, PartCopySource};
use super::object::{Conditions, CopyInput, GetOutput, Precondition, PutInput};
use super::rest::{empty, has, header, http_date_header, max_param, param, payload, xml};
use super::rest_bucket::{acl_xml, check_acl, tagging_xml};
use super::state::{ContentHeaders, NULL_VERSION, ObjectMeta};
use super::{S3Service, XMLNS, errors, http_date, iso8601, xml_in};
use cumulo_wire::xml::XmlWriter;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use http::{Method, StatusCode};

const STORAGE_CLASSES: &[&str] = &[
    "STANDARD",
    "REDUCED_REDUNDANCY",
    "STANDARD_IA",
    "ONEZONE_IA",
    "INTELLIGENT_TIERING",
    "GLACIER",
    "DEEP_ARCHIVE",
    "OUTPOSTS",
    "GLACIER_IR",
    "SNOW",
    "EXPRESS_ONEZONE",
];

pub(super) fn route(
    svc: &S3Service,
    req: &AwsRequest,
    bucket: &str,
    key: &str,
) -> Result<AwsResponse, AwsError> {
    let version = param(req, "versionId");
    match req.method {
        Method::GET if has(req, "tagging") => {
            let meta = svc.get_object_tagging(bucket, key, version)?;
            Ok(xml(tagging_xml(&meta.tags)).with_header("x-amz-version-id", &meta.version_id))
        }
        Method::GET if has(req, "uploadId") => list_parts(svc, req, bucket, key),
        Method::GET if has(req, "attributes") => object_attributes(svc, req, bucket, key),
        Method::GET if has(req, "acl") => {
            svc.head_object(bucket, key, version)?;
            Ok(xml(acl_xml(svc)))
        }
        Method::GET | Method::HEAD => get_object(svc, req, bucket, key),
        Method::PUT if has(req, "tagging") => {
            let tags = config::parse_tagging(&xml_in::parse(&req.body)?)?;
            let v = svc.put_object_tagging(bucket, key, version, tags)?;
            Ok(empty(StatusCode::OK).with_header("x-amz-version-id", &v))
        }
        Method::PUT if has(req, "uploadId") => upload_part(svc, req, bucket, key),
        Method::PUT if has(req, "acl") => {
            svc.head_object(bucket, key, version)?;
            check_acl(svc, req, &req.body)?;
            Ok(empty(StatusCode::OK))
        }
        Method::PUT if header(req, "x-amz-copy-source").is_some() => {
            copy_object(svc, req, bucket, key)
        }
        Method::PUT => put_object(svc, req, bucket, key),
        Method::DELETE if has(req, "tagging") => {
            let v = svc.put_object_tagging(bucket, key, version, Vec::new())?;
            Ok(empty(StatusCode::NO_CONTENT).with_header("x-amz-version-id", &v))
        }
        Method::DELETE if has(req, "uploadId") => {
            svc.abort_multipart_upload(bucket, key, param(req, "uploadId").unwrap_or(""))?;
            Ok(empty(StatusCode::NO_CONTENT))
        }
        Method::DELETE => {
            let d = svc.delete_object(bucket, key, version)?;
            let mut r = empty(StatusCode::NO_CONTENT);
            if let Some(v) = &d.version_id {
                r.set_header("x-amz-version-id", v);
            }
            if d.delete_marker {
                r.set_header("x-amz-delete-marker", "true");
            }
            Ok(r)
        }
        Method::POST if has(req, "uploads") => create_upload(svc, req, bucket, key),
        Method::POST if has(req, "uploadId") => complete_upload(svc, req, bucket, key),
        _ => Err(errors::method_not_allowed(req.method.as_str(), "OBJECT")),
    }
}

fn content_headers(req: &AwsRequest) -> ContentHeaders {
    let h = |n: &str| header(req, n).map(str::to_string);
    ContentHeaders {
        content_type: h("content-type"),
        content_encoding: header(req, "content-encoding")
            .and_then(cumulo_wire::chunked::strip_aws_chunked),
        content_disposition: h("content-disposition"),
        content_language: h("content-language"),
        cache_control: h("cache-control"),
        expires: h("expires"),
    }
}

fn user_meta(req: &AwsRequest) -> Vec<(String, String)> {
    req.headers
        .iter()
        .filter_map(|(k, v)| {
            let name = k.as_str().strip_prefix("x-amz-meta-")?;
            Some((
                name.to_string(),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            ))
        })
        .collect()
}

fn tagging_header(req: &AwsRequest) -> Vec<(String, String)> {
    header(req, "x-amz-tagging")
        .map(|t| cumulo_wire::query::parse_form(t.as_bytes()))
        .unwrap_or_default()
}

fn storage_class(req: &AwsRequest) -> Result<Option<String>, AwsError> {
    match header(req, "x-amz-storage-class") {
        None | Some("STANDARD") => Ok(None),
        Some(c) if STORAGE_CLASSES.contains(&c) => Ok(Some(c.to_string())),
        Some(_) => Err(AwsError::bad_request(
            "InvalidStorageClass",
            "The storage class you specified is not valid",
        )),
    }
}

/// `x-amz-server-side-encryption` (and its KMS key); customer-provided keys are not emulated.
fn sse(req: &AwsRequest) -> Result<(Option<String>, Option<String>), AwsError> {
    if header(req, "x-amz-server-side-encryption-customer-algorithm").is_some() {
        return Err(errors::not_implemented(
            "server-side encryption with customer-provided keys (SSE-C)",
        ));
    }
    let alg = match header(req, "x-amz-server-side-encryption") {
        None => None,
        Some(a @ ("AES256" | "aws:kms" | "aws:kms:dsse")) => Some(a.to_string()),
        Some(a) => {
            return Err(errors::invalid_argument(
                "The encryption method specified is not supported",
                "x-amz-server-side-encryption",
                a,
            ));
        }
    };
    let key = header(req, "x-amz-server-side-encryption-aws-kms-key-id").map(str::to_string);
    Ok((alg, key))
}

fn sse_headers(r: &mut AwsResponse, m: &ObjectMeta) {
    r.set_header(
        "x-amz-server-side-encryption",
        m.sse.as_deref().unwrap_or("AES256"),
    );
    if let Some(k) = &m.sse_kms_key_id {
        r.set_header("x-amz-server-side-encryption-aws-kms-key-id", k);
    }
}

fn requested_algorithm(req: &AwsRequest) -> Result<Option<Algorithm>, AwsError> {
    let name = header(req, "x-amz-sdk-checksum-algorithm")
        .or_else(|| header(req, "x-amz-checksum-algorithm"));
    match name {
        None => Ok(None),
        Some(n) => Algorithm::parse(n).map(Some).ok_or_else(|| {
            AwsError::bad_request("InvalidRequest", "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, SHA1, SHA256]")
        }),
    }
}

/// Checksum values sent in headers or aws-chunked trailers.
fn checksum_values(req: &AwsRequest, trailers: &[(String, String)]) -> Vec<(Algorithm, String)> {
    checksum::ALL
        .iter()
        .filter_map(|a| {
            let h = a.header();
            let v = header(req, &h).map(str::to_string).or_else(|| {
                trailers
                    .iter()
                    .find(|(k, _)| *k == h)
                    .map(|(_, v)| v.clone())
            })?;
            Some((*a, v))
        })
        .collect()
}

fn checksum_headers(r: &mut AwsResponse, c: &Option<checksum::Checksum>) {
    if let Some(c) = c {
        r.set_header(&c.algorithm.header(), &c.value);
        r.set_header("x-amz-checksum-type", c.type_name());
    }
}

fn put_object(
    svc: &S3Service,
    req: &AwsRequest,
    bucket: &str,
    key: &str,
) -> Result<AwsResponse, AwsError> {
    check_acl(svc, req, &[])?;
    let (body, trailers) = payload(req)?;
    let (sse, sse_kms_key_id) = sse(req)?;
    let input = PutInput {
        sse,
        sse_kms_key_id,
        key: key.to_string(),
        checksum_values: checksum_values(req, &trailers),
        body,
        headers: content_headers(req),
        user_meta: user_meta(req),
        tags: tagging_header(req),
        checksum_algorithm: requested_algorithm(req)?,
        content_md5: header(req, "content-md5").map(str::to_string),
        storage_class: storage_class(req)?,
        website_redirect: header(req, "x-amz-website-redirect-location").map(str::to_string),
        if_none_match: header(req, "if-none-match").map(str::to_string),
        if_match: header(req, "if-match").map(str::to_string),
    };
    let out = svc.put_object(bucket, input)?;
    let mut r = empty(StatusCode::OK).with_header("etag", &format!("\"{}\"", out.meta.etag));
    sse_headers(&mut r, &out.meta);
    if let Some(v) = &out.version_id {
        r.set_header("x-amz-version-id", v);
    }
    checksum_headers(&mut r, &out.meta.checksum);
    Ok(r)
}

fn conditions(req: &AwsRequest, prefix: &str) -> Conditions {
    let h = |n: &str| header(req, &format!("{prefix}{n}")).map(str::to_string);
    Conditions {
        if_match: h("if-match"),
        if_none_match: h("if-none-match"),
        if_modified_since: http_date_header(req, &format!("{prefix}if-modified-since")),
        if_unmodified_since: http_date_header(req, &format!("{prefix}if-unmodified-since")),
    }
}

/// The headers GET and HEAD return for an object version.
fn object_headers(r: &mut AwsResponse, m: &ObjectMeta, report_version: bool) {
    r.set_header("etag", &format!("\"{}\"", m.etag));
    r.set_header("last-modified", &http_date(m.last_modified));
    r.set_header("accept-ranges", "bytes");
    r.set_header(
        "content-type",
        m.headers
            .content_type
            .as_deref()
            .unwrap_or("binary/octet-stream"),
    );
    let h = &m.headers;
    for (name, v) in [
        ("content-encoding", &h.content_encoding),
        ("content-disposition", &h.content_disposition),
        ("content-language", &h.content_language),
        ("cache-control", &h.cache_control),
        ("expires", &h.expires),
        ("x-amz-storage-class", &m.storage_class),
        ("x-amz-replication-status", &m.replication_status),
        ("x-amz-website-redirect-location", &m.website_redirect),
    ] {
        if let Some(v) = v {
            r.set_header(name, v);
        }
    }
    for (k, v) in &m.user_meta {
        r.set_header(&format!("x-amz-meta-{k}"), v);
    }
    if !m.tags.is_empty() {
        r.set_header("x-amz-tagging-count", &m.tags.len().to_string());
    }
    if report_version || m.version_id != NULL_VERSION {
        r.set_header("x-amz-version-id", &m.version_id);
    }
    sse_headers(r, m);
}

/// GetObjectAttributes: the attributes named in `x-amz-object-attributes`, nothing else.
fn object_attributes(
    svc: &S3Service,
    req: &AwsRequest,
    bucket: &str,
    key: &str,
) -> Result<AwsResponse, AwsError> {
    const KNOWN: &[&str] = &[
        "ETag",
        "Checksum",
        "ObjectParts",
        "StorageClass",
        "ObjectSize",
    ];
    let wanted: Vec<&str> = header(req, "x-amz-object-attributes")
        .unwrap_or("")
        .split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .collect();
    if wanted.is_empty() {
        return Err(AwsError::bad_request(
            "InvalidRequest",
            "The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty",
        ));
    }
    if let Some(bad) = wanted.iter().find(|a| !KNOWN.contains(a)) {
        return Err(errors::invalid_argument(
            "Invalid attribute name specified.",
            "x-amz-object-attributes",
            bad,
        ));
    }
    let version = param(req, "versionId");
    let m = svc.head_object(bucket, key, version)?;
    let marker: usize = header(req, "x-amz-part-number-marker")
        .and_then(|v| v.parse().ok())
        .unwrap_or(0);
    let max_parts: usize = header(req, "x-amz-max-parts")
        .and_then(|v| v.parse().ok())
        .unwrap_or(1000)
        .min(1000);
    let mut w = XmlWriter::new();
    w.open("GetObjectAttributesResponse", Some(XMLNS));
    if wanted.contains(&"ETag") {
        w.elem("ETag", &m.etag);
    }
    if wanted.contains(&"Checksum")
        && let Some(c) = &m.checksum
    {
        w.open("Checksum", None)
            .elem(&c.algorithm.element(), &c.value)
            .elem("ChecksumType", c.type_name())
            .close();
    }
    if wanted.contains(&"ObjectParts") && !m.part_sizes.is_empty() {
        let page: Vec<(usize, &u64)> = m
            .part_sizes
            .iter()
            .enumerate()
            .map(|(i, s)| (i + 1, s))
            .skip(marker)
            .take(max_parts)
            .collect();
        let next = page.last().map_or(marker, |(n, _)| *n);
        w.open("ObjectParts", None)
            .elem("PartsCount", &m.part_sizes.len().to_string())
            .elem("PartNumberMarker", &marker.to_string())
            .elem("NextPartNumberMarker", &next.to_string())
            .elem("MaxParts", &max_parts.to_string())
            .elem("IsTruncated", &(next < m.part_sizes.len()).to_string());
        for (n, size) in page {
            w.open("Part", None)
                .elem("PartNumber", &n.to_string())
                .elem("Size", &size.to_string())
                .close();
        }
        w.close();
    }
    if wanted.contains(&"StorageClass") {
        w.elem(
            "StorageClass",
            m.storage_class.as_deref().unwrap_or("STANDARD"),
        );
    }
    if wanted.contains(&"ObjectSize") {
        w.elem("ObjectSize", &m.size.to_string());
    }
    let mut r = xml(w.finish()).with_header("last-modified", &http_date(m.last_modified));
    if svc.bucket_versioned(bucket) || m.version_id != NULL_VERSION {
        r.set_header("x-amz-version-id", &m.version_id);
    }
    Ok(r)
}

/// `?partNumber=N` as a byte range over the stored part sizes.
fn part_range(m: &ObjectMeta, part: &str) -> Result<(String, usize), AwsError> {
    let n: usize = part
        .parse()
        .ok()
        .filter(|n| (1..=10000).contains(n))
        .ok_or_else(|| {
            errors::invalid_argument(
                "Part number must be an integer between 1 and 10000, inclusive",
                "partNumber",
                part,
            )
        })?;
    let sizes = if m.part_sizes.is_empty() {
        vec![m.size]
    } else {
        m.part_sizes.clone()
    };
    let Some(size) = sizes.get(n - 1) else {
        return Err(AwsError::new(
            StatusCode::RANGE_NOT_SATISFIABLE,
            "InvalidPartNumber",
            "The requested partnumber is not satisfiable",
        )
        .with_extra("PartNumberRequested", part)
        .with_extra("ActualPartCount", &sizes.len().to_string()));
    };
    let start: u64 = sizes[..n - 1].iter().sum();
    if *size == 0 {
        return Ok((String::new(), sizes.len()));
    }
    Ok((format!("bytes={}-{}", start, start + size - 1), sizes.len()))
}

fn get_object(
    svc: &S3Service,
    req: &AwsRequest,
    bucket: &str,
    key: &str,
) -> Result<AwsResponse, AwsError> {
    let version = param(req, "versionId");
    match get_or_head(svc, req, bucket, key, version) {
        // S3 tells the caller it hit a delete marker through headers, even on errors.
        Err(e) if e.code == "NoSuchKey" || e.code == "MethodNotAllowed" => {
            let Some(v) = svc.delete_marker_at(bucket, key, version) else {
                return Err(e);
            };
            let allow = e.code == "MethodNotAllowed";
            let mut resp = super::rest::error_response(e, req);
            resp.set_header("x-amz-delete-marker", "true");
            resp.set_header("x-amz-version-id", &v);
            if allow {
                resp.set_header("allow", "DELETE");
            }
            Ok(resp)
        }
        other => other,
    }
}

fn get_or_head(
    svc: &S3Service,
    req: &AwsRequest,
    bucket: &str,
    key: &str,
    version: Option<&str>,
) -> Result<AwsResponse, AwsError> {
    let head = req.method == Method::HEAD;
    let mut range = header(req, "range").map(str::to_string);
    let mut parts_count = None;
    if let Some(part) = param(req, "partNumber") {
        let meta = svc.head_object(bucket, key, version)?;
        let (r, count) = part_range(&meta, part)?;
        range = (!r.is_empty()).then_some(r);
        parts_count = Some(count);
    }
    let conds = conditions(req, "");
    let out = if head {
        let meta = svc.head_object(bucket, key, version)?;
        match conds.evaluate(&meta) {
            Precondition::Pass => {
                let range = match &range {
                    Some(r) => super::object::parse_range(r, meta.size)
                        .map_err(|_| errors::invalid_range(r, meta.size))?,
                    None => None,
                };
                GetOutput {
                    version_reported: svc.bucket_versioned(bucket),
                    meta,
                    body: Vec::new(),
                    range,
                }
            }
            other => return precondition_response(other, &meta),
        }
    } else {
        match svc.get_object(bucket, key, version, range.as_deref(), &conds)? {
            Ok(out) => out,
            Err((other, meta)) => return precondition_response(other, &meta),
        }
    };
    let m = &out.meta;
    let (status, length) = match out.range {
        Some((a, b)) => (StatusCode::PARTIAL_CONTENT, b - a + 1),
        None => (StatusCode::OK, m.size),
    };
    let mut r = AwsResponse::new(status, "", out.body);
    object_headers(&mut r, m, out.version_reported);
    if let Some((a, b)) = out.range {
        r.set_header("content-range", &format!("bytes {a}-{b}/{}", m.size));
    } else if header(req, "x-amz-checksum-mode").is_some_and(|v| v.eq_ignore_ascii_case("ENABLED"))
    {
        checksum_headers(&mut r, &m.checksum);
    }
    if let Some(n) = parts_count {
        r.set_header("x-amz-mp-parts-count", &n.to_string());
    }
    if head {
        r.set_header("content-length", &length.to_string());
    } else {
        for (q, h) in [
            ("response-content-type", "content-type"),
            ("response-content-language", "content-language"),
            ("response-expires", "expires"),
            ("response-cache-control", "cache-control"),
            ("response-content-disposition", "content-disposition"),
            ("response-content-encoding", "content-encoding"),
        ] {
            if let Some(v) = param(req, q) {
                r.set_header(h, v);
            }
        }
    }
    Ok(r)
}

/// 304 for a GET/HEAD whose If-None-Match / If-Modified-Since says the client is current;
/// 412 (S3's error) when If-Match / If-Unmodified-Since fails.
fn precondition_response(p: Precondition, meta: &ObjectMeta) -> Result<AwsResponse, AwsError> {
    match p {
        Precondition::Failed(h) => Err(errors::precondition_failed(h)),
        _ => Ok(empty(StatusCode::NOT_MODIFIED)
            .with_header("etag", &format!("\"{}\"", meta.etag))
            .with_header("last-modified", &http_date(meta.last_modified))),
    }
}

/// `x-amz-copy-source`: `bucket/key` or `/bucket/key`, URL-encoded, optionally `?versionId=`.
fn copy_source(req: &AwsRequest) -> Result<(String, String, Option<String>), AwsError> {
    let raw = header(req, "x-amz-copy-source").unwrap_or("");
    let (path, query) = match raw.split_once('?') {
        Some((p, q)) => (p, Some(q)),
        None => (raw, None),
    };
    let decoded = percent_encoding::percent_decode_str(path.trim_start_matches('/'))
        .decode_utf8_lossy()
        .into_owned();
    let version = query.and_then(|q| {
        cumulo_wire::query::parse_form(q.as_bytes())
            .into_iter()
            .find(|(k, _)| k == "versionId")
            .map(|(_, v)| v)
    });
    match decoded.split_once('/') {
        Some((b, k)) if !b.is_empty() && !k.is_empty() => {
            Ok((b.to_string(), k.to_string(), version))
        }
        _ => Err(errors::invalid_argument(
            "Invalid copy source object key",
            "x-amz-copy-source",
            raw,
        )),
    }
}

fn copy_object(
    svc: &S3Service,
    req: &AwsRequest,
    bucket: &str,
    key: &str,
) -> Result<AwsResponse, AwsError> {
    check_acl(svc, req, &[])?;
    let (src_bucket, src_key, src_version) = copy_source(req)?;
    let directive = |name: &str| match header(req, name) {
        None | Some("COPY") => Ok(false),
        Some("REPLACE") => Ok(true),
        Some(v) => Err(errors::invalid_argument(
            if name.contains("metadata") {
                "Unknown metadata directive."
            } else {
                "Unknown tagging directive."
            },
            name,
            v,
        )),
    };
    let (sse, sse_kms_key_id) = sse(req)?;
    let input = CopyInput {
        sse,
        sse_kms_key_id,
        src_bucket,
        src_key,
        src_version,
        key: key.to_string(),
        replace_metadata: directive("x-amz-metadata-directive")?,
        headers: content_headers(req),
        user_meta: user_meta(req),
        replace_tags: directive("x-amz-tagging-directive")?,
        tags: tagging_header(req),
        storage_class: storage_class(req)?,
        website_redirect: header(req, "x-amz-website-redirect-location").map(str::to_string),
        checksum_algorithm: requested_algorithm(req)?,
        conditions: conditions(req, "x-amz-copy-source-"),
    };
    let (meta, src_version, new_version) = svc.copy_object(bucket, input)?;
    let mut w = XmlWriter::new();
    w.open("CopyObjectResult", Some(XMLNS))
        .elem("ETag", &format!("\"{}\"", meta.etag))
        .elem("LastModified", &iso8601(meta.last_modified));
    if let Some(c) = &meta.checksum {
        w.elem("ChecksumType", c.type_name())
            .elem(&c.algorithm.element(), &c.value);
    }
    let mut r = xml(w.finish());
    sse_headers(&mut r, &meta);
    if src_version != NULL_VERSION {
        r.set_header("x-amz-copy-source-version-id", &src_version);
    }
    if let Some(v) = new_version {
        r.set_header("x-amz-version-id", &v);
    }
    Ok(r)
}

fn create_upload(
    svc: &S3Service,
    req: &AwsRequest,
    bucket: &str,
    key: &str,
) -> Result<AwsResponse, AwsError> {
    check_acl(svc, req, &[])?;
    let (sse, sse_kms_key_id) = sse(req)?;
    let template = ObjectMeta {
        sse,
        sse_kms_key_id,
        key: key.to_string(),
        headers: content_headers(req),
        user_meta: user_meta(req),
        tags: tagging_header(req),
        storage_class: storage_class(req)?,
        website_redirect: header(req, "x-amz-website-redirect-location").map(str::to_string),
        ..Default::default()
    };
    let algorithm = requested_algorithm(req)?;
    let shown = template.clone();
    let full_object = match header(req, "x-amz-checksum-type") {
        None | Some("COMPOSITE") => false,
        Some("FULL_OBJECT") => true,
        Some(t) => {
            return Err(errors::invalid_argument(
                "Value for x-amz-checksum-type header is invalid.",
                "x-amz-checksum-type",
                t,
            ));
        }
    };
    let (upload_id, full_object) =
        svc.create_multipart_upload(bucket, template, algorithm, full_object)?;
    let mut w = XmlWriter::new();
    w.open("InitiateMultipartUploadResult", Some(XMLNS))
        .elem("Bucket", bucket)
        .elem("Key", key)
        .elem("UploadId", &upload_id);
    let mut r = xml(w.finish());
    sse_headers(&mut r, &shown);
    if let Some(a) = algorithm {
        r.set_header("x-amz-checksum-algorithm", a.name());
        r.set_header(
            "x-amz-checksum-type",
            if full_object {
                "FULL_OBJECT"
            } else {
                "COMPOSITE"
            },
        );
    }
    Ok(r)
}

fn part_number(req: &AwsRequest) -> Result<u32, AwsError> {
    let raw = param(req, "partNumber").unwrap_or("");
    raw.parse().map_err(|_| {
        errors::invalid_argument(
            "Part number must be an integer between 1 and 10000, inclusive",
            "partNumber",
            raw,
        )
    })
}

fn upload_part(
    svc: &S3Service,
    req: &AwsRequest,
    bucket: &str,
    key: &str,
) -> Result<AwsResponse, AwsError> {
    let upload_id = param(req, "uploadId").unwrap_or("");
    let number = part_number(req)?;
    if header(req, "x-amz-copy-source").is_some() {
        let (sb, sk, sv) = copy_source(req)?;
        let source = PartCopySource {
            bucket: sb,
            key: sk,
            version_id: sv,
            range: header(req, "x-amz-copy-source-range").map(str::to_string),
            conditions: conditions(req, "x-amz-copy-source-"),
        };
        let (part, src_version) = svc.upload_part_copy(bucket, key, upload_id, number, &source)?;
        let mut w = XmlWriter::new();
        w.open("CopyPartResult", Some(XMLNS))
            .elem("ETag", &format!("\"{}\"", part.etag))
            .elem("LastModified", &iso8601(part.last_modified));
        if let Some(c) = &part.checksum {
            w.elem(&c.algorithm.element(), &c.value);
        }
        let mut r = xml(w.finish());
        if src_version != NULL_VERSION {
            r.set_header("x-amz-copy-source-version-id", &src_version);
        }
        return Ok(r);
    }
    let (body, trailers) = payload(req)?;
    if let Some(md5) = header(req, "content-md5") {
        use base64::Engine;
        use md5::Digest;
        let ok = base64::engine::general_purpose::STANDARD
            .decode(md5)
            .is_ok_and(|d| d[..] == md5::Md5::digest(&body)[..]);
        if !ok {
            return Err(AwsError::bad_request(
                "BadDigest",
                "The Content-MD5 you specified did not match what we received.",
            ));
        }
    }
    let part = svc.upload_part(
        bucket,
        key,
        upload_id,
        number,
        &body,
        &checksum_values(req, &trailers),
    )?;
    let mut r = empty(StatusCode::OK)
        .with_header("etag", &format!("\"{}\"", part.etag))
        .with_header("x-amz-server-side-encryption", "AES256");
    if let Some(c) = &part.checksum {
        r.set_header(&c.algorithm.header(), &c.value);
    }
    Ok(r)
}

fn complete_upload(
    svc: &S3Service,
    req: &AwsRequest,
    bucket: &str,
    key: &str,
) -> Result<AwsResponse, AwsError> {
    let upload_id = param(req, "uploadId").unwrap_or("");
    let (body, _) = payload(req)?;
    let doc = xml_in::parse_root(&body, "CompleteMultipartUpload")?;
    let parts = doc
        .children("Part")
        .map(|p| {
            let number = p
                .child_text("PartNumber")
                .and_then(|n| n.parse().ok())
                .ok_or_else(errors::malformed_xml)?;
            let etag = p
                .child_text("ETag")
                .ok_or_else(errors::malformed_xml)?
                .to_string();
            let checksum = checksum::ALL
                .iter()
                .find_map(|a| p.child_text(&a.element()).map(|v| (*a, v.to_string())));
            Ok(CompletedPart {
                number,
                etag,
                checksum,
            })
        })
        .collect::<Result<Vec<_>, AwsError>>()?;
    let expected = checksum_values(req, &[]);
    let (meta, version) =
        svc.complete_multipart_upload(bucket, key, upload_id, &parts, &expected)?;
    let mut w = XmlWriter::new();
    w.open("CompleteMultipartUploadResult", Some(XMLNS))
        .elem(
            "Location",
            &format!(
                "http://{}/{bucket}/{}",
                req.host,
                super::rest::url_encode(key)
            ),
        )
        .elem("Bucket", bucket)
        .elem("Key", key)
        .elem("ETag", &format!("\"{}\"", meta.etag));
    if let Some(c) = &meta.checksum {
        w.elem(&c.algorithm.element(), &c.value)
            .elem("ChecksumType", c.type_name());
    }
    let mut r = xml(w.finish());
    sse_headers(&mut r, &meta);
    if let Some(v) = version {
        r.set_header("x-amz-version-id", &v);
    }
    Ok(r)
}

fn list_parts(
    svc: &S3Service,
    req: &AwsRequest,
    bucket: &str,
    key: &str,
) -> Result<AwsResponse, AwsError> {
    let upload_id = param(req, "uploadId").unwrap_or("");
    let marker_raw = param(req, "part-number-marker").unwrap_or("0");
    let marker: u32 = marker_raw.parse().map_err(|_| {
        errors::invalid_argument(
            "Provided part-number-marker not an integer or within integer range",
            "part-number-marker",
            marker_raw,
        )
    })?;
    let max = max_param(req, "max-parts", 1000, 1000)?;
    let (upload, truncated) = svc.list_parts(bucket, key, upload_id, marker, max)?;
    let mut w = XmlWriter::new();
    w.open("ListPartsResult", Some(XMLNS))
        .elem("Bucket", bucket)
        .elem("Key", key)
        .elem("UploadId", upload_id)
        .elem("PartNumberMarker", &marker.to_string());
    if let Some(last) = upload.parts.keys().next_back() {
        w.elem("NextPartNumberMarker", &last.to_string());
    }
    w.elem("MaxParts", &max.to_string())
        .elem("IsTruncated", &truncated.to_string());
    for p in upload.parts.values() {
        w.open("Part", None)
            .elem("PartNumber", &p.number.to_string())
            .elem("LastModified", &iso8601(p.last_modified))
            .elem("ETag", &format!("\"{}\"", p.etag))
            .elem("Size", &p.size.to_string());
        if let Some(c) = &p.checksum {
            w.elem(&c.algorithm.element(), &c.value);
        }
        w.close();
    }
    let id = svc.owner_id();
    w.open("Initiator", None)
        .elem("ID", id)
        .elem("DisplayName", "cumulo")
        .close();
    w.open("Owner", None)
        .elem("ID", id)
        .elem("DisplayName", "cumulo")
        .close();
    w.elem(
        "StorageClass",
        upload
            .template
            .storage_class
            .as_deref()
            .unwrap_or("STANDARD"),
    );
    if let Some(a) = upload.checksum_algorithm {
        let kind = if upload.full_object {
            "FULL_OBJECT"
        } else {
            "COMPOSITE"
        };
        w.elem("ChecksumAlgorithm", a.name())
            .elem("ChecksumType", kind);
    }
    Ok(xml(w.finish()))
}
