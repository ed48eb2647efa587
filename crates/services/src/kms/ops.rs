//! The typed KMS operations. Every `key_id` parameter takes what AWS takes: a key id, a key ARN
//! and, where AWS allows it (`alias_ok`), an alias name or alias ARN.

use super::KmsService;
use super::cipher;
use super::json::now_ms;
use super::state::{self, Alias, Key, KeyManager, KeyRecord, KeyState, Region};
use cumulo_wire::AwsError;
use http::StatusCode;
use rand::RngCore;
use std::collections::{BTreeMap, HashMap};

/// What the default key policy and the AWS-managed keys' policies grant (AWS's own documents).
pub fn default_policy(account: &str) -> String {
    serde_json::json!({
        "Version": "2012-10-17",
        "Id": "key-default-1",
        "Statement": [{
            "Sid": "Enable IAM User Permissions",
            "Effect": "Allow",
            "Principal": {"AWS": format!("arn:aws:iam::{account}:root")},
            "Action": "kms:*",
            "Resource": "*"
        }]
    })
    .to_string()
}

fn managed_policy(account: &str, region: &str, service: &str) -> String {
    serde_json::json!({
        "Version": "2012-10-17",
        "Id": format!("auto-{service}-1"),
        "Statement": [{
            "Sid": format!("Allow access through {service} for all principals in the account that are authorized to use {service}"),
            "Effect": "Allow",
            "Principal": {"AWS": "*"},
            "Action": ["kms:Encrypt", "kms:Decrypt", "kms:ReEncrypt*", "kms:GenerateDataKey*", "kms:DescribeKey"],
            "Resource": "*",
            "Condition": {"StringEquals": {
                "kms:CallerAccount": account,
                "kms:ViaService": format!("{service}.{region}.amazonaws.com")
            }}
        }, {
            "Sid": "Allow direct access to key metadata to the account",
            "Effect": "Allow",
            "Principal": {"AWS": format!("arn:aws:iam::{account}:root")},
            "Action": ["kms:Describe*", "kms:Get*", "kms:List*"],
            "Resource": "*"
        }]
    })
    .to_string()
}

// ---- errors, in AWS's words ----

fn err(code: &str, message: impl Into<String>) -> AwsError {
    AwsError::bad_request(code, message)
}

fn key_not_found(arn: &str) -> AwsError {
    err("NotFoundException", format!("Key '{arn}' does not exist"))
}

fn invalid_key_id(id: &str) -> AwsError {
    err("NotFoundException", format!("Invalid keyId {id}"))
}

fn alias_not_found(arn: &str) -> AwsError {
    err("NotFoundException", format!("Alias {arn} is not found."))
}

fn disabled(arn: &str) -> AwsError {
    err("DisabledException", format!("{arn} is disabled."))
}

fn pending_deletion(arn: &str) -> AwsError {
    err(
        "KMSInvalidStateException",
        format!("{arn} is pending deletion."),
    )
}

fn invalid_ciphertext() -> AwsError {
    err("InvalidCiphertextException", "")
}

fn validation(message: impl Into<String>) -> AwsError {
    AwsError::validation_exception(message)
}

fn length_error(field: &str, op: &str, bound: i64) -> AwsError {
    validation(format!(
        "1 validation error detected: Value at '{field}' failed to satisfy constraint: Member must have length {op} {bound}"
    ))
}

fn range_error(value: i64, field: &str, op: &str, bound: i64) -> AwsError {
    validation(format!(
        "1 validation error detected: Value '{value}' at '{field}' failed to satisfy constraint: Member must have value {op} {bound}"
    ))
}

fn in_range(value: i64, field: &str, min: i64, max: i64) -> Result<i64, AwsError> {
    if value < min {
        Err(range_error(value, field, "greater than or equal to", min))
    } else if value > max {
        Err(range_error(value, field, "less than or equal to", max))
    } else {
        Ok(value)
    }
}

fn enum_error(value: &str, field: &str, allowed: &[&str]) -> AwsError {
    validation(format!(
        "1 validation error detected: Value '{value}' at '{field}' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
        allowed.join(", ")
    ))
}

fn not_emulated(what: &str) -> AwsError {
    AwsError::new(
        StatusCode::NOT_IMPLEMENTED,
        "NotImplemented",
        format!(
            "cumulo: {what} is not implemented; only symmetric SYMMETRIC_DEFAULT encryption keys are emulated"
        ),
    )
}

