//! KMS (awsJson1_1, `TrentService.<Operation>`): symmetric keys that really encrypt.
//!
//! Layout: [`ops`] has the typed operations (what Secrets Manager, SSM and the providers call),
//! [`cipher`] the ciphertext format, [`state`] the keys and aliases with their persistence,
//! the store's master key wraps key material at rest ([`cumulo_store::master`] says what
//! protects what), `wire` the JSON adapter and [`provider`] AWS::KMS::Key and AWS::KMS::Alias.
//!
//! Only symmetric `SYMMETRIC_DEFAULT` encryption keys are emulated; asymmetric, HMAC and
//! imported/external keys, grants and custom key stores answer 501. Rotation is a flag: its
//! status and period are kept and reported, but key material is never rotated.

pub(crate) mod cipher;
pub(crate) mod json;
pub mod ops;
pub(crate) mod provider;
pub mod state;
#[cfg(test)]
mod tests;
mod wire;

pub use ops::{CreateKeyInput, KeyView};

/// DescribeKey's `KeyMetadata` for a key, for readers outside the wire (the console) that show
/// what the AWS API reports.
pub fn key_metadata(view: &KeyView) -> serde_json::Value {
    wire::key_metadata(view)
}

use crate::catalog::{Catalogued, Context, Descriptor, Wire};
use crate::{Config, GatewayError, Service};
use cumulo_store::{Store, StoreError};
use cumulo_wire::{AwsRequest, AwsResponse};
use state::{Key, Region};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

pub struct KmsService {
    store: Arc<Store>,
    account_id: String,
    /// Region → keys and aliases. One lock: every critical section is short (no awaiting).
    regions: Mutex<HashMap<String, Region>>,
}

impl KmsService {
    pub fn new(store: Arc<Store>, config: &Config) -> Result<Self, StoreError> {
        store.migrate("kms", state::MIGRATIONS)?;
        let ((keys, aliases), mut problems) = store.read(state::load)?;
        let mut regions: HashMap<String, Region> = HashMap::new();
        for (region, record, wrapped) in keys {
            match store.master_key().unwrap(&record.arn, &wrapped) {
                Some(material) => {
                    regions
                        .entry(region)
                        .or_default()
                        .keys
                        .insert(record.key_id.clone(), Key { record, material });
                }
                None => problems.push(format!(
                    "key {}: its material does not unwrap with this data directory's {}",
                    record.arn,
                    cumulo_store::master::MASTER_KEY_FILE
                )),
            }
        }
        for (region, alias) in aliases {
            regions
                .entry(region)
                .or_default()
                .aliases
                .insert(alias.name.clone(), alias);
        }
        for p in problems {
            eprintln!("cumulo: kms: skipped unreadable stored record: {p}");
        }
        Ok(KmsService {
            store,
            account_id: config.account_id.clone(),
            regions: Mutex::new(regions),
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Region>> {
        // State changes only after its commit succeeded, so a poisoned lock holds nothing
        // half-applied.
        self.regions.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Catalogued for KmsService {
    const SERVICE: Descriptor = Descriptor {
        name: "kms",
        protocols: &[Wire::Json11 {
            target_prefix: "TrentService",
        }],
        ..Descriptor::BASE
    };
    type Deps = ();

    fn build(context: &Context, (): Self::Deps) -> Result<Self, GatewayError> {
        Ok(Self::new(context.store.clone(), &context.config)?)
    }
}

#[async_trait::async_trait]
impl Service for KmsService {
    async fn handle(&self, req: AwsRequest) -> AwsResponse {
        wire::handle(self, &req)
    }
}
