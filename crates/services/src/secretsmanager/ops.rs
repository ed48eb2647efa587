//! The typed Secrets Manager operations. A `secret_id` is what AWS takes: the name, the full
//! ARN, or the ARN without its 6-character suffix.

use super::SecretsManagerService;
use super::replication::{ReplicaInput, check_regions, has_replicas, replica_refused};
use super::sealed;
use super::state::{self, Secret, SecretVersion};
use crate::kms::json::now_ms;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as B64;
use cumulo_wire::AwsError;
use rand::Rng;
use std::collections::BTreeMap;

pub const CURRENT: &str = "AWSCURRENT";
pub const PREVIOUS: &str = "AWSPREVIOUS";
pub(super) const DEFAULT_KEY: &str = "alias/aws/secretsmanager";
/// Versions kept, counting deprecated (unlabelled) ones; the oldest deprecated go first.
const MAX_VERSIONS: usize = 100;
const DAY_MS: i64 = 86_400_000;

// ---- errors, in AWS's words ----

pub(super) fn not_found() -> AwsError {
    AwsError::bad_request(
        "ResourceNotFoundException",
        "Secrets Manager can't find the specified secret.",
    )
}

pub(super) fn marked_for_deletion() -> AwsError {
    AwsError::bad_request(
        "InvalidRequestException",
        "You can't perform this operation on the secret because it was marked for deletion.",
    )
}

pub(super) fn invalid_parameter(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("InvalidParameterException", message)
}

fn validation(message: impl Into<String>) -> AwsError {
    AwsError::validation_exception(message)
}

pub(super) fn store_error(e: cumulo_store::StoreError) -> AwsError {
    AwsError::internal(e.to_string())
}

fn invalid_token() -> AwsError {
    AwsError::bad_request(
        "InvalidNextTokenException",
        "The NextToken value is invalid.",
    )
}

/// A secret value as the API carries it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretValueInput {
    String(String),
    Binary(Vec<u8>),
}

impl SecretValueInput {
    /// The one value of a request's SecretString/SecretBinary pair, if any.
    pub fn from_pair(
        string: Option<String>,
        binary: Option<Vec<u8>>,
    ) -> Result<Option<Self>, AwsError> {
        match (string, binary) {
            (Some(_), Some(_)) => Err(invalid_parameter(
                "You can't specify both a binary secret value and a string secret value in the same secret.",
            )),
            (Some(s), None) => Ok(Some(Self::String(s))),
            (None, Some(b)) => Ok(Some(Self::Binary(b))),
            (None, None) => Ok(None),
        }
    }

    fn bytes(&self) -> &[u8] {
        match self {
            Self::String(s) => s.as_bytes(),
            Self::Binary(b) => b,
        }
    }

    fn check(&self) -> Result<(), AwsError> {
        let (len, field) = match self {
            Self::String(s) => (s.len(), "secretString"),
            Self::Binary(b) => (b.len(), "secretBinary"),
        };
        if len > 65536 {
            return Err(validation(format!(
                "1 validation error detected: Value at '{field}' failed to satisfy constraint: Member must have length less than or equal to 65536"
            )));
        }
        Ok(())
    }
}

#[derive(Debug, Clone, Default)]
pub struct CreateSecretInput {
    pub name: String,
    pub client_request_token: Option<String>,
    pub description: Option<String>,
    pub kms_key_id: Option<String>,
    pub value: Option<SecretValueInput>,
    pub tags: Vec<(String, String)>,
    /// AddReplicaRegions, made once the secret exists.
    pub replicas: Vec<ReplicaInput>,
    /// ForceOverwriteReplicaSecret.
    pub force_overwrite_replicas: bool,
}

/// GetSecretValue's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretValue {
    pub arn: String,
    pub name: String,
    pub version_id: String,
    pub value: SecretValueInput,
    pub stages: Vec<String>,
    pub created_ms: i64,
}

/// One ListSecrets / BatchGetSecretValue filter.
#[derive(Debug, Clone)]
pub struct ListFilter {
    pub key: String,
    pub values: Vec<String>,
}

const FILTER_KEYS: &[&str] = &[
    "description",
    "name",
    "tag-key",
    "tag-value",
    "primary-region",
    "owning-service",
    "all",
];

