//! What roles, users and groups share: inline policies and attached managed policies. One
//! implementation serves all three (`PutRolePolicy`, `PutUserPolicy`, `PutGroupPolicy`, ...).

use super::IamService;
use super::aws_managed;
use super::model::{AttachedPolicy, Group, Role, User};
use super::state::{Account, Changes, Put, key};
use super::validate::{self, invalid_input, limit_exceeded, no_such_entity, unmodifiable};
use cumulo_wire::AwsError;
use std::collections::BTreeMap;

/// Which kind of principal an operation is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrincipalKind {
    Role,
    User,
    Group,
}

impl PrincipalKind {
    fn word(self) -> &'static str {
        match self {
            PrincipalKind::Role => "role",
            PrincipalKind::User => "user",
            PrincipalKind::Group => "group",
        }
    }

    /// The request field the name arrives in, for validation messages.
    pub fn field(self) -> &'static str {
        match self {
            PrincipalKind::Role => "roleName",
            PrincipalKind::User => "userName",
            PrincipalKind::Group => "groupName",
        }
    }

    fn max_name(self) -> usize {
        match self {
            PrincipalKind::Group => 128,
            _ => 64,
        }
    }

    fn quota(self) -> &'static str {
        match self {
            PrincipalKind::Role => "PoliciesPerRole",
            PrincipalKind::User => "PoliciesPerUser",
            PrincipalKind::Group => "PoliciesPerGroup",
        }
    }
}

/// AWS's default quota of managed policies attached to one role, user or group.
const MAX_ATTACHED: usize = 10;

/// A copy of one principal, to change and write back.
pub enum Principal {
    Role(Role),
    User(User),
    Group(Group),
}

impl Principal {
    pub fn inline(&self) -> &BTreeMap<String, String> {
        match self {
            Principal::Role(r) => &r.inline,
            Principal::User(u) => &u.inline,
            Principal::Group(g) => &g.inline,
        }
    }

    fn inline_mut(&mut self) -> &mut BTreeMap<String, String> {
        match self {
            Principal::Role(r) => &mut r.inline,
            Principal::User(u) => &mut u.inline,
            Principal::Group(g) => &mut g.inline,
        }
    }

    pub fn attached(&self) -> &[String] {
        match self {
            Principal::Role(r) => &r.attached,
            Principal::User(u) => &u.attached,
            Principal::Group(g) => &g.attached,
        }
    }

    fn attached_mut(&mut self) -> &mut Vec<String> {
        match self {
            Principal::Role(r) => &mut r.attached,
            Principal::User(u) => &mut u.attached,
            Principal::Group(g) => &mut g.attached,
        }
    }

    fn into_put(self) -> Put {
        match self {
            Principal::Role(r) => Put::Role(r),
            Principal::User(u) => Put::User(u),
            Principal::Group(g) => Put::Group(g),
        }
    }
}

/// Whether a role is service-linked, which only its service may change.
pub fn is_service_linked(path: &str) -> bool {
    path.starts_with("/aws-service-role/")
}

pub fn role_not_found(name: &str) -> AwsError {
    no_such_entity(format!("The role with name {name} cannot be found."))
}

pub fn user_not_found(name: &str) -> AwsError {
    no_such_entity(format!("The user with name {name} cannot be found."))
}

pub fn group_not_found(name: &str) -> AwsError {
    no_such_entity(format!("The group with name {name} cannot be found."))
}

pub fn policy_not_attachable(arn: &str) -> AwsError {
    no_such_entity(format!("Policy {arn} does not exist or is not attachable."))
}

impl Account {
    pub fn role(&self, name: &str) -> Result<&Role, AwsError> {
        self.roles
            .get(&key(name))
            .ok_or_else(|| role_not_found(name))
    }

    pub fn user(&self, name: &str) -> Result<&User, AwsError> {
        self.users
            .get(&key(name))
            .ok_or_else(|| user_not_found(name))
    }

    pub fn group(&self, name: &str) -> Result<&Group, AwsError> {
        self.groups
            .get(&key(name))
            .ok_or_else(|| group_not_found(name))
    }

