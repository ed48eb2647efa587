//! The ResponseURL endpoint: pending requests by token, and the PUT that answers one.

use cumulo_wire::{AwsRequest, AwsResponse};
use http::{Method, StatusCode};
use md5::{Digest, Md5};
use serde_json::Value;
use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use tokio::sync::oneshot;

/// What a handler PUT: the parsed response, or why it could not be read.
pub type Answer = Result<Value, String>;

#[derive(Default)]
pub struct Responses {
    waiting: Mutex<HashMap<String, oneshot::Sender<Answer>>>,
    sent: Mutex<VecDeque<Sent>>,
}

/// One request CloudFormation sent a custom resource's handler: the record `cumulo migrate
/// rehearse` proves from that no Delete handler ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sent {
    /// `Create`, `Update` or `Delete`.
    pub request_type: String,
    pub stack_id: String,
    pub logical_id: String,
    pub resource_type: String,
    pub physical_id: Option<String>,
    pub service_token: String,
}

/// How many requests [`Responses::sent`] remembers (the oldest are forgotten first).
const SENT_KEPT: usize = 10_000;

impl Responses {
    /// Records a request as it is sent.
    pub fn record(&self, sent: Sent) {
        let mut log = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
        if log.len() == SENT_KEPT {
            log.pop_front();
        }
        log.push_back(sent);
    }

    /// The requests sent to handlers by this process, oldest first.
    pub fn sent(&self) -> Vec<Sent> {
        let log = self.sent.lock().unwrap_or_else(PoisonError::into_inner);
        log.iter().cloned().collect()
    }

    /// A fresh token and the receiver its response will arrive on.
    pub fn expect(&self) -> (String, oneshot::Receiver<Answer>) {
        let token = uuid::Uuid::new_v4().simple().to_string();
        let (tx, rx) = oneshot::channel();
        self.lock().insert(token.clone(), tx);
        (token, rx)
    }

    /// Forgets a token whose request is over (answered or given up on).
    pub fn forget(&self, token: &str) {
        self.lock().remove(token);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Answer>>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Answers a handler's PUT to its ResponseURL as S3 answers a presigned PUT: 200 with an
    /// ETag, or 403 once the URL is no longer valid (answered already, or never issued).
    pub fn accept(&self, req: &AwsRequest) -> AwsResponse {
        let token = req
            .raw_path
            .strip_prefix(super::RESPONSE_PATH)
            .unwrap_or_default()
            .trim_end_matches('/');
        if req.method != Method::PUT {
            return s3_error(
                StatusCode::METHOD_NOT_ALLOWED,
                "MethodNotAllowed",
                "The specified method is not allowed against this resource.",
                &req.request_id,
            );
        }
        let Some(tx) = self.lock().remove(token) else {
            return s3_error(
                StatusCode::FORBIDDEN,
                "AccessDenied",
                "Request has expired",
                &req.request_id,
            );
        };
        let answer = serde_json::from_slice::<Value>(&req.body)
            .map_err(|e| format!("the response is not valid JSON: {e}"));
        let _ = tx.send(answer);
        stored(req)
    }
}

/// The answer S3 gives a presigned PUT it stored: 200 with the body's ETag.
pub(crate) fn stored(req: &AwsRequest) -> AwsResponse {
    let etag = format!("\"{}\"", hex::encode(Md5::digest(&req.body)));
    AwsResponse::empty(StatusCode::OK)
        .with_header("etag", &etag)
        .with_header("x-amz-request-id", &req.request_id)
}

pub(crate) fn s3_error(
    status: StatusCode,
    code: &str,
    message: &str,
    request_id: &str,
) -> AwsResponse {
    cumulo_wire::AwsError::new(status, code, message)
        .into_response(cumulo_wire::Protocol::RestXml, request_id)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(token: &str, body: &str) -> AwsRequest {
        let mut req = AwsRequest::new(
            Method::PUT,
            &format!("{}{token}", super::super::RESPONSE_PATH),
        );
        req.body = bytes::Bytes::from(body.to_string());
        req
    }

    #[test]
    fn a_response_reaches_its_waiter_once() {
        let r = Responses::default();
        let (token, mut rx) = r.expect();
        assert_eq!(
            r.accept(&put(&token, r#"{"Status":"SUCCESS"}"#)).status,
            StatusCode::OK
        );
        assert_eq!(rx.try_recv().unwrap().unwrap()["Status"], "SUCCESS");
        // The URL is spent: a second PUT is refused as an expired presigned URL is.
        assert_eq!(r.accept(&put(&token, "{}")).status, StatusCode::FORBIDDEN);
    }

    #[test]
    fn unreadable_response_is_reported_to_the_waiter() {
        let r = Responses::default();
        let (token, mut rx) = r.expect();
        r.accept(&put(&token, "not json"));
        assert!(
            rx.try_recv()
                .unwrap()
                .unwrap_err()
                .contains("not valid JSON")
        );
    }
}
