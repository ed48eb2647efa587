//! Customer managed policies and their versions; AWS managed ones are read from
//! [`super::aws_managed`].

use super::IamService;
use super::aws_managed;
use super::model::{ManagedPolicy, PolicyVersion, PolicyView};
use super::principals::{PrincipalKind, policy_not_attachable};
use super::state::{Account, Changes, Kind, Put};
use super::validate::{
    self, already_exists, constraint, delete_conflict, invalid_input, limit_exceeded, merge_tags,
    new_id, no_such_entity,
};
use chrono::{SubsecRound, Utc};
use cumulo_wire::AwsError;

/// AWS keeps at most five versions of a managed policy.
pub const MAX_VERSIONS: usize = 5;

/// Input of `CreatePolicy`.
#[derive(Debug, Clone, Default)]
pub struct CreatePolicyInput {
    pub name: String,
    pub path: Option<String>,
    pub document: String,
    pub description: Option<String>,
    pub tags: Vec<(String, String)>,
}

/// ListPolicies' `Scope`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    All,
    Aws,
    Local,
}

/// One entity ListEntitiesForPolicy reports: kind, name, id.
pub type PolicyEntity = (PrincipalKind, String, String);

fn view(a: &Account, p: &ManagedPolicy) -> PolicyView {
    PolicyView {
        name: p.name.clone(),
        id: p.id.clone(),
        path: p.path.clone(),
        arn: p.arn.clone(),
        description: p.description.clone(),
        default_version: p.default_version.clone(),
        attachment_count: a.attachments_of(&p.arn).len(),
        boundary_usage_count: a.boundary_uses(&p.arn),
        create_date: p.create_date,
        update_date: p.update_date,
        tags: p.tags.clone(),
    }
}

fn aws_view(a: &Account, p: &aws_managed::AwsPolicy) -> PolicyView {
    PolicyView {
        name: p.name.to_string(),
        id: p.id.clone(),
        path: p.path.to_string(),
        arn: p.arn.clone(),
        description: None,
        default_version: "v1".to_string(),
        attachment_count: a.attachments_of(&p.arn).len(),
        boundary_usage_count: a.boundary_uses(&p.arn),
        create_date: p.create_date,
        update_date: p.create_date,
        tags: Vec::new(),
    }
}

/// Refuses what is not a policy ARN at all (AWS's `InvalidInput`).
fn check_arn(arn: &str) -> Result<(), AwsError> {
    if arn.len() < 20 || !arn.starts_with("arn:aws") || !arn.contains(":policy/") {
        return Err(invalid_input(format!("ARN {arn} is not valid.")));
    }
    Ok(())
}

fn version_not_found(arn: &str, version: &str) -> AwsError {
    no_such_entity(format!(
        "Policy {arn} version {version} does not exist or is not attachable."
    ))
}

fn customer<'a>(a: &'a Account, arn: &str) -> Result<&'a ManagedPolicy, AwsError> {
    check_arn(arn)?;
    a.policies
        .get(arn)
        .ok_or_else(|| policy_not_attachable(arn))
}

fn check_version_id(v: &str) -> Result<(), AwsError> {
    let ok = v.strip_prefix('v').is_some_and(|n| {
        !n.is_empty() && !n.starts_with('0') && n.bytes().all(|b| b.is_ascii_digit())
    });
    if !ok {
        return Err(constraint(
            v,
            "versionId",
            "Member must satisfy regular expression pattern: v[1-9][0-9]*(\\.[A-Za-z0-9-]*)?",
        ));
    }
    Ok(())
}

impl IamService {
    pub fn create_policy(
        &self,
        account: &str,
        input: CreatePolicyInput,
    ) -> Result<PolicyView, AwsError> {
        validate::name(&input.name, "policyName", 128)?;
        let path = input.path.unwrap_or_else(|| "/".to_string());
        validate::path(&path)?;
        validate::policy_document(&input.document)?;
        validate::tags(&input.tags)?;
        if let Some(d) = &input.description
            && d.chars().count() > 1000
        {
            return Err(constraint(
                d,
                "description",
                "Member must have length less than or equal to 1000",
            ));
        }
        self.state.mutate(account, |a| {
            if a.policies
                .values()
                .any(|p| p.name.eq_ignore_ascii_case(&input.name))
            {
                return Err(already_exists(format!(
                    "A policy called {} already exists. Duplicate names are not allowed.",
                    input.name
                )));
            }
            let now = Utc::now().trunc_subsecs(0);
            let p = ManagedPolicy {
                arn: format!("arn:aws:iam::{account}:policy{path}{}", input.name),
                name: input.name.clone(),
                id: new_id("ANPA"),
                path: path.clone(),
                description: input.description.clone(),
                create_date: now,
                update_date: now,
                default_version: "v1".to_string(),
                versions: vec![PolicyVersion {
                    id: "v1".to_string(),
                    document: input.document.clone(),
                    create_date: now,
                }],
                next_version: 2,
                tags: input.tags.clone(),
            };
            Ok((view(a, &p), Changes::put(Put::Policy(p))))
        })
    }