    pub fn principal(&self, kind: PrincipalKind, name: &str) -> Result<Principal, AwsError> {
        Ok(match kind {
            PrincipalKind::Role => Principal::Role(self.role(name)?.clone()),
            PrincipalKind::User => Principal::User(self.user(name)?.clone()),
            PrincipalKind::Group => Principal::Group(self.group(name)?.clone()),
        })
    }

    /// Refuses a policy ARN that is neither an AWS managed policy nor one of this account's.
    pub fn check_attachable(&self, arn: &str) -> Result<(), AwsError> {
        if aws_managed::is_aws_arn(arn) || self.policies.contains_key(arn) {
            return Ok(());
        }
        if !arn.starts_with("arn:aws:iam::") || !arn.contains(":policy/") {
            return Err(invalid_input(format!("ARN {arn} is not valid.")));
        }
        Err(policy_not_attachable(arn))
    }

    /// Every principal that has `arn` attached: (kind, name, id).
    pub fn attachments_of(&self, arn: &str) -> Vec<(PrincipalKind, String, String, String)> {
        let mut out = Vec::new();
        for g in self
            .groups
            .values()
            .filter(|g| g.attached.iter().any(|a| a == arn))
        {
            out.push((
                PrincipalKind::Group,
                g.name.clone(),
                g.id.clone(),
                g.path.clone(),
            ));
        }
        for u in self
            .users
            .values()
            .filter(|u| u.attached.iter().any(|a| a == arn))
        {
            out.push((
                PrincipalKind::User,
                u.name.clone(),
                u.id.clone(),
                u.path.clone(),
            ));
        }
        for r in self
            .roles
            .values()
            .filter(|r| r.attached.iter().any(|a| a == arn))
        {
            out.push((
                PrincipalKind::Role,
                r.name.clone(),
                r.id.clone(),
                r.path.clone(),
            ));
        }
        out
    }

    /// How many roles and users use `arn` as their permissions boundary.
    pub fn boundary_uses(&self, arn: &str) -> usize {
        let is = |b: &Option<String>| b.as_deref() == Some(arn);
        self.roles
            .values()
            .filter(|r| is(&r.permissions_boundary))
            .count()
            + self
                .users
                .values()
                .filter(|u| is(&u.permissions_boundary))
                .count()
    }
}

/// Refuses changes to a service-linked role's policies.
fn check_modifiable(p: &Principal) -> Result<(), AwsError> {
    match p {
        Principal::Role(r) if is_service_linked(&r.path) => Err(unmodifiable(&r.name)),
        _ => Ok(()),
    }
}

impl IamService {
    /// PutRolePolicy / PutUserPolicy / PutGroupPolicy: adds or replaces an inline policy.
    pub fn put_inline_policy(
        &self,
        account: &str,
        kind: PrincipalKind,
        name: &str,
        policy_name: &str,
        document: &str,
    ) -> Result<(), AwsError> {
        validate::name(name, kind.field(), kind.max_name())?;
        validate::name(policy_name, "policyName", 128)?;
        validate::policy_document(document)?;
        self.state.mutate(account, |a| {
            let mut p = a.principal(kind, name)?;
            check_modifiable(&p)?;
            p.inline_mut()
                .insert(policy_name.to_string(), document.to_string());
            Ok(((), Changes::put(p.into_put())))
        })
    }

    /// GetRolePolicy / GetUserPolicy / GetGroupPolicy: the principal's exact name and the document.
    pub fn get_inline_policy(
        &self,
        account: &str,
        kind: PrincipalKind,
        name: &str,
        policy_name: &str,
    ) -> Result<(String, String), AwsError> {
        validate::name(name, kind.field(), kind.max_name())?;
        validate::name(policy_name, "policyName", 128)?;
        self.state.read(account, |a| {
            let p = a.principal(kind, name)?;
            let doc = p.inline().get(policy_name).cloned().ok_or_else(|| {
                no_such_entity(format!(
                    "The {} policy with name {policy_name} cannot be found.",
                    kind.word()
                ))
            })?;
            Ok((principal_name(&p), doc))
        })
    }

