//! What the awsJson1_1 adapters of KMS and Secrets Manager add to the shared [`json_body`]
//! plumbing: their missing-member error, blob and tag-list members, and AWS's timestamp and blob
//! encodings.

use crate::json_body;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use serde_json::Value;

pub(crate) use json_body::Body;

/// Runs `dispatch` on the parsed body and renders its result or error in awsJson1_1.
pub(crate) fn respond(
    req: &AwsRequest,
    dispatch: impl FnOnce(&str, Body<'_>) -> Result<Value, AwsError>,
) -> AwsResponse {
    let op = req.target_operation().unwrap_or("").to_string();
    let result = json_body::parse(req).and_then(|m| dispatch(&op, Body::new(&m, missing)));
    json_body::respond(req, result)
}

/// AWS's wording for a missing required member (named in lowerCamelCase, as AWS does).
pub(crate) fn missing(name: &str) -> AwsError {
    let mut c = name.chars();
    let field: String = match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    };
    AwsError::validation_exception(json_body::null_member(&field))
}

/// Members the shared [`Body`] does not decode.
pub(crate) trait Members {
    /// A blob member: base64 text in the JSON protocols.
    fn opt_blob(&self, name: &str) -> Result<Option<Vec<u8>>, AwsError>;
    fn blob(&self, name: &str) -> Result<Vec<u8>, AwsError>;
    /// `[{key_name: k, value_name: v}]` tag lists (`TagKey`/`TagValue` in KMS, `Key`/`Value`
    /// in Secrets Manager).
    fn tags(
        &self,
        name: &str,
        key_name: &str,
        value_name: &str,
    ) -> Result<Vec<(String, String)>, AwsError>;
}

impl Members for Body<'_> {
    fn opt_blob(&self, name: &str) -> Result<Option<Vec<u8>>, AwsError> {
        match self.opt_str(name)? {
            None => Ok(None),
            Some(s) => B64.decode(s.as_bytes()).map(Some).map_err(|_| {
                AwsError::bad_request(
                    "SerializationException",
                    format!("Value for member {name} is not valid base64"),
                )
            }),
        }
    }

    fn blob(&self, name: &str) -> Result<Vec<u8>, AwsError> {
        self.opt_blob(name)?.ok_or_else(|| missing(name))
    }

    fn tags(
        &self,
        name: &str,
        key_name: &str,
        value_name: &str,
    ) -> Result<Vec<(String, String)>, AwsError> {
        self.objects(name)?
            .iter()
            .map(|t| Ok((t.str(key_name)?, t.opt_str(value_name)?.unwrap_or_default())))
            .collect()
    }
}

/// AWS's JSON timestamp: epoch seconds, with milliseconds as the fraction.
pub(crate) fn epoch(ms: i64) -> Value {
    serde_json::json!(ms as f64 / 1000.0)
}

pub(crate) fn b64(bytes: &[u8]) -> String {
    B64.encode(bytes)
}

pub(crate) fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}