    /// GetPolicy, for customer and known AWS managed policies.
    pub fn get_policy(&self, account: &str, arn: &str) -> Result<PolicyView, AwsError> {
        check_arn(arn)?;
        self.state.read(account, |a| {
            if let Some(p) = a.policies.get(arn) {
                return Ok(view(a, p));
            }
            aws_managed::get(arn)
                .map(|p| aws_view(a, &p))
                .ok_or_else(|| policy_not_attachable(arn))
        })
    }

    /// ListPolicies: by scope, attached only, path prefix; ordered by name.
    pub fn list_policies(
        &self,
        account: &str,
        scope: Scope,
        only_attached: bool,
        path_prefix: Option<&str>,
    ) -> Result<Vec<PolicyView>, AwsError> {
        if let Some(pp) = path_prefix {
            validate::path_prefix(pp)?;
        }
        Ok(self.state.read(account, |a| {
            let mut out: Vec<PolicyView> = Vec::new();
            if scope != Scope::Local {
                out.extend(aws_managed::all().iter().map(|p| aws_view(a, p)));
            }
            if scope != Scope::Aws {
                out.extend(a.policies.values().map(|p| view(a, p)));
            }
            out.retain(|p| {
                (!only_attached || p.attachment_count > 0)
                    && path_prefix.is_none_or(|pp| p.path.starts_with(pp))
            });
            out.sort_by(|x, y| x.name.cmp(&y.name).then(x.arn.cmp(&y.arn)));
            out
        }))
    }

    /// DeletePolicy: refused while attached or while it has versions besides the default.
    pub fn delete_policy(&self, account: &str, arn: &str) -> Result<(), AwsError> {
        self.state.mutate(account, |a| {
            let p = customer(a, arn)?;
            if !a.attachments_of(arn).is_empty() {
                return Err(delete_conflict("Cannot delete a policy attached to entities."));
            }
            if p.versions.len() > 1 {
                return Err(delete_conflict(
                    "This policy has more than one version. Before you delete a policy, you must delete the policy's versions. The default version is deleted with the policy.",
                ));
            }
            Ok(((), Changes::default().del(Kind::Policy, arn.to_string())))
        })
    }

    /// CreatePolicyVersion: refused at five versions (AWS makes the caller delete one first).
    pub fn create_policy_version(
        &self,
        account: &str,
        arn: &str,
        document: &str,
        set_as_default: bool,
    ) -> Result<(PolicyVersion, bool), AwsError> {
        validate::policy_document(document)?;
        self.state.mutate(account, |a| {
            let mut p = customer(a, arn)?.clone();
            if p.versions.len() >= MAX_VERSIONS {
                return Err(limit_exceeded(format!(
                    "A managed policy can have up to {MAX_VERSIONS} versions. Before you create a new version, you must delete an existing version."
                )));
            }
            let now = Utc::now().trunc_subsecs(0);
            let v = PolicyVersion {
                id: format!("v{}", p.next_version),
                document: document.to_string(),
                create_date: now,
            };
            p.next_version += 1;
            p.versions.push(v.clone());
            if set_as_default {
                p.default_version = v.id.clone();
            }
            p.update_date = now;
            Ok(((v, set_as_default), Changes::put(Put::Policy(p))))
        })
    }

    /// GetPolicyVersion: the version and whether it is the default.
    pub fn get_policy_version(
        &self,
        account: &str,
        arn: &str,
        version: &str,
    ) -> Result<(PolicyVersion, bool), AwsError> {
        check_arn(arn)?;
        check_version_id(version)?;
        self.state.read(account, |a| {
            if let Some(p) = a.policies.get(arn) {
                let v = p
                    .versions
                    .iter()
                    .find(|v| v.id == version)
                    .ok_or_else(|| version_not_found(arn, version))?;
                return Ok((v.clone(), p.default_version == version));
            }
            match aws_managed::get(arn) {
                Some(p) if version == "v1" => Ok((
                    PolicyVersion {
                        id: "v1".to_string(),
                        document: p.document.to_string(),
                        create_date: p.create_date,
                    },
                    true,
                )),
                Some(_) => Err(version_not_found(arn, version)),
                None => Err(policy_not_attachable(arn)),
            }
        })
    }

