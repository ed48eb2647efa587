//! STS: temporary credentials and the caller's identity (query protocol, API 2011-06-15).
//!
//! Issued credentials are kept in memory and written through to `sts_credentials`, so a caller
//! holding keys from `AssumeRole` is still recognised by `GetCallerIdentity` after a restart.
//! `AssumeRole` asks IAM (through its typed operations) whether the role exists, as AWS refuses
//! a role that does not; trust policies are not evaluated.

mod ops;
mod state;
mod wire;

pub use ops::{
    AssumeRoleInput, AssumedRoleUser, CallerIdentity, Credentials, FederatedUser, IssuedCredentials,
};

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::iam::IamService;
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsRequest, AwsResponse};
use state::CredentialStore;
use std::sync::Arc;

/// The STS service: typed operations in [`ops`], the query adapter in [`wire`].
pub struct StsService {
    creds: CredentialStore,
    account_id: String,
    iam: Arc<IamService>,
}

impl StsService {
    pub fn new(
        store: Arc<Store>,
        config: &Config,
        iam: Arc<IamService>,
    ) -> Result<Self, StoreError> {
        Ok(StsService {
            creds: CredentialStore::open(store)?,
            account_id: config.account_id.clone(),
            iam,
        })
    }
}

impl Catalogued for StsService {
    const SERVICE: Descriptor = Descriptor {
        name: "sts",
        protocols: &[Wire::Query {
            version: "2011-06-15",
            namespace: wire::NS,
        }],
        ..Descriptor::BASE
    };
    type Deps = (Arc<IamService>,);

    fn build(context: &Context, (iam,): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config, iam)?)
    }
}

#[async_trait::async_trait]
impl Service for StsService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