/// AWS-managed keys' policies let the account use and read them, nothing else.
fn managed_denied(account: &str, action: &str, arn: &str) -> AwsError {
    err(
        "AccessDeniedException",
        format!(
            "User: arn:aws:iam::{account}:root is not authorized to perform: kms:{action} on resource: {arn} because no resource-based policy allows the kms:{action} action"
        ),
    )
}

fn is_uuid(s: &str) -> bool {
    uuid::Uuid::parse_str(s).is_ok() && s.len() == 36
}

const KEY_USAGES: &[&str] = &[
    "SIGN_VERIFY",
    "ENCRYPT_DECRYPT",
    "GENERATE_VERIFY_MAC",
    "KEY_AGREEMENT",
];
const KEY_SPECS: &[&str] = &[
    "RSA_2048",
    "RSA_3072",
    "RSA_4096",
    "ECC_NIST_P256",
    "ECC_NIST_P384",
    "ECC_NIST_P521",
    "ECC_SECG_P256K1",
    "SYMMETRIC_DEFAULT",
    "HMAC_224",
    "HMAC_256",
    "HMAC_384",
    "HMAC_512",
    "SM2",
    "ML_DSA_44",
    "ML_DSA_65",
    "ML_DSA_87",
    "ECC_NIST_EDWARDS25519",
];
const ORIGINS: &[&str] = &["AWS_KMS", "EXTERNAL", "AWS_CLOUDHSM", "EXTERNAL_KEY_STORE"];
const ALGORITHMS: &[&str] = &[
    "SYMMETRIC_DEFAULT",
    "RSAES_OAEP_SHA_1",
    "RSAES_OAEP_SHA_256",
    "SM2PKE",
];
pub const ALGORITHM: &str = "SYMMETRIC_DEFAULT";

/// The encryption algorithm a request names, which must be the one a symmetric key has.
pub fn check_algorithm(alg: Option<&str>) -> Result<(), AwsError> {
    match alg {
        None | Some(ALGORITHM) => Ok(()),
        Some(a) if ALGORITHMS.contains(&a) => Err(err(
            "InvalidKeyUsageException",
            format!("The encryption algorithm {a} is not compatible with the type of key."),
        )),
        Some(a) => Err(enum_error(a, "encryptionAlgorithm", ALGORITHMS)),
    }
}

/// CreateKey's members (see botocore's `CreateKeyRequest`).
#[derive(Debug, Clone, Default)]
pub struct CreateKeyInput {
    pub description: Option<String>,
    pub policy: Option<String>,
    pub key_usage: Option<String>,
    pub key_spec: Option<String>,
    pub origin: Option<String>,
    pub custom_key_store_id: Option<String>,
    pub multi_region: bool,
    pub tags: Vec<(String, String)>,
}

/// A key's metadata as DescribeKey reports it.
#[derive(Debug, Clone)]
pub struct KeyView {
    pub record: KeyRecord,
}

impl KeyView {
    pub fn key_id(&self) -> &str {
        &self.record.key_id
    }
    pub fn arn(&self) -> &str {
        &self.record.arn
    }
}

/// `(key id, key ARN)` entries and the next marker.
pub type KeyPage = (Vec<(String, String)>, Option<String>);

/// An alias as ListAliases reports it.
#[derive(Debug, Clone)]
pub struct AliasView {
    pub name: String,
    pub arn: String,
    pub target_key_id: String,
    pub creation_ms: i64,
    pub updated_ms: i64,
}

/// GenerateDataKey's size: `KeySpec` or `NumberOfBytes`, exactly one.
pub fn data_key_len(key_spec: Option<&str>, number: Option<i64>) -> Result<usize, AwsError> {
    match (key_spec, number) {
        (Some("AES_256"), None) => Ok(32),
        (Some("AES_128"), None) => Ok(16),
        (Some(s), None) => Err(enum_error(s, "keySpec", &["AES_256", "AES_128"])),
        (None, Some(n)) => Ok(in_range(n, "numberOfBytes", 1, 1024)? as usize),
        _ => Err(validation(
            "Please specify either number of bytes or key spec.",
        )),
    }
}

fn check_policy(policy: &str) -> Result<(), AwsError> {
    if policy.len() > 32768 {
        return Err(length_error("policy", "less than or equal to", 32768));
    }
    match serde_json::from_str::<serde_json::Value>(policy) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        _ => Err(err(
            "MalformedPolicyDocumentException",
            "The key policy is not a valid JSON policy document.",
        )),
    }
}

fn check_description(d: &str) -> Result<(), AwsError> {
    if d.chars().count() > 8192 {
        return Err(length_error("description", "less than or equal to", 8192));
    }
    Ok(())
}

