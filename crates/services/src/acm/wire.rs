//! The JSON 1.1 API. Until each operation's decoding lands it answers 501 naming it.

use super::AcmService;
use crate::json_body;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};

pub fn handle(_svc: &AcmService, req: &AwsRequest) -> AwsResponse {
    let op = req.target_operation().unwrap_or("");
    json_body::respond(req, Err(AwsError::not_implemented("acm", op)))
}
