//! Request and response plumbing shared by the awsJson1_1 adapters of KMS and Secrets Manager:
//! body parsing, typed member access (a member of the wrong JSON type is a
//! SerializationException, as AWS answers) and AWS's timestamp and blob encodings.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

const CONTENT_TYPE: &str = "application/x-amz-json-1.1";

/// Runs `dispatch` on the parsed body and renders its result or error in awsJson1_1.
pub(crate) fn respond(
    req: &AwsRequest,
    dispatch: impl FnOnce(&str, Body<'_>) -> Result<Value, AwsError>,
) -> AwsResponse {
    let op = req.target_operation().unwrap_or("").to_string();
    let result = check_content_type(req)
        .and_then(|()| parse_body(&req.body))
        .and_then(|m| dispatch(&op, Body(&m)));
    match result {
        Ok(v) => {
            AwsResponse::json(CONTENT_TYPE, &v).with_header("x-amzn-requestid", &req.request_id)
        }
        Err(e) => e.into_response(Protocol::Json11, &req.request_id),
    }
}

/// The body is only read under a JSON content type (clients always send
/// `application/x-amz-json-1.1`); anything else is refused before it is parsed.
fn check_content_type(req: &AwsRequest) -> Result<(), AwsError> {
    match req.header("content-type") {
        None => Ok(()),
        Some(ct)
            if ct.starts_with("application/x-amz-json-1.")
                || ct.starts_with("application/json") =>
        {
            Ok(())
        }
        Some(ct) => Err(AwsError::bad_request(
            "SerializationException",
            format!("Content-Type {ct} is not supported; send {CONTENT_TYPE}"),
        )),
    }
}

fn parse_body(body: &[u8]) -> Result<Map<String, Value>, AwsError> {
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(body) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(AwsError::bad_request(
            "SerializationException",
            "Start of structure or map found where not expected.",
        )),
    }
}

fn wrong_type(name: &str) -> AwsError {
    AwsError::bad_request(
        "SerializationException",
        format!("Unexpected JSON type for member {name}"),
    )
}

/// AWS's wording for a missing required member.
pub(crate) fn missing(name: &str) -> AwsError {
    AwsError::validation_exception(format!(
        "1 validation error detected: Value null at '{}' failed to satisfy constraint: Member must not be null",
        lower_first(name)
    ))
}

pub(crate) fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Typed access to the members of a request body.
#[derive(Clone, Copy)]
pub(crate) struct Body<'a>(pub &'a Map<String, Value>);

impl<'a> Body<'a> {
    pub fn has(&self, name: &str) -> bool {
        !matches!(self.0.get(name), None | Some(Value::Null))
    }

    pub fn opt_str(&self, name: &str) -> Result<Option<String>, AwsError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(wrong_type(name)),
        }
    }

    pub fn str(&self, name: &str) -> Result<String, AwsError> {
        self.opt_str(name)?.ok_or_else(|| missing(name))
    }

    pub fn opt_bool(&self, name: &str) -> Result<Option<bool>, AwsError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(wrong_type(name)),
        }
    }

    pub fn bool(&self, name: &str) -> Result<bool, AwsError> {
        Ok(self.opt_bool(name)?.unwrap_or(false))
    }

    pub fn opt_int(&self, name: &str) -> Result<Option<i64>, AwsError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| wrong_type(name)),
        }
    }

    /// A blob member: base64 text in the JSON protocols.
    pub fn opt_blob(&self, name: &str) -> Result<Option<Vec<u8>>, AwsError> {
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

    pub fn blob(&self, name: &str) -> Result<Vec<u8>, AwsError> {
        self.opt_blob(name)?.ok_or_else(|| missing(name))
    }

    pub fn strings(&self, name: &str) -> Result<Vec<String>, AwsError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| {
                    i.as_str()
                        .map(str::to_string)
                        .ok_or_else(|| wrong_type(name))
                })
                .collect(),
            Some(_) => Err(wrong_type(name)),
        }
    }

    pub fn objects(&self, name: &str) -> Result<Vec<Body<'a>>, AwsError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| i.as_object().map(Body).ok_or_else(|| wrong_type(name)))
                .collect(),
            Some(_) => Err(wrong_type(name)),
        }
    }

    /// A string-to-string map member (KMS's EncryptionContext).
    pub fn string_map(&self, name: &str) -> Result<BTreeMap<String, String>, AwsError> {
        match self.0.get(name) {
            None | Some(Value::Null) => Ok(BTreeMap::new()),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| {
                    v.as_str()
                        .map(|s| (k.clone(), s.to_string()))
                        .ok_or_else(|| wrong_type(name))
                })
                .collect(),
            Some(_) => Err(wrong_type(name)),
        }
    }

    /// `[{key_name: k, value_name: v}]` tag lists (`TagKey`/`TagValue` in KMS, `Key`/`Value`
    /// in Secrets Manager).
    pub fn tags(
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
