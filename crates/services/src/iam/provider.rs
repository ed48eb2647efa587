//! CloudFormation providers of IAM's resource types, over [`IamService`]'s typed operations.
//!
//! Roles, users and groups are reconciled part by part on update (trust policy, description,
//! boundary, tags, inline policies, managed policy attachments, ...). A role update that fails
//! part way is compensated: the role is reconciled back to the snapshot taken before the update
//! began, so it is left exactly as it was (seed 000).

mod access_key;
mod inline_policy;
mod managed_policy;
mod policy;
mod principal;
mod role;

use super::IamService;
use super::model::Tags;
use crate::providers::{ProviderServices, failed, json_text, list, required, scalar};
use cumulo_engine::{ProviderContext, ProviderError, ProviderRegistry};
use cumulo_wire::AwsError;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::sync::Arc;

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    let iam = &s.iam;
    r.register(
        role::ROLE,
        Arc::new(role::RoleProvider { iam: iam.clone() }),
    );
    r.register(
        role::SERVICE_LINKED_ROLE,
        Arc::new(role::ServiceLinkedRoleProvider { iam: iam.clone() }),
    );
    r.register(
        role::INSTANCE_PROFILE,
        Arc::new(role::InstanceProfileProvider { iam: iam.clone() }),
    );
    r.register(
        principal::USER,
        Arc::new(principal::UserProvider { iam: iam.clone() }),
    );
    r.register(
        principal::GROUP,
        Arc::new(principal::GroupProvider { iam: iam.clone() }),
    );
    r.register(
        policy::POLICY,
        Arc::new(policy::PolicyProvider { iam: iam.clone() }),
    );
    r.register(
        managed_policy::MANAGED_POLICY,
        Arc::new(managed_policy::ManagedPolicyProvider { iam: iam.clone() }),
    );
    crate::providers::declared::register(
        r,
        inline_policy::InlinePolicy::<{ inline_policy::ROLE }>(iam.clone()),
    );
    crate::providers::declared::register(
        r,
        inline_policy::InlinePolicy::<{ inline_policy::USER }>(iam.clone()),
    );
    crate::providers::declared::register(
        r,
        inline_policy::InlinePolicy::<{ inline_policy::GROUP }>(iam.clone()),
    );
    r.register(
        access_key::ACCESS_KEY,
        Arc::new(access_key::AccessKeyProvider { iam: iam.clone() }),
    );
}

pub(crate) fn fail(ctx: &ProviderContext, e: AwsError) -> ProviderError {
    failed(ctx, "Iam", e)
}

/// A property that must be a list of strings (role names, policy ARNs, ...).
pub(crate) fn strings(props: &Map<String, Value>, key: &str) -> Result<Vec<String>, ProviderError> {
    list(props, key)?
        .iter()
        .map(|v| {
            crate::providers::scalar_value(v).ok_or_else(|| {
                ProviderError::Failed(format!(
                    "Properties validation failed for resource with message: #/{key}: expected type: String, found: {}",
                    crate::providers::json_type(v)
                ))
            })
        })
        .collect()
}

/// `Policies: [{PolicyName, PolicyDocument}]` as name → document text.
pub(crate) fn inline_policies(
    props: &Map<String, Value>,
) -> Result<BTreeMap<String, String>, ProviderError> {
    let mut out = BTreeMap::new();
    for p in list(props, "Policies")? {
        let obj = p.as_object().ok_or_else(|| {
            ProviderError::Failed(
                "Properties validation failed for resource with message: #/Policies: expected type: JSONObject".into(),
            )
        })?;
        let name = required(obj, "PolicyName")?;
        let doc = json_text(obj, "PolicyDocument")?.ok_or_else(|| {
            ProviderError::Failed(
                "Properties validation failed for resource with message: #/Policies: required key [PolicyDocument] not found".into(),
            )
        })?;
        out.insert(name, doc);
    }
    Ok(out)
}

/// A document as a template writes it: the parsed JSON when it parses, else the text.
pub(crate) fn document_value(doc: &str) -> Value {
    serde_json::from_str(doc).unwrap_or_else(|_| Value::String(doc.to_string()))
}

pub(crate) fn policies_value(inline: &BTreeMap<String, String>) -> Value {
    Value::Array(
        inline
            .iter()
            .map(|(n, d)| serde_json::json!({"PolicyName": n, "PolicyDocument": document_value(d)}))
            .collect(),
    )
}

pub(crate) fn tags_value(tags: &Tags) -> Value {
    Value::Array(
        tags.iter()
            .map(|(k, v)| serde_json::json!({"Key": k, "Value": v}))
            .collect(),
    )
}

/// An optional string property (`scalar`, named for what it reads here).
pub(crate) fn opt(props: &Map<String, Value>, key: &str) -> Result<Option<String>, ProviderError> {
    scalar(props, key)
}

/// The account's IAM service, for the provider modules.
pub(crate) type Iam = Arc<IamService>;
