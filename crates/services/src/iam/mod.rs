//! IAM: roles, users, groups, managed policies with versions, instance profiles and
//! service-linked roles (query protocol, API 2010-05-08).
//!
//! IAM is global: one state per account, whatever region a request is signed for. Policies
//! (trust, inline, managed, boundaries) are validated and stored exactly as given, and returned
//! URL-encoded as AWS returns them, but never evaluated: no request anywhere in cumulo is
//! allowed or denied by them (README, "differs from AWS").
//!
//! Layout: [`model`] the entities, [`state`] memory + write-through store, one file of typed
//! operations per entity kind ([`roles`], [`users`], [`groups`], [`policies`], [`profiles`],
//! [`principals`] for what roles, users and groups share), [`wire`]/[`encode`] the query
//! adapter, [`provider`] the CloudFormation resource types.

pub mod aws_managed;
mod encode;
mod groups;
pub mod model;
mod policies;
mod principals;
mod profiles;
pub mod provider;
mod roles;
mod state;
#[cfg(test)]
mod tests;
mod users;
mod validate;
mod wire;

pub use policies::{CreatePolicyInput, MAX_VERSIONS, Scope};
pub use principals::PrincipalKind;
pub use profiles::service_linked_role_name;
pub use roles::{CreateRoleInput, DEFAULT_MAX_SESSION};
pub use users::UserAccessKey;

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsRequest, AwsResponse};
use state::IamState;
use std::sync::Arc;

/// The IAM service: typed operations on `IamService` in the entity modules, the query adapter
/// in [`wire`].
pub struct IamService {
    state: IamState,
}

impl IamService {
    pub fn new(store: Arc<Store>, _config: &Config) -> Result<Self, StoreError> {
        Ok(IamService {
            state: IamState::open(store)?,
        })
    }
}

impl Catalogued for IamService {
    const SERVICE: Descriptor = Descriptor {
        name: "iam",
        protocols: &[Wire::Query {
            version: "2010-05-08",
            namespace: wire::NS,
        }],
        ..Descriptor::BASE
    };
    type Deps = ();

    fn build(context: &Context, (): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config)?)
    }
}

#[async_trait::async_trait]
impl Service for IamService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
