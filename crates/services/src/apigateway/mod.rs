//! Amazon API Gateway (rest-json, signing name `apigateway`): REST APIs (v1, `/restapis`,
//! `/apikeys`, `/usageplans`, `/domainnames`, `/tags`, `/account`) and, through
//! [`crate::apigatewayv2`], HTTP and WebSocket APIs (v2, `/v2/...`), which AWS signs with the
//! same name and so reach cumulo as one service.
//!
//! Both control planes keep their records as documents in the API's own member names (what Get
//! answers), so the wire adapter, OpenAPI import and the CloudFormation providers all speak one
//! shape. The data plane (`invoke`) answers every deployed stage at
//! `http://<api-id>.execute-api.localhost:4566/<stage>/<path>` and
//! `http://localhost:4566/_aws/execute-api/<api-id>/<stage>/<path>`, serving the deployment's
//! snapshot, and runs Lambda integrations through Lambda's typed `invoke`.
//!
//! Layout: `state` (records per region, written through to the store), `patch` (the
//! PATCH operations every Update* takes), `ops` (typed control-plane operations), `openapi`
//! (import and export), `wire` (routes the REST paths), `invoke` (the data plane), `vtl`
//! (mapping templates), `provider`.

pub(crate) mod ids;
pub(crate) mod invoke;
pub(crate) mod openapi;
pub(crate) use openapi::parse as openapi_parse;
pub(crate) mod ops;
pub(crate) mod patch;
pub(crate) mod provider;
pub(crate) mod records;
pub(crate) mod state;
pub(crate) mod vtl;
pub(crate) mod wire;

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::lambda::LambdaService;
use crate::regional::Regional;
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use state::Region;
use std::sync::Arc;

/// Where the data plane is reached without a `<api-id>.execute-api.` host (LocalStack's form).
pub const EXECUTE_API_PATH: &str = "/_aws/execute-api/";

/// The API Gateway service (v1 and v2).
pub struct ApiGatewayService {
    regions: Regional<Region>,
    pub(crate) account_id: String,
    pub(crate) lambda: Arc<LambdaService>,
    /// Lambda authorizer answers by (authorizer id, identity), with their expiry.
    pub(crate) auth_cache: invoke::AuthCache,
    /// WebSocket APIs' open connections (process state: a restart closes them).
    pub(crate) connections: crate::apigatewayv2::connections::Connections,
    /// Where AWS integrations find the service their URI names (`invoke::service`), reached
    /// at call time: building every service an API might name would defeat lazy start.
    catalog: std::sync::Weak<crate::catalog::Catalog>,
}

impl ApiGatewayService {
    pub fn new(
        store: Arc<Store>,
        config: &Config,
        lambda: Arc<LambdaService>,
    ) -> Result<Self, StoreError> {
        let regions = Regional::open(store, "apigateway", state::MIGRATIONS, state::TABLE)?;
        Ok(ApiGatewayService {
            regions,
            account_id: config.account_id.clone(),
            lambda,
            auth_cache: invoke::AuthCache::default(),
            connections: Default::default(),
            catalog: std::sync::Weak::new(),
        })
    }

    /// The catalog this service was built in; `None` outside one (unit tests).
    pub(crate) fn catalog(&self) -> Option<std::sync::Arc<crate::catalog::Catalog>> {
        self.catalog.upgrade()
    }

    /// Runs `f` over a copy of the region and commits the records it touched; an error leaves
    /// the region as it was.
    pub(crate) fn mutate<T>(
        &self,
        region: &str,
        f: impl FnOnce(&mut Region) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        self.regions.mutate(region, f)
    }

    pub(crate) fn read<T>(&self, region: &str, f: impl FnOnce(&Region) -> T) -> T {
        self.regions.read(region, f)
    }

    /// An upgrade request to the data plane (`/_aws/execute-api/<api-id>/<stage>`): `None` when
    /// it is not for a WebSocket API (it is then served as plain HTTP, as AWS serves REST and
    /// HTTP APIs), else `$connect`'s decision.
    pub async fn websocket(
        self: Arc<Self>,
        req: &AwsRequest,
    ) -> Option<crate::apigatewayv2::websocket::Upgrade> {
        let rest = req.raw_path.strip_prefix(EXECUTE_API_PATH)?;
        let (api_id, below) = rest.split_once('/').unwrap_or((rest, ""));
        let region = self.region_of_api(api_id)?;
        let (websocket, disabled) = self.read(&region, |r| {
            r.v2_apis.get(api_id).map_or((false, false), |a| {
                (
                    a.doc["protocolType"] == "WEBSOCKET",
                    a.doc["disableExecuteApiEndpoint"] == true,
                )
            })
        });
        if !websocket {
            return None;
        }
        if disabled {
            return Some(Err(invoke::message(403, "Forbidden")));
        }
        let stage = below.trim_end_matches('/');
        let port = req.host.rsplit_once(':').map_or("4566", |(_, p)| p);
        let domain = format!("{api_id}.execute-api.localhost:{port}");
        Some(
            crate::apigatewayv2::websocket::connect(
                self.clone(),
                req,
                &region,
                api_id,
                stage,
                domain,
            )
            .await,
        )
    }

    /// The region holding an API of this id (v1 or v2): the data plane's URL names no region.
    pub(crate) fn region_of_api(&self, api_id: &str) -> Option<String> {
        let regions = self.regions.lock();
        regions
            .iter()
            .find(|(_, r)| r.rest_apis.contains_key(api_id) || r.v2_apis.contains_key(api_id))
            .map(|(name, _)| name.clone())
    }
}

impl Catalogued for ApiGatewayService {
    const SERVICE: Descriptor = Descriptor {
        name: "apigateway",
        protocols: &[Wire::RestJson {
            paths: &[
                "/restapis",
                "/apikeys",
                "/usageplans",
                "/domainnames",
                "/tags/",
                "/v2/apis",
                "/v2/domainnames",
                "/v2/tags/",
                EXECUTE_API_PATH,
            ],
        }],
        ..Descriptor::BASE
    };
    type Deps = (Arc<LambdaService>,);

    fn build(context: &Context, (lambda,): Self::Deps) -> Result<Self, GatewayError> {
        let mut svc = Self::new(context.store.clone(), &context.config, lambda)?;
        svc.catalog = context.catalog.clone();
        Ok(svc)
    }
}

#[async_trait::async_trait]
impl Service for ApiGatewayService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        if req.raw_path.starts_with(EXECUTE_API_PATH) {
            return invoke::handle(self, req).await;
        }
        if req.raw_path.starts_with("/v2/") {
            return crate::apigatewayv2::wire::handle(self, &req);
        }
        wire::handle(self, &req)
    }
}
