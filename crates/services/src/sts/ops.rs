//! STS's typed operations, callable in-process (the CloudFormation engine and other services use
//! them directly; the wire adapter only decodes and encodes).
//!
//! Role existence is not checked: IAM is not emulated yet (a later issue adds it), so any
//! well-formed role ARN can be assumed, as LocalStack does without enforcement.

use super::StsService;
use chrono::{DateTime, Utc};
use cumulo_wire::AwsError;
use rand::Rng;
use rand::distr::Alphanumeric;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// A set of temporary credentials exactly as STS returns them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Credentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: String,
    pub expiration: DateTime<Utc>,
}

/// `AssumedRoleUser` of an AssumeRole response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AssumedRoleUser {
    pub assumed_role_id: String,
    pub arn: String,
}

/// Who a caller is (`GetCallerIdentity`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CallerIdentity {
    pub user_id: String,
    pub account: String,
    pub arn: String,
}

/// `FederatedUser` of a GetFederationToken response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FederatedUser {
    pub federated_user_id: String,
    pub arn: String,
}

/// Credentials STS issued, with the identity whoever holds them acts as.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IssuedCredentials {
    pub credentials: Credentials,
    pub identity: CallerIdentity,
    pub assumed_role_user: Option<AssumedRoleUser>,
    #[serde(default)]
    pub federated_user: Option<FederatedUser>,
}

/// Input of `AssumeRole` (the policy parameters are accepted and not enforced).
#[derive(Debug, Clone, Default)]
pub struct AssumeRoleInput {
    pub role_arn: String,
    pub role_session_name: String,
    pub duration_seconds: Option<i64>,
    pub policy: Option<String>,
    /// Echoed in the response and kept with the session, as AWS does.
    pub source_identity: Option<String>,
}

/// AWS's bounds on role sessions (the role's MaxSessionDuration can only lower the upper one,
/// and without IAM every role is taken to allow the maximum).
const ROLE_MIN_SECONDS: i64 = 900;
const ROLE_MAX_SECONDS: i64 = 43_200;
const ROLE_DEFAULT_SECONDS: i64 = 3_600;
const ROLE_CHAINING_MAX_SECONDS: i64 = 3_600;
/// GetSessionToken's bounds; the account root user is capped at one hour, as AWS documents.
const SESSION_MIN_SECONDS: i64 = 900;
const SESSION_MAX_SECONDS: i64 = 129_600;
const ROOT_SESSION_CAP_SECONDS: i64 = 3_600;
const POLICY_MAX_CHARS: usize = 2_048;

fn constraint(value: &str, field: &str, rule: &str) -> AwsError {
    AwsError::validation(format!(
        "1 validation error detected: Value {value} at '{field}' failed to satisfy constraint: Member must {rule}"
    ))
}

fn check_duration(field: &str, d: i64, min: i64, max: i64) -> Result<(), AwsError> {
    if d < min {
        return Err(constraint(
            &format!("'{d}'"),
            field,
            &format!("have value greater than or equal to {min}"),
        ));
    }
    if d > max {
        return Err(constraint(
            &format!("'{d}'"),
            field,
            &format!("have value less than or equal to {max}"),
        ));
    }
    Ok(())
}

fn random_upper_alnum(n: usize) -> String {
    rand::rng()
        .sample_iter(Alphanumeric)
        .map(|c| (c as char).to_ascii_uppercase())
        .take(n)
        .collect()
}

fn random_alnum(n: usize) -> String {
    rand::rng()
        .sample_iter(Alphanumeric)
        .map(char::from)
        .take(n)
        .collect()
}

fn new_credentials(duration_seconds: i64) -> Credentials {
    Credentials {
        access_key_id: format!("ASIA{}", random_upper_alnum(16)),
        secret_access_key: random_alnum(40),
        session_token: format!("FQoGZXIvYXdzE{}", random_alnum(343)),
        expiration: Utc::now() + chrono::Duration::seconds(duration_seconds),
    }
}

/// A role's unique id, stable for the role ARN (AWS assigns one per role; without IAM the ARN's
/// hash stands in so every session of a role shares it).
fn role_id(role_arn: &str) -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    let digest = Sha256::digest(role_arn.as_bytes());
    let tail: String = digest
        .iter()
        .take(17)
        .map(|b| ALPHABET[(*b as usize) % ALPHABET.len()] as char)
        .collect();
    format!("AROA{tail}")
}

/// Splits `arn:aws:iam::ACCOUNT:role/PATH/NAME` into account and role name.
fn parse_role_arn(arn: &str) -> Option<(&str, &str)> {
    let mut parts = arn.splitn(6, ':');
    if parts.next()? != "arn" {
        return None;
    }
    let _partition = parts.next()?;
    let service = parts.next()?;
    let _region = parts.next()?;
    let account = parts.next()?;
    let resource = parts.next()?;
    let path = resource.strip_prefix("role/")?;
    let name = path.rsplit('/').next()?;
    if service != "iam" || name.is_empty() || account.is_empty() {
        return None;
    }
    Some((account, name))
}