fn check_tags(tags: &[(String, String)]) -> Result<(), AwsError> {
    let mut seen = std::collections::HashSet::new();
    for (k, v) in tags {
        if k.is_empty() || k.chars().count() > 128 || v.chars().count() > 256 {
            return Err(err(
                "TagException",
                format!(
                    "Tag key or value for {k} is invalid: keys are 1-128 characters, values at most 256"
                ),
            ));
        }
        if k.starts_with("aws:") {
            return Err(err("TagException", "Tags beginning with aws: are reserved"));
        }
        if !seen.insert(k) {
            return Err(err("TagException", format!("Duplicate tag key {k}")));
        }
    }
    Ok(())
}

fn random_bytes(n: usize) -> Vec<u8> {
    let mut out = vec![0u8; n];
    rand::rng().fill_bytes(&mut out);
    out
}

/// The usability check of cryptographic operations.
fn usable(key: &Key) -> Result<(), AwsError> {
    match key.record.state {
        KeyState::Enabled => Ok(()),
        KeyState::Disabled => Err(disabled(&key.record.arn)),
        KeyState::PendingDeletion => Err(pending_deletion(&key.record.arn)),
    }
}

impl KmsService {
    fn key_arn(&self, region: &str, key_id: &str) -> String {
        format!("arn:aws:kms:{region}:{}:key/{key_id}", self.account_id)
    }

    fn alias_arn(&self, region: &str, name: &str) -> String {
        format!("arn:aws:kms:{region}:{}:{name}", self.account_id)
    }

    /// Drops keys whose deletion date has passed (AWS deletes them then), with their aliases.
    fn purge(&self, region: &str, r: &mut Region) -> Result<(), AwsError> {
        let now = now_ms();
        let due: Vec<String> = r
            .keys
            .values()
            .filter(|k| k.record.deletion_ms.is_some_and(|d| d <= now))
            .map(|k| k.record.key_id.clone())
            .collect();
        if due.is_empty() {
            return Ok(());
        }
        self.store
            .write(|tx| {
                due.iter()
                    .try_for_each(|id| state::delete_key(tx, region, id))
            })
            .map_err(|e| AwsError::internal(e.to_string()))?;
        for id in &due {
            r.keys.remove(id);
        }
        r.aliases.retain(|_, a| !due.contains(&a.target_key_id));
        Ok(())
    }

    /// The key id `key_id` names in `region`. Aliases resolve only when `alias_ok`; an
    /// `alias/aws/<service>` alias that does not exist yet gets its AWS-managed key now, as AWS
    /// creates them on first use.
    fn resolve(
        &self,
        regions: &mut HashMap<String, Region>,
        region: &str,
        key_id: &str,
        alias_ok: bool,
    ) -> Result<String, AwsError> {
        if key_id.is_empty() {
            return Err(length_error("keyId", "greater than or equal to", 1));
        }
        let r = regions.entry(region.to_string()).or_default();
        self.purge(region, r)?;
        let (id_region, rest) = match key_id.strip_prefix("arn:") {
            Some(arn) => {
                // arn:aws:kms:<region>:<account>:<key/ID | alias/NAME>
                let parts: Vec<&str> = arn.splitn(5, ':').collect();
                match parts.as_slice() {
                    [_, "kms", reg, acct, rest] if *acct == self.account_id => {
                        (reg.to_string(), rest.to_string())
                    }
                    _ => return Err(invalid_key_id(key_id)),
                }
            }
            None => (region.to_string(), key_id.to_string()),
        };
        if let Some(id) = rest.strip_prefix("key/") {
            if id_region != region || !r.keys.contains_key(id) {
                return Err(key_not_found(&self.key_arn(&id_region, id)));
            }
            return Ok(id.to_string());
        }
        if rest.starts_with("alias/") {
            if !alias_ok {
                return Err(invalid_key_id(key_id));
            }
            if id_region != region {
                return Err(alias_not_found(&self.alias_arn(&id_region, &rest)));
            }
            if let Some(a) = r.aliases.get(&rest) {
                return Ok(a.target_key_id.clone());
            }
            if let Some(service) = rest.strip_prefix("alias/aws/")
                && !service.is_empty()
                && service
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
            {
                return self.create_managed(r, region, &rest, service);
            }
            return Err(alias_not_found(&self.alias_arn(region, &rest)));
        }
        if key_id.starts_with("arn:") || !is_uuid(&rest) {
            return Err(invalid_key_id(key_id));
        }
        if !r.keys.contains_key(&rest) {
            return Err(key_not_found(&self.key_arn(region, &rest)));
        }
        Ok(rest)
    }

