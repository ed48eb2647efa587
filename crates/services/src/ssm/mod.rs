//! SSM Parameter Store (awsJson1_1, `AmazonSSM.<Operation>`).
//!
//! Parameters live in memory per region, each with its full version history, and every change is
//! written through to `ssm_parameters` before the response. SecureString values are encrypted
//! through the emulated KMS before they reach either (see [`crypto`]).

mod crypto;
mod filters;
mod operations;
mod ops;
pub(crate) mod provider;
mod state;
mod validate;
mod wire;

pub use ops::{
    DescribeInput, GetByPathInput, LabelOutcome, Page, ParameterView, PutParameterInput,
    StringFilter,
};
pub use state::{Parameter, ParameterType, Tier, Version};

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsRequest, AwsResponse};
use std::sync::Arc;

/// The SSM service: typed operations in `ops`, the JSON adapter in `wire`.
pub struct SsmService {
    params: state::ParameterStore,
    cipher: crypto::ValueCipher,
    account_id: String,
}

impl SsmService {
    /// SecureStrings are encrypted through `kms` (see [`crypto`]).
    pub fn new(
        store: Arc<Store>,
        config: &Config,
        kms: Arc<crate::kms::KmsService>,
    ) -> Result<Self, StoreError> {
        let cipher = crypto::ValueCipher::open(&store, kms)?;
        Ok(SsmService {
            params: state::ParameterStore::open(store)?,
            cipher,
            account_id: config.account_id.clone(),
        })
    }
}

impl Catalogued for SsmService {
    const SERVICE: Descriptor = Descriptor {
        name: "ssm",
        protocols: &[Wire::Json11 {
            target_prefix: "AmazonSSM",
        }],
        ..Descriptor::BASE
    };
    type Deps = (Arc<crate::kms::KmsService>,);

    fn build(context: &Context, (kms,): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config, kms)?)
    }
}

#[async_trait::async_trait]
impl Service for SsmService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req).await
    }
}
