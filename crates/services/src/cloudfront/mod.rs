//! Amazon CloudFront (rest-xml, `/2020-05-31/...`, global, signing name `cloudfront`):
//! distributions (InProgress → Deployed, `d<id>.cloudfront.net` domain names, ETag / If-Match
//! versioning, disable before delete), invalidations, origin access controls and identities,
//! cache / origin request / response headers policies (AWS's managed ones under their fixed
//! ids beside custom ones), CloudFront Functions (DEVELOPMENT and LIVE stages) and tags.
//!
//! No edge serves content: a distribution is the record the API reports, what CloudFormation
//! builds and what a migration inventory reads. A change is InProgress until the distribution's
//! next Get, which the `distribution_deployed` waiter polls.
//!
//! The wire side is the model-driven rest-xml codec (`cumulo_wire::rest_xml_model`, over
//! `model.json` written by `scripts/gen-rest-xml-model.py` from botocore's model): requests
//! arrive as JSON in the API's member names and answers leave as JSON, so `ops` is AWS's logic
//! over those values; `provider` turns CloudFormation's shapes (plain lists) into the API's
//! (`{Quantity, Items}`) through the same model.

mod managed;
mod ops;
pub(crate) mod provider;
mod state;
mod wire;

use crate::acm::AcmService;
use crate::catalog::{Catalogued, Context, Descriptor, Wire};
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
        .ok_or_else(|| AwsError::internal("cumulo: the CloudFront model is unreadable"))
}

/// The CloudFront service.
pub struct CloudFrontService {
    store: Arc<Store>,
    state: Mutex<State>,
    account_id: String,
    acm: Arc<AcmService>,
}

impl CloudFrontService {
    pub fn new(
        store: Arc<Store>,
        config: &Config,
        acm: Arc<AcmService>,
    ) -> Result<Self, StoreError> {
        store.migrate("cloudfront", state::MIGRATIONS)?;
        let (state, problems) = store.read(state::load)?;
        for p in problems {
            eprintln!("cumulo: cloudfront: skipped unreadable stored record: {p}");
        }
        Ok(CloudFrontService {
            store,
            state: Mutex::new(state),
            account_id: config.account_id.clone(),
            acm,
        })
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` over a copy of the state and commits what it touched; an error changes
    /// nothing.
    fn mutate<T>(&self, f: impl FnOnce(&mut State) -> Result<T, AwsError>) -> Result<T, AwsError> {
        let mut guard = self.lock();
        let mut s = guard.clone();
        s.dirty.clear();
        let out = f(&mut s)?;
        self.store
            .write(|tx| state::save_dirty(tx, &s))
            .map_err(|e| AwsError::internal(e.to_string()))?;
        s.dirty.clear();
        *guard = s;
        Ok(out)
    }

    fn read<T>(&self, f: impl FnOnce(&State) -> T) -> T {
        f(&self.lock())
    }

    pub fn distribution_arn(&self, id: &str) -> String {
        format!("arn:aws:cloudfront::{}:distribution/{id}", self.account_id)
    }

    pub fn function_arn(&self, name: &str) -> String {
        format!("arn:aws:cloudfront::{}:function/{name}", self.account_id)
    }
}

impl Catalogued for CloudFrontService {
    const SERVICE: Descriptor = Descriptor {
        name: "cloudfront",
        protocols: &[Wire::RestXml {
            paths: &["/2020-05-31/"],
        }],
        ..Descriptor::BASE
    };
    type Deps = (Arc<AcmService>,);

    fn build(context: &Context, (acm,): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config, acm)?)
    }
}

#[async_trait::async_trait]
impl Service for CloudFrontService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_embedded_model_reads() {
        assert!(super::MODEL.is_some());
    }
}
