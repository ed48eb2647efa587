//! SigV4: reading what a request says about who signed it (the credential scope tells the region and
//! the service a call is for) and verifying the signature against a known secret.
//!
//! The verifier follows the SigV4 specification: canonical request (method, canonical URI, canonical
//! query string, canonical headers, signed headers, payload hash), string to sign, derived signing
//! key, HMAC-SHA256. Two places where AWS itself deviates from "one canonical form" are honoured:
//! S3 signs the path exactly as sent (no normalization, no second encoding), every other service
//! signs the normalized path encoded a second time; and the payload hash is whatever the client
//! declared in `x-amz-content-sha256` (`UNSIGNED-PAYLOAD`, `STREAMING-*`), else the body's hash.

use chrono::{DateTime, NaiveDateTime, TimeZone, Utc};
use hmac::{Hmac, Mac};
use http::{HeaderMap, Method};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// The only algorithm SigV4 defines for HMAC signing.
pub const ALGORITHM: &str = "AWS4-HMAC-SHA256";
/// The payload hash S3 (and every presigned URL) may declare instead of hashing the body.
pub const UNSIGNED_PAYLOAD: &str = "UNSIGNED-PAYLOAD";
/// How far a header-signed request's clock may be from ours (AWS uses 15 minutes).
pub const MAX_SKEW_SECONDS: i64 = 15 * 60;
/// The longest validity AWS allows for a presigned URL (7 days).
pub const MAX_EXPIRES_SECONDS: i64 = 7 * 24 * 3600;

/// What the credential scope of a signed request says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CredentialScope {
    pub access_key: String,
    pub date: String,
    pub region: String,
    pub service: String,
}

impl CredentialScope {
    /// Parses `AKID/20240101/us-east-1/sqs/aws4_request`.
    pub fn parse(credential: &str) -> Option<Self> {
        let mut parts = credential.split('/');
        let access_key = parts.next()?.to_string();
        let date = parts.next()?.to_string();
        let region = parts.next()?.to_string();
        let service = parts.next()?.to_string();
        if parts.next()? != "aws4_request" || parts.next().is_some() || access_key.is_empty() {
            return None;
        }
        Some(CredentialScope {
            access_key,
            date,
            region,
            service,
        })
    }

    /// From `Authorization: AWS4-HMAC-SHA256 Credential=..., SignedHeaders=..., Signature=...`.
    pub fn from_authorization(header: &str) -> Option<Self> {
        let rest = header.strip_prefix(ALGORITHM)?;
        rest.split(',')
            .map(str::trim)
            .find_map(|p| p.strip_prefix("Credential="))
            .and_then(Self::parse)
    }

    /// `20240101/us-east-1/sqs/aws4_request`: the scope line of the string to sign.
    pub fn scope_line(&self) -> String {
        format!(
            "{}/{}/{}/aws4_request",
            self.date, self.region, self.service
        )
    }
}

/// Where the signature travels.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Placement {
    /// `Authorization` header.
    Header,
    /// Presigned URL: `X-Amz-*` query parameters, valid for `expires` seconds.
    Query { expires: i64 },
}

/// A SigV4 signature as found on a request, before verification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SigV4 {
    pub scope: CredentialScope,
    /// Lowercase header names, in the order the client listed them.
    pub signed_headers: Vec<String>,
    /// Hex signature as sent.
    pub signature: String,
    /// `X-Amz-Date` (`20240101T000000Z`) the client signed with.
    pub timestamp: String,
    pub placement: Placement,
}

/// How a request claims to be authenticated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Auth {
    /// No signature at all (browser-style anonymous request).
    Anonymous,
    /// Legacy S3 signature version 2 (`Authorization: AWS AKID:sig` or `?AWSAccessKeyId=`); cumulo
    /// routes it but cannot verify it.
    V2 {
        access_key: String,
    },
    V4(SigV4),
}

