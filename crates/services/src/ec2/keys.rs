//! Key pairs. CreateKeyPair generates real key material (RSA 2048 through the `rsa` crate,
//! ED25519 through `ed25519-dalek`) and answers the private key once, in AWS's formats (PKCS#1
//! PEM for RSA, OpenSSH for ED25519); only the public half and the fingerprint are kept.
//! ImportKeyPair takes an OpenSSH public key. Fingerprints follow AWS: SHA-1 of the PKCS#8
//! private key for a created RSA key, MD5 of the public key's DER for an imported one, SHA-256
//! of the public key blob for ED25519.

use super::Ec2Service;
use super::Region;
use super::errors::{check_id, invalid_value};
use super::model::{KeyPair, Resource, Tags, new_id};
use super::ops::now;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use cumulo_wire::AwsError;

pub fn key_not_found(name: &str) -> AwsError {
    AwsError::bad_request(
        "InvalidKeyPair.NotFound",
        format!("The key pair '{name}' does not exist"),
    )
}

impl Region {
    pub fn key_pair_named(&self, name: &str) -> Result<&KeyPair, AwsError> {
        self.items
            .values()
            .find_map(|r| match r {
                Resource::KeyPair(k) if k.name == name => Some(k),
                _ => None,
            })
            .ok_or_else(|| key_not_found(name))
    }
}

/// Key material as made: the public key line, fingerprint and private key text.
struct Material {
    public_key: String,
    fingerprint: String,
    private_key: Option<String>,
}

fn colon_hex(bytes: &[u8]) -> String {
    bytes
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(":")
}

/// SSH wire encoding: a length-prefixed string.
fn ssh_string(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend((bytes.len() as u32).to_be_bytes());
    out.extend(bytes);
}

/// SSH wire encoding of a positive big integer (`mpint`).
fn ssh_mpint(out: &mut Vec<u8>, be: &[u8]) {
    let trimmed: Vec<u8> = be.iter().copied().skip_while(|b| *b == 0).collect();
    let mut v = Vec::new();
    if trimmed.first().is_some_and(|b| b & 0x80 != 0) {
        v.push(0);
    }
    v.extend(trimmed);
    ssh_string(out, &v);
}

fn failed(e: impl std::fmt::Display) -> AwsError {
    AwsError::internal(format!("key generation failed: {e}"))
}

fn rsa_public_blob(key: &rsa::RsaPublicKey) -> Vec<u8> {
    use rsa::traits::PublicKeyParts;
    let mut blob = Vec::new();
    ssh_string(&mut blob, b"ssh-rsa");
    ssh_mpint(&mut blob, &key.e().to_bytes_be());
    ssh_mpint(&mut blob, &key.n().to_bytes_be());
    blob
}

fn ed25519_public_blob(public: &[u8]) -> Vec<u8> {
    let mut blob = Vec::new();
    ssh_string(&mut blob, b"ssh-ed25519");
    ssh_string(&mut blob, public);
    blob
}

fn sha256_fingerprint(blob: &[u8]) -> String {
    use sha2::Digest;
    STANDARD.encode(sha2::Sha256::digest(blob))
}

fn generate(key_type: &str, name: &str) -> Result<Material, AwsError> {
    let mut rng = rsa::rand_core::OsRng;
    match key_type {
        "rsa" => {
            use rsa::pkcs1::EncodeRsaPrivateKey;
            use rsa::pkcs8::EncodePrivateKey;
            use sha1::Digest;
            let key = rsa::RsaPrivateKey::new(&mut rng, 2048).map_err(failed)?;
            let pem = key
                .to_pkcs1_pem(rsa::pkcs1::LineEnding::LF)
                .map_err(failed)?;
            let der = key.to_pkcs8_der().map_err(failed)?;
            let public = rsa::RsaPublicKey::from(&key);
            Ok(Material {
                public_key: format!(
                    "ssh-rsa {} {name}",
                    STANDARD.encode(rsa_public_blob(&public))
                ),
                fingerprint: colon_hex(&sha1::Sha1::digest(der.as_bytes())),
                private_key: Some(pem.trim_end().to_string()),
            })
        }
        _ => {
            let key = ed25519_dalek::SigningKey::generate(&mut rng);
            let public = key.verifying_key().to_bytes();
            let blob = ed25519_public_blob(&public);
            Ok(Material {
                public_key: format!("ssh-ed25519 {} {name}", STANDARD.encode(&blob)),
                fingerprint: sha256_fingerprint(&blob),
                private_key: Some(openssh_private(&blob, &key.to_bytes(), &public, name)),
            })
        }
    }
}