    fn create_managed(
        &self,
        r: &mut Region,
        region: &str,
        alias: &str,
        service: &str,
    ) -> Result<String, AwsError> {
        let id = uuid::Uuid::new_v4().to_string();
        let now = now_ms();
        let record = KeyRecord {
            key_id: id.clone(),
            arn: self.key_arn(region, &id),
            account_id: self.account_id.clone(),
            description: format!(
                "Default key that protects my {service} data when no other key is defined"
            ),
            state: KeyState::Enabled,
            manager: KeyManager::Aws,
            creation_ms: now,
            deletion_ms: None,
            pending_window_days: None,
            policy: managed_policy(&self.account_id, region, service),
            rotation_enabled: true,
            rotation_period_days: Some(365),
            tags: Vec::new(),
        };
        let alias = Alias {
            name: alias.to_string(),
            target_key_id: id.clone(),
            creation_ms: now,
            updated_ms: now,
        };
        self.insert_key(r, region, record, Some(alias))?;
        Ok(id)
    }

    fn insert_key(
        &self,
        r: &mut Region,
        region: &str,
        record: KeyRecord,
        alias: Option<Alias>,
    ) -> Result<(), AwsError> {
        let material = random_bytes(32);
        let wrapped = self.store.master_key().wrap(&record.arn, &material);
        self.store
            .write(|tx| {
                state::insert_key(tx, region, &record, &wrapped)?;
                if let Some(a) = &alias {
                    state::save_alias(tx, region, a)?;
                }
                Ok(())
            })
            .map_err(|e| AwsError::internal(e.to_string()))?;
        if let Some(a) = alias {
            r.aliases.insert(a.name.clone(), a);
        }
        r.keys
            .insert(record.key_id.clone(), Key { record, material });
        Ok(())
    }

    /// Applies `f` to a copy of the key's record, commits it, then keeps it. `action` names the
    /// operation for the refusal an AWS-managed key gives.
    fn mutate<R>(
        &self,
        region: &str,
        key_id: &str,
        action: &str,
        f: impl FnOnce(&mut KeyRecord) -> Result<R, AwsError>,
    ) -> Result<R, AwsError> {
        let mut regions = self.lock();
        let id = self.resolve(&mut regions, region, key_id, false)?;
        let r = regions.entry(region.to_string()).or_default();
        let key = r
            .keys
            .get_mut(&id)
            .ok_or_else(|| key_not_found(&self.key_arn(region, &id)))?;
        if key.record.manager == KeyManager::Aws {
            return Err(managed_denied(&self.account_id, action, &key.record.arn));
        }
        let mut record = key.record.clone();
        let out = f(&mut record)?;
        self.store
            .write(|tx| state::update_key(tx, region, &record))
            .map_err(|e| AwsError::internal(e.to_string()))?;
        key.record = record;
        Ok(out)
    }

    /// Runs `f` on the key `key_id` names (aliases allowed per `alias_ok`).
    fn with_key<R>(
        &self,
        region: &str,
        key_id: &str,
        alias_ok: bool,
        f: impl FnOnce(&Key) -> Result<R, AwsError>,
    ) -> Result<R, AwsError> {
        let mut regions = self.lock();
        let id = self.resolve(&mut regions, region, key_id, alias_ok)?;
        let key = regions
            .get(region)
            .and_then(|r| r.keys.get(&id))
            .ok_or_else(|| key_not_found(&self.key_arn(region, &id)))?;
        f(key)
    }