/// Why a request's authentication was refused. The gateway renders each in the target service's
/// own error shape.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SigError {
    /// The signature fields are missing or malformed.
    #[error("{0}")]
    Incomplete(String),
    /// Verification is on and the request is not signed.
    #[error("the request is not signed")]
    Missing,
    /// SigV2 while verification is on.
    #[error("signature version 2 cannot be verified; sign with SigV4")]
    Unsupported,
    /// The access key id is not one cumulo was configured with.
    #[error("unknown access key id {0}")]
    UnknownKey(String),
    /// The signature does not match; carries what we signed so the client can compare.
    #[error("signature does not match")]
    Mismatch {
        access_key: String,
        signature: String,
        canonical_request: String,
        string_to_sign: String,
    },
    /// A header-signed request outside the allowed clock skew.
    #[error("Signature expired: {timestamp} is now earlier than {earliest} ({now} - 15 min.)")]
    TooSkewed {
        timestamp: String,
        earliest: String,
        now: String,
    },
    /// A presigned URL past its `X-Amz-Expires`.
    #[error("Request has expired")]
    Expired { expires_at: String, now: String },
    /// The declared `x-amz-content-sha256` is a hash, and not the body's.
    #[error("The provided 'x-amz-content-sha256' header does not match what was computed.")]
    ContentSha256Mismatch { declared: String, computed: String },
}

/// The parts of an HTTP request a signature covers.
#[derive(Debug, Clone, Copy)]
pub struct SignedParts<'a> {
    pub method: &'a Method,
    pub raw_path: &'a str,
    pub raw_query: &'a str,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
}

impl<'a> SignedParts<'a> {
    pub fn of(req: &'a crate::AwsRequest) -> Self {
        SignedParts {
            method: &req.method,
            raw_path: &req.raw_path,
            raw_query: &req.raw_query,
            headers: &req.headers,
            body: &req.body,
        }
    }
}

/// Reads the signature a request carries, without verifying it. A request that tries to sign
/// (an `Authorization` header or `X-Amz-Algorithm`/`X-Amz-Credential` parameters) but does so
/// incompletely is an error, as on AWS.
pub fn parse_auth(headers: &HeaderMap, query: &[(String, String)]) -> Result<Auth, SigError> {
    let param = |name: &str| {
        query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    if let Some(value) = headers.get(http::header::AUTHORIZATION) {
        let value = value
            .to_str()
            .map_err(|_| SigError::Incomplete("Authorization header is not valid text".into()))?;
        return parse_authorization(value, headers);
    }
    if param("X-Amz-Algorithm").is_some() || param("X-Amz-Credential").is_some() {
        return parse_presigned(param).map(Auth::V4);
    }
    if let (Some(key), Some(_)) = (param("AWSAccessKeyId"), param("Signature")) {
        return Ok(Auth::V2 {
            access_key: key.to_string(),
        });
    }
    Ok(Auth::Anonymous)
}

fn parse_authorization(value: &str, headers: &HeaderMap) -> Result<Auth, SigError> {
    if let Some(v2) = value.strip_prefix("AWS ") {
        return match v2.split_once(':') {
            Some((key, sig)) if !key.trim().is_empty() && !sig.is_empty() => Ok(Auth::V2 {
                access_key: key.trim().to_string(),
            }),
            _ => Err(SigError::Incomplete(
                "Authorization header AWS must be of the form 'AWS AccessKeyId:Signature'".into(),
            )),
        };
    }
    let Some(rest) = value.strip_prefix(ALGORITHM) else {
        let algorithm = value.split_whitespace().next().unwrap_or("");
        return Err(SigError::Incomplete(format!(
            "Unsupported Authorization Type: '{algorithm}'; only {ALGORITHM} is supported"
        )));
    };
    let (mut credential, mut signed, mut signature) = (None, None, None);
    for field in rest.split(',').map(str::trim) {
        if let Some(v) = field.strip_prefix("Credential=") {
            credential = Some(v);
        } else if let Some(v) = field.strip_prefix("SignedHeaders=") {
            signed = Some(v);
        } else if let Some(v) = field.strip_prefix("Signature=") {
            signature = Some(v);
        }
    }
    let mut missing = Vec::new();
    for (name, v) in [
        ("Credential", credential),
        ("Signature", signature),
        ("SignedHeaders", signed),
    ] {
        if v.is_none_or(str::is_empty) {
            missing.push(format!("Authorization header requires '{name}' parameter."));
        }
    }
    let timestamp = headers
        .get("x-amz-date")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string)
        .or_else(|| {
            headers
                .get(http::header::DATE)
                .and_then(|v| v.to_str().ok())
                .and_then(http_date_to_amz)
        });
    if timestamp.is_none() {
        missing.push(
            "Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header."
                .into(),
        );
    }
    if !missing.is_empty() {
        return Err(SigError::Incomplete(format!(
            "{} Authorization={value}",
            missing.join(" ")
        )));
    }
    let credential = credential.unwrap_or_default();
    let scope = CredentialScope::parse(credential).ok_or_else(|| {
        SigError::Incomplete(format!(
            "Credential should be scoped to a valid region and service, of the form \
             'AKID/yyyyMMdd/region/service/aws4_request': got '{credential}'"
        ))
    })?;
    Ok(Auth::V4(SigV4 {
        scope,
        signed_headers: split_signed_headers(signed.unwrap_or_default()),
        signature: signature.unwrap_or_default().to_string(),
        timestamp: timestamp.unwrap_or_default(),
        placement: Placement::Header,
    }))
}

