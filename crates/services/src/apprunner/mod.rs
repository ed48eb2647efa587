//! AWS App Runner (awsJson1_0, `AppRunner.<Operation>`): services with their ServiceUrl,
//! operations and custom domains, VPC connectors, VPC ingress connections, and the revisioned
//! auto scaling and observability configurations, with tags.
//!
//! What is not emulated: no container runs and no URL serves traffic. A service is a record whose
//! status moves OPERATION_IN_PROGRESS → RUNNING on a clock (`lifecycle`); its custom domains stay
//! PENDING_CERTIFICATE_DNS_VALIDATION (see `ops/domains.rs`).
//!
//! Layout: `state` (records per region by ARN, written through whole), `lifecycle` (statuses
//! derived from timestamps), `instance` (Cpu/Memory), `ops` (the operations, taking and
//! answering JSON in the API's member names, which the providers share), `wire` (dispatch).

mod instance;
mod lifecycle;
mod operations;
mod ops;
pub(crate) mod provider;
mod state;
mod wire;

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::ec2::Ec2Service;
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsRequest, AwsResponse};
use state::Regions;
use std::sync::{Arc, Mutex, MutexGuard};

/// The App Runner service.
pub struct AppRunnerService {
    store: Arc<Store>,
    regions: Mutex<Regions>,
    account_id: String,
    /// Subnets, security groups and VPCs are checked against EC2.
    ec2: Arc<Ec2Service>,
    /// Where custom domains' validation records are looked up (public zones).
    route53: Option<Arc<crate::route53::Route53Service>>,
}

impl AppRunnerService {
    pub fn new(
        store: Arc<Store>,
        config: &Config,
        ec2: Arc<Ec2Service>,
    ) -> Result<Self, StoreError> {
        store.migrate("apprunner", state::MIGRATIONS)?;
        let (regions, problems) = store.read(state::load)?;
        for p in problems {
            eprintln!("cumulo: apprunner: skipped unreadable stored record: {p}");
        }
        Ok(AppRunnerService {
            store,
            regions: Mutex::new(regions),
            account_id: config.account_id.clone(),
            ec2,
            route53: None,
        })
    }

    /// Custom domains become ACTIVE once their validation records are in cumulo's Route 53.
    pub fn with_route53(mut self, route53: Arc<crate::route53::Route53Service>) -> Self {
        self.route53 = Some(route53);
        self
    }

    fn lock(&self) -> MutexGuard<'_, Regions> {
        self.regions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `arn:aws:apprunner:<region>:<account>:<resource>`.
    pub(crate) fn arn(&self, region: &str, resource: &str) -> String {
        format!("arn:aws:apprunner:{region}:{}:{resource}", self.account_id)
    }
}

impl Catalogued for AppRunnerService {
    const SERVICE: Descriptor = Descriptor {
        name: "apprunner",
        protocols: &[Wire::Json10 {
            target_prefix: "AppRunner",
        }],
        ..Descriptor::BASE
    };
    type Deps = (Arc<Ec2Service>, Arc<crate::route53::Route53Service>);

    fn build(context: &Context, (ec2, route53): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config, ec2)?.with_route53(route53))
    }
}

#[async_trait::async_trait]
impl Service for AppRunnerService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
