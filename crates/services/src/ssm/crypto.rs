//! Encryption of SecureString values at rest, through the emulated KMS, as AWS does: each value
//! is encrypted under the parameter's KeyId (default `alias/aws/ssm`, created on first use) with
//! the encryption context `{"PARAMETER_ARN": <arn>}`. The stored value is the base64 of KMS's
//! ciphertext blob, which is also what GetParameter returns without WithDecryption. So the store
//! holds no plaintext, and a disabled or deleted key makes the value undecryptable, as on AWS.
//!
//! Data directories written before SSM used KMS hold values sealed with a data key in
//! `ssm_keys` (no longer created); those still decrypt with it, and are re-encrypted under KMS
//! when the parameter is next written.

use crate::kms::KmsService;
use aes_gcm::aead::{Aead, KeyInit, Payload};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_store::rusqlite::OptionalExtension;
use cumulo_store::{Store, StoreError};
use cumulo_wire::AwsError;
use std::collections::BTreeMap;
use std::sync::Arc;

const NONCE_LEN: usize = 12;

pub struct ValueCipher {
    kms: Arc<KmsService>,
    /// The pre-KMS data key, when this data directory has one.
    legacy: Option<Aes256Gcm>,
}

fn context(arn: &str) -> BTreeMap<String, String> {
    BTreeMap::from([("PARAMETER_ARN".to_string(), arn.to_string())])
}

impl ValueCipher {
    pub fn open(store: &Store, kms: Arc<KmsService>) -> Result<Self, StoreError> {
        let legacy: Option<Vec<u8>> = store.read(|c| {
            let has_table: Option<String> = c
                .query_row(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'ssm_keys'",
                    [],
                    |r| r.get(0),
                )
                .optional()?;
            match has_table {
                Some(_) => c
                    .query_row("SELECT key FROM ssm_keys WHERE id = 1", [], |r| r.get(0))
                    .optional(),
                None => Ok(None),
            }
        })?;
        Ok(ValueCipher {
            kms,
            legacy: legacy
                .filter(|k| k.len() == 32)
                .map(|k| Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(&k))),
        })
    }

    /// Encrypts `plaintext` for the parameter `arn` under `key_id`; returns the base64 blob.
    pub fn encrypt(
        &self,
        region: &str,
        arn: &str,
        key_id: &str,
        plaintext: &str,
    ) -> Result<String, AwsError> {
        let (blob, _) = self
            .kms
            .encrypt(region, key_id, plaintext.as_bytes(), &context(arn))
            .map_err(|e| {
                if e.code == "NotFoundException" {
                    AwsError::bad_request("InvalidKeyId", e.message)
                } else {
                    e
                }
            })?;
        Ok(B64.encode(blob))
    }

    /// The plaintext of a stored value. `legacy_context` is what pre-KMS values were bound to.
    pub fn decrypt(
        &self,
        region: &str,
        arn: &str,
        legacy_context: &str,
        blob: &str,
    ) -> Result<String, AwsError> {
        let corrupt = || AwsError::internal("ssm: stored SecureString value cannot be decrypted");
        let raw = B64.decode(blob).map_err(|_| corrupt())?;
        let plaintext = if crate::kms::cipher::key_id_of(&raw).is_some() {
            self.kms.decrypt(region, &raw, &context(arn), None)?.0
        } else {
            self.legacy_decrypt(legacy_context, &raw)
                .ok_or_else(corrupt)?
        };
        String::from_utf8(plaintext).map_err(|_| corrupt())
    }

    fn legacy_decrypt(&self, context: &str, raw: &[u8]) -> Option<Vec<u8>> {
        let cipher = self.legacy.as_ref()?;
        if raw.len() < NONCE_LEN {
            return None;
        }
        let (nonce, ct) = raw.split_at(NONCE_LEN);
        cipher
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: ct,
                    aad: context.as_bytes(),
                },
            )
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;

    #[test]
    fn round_trips_through_kms_and_binds_the_parameter() {
        let store = Arc::new(Store::in_memory().unwrap());
        let kms = Arc::new(KmsService::new(store.clone(), &Config::default()).unwrap());
        let c = ValueCipher::open(&store, kms.clone()).unwrap();
        let arn = "arn:aws:ssm:us-east-1:000000000000:parameter/a";
        let blob = c
            .encrypt("us-east-1", arn, "alias/aws/ssm", "s3cret")
            .unwrap();
        assert!(!blob.contains("s3cret"));
        assert_eq!(c.decrypt("us-east-1", arn, "", &blob).unwrap(), "s3cret");
        let other = "arn:aws:ssm:us-east-1:000000000000:parameter/b";
        assert!(c.decrypt("us-east-1", other, "", &blob).is_err());
        // The managed key now exists, as AWS creates it on first use.
        let key = kms.describe_key("us-east-1", "alias/aws/ssm").unwrap();
        assert!(key.arn().contains(":key/"));
        let e = c
            .encrypt("us-east-1", arn, "alias/missing", "x")
            .unwrap_err();
        assert_eq!(e.code, "InvalidKeyId");
    }
}
