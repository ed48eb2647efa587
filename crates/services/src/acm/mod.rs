//! AWS Certificate Manager (awsJson1_1, `CertificateManager.<Operation>`): certificates per
//! region, with the resources using them (`InUseBy`).
//!
//! Requested certificates validate by DNS through Route 53 (see `ops`); imported ones are read
//! from their PEM (`pem`). Other services record their use of a certificate in-process (a load
//! balancer's HTTPS listener, a CloudFront distribution), which DeleteCertificate honours.
//!
//! Layout: typed operations in `ops` over `state` (certificates in memory per region, each
//! written through to the store whole); `wire` decodes and encodes; `provider` holds
//! AWS::CertificateManager::Certificate.

mod ops;
mod pem;
pub(crate) mod provider;
mod state;
mod wire;

pub use ops::CertificateRequest;
pub use state::Certificate;

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::route53::Route53Service;
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
    /// Where DNS validation looks for its CNAMEs (none: certificates stay pending).
    route53: Option<Arc<Route53Service>>,
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
            route53: None,
        })
    }

    /// The service validating DNS certificates against Route 53's zones.
    pub fn with_route53(mut self, route53: Arc<Route53Service>) -> Self {
        self.route53 = Some(route53);
        self
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
    type Deps = (Arc<Route53Service>,);

    fn build(context: &Context, (route53,): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config)?.with_route53(route53))
    }
}

#[async_trait::async_trait]
impl Service for AcmService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
