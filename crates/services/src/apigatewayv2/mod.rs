//! API Gateway v2 (HTTP and WebSocket APIs, rest-json `apigatewayv2/2018-11-29`, paths under
//! `/v2/`): served by [`crate::apigateway::ApiGatewayService`], since AWS signs both versions
//! as `apigateway`, and stored beside the REST APIs in its records.
//!
//! `ops` are the typed control-plane operations (APIs with quick create, routes, integrations,
//! stages with auto-deploy, deployments, authorizers, domain names and API mappings, tags),
//! `wire` routes the REST paths, `invoke` is the HTTP APIs' data plane, `websocket` the
//! WebSocket APIs' (upgrades, routes, Lambda proxy events), `integration` their routes'
//! integrations of every type (Lambda proxy, HTTP_PROXY, and MOCK, HTTP and AWS through
//! templates and integration responses), `selection` their selection expressions, and
//! `connections` their open connections and the @connections management API.

pub(crate) mod connections;
pub(crate) mod integration;
pub(crate) mod invoke;
pub(crate) mod openapi_auth;
pub(crate) mod ops;
pub(crate) mod provider;
pub(crate) mod selection;
pub mod websocket;
pub(crate) mod wire;
