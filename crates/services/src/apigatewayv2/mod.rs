//! API Gateway v2 (HTTP and WebSocket APIs, rest-json `apigatewayv2/2018-11-29`): served by
//! [`crate::apigateway::ApiGatewayService`], since AWS signs both versions as `apigateway`.

pub(crate) mod invoke;
pub(crate) mod wire;