fn check_filters(filters: &[ListFilter]) -> Result<(), AwsError> {
    for f in filters {
        if !FILTER_KEYS.contains(&f.key.as_str()) {
            return Err(validation(format!(
                "1 validation error detected: Value '{}' at 'filters.1.member.key' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
                f.key,
                FILTER_KEYS.join(", ")
            )));
        }
    }
    Ok(())
}

/// Prefix match of any value (a leading `!` negates it) against the fields the key names.
fn filter_matches(s: &Secret, f: &ListFilter) -> bool {
    let mut fields: Vec<&str> = Vec::new();
    let key = f.key.as_str();
    if matches!(key, "name" | "all") {
        fields.push(&s.name);
    }
    if matches!(key, "description" | "all") {
        fields.extend(s.description.as_deref());
    }
    if matches!(key, "tag-key" | "all") {
        fields.extend(s.tags.iter().map(|(k, _)| k.as_str()));
    }
    if matches!(key, "tag-value" | "all") {
        fields.extend(s.tags.iter().map(|(_, v)| v.as_str()));
    }
    f.values.iter().any(|v| match v.strip_prefix('!') {
        Some(neg) => !fields.iter().any(|x| x.starts_with(neg)),
        None => fields.iter().any(|x| x.starts_with(v.as_str())),
    })
}

fn check_name(name: &str) -> Result<(), AwsError> {
    if name.is_empty() || name.chars().count() > 512 {
        return Err(validation(format!(
            "1 validation error detected: Value at 'name' failed to satisfy constraint: Member must have length {}",
            if name.is_empty() {
                "greater than or equal to 1"
            } else {
                "less than or equal to 512"
            }
        )));
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/_+=.@-".contains(&b))
    {
        return Err(invalid_parameter(
            "Invalid name. Must be a valid name containing alphanumeric characters, or any of the following: -/_+=.@!",
        ));
    }
    Ok(())
}

fn check_token(token: &str) -> Result<(), AwsError> {
    let n = token.chars().count();
    if !(32..=64).contains(&n) {
        return Err(validation(format!(
            "1 validation error detected: Value at 'clientRequestToken' failed to satisfy constraint: Member must have length {}",
            if n < 32 {
                "greater than or equal to 32"
            } else {
                "less than or equal to 64"
            }
        )));
    }
    Ok(())
}

fn check_stages(stages: &[String]) -> Result<(), AwsError> {
    if stages.len() > 20 {
        return Err(validation(
            "1 validation error detected: Value at 'versionStages' failed to satisfy constraint: Member must have length less than or equal to 20",
        ));
    }
    if stages
        .iter()
        .any(|s| s.is_empty() || s.chars().count() > 256)
    {
        return Err(validation(
            "1 validation error detected: Value at 'versionStages' failed to satisfy constraint: Member must satisfy constraint: [Member must have length less than or equal to 256, Member must have length greater than or equal to 1]",
        ));
    }
    Ok(())
}

fn check_tags(tags: &[(String, String)]) -> Result<(), AwsError> {
    for (k, v) in tags {
        if k.is_empty() || k.chars().count() > 128 || v.chars().count() > 256 {
            return Err(validation(format!(
                "1 validation error detected: Value '{k}' at 'tags' failed to satisfy constraint: keys are 1-128 characters, values at most 256"
            )));
        }
        if k.starts_with("aws:") {
            return Err(invalid_parameter(
                "Invalid tag key: keys beginning with aws: are reserved",
            ));
        }
    }
    Ok(())
}

fn check_policy(policy: &str) -> Result<(), AwsError> {
    match serde_json::from_str::<serde_json::Value>(policy) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        _ => Err(AwsError::bad_request(
            "MalformedPolicyDocumentException",
            "The resource policy is not a valid JSON policy document.",
        )),
    }
}

fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut rng = rand::rng();
    (0..6)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

fn day(ms: i64) -> i64 {
    ms - ms.rem_euclid(DAY_MS)
}

