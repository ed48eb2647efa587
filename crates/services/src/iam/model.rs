//! IAM's entities as they are kept (in memory and, as JSON, in the store).
//!
//! Names are unique per account without regard to case, as AWS's are, so the maps in
//! [`super::state::Account`] are keyed by the lower-cased name while the entity keeps the
//! spelling it was created with. Relations are stored on one side only (a group lists its
//! members, a profile its role, a principal the ARNs it has attached) and derived for the other,
//! so there is never a second copy to drift.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

pub type Tags = Vec<(String, String)>;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Role {
    pub name: String,
    pub id: String,
    pub path: String,
    pub arn: String,
    pub create_date: DateTime<Utc>,
    pub assume_role_policy: String,
    pub description: Option<String>,
    pub max_session_duration: i64,
    pub permissions_boundary: Option<String>,
    pub tags: Tags,
    /// Inline policies: name → document text as given.
    pub inline: BTreeMap<String, String>,
    /// Attached managed policy ARNs in attach order.
    pub attached: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccessKey {
    pub id: String,
    pub secret: String,
    pub active: bool,
    pub create_date: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoginProfile {
    pub create_date: DateTime<Utc>,
    pub password_reset_required: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct User {
    pub name: String,
    pub id: String,
    pub path: String,
    pub arn: String,
    pub create_date: DateTime<Utc>,
    pub permissions_boundary: Option<String>,
    pub tags: Tags,
    pub inline: BTreeMap<String, String>,
    pub attached: Vec<String>,
    pub access_keys: Vec<AccessKey>,
    /// The password itself is not kept: nothing signs in to the emulator's console.
    pub login_profile: Option<LoginProfile>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Group {
    pub name: String,
    pub id: String,
    pub path: String,
    pub arn: String,
    pub create_date: DateTime<Utc>,
    pub inline: BTreeMap<String, String>,
    pub attached: Vec<String>,
    /// Member user names (lower-cased keys) in the order they were added.
    pub members: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PolicyVersion {
    /// `v1`, `v2`, ...
    pub id: String,
    pub document: String,
    pub create_date: DateTime<Utc>,
}

/// A customer managed policy (AWS managed ones are the fixed table in [`super::aws_managed`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManagedPolicy {
    pub name: String,
    pub id: String,
    pub path: String,
    pub arn: String,
    pub description: Option<String>,
    pub create_date: DateTime<Utc>,
    pub update_date: DateTime<Utc>,
    pub default_version: String,
    /// Oldest first.
    pub versions: Vec<PolicyVersion>,
    /// The number the next version gets: AWS never reuses a deleted version's id.
    pub next_version: u32,
    pub tags: Tags,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct InstanceProfile {
    pub name: String,
    pub id: String,
    pub path: String,
    pub arn: String,
    pub create_date: DateTime<Utc>,
    /// Role keys (AWS allows at most one).
    pub roles: Vec<String>,
    pub tags: Tags,
}

/// A finished DeleteServiceLinkedRole: the role is deleted at once, so the task has succeeded.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeletionTask {
    pub id: String,
}

/// A policy a principal has attached, as the `AttachedPolicy` shape reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AttachedPolicy {
    pub name: String,
    pub arn: String,
}

impl AttachedPolicy {
    pub fn from_arn(arn: &str) -> Self {
        AttachedPolicy {
            name: arn.rsplit('/').next().unwrap_or(arn).to_string(),
            arn: arn.to_string(),
        }
    }
}

/// A managed policy as GetPolicy/ListPolicies report it, customer or AWS managed.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyView {
    pub name: String,
    pub id: String,
    pub path: String,
    pub arn: String,
    pub description: Option<String>,
    pub default_version: String,
    pub attachment_count: usize,
    pub boundary_usage_count: usize,
    pub create_date: DateTime<Utc>,
    pub update_date: DateTime<Utc>,
    pub tags: Tags,
}
