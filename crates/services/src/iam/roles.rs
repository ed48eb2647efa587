//! Roles: create, read, list, update, delete, trust policy, permissions boundary and tags.

use super::IamService;
use super::model::Role;
use super::principals::{is_service_linked, role_not_found};
use super::state::{Changes, Kind, Put, key};
use super::validate::{
    self, already_exists, constraint, delete_conflict, merge_tags, new_id, no_such_entity,
    unmodifiable,
};
use chrono::{SubsecRound, Utc};
use cumulo_wire::AwsError;

/// Input of `CreateRole`.
#[derive(Debug, Clone, Default)]
pub struct CreateRoleInput {
    pub name: String,
    pub path: Option<String>,
    pub assume_role_policy: String,
    pub description: Option<String>,
    pub max_session_duration: Option<i64>,
    pub permissions_boundary: Option<String>,
    pub tags: Vec<(String, String)>,
}

pub const DEFAULT_MAX_SESSION: i64 = 3600;

pub fn check_max_session(v: i64) -> Result<(), AwsError> {
    if !(3600..=43200).contains(&v) {
        return Err(constraint(
            &v.to_string(),
            "maxSessionDuration",
            if v < 3600 {
                "Member must have value greater than or equal to 3600"
            } else {
                "Member must have value less than or equal to 43200"
            },
        ));
    }
    Ok(())
}

pub fn check_description(d: &str) -> Result<(), AwsError> {
    if d.chars().count() > 1000 {
        return Err(constraint(
            d,
            "description",
            "Member must have length less than or equal to 1000",
        ));
    }
    Ok(())
}

impl IamService {
    pub fn create_role(&self, account: &str, input: CreateRoleInput) -> Result<Role, AwsError> {
        validate::name(&input.name, "roleName", 64)?;
        let path = input.path.unwrap_or_else(|| "/".to_string());
        validate::path(&path)?;
        validate::policy_document(&input.assume_role_policy)?;
        validate::tags(&input.tags)?;
        if let Some(d) = &input.description {
            check_description(d)?;
        }
        let max = input.max_session_duration.unwrap_or(DEFAULT_MAX_SESSION);
        check_max_session(max)?;
        self.state.mutate(account, |a| {
            if a.roles.contains_key(&key(&input.name)) {
                return Err(already_exists(format!(
                    "Role with name {} already exists.",
                    input.name
                )));
            }
            if let Some(b) = &input.permissions_boundary {
                a.check_attachable(b)?;
            }
            let role = Role {
                arn: format!("arn:aws:iam::{account}:role{path}{}", input.name),
                name: input.name.clone(),
                id: new_id("AROA"),
                path: path.clone(),
                create_date: Utc::now().trunc_subsecs(0),
                assume_role_policy: input.assume_role_policy.clone(),
                description: input.description.clone(),
                max_session_duration: max,
                permissions_boundary: input.permissions_boundary.clone(),
                tags: input.tags.clone(),
                inline: Default::default(),
                attached: Vec::new(),
            };
            Ok((role.clone(), Changes::put(Put::Role(role))))
        })
    }

    pub fn get_role(&self, account: &str, name: &str) -> Result<Role, AwsError> {
        validate::name(name, "roleName", 64)?;
        self.state.read(account, |a| a.role(name).cloned())
    }

    /// ListRoles: every role whose path starts with `path_prefix`, by name.
    pub fn list_roles(
        &self,
        account: &str,
        path_prefix: Option<&str>,
    ) -> Result<Vec<Role>, AwsError> {
        if let Some(pp) = path_prefix {
            validate::path_prefix(pp)?;
        }
        Ok(self.state.read(account, |a| {
            a.roles
                .values()
                .filter(|r| path_prefix.is_none_or(|pp| r.path.starts_with(pp)))
                .cloned()
                .collect()
        }))
    }

