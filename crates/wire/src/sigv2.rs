//! S3's legacy signature version 2 (`Authorization: AWS AKID:sig`, or presigned
//! `?AWSAccessKeyId=&Signature=&Expires=`). It matters because boto3 still presigns S3 URLs with it
//! by default, so `--verify-signatures` must check it rather than refuse every such URL.
//!
//! String to sign: method, Content-MD5, Content-Type, Date (presigned: Expires), the `x-amz-*`
//! headers (lowercase, sorted, `name:value`), and the resource: `/bucket/key` as sent plus the
//! sub-resources of interest (`?acl`, `?versionId=`...) sorted. Signed with HMAC-SHA1, base64.

use base64::Engine;
use chrono::{DateTime, Utc};
use hmac::{Hmac, Mac};
use http::{HeaderMap, Method};
use sha1::Sha1;

use crate::sigv4::SigError;

/// Query parameters that are part of the signed resource (botocore's list, which is S3's).
const SUB_RESOURCES: &[&str] = &[
    "accelerate",
    "acl",
    "analytics",
    "cors",
    "defaultObjectAcl",
    "delete",
    "inventory",
    "lifecycle",
    "location",
    "logging",
    "metrics",
    "notification",
    "object-lock",
    "partNumber",
    "policy",
    "replication",
    "requestPayment",
    "response-cache-control",
    "response-content-disposition",
    "response-content-encoding",
    "response-content-language",
    "response-content-type",
    "response-expires",
    "restore",
    "select",
    "select-type",
    "storageClass",
    "tagging",
    "torrent",
    "uploadId",
    "uploads",
    "versionId",
    "versioning",
    "versions",
    "website",
];

/// A V2 request as the verifier needs it. `resource_path` is the path-style path (`/bucket/key`,
/// still percent-encoded), which for a virtual-hosted request is the rewritten one.
#[derive(Debug, Clone, Copy)]
pub struct V2Parts<'a> {
    pub method: &'a Method,
    pub resource_path: &'a str,
    pub raw_query: &'a str,
    pub headers: &'a HeaderMap,
    pub query: &'a [(String, String)],
}

/// Verifies a V2 signature with `secret` at `now`.
pub fn verify(parts: &V2Parts<'_>, secret: &str, now: DateTime<Utc>) -> Result<(), SigError> {
    let param = |name: &str| {
        parts
            .query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    };
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
    };
    let (access_key, provided, dates, presigned) = match header("authorization") {
        Some(value) => {
            let (key, sig) = value
                .strip_prefix("AWS ")
                .and_then(|v| v.split_once(':'))
                .ok_or_else(|| SigError::Incomplete("malformed AWS authorization".into()))?;
            let date = header("date").unwrap_or_default().to_string();
            // With x-amz-date the Date line may be empty (the spec) or the Date header (botocore).
            let mut dates = vec![date];
            if header("x-amz-date").is_some() {
                dates.push(String::new());
            }
            (key.trim(), sig.trim(), dates, false)
        }
        None => {
            let (Some(key), Some(sig), Some(expires)) = (
                param("AWSAccessKeyId"),
                param("Signature"),
                param("Expires"),
            ) else {
                return Err(SigError::Incomplete(
                    "Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters".into(),
                ));
            };
            let at: i64 = expires.parse().map_err(|_| {
                SigError::Incomplete(format!("Invalid Expires parameter: '{expires}'"))
            })?;
            if now.timestamp() > at {
                let fmt = |t: i64| {
                    DateTime::from_timestamp(t, 0)
                        .map(|d| d.format("%Y-%m-%dT%H:%M:%SZ").to_string())
                        .unwrap_or_default()
                };
                return Err(SigError::Expired {
                    expires_at: fmt(at),
                    now: fmt(now.timestamp()),
                });
            }
            (key, sig, vec![expires.to_string()], true)
        }
    };
    let presigned_value = |name: &str| -> Option<String> {
        presigned
            .then(|| param(name).map(str::to_string))
            .flatten()
            .or_else(|| header(name).map(str::to_string))
    };
    let md5 = presigned_value("content-md5").unwrap_or_default();
    let content_type = presigned_value("content-type").unwrap_or_default();
    let amz = amz_headers(parts, presigned);
    let resource = canonical_resource(parts.resource_path, parts.raw_query);
    let provided = base64::engine::general_purpose::STANDARD
        .decode(provided)
        .unwrap_or_default();
    let mut first = None;
    for date in dates {
        let sts = format!(
            "{}\n{md5}\n{content_type}\n{date}\n{amz}{resource}",
            parts.method.as_str()
        );
        let Ok(mut mac) = Hmac::<Sha1>::new_from_slice(secret.as_bytes()) else {
            continue;
        };
        mac.update(sts.as_bytes());
        if mac.verify_slice(&provided).is_ok() {
            return Ok(());
        }
        first.get_or_insert(sts);
    }
    Err(SigError::Mismatch {
        access_key: access_key.to_string(),
        signature: base64::engine::general_purpose::STANDARD.encode(&provided),
        canonical_request: String::new(),
        string_to_sign: first.unwrap_or_default(),
    })
}

