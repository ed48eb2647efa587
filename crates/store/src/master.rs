//! The data directory's master key: what seals, at rest, whatever must never sit on disk in
//! clear.
//!
//! What protects what:
//! - Each KMS key's 256-bit material is generated at CreateKey and stored in `kms_keys` only
//!   wrapped: AES-256-GCM under the master key, with the key's ARN as associated data (a wrapped
//!   blob moved onto another key row does not unwrap). Secret values and SecureStrings are
//!   encrypted under KMS keys, so under the master key at one remove.
//! - CloudFormation rows that carry a NoEcho parameter's value are sealed whole under the
//!   master key, bound to their stack's ARN.
//! - The master key is 32 random bytes in `<data-dir>/master.key`, created with mode 0600 on the
//!   first start and never written to the database. Whoever can read that file and the database
//!   can decrypt everything; the database (or a copy of it, or its WAL) alone reveals no key
//!   material, no secret value, no SecureString value and no NoEcho parameter value.
//! - In memory (`--in-memory`) the master key is random per process and never written anywhere.

use aes_gcm::aead::{Aead, AeadCore, KeyInit, OsRng, Payload};
use aes_gcm::{Aes256Gcm, Key, Nonce};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// File name of the master key, beside the SQLite database.
pub const MASTER_KEY_FILE: &str = "master.key";
const KEY_LEN: usize = 32;
const NONCE_LEN: usize = 12;

/// Why the master key could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum MasterKeyError {
    #[error("store: cannot read or create master key {path}: {source}")]
    Io {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("store: master key {path} is {len} bytes, expected {KEY_LEN}; it is damaged")]
    Damaged { path: PathBuf, len: usize },
}

pub struct MasterKey {
    cipher: Aes256Gcm,
}

impl MasterKey {
    /// The master key of the data directory `dir`, created on first use.
    pub fn for_dir(dir: &Path) -> Result<Self, MasterKeyError> {
        let path = dir.join(MASTER_KEY_FILE);
        let io = |source| MasterKeyError::Io {
            path: path.clone(),
            source,
        };
        let mut opts = std::fs::OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut opts, 0o600);
        let bytes = match opts.open(&path) {
            Ok(mut f) => {
                let key = Aes256Gcm::generate_key(OsRng);
                f.write_all(&key).map_err(io)?;
                f.sync_all().map_err(io)?;
                key.to_vec()
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                let mut buf = Vec::new();
                std::fs::File::open(&path)
                    .and_then(|mut f| f.read_to_end(&mut buf))
                    .map_err(io)?;
                buf
            }
            Err(e) => return Err(io(e)),
        };
        if bytes.len() != KEY_LEN {
            return Err(MasterKeyError::Damaged {
                path,
                len: bytes.len(),
            });
        }
        Ok(Self::from_bytes(&bytes))
    }

    /// A key that lives only as long as the process (in-memory stores).
    pub fn ephemeral() -> Self {
        Self::from_bytes(&Aes256Gcm::generate_key(OsRng))
    }

    fn from_bytes(bytes: &[u8]) -> Self {
        MasterKey {
            cipher: Aes256Gcm::new(Key::<Aes256Gcm>::from_slice(bytes)),
        }
    }

    /// Nonce followed by the sealed `material`, bound to `label`.
    pub fn wrap(&self, label: &str, material: &[u8]) -> Vec<u8> {
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let sealed = self.cipher.encrypt(
            &nonce,
            Payload {
                msg: material,
                aad: label.as_bytes(),
            },
        );
        let mut out = nonce.to_vec();
        // AES-GCM encryption fails only for inputs beyond 64 GiB; key material is 32 bytes.
        out.extend(sealed.unwrap_or_default());
        out
    }

    /// The material `wrap` sealed for `label`; `None` if it was sealed under another master key
    /// or label, or damaged.
    pub fn unwrap(&self, label: &str, wrapped: &[u8]) -> Option<Vec<u8>> {
        if wrapped.len() < NONCE_LEN {
            return None;
        }
        let (nonce, sealed) = wrapped.split_at(NONCE_LEN);
        self.cipher
            .decrypt(
                Nonce::from_slice(nonce),
                Payload {
                    msg: sealed,
                    aad: label.as_bytes(),
                },
            )
            .ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn created_once_private_and_bound_to_label() {
        let dir = tempfile::tempdir().unwrap();
        let m = MasterKey::for_dir(dir.path()).unwrap();
        let w = m.wrap("a", b"material");
        let again = MasterKey::for_dir(dir.path()).unwrap();
        assert_eq!(again.unwrap("a", &w).as_deref(), Some(&b"material"[..]));
        assert_eq!(again.unwrap("b", &w), None);
        assert_eq!(MasterKey::ephemeral().unwrap("a", &w), None);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join(MASTER_KEY_FILE))
                .unwrap()
                .permissions()
                .mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::write(dir.path().join(MASTER_KEY_FILE), b"short").unwrap();
        assert!(matches!(
            MasterKey::for_dir(dir.path()),
            Err(MasterKeyError::Damaged { len: 5, .. })
        ));
    }
}
