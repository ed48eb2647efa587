//! Secrets Manager (awsJson1_1, `secretsmanager.<Operation>`).
//!
//! Layout: [`ops`] has the typed operations (what CloudFormation's providers and dynamic
//! references call), [`state`] the secrets and their persistence, `sealed` the envelope
//! encryption of every value through the emulated KMS (the store never holds a value in clear),
//! [`password`] GetRandomPassword, `wire` the JSON adapter, [`provider`] the resource types.
//!
//! [`replication`] makes replicas as real secrets in other regions of the local account.
//! Rotation (RotateSecret, CancelRotateSecret) answers 501: it needs a rotation Lambda's
//! four-step protocol, which cumulo does not drive.

pub mod ops;
pub mod password;
pub(crate) mod provider;
pub mod replication;
mod sealed;
pub mod state;
#[cfg(test)]
mod tests;
mod wire;

pub use ops::{CreateSecretInput, ListFilter, SecretValue, SecretValueInput};

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::kms::KmsService;
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsRequest, AwsResponse};
use state::Secret;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

pub struct SecretsManagerService {
    store: Arc<Store>,
    kms: Arc<KmsService>,
    account_id: String,
    /// Region → secret name → secret.
    secrets: Mutex<HashMap<String, BTreeMap<String, Secret>>>,
}

impl SecretsManagerService {
    pub fn new(
        store: Arc<Store>,
        config: &Config,
        kms: Arc<KmsService>,
    ) -> Result<Self, StoreError> {
        store.migrate("secretsmanager", state::MIGRATIONS)?;
        let (loaded, problems) = store.read(state::load)?;
        for p in problems {
            eprintln!("cumulo: secretsmanager: skipped unreadable stored record: {p}");
        }
        let mut secrets: HashMap<String, BTreeMap<String, Secret>> = HashMap::new();
        for (region, s) in loaded {
            secrets.entry(region).or_default().insert(s.name.clone(), s);
        }
        Ok(SecretsManagerService {
            store,
            kms,
            account_id: config.account_id.clone(),
            secrets: Mutex::new(secrets),
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, BTreeMap<String, Secret>>> {
        // State changes only after its commit, so a poisoned lock holds nothing half-applied.
        self.secrets.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Catalogued for SecretsManagerService {
    const SERVICE: Descriptor = Descriptor {
        name: "secretsmanager",
        protocols: &[Wire::Json11 {
            target_prefix: "secretsmanager",
        }],
        ..Descriptor::BASE
    };
    type Deps = (Arc<KmsService>,);

    fn build(context: &Context, (kms,): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config, kms)?)
    }
}

#[async_trait::async_trait]
impl Service for SecretsManagerService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