/// `x-amz-name:value\n` for each `x-amz-*` header (presigned: also such query parameters),
/// lowercase and sorted, repeated values joined with `,`.
fn amz_headers(parts: &V2Parts<'_>, presigned: bool) -> String {
    let mut found: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for (name, value) in parts.headers {
        if name.as_str().starts_with("x-amz-") {
            let v = String::from_utf8_lossy(value.as_bytes()).trim().to_string();
            found.entry(name.as_str().to_string()).or_default().push(v);
        }
    }
    if presigned {
        for (k, v) in parts.query {
            let k = k.to_ascii_lowercase();
            if k.starts_with("x-amz-") {
                found.entry(k).or_default().push(v.trim().to_string());
            }
        }
    }
    found
        .into_iter()
        .map(|(k, v)| format!("{k}:{}\n", v.join(",")))
        .collect()
}

fn canonical_resource(path: &str, raw_query: &str) -> String {
    let mut subs: Vec<(&str, Option<String>)> = raw_query
        .split('&')
        .filter(|p| !p.is_empty())
        .filter_map(|pair| {
            let (k, v) = match pair.split_once('=') {
                Some((k, v)) => (k, Some(v)),
                None => (pair, None),
            };
            SUB_RESOURCES.contains(&k).then(|| {
                let v = v.map(|v| {
                    percent_encoding::percent_decode_str(v)
                        .decode_utf8_lossy()
                        .into_owned()
                });
                (k, v)
            })
        })
        .collect();
    subs.sort_by(|a, b| a.0.cmp(b.0));
    let mut out = if path.is_empty() {
        "/".to_string()
    } else {
        path.to_string()
    };
    for (i, (k, v)) in subs.iter().enumerate() {
        out.push(if i == 0 { '?' } else { '&' });
        out.push_str(k);
        if let Some(v) = v {
            out.push('=');
            out.push_str(v);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    /// Made by botocore's HmacV1Auth / HmacV1QueryAuth with key `AKID` and secret `secret`
    /// (see `sigv4/gen_vectors.py` for the V4 equivalents).
    #[test]
    fn verifies_botocore_v2_presigned_and_header_signatures() {
        let v: serde_json::Value =
            serde_json::from_str(include_str!("sigv4/vectors_v2.json")).unwrap();
        let now = DateTime::from_timestamp(v["now"].as_i64().unwrap(), 0).unwrap();
        for c in v["cases"].as_array().unwrap() {
            let mut headers = HeaderMap::new();
            for h in c["headers"].as_array().unwrap() {
                let name = http::HeaderName::from_bytes(
                    h[0].as_str().unwrap().to_ascii_lowercase().as_bytes(),
                )
                .unwrap();
                headers.append(name, HeaderValue::from_str(h[1].as_str().unwrap()).unwrap());
            }
            let raw_query = c["query"].as_str().unwrap();
            let query = crate::query::parse_form(raw_query.as_bytes());
            let method = Method::from_bytes(c["method"].as_str().unwrap().as_bytes()).unwrap();
            let path = c["resource"].as_str().unwrap();
            let parts = V2Parts {
                method: &method,
                resource_path: path,
                raw_query,
                headers: &headers,
                query: &query,
            };
            let name = c["name"].as_str().unwrap();
            verify(&parts, "secret", now).unwrap_or_else(|e| panic!("{name}: {e:?}"));
            let err = verify(&parts, "wrong", now).unwrap_err();
            assert!(matches!(err, SigError::Mismatch { .. }), "{name}");
            let tampered = V2Parts {
                resource_path: "/other/key",
                ..parts
            };
            assert!(verify(&tampered, "secret", now).is_err(), "{name}");
            if name.contains("presigned") {
                let later = now + chrono::Duration::hours(2);
                let err = verify(&parts, "secret", later).unwrap_err();
                assert!(matches!(err, SigError::Expired { .. }), "{name}");
            }
        }
    }

    #[test]
    fn canonical_resource_keeps_only_sub_resources_sorted() {
        assert_eq!(
            canonical_resource("/b/k%20x", "versionId=a%2Fb&prefix=p&acl"),
            "/b/k%20x?acl&versionId=a/b"
        );
        assert_eq!(canonical_resource("", ""), "/");
    }
}