/// Puts `stages` on version `vid`, taking each from whichever version held it. AWSCURRENT
/// moving leaves AWSPREVIOUS on the version that had it, as AWS does.
fn attach_stages(s: &mut Secret, vid: &str, stages: &[String]) {
    for stage in stages {
        if stage == CURRENT {
            let prev = s
                .version_with_stage(CURRENT)
                .map(|v| v.id.clone())
                .filter(|id| id != vid);
            if let Some(prev) = prev {
                for v in &mut s.versions {
                    v.stages.retain(|x| x != PREVIOUS);
                }
                if let Some(v) = s.versions.iter_mut().find(|v| v.id == prev) {
                    v.stages.push(PREVIOUS.to_string());
                }
            }
        }
        for v in &mut s.versions {
            if v.id != vid {
                v.stages.retain(|x| x != stage);
            } else if !v.stages.contains(stage) {
                v.stages.push(stage.clone());
            }
        }
    }
    // Deprecated versions beyond AWS's cap go, oldest first.
    while s.versions.len() > MAX_VERSIONS {
        match s.versions.iter().position(|v| v.stages.is_empty()) {
            Some(i) => {
                s.versions.remove(i);
            }
            None => break,
        }
    }
}

fn page_token(offset: usize) -> String {
    B64.encode(offset.to_string())
}

fn page_offset(token: Option<&str>) -> Result<usize, AwsError> {
    match token {
        None => Ok(0),
        Some(t) => B64
            .decode(t)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
            .and_then(|s| s.parse().ok())
            .ok_or_else(invalid_token),
    }
}

fn max_results(n: Option<i64>, max: i64) -> Result<usize, AwsError> {
    match n {
        None => Ok(max as usize),
        Some(n) if (1..=max).contains(&n) => Ok(n as usize),
        Some(n) => Err(validation(format!(
            "1 validation error detected: Value '{n}' at 'maxResults' failed to satisfy constraint: Member must have value {}",
            if n < 1 {
                "greater than or equal to 1".to_string()
            } else {
                format!("less than or equal to {max}")
            }
        ))),
    }
}

type Secrets = BTreeMap<String, Secret>;

impl SecretsManagerService {
    fn arn(&self, region: &str, name: &str) -> String {
        format!(
            "arn:aws:secretsmanager:{region}:{}:secret:{name}-{}",
            self.account_id,
            random_suffix()
        )
    }

    /// The name of the secret `id` names.
    pub(super) fn resolve(secrets: &Secrets, id: &str) -> Option<String> {
        if secrets.contains_key(id) {
            return Some(id.to_string());
        }
        if id.starts_with("arn:") {
            return secrets
                .values()
                .find(|s| {
                    s.arn == id
                        || s.arn
                            .len()
                            .checked_sub(7)
                            .and_then(|n| s.arn.get(..n))
                            .is_some_and(|partial| partial == id)
                })
                .map(|s| s.name.clone());
        }
        None
    }

    /// Drops secrets whose recovery window has ended.
    pub(super) fn purge(&self, region: &str, secrets: &mut Secrets) -> Result<(), AwsError> {
        let now = now_ms();
        let due: Vec<String> = secrets
            .values()
            .filter(|s| s.deletion_ms.is_some_and(|d| d <= now))
            .map(|s| s.name.clone())
            .collect();
        if due.is_empty() {
            return Ok(());
        }
        self.store
            .write(|tx| due.iter().try_for_each(|n| state::delete(tx, region, n)))
            .map_err(store_error)?;
        for n in due {
            secrets.remove(&n);
        }
        Ok(())
    }

    /// Runs `f` on the region's secrets (expired deletions purged first).
    fn with_region<R>(
        &self,
        region: &str,
        f: impl FnOnce(&mut Secrets) -> Result<R, AwsError>,
    ) -> Result<R, AwsError> {
        let mut all = self.lock();
        let secrets = all.entry(region.to_string()).or_default();
        self.purge(region, secrets)?;
        f(secrets)
    }

