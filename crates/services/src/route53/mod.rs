//! Amazon Route 53 (rest-xml, global: signed for us-east-1, paths `/2013-04-01/...`): hosted
//! zones and their record sets.
//!
//! This first step holds the typed operations other services call in-process (Cloud Map's
//! namespaces create zones and write instance records); the HTTP API answers 501 naming each
//! operation until its wire decoding lands.
//!
//! Layout: typed operations in `ops` over `state` (zones in memory, each written through to the
//! store whole); `wire` decodes and encodes; `provider` holds the CloudFormation providers.

mod ops;
pub(crate) mod provider;
mod state;
mod wire;

pub use state::{HostedZone, RecordSet};

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::{GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsRequest, AwsResponse};
use state::Zones;
use std::sync::{Arc, Mutex, MutexGuard};

/// The Route 53 service. Global: one set of zones for every region.
pub struct Route53Service {
    store: Arc<Store>,
    zones: Mutex<Zones>,
}

impl Route53Service {
    pub fn new(store: Arc<Store>) -> Result<Self, StoreError> {
        store.migrate("route53", state::MIGRATIONS)?;
        let (zones, problems) = store.read(state::load)?;
        for p in problems {
            eprintln!("cumulo: route53: skipped unreadable stored record: {p}");
        }
        Ok(Route53Service {
            store,
            zones: Mutex::new(zones),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Zones> {
        self.zones.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Catalogued for Route53Service {
    const SERVICE: Descriptor = Descriptor {
        name: "route53",
        protocols: &[Wire::RestXml {
            paths: &["/2013-04-01/"],
        }],
        ..Descriptor::BASE
    };
    type Deps = ();

    fn build(context: &Context, (): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone())?)
    }
}

#[async_trait::async_trait]
impl Service for Route53Service {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