    pub fn create_key(&self, region: &str, input: CreateKeyInput) -> Result<KeyView, AwsError> {
        if let Some(u) = input.key_usage.as_deref() {
            if !KEY_USAGES.contains(&u) {
                return Err(enum_error(u, "keyUsage", KEY_USAGES));
            }
            if u != "ENCRYPT_DECRYPT" {
                return Err(not_emulated(&format!("KeyUsage {u}")));
            }
        }
        if let Some(s) = input.key_spec.as_deref() {
            if !KEY_SPECS.contains(&s) {
                return Err(enum_error(s, "keySpec", KEY_SPECS));
            }
            if s != "SYMMETRIC_DEFAULT" {
                return Err(not_emulated(&format!("KeySpec {s}")));
            }
        }
        if let Some(o) = input.origin.as_deref() {
            if !ORIGINS.contains(&o) {
                return Err(enum_error(o, "origin", ORIGINS));
            }
            if o != "AWS_KMS" {
                return Err(not_emulated(&format!("Origin {o}")));
            }
        }
        if input.custom_key_store_id.is_some() {
            return Err(not_emulated("CustomKeyStoreId (custom key stores)"));
        }
        if input.multi_region {
            return Err(not_emulated("MultiRegion keys"));
        }
        let description = input.description.unwrap_or_default();
        check_description(&description)?;
        if let Some(p) = &input.policy {
            check_policy(p)?;
        }
        check_tags(&input.tags)?;
        let id = uuid::Uuid::new_v4().to_string();
        let record = KeyRecord {
            arn: self.key_arn(region, &id),
            key_id: id,
            account_id: self.account_id.clone(),
            description,
            state: KeyState::Enabled,
            manager: KeyManager::Customer,
            creation_ms: now_ms(),
            deletion_ms: None,
            pending_window_days: None,
            policy: input
                .policy
                .unwrap_or_else(|| default_policy(&self.account_id)),
            rotation_enabled: false,
            rotation_period_days: None,
            tags: input.tags,
        };
        let mut regions = self.lock();
        let r = regions.entry(region.to_string()).or_default();
        self.insert_key(r, region, record.clone(), None)?;
        Ok(KeyView { record })
    }

    pub fn describe_key(&self, region: &str, key_id: &str) -> Result<KeyView, AwsError> {
        self.with_key(region, key_id, true, |k| {
            Ok(KeyView {
                record: k.record.clone(),
            })
        })
    }

    /// `(key id, key ARN)` pages, in key-id order; the marker is the next key id.
    pub fn list_keys(
        &self,
        region: &str,
        limit: Option<i64>,
        marker: Option<&str>,
    ) -> Result<KeyPage, AwsError> {
        let limit = in_range(limit.unwrap_or(100), "limit", 1, 1000)? as usize;
        let mut regions = self.lock();
        let r = regions.entry(region.to_string()).or_default();
        self.purge(region, r)?;
        let ids: Vec<&String> = r
            .keys
            .keys()
            .filter(|id| marker.is_none_or(|m| id.as_str() >= m))
            .collect();
        if let Some(m) = marker
            && !r.keys.contains_key(m)
        {
            return Err(err(
                "InvalidMarkerException",
                "The marker is invalid or expired.",
            ));
        }
        let next = ids.get(limit).map(|s| s.to_string());
        let page = ids
            .into_iter()
            .take(limit)
            .map(|id| (id.clone(), self.key_arn(region, id)))
            .collect();
        Ok((page, next))
    }

    pub fn encrypt(
        &self,
        region: &str,
        key_id: &str,
        plaintext: &[u8],
        context: &BTreeMap<String, String>,
    ) -> Result<(Vec<u8>, String), AwsError> {
        if plaintext.is_empty() {
            return Err(length_error("plaintext", "greater than or equal to", 1));
        }
        if plaintext.len() > 4096 {
            return Err(length_error("plaintext", "less than or equal to", 4096));
        }
        self.with_key(region, key_id, true, |k| {
            usable(k)?;
            let blob = cipher::seal(
                &k.record.key_id,
                &k.record.arn,
                &k.material,
                plaintext,
                context,
            );
            Ok((blob, k.record.arn.clone()))
        })
    }

    /// The plaintext and the ARN of the key that encrypted it. `key_id`, when given, must name
    /// that key (IncorrectKeyException otherwise, as AWS).
    pub fn decrypt(
        &self,
        region: &str,
        blob: &[u8],
        context: &BTreeMap<String, String>,
        key_id: Option<&str>,
    ) -> Result<(Vec<u8>, String), AwsError> {
        if blob.is_empty() {
            return Err(length_error(
                "ciphertextBlob",
                "greater than or equal to",
                1,
            ));
        }
        let blob_key = cipher::key_id_of(blob).ok_or_else(invalid_ciphertext)?;
        let mut regions = self.lock();
        if let Some(requested) = key_id {
            let id = self.resolve(&mut regions, region, requested, true)?;
            if id != blob_key {
                return Err(err(
                    "IncorrectKeyException",
                    "The key ID in the request does not identify a CMK that can perform this operation.",
                ));
            }
        }
        let r = regions.entry(region.to_string()).or_default();
        self.purge(region, r)?;
        let key = r
            .keys
            .get(blob_key)
            .ok_or_else(|| key_not_found(&self.key_arn(region, blob_key)))?;
        usable(key)?;
        let pt = cipher::open(&key.record.arn, &key.material, blob, context)
            .ok_or_else(invalid_ciphertext)?;
        Ok((pt, key.record.arn.clone()))
    }

