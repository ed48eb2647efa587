//! AWS Cloud Map (awsJson1_1, `Route53AutoNaming_v20170314.<Operation>`): HTTP, private DNS
//! and public DNS namespaces created as operations that complete (GetOperation reaches
//! SUCCESS), services with their DNS and health-check configuration, instances (registered by
//! hand or by ECS for a service's tasks), DiscoverInstances and tags.
//!
//! A DNS namespace is a Route 53 hosted zone (private in the namespace's VPC, or public) made
//! and deleted with it through Route 53's typed operations, and a DNS service's instances
//! have their A/AAAA/CNAME/SRV records upserted there (`dns`), as `aws route53` shows on AWS.
//!
//! Layout: `state` (records per region, written through to the store), `ops` (typed
//! operations answering in the API's shape), `dns` (the zone and its records), `wire`.

mod dns;
mod operations;
mod ops;
pub(crate) mod provider;
mod state;
mod wire;

pub use ops::{NamespaceInput, ServiceInput};

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::regional::Regional;
use crate::route53::Route53Service;
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use state::Region;
use std::sync::Arc;

/// The Cloud Map service.
pub struct ServiceDiscoveryService {
    regions: Regional<Region>,
    account_id: String,
    /// Where DNS namespaces keep their zones (none: a namespace reports a made-up zone id).
    route53: Option<Arc<Route53Service>>,
}

impl ServiceDiscoveryService {
    pub fn new(store: Arc<Store>, config: &Config) -> Result<Self, StoreError> {
        let regions = Regional::open(store, "servicediscovery", state::MIGRATIONS, state::TABLE)?;
        Ok(ServiceDiscoveryService {
            regions,
            account_id: config.account_id.clone(),
            route53: None,
        })
    }

    /// The service whose DNS namespaces are Route 53 zones.
    pub fn with_route53(mut self, route53: Arc<Route53Service>) -> Self {
        self.route53 = Some(route53);
        self
    }

    /// Runs `f`, with the time, over a copy of the region and commits the records it touched.
    fn mutate<T>(
        &self,
        region: &str,
        f: impl FnOnce(&mut Region, f64) -> Result<T, AwsError>,
    ) -> Result<T, AwsError> {
        self.regions.mutate(region, |r| f(r, ops::now_s()))
    }

    fn read<T>(&self, region: &str, f: impl FnOnce(&Region, f64) -> T) -> T {
        self.regions.read(region, |r| f(r, ops::now_s()))
    }

    pub fn namespace_arn(&self, region: &str, id: &str) -> String {
        format!(
            "arn:aws:servicediscovery:{region}:{}:namespace/{id}",
            self.account_id
        )
    }

    pub fn service_arn(&self, region: &str, id: &str) -> String {
        format!(
            "arn:aws:servicediscovery:{region}:{}:service/{id}",
            self.account_id
        )
    }
}

impl Catalogued for ServiceDiscoveryService {
    const SERVICE: Descriptor = Descriptor {
        name: "servicediscovery",
        protocols: &[Wire::Json11 {
            target_prefix: "Route53AutoNaming_v20170314",
        }],
        ..Descriptor::BASE
    };
    type Deps = (Arc<Route53Service>,);

    fn build(context: &Context, (route53,): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config)?.with_route53(route53))
    }
}

#[async_trait::async_trait]
impl Service for ServiceDiscoveryService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