    /// Applies `f` to a copy of the secret, commits it, then keeps it, and rebuilds its
    /// replicas from it. `live` refuses a secret pending deletion; a replica refuses every
    /// change (they come from its primary).
    fn mutate<R>(
        &self,
        region: &str,
        id: &str,
        live: bool,
        f: impl FnOnce(&mut Secret) -> Result<R, AwsError>,
    ) -> Result<R, AwsError> {
        let (out, replicated) = self.with_region(region, |secrets| {
            let name = Self::resolve(secrets, id).ok_or_else(not_found)?;
            let current = secrets.get(&name).ok_or_else(not_found)?;
            if current.primary_region.is_some() {
                return Err(replica_refused());
            }
            if live && current.deletion_ms.is_some() {
                return Err(marked_for_deletion());
            }
            let mut s = current.clone();
            let out = f(&mut s)?;
            self.store
                .write(|tx| state::save(tx, region, &s))
                .map_err(store_error)?;
            let replicated = (!s.replicas.is_empty()).then(|| name.clone());
            secrets.insert(name, s);
            Ok((out, replicated))
        })?;
        if let Some(name) = replicated {
            self.sync_replicas(region, &name)?;
        }
        Ok(out)
    }

    fn key_for(s: &Secret) -> &str {
        s.kms_key_id.as_deref().unwrap_or(DEFAULT_KEY)
    }

    /// Adds version `vid` holding `value` (sealed under the secret's key) with `stages`. An
    /// existing `vid` with the same value is the idempotent retry AWS ignores; with another
    /// value it is refused.
    fn add_version(
        &self,
        region: &str,
        s: &mut Secret,
        vid: &str,
        value: &SecretValueInput,
        stages: &[String],
    ) -> Result<bool, AwsError> {
        value.check()?;
        if let Some(existing) = s.versions.iter().find(|v| v.id == vid) {
            let same = self.open(region, s, existing)? == *value;
            return if same {
                Ok(false)
            } else {
                Err(AwsError::bad_request(
                    "ResourceExistsException",
                    "You can't modify an existing version, you can only create a new version.",
                ))
            };
        }
        let (sealed, key_arn) = sealed::seal(
            &self.kms,
            region,
            Self::key_for(s),
            &s.arn,
            vid,
            value.bytes(),
        )?;
        let now = now_ms();
        s.versions.push(SecretVersion {
            id: vid.to_string(),
            stages: Vec::new(),
            created_ms: now,
            last_accessed_ms: None,
            sealed,
            binary: matches!(value, SecretValueInput::Binary(_)),
            kms_key_arn: key_arn,
        });
        s.last_changed_ms = now;
        attach_stages(s, vid, stages);
        Ok(true)
    }

    fn open(
        &self,
        region: &str,
        s: &Secret,
        v: &SecretVersion,
    ) -> Result<SecretValueInput, AwsError> {
        let bytes = sealed::open(&self.kms, region, &s.arn, &v.id, &v.sealed)?;
        if v.binary {
            Ok(SecretValueInput::Binary(bytes))
        } else {
            String::from_utf8(bytes)
                .map(SecretValueInput::String)
                .map_err(|_| AwsError::internal("secretsmanager: stored string is not UTF-8"))
        }
    }

    /// `(arn, name, version id when a value was given)`.
    pub fn create_secret(
        &self,
        region: &str,
        input: CreateSecretInput,
    ) -> Result<(String, String, Option<String>), AwsError> {
        check_name(&input.name)?;
        check_tags(&input.tags)?;
        if let Some(d) = &input.description
            && d.chars().count() > 2048
        {
            return Err(validation(
                "1 validation error detected: Value at 'description' failed to satisfy constraint: Member must have length less than or equal to 2048",
            ));
        }
        let token = input
            .client_request_token
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        check_token(&token)?;
        check_regions(region, &input.replicas)?;
        let created = self.with_region(region, |secrets| {
            if let Some(existing) = secrets.get(&input.name) {
                if existing.deletion_ms.is_some() {
                    return Err(AwsError::bad_request(
                        "InvalidRequestException",
                        "You can't create this secret because a secret with this name is already scheduled for deletion.",
                    ));
                }
                // The idempotent retry of the call that created it.
                if let (Some(v), Some(value)) = (
                    existing.versions.iter().find(|v| v.id == token),
                    &input.value,
                ) && self.open(region, existing, v)? == *value
                {
                    return Ok((existing.arn.clone(), existing.name.clone(), Some(token)));
                }
                return Err(AwsError::bad_request(
                    "ResourceExistsException",
                    format!(
                        "The operation failed because the secret {} already exists.",
                        input.name
                    ),
                ));
            }
            let now = now_ms();
            if let Some(k) = &input.kms_key_id {
                // Fails now, as AWS does, for a key that does not exist.
                self.kms.describe_key(region, k).map_err(|e| {
                    AwsError::bad_request(
                        "InvalidParameterException",
                        format!("The KMS key {k} is not valid: {}", e.message),
                    )
                })?;
            }
            let mut s = Secret {
                name: input.name.clone(),
                arn: self.arn(region, &input.name),
                description: input.description.clone(),
                kms_key_id: input.kms_key_id.clone(),
                tags: input.tags.clone(),
                policy: None,
                created_ms: now,
                last_changed_ms: now,
                last_accessed_ms: None,
                deletion_ms: None,
                versions: Vec::new(),
                primary_region: None,
                replicas: Vec::new(),
            };
            let vid = match &input.value {
                Some(v) => {
                    self.add_version(region, &mut s, &token, v, &[CURRENT.to_string()])?;
                    Some(token)
                }
                None => None,
            };
            self.store
                .write(|tx| state::save(tx, region, &s))
                .map_err(store_error)?;
            let out = (s.arn.clone(), s.name.clone(), vid);
            secrets.insert(s.name.clone(), s);
            Ok(out)
        })?;
        if !input.replicas.is_empty() {
            self.replicate_secret_to_regions(
                region,
                &created.1,
                &input.replicas,
                input.force_overwrite_replicas,
            )?;
        }
        Ok(created)
    }

