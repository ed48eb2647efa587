//! The REST-XML adapter's entry: path-style addressing, routing by method and subresource, and
//! what every S3 response carries (`x-amz-request-id`, `x-amz-id-2`, bodiless HEAD errors).

use super::{S3Service, errors, rest_bucket, rest_object};
use base64::Engine;
use bytes::Bytes;
use cumulo_wire::chunked;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use http::{Method, StatusCode};

/// Subresources cumulo does not implement and the operation each stands for per method (GET,
/// PUT, DELETE, POST); a request naming one answers 501 with that name instead of being
/// mistaken for a plain bucket or object call.
type Unsupported = (&'static str, [&'static str; 4]);

const UNSUPPORTED_BUCKET: &[Unsupported] = &[
    (
        "accelerate",
        [
            "GetBucketAccelerateConfiguration",
            "PutBucketAccelerateConfiguration",
            "",
            "",
        ],
    ),
    (
        "analytics",
        [
            "GetBucketAnalyticsConfiguration",
            "PutBucketAnalyticsConfiguration",
            "DeleteBucketAnalyticsConfiguration",
            "",
        ],
    ),
    (
        "intelligent-tiering",
        [
            "GetBucketIntelligentTieringConfiguration",
            "PutBucketIntelligentTieringConfiguration",
            "DeleteBucketIntelligentTieringConfiguration",
            "",
        ],
    ),
    (
        "inventory",
        [
            "GetBucketInventoryConfiguration",
            "PutBucketInventoryConfiguration",
            "DeleteBucketInventoryConfiguration",
            "",
        ],
    ),
    ("logging", ["GetBucketLogging", "PutBucketLogging", "", ""]),
    (
        "metrics",
        [
            "GetBucketMetricsConfiguration",
            "PutBucketMetricsConfiguration",
            "DeleteBucketMetricsConfiguration",
            "",
        ],
    ),
    (
        "object-lock",
        [
            "GetObjectLockConfiguration",
            "PutObjectLockConfiguration",
            "",
            "",
        ],
    ),
    (
        "requestPayment",
        ["GetBucketRequestPayment", "PutBucketRequestPayment", "", ""],
    ),
    ("policyStatus", ["GetBucketPolicyStatus", "", "", ""]),
    (
        "metadataTable",
        [
            "GetBucketMetadataTableConfiguration",
            "",
            "DeleteBucketMetadataTableConfiguration",
            "CreateBucketMetadataTableConfiguration",
        ],
    ),
    ("session", ["CreateSession", "", "", ""]),
    ("abac", ["GetBucketAbac", "PutBucketAbac", "", ""]),
    (
        "metadataConfiguration",
        [
            "GetBucketMetadataConfiguration",
            "",
            "DeleteBucketMetadataConfiguration",
            "CreateBucketMetadataConfiguration",
        ],
    ),
    (
        "metadataInventoryTable",
        [
            "",
            "UpdateBucketMetadataInventoryTableConfiguration",
            "",
            "",
        ],
    ),
    (
        "metadataJournalTable",
        ["", "UpdateBucketMetadataJournalTableConfiguration", "", ""],
    ),
];

const UNSUPPORTED_OBJECT: &[Unsupported] = &[
    (
        "legal-hold",
        ["GetObjectLegalHold", "PutObjectLegalHold", "", ""],
    ),
    (
        "retention",
        ["GetObjectRetention", "PutObjectRetention", "", ""],
    ),
    ("torrent", ["GetObjectTorrent", "", "", ""]),
    ("restore", ["", "", "", "RestoreObject"]),
    ("select", ["", "", "", "SelectObjectContent"]),
    ("encryption", ["", "UpdateObjectEncryption", "", ""]),
    ("renameObject", ["", "RenameObject", "", ""]),
];

pub(super) async fn handle(svc: &S3Service, req: &AwsRequest) -> AwsResponse {
    let mut resp = match route(svc, req).await {
        Ok(r) => r,
        Err(e) => error_response(e, req),
    };
    if req.method != Method::OPTIONS {
        add_cors_headers(svc, req, &mut resp);
    }
    resp.headers.remove("x-amzn-requestid");
    resp.set_header("x-amz-request-id", &req.request_id);
    let id2 = base64::engine::general_purpose::STANDARD.encode(req.request_id.as_bytes());
    resp.set_header("x-amz-id-2", &id2);
    if req.method == Method::HEAD {
        // HEAD responses never have a body; errors are told by status alone.
        resp.body = Bytes::new();
    }
    resp
}