    /// Decrypts under the source key and encrypts under the destination: `(blob, source ARN,
    /// destination ARN)`.
    pub fn re_encrypt(
        &self,
        region: &str,
        blob: &[u8],
        source_context: &BTreeMap<String, String>,
        source_key_id: Option<&str>,
        destination_key_id: &str,
        destination_context: &BTreeMap<String, String>,
    ) -> Result<(Vec<u8>, String, String), AwsError> {
        let (pt, source) = self.decrypt(region, blob, source_context, source_key_id)?;
        let (out, dest) = self.encrypt(region, destination_key_id, &pt, destination_context)?;
        Ok((out, source, dest))
    }

    /// A fresh data key: `(plaintext, ciphertext blob, key ARN)`.
    pub fn generate_data_key(
        &self,
        region: &str,
        key_id: &str,
        len: usize,
        context: &BTreeMap<String, String>,
    ) -> Result<(Vec<u8>, Vec<u8>, String), AwsError> {
        let plaintext = random_bytes(len);
        let (blob, arn) = self.encrypt(region, key_id, &plaintext, context)?;
        Ok((plaintext, blob, arn))
    }

    pub fn generate_random(&self, number: Option<i64>) -> Result<Vec<u8>, AwsError> {
        let n = match number {
            Some(n) => in_range(n, "numberOfBytes", 1, 1024)?,
            None => {
                return Err(validation(
                    "Please specify the number of bytes (NumberOfBytes).",
                ));
            }
        };
        Ok(random_bytes(n as usize))
    }