    pub fn get_secret_value(
        &self,
        region: &str,
        id: &str,
        version_id: Option<&str>,
        stage: Option<&str>,
    ) -> Result<SecretValue, AwsError> {
        self.with_region(region, |secrets| {
            let name = Self::resolve(secrets, id).ok_or_else(not_found)?;
            let s = secrets.get_mut(&name).ok_or_else(not_found)?;
            if s.deletion_ms.is_some() {
                return Err(marked_for_deletion());
            }
            let v = match (version_id, stage) {
                (Some(vid), stage) => {
                    let v = s.versions.iter().find(|v| v.id == vid).ok_or_else(|| {
                        AwsError::bad_request(
                            "ResourceNotFoundException",
                            format!("Secrets Manager can't find the specified secret value for VersionId: {vid}"),
                        )
                    })?;
                    if let Some(st) = stage
                        && !v.stages.iter().any(|x| x == st)
                    {
                        return Err(invalid_parameter(
                            "You provided a VersionStage that is not associated to the provided VersionId.",
                        ));
                    }
                    v
                }
                (None, stage) => {
                    let st = stage.unwrap_or(CURRENT);
                    s.version_with_stage(st).ok_or_else(|| {
                        AwsError::bad_request(
                            "ResourceNotFoundException",
                            format!("Secrets Manager can't find the specified secret value for staging label: {st}"),
                        )
                    })?
                }
            };
            let value = self.open(region, s, v)?;
            let out = SecretValue {
                arn: s.arn.clone(),
                name: s.name.clone(),
                version_id: v.id.clone(),
                value,
                stages: v.stages.clone(),
                created_ms: v.created_ms,
            };
            // LastAccessedDate has day granularity: written when the day changes.
            let today = day(now_ms());
            if s.last_accessed_ms != Some(today) {
                let mut updated = s.clone();
                updated.last_accessed_ms = Some(today);
                if let Some(v) = updated.versions.iter_mut().find(|v| v.id == out.version_id) {
                    v.last_accessed_ms = Some(today);
                }
                self.store
                    .write(|tx| state::save(tx, region, &updated))
                    .map_err(store_error)?;
                *s = updated;
            }
            Ok(out)
        })
    }

    /// `(arn, name, version id, stages)`.
    pub fn put_secret_value(
        &self,
        region: &str,
        id: &str,
        token: Option<String>,
        value: Option<SecretValueInput>,
        stages: Option<Vec<String>>,
    ) -> Result<(String, String, String, Vec<String>), AwsError> {
        let value = value.ok_or_else(|| {
            invalid_parameter("You must provide either SecretString or SecretBinary.")
        })?;
        let vid = token.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        check_token(&vid)?;
        let stages = stages.unwrap_or_else(|| vec![CURRENT.to_string()]);
        check_stages(&stages)?;
        self.mutate(region, id, true, |s| {
            self.add_version(region, s, &vid, &value, &stages)?;
            let held = s
                .versions
                .iter()
                .find(|v| v.id == vid)
                .map(|v| v.stages.clone())
                .unwrap_or_default();
            Ok((s.arn.clone(), s.name.clone(), vid.clone(), held))
        })
    }

