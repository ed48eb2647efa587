//! A WaitConditionHandle's URL (`/_cumulo/cfn-signal/<token>`): the PUT `cfn-signal` or `curl`
//! sends to it, answered as S3 answers a presigned PUT once the engine has written the signal
//! down.

use crate::custom::responses::{s3_error, stored};
use cumulo_engine::{Engine, HANDLE_PATH, HandleRefusal, parse_handle_body};
use cumulo_wire::{AwsRequest, AwsResponse};
use http::{Method, StatusCode};

pub(super) async fn accept(engine: &Engine, req: &AwsRequest) -> AwsResponse {
    let id = &req.request_id;
    if req.method != Method::PUT {
        return s3_error(
            StatusCode::METHOD_NOT_ALLOWED,
            "MethodNotAllowed",
            "The specified method is not allowed against this resource.",
            id,
        );
    }
    let token = req
        .raw_path
        .strip_prefix(HANDLE_PATH)
        .unwrap_or_default()
        .trim_end_matches('/');
    let signalled = match parse_handle_body(&req.body) {
        Ok(signal) => engine.signal_handle(token, signal).await,
        Err(e) => Err(e),
    };
    match signalled {
        Ok(()) => stored(req),
        // A URL no live handle has is one whose presigned S3 URL would have expired.
        Err(HandleRefusal::Unknown) => s3_error(
            StatusCode::FORBIDDEN,
            "AccessDenied",
            "Request has expired",
            id,
        ),
        Err(HandleRefusal::Malformed(m)) => {
            s3_error(StatusCode::BAD_REQUEST, "InvalidArgument", &m, id)
        }
        Err(HandleRefusal::Failed(e)) => s3_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "InternalError",
            &e.message,
            id,
        ),
    }
}
