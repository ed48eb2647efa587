//! DynamoDB's errors. Most are a code and a message ([`AwsError`]); two carry data botocore
//! parses into the exception (`Item` of ConditionalCheckFailedException, `CancellationReasons`
//! of TransactionCanceledException), so the operations return [`DdbError`].

use super::value::{Item, item_to_json};
use cumulo_wire::{AwsError, AwsResponse, Protocol};
use http::StatusCode;
use serde_json::{Map, Value, json};

/// An error with the extra members some DynamoDB exceptions have.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{aws}")]
pub struct DdbError {
    pub aws: Box<AwsError>,
    pub extra: Box<Map<String, Value>>,
}

impl From<AwsError> for DdbError {
    fn from(aws: AwsError) -> Self {
        DdbError {
            aws: Box::new(aws),
            extra: Box::default(),
        }
    }
}

impl DdbError {
    /// Renders as awsJson1_0 with DynamoDB's fully qualified `__type`.
    pub fn into_response(self, request_id: &str) -> AwsResponse {
        if self.extra.is_empty() && self.aws.status == StatusCode::NOT_IMPLEMENTED {
            return (*self.aws).into_response(Protocol::Json10, request_id);
        }
        let code = &self.aws.code;
        let qualified = if code == "SerializationException" || code == "UnknownOperationException" {
            code.clone()
        } else {
            format!("com.amazonaws.dynamodb.v20120810#{code}")
        };
        let mut body = Map::new();
        body.insert("__type".into(), json!(qualified));
        let message_key = if code == "TransactionCanceledException" {
            "Message"
        } else {
            "message"
        };
        body.insert(message_key.into(), json!(self.aws.message));
        body.extend(*self.extra);
        let mut r = AwsResponse::new(
            self.aws.status,
            "application/x-amz-json-1.0",
            Value::Object(body).to_string(),
        );
        r.set_header("x-amzn-errortype", code);
        r.set_header("x-amzn-requestid", request_id);
        r
    }
}

pub fn validation(message: impl Into<String>) -> AwsError {
    AwsError::validation_exception(message)
}

/// `One or more parameter values were invalid: ...`, DynamoDB's most common prefix.
pub fn invalid_param(detail: impl std::fmt::Display) -> AwsError {
    validation(format!(
        "One or more parameter values were invalid: {detail}"
    ))
}

/// The table is unknown (item operations; DescribeTable names it).
pub fn table_not_found() -> AwsError {
    AwsError::bad_request("ResourceNotFoundException", "Requested resource not found")
}

pub fn table_not_found_named(name: &str) -> AwsError {
    AwsError::bad_request(
        "ResourceNotFoundException",
        format!("Requested resource not found: Table: {name} not found"),
    )
}

pub fn resource_in_use(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("ResourceInUseException", message)
}

pub fn serialization(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("SerializationException", message)
}

/// ConditionalCheckFailedException, with the item when the caller asked for it
/// (`ReturnValuesOnConditionCheckFailure: ALL_OLD`) and one existed.
pub fn condition_failed(item: Option<&Item>) -> DdbError {
    let mut e = DdbError::from(AwsError::bad_request(
        "ConditionalCheckFailedException",
        "The conditional request failed",
    ));
    if let Some(item) = item {
        e.extra.insert("Item".into(), item_to_json(item));
    }
    e
}

/// A legacy (pre-expression) parameter cumulo does not implement.
pub fn legacy_parameter(name: &str, instead: &str) -> AwsError {
    validation(format!(
        "cumulo: the legacy parameter {name} is not supported; use {instead}"
    ))
}
