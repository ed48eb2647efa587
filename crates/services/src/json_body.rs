//! Request decoding and response encoding shared by the awsJson1_1 services written after SSM
//! (CloudWatch Logs, EventBridge, ECR): the body is read only under a JSON content type, members
//! are typed on access (a member of the wrong JSON type is a `SerializationException`, as AWS
//! answers), and a missing required member is the service's own validation error.

use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

const CONTENT_TYPE: &str = "application/x-amz-json-1.1";

/// Decodes the request body as a JSON object (an empty body is an empty object).
pub fn parse(req: &AwsRequest) -> Result<Map<String, Value>, AwsError> {
    match req.header("content-type") {
        None => {}
        Some(ct)
            if ct.starts_with("application/x-amz-json-1.")
                || ct.starts_with("application/json") => {}
        Some(ct) => {
            return Err(AwsError::bad_request(
                "SerializationException",
                format!("Content-Type {ct} is not supported; send {CONTENT_TYPE}"),
            ));
        }
    }
    if req.body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Map::new());
    }
    match serde_json::from_slice::<Value>(&req.body) {
        Ok(Value::Object(m)) => Ok(m),
        _ => Err(AwsError::bad_request(
            "SerializationException",
            "Start of structure or map found where not expected.",
        )),
    }
}

/// The response for an operation's result: 200 with the JSON, or the error in awsJson1_1.
pub fn respond(req: &AwsRequest, result: Result<Value, AwsError>) -> AwsResponse {
    match result {
        Ok(v) => {
            AwsResponse::json(CONTENT_TYPE, &v).with_header("x-amzn-requestid", &req.request_id)
        }
        Err(e) => e.into_response(Protocol::Json11, &req.request_id),
    }
}

fn wrong_type(name: &str) -> AwsError {
    AwsError::bad_request(
        "SerializationException",
        format!("Unexpected JSON type for member {name}"),
    )
}

/// The message AWS's request validation gives for a missing required member.
pub fn null_member(name: &str) -> String {
    format!(
        "1 validation error detected: Value null at '{name}' failed to satisfy constraint: Member must not be null"
    )
}

/// Typed access to request members. `missing` builds the error for an absent required member
/// (each service has its own validation error code).
#[derive(Clone, Copy)]
pub struct Body<'a> {
    map: &'a Map<String, Value>,
    missing: fn(&str) -> AwsError,
}

impl<'a> Body<'a> {
    pub fn new(map: &'a Map<String, Value>, missing: fn(&str) -> AwsError) -> Self {
        Body { map, missing }
    }

    /// The member as given (absent or null: `None`), for values stored verbatim.
    pub fn get(&self, name: &str) -> Option<&'a Value> {
        match self.map.get(name) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    pub fn has(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    pub fn opt_str(&self, name: &str) -> Result<Option<String>, AwsError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(wrong_type(name)),
        }
    }

    pub fn str(&self, name: &str) -> Result<String, AwsError> {
        self.opt_str(name)?.ok_or_else(|| (self.missing)(name))
    }

    pub fn opt_bool(&self, name: &str) -> Result<Option<bool>, AwsError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(wrong_type(name)),
        }
    }

    pub fn bool(&self, name: &str) -> Result<bool, AwsError> {
        Ok(self.opt_bool(name)?.unwrap_or(false))
    }

    pub fn opt_i64(&self, name: &str) -> Result<Option<i64>, AwsError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v.as_i64().map(Some).ok_or_else(|| wrong_type(name)),
        }
    }

    pub fn opt_f64(&self, name: &str) -> Result<Option<f64>, AwsError> {
        match self.get(name) {
            None => Ok(None),
            Some(v) => v.as_f64().map(Some).ok_or_else(|| wrong_type(name)),
        }
    }

    pub fn i64(&self, name: &str) -> Result<i64, AwsError> {
        self.opt_i64(name)?.ok_or_else(|| (self.missing)(name))
    }

    pub fn strings(&self, name: &str) -> Result<Vec<String>, AwsError> {
        match self.get(name) {
            None => Ok(Vec::new()),
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

    pub fn opt_strings(&self, name: &str) -> Result<Option<Vec<String>>, AwsError> {
        if self.has(name) {
            self.strings(name).map(Some)
        } else {
            Ok(None)
        }
    }

    pub fn objects(&self, name: &str) -> Result<Vec<Body<'a>>, AwsError> {
        match self.get(name) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|i| {
                    i.as_object()
                        .map(|m| Body::new(m, self.missing))
                        .ok_or_else(|| wrong_type(name))
                })
                .collect(),
            Some(_) => Err(wrong_type(name)),
        }
    }

    /// A `{string: string}` map member (absent is empty).
    pub fn string_map(&self, name: &str) -> Result<BTreeMap<String, String>, AwsError> {
        match self.get(name) {
            None => Ok(BTreeMap::new()),
            Some(Value::Object(m)) => m
                .iter()
                .map(|(k, v)| match v {
                    Value::String(s) => Ok((k.clone(), s.clone())),
                    _ => Err(wrong_type(name)),
                })
                .collect(),
            Some(_) => Err(wrong_type(name)),
        }
    }

    pub fn object(&self, name: &str) -> Result<Option<Body<'a>>, AwsError> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(Body::new(m, self.missing))),
            Some(_) => Err(wrong_type(name)),
        }
    }

    /// A `[{Key, Value}]` tag list member (absent is empty), with the given member names.
    pub fn tag_list(
        &self,
        name: &str,
        key: &str,
        value: &str,
    ) -> Result<Vec<(String, String)>, AwsError> {
        self.objects(name)?
            .iter()
            .map(|t| Ok((t.str(key)?, t.opt_str(value)?.unwrap_or_default())))
            .collect()
    }
}