    /// `(arn, name, version id when a value was given)`.
    pub fn update_secret(
        &self,
        region: &str,
        id: &str,
        token: Option<String>,
        description: Option<String>,
        kms_key_id: Option<String>,
        value: Option<SecretValueInput>,
    ) -> Result<(String, String, Option<String>), AwsError> {
        let vid = token.unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        check_token(&vid)?;
        if let Some(k) = &kms_key_id {
            self.kms.describe_key(region, k).map_err(|e| {
                invalid_parameter(format!("The KMS key {k} is not valid: {}", e.message))
            })?;
        }
        self.mutate(region, id, true, |s| {
            if let Some(d) = description {
                s.description = Some(d);
                s.last_changed_ms = now_ms();
            }
            if let Some(k) = kms_key_id {
                // Existing versions stay under the key that sealed them, as on AWS; new ones
                // use this key.
                s.kms_key_id = Some(k);
                s.last_changed_ms = now_ms();
            }
            let out_vid = match &value {
                Some(v) => {
                    self.add_version(region, s, &vid, v, &[CURRENT.to_string()])?;
                    Some(vid.clone())
                }
                None => None,
            };
            Ok((s.arn.clone(), s.name.clone(), out_vid))
        })
    }

    pub fn describe_secret(&self, region: &str, id: &str) -> Result<Secret, AwsError> {
        self.with_region(region, |secrets| {
            let name = Self::resolve(secrets, id).ok_or_else(not_found)?;
            secrets.get(&name).cloned().ok_or_else(not_found)
        })
    }

    /// Secrets matching every filter, in created-date order (`desc` reverses it); a page and the
    /// token of the next.
    #[allow(clippy::too_many_arguments)]
    pub fn list_secrets(
        &self,
        region: &str,
        filters: &[ListFilter],
        max: Option<i64>,
        next_token: Option<&str>,
        sort_order: Option<&str>,
        sort_by: Option<&str>,
        include_planned_deletion: bool,
    ) -> Result<(Vec<Secret>, Option<String>), AwsError> {
        check_filters(filters)?;
        let max = max_results(max, 100)?;
        let offset = page_offset(next_token)?;
        let descending = match sort_order {
            None | Some("asc") => false,
            Some("desc") => true,
            Some(o) => {
                return Err(validation(format!(
                    "1 validation error detected: Value '{o}' at 'sortOrder' failed to satisfy constraint: Member must satisfy enum value set: [asc, desc]"
                )));
            }
        };
        self.with_region(region, |secrets| {
            let mut all: Vec<Secret> = secrets
                .values()
                .filter(|s| include_planned_deletion || s.deletion_ms.is_none())
                .filter(|s| filters.iter().all(|f| filter_matches(s, f)))
                .cloned()
                .collect();
            match sort_by {
                None | Some("created-date") => all.sort_by_key(|s| s.created_ms),
                Some("last-changed-date") => all.sort_by_key(|s| s.last_changed_ms),
                Some("last-accessed-date") => all.sort_by_key(|s| s.last_accessed_ms),
                Some("name") => all.sort_by(|a, b| a.name.cmp(&b.name)),
                Some(o) => {
                    return Err(validation(format!(
                        "1 validation error detected: Value '{o}' at 'sortBy' failed to satisfy constraint: Member must satisfy enum value set: [created-date, last-accessed-date, last-changed-date, name]"
                    )));
                }
            }
            if descending {
                all.reverse();
            }
            let next = (all.len() > offset + max).then(|| page_token(offset + max));
            Ok((all.into_iter().skip(offset).take(max).collect(), next))
        })
    }

