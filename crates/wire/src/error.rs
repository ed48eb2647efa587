//! AWS errors and their exact shape in each protocol.
//!
//! A service returns an [`AwsError`]; [`AwsError::into_response`] renders it the way botocore parses
//! it for that protocol, always with the request id, so clients raise the right exception class.

use crate::xml::{XmlWriter, escape};
use crate::{AwsResponse, Protocol};
use http::StatusCode;

/// An AWS error: code, message and HTTP status, plus extra fields some APIs add (S3's `BucketName`).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{code}: {message}")]
pub struct AwsError {
    pub status: StatusCode,
    pub code: String,
    pub message: String,
    /// `Sender` (client fault) or `Receiver` (service fault) in query-protocol errors.
    pub sender_fault: bool,
    /// Extra elements rendered inside the error (S3: `BucketName`, `Key`, ...).
    pub extra: Vec<(String, String)>,
    /// For awsQueryCompatible JSON services (SQS): the legacy query error code, sent in the
    /// `x-amzn-query-error` header so botocore maps it to the old exception names.
    pub query_code: Option<String>,
}

impl AwsError {
    pub fn new(status: StatusCode, code: impl Into<String>, message: impl Into<String>) -> Self {
        let sender_fault = status.is_client_error();
        AwsError {
            status,
            code: code.into(),
            message: message.into(),
            sender_fault,
            extra: Vec::new(),
            query_code: None,
        }
    }