/// An unencrypted `openssh-key-v1` private key (what AWS answers for ED25519).
fn openssh_private(public_blob: &[u8], seed: &[u8], public: &[u8], comment: &str) -> String {
    use rand::Rng;
    let check: u32 = rand::rng().random();
    let mut private = Vec::new();
    private.extend(check.to_be_bytes());
    private.extend(check.to_be_bytes());
    ssh_string(&mut private, b"ssh-ed25519");
    ssh_string(&mut private, public);
    ssh_string(&mut private, &[seed, public].concat());
    ssh_string(&mut private, comment.as_bytes());
    let mut pad = 1u8;
    while private.len() % 8 != 0 {
        private.push(pad);
        pad += 1;
    }
    let mut out = b"openssh-key-v1\0".to_vec();
    ssh_string(&mut out, b"none");
    ssh_string(&mut out, b"none");
    ssh_string(&mut out, b"");
    out.extend(1u32.to_be_bytes());
    ssh_string(&mut out, public_blob);
    ssh_string(&mut out, &private);
    let body = STANDARD.encode(&out);
    let lines: Vec<&str> = body
        .as_bytes()
        .chunks(70)
        .filter_map(|c| std::str::from_utf8(c).ok())
        .collect();
    format!(
        "-----BEGIN OPENSSH PRIVATE KEY-----\n{}\n-----END OPENSSH PRIVATE KEY-----",
        lines.join("\n")
    )
}

fn read_ssh_string(data: &[u8], at: &mut usize) -> Option<Vec<u8>> {
    let len = u32::from_be_bytes(data.get(*at..*at + 4)?.try_into().ok()?) as usize;
    let v = data.get(*at + 4..*at + 4 + len)?.to_vec();
    *at += 4 + len;
    Some(v)
}

/// An imported OpenSSH public key line: its type, fingerprint and the line as kept.
fn import(material: &str) -> Result<Material, AwsError> {
    let bad = || {
        AwsError::bad_request(
            "InvalidKey.Format",
            "Key is not in valid OpenSSH public key format",
        )
    };
    let mut parts = material.split_whitespace();
    let (kind, body) = (parts.next().ok_or_else(bad)?, parts.next().ok_or_else(bad)?);
    let blob = STANDARD.decode(body).map_err(|_| bad())?;
    let mut at = 0;
    let named = read_ssh_string(&blob, &mut at).ok_or_else(bad)?;
    if named != kind.as_bytes() {
        return Err(bad());
    }
    let fingerprint = match kind {
        "ssh-rsa" => {
            use md5::Digest;
            use rsa::pkcs8::EncodePublicKey;
            let e = read_ssh_string(&blob, &mut at).ok_or_else(bad)?;
            let n = read_ssh_string(&blob, &mut at).ok_or_else(bad)?;
            let key = rsa::RsaPublicKey::new(
                rsa::BigUint::from_bytes_be(&n),
                rsa::BigUint::from_bytes_be(&e),
            )
            .map_err(|_| bad())?;
            let der = key.to_public_key_der().map_err(|_| bad())?;
            colon_hex(&md5::Md5::digest(der.as_bytes()))
        }
        "ssh-ed25519" => {
            let pk = read_ssh_string(&blob, &mut at).ok_or_else(bad)?;
            if pk.len() != 32 {
                return Err(bad());
            }
            sha256_fingerprint(&blob)
        }
        _ => return Err(bad()),
    };
    Ok(Material {
        public_key: format!("{kind} {body}"),
        fingerprint,
        private_key: None,
    })
}

fn check_name(name: &str) -> Result<(), AwsError> {
    if name.is_empty() || name.len() > 255 || !name.is_ascii() {
        return Err(invalid_value(
            name,
            "KeyName",
            "Key names must be 1 to 255 ASCII characters.",
        ));
    }
    Ok(())
}

impl Ec2Service {
    /// CreateKeyPair: the key pair kept, and its private key (answered once, never kept).
    pub fn create_key_pair(
        &self,
        region: &str,
        name: &str,
        key_type: Option<&str>,
        key_format: Option<&str>,
        tags: Tags,
    ) -> Result<(KeyPair, String), AwsError> {
        check_name(name)?;
        let key_type = key_type.unwrap_or("rsa");
        if !matches!(key_type, "rsa" | "ed25519") {
            return Err(invalid_value(
                key_type,
                "KeyType",
                "Valid types are rsa and ed25519.",
            ));
        }
        if key_format.is_some_and(|f| f != "pem") {
            return Err(invalid_value(
                key_format.unwrap_or(""),
                "KeyFormat",
                "cumulo answers key material in pem format only.",
            ));
        }
        self.read(region, |r| match r.key_pair_named(name) {
            Ok(_) => Err(duplicate(name)),
            Err(_) => Ok(()),
        })?;
        let m = generate(key_type, name)?;
        let private = m.private_key.clone().unwrap_or_default();
        let k = self.keep(region, name, key_type, m, tags)?;
        Ok((k, private))
    }