    /// `(arn, name)`.
    pub fn update_secret_version_stage(
        &self,
        region: &str,
        id: &str,
        stage: &str,
        remove_from: Option<&str>,
        move_to: Option<&str>,
    ) -> Result<(String, String), AwsError> {
        check_stages(&[stage.to_string()])?;
        self.mutate(region, id, true, |s| {
            let holder = s.version_with_stage(stage).map(|v| v.id.clone());
            if let Some(vid) = remove_from
                && holder.as_deref() != Some(vid)
            {
                return Err(invalid_parameter(format!(
                    "The staging label {stage} is not attached to version {vid}."
                )));
            }
            match move_to {
                Some(target) => {
                    if !s.versions.iter().any(|v| v.id == target) {
                        return Err(invalid_parameter(format!(
                            "Secrets Manager can't find the specified secret version: {target}"
                        )));
                    }
                    if let Some(h) = &holder
                        && h != target
                        && remove_from.is_none()
                    {
                        return Err(invalid_parameter(format!(
                            "The parameter RemoveFromVersionId can't be empty. Staging label {stage} is currently attached to version {h}, so you must explicitly reference that version in RemoveFromVersionId."
                        )));
                    }
                    attach_stages(s, target, &[stage.to_string()]);
                }
                None => {
                    if remove_from.is_none() {
                        return Err(invalid_parameter(
                            "You must specify at least one of RemoveFromVersionId or MoveToVersionId.",
                        ));
                    }
                    if stage == CURRENT {
                        return Err(invalid_parameter(
                            "You can't remove the staging label AWSCURRENT from a version without moving it to another version (MoveToVersionId).",
                        ));
                    }
                    for v in &mut s.versions {
                        v.stages.retain(|x| x != stage);
                    }
                }
            }
            s.last_changed_ms = now_ms();
            Ok((s.arn.clone(), s.name.clone()))
        })
    }

    /// The secret, a page of its versions (newest first) and the next token.
    pub fn list_secret_version_ids(
        &self,
        region: &str,
        id: &str,
        max: Option<i64>,
        next_token: Option<&str>,
        include_deprecated: bool,
    ) -> Result<(Secret, Vec<SecretVersion>, Option<String>), AwsError> {
        let max = max_results(max, 100)?;
        let offset = page_offset(next_token)?;
        let s = self.describe_secret(region, id)?;
        let all: Vec<SecretVersion> = s
            .versions
            .iter()
            .rev()
            .filter(|v| include_deprecated || !v.stages.is_empty())
            .cloned()
            .collect();
        let next = (all.len() > offset + max).then(|| page_token(offset + max));
        let page = all.into_iter().skip(offset).take(max).collect();
        Ok((s, page, next))
    }

    pub fn tag_resource(
        &self,
        region: &str,
        id: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        check_tags(tags)?;
        self.put_tags(region, id, tags)
    }

    /// CloudFormation's `aws:cloudformation:*` tags on a secret it creates, which `TagResource`
    /// refuses from users.
    pub fn add_system_tags(
        &self,
        region: &str,
        id: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        self.put_tags(region, id, tags)
    }

    fn put_tags(&self, region: &str, id: &str, tags: &[(String, String)]) -> Result<(), AwsError> {
        self.mutate(region, id, false, |s| {
            for (k, v) in tags {
                match s.tags.iter_mut().find(|(key, _)| key == k) {
                    Some(t) => t.1 = v.clone(),
                    None => s.tags.push((k.clone(), v.clone())),
                }
            }
            Ok(())
        })
    }

    pub fn untag_resource(&self, region: &str, id: &str, keys: &[String]) -> Result<(), AwsError> {
        self.mutate(region, id, false, |s| {
            s.tags.retain(|(k, _)| !keys.contains(k));
            Ok(())
        })
    }

    /// `(arn, name)`.
    pub fn put_resource_policy(
        &self,
        region: &str,
        id: &str,
        policy: &str,
    ) -> Result<(String, String), AwsError> {
        check_policy(policy)?;
        self.mutate(region, id, true, |s| {
            s.policy = Some(policy.to_string());
            Ok((s.arn.clone(), s.name.clone()))
        })
    }

    /// `(arn, name, policy)`.
    pub fn get_resource_policy(
        &self,
        region: &str,
        id: &str,
    ) -> Result<(String, String, Option<String>), AwsError> {
        let s = self.describe_secret(region, id)?;
        Ok((s.arn, s.name, s.policy))
    }

    /// `(arn, name)`.
    pub fn delete_resource_policy(
        &self,
        region: &str,
        id: &str,
    ) -> Result<(String, String), AwsError> {
        self.mutate(region, id, false, |s| {
            s.policy = None;
            Ok((s.arn.clone(), s.name.clone()))
        })
    }

