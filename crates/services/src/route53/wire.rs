//! The rest-xml API. Until each operation's decoding lands it answers 501 naming it.

use super::Route53Service;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};

pub fn handle(_svc: &Route53Service, req: &AwsRequest) -> AwsResponse {
    let op = format!("{} {}", req.method, req.raw_path);
    AwsError::not_implemented("route53", &op).into_response(Protocol::RestXml, &req.request_id)
}