    /// ListRolePolicies / ListUserPolicies / ListGroupPolicies.
    pub fn list_inline_policies(
        &self,
        account: &str,
        kind: PrincipalKind,
        name: &str,
    ) -> Result<Vec<String>, AwsError> {
        validate::name(name, kind.field(), kind.max_name())?;
        self.state.read(account, |a| {
            Ok(a.principal(kind, name)?.inline().keys().cloned().collect())
        })
    }

    /// DeleteRolePolicy / DeleteUserPolicy / DeleteGroupPolicy.
    pub fn delete_inline_policy(
        &self,
        account: &str,
        kind: PrincipalKind,
        name: &str,
        policy_name: &str,
    ) -> Result<(), AwsError> {
        validate::name(name, kind.field(), kind.max_name())?;
        validate::name(policy_name, "policyName", 128)?;
        self.state.mutate(account, |a| {
            let mut p = a.principal(kind, name)?;
            check_modifiable(&p)?;
            if p.inline_mut().remove(policy_name).is_none() {
                return Err(no_such_entity(format!(
                    "The {} policy with name {policy_name} cannot be found.",
                    kind.word()
                )));
            }
            Ok(((), Changes::put(p.into_put())))
        })
    }

    /// AttachRolePolicy / AttachUserPolicy / AttachGroupPolicy (attaching twice is a no-op).
    pub fn attach_policy(
        &self,
        account: &str,
        kind: PrincipalKind,
        name: &str,
        arn: &str,
    ) -> Result<(), AwsError> {
        validate::name(name, kind.field(), kind.max_name())?;
        self.state.mutate(account, |a| {
            let mut p = a.principal(kind, name)?;
            check_modifiable(&p)?;
            a.check_attachable(arn)?;
            if p.attached().iter().any(|x| x == arn) {
                return Ok(((), Changes::default()));
            }
            if p.attached().len() >= MAX_ATTACHED {
                return Err(limit_exceeded(format!(
                    "Cannot exceed quota for {}: {MAX_ATTACHED}",
                    kind.quota()
                )));
            }
            p.attached_mut().push(arn.to_string());
            Ok(((), Changes::put(p.into_put())))
        })
    }

    /// DetachRolePolicy / DetachUserPolicy / DetachGroupPolicy.
    pub fn detach_policy(
        &self,
        account: &str,
        kind: PrincipalKind,
        name: &str,
        arn: &str,
    ) -> Result<(), AwsError> {
        validate::name(name, kind.field(), kind.max_name())?;
        self.state.mutate(account, |a| {
            let mut p = a.principal(kind, name)?;
            check_modifiable(&p)?;
            let before = p.attached().len();
            p.attached_mut().retain(|x| x != arn);
            if p.attached().len() == before {
                return Err(no_such_entity(format!("Policy {arn} was not found.")));
            }
            Ok(((), Changes::put(p.into_put())))
        })
    }

    /// ListAttachedRolePolicies / ListAttachedUserPolicies / ListAttachedGroupPolicies, filtered
    /// by the policies' path prefix.
    pub fn list_attached_policies(
        &self,
        account: &str,
        kind: PrincipalKind,
        name: &str,
        path_prefix: Option<&str>,
    ) -> Result<Vec<AttachedPolicy>, AwsError> {
        validate::name(name, kind.field(), kind.max_name())?;
        if let Some(pp) = path_prefix {
            validate::path_prefix(pp)?;
        }
        self.state.read(account, |a| {
            let p = a.principal(kind, name)?;
            Ok(p.attached()
                .iter()
                .filter(|arn| path_prefix.is_none_or(|pp| policy_path_of(arn).starts_with(pp)))
                .map(|arn| AttachedPolicy::from_arn(arn))
                .collect())
        })
    }
}

fn principal_name(p: &Principal) -> String {
    match p {
        Principal::Role(r) => r.name.clone(),
        Principal::User(u) => u.name.clone(),
        Principal::Group(g) => g.name.clone(),
    }
}

/// The path part of a policy ARN (`/service-role/` of `arn:aws:iam::aws:policy/service-role/X`).
pub fn policy_path_of(arn: &str) -> String {
    let rest = arn.split_once(":policy").map(|(_, r)| r).unwrap_or("/");
    match rest.rfind('/') {
        Some(i) => rest[..=i].to_string(),
        None => "/".to_string(),
    }
}
