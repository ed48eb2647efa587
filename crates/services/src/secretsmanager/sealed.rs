//! Envelope encryption of secret values, as Secrets Manager does it: a fresh 256-bit data key
//! from KMS GenerateDataKey (under the secret's key, with the encryption context
//! `{"SecretARN", "SecretVersionId"}`) seals the value with AES-256-GCM; only the data key's KMS
//! ciphertext is kept beside it. Values up to Secrets Manager's 64 KiB fit, where KMS Encrypt
//! alone takes 4 KiB.
//!
//! Layout (then base64): data-key blob length (u16, big endian), data-key blob, 12-byte nonce,
//! sealed value.

use crate::kms::KmsService;
use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_wire::AwsError;
use std::collections::BTreeMap;

fn context(arn: &str, version_id: &str) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("SecretARN".to_string(), arn.to_string()),
        ("SecretVersionId".to_string(), version_id.to_string()),
    ])
}

fn encryption_failure(e: AwsError) -> AwsError {
    AwsError::bad_request(
        "EncryptionFailure",
        format!(
            "Secrets Manager can't encrypt the protected secret text using the provided KMS key. Check that the KMS key is available, enabled, and not in an invalid state. ({}: {})",
            e.code, e.message
        ),
    )
}

fn decryption_failure(detail: &str) -> AwsError {
    AwsError::bad_request(
        "DecryptionFailure",
        format!(
            "Secrets Manager can't decrypt the protected secret text using the provided KMS key. ({detail})"
        ),
    )
}

/// Seals `value` for a version: `(base64 blob, key ARN)`.
pub fn seal(
    kms: &KmsService,
    region: &str,
    key_id: &str,
    arn: &str,
    version_id: &str,
    value: &[u8],
) -> Result<(String, String), AwsError> {
    let (data_key, dk_blob, key_arn) = kms
        .generate_data_key(region, key_id, 32, &context(arn, version_id))
        .map_err(encryption_failure)?;
    let cipher = Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(&data_key));
    let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
    let sealed = cipher
        .encrypt(&nonce, value)
        .map_err(|_| AwsError::internal("secretsmanager: encryption failed"))?;
    let len = u16::try_from(dk_blob.len())
        .map_err(|_| AwsError::internal("secretsmanager: data key blob too long"))?;
    let mut out = len.to_be_bytes().to_vec();
    out.extend(dk_blob);
    out.extend_from_slice(&nonce);
    out.extend(sealed);
    Ok((B64.encode(out), key_arn))
}

pub fn open(
    kms: &KmsService,
    region: &str,
    arn: &str,
    version_id: &str,
    blob: &str,
) -> Result<Vec<u8>, AwsError> {
    let raw = B64
        .decode(blob)
        .map_err(|_| decryption_failure("stored value is damaged"))?;
    let damaged = || decryption_failure("stored value is damaged");
    let len = u16::from_be_bytes([
        *raw.first().ok_or_else(damaged)?,
        *raw.get(1).ok_or_else(damaged)?,
    ]) as usize;
    let dk_blob = raw.get(2..2 + len).ok_or_else(damaged)?;
    let nonce = raw.get(2 + len..2 + len + 12).ok_or_else(damaged)?;
    let sealed = raw.get(2 + len + 12..).ok_or_else(damaged)?;
    let (data_key, _) = kms
        .decrypt(region, dk_blob, &context(arn, version_id), None)
        .map_err(|e| decryption_failure(&format!("{}: {}", e.code, e.message)))?;
    if data_key.len() != 32 {
        return Err(damaged());
    }
    let cipher = Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(&data_key));
    cipher
        .decrypt(Nonce::from_slice(nonce), sealed)
        .map_err(|_| damaged())
}