    fn check_alias_name(&self, name: &str) -> Result<(), AwsError> {
        if name.is_empty() || name.len() > 256 {
            return Err(length_error(
                "aliasName",
                if name.is_empty() {
                    "greater than or equal to"
                } else {
                    "less than or equal to"
                },
                if name.is_empty() { 1 } else { 256 },
            ));
        }
        if !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b':' | b'/' | b'_' | b'-'))
        {
            return Err(validation(format!(
                "1 validation error detected: Value '{name}' at 'aliasName' failed to satisfy constraint: Member must satisfy regular expression pattern: ^[a-zA-Z0-9:/_-]+$"
            )));
        }
        if !name.starts_with("alias/") || name == "alias/" {
            return Err(validation(
                "Alias must start with the prefix \"alias/\". Please see https://docs.aws.amazon.com/kms/latest/developerguide/kms-alias.html",
            ));
        }
        if name.starts_with("alias/aws/") {
            return Err(err(
                "NotAuthorizedException",
                "Cannot create, update or delete aliases in the alias/aws/ namespace: they are reserved for AWS managed keys",
            ));
        }
        Ok(())
    }

    /// The customer key an alias may point at (not an alias, not AWS-managed, not pending
    /// deletion).
    fn alias_target(
        &self,
        regions: &mut HashMap<String, Region>,
        region: &str,
        target: &str,
    ) -> Result<String, AwsError> {
        if target.starts_with("alias/") || target.contains(":alias/") {
            return Err(validation("Aliases must refer to keys. Not aliases"));
        }
        let id = self.resolve(regions, region, target, false)?;
        let key = regions
            .get(region)
            .and_then(|r| r.keys.get(&id))
            .ok_or_else(|| key_not_found(&self.key_arn(region, &id)))?;
        if key.record.manager == KeyManager::Aws {
            return Err(managed_denied(
                &self.account_id,
                "CreateAlias",
                &key.record.arn,
            ));
        }
        if key.record.state == KeyState::PendingDeletion {
            return Err(pending_deletion(&key.record.arn));
        }
        Ok(id)
    }

    pub fn create_alias(&self, region: &str, name: &str, target: &str) -> Result<(), AwsError> {
        self.check_alias_name(name)?;
        let mut regions = self.lock();
        let id = self.alias_target(&mut regions, region, target)?;
        let r = regions.entry(region.to_string()).or_default();
        if r.aliases.contains_key(name) {
            return Err(err(
                "AlreadyExistsException",
                format!(
                    "An alias with the name {} already exists",
                    self.alias_arn(region, name)
                ),
            ));
        }
        let now = now_ms();
        let alias = Alias {
            name: name.to_string(),
            target_key_id: id,
            creation_ms: now,
            updated_ms: now,
        };
        self.store
            .write(|tx| state::save_alias(tx, region, &alias))
            .map_err(|e| AwsError::internal(e.to_string()))?;
        r.aliases.insert(name.to_string(), alias);
        Ok(())
    }

    pub fn update_alias(&self, region: &str, name: &str, target: &str) -> Result<(), AwsError> {
        self.check_alias_name(name)?;
        let mut regions = self.lock();
        let id = self.alias_target(&mut regions, region, target)?;
        let r = regions.entry(region.to_string()).or_default();
        let Some(existing) = r.aliases.get(name) else {
            return Err(alias_not_found(&self.alias_arn(region, name)));
        };
        let alias = Alias {
            target_key_id: id,
            updated_ms: now_ms(),
            ..existing.clone()
        };
        self.store
            .write(|tx| state::save_alias(tx, region, &alias))
            .map_err(|e| AwsError::internal(e.to_string()))?;
        r.aliases.insert(name.to_string(), alias);
        Ok(())
    }

    pub fn delete_alias(&self, region: &str, name: &str) -> Result<(), AwsError> {
        self.check_alias_name(name)?;
        let mut regions = self.lock();
        let r = regions.entry(region.to_string()).or_default();
        self.purge(region, r)?;
        if !r.aliases.contains_key(name) {
            return Err(alias_not_found(&self.alias_arn(region, name)));
        }
        self.store
            .write(|tx| state::delete_alias(tx, region, name))
            .map_err(|e| AwsError::internal(e.to_string()))?;
        r.aliases.remove(name);
        Ok(())
    }

    /// Aliases in name order, optionally only those of one key; the marker is the next name.
    pub fn list_aliases(
        &self,
        region: &str,
        key_id: Option<&str>,
        limit: Option<i64>,
        marker: Option<&str>,
    ) -> Result<(Vec<AliasView>, Option<String>), AwsError> {
        let limit = in_range(limit.unwrap_or(50), "limit", 1, 100)? as usize;
        let mut regions = self.lock();
        let only = match key_id {
            Some(k) => Some(self.resolve(&mut regions, region, k, false)?),
            None => None,
        };
        let r = regions.entry(region.to_string()).or_default();
        self.purge(region, r)?;
        let all: Vec<AliasView> = r
            .aliases
            .values()
            .filter(|a| only.as_ref().is_none_or(|k| &a.target_key_id == k))
            .filter(|a| marker.is_none_or(|m| a.name.as_str() >= m))
            .map(|a| AliasView {
                name: a.name.clone(),
                arn: self.alias_arn(region, &a.name),
                target_key_id: a.target_key_id.clone(),
                creation_ms: a.creation_ms,
                updated_ms: a.updated_ms,
            })
            .collect();
        let next = all.get(limit).map(|a| a.name.clone());
        Ok((all.into_iter().take(limit).collect(), next))
    }

    fn check_policy_name(name: Option<&str>) -> Result<(), AwsError> {
        match name {
            None | Some("default") => Ok(()),
            Some(_) => Err(err("NotFoundException", "No such policy exists")),
        }
    }

    pub fn get_key_policy(
        &self,
        region: &str,
        key_id: &str,
        name: Option<&str>,
    ) -> Result<String, AwsError> {
        Self::check_policy_name(name)?;
        self.with_key(region, key_id, false, |k| Ok(k.record.policy.clone()))
    }

    pub fn put_key_policy(
        &self,
        region: &str,
        key_id: &str,
        name: Option<&str>,
        policy: &str,
    ) -> Result<(), AwsError> {
        Self::check_policy_name(name)?;
        check_policy(policy)?;
        self.mutate(region, key_id, "PutKeyPolicy", |r| {
            if r.state == KeyState::PendingDeletion {
                return Err(pending_deletion(&r.arn));
            }
            r.policy = policy.to_string();
            Ok(())
        })
    }

    pub fn list_key_policies(&self, region: &str, key_id: &str) -> Result<Vec<String>, AwsError> {
        self.with_key(region, key_id, false, |_| Ok(vec!["default".to_string()]))
    }

    pub fn enable_key(&self, region: &str, key_id: &str) -> Result<(), AwsError> {
        self.mutate(region, key_id, "EnableKey", |r| {
            if r.state == KeyState::PendingDeletion {
                return Err(pending_deletion(&r.arn));
            }
            r.state = KeyState::Enabled;
            Ok(())
        })
    }

    pub fn disable_key(&self, region: &str, key_id: &str) -> Result<(), AwsError> {
        self.mutate(region, key_id, "DisableKey", |r| {
            if r.state == KeyState::PendingDeletion {
                return Err(pending_deletion(&r.arn));
            }
            r.state = KeyState::Disabled;
            Ok(())
        })
    }

    /// Schedules deletion: `(key ARN, deletion date ms, window days)`.
    pub fn schedule_key_deletion(
        &self,
        region: &str,
        key_id: &str,
        window: Option<i64>,
    ) -> Result<(String, i64, i64), AwsError> {
        let days = in_range(window.unwrap_or(30), "pendingWindowInDays", 7, 30)?;
        self.mutate(region, key_id, "ScheduleKeyDeletion", |r| {
            if r.state == KeyState::PendingDeletion {
                return Err(pending_deletion(&r.arn));
            }
            let when = now_ms() + days * 86_400_000;
            r.state = KeyState::PendingDeletion;
            r.deletion_ms = Some(when);
            r.pending_window_days = Some(days);
            Ok((r.arn.clone(), when, days))
        })
    }

    /// Cancels a scheduled deletion; the key comes back disabled, as AWS's does.
    pub fn cancel_key_deletion(&self, region: &str, key_id: &str) -> Result<String, AwsError> {
        self.mutate(region, key_id, "CancelKeyDeletion", |r| {
            if r.state != KeyState::PendingDeletion {
                return Err(err(
                    "KMSInvalidStateException",
                    format!("{} is not pending deletion.", r.arn),
                ));
            }
            r.state = KeyState::Disabled;
            r.deletion_ms = None;
            r.pending_window_days = None;
            Ok(r.arn.clone())
        })
    }

    pub fn set_key_rotation(
        &self,
        region: &str,
        key_id: &str,
        enabled: bool,
        period_days: Option<i64>,
    ) -> Result<(), AwsError> {
        let period = match period_days {
            Some(p) if enabled => Some(in_range(p, "rotationPeriodInDays", 90, 2560)?),
            _ => None,
        };
        let action = if enabled {
            "EnableKeyRotation"
        } else {
            "DisableKeyRotation"
        };
        self.mutate(region, key_id, action, |r| {
            match r.state {
                KeyState::Disabled => return Err(disabled(&r.arn)),
                KeyState::PendingDeletion => return Err(pending_deletion(&r.arn)),
                KeyState::Enabled => {}
            }
            r.rotation_enabled = enabled;
            r.rotation_period_days = enabled.then(|| period.unwrap_or(365));
            Ok(())
        })
    }

    /// `(enabled, period days, key ARN)`.
    pub fn get_key_rotation_status(
        &self,
        region: &str,
        key_id: &str,
    ) -> Result<(bool, Option<i64>, String), AwsError> {
        self.with_key(region, key_id, false, |k| {
            if k.record.state == KeyState::PendingDeletion {
                return Err(pending_deletion(&k.record.arn));
            }
            Ok((
                k.record.rotation_enabled,
                k.record.rotation_period_days,
                k.record.arn.clone(),
            ))
        })
    }

    pub fn update_key_description(
        &self,
        region: &str,
        key_id: &str,
        description: &str,
    ) -> Result<(), AwsError> {
        check_description(description)?;
        self.mutate(region, key_id, "UpdateKeyDescription", |r| {
            if r.state == KeyState::PendingDeletion {
                return Err(pending_deletion(&r.arn));
            }
            r.description = description.to_string();
            Ok(())
        })
    }

    pub fn tag_resource(
        &self,
        region: &str,
        key_id: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        check_tags(tags)?;
        self.mutate(region, key_id, "TagResource", |r| {
            if r.state == KeyState::PendingDeletion {
                return Err(pending_deletion(&r.arn));
            }
            for (k, v) in tags {
                match r.tags.iter_mut().find(|(key, _)| key == k) {
                    Some(t) => t.1 = v.clone(),
                    None => r.tags.push((k.clone(), v.clone())),
                }
            }
            Ok(())
        })
    }

    pub fn untag_resource(
        &self,
        region: &str,
        key_id: &str,
        keys: &[String],
    ) -> Result<(), AwsError> {
        self.mutate(region, key_id, "UntagResource", |r| {
            if r.state == KeyState::PendingDeletion {
                return Err(pending_deletion(&r.arn));
            }
            r.tags.retain(|(k, _)| !keys.contains(k));
            Ok(())
        })
    }

    pub fn list_resource_tags(
        &self,
        region: &str,
        key_id: &str,
    ) -> Result<Vec<(String, String)>, AwsError> {
        self.with_key(region, key_id, false, |k| Ok(k.record.tags.clone()))
    }
}