fn parse_presigned<'q>(param: impl Fn(&str) -> Option<&'q str>) -> Result<SigV4, SigError> {
    let mut missing = Vec::new();
    let mut get = |name: &'static str| {
        let v = param(name).filter(|v| !v.is_empty());
        if v.is_none() {
            missing.push(name);
        }
        v.unwrap_or_default()
    };
    let algorithm = get("X-Amz-Algorithm");
    let credential = get("X-Amz-Credential");
    let signed = get("X-Amz-SignedHeaders");
    let signature = get("X-Amz-Signature");
    let timestamp = get("X-Amz-Date");
    if !missing.is_empty() {
        return Err(SigError::Incomplete(format!(
            "Query-string authentication requires the {} parameters",
            missing.join(", ")
        )));
    }
    if algorithm != ALGORITHM {
        return Err(SigError::Incomplete(format!(
            "X-Amz-Algorithm only supports \"{ALGORITHM}\""
        )));
    }
    let scope = CredentialScope::parse(credential).ok_or_else(|| {
        SigError::Incomplete(format!(
            "X-Amz-Credential should be of the form 'AKID/yyyyMMdd/region/service/aws4_request': got '{credential}'"
        ))
    })?;
    let expires = match param("X-Amz-Expires") {
        None => MAX_EXPIRES_SECONDS,
        Some(v) => match v.parse::<i64>() {
            Ok(n) if (0..=MAX_EXPIRES_SECONDS).contains(&n) => n,
            Ok(_) => {
                return Err(SigError::Incomplete(
                    "X-Amz-Expires must be between 0 and 604800 seconds".into(),
                ));
            }
            Err(_) => {
                return Err(SigError::Incomplete(
                    "X-Amz-Expires should be a number".into(),
                ));
            }
        },
    };
    Ok(SigV4 {
        scope,
        signed_headers: split_signed_headers(signed),
        signature: signature.to_string(),
        timestamp: timestamp.to_string(),
        placement: Placement::Query { expires },
    })
}

fn split_signed_headers(s: &str) -> Vec<String> {
    s.split(';')
        .filter(|h| !h.is_empty())
        .map(|h| h.trim().to_ascii_lowercase())
        .collect()
}

/// `Date: Mon, 01 Jan 2024 00:00:00 GMT` as a SigV4 timestamp.
fn http_date_to_amz(date: &str) -> Option<String> {
    DateTime::parse_from_rfc2822(date)
        .ok()
        .map(|d| d.with_timezone(&Utc).format("%Y%m%dT%H%M%SZ").to_string())
}

fn parse_amz_date(ts: &str) -> Option<DateTime<Utc>> {
    NaiveDateTime::parse_from_str(ts, "%Y%m%dT%H%M%SZ")
        .ok()
        .map(|n| Utc.from_utc_datetime(&n))
}

