//! AWS Certificate Manager (awsJson1_1, `CertificateManager.<Operation>`): certificates per
//! region, with the resources using them (`InUseBy`).
//!
//! This first step holds the typed in-use tracking other services call in-process (a load
//! balancer's HTTPS listener, a CloudFront distribution); the HTTP API answers 501 naming each
//! operation until its wire decoding lands.
//!
//! Layout: typed operations in `ops` over `state` (certificates in memory per region, each
//! written through to the store whole); `wire` decodes and encodes.

mod ops;
pub(crate) mod provider;
mod state;
mod wire;

pub use state::Certificate;

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsRequest, AwsResponse};
use state::Regions;
use std::sync::{Arc, Mutex, MutexGuard};

/// The ACM service.
pub struct AcmService {
    store: Arc<Store>,
    regions: Mutex<Regions>,
    account_id: String,
}

impl AcmService {
    pub fn new(store: Arc<Store>, config: &Config) -> Result<Self, StoreError> {
        store.migrate("acm", state::MIGRATIONS)?;
        let (regions, problems) = store.read(state::load)?;
        for p in problems {
            eprintln!("cumulo: acm: skipped unreadable stored record: {p}");
        }
        Ok(AcmService {
            store,
            regions: Mutex::new(regions),
            account_id: config.account_id.clone(),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Regions> {
        self.regions.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn certificate_arn(&self, region: &str, id: &str) -> String {
        format!("arn:aws:acm:{region}:{}:certificate/{id}", self.account_id)
    }
}

impl Catalogued for AcmService {
    const SERVICE: Descriptor = Descriptor {
        name: "acm",
        protocols: &[Wire::Json11 {
            target_prefix: "CertificateManager",
        }],
        ..Descriptor::BASE
    };
    type Deps = ();

    fn build(context: &Context, (): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config)?)
    }
}

#[async_trait::async_trait]
impl Service for AcmService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