    /// ListPolicyVersions: newest first, as AWS lists them.
    pub fn list_policy_versions(
        &self,
        account: &str,
        arn: &str,
    ) -> Result<Vec<(PolicyVersion, bool)>, AwsError> {
        check_arn(arn)?;
        self.state.read(account, |a| {
            if let Some(p) = a.policies.get(arn) {
                return Ok(p
                    .versions
                    .iter()
                    .rev()
                    .map(|v| (v.clone(), v.id == p.default_version))
                    .collect());
            }
            let p = aws_managed::get(arn).ok_or_else(|| policy_not_attachable(arn))?;
            Ok(vec![(
                PolicyVersion {
                    id: "v1".to_string(),
                    document: p.document.to_string(),
                    create_date: p.create_date,
                },
                true,
            )])
        })
    }

    pub fn delete_policy_version(
        &self,
        account: &str,
        arn: &str,
        version: &str,
    ) -> Result<(), AwsError> {
        check_version_id(version)?;
        self.state.mutate(account, |a| {
            let mut p = customer(a, arn)?.clone();
            if !p.versions.iter().any(|v| v.id == version) {
                return Err(version_not_found(arn, version));
            }
            if p.default_version == version {
                return Err(delete_conflict(
                    "Cannot delete the default version of a policy.",
                ));
            }
            p.versions.retain(|v| v.id != version);
            Ok(((), Changes::put(Put::Policy(p))))
        })
    }

    pub fn set_default_policy_version(
        &self,
        account: &str,
        arn: &str,
        version: &str,
    ) -> Result<(), AwsError> {
        check_version_id(version)?;
        self.state.mutate(account, |a| {
            let mut p = customer(a, arn)?.clone();
            if !p.versions.iter().any(|v| v.id == version) {
                return Err(version_not_found(arn, version));
            }
            p.default_version = version.to_string();
            p.update_date = Utc::now().trunc_subsecs(0);
            Ok(((), Changes::put(Put::Policy(p))))
        })
    }

    /// ListEntitiesForPolicy: groups, users and roles that have the policy attached, optionally
    /// of one kind and under a path prefix.
    pub fn list_entities_for_policy(
        &self,
        account: &str,
        arn: &str,
        filter: Option<PrincipalKind>,
        path_prefix: Option<&str>,
    ) -> Result<Vec<PolicyEntity>, AwsError> {
        check_arn(arn)?;
        if let Some(pp) = path_prefix {
            validate::path_prefix(pp)?;
        }
        self.state.read(account, |a| {
            if !a.policies.contains_key(arn) && !aws_managed::is_aws_arn(arn) {
                return Err(policy_not_attachable(arn));
            }
            Ok(a.attachments_of(arn)
                .into_iter()
                .filter(|(k, _, _, path)| {
                    filter.is_none_or(|f| f == *k)
                        && path_prefix.is_none_or(|pp| path.starts_with(pp))
                })
                .map(|(k, n, id, _)| (k, n, id))
                .collect())
        })
    }

    pub fn tag_policy(
        &self,
        account: &str,
        arn: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        validate::tags(tags)?;
        self.state.mutate(account, |a| {
            let mut p = customer(a, arn)?.clone();
            let merged = merge_tags(&p.tags, tags);
            validate::tags(&merged)?;
            p.tags = merged;
            Ok(((), Changes::put(Put::Policy(p))))
        })
    }

    pub fn untag_policy(&self, account: &str, arn: &str, keys: &[String]) -> Result<(), AwsError> {
        self.state.mutate(account, |a| {
            let mut p = customer(a, arn)?.clone();
            p.tags.retain(|(k, _)| !keys.contains(k));
            Ok(((), Changes::put(Put::Policy(p))))
        })
    }

    /// The ARN of this account's customer managed policy named `name`, if there is one.
    pub fn policy_arn_by_name(&self, account: &str, name: &str) -> Option<String> {
        self.state.read(account, |a| {
            a.policies
                .values()
                .find(|p| p.name.eq_ignore_ascii_case(name))
                .map(|p| p.arn.clone())
        })
    }
}
