//! The request as every service sees it, after the HTTP layer has read the whole body.

use bytes::Bytes;
use http::{HeaderMap, Method};

/// One AWS API call, transport-independent.
#[derive(Debug, Clone)]
pub struct AwsRequest {
    pub method: Method,
    /// The path exactly as sent (still percent-encoded).
    pub raw_path: String,
    /// The query string exactly as sent (without `?`).
    pub raw_query: String,
    /// Decoded query parameters in order.
    pub query: Vec<(String, String)>,
    pub headers: HeaderMap,
    pub body: Bytes,
    /// Request id every response (and error) must carry.
    pub request_id: String,
    /// Region from the SigV4 credential scope, else the configured default.
    pub region: String,
    /// Account the caller acts as (cumulo answers as 000000000000 unless configured).
    pub account_id: String,
    /// Access key id from the credential scope, when signed.
    pub access_key: Option<String>,
    /// The `Host` header as the client sent it, e.g. `localhost:4566`; services that return URLs
    /// (SQS queue URLs, S3 locations) build them from it so the client can call them back.
    pub host: String,
}

impl AwsRequest {
    /// A request with empty headers/body, for tests and in-process calls.
    pub fn new(method: Method, path: &str) -> Self {
        let (raw_path, raw_query) = match path.split_once('?') {
            Some((p, q)) => (p.to_string(), q.to_string()),
            None => (path.to_string(), String::new()),
        };
        let query = crate::query::parse_form(raw_query.as_bytes());
        AwsRequest {
            method,
            raw_path,
            raw_query,
            query,
            headers: HeaderMap::new(),
            body: Bytes::new(),
            request_id: crate::ids::request_id(),
            region: "us-east-1".to_string(),
            account_id: "000000000000".to_string(),
            access_key: None,
            host: "localhost:4566".to_string(),
        }
    }

    /// A header's value as text, if present and valid UTF-8.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// First query parameter with this name.
    pub fn query_param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The decoded path (percent-decoding applied), lossy for invalid UTF-8.
    pub fn path(&self) -> String {
        percent_encoding::percent_decode_str(&self.raw_path)
            .decode_utf8_lossy()
            .into_owned()
    }

    /// The operation named by `X-Amz-Target: Prefix.Operation`, if any.
    pub fn target_operation(&self) -> Option<&str> {
        self.header("x-amz-target")
            .map(|t| t.rsplit_once('.').map_or(t, |(_, op)| op))
    }
}