/// Verifies `sig` over `parts` with `secret`, at time `now`.
///
/// Checks, in AWS's order: the timestamp is well-formed and matches the scope date, the request
/// is within its time window, the declared body hash is the body's, then the signature itself.
pub fn verify(
    sig: &SigV4,
    parts: &SignedParts<'_>,
    secret: &str,
    now: DateTime<Utc>,
) -> Result<(), SigError> {
    let Some(signed_at) = parse_amz_date(&sig.timestamp) else {
        return Err(SigError::Incomplete(format!(
            "X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\": got '{}'",
            sig.timestamp
        )));
    };
    if !sig.timestamp.starts_with(&sig.scope.date) || sig.scope.date.len() != 8 {
        return Err(SigError::Incomplete(format!(
            "Date in Credential scope does not match YYYYMMDD from ISO-8601 version of date from HTTP: '{}' != '{}'",
            sig.scope.date,
            sig.timestamp.get(..8).unwrap_or(&sig.timestamp)
        )));
    }
    let fmt = |d: DateTime<Utc>| d.format("%Y%m%dT%H%M%SZ").to_string();
    match sig.placement {
        Placement::Header => {
            let skew = (now - signed_at).num_seconds();
            if skew.abs() > MAX_SKEW_SECONDS {
                return Err(SigError::TooSkewed {
                    timestamp: sig.timestamp.clone(),
                    earliest: fmt(now - chrono::Duration::seconds(MAX_SKEW_SECONDS)),
                    now: fmt(now),
                });
            }
        }
        Placement::Query { expires } => {
            let expires_at = signed_at + chrono::Duration::seconds(expires);
            if now > expires_at {
                return Err(SigError::Expired {
                    expires_at: fmt(expires_at),
                    now: fmt(now),
                });
            }
        }
    }
    let declared = header_text(parts.headers, "x-amz-content-sha256");
    if let Some(declared) = declared.as_deref()
        && is_sha256_hex(declared)
    {
        let computed = hex::encode(Sha256::digest(parts.body));
        if !declared.eq_ignore_ascii_case(&computed) {
            return Err(SigError::ContentSha256Mismatch {
                declared: declared.to_string(),
                computed,
            });
        }
    }
    let Ok(provided) = hex::decode(&sig.signature) else {
        return Err(mismatch(sig, parts, declared.as_deref()));
    };
    let key = signing_key(
        secret,
        &sig.scope.date,
        &sig.scope.region,
        &sig.scope.service,
    );
    for candidate in candidates(sig, parts, declared.as_deref()) {
        let sts = string_to_sign(&sig.timestamp, &sig.scope, &candidate);
        let mut mac = new_mac(&key);
        mac.update(sts.as_bytes());
        if mac.verify_slice(&provided).is_ok() {
            return Ok(());
        }
    }
    Err(mismatch(sig, parts, declared.as_deref()))
}

fn mismatch(sig: &SigV4, parts: &SignedParts<'_>, declared: Option<&str>) -> SigError {
    let canonical_request = candidates(sig, parts, declared)
        .into_iter()
        .next()
        .unwrap_or_default();
    SigError::Mismatch {
        access_key: sig.scope.access_key.clone(),
        signature: sig.signature.clone(),
        string_to_sign: string_to_sign(&sig.timestamp, &sig.scope, &canonical_request),
        canonical_request,
    }
}

/// The canonical requests a correct client may have signed, most likely first. There is more than
/// one because clients legitimately differ: presigned URLs hash the payload as `UNSIGNED-PAYLOAD`
/// (S3 and botocore) or as the body's hash (other SDKs for other services), and a few clients sign
/// the query string exactly as sent rather than re-encoded.
fn candidates(sig: &SigV4, parts: &SignedParts<'_>, declared: Option<&str>) -> Vec<String> {
    let s3 = matches!(sig.scope.service.as_str(), "s3" | "s3express");
    let uri = if s3 {
        if parts.raw_path.is_empty() {
            "/".to_string()
        } else {
            parts.raw_path.to_string()
        }
    } else {
        uri_encode(&normalize_path(parts.raw_path), false)
    };
    let presigned = matches!(sig.placement, Placement::Query { .. });
    let mut queries = vec![canonical_query(parts.raw_query, presigned)];
    let raw = raw_sorted_query(parts.raw_query, presigned);
    if raw != queries[0] {
        queries.push(raw);
    }
    let body_hash = || hex::encode(Sha256::digest(parts.body));
    let hashes: Vec<String> = match (declared, presigned) {
        (Some(d), _) => vec![d.to_string()],
        (None, true) => vec![UNSIGNED_PAYLOAD.to_string(), body_hash()],
        (None, false) => vec![body_hash()],
    };
    let headers = canonical_headers(parts.headers, &sig.signed_headers);
    let signed = sig.signed_headers.join(";");
    let mut out = Vec::new();
    for q in &queries {
        for h in &hashes {
            out.push(format!(
                "{}\n{uri}\n{q}\n{headers}\n{signed}\n{h}",
                parts.method.as_str()
            ));
        }
    }
    out
}

/// `AWS4-HMAC-SHA256\n<timestamp>\n<scope>\n<hex sha256 of the canonical request>`.
pub fn string_to_sign(timestamp: &str, scope: &CredentialScope, canonical_request: &str) -> String {
    format!(
        "{ALGORITHM}\n{timestamp}\n{}\n{}",
        scope.scope_line(),
        hex::encode(Sha256::digest(canonical_request.as_bytes()))
    )
}