    /// 400 with the given code.
    pub fn bad_request(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, code, message)
    }

    /// 400 `ValidationError` (query services) — the most common client error.
    pub fn validation(message: impl Into<String>) -> Self {
        Self::bad_request("ValidationError", message)
    }

    /// 400 `ValidationException` (JSON services).
    pub fn validation_exception(message: impl Into<String>) -> Self {
        Self::bad_request("ValidationException", message)
    }

    /// 404 with the given code.
    pub fn not_found(code: impl Into<String>, message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_FOUND, code, message)
    }

    /// 501: the operation exists in AWS but cumulo does not implement it. Names both so the user
    /// knows exactly what is missing.
    pub fn not_implemented(service: &str, operation: &str) -> Self {
        Self::new(
            StatusCode::NOT_IMPLEMENTED,
            "NotImplemented",
            format!("cumulo: the {service} operation {operation} is not implemented"),
        )
    }

    /// 500 for an internal failure (store error); the message says what failed.
    pub fn internal(message: impl Into<String>) -> Self {
        let mut e = Self::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalFailure",
            message,
        );
        e.sender_fault = false;
        e
    }

    pub fn with_extra(mut self, name: &str, value: &str) -> Self {
        self.extra.push((name.to_string(), value.to_string()));
        self
    }

    pub fn with_query_code(mut self, code: &str) -> Self {
        self.query_code = Some(code.to_string());
        self
    }

    /// The JSON and CBOR protocols' body: `__type` and, when there is one, `message` (AWS sends
    /// none for an error without one, as recorded against AWS: CloudWatch's ResourceNotFound).
    fn typed_body(&self) -> serde_json::Value {
        let mut body = serde_json::json!({"__type": self.code});
        if !self.message.is_empty() {
            body["message"] = serde_json::Value::String(self.message.clone());
        }
        body
    }

    /// Renders the error for the protocol, with the request id.
    pub fn into_response(self, protocol: Protocol, request_id: &str) -> AwsResponse {
        let mut resp = match protocol {
            Protocol::Query(ns) => {
                let mut w = XmlWriter::new();
                w.open("ErrorResponse", Some(ns)).open("Error", None);
                w.elem(
                    "Type",
                    if self.sender_fault {
                        "Sender"
                    } else {
                        "Receiver"
                    },
                );
                w.elem("Code", &self.code);
                if !self.message.is_empty() {
                    w.elem("Message", &self.message);
                }
                for (k, v) in &self.extra {
                    w.elem(k, v);
                }
                w.close().elem("RequestId", request_id);
                AwsResponse::new(self.status, "text/xml", w.finish())
            }
            Protocol::Ec2(_) => {
                let mut w = XmlWriter::new();
                w.open("Response", None)
                    .open("Errors", None)
                    .open("Error", None);
                w.elem("Code", &self.code).elem("Message", &self.message);
                w.close().close().elem("RequestID", request_id);
                AwsResponse::new(self.status, "text/xml", w.finish())
            }
            Protocol::Json10 | Protocol::Json11 => {
                let ct = if protocol == Protocol::Json10 {
                    "application/x-amz-json-1.0"
                } else {
                    "application/x-amz-json-1.1"
                };
                let mut r = AwsResponse::new(self.status, ct, self.typed_body().to_string());
                r.set_header("x-amzn-errortype", &self.code);
                if let Some(q) = &self.query_code {
                    let fault = if self.sender_fault {
                        "Sender"
                    } else {
                        "Receiver"
                    };
                    r.set_header("x-amzn-query-error", &format!("{q};{fault}"));
                }
                r
            }
            Protocol::RpcV2Cbor => {
                let mut r = AwsResponse::new(
                    self.status,
                    "application/cbor",
                    crate::cbor::encode(&self.typed_body()),
                );
                r.set_header("smithy-protocol", "rpc-v2-cbor");
                if let Some(q) = &self.query_code {
                    let fault = if self.sender_fault {
                        "Sender"
                    } else {
                        "Receiver"
                    };
                    r.set_header("x-amzn-query-error", &format!("{q};{fault}"));
                }
                r
            }
            Protocol::RestJson => {
                let mut body =
                    serde_json::json!({"message": self.message, "Message": self.message});
                // Fields the API's error shape adds (EFS: `ErrorCode`, `FileSystemId`).
                for (k, v) in &self.extra {
                    body[k.as_str()] = serde_json::Value::String(v.clone());
                }
                let mut r = AwsResponse::new(self.status, "application/json", body.to_string());
                r.set_header("x-amzn-errortype", &self.code);
                r
            }
            Protocol::RestXml => {
                let mut body = format!(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>{}</Code><Message>{}</Message>",
                    escape(&self.code),
                    escape(&self.message)
                );
                for (k, v) in &self.extra {
                    body.push_str(&format!("<{k}>{}</{k}>", escape(v)));
                }
                body.push_str(&format!(
                    "<RequestId>{}</RequestId></Error>",
                    escape(request_id)
                ));
                AwsResponse::new(self.status, "application/xml", body)
            }
        };
        resp.set_header("x-amzn-requestid", request_id);
        resp
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_error_shape() {
        let r = AwsError::validation("bad").into_response(
            Protocol::Query("http://sns.amazonaws.com/doc/2010-03-31/"),
            "rid",
        );
        let body = String::from_utf8(r.body.to_vec()).unwrap();
        assert_eq!(r.status, StatusCode::BAD_REQUEST);
        assert!(body.contains("<Type>Sender</Type><Code>ValidationError</Code><Message>bad</Message></Error><RequestId>rid</RequestId>"));
    }

    #[test]
    fn json_error_carries_query_code() {
        let r = AwsError::bad_request("QueueDoesNotExist", "nope")
            .with_query_code("AWS.SimpleQueueService.NonExistentQueue")
            .into_response(Protocol::Json10, "rid");
        assert_eq!(
            r.headers.get("x-amzn-query-error").unwrap(),
            "AWS.SimpleQueueService.NonExistentQueue;Sender"
        );
        let v: serde_json::Value = serde_json::from_slice(&r.body).unwrap();
        assert_eq!(v["__type"], "QueueDoesNotExist");
    }

    #[test]
    fn s3_error_has_extras() {
        let r = AwsError::not_found("NoSuchBucket", "The specified bucket does not exist")
            .with_extra("BucketName", "b")
            .into_response(Protocol::RestXml, "rid");
        let body = String::from_utf8(r.body.to_vec()).unwrap();
        assert!(body.contains("<BucketName>b</BucketName>"));
    }
}