    /// `(arn, name, deletion date ms)`; `force` deletes now.
    pub fn delete_secret(
        &self,
        region: &str,
        id: &str,
        window_days: Option<i64>,
        force: bool,
    ) -> Result<(String, String, i64), AwsError> {
        if force && window_days.is_some() {
            return Err(invalid_parameter(
                "You can't use ForceDeleteWithoutRecovery in conjunction with RecoveryWindowInDays.",
            ));
        }
        let days = window_days.unwrap_or(30);
        if !(7..=30).contains(&days) {
            return Err(invalid_parameter(
                "The RecoveryWindowInDays value must be between 7 and 30 days (inclusive).",
            ));
        }
        let now = now_ms();
        self.with_region(region, |secrets| {
            let Some(name) = Self::resolve(secrets, id) else {
                if force {
                    // AWS answers a forced delete of a missing secret without an error.
                    return Ok((String::new(), id.to_string(), now));
                }
                return Err(not_found());
            };
            let s = secrets.get(&name).ok_or_else(not_found)?;
            if s.primary_region.is_some() {
                return Err(replica_refused());
            }
            if !s.replicas.is_empty() {
                return Err(has_replicas(s));
            }
            if force {
                self.store
                    .write(|tx| state::delete(tx, region, &name))
                    .map_err(store_error)?;
                let out = (s.arn.clone(), s.name.clone(), now);
                secrets.remove(&name);
                return Ok(out);
            }
            if s.deletion_ms.is_some() {
                return Err(AwsError::bad_request(
                    "InvalidRequestException",
                    "You can't perform this operation on the secret because it was already scheduled for deletion.",
                ));
            }
            let mut updated = s.clone();
            let when = now + days * DAY_MS;
            updated.deletion_ms = Some(when);
            self.store
                .write(|tx| state::save(tx, region, &updated))
                .map_err(store_error)?;
            let out = (updated.arn.clone(), updated.name.clone(), when);
            secrets.insert(name, updated);
            Ok(out)
        })
    }

    /// `(arn, name)`.
    pub fn restore_secret(&self, region: &str, id: &str) -> Result<(String, String), AwsError> {
        self.mutate(region, id, false, |s| {
            s.deletion_ms = None;
            Ok((s.arn.clone(), s.name.clone()))
        })
    }

    /// Values of the named secrets (errors per secret), or of those matching `filters`.
    pub fn batch_get_secret_value(
        &self,
        region: &str,
        ids: &[String],
        filters: &[ListFilter],
        max: Option<i64>,
        next_token: Option<&str>,
    ) -> Result<BatchResult, AwsError> {
        if !ids.is_empty() && !filters.is_empty() {
            return Err(invalid_parameter(
                "Either 'SecretIdList' or 'Filters' must be provided, but not both.",
            ));
        }
        if ids.is_empty() && filters.is_empty() {
            return Err(invalid_parameter(
                "Either 'SecretIdList' or 'Filters' must be provided.",
            ));
        }
        if !ids.is_empty() && max.is_some() {
            return Err(invalid_parameter(
                "'MaxResults' can only be used with 'Filters'.",
            ));
        }
        if ids.len() > 20 {
            return Err(validation(
                "1 validation error detected: Value at 'secretIdList' failed to satisfy constraint: Member must have length less than or equal to 20",
            ));
        }
        let mut out = BatchResult::default();
        let ids: Vec<String> = if ids.is_empty() {
            let max = max_results(max, 20)?;
            let (page, next) = self.list_secrets(
                region,
                filters,
                Some(max as i64),
                next_token,
                None,
                None,
                false,
            )?;
            out.next_token = next;
            page.into_iter().map(|s| s.arn).collect()
        } else {
            ids.to_vec()
        };
        for id in ids {
            match self.get_secret_value(region, &id, None, None) {
                Ok(v) => out.values.push(v),
                Err(e) => out.errors.push((id, e.code, e.message)),
            }
        }
        Ok(out)
    }
}

/// BatchGetSecretValue's answer.
#[derive(Debug, Default)]
pub struct BatchResult {
    pub values: Vec<SecretValue>,
    /// `(secret id, error code, message)`.
    pub errors: Vec<(String, String, String)>,
    pub next_token: Option<String>,
}