impl StsService {
    /// `GetCallerIdentity`: the identity behind an access key. Keys STS issued map to the role
    /// session (or the caller who asked for a session token); any other key is the account's
    /// root user, as LocalStack answers.
    pub fn get_caller_identity(&self, access_key: Option<&str>) -> CallerIdentity {
        access_key
            .and_then(|k| self.creds.get(k))
            .map(|c| c.identity)
            .unwrap_or_else(|| self.root_identity())
    }

    fn root_identity(&self) -> CallerIdentity {
        CallerIdentity {
            user_id: self.account_id.clone(),
            account: self.account_id.clone(),
            arn: format!("arn:aws:iam::{}:root", self.account_id),
        }
    }

    /// `AssumeRole`: fresh `ASIA` credentials acting as `assumed-role/ROLE/SESSION`. A caller
    /// holding assumed-role credentials is role chaining, which AWS limits to one hour.
    pub fn assume_role(
        &self,
        caller_access_key: Option<&str>,
        input: AssumeRoleInput,
    ) -> Result<IssuedCredentials, AwsError> {
        let arn_len = input.role_arn.chars().count();
        if arn_len < 20 {
            return Err(constraint(
                &format!("'{}'", input.role_arn),
                "roleArn",
                "have length greater than or equal to 20",
            ));
        }
        if arn_len > 2048 {
            return Err(constraint(
                &format!("'{}'", input.role_arn),
                "roleArn",
                "have length less than or equal to 2048",
            ));
        }
        let session = &input.role_session_name;
        let session_len = session.chars().count();
        if session_len < 2 {
            return Err(constraint(
                &format!("'{session}'"),
                "roleSessionName",
                "have length greater than or equal to 2",
            ));
        }
        if session_len > 64 {
            return Err(constraint(
                &format!("'{session}'"),
                "roleSessionName",
                "have length less than or equal to 64",
            ));
        }
        if !session
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_+=,.@-".contains(c))
        {
            return Err(constraint(
                &format!("'{session}'"),
                "roleSessionName",
                "satisfy regular expression pattern: [\\w+=,.@-]*",
            ));
        }
        let duration = input.duration_seconds.unwrap_or(ROLE_DEFAULT_SECONDS);
        check_duration(
            "durationSeconds",
            duration,
            ROLE_MIN_SECONDS,
            ROLE_MAX_SECONDS,
        )?;
        let chaining = caller_access_key
            .and_then(|k| self.creds.get(k))
            .is_some_and(|c| c.assumed_role_user.is_some());
        if chaining && duration > ROLE_CHAINING_MAX_SECONDS {
            return Err(AwsError::validation(
                "The requested DurationSeconds exceeds the 1 hour session limit for roles assumed by role chaining.",
            ));
        }
        if let Some(p) = &input.policy
            && p.chars().count() > POLICY_MAX_CHARS
        {
            return Err(constraint(
                "'policy'",
                "policy",
                &format!("have length less than or equal to {POLICY_MAX_CHARS}"),
            ));
        }
        if let Some(si) = &input.source_identity {
            let len = si.chars().count();
            let ok = (2..=64).contains(&len)
                && si
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_+=,.@-".contains(c));
            if !ok {
                return Err(constraint(
                    &format!("'{si}'"),
                    "sourceIdentity",
                    "satisfy regular expression pattern: [\\w+=,.@-]* and have length between 2 and 64",
                ));
            }
            if si.to_ascii_lowercase().starts_with("aws:") {
                return Err(AwsError::validation(
                    "SourceIdentity cannot start with the prefix 'aws:'",
                ));
            }
        }
        let (account, role_name) = parse_role_arn(&input.role_arn)
            .ok_or_else(|| AwsError::validation(format!("{} is invalid", input.role_arn)))?;
        // AWS answers a role that does not exist (or whose ARN names another path) as it
        // answers one the caller may not assume.
        let role = self
            .iam
            .get_role(account, role_name)
            .ok()
            .filter(|r| r.arn == input.role_arn);
        let Some(role) = role else {
            let caller = self.get_caller_identity(caller_access_key).arn;
            return Err(AwsError::new(
                http::StatusCode::FORBIDDEN,
                "AccessDenied",
                format!(
                    "User: {caller} is not authorized to perform: sts:AssumeRole on resource: {}",
                    input.role_arn
                ),
            ));
        };
        if duration > role.max_session_duration {
            return Err(AwsError::validation(
                "The requested DurationSeconds exceeds the MaxSessionDuration set for this role.",
            ));
        }
        let assumed_role_id = format!("{}:{session}", role_id(&input.role_arn));
        let arn = format!("arn:aws:sts::{account}:assumed-role/{role_name}/{session}");
        let issued = IssuedCredentials {
            credentials: new_credentials(duration),
            identity: CallerIdentity {
                user_id: assumed_role_id.clone(),
                account: account.to_string(),
                arn: arn.clone(),
            },
            assumed_role_user: Some(AssumedRoleUser {
                assumed_role_id,
                arn,
            }),
            federated_user: None,
        };
        self.creds.insert(issued.clone())?;
        Ok(issued)
    }