    /// ImportKeyPair: `material` is the OpenSSH public key line.
    pub fn import_key_pair(
        &self,
        region: &str,
        name: &str,
        material: &str,
        tags: Tags,
    ) -> Result<KeyPair, AwsError> {
        check_name(name)?;
        let m = import(material)?;
        let key_type = if m.public_key.starts_with("ssh-rsa") {
            "rsa"
        } else {
            "ed25519"
        };
        self.keep(region, name, key_type, m, tags)
    }

    fn keep(
        &self,
        region: &str,
        name: &str,
        key_type: &str,
        m: Material,
        tags: Tags,
    ) -> Result<KeyPair, AwsError> {
        self.change(region, |r, touched| {
            if r.key_pair_named(name).is_ok() {
                return Err(duplicate(name));
            }
            let k = KeyPair {
                id: new_id("key"),
                name: name.to_string(),
                key_type: key_type.to_string(),
                fingerprint: m.fingerprint,
                public_key: m.public_key,
                created: now(),
                tags,
            };
            r.insert(Resource::KeyPair(k.clone()), touched);
            Ok(k)
        })
    }

    /// DeleteKeyPair by name or id; a name that does not exist is no error (as on AWS).
    /// Answers the deleted key pair's id.
    pub fn delete_key_pair(
        &self,
        region: &str,
        name: Option<&str>,
        id: Option<&str>,
    ) -> Result<Option<String>, AwsError> {
        self.change(region, |r, touched| {
            let found = match (id, name) {
                (Some(id), _) => {
                    check_id(id, "key")?;
                    Some(r.key_pair(id)?.id.clone())
                }
                (None, Some(name)) => r.key_pair_named(name).ok().map(|k| k.id.clone()),
                (None, None) => return Err(super::errors::missing("KeyName")),
            };
            if let Some(id) = &found {
                r.remove(id, touched);
            }
            Ok(found)
        })
    }
}

fn duplicate(name: &str) -> AwsError {
    AwsError::bad_request(
        "InvalidKeyPair.Duplicate",
        format!("The keypair '{name}' already exists."),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Config;
    use cumulo_store::Store;
    use std::sync::Arc;

    #[test]
    fn created_keys_answer_material_once_and_imported_keys_keep_their_fingerprint() {
        let ec2 =
            Ec2Service::new(Arc::new(Store::in_memory().unwrap()), &Config::default()).unwrap();
        let (k, pem) = ec2
            .create_key_pair("us-east-1", "a", None, None, Tags::new())
            .unwrap();
        assert!(pem.starts_with("-----BEGIN RSA PRIVATE KEY-----"));
        assert_eq!(k.fingerprint.len(), 59, "{}", k.fingerprint);
        assert_eq!(
            ec2.create_key_pair("us-east-1", "a", None, None, Tags::new())
                .unwrap_err()
                .code,
            "InvalidKeyPair.Duplicate"
        );
        let (e, openssh) = ec2
            .create_key_pair("us-east-1", "b", Some("ed25519"), None, Tags::new())
            .unwrap();
        assert!(openssh.starts_with("-----BEGIN OPENSSH PRIVATE KEY-----"));
        // Importing the same public keys gives the same fingerprint for ED25519, AWS's MD5 for RSA.
        let imported = ec2
            .import_key_pair("us-east-1", "c", &e.public_key, Tags::new())
            .unwrap();
        assert_eq!(imported.fingerprint, e.fingerprint);
        let rsa_import = ec2
            .import_key_pair("us-east-1", "d", &k.public_key, Tags::new())
            .unwrap();
        assert_eq!(rsa_import.fingerprint.len(), 47);
        assert_eq!(
            ec2.import_key_pair("us-east-1", "x", "ssh-rsa AAAA", Tags::new())
                .unwrap_err()
                .code,
            "InvalidKey.Format"
        );
        assert_eq!(
            ec2.delete_key_pair("us-east-1", Some("nope"), None)
                .unwrap(),
            None
        );
        assert_eq!(
            ec2.delete_key_pair("us-east-1", Some("a"), None).unwrap(),
            Some(k.id)
        );
    }
}