    /// DeleteRole: refused while the role has inline or attached policies or is in an instance
    /// profile, exactly as AWS refuses it.
    pub fn delete_role(&self, account: &str, name: &str) -> Result<(), AwsError> {
        validate::name(name, "roleName", 64)?;
        self.state.mutate(account, |a| {
            let role = a.role(name)?;
            if is_service_linked(&role.path) {
                return Err(unmodifiable(&role.name));
            }
            if a.profiles.values().any(|p| p.roles.contains(&key(name))) {
                return Err(delete_conflict(
                    "Cannot delete entity, must remove roles from instance profile first.",
                ));
            }
            if !role.inline.is_empty() {
                return Err(delete_conflict(
                    "Cannot delete entity, must delete policies first.",
                ));
            }
            if !role.attached.is_empty() {
                return Err(delete_conflict(
                    "Cannot delete entity, must detach all policies first.",
                ));
            }
            Ok(((), Changes::default().del(Kind::Role, key(name))))
        })
    }

    /// UpdateRole: description and/or maximum session duration (absent ones are unchanged).
    pub fn update_role(
        &self,
        account: &str,
        name: &str,
        description: Option<&str>,
        max_session_duration: Option<i64>,
    ) -> Result<Role, AwsError> {
        validate::name(name, "roleName", 64)?;
        if let Some(d) = description {
            check_description(d)?;
        }
        if let Some(m) = max_session_duration {
            check_max_session(m)?;
        }
        self.modify_role(account, name, false, |r| {
            // An empty description clears it (CloudFormation's removal of the property).
            if let Some(d) = description {
                r.description = (!d.is_empty()).then(|| d.to_string());
            }
            if let Some(m) = max_session_duration {
                r.max_session_duration = m;
            }
            Ok(())
        })
    }

    pub fn update_assume_role_policy(
        &self,
        account: &str,
        name: &str,
        document: &str,
    ) -> Result<(), AwsError> {
        validate::name(name, "roleName", 64)?;
        validate::policy_document(document)?;
        self.modify_role(account, name, true, |r| {
            r.assume_role_policy = document.to_string();
            Ok(())
        })
        .map(|_| ())
    }

    pub fn put_role_permissions_boundary(
        &self,
        account: &str,
        name: &str,
        arn: &str,
    ) -> Result<(), AwsError> {
        validate::name(name, "roleName", 64)?;
        self.state.mutate(account, |a| {
            let mut r = a.role(name)?.clone();
            if is_service_linked(&r.path) {
                return Err(unmodifiable(&r.name));
            }
            a.check_attachable(arn)?;
            r.permissions_boundary = Some(arn.to_string());
            Ok(((), Changes::put(Put::Role(r))))
        })
    }

    pub fn delete_role_permissions_boundary(
        &self,
        account: &str,
        name: &str,
    ) -> Result<(), AwsError> {
        validate::name(name, "roleName", 64)?;
        self.modify_role(account, name, true, |r| {
            if r.permissions_boundary.take().is_none() {
                return Err(no_such_entity(format!(
                    "The role with name {} does not have a permissions boundary.",
                    r.name
                )));
            }
            Ok(())
        })
        .map(|_| ())
    }

    pub fn tag_role(
        &self,
        account: &str,
        name: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        validate::name(name, "roleName", 64)?;
        validate::tags(tags)?;
        self.modify_role(account, name, false, |r| {
            let merged = merge_tags(&r.tags, tags);
            validate::tags(&merged)?;
            r.tags = merged;
            Ok(())
        })
        .map(|_| ())
    }

    pub fn untag_role(&self, account: &str, name: &str, keys: &[String]) -> Result<(), AwsError> {
        validate::name(name, "roleName", 64)?;
        self.modify_role(account, name, false, |r| {
            r.tags.retain(|(k, _)| !keys.contains(k));
            Ok(())
        })
        .map(|_| ())
    }

    /// Applies `f` to a copy of the role and commits it; `protected` refuses service-linked roles.
    fn modify_role(
        &self,
        account: &str,
        name: &str,
        protected: bool,
        f: impl FnOnce(&mut Role) -> Result<(), AwsError>,
    ) -> Result<Role, AwsError> {
        self.state.mutate(account, |a| {
            let mut r = a
                .roles
                .get(&key(name))
                .cloned()
                .ok_or_else(|| role_not_found(name))?;
            if protected && is_service_linked(&r.path) {
                return Err(unmodifiable(&r.name));
            }
            f(&mut r)?;
            Ok((r.clone(), Changes::put(Put::Role(r))))
        })
    }
}
