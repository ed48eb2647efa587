use crate::apigateway::ApiGatewayService;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};

pub(crate) fn handle(_svc: &ApiGatewayService, req: &AwsRequest) -> AwsResponse {
    AwsError::not_implemented("apigateway", "v2").into_response(Protocol::RestJson, &req.request_id)
}
