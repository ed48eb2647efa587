//! Services built on their first request rather than at startup.
//!
//! Most processes use a few of the services (a test suite for one queue touches SQS only), and
//! building one means running its migrations, loading its state and, for CloudFormation, the
//! provider registry and the engine: code and memory an idle or single-service process never
//! needs. Deferring it keeps `cumulo serve`'s startup and idle footprint to the gateway's own
//! (bench/README.md). The health report says `available` for a service not built yet and
//! `running` for one that is, as LocalStack's does.

use super::{GatewayError, infer_protocol};
use crate::Service;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use http::StatusCode;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

type Build<S> = Box<dyn Fn() -> Result<S, GatewayError> + Send + Sync>;

/// One service, built once by `build` on first use. Shared (as `Arc<Lazy<S>>`) by the gateway
/// and by every service that calls it in-process (SNS delivers to SQS, CloudFormation's providers
/// reach all of them), so there is only ever one instance and whoever needs it first builds it.
pub struct Lazy<S> {
    name: &'static str,
    cell: OnceLock<Arc<S>>,
    /// Held while building, so two first requests build once; a failed build (the store refused
    /// a migration, say) is not remembered and the next request tries again.
    building: Mutex<()>,
    build: Build<S>,
}

impl<S> Lazy<S> {
    pub fn new(
        name: &'static str,
        build: impl Fn() -> Result<S, GatewayError> + Send + Sync + 'static,
    ) -> Arc<Self> {
        Arc::new(Lazy {
            name,
            cell: OnceLock::new(),
            building: Mutex::new(()),
            build: Box::new(build),
        })
    }

    /// The service, built now if this is its first use.
    pub fn get(&self) -> Result<Arc<S>, GatewayError> {
        if let Some(s) = self.cell.get() {
            return Ok(s.clone());
        }
        let _building = self.building.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(s) = self.cell.get() {
            return Ok(s.clone());
        }
        let s = Arc::new((self.build)()?);
        Ok(self.cell.get_or_init(|| s).clone())
    }
}

#[async_trait::async_trait]
impl<S: Service + 'static> Service for Lazy<S> {
    fn name(&self) -> &'static str {
        self.name
    }

    /// The built service's, so an override there is honoured; building it just to render an
    /// error is acceptable (errors the gateway raises are rare), and a service that cannot be
    /// built falls back to the inferred protocol.
    fn protocol(&self, req: &AwsRequest) -> Protocol {
        match self.get() {
            Ok(s) => s.protocol(req),
            Err(_) => infer_protocol(self.name, req),
        }
    }

    fn started(&self) -> bool {
        self.cell.get().is_some()
    }

    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        match self.get() {
            Ok(s) => s.handle(req).await,
            Err(e) => AwsError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalFailure",
                format!("The {} service could not start: {e}", self.name),
            )
            .into_response(infer_protocol(self.name, &req), &req.request_id),
        }
    }
}