pub(super) fn error_response(e: AwsError, req: &AwsRequest) -> AwsResponse {
    e.into_response(Protocol::RestXml, &req.request_id)
}

async fn route(svc: &S3Service, req: &AwsRequest) -> Result<AwsResponse, AwsError> {
    let path = req.raw_path.strip_prefix('/').unwrap_or(&req.raw_path);
    let (bucket, key) = match path.split_once('/') {
        Some((b, k)) => (b, k),
        None => (path, ""),
    };
    let bucket = decode(bucket);
    let key = decode(key);
    if req.method == Method::OPTIONS && !bucket.is_empty() {
        return preflight(svc, req, &bucket);
    }
    // A caller that names the expected owner gets AccessDenied for anyone else's bucket.
    if header(req, "x-amz-expected-bucket-owner").is_some_and(|o| o != svc.account_id()) {
        return Err(AwsError::new(
            StatusCode::FORBIDDEN,
            "AccessDenied",
            "Access Denied",
        ));
    }
    if bucket.is_empty() {
        return match req.method {
            Method::GET => rest_bucket::list_buckets(svc, req),
            _ => Err(errors::method_not_allowed(req.method.as_str(), "SERVICE")),
        };
    }
    let (table, is_bucket) = if key.is_empty() {
        (UNSUPPORTED_BUCKET, true)
    } else {
        (UNSUPPORTED_OBJECT, false)
    };
    if let Some((_, ops)) = table.iter().find(|(p, _)| has(req, p)) {
        let i = match req.method {
            Method::PUT => 1,
            Method::DELETE => 2,
            Method::POST => 3,
            _ => 0,
        };
        let op = match ops[i] {
            "" => format!("{} {}", req.method, req.raw_path),
            op => op.to_string(),
        };
        return Err(errors::not_implemented(&op));
    }
    if is_bucket {
        rest_bucket::route(svc, req, &bucket).await
    } else {
        rest_object::route(svc, req, &bucket, &key)
    }
}

/// The bucket of a path-style request (empty for the service root).
fn bucket_of(req: &AwsRequest) -> String {
    let path = req.raw_path.strip_prefix('/').unwrap_or(&req.raw_path);
    decode(path.split('/').next().unwrap_or(""))
}

/// A browser's CORS preflight, answered from the bucket's CORS rules as S3 does.
fn preflight(svc: &S3Service, req: &AwsRequest, bucket: &str) -> Result<AwsResponse, AwsError> {
    let (Some(origin), Some(method)) = (
        header(req, "origin"),
        header(req, "access-control-request-method"),
    ) else {
        return Err(AwsError::bad_request(
            "BadRequest",
            "Insufficient information. Origin request header needed.",
        ));
    };
    let requested: Vec<String> = header(req, "access-control-request-headers")
        .map(|h| {
            h.split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let grant = svc.cors_grant(bucket, origin, method, &requested)?.ok_or_else(|| {
        AwsError::new(
            StatusCode::FORBIDDEN,
            "AccessForbidden",
            "CORSResponse: This CORS request is not allowed. This is usually because the evalution of Origin, request method / Access-Control-Request-Method or Access-Control-Request-Headers are not whitelisted by the resource's CORS spec.",
        )
        .with_extra("Method", method)
        .with_extra("ResourceType", "OBJECT")
    })?;
    let mut r = empty(StatusCode::OK);
    cors_headers(&mut r, &grant);
    r.set_header(
        "vary",
        "Origin, Access-Control-Request-Headers, Access-Control-Request-Method",
    );
    Ok(r)
}

fn cors_headers(r: &mut AwsResponse, g: &super::cors::CorsGrant) {
    r.set_header("access-control-allow-origin", &g.allow_origin);
    r.set_header("access-control-allow-methods", &g.allow_methods);
    if let Some(h) = &g.allow_headers {
        r.set_header("access-control-allow-headers", h);
    }
    if let Some(h) = &g.expose_headers {
        r.set_header("access-control-expose-headers", h);
    }
    if let Some(m) = &g.max_age {
        r.set_header("access-control-max-age", m);
    }
    if g.allow_credentials {
        r.set_header("access-control-allow-credentials", "true");
    }
}

/// An actual (non-preflight) request with `Origin` gets the headers of the rule that allows
/// it, if any; S3 never fails the request itself over CORS.
fn add_cors_headers(svc: &S3Service, req: &AwsRequest, resp: &mut AwsResponse) {
    let Some(origin) = header(req, "origin") else {
        return;
    };
    let bucket = bucket_of(req);
    if bucket.is_empty() {
        return;
    }
    if let Ok(Some(grant)) = svc.cors_grant(&bucket, origin, req.method.as_str(), &[]) {
        cors_headers(resp, &grant);
        resp.set_header(
            "vary",
            "Origin, Access-Control-Request-Headers, Access-Control-Request-Method",
        );
    }
}

/// Percent-decodes a path segment (`+` stays `+`: paths are not form-encoded).
fn decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// Whether the query names this parameter (subresources often have no value: `?versioning`).
pub(super) fn has(req: &AwsRequest, name: &str) -> bool {
    req.query.iter().any(|(k, _)| k == name)
}

pub(super) fn param<'a>(req: &'a AwsRequest, name: &str) -> Option<&'a str> {
    req.query_param(name)
}

