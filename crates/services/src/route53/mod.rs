//! Amazon Route 53 (rest-xml, global: signed for us-east-1, paths `/2013-04-01/...`): public and
//! private hosted zones (VPC associations checked against EC2), their record sets changed in
//! batches validated whole, health checks, changes (GetChange) and tags.
//!
//! No name server answers queries: a zone is the record the API reports, what CloudFormation
//! builds, what ACM's DNS validation looks in and where Cloud Map writes instance records.
//!
//! Layout: `names` (normalizing, validating and ordering DNS names), `ops` (zones and the typed
//! operations other services call), `records` (change batches and record listing), `health`
//! (health checks), over `state` (in memory, written through to the store). The wire side is
//! the model-driven rest-xml codec (`cumulo_wire::rest_xml_model` over `model.json`, written
//! by `scripts/gen-rest-xml-model.py` from botocore's model, every other operation listed by
//! route only so that it answers 501 naming itself), so `ops` works on JSON in the API's member
//! names; errors take Route 53's `<ErrorResponse>` shape.

mod health;
pub mod names;
mod ops;
pub(crate) mod provider;
mod records;
mod state;
mod wire;

pub use ops::{NewZone, RecordChange};
pub use state::{HostedZone, RecordSet};

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::ec2::Ec2Service;
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::rest_xml_model::RestXmlModel;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use state::State;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

static MODEL: LazyLock<Option<RestXmlModel>> =
    LazyLock::new(|| RestXmlModel::parse(include_str!("model.json")).ok());

/// The model (present unless the embedded file is unreadable, which a unit test rules out).
pub(crate) fn model() -> Result<&'static RestXmlModel, AwsError> {
    MODEL
        .as_ref()
        .ok_or_else(|| AwsError::internal("cumulo: the Route 53 model is unreadable"))
}

/// The Route 53 service. Global: one set of zones for every region.
pub struct Route53Service {
    store: Arc<Store>,
    state: Mutex<State>,
    account_id: String,
    ec2: Arc<Ec2Service>,
}

impl Route53Service {
    pub fn new(
        store: Arc<Store>,
        config: &Config,
        ec2: Arc<Ec2Service>,
    ) -> Result<Self, StoreError> {
        store.migrate("route53", state::MIGRATIONS)?;
        let (state, problems) = store.read(state::load)?;
        for p in problems {
            eprintln!("cumulo: route53: skipped unreadable stored record: {p}");
        }
        Ok(Route53Service {
            store,
            state: Mutex::new(state),
            account_id: config.account_id.clone(),
            ec2,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
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
    type Deps = (Arc<Ec2Service>,);

    fn build(context: &Context, (ec2,): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config, ec2)?)
    }
}

#[async_trait::async_trait]
impl Service for Route53Service {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_embedded_model_reads() {
        assert!(super::model().is_ok());
    }
}
