//! Services built on their first request rather than at startup.
//!
//! Most processes use a few of the services (a test suite for one queue touches SQS only), and
//! building one means running its migrations, loading its state and, for CloudFormation, the
//! provider registry and the engine: code and memory an idle or single-service process never
//! needs. Deferring it keeps `cumulo serve`'s startup and idle footprint to the gateway's own
//! (bench/README.md). The health report says `available` for a service not built yet and
//! `running` for one that is, as LocalStack's does.

use super::GatewayError;
use crate::Service;
use crate::catalog::{Catalog, Listed};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use http::StatusCode;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// One service's slot in the [`Catalog`]: empty until its first use builds it. Every user of the
/// service (the gateway, the services that call it in-process, CloudFormation's providers) goes
/// through the one slot, so there is only ever one instance and whoever needs it first builds it.
pub struct Lazy<S> {
    cell: OnceLock<Arc<S>>,
    /// Held while building, so two first requests build once; a failed build (the store refused
    /// a migration, say) is not remembered and the next request tries again.
    building: Mutex<()>,
}

impl<S> Default for Lazy<S> {
    fn default() -> Self {
        Lazy {
            cell: OnceLock::new(),
            building: Mutex::new(()),
        }
    }
}

impl<S> Lazy<S> {
    /// The service, built now by `build` if this is its first use.
    pub fn get(
        &self,
        build: impl FnOnce() -> Result<S, GatewayError>,
    ) -> Result<Arc<S>, GatewayError> {
        if let Some(s) = self.cell.get() {
            return Ok(s.clone());
        }
        let _building = self.building.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(s) = self.cell.get() {
            return Ok(s.clone());
        }
        let s = Arc::new(build()?);
        Ok(self.cell.get_or_init(|| s).clone())
    }

    pub fn started(&self) -> bool {
        self.cell.get().is_some()
    }
}

/// What the gateway holds for a catalogued service: a handle that builds it on its first
/// request.
pub(crate) struct OnFirstUse<S> {
    catalog: Arc<Catalog>,
    service: PhantomData<fn() -> S>,
}

impl<S: Listed> OnFirstUse<S> {
    pub(crate) fn handle_in(catalog: &Arc<Catalog>) -> Arc<dyn Service> {
        Arc::new(OnFirstUse::<S> {
            catalog: catalog.clone(),
            service: PhantomData,
        })
    }
}

#[async_trait::async_trait]
impl<S: Listed> Service for OnFirstUse<S> {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        match self.catalog.get::<S>() {
            Ok(s) => s.handle(req).await,
            Err(e) => AwsError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "InternalFailure",
                format!("The {} service could not start: {e}", S::SERVICE.name),
            )
            .into_response(S::SERVICE.protocol_for(&req), &req.request_id),
        }
    }
}