pub(super) fn header<'a>(req: &'a AwsRequest, name: &str) -> Option<&'a str> {
    req.header(name)
}

/// 200 with an S3 XML document.
pub(super) fn xml(body: String) -> AwsResponse {
    AwsResponse::new(StatusCode::OK, "application/xml", body)
}

pub(super) fn empty(status: StatusCode) -> AwsResponse {
    AwsResponse::empty(status)
}

/// The request payload, unwrapped from aws-chunked framing when the client streamed it, and the
/// checksum trailers that came with it.
pub(super) fn payload(req: &AwsRequest) -> Result<(Bytes, Vec<(String, String)>), AwsError> {
    if !chunked::is_aws_chunked(
        header(req, "content-encoding"),
        header(req, "x-amz-content-sha256"),
    ) {
        return Ok((req.body.clone(), Vec::new()));
    }
    let hint = header(req, "x-amz-decoded-content-length").and_then(|v| v.parse().ok());
    let decoded = chunked::decode(&req.body, hint).map_err(|e| {
        AwsError::bad_request(
            "IncompleteBody",
            format!("The request body is not valid aws-chunked encoding: {e}"),
        )
    })?;
    if let Some(expected) = hint
        && decoded.payload.len() != expected
    {
        return Err(AwsError::bad_request(
            "IncompleteBody",
            "You did not provide the number of bytes specified by the Content-Length HTTP header",
        ));
    }
    Ok((Bytes::from(decoded.payload), decoded.trailers))
}

/// A parsed RFC 7231 date header, in epoch milliseconds.
pub(super) fn http_date_header(req: &AwsRequest, name: &str) -> Option<i64> {
    let v = header(req, name)?;
    chrono::DateTime::parse_from_rfc2822(v)
        .ok()
        .map(|d| d.timestamp_millis())
}

/// S3's `encoding-type=url`: everything but unreserved characters and `/` percent-encoded.
pub(super) fn url_encode(s: &str) -> String {
    const SET: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
        .remove(b'-')
        .remove(b'_')
        .remove(b'.')
        .remove(b'~')
        .remove(b'/');
    percent_encoding::utf8_percent_encode(s, SET).to_string()
}

/// Parses a `max-keys`-style parameter: absent → `default`, capped at `cap`.
pub(super) fn max_param(
    req: &AwsRequest,
    name: &str,
    default: usize,
    cap: usize,
) -> Result<usize, AwsError> {
    match param(req, name) {
        None => Ok(default),
        Some(v) => match v.parse::<i64>() {
            Ok(n) if n >= 0 => Ok((n as usize).min(cap)),
            Ok(_) => Err(errors::invalid_argument(
                &format!("Argument {name} must be an integer between 0 and 2147483647"),
                name,
                v,
            )),
            Err(_) => Err(errors::invalid_argument(
                &format!("Provided {name} not an integer or within integer range"),
                name,
                v,
            )),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn url_encoding_matches_s3() {
        assert_eq!(url_encode("a b+c/d~é"), "a%20b%2Bc/d~%C3%A9");
    }
}