    /// `GetSessionToken`: credentials acting as the caller. Session credentials cannot ask for
    /// more (AWS answers AccessDenied), and the root user's sessions last at most an hour.
    pub fn get_session_token(
        &self,
        access_key: Option<&str>,
        duration_seconds: Option<i64>,
    ) -> Result<IssuedCredentials, AwsError> {
        if let Some(d) = duration_seconds {
            check_duration(
                "durationSeconds",
                d,
                SESSION_MIN_SECONDS,
                SESSION_MAX_SECONDS,
            )?;
        }
        if access_key.and_then(|k| self.creds.get(k)).is_some() {
            return Err(AwsError::new(
                http::StatusCode::FORBIDDEN,
                "AccessDenied",
                "Cannot call GetSessionToken with session credentials",
            ));
        }
        let identity = self.root_identity();
        let duration = duration_seconds
            .unwrap_or(ROOT_SESSION_CAP_SECONDS)
            .min(ROOT_SESSION_CAP_SECONDS);
        let issued = IssuedCredentials {
            credentials: new_credentials(duration),
            identity,
            assumed_role_user: None,
            federated_user: None,
        };
        self.creds.insert(issued.clone())?;
        Ok(issued)
    }

    /// `GetFederationToken`: credentials for `federated-user/NAME` in the caller's account. As in
    /// AWS, session credentials cannot call it and the root user's sessions last at most an hour.
    pub fn get_federation_token(
        &self,
        access_key: Option<&str>,
        name: &str,
        duration_seconds: Option<i64>,
    ) -> Result<IssuedCredentials, AwsError> {
        let len = name.chars().count();
        if !(2..=32).contains(&len) {
            return Err(constraint(
                &format!("'{name}'"),
                "name",
                if len < 2 {
                    "have length greater than or equal to 2"
                } else {
                    "have length less than or equal to 32"
                },
            ));
        }
        if !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_+=,.@-".contains(c))
        {
            return Err(constraint(
                &format!("'{name}'"),
                "name",
                "satisfy regular expression pattern: [\\w+=,.@-]+",
            ));
        }
        if let Some(d) = duration_seconds {
            check_duration(
                "durationSeconds",
                d,
                SESSION_MIN_SECONDS,
                SESSION_MAX_SECONDS,
            )?;
        }
        if access_key.and_then(|k| self.creds.get(k)).is_some() {
            return Err(AwsError::new(
                http::StatusCode::FORBIDDEN,
                "AccessDenied",
                "Cannot call GetFederationToken with session credentials",
            ));
        }
        let duration = duration_seconds
            .unwrap_or(ROOT_SESSION_CAP_SECONDS)
            .min(ROOT_SESSION_CAP_SECONDS);
        let user = FederatedUser {
            federated_user_id: format!("{}:{name}", self.account_id),
            arn: format!("arn:aws:sts::{}:federated-user/{name}", self.account_id),
        };
        let issued = IssuedCredentials {
            credentials: new_credentials(duration),
            identity: CallerIdentity {
                user_id: user.federated_user_id.clone(),
                account: self.account_id.clone(),
                arn: user.arn.clone(),
            },
            assumed_role_user: None,
            federated_user: Some(user),
        };
        self.creds.insert(issued.clone())?;
        Ok(issued)
    }

    /// `GetAccessKeyInfo`: the account an access key belongs to (every key not issued by STS is
    /// taken as the configured account's, as cumulo has no IAM users yet).
    pub fn get_access_key_info(&self, access_key_id: &str) -> Result<String, AwsError> {
        let len = access_key_id.len();
        if !(16..=128).contains(&len) || !access_key_id.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(constraint(
                &format!("'{access_key_id}'"),
                "accessKeyId",
                "satisfy regular expression pattern: [\\w]* and have length between 16 and 128",
            ));
        }
        Ok(self
            .creds
            .get(access_key_id)
            .map_or_else(|| self.account_id.clone(), |c| c.identity.account))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_arn_parsing() {
        assert_eq!(
            parse_role_arn("arn:aws:iam::123456789012:role/path/to/MyRole"),
            Some(("123456789012", "MyRole"))
        );
        assert_eq!(parse_role_arn("arn:aws:iam::1:user/bob"), None);
        assert_eq!(parse_role_arn("not-an-arn-at-all-really"), None);
    }

    #[test]
    fn role_id_is_stable_and_shaped() {
        let a = role_id("arn:aws:iam::000000000000:role/r");
        assert_eq!(a, role_id("arn:aws:iam::000000000000:role/r"));
        assert!(a.starts_with("AROA") && a.len() == 21);
    }
}
