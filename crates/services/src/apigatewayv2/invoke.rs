use crate::apigateway::ApiGatewayService;
use crate::apigateway::invoke::message;
use cumulo_wire::{AwsRequest, AwsResponse};

pub(crate) async fn handle(
    _svc: &ApiGatewayService,
    _req: &AwsRequest,
    _region: &str,
    _api_id: &str,
    _below: &str,
) -> AwsResponse {
    message(404, "Not Found")
}
