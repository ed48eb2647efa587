//! Encryption of SecureString values at rest: AES-256-GCM, a fresh nonce per value, the
//! parameter's region and name bound in as associated data (a blob copied onto another parameter
//! does not decrypt).
//!
//! The data key is kept in SSM's own table `ssm_keys` for now, so that plaintext never sits in the
//! store. The emulated KMS replaces it in a later issue: values will then be encrypted under the
//! KMS key named by the parameter's KeyId (default `alias/aws/ssm`). Until then a KeyId is
//! recorded and reported as given but not checked, and every value uses the local data key.

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_store::rusqlite::{self, OptionalExtension};
use cumulo_store::{Store, StoreError};
use cumulo_wire::AwsError;

const MIGRATIONS: &[&str] = &["CREATE TABLE ssm_keys (id INTEGER PRIMARY KEY, key BLOB NOT NULL);"];
const NONCE_LEN: usize = 12;

pub struct ValueCipher {
    cipher: Aes256Gcm,
}

impl ValueCipher {
    /// Loads the data key, creating it on first start.
    pub fn open(store: &Store) -> Result<Self, StoreError> {
        store.migrate("ssm_keys", MIGRATIONS)?;
        let key: Vec<u8> = store.write(|tx| {
            let existing: Option<Vec<u8>> = tx
                .query_row("SELECT key FROM ssm_keys WHERE id = 1", [], |r| r.get(0))
                .optional()?;
            match existing {
                Some(k) if k.len() == 32 => Ok(k),
                _ => {
                    let k = Aes256Gcm::generate_key(OsRng).to_vec();
                    tx.execute(
                        "INSERT OR REPLACE INTO ssm_keys(id, key) VALUES (1, ?1)",
                        rusqlite::params![k],
                    )?;
                    Ok(k)
                }
            }
        })?;
        Ok(ValueCipher {
            cipher: Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(&key)),
        })
    }

    /// Encrypts `plaintext` for the parameter `context` (region and name); returns base64 of
    /// nonce and ciphertext — also what GetParameter returns when not asked to decrypt.
    pub fn encrypt(&self, context: &str, plaintext: &str) -> Result<String, AwsError> {
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let ct = self
            .cipher
            .encrypt(
                &nonce,
                Payload {
                    msg: plaintext.as_bytes(),
                    aad: context.as_bytes(),
                },
            )
            .map_err(|_| AwsError::internal("ssm: encryption failed"))?;
        let mut blob = nonce.to_vec();
        blob.extend_from_slice(&ct);
        Ok(B64.encode(blob))
    }

    pub fn decrypt(&self, context: &str, blob: &str) -> Result<String, AwsError> {
        let corrupt = || AwsError::internal("ssm: stored SecureString value cannot be decrypted");
        let raw = B64.decode(blob).map_err(|_| corrupt())?;
        if raw.len() < NONCE_LEN {
            return Err(corrupt());
        }
        let (nonce, ct) = raw.split_at(NONCE_LEN);
        let pt = self
            .cipher
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: ct,
                    aad: context.as_bytes(),
                },
            )
            .map_err(|_| corrupt())?;
        String::from_utf8(pt).map_err(|_| corrupt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_binds_context() {
        let store = Store::in_memory().unwrap();
        let c = ValueCipher::open(&store).unwrap();
        let blob = c.encrypt("us-east-1/a", "s3cret").unwrap();
        assert!(!blob.contains("s3cret"));
        assert_eq!(c.decrypt("us-east-1/a", &blob).unwrap(), "s3cret");
        assert!(c.decrypt("us-east-1/b", &blob).is_err());
        // The key persists: a second open decrypts what the first encrypted.
        let again = ValueCipher::open(&store).unwrap();
        assert_eq!(again.decrypt("us-east-1/a", &blob).unwrap(), "s3cret");
    }
}
