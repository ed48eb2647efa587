//! The ciphertext blob: what Encrypt returns and Decrypt takes.
//!
//! Layout: a format byte, the 36-character key id, a 12-byte nonce, then AES-256-GCM output
//! (ciphertext and 16-byte tag). Carrying the key id is what lets Decrypt work without a KeyId,
//! as AWS's blobs do. The associated data binds the key's ARN and the encryption context
//! (sorted, so the caller's member order does not matter): decrypting with any other context,
//! or under another key, fails the tag check.

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use std::collections::BTreeMap;

const FORMAT: u8 = 1;
const KEY_ID_LEN: usize = 36;
const NONCE_LEN: usize = 12;

/// AAD for a key and an encryption context.
fn aad(arn: &str, context: &BTreeMap<String, String>) -> Vec<u8> {
    let mut out = arn.as_bytes().to_vec();
    out.push(0);
    out.extend(serde_json::to_vec(context).unwrap_or_default());
    out
}

pub fn seal(
    key_id: &str,
    arn: &str,
    material: &[u8],
    plaintext: &[u8],
    context: &BTreeMap<String, String>,
) -> Vec<u8> {
    let cipher = Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(material));
    let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
    let aad = aad(arn, context);
    // Encryption fails only for inputs beyond 64 GiB; KMS plaintexts are at most 4 KiB.
    let sealed = cipher
        .encrypt(
            &nonce,
            Payload {
                msg: plaintext,
                aad: &aad,
            },
        )
        .unwrap_or_default();
    let mut out = Vec::with_capacity(1 + KEY_ID_LEN + NONCE_LEN + sealed.len());
    out.push(FORMAT);
    out.extend_from_slice(key_id.as_bytes());
    out.extend_from_slice(&nonce);
    out.extend(sealed);
    out
}

/// The key id a blob names, if it is one of ours.
pub fn key_id_of(blob: &[u8]) -> Option<&str> {
    if blob.len() < 1 + KEY_ID_LEN + NONCE_LEN + 16 || blob.first() != Some(&FORMAT) {
        return None;
    }
    std::str::from_utf8(blob.get(1..1 + KEY_ID_LEN)?).ok()
}

/// The plaintext, or `None` when the blob, key or context does not match.
pub fn open(
    arn: &str,
    material: &[u8],
    blob: &[u8],
    context: &BTreeMap<String, String>,
) -> Option<Vec<u8>> {
    key_id_of(blob)?;
    let rest = blob.get(1 + KEY_ID_LEN..)?;
    let (nonce, sealed) = rest.split_at(NONCE_LEN);
    let cipher = Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(material));
    cipher
        .decrypt(
            Nonce::from_slice(nonce),
            Payload {
                msg: sealed,
                aad: &aad(arn, context),
            },
        )
        .ok()
}