/// The derived key: HMAC chain over date, region, service and `aws4_request`.
pub fn signing_key(secret: &str, date: &str, region: &str, service: &str) -> Vec<u8> {
    let mut key = format!("AWS4{secret}").into_bytes();
    for part in [date, region, service, "aws4_request"] {
        let mut mac = new_mac(&key);
        mac.update(part.as_bytes());
        key = mac.finalize().into_bytes().to_vec();
    }
    key
}

/// Signs a string to sign with a derived key (used by tests and clients built on this crate).
pub fn sign(key: &[u8], string_to_sign: &str) -> String {
    let mut mac = new_mac(key);
    mac.update(string_to_sign.as_bytes());
    hex::encode(mac.finalize().into_bytes())
}

fn new_mac(key: &[u8]) -> HmacSha256 {
    // HMAC takes keys of any length, so this cannot fail; the fallback keeps it panic-free anyway.
    HmacSha256::new_from_slice(key).unwrap_or_else(|_| HmacSha256::new(&Default::default()))
}

fn header_text(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(|s| s.trim().to_string())
}

fn is_sha256_hex(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `name:value` lines for the signed headers: values trimmed, inner runs of spaces collapsed,
/// repeated headers joined with `,`. A signed header the request lacks contributes an empty value
/// (so the signature simply fails to match).
fn canonical_headers(headers: &HeaderMap, signed: &[String]) -> String {
    let mut out = String::new();
    for name in signed {
        let values: Vec<String> = headers
            .get_all(name.as_str())
            .iter()
            .map(|v| {
                let text = String::from_utf8_lossy(v.as_bytes());
                text.split_whitespace().collect::<Vec<_>>().join(" ")
            })
            .collect();
        out.push_str(name);
        out.push(':');
        out.push_str(&values.join(","));
        out.push('\n');
    }
    out
}

/// RFC 3986 dot-segment removal plus collapsing of empty segments, as AWS services (other than S3)
/// normalize before signing; keeps a trailing slash.
fn normalize_path(path: &str) -> String {
    if path.is_empty() {
        return "/".to_string();
    }
    let mut out: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop();
            }
            s => out.push(s),
        }
    }
    let first = if path.starts_with('/') { "/" } else { "" };
    let last = if path.ends_with('/') && !out.is_empty() {
        "/"
    } else {
        ""
    };
    format!("{first}{}{last}", out.join("/"))
}

/// SigV4 URI encoding: every byte except unreserved characters (`A-Za-z0-9-._~`) as `%XX`
/// (uppercase), and `/` too unless `encode_slash` is false.
pub fn uri_encode(s: &str, encode_slash: bool) -> String {
    uri_encode_bytes(s.as_bytes(), encode_slash)
}

fn uri_encode_bytes(bytes: &[u8], encode_slash: bool) -> String {
    let mut out = String::with_capacity(bytes.len());
    for &b in bytes {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'.' | b'_' | b'~')
            || (b == b'/' && !encode_slash)
        {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn query_pairs(raw: &str, presigned: bool) -> impl Iterator<Item = (&str, &str)> {
    raw.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| p.split_once('=').unwrap_or((p, "")))
        .filter(move |(k, _)| !(presigned && *k == "X-Amz-Signature"))
}

/// The spec's canonical query string: each name and value percent-decoded, then encoded strictly,
/// sorted by name then value, `X-Amz-Signature` left out of a presigned URL's.
fn canonical_query(raw: &str, presigned: bool) -> String {
    let enc = |s: &str| {
        let bytes: Vec<u8> = percent_encoding::percent_decode_str(s).collect();
        uri_encode_bytes(&bytes, true)
    };
    let mut pairs: Vec<(String, String)> = query_pairs(raw, presigned)
        .map(|(k, v)| (enc(k), enc(v)))
        .collect();
    pairs.sort();
    join_pairs(&pairs)
}

/// The query string as sent, only sorted (what botocore signs for URLs it built itself).
fn raw_sorted_query(raw: &str, presigned: bool) -> String {
    let mut pairs: Vec<(String, String)> = query_pairs(raw, presigned)
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    pairs.sort();
    join_pairs(&pairs)
}

fn join_pairs(pairs: &[(String, String)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join("&")
}

#[cfg(test)]
mod tests;
