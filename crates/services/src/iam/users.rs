//! Users: create, read, list, update (rename, move), delete, tags, permissions boundary, access
//! keys and login profiles.

use super::IamService;
use super::model::{AccessKey, LoginProfile, User};
use super::principals::user_not_found;
use super::state::{Changes, Kind, Put, key};
use super::validate::{
    self, already_exists, constraint, delete_conflict, limit_exceeded, merge_tags, new_id,
    new_secret, no_such_entity,
};
use chrono::{SubsecRound, Utc};
use cumulo_wire::AwsError;

/// AWS allows two access keys per user.
const MAX_ACCESS_KEYS: usize = 2;

/// An access key with the user it belongs to (the secret is only ever returned on create).
#[derive(Debug, Clone, PartialEq)]
pub struct UserAccessKey {
    pub user_name: String,
    pub key: AccessKey,
}

impl IamService {
    pub fn create_user(
        &self,
        account: &str,
        name: &str,
        path: Option<&str>,
        permissions_boundary: Option<&str>,
        tags: &[(String, String)],
    ) -> Result<User, AwsError> {
        validate::name(name, "userName", 64)?;
        let path = path.unwrap_or("/");
        validate::path(path)?;
        validate::tags(tags)?;
        self.state.mutate(account, |a| {
            if a.users.contains_key(&key(name)) {
                return Err(already_exists(format!(
                    "User with name {name} already exists."
                )));
            }
            if let Some(b) = permissions_boundary {
                a.check_attachable(b)?;
            }
            let user = User {
                name: name.to_string(),
                id: new_id("AIDA"),
                path: path.to_string(),
                arn: format!("arn:aws:iam::{account}:user{path}{name}"),
                create_date: Utc::now().trunc_subsecs(0),
                permissions_boundary: permissions_boundary.map(str::to_string),
                tags: tags.to_vec(),
                inline: Default::default(),
                attached: Vec::new(),
                access_keys: Vec::new(),
                login_profile: None,
            };
            Ok((user.clone(), Changes::put(Put::User(user))))
        })
    }

    pub fn get_user(&self, account: &str, name: &str) -> Result<User, AwsError> {
        validate::name(name, "userName", 64)?;
        self.state.read(account, |a| a.user(name).cloned())
    }

    pub fn list_users(
        &self,
        account: &str,
        path_prefix: Option<&str>,
    ) -> Result<Vec<User>, AwsError> {
        if let Some(pp) = path_prefix {
            validate::path_prefix(pp)?;
        }
        Ok(self.state.read(account, |a| {
            a.users
                .values()
                .filter(|u| path_prefix.is_none_or(|pp| u.path.starts_with(pp)))
                .cloned()
                .collect()
        }))
    }

    /// UpdateUser: a new path and/or a new name; group memberships follow a rename.
    pub fn update_user(
        &self,
        account: &str,
        name: &str,
        new_path: Option<&str>,
        new_name: Option<&str>,
    ) -> Result<(), AwsError> {
        validate::name(name, "userName", 64)?;
        if let Some(p) = new_path {
            validate::path(p)?;
        }
        if let Some(n) = new_name {
            validate::name(n, "newUserName", 64)?;
        }
        self.state.mutate(account, |a| {
            let mut u = a.user(name)?.clone();
            let old_key = key(&u.name);
            let mut changes = Changes::default();
            if let Some(n) = new_name {
                let new_key = key(n);
                if new_key != old_key && a.users.contains_key(&new_key) {
                    return Err(already_exists(format!(
                        "User with name {n} already exists."
                    )));
                }
                u.name = n.to_string();
                changes = changes.del(Kind::User, old_key.clone());
                for g in a.groups.values().filter(|g| g.members.contains(&old_key)) {
                    let mut g = g.clone();
                    for m in g.members.iter_mut().filter(|m| **m == old_key) {
                        *m = new_key.clone();
                    }
                    changes = changes.and(Put::Group(g));
                }
            }
            if let Some(p) = new_path {
                u.path = p.to_string();
            }
            u.arn = format!("arn:aws:iam::{account}:user{}{}", u.path, u.name);
            Ok(((), changes.and(Put::User(u))))
        })
    }

    /// DeleteUser: refused while the user has a login profile, access keys, policies or groups.
    pub fn delete_user(&self, account: &str, name: &str) -> Result<(), AwsError> {
        validate::name(name, "userName", 64)?;
        self.state.mutate(account, |a| {
            let u = a.user(name)?;
            let k = key(name);
            if u.login_profile.is_some() {
                return Err(delete_conflict(
                    "Cannot delete entity, must delete login profile first.",
                ));
            }
            if !u.access_keys.is_empty() {
                return Err(delete_conflict(
                    "Cannot delete entity, must delete access keys first.",
                ));
            }
            if !u.inline.is_empty() {
                return Err(delete_conflict(
                    "Cannot delete entity, must delete policies first.",
                ));
            }
            if !u.attached.is_empty() {
                return Err(delete_conflict(
                    "Cannot delete entity, must detach all policies first.",
                ));
            }
            if a.groups.values().any(|g| g.members.contains(&k)) {
                return Err(delete_conflict(
                    "Cannot delete entity, must remove users from group first.",
                ));
            }
            Ok(((), Changes::default().del(Kind::User, k)))
        })
    }

    pub fn tag_user(
        &self,
        account: &str,
        name: &str,
        tags: &[(String, String)],
    ) -> Result<(), AwsError> {
        validate::name(name, "userName", 64)?;
        validate::tags(tags)?;
        self.modify_user(account, name, |u| {
            let merged = merge_tags(&u.tags, tags);
            validate::tags(&merged)?;
            u.tags = merged;
            Ok(())
        })
        .map(|_| ())
    }

    pub fn untag_user(&self, account: &str, name: &str, keys: &[String]) -> Result<(), AwsError> {
        validate::name(name, "userName", 64)?;
        self.modify_user(account, name, |u| {
            u.tags.retain(|(k, _)| !keys.contains(k));
            Ok(())
        })
        .map(|_| ())
    }

    pub fn put_user_permissions_boundary(
        &self,
        account: &str,
        name: &str,
        arn: &str,
    ) -> Result<(), AwsError> {
        validate::name(name, "userName", 64)?;
        self.state.mutate(account, |a| {
            let mut u = a.user(name)?.clone();
            a.check_attachable(arn)?;
            u.permissions_boundary = Some(arn.to_string());
            Ok(((), Changes::put(Put::User(u))))
        })
    }

    pub fn delete_user_permissions_boundary(
        &self,
        account: &str,
        name: &str,
    ) -> Result<(), AwsError> {
        validate::name(name, "userName", 64)?;
        self.modify_user(account, name, |u| {
            if u.permissions_boundary.take().is_none() {
                return Err(no_such_entity(format!(
                    "The user with name {} does not have a permissions boundary.",
                    u.name
                )));
            }
            Ok(())
        })
        .map(|_| ())
    }

    /// CreateAccessKey: a new active key pair (at most two per user).
    pub fn create_access_key(&self, account: &str, user: &str) -> Result<UserAccessKey, AwsError> {
        validate::name(user, "userName", 64)?;
        self.modify_user(account, user, |u| {
            if u.access_keys.len() >= MAX_ACCESS_KEYS {
                return Err(limit_exceeded(format!(
                    "Cannot exceed quota for AccessKeysPerUser: {MAX_ACCESS_KEYS}"
                )));
            }
            u.access_keys.push(AccessKey {
                id: new_id("AKIA"),
                secret: new_secret(),
                active: true,
                create_date: Utc::now().trunc_subsecs(0),
            });
            Ok(())
        })
        .and_then(|u| {
            let key = u
                .access_keys
                .last()
                .cloned()
                .ok_or_else(|| AwsError::internal("access key was not recorded"))?;
            Ok(UserAccessKey {
                user_name: u.name,
                key,
            })
        })
    }

    pub fn list_access_keys(
        &self,
        account: &str,
        user: &str,
    ) -> Result<Vec<UserAccessKey>, AwsError> {
        validate::name(user, "userName", 64)?;
        self.state.read(account, |a| {
            let u = a.user(user)?;
            Ok(u.access_keys
                .iter()
                .map(|k| UserAccessKey {
                    user_name: u.name.clone(),
                    key: k.clone(),
                })
                .collect())
        })
    }

    /// UpdateAccessKey: `Active` or `Inactive`.
    pub fn update_access_key(
        &self,
        account: &str,
        user: &str,
        key_id: &str,
        status: &str,
    ) -> Result<(), AwsError> {
        validate::name(user, "userName", 64)?;
        let active = match status {
            "Active" => true,
            "Inactive" => false,
            other => {
                return Err(constraint(
                    other,
                    "status",
                    "Member must satisfy enum value set: [Active, Inactive]",
                ));
            }
        };
        self.modify_user(account, user, |u| {
            let k = u
                .access_keys
                .iter_mut()
                .find(|k| k.id == key_id)
                .ok_or_else(|| access_key_not_found(key_id))?;
            k.active = active;
            Ok(())
        })
        .map(|_| ())
    }

    pub fn delete_access_key(
        &self,
        account: &str,
        user: &str,
        key_id: &str,
    ) -> Result<(), AwsError> {
        validate::name(user, "userName", 64)?;
        self.modify_user(account, user, |u| {
            let before = u.access_keys.len();
            u.access_keys.retain(|k| k.id != key_id);
            if u.access_keys.len() == before {
                return Err(access_key_not_found(key_id));
            }
            Ok(())
        })
        .map(|_| ())
    }

    /// The user an access key belongs to, for calls that name only the key.
    pub fn access_key_owner(&self, account: &str, key_id: &str) -> Option<String> {
        self.state.read(account, |a| {
            a.users
                .values()
                .find(|u| u.access_keys.iter().any(|k| k.id == key_id))
                .map(|u| u.name.clone())
        })
    }

    pub fn create_login_profile(
        &self,
        account: &str,
        user: &str,
        password: &str,
        reset_required: bool,
    ) -> Result<LoginProfile, AwsError> {
        validate::name(user, "userName", 64)?;
        check_password(password)?;
        self.modify_user(account, user, |u| {
            if u.login_profile.is_some() {
                return Err(already_exists(format!(
                    "Login Profile for user {} already exists.",
                    u.name
                )));
            }
            u.login_profile = Some(LoginProfile {
                create_date: Utc::now().trunc_subsecs(0),
                password_reset_required: reset_required,
            });
            Ok(())
        })
        .and_then(|u| {
            u.login_profile
                .ok_or_else(|| AwsError::internal("login profile was not recorded"))
        })
    }

    pub fn get_login_profile(
        &self,
        account: &str,
        user: &str,
    ) -> Result<(String, LoginProfile), AwsError> {
        validate::name(user, "userName", 64)?;
        self.state.read(account, |a| {
            let u = a.user(user)?;
            let lp = u
                .login_profile
                .clone()
                .ok_or_else(|| login_profile_not_found(&u.name))?;
            Ok((u.name.clone(), lp))
        })
    }

    pub fn update_login_profile(
        &self,
        account: &str,
        user: &str,
        password: Option<&str>,
        reset_required: Option<bool>,
    ) -> Result<(), AwsError> {
        validate::name(user, "userName", 64)?;
        if let Some(p) = password {
            check_password(p)?;
        }
        self.modify_user(account, user, |u| {
            let name = u.name.clone();
            let lp = u
                .login_profile
                .as_mut()
                .ok_or_else(|| login_profile_not_found(&name))?;
            if let Some(r) = reset_required {
                lp.password_reset_required = r;
            }
            Ok(())
        })
        .map(|_| ())
    }

    pub fn delete_login_profile(&self, account: &str, user: &str) -> Result<(), AwsError> {
        validate::name(user, "userName", 64)?;
        self.modify_user(account, user, |u| {
            if u.login_profile.take().is_none() {
                return Err(login_profile_not_found(&u.name));
            }
            Ok(())
        })
        .map(|_| ())
    }

    fn modify_user(
        &self,
        account: &str,
        name: &str,
        f: impl FnOnce(&mut User) -> Result<(), AwsError>,
    ) -> Result<User, AwsError> {
        self.state.mutate(account, |a| {
            let mut u = a
                .users
                .get(&key(name))
                .cloned()
                .ok_or_else(|| user_not_found(name))?;
            f(&mut u)?;
            Ok((u.clone(), Changes::put(Put::User(u))))
        })
    }
}

fn access_key_not_found(id: &str) -> AwsError {
    no_such_entity(format!("The Access Key with id {id} cannot be found."))
}

fn login_profile_not_found(user: &str) -> AwsError {
    no_such_entity(format!("Login Profile for User {user} cannot be found."))
}

/// AWS's default password policy: 1..=128 characters (the account policy is not emulated).
fn check_password(p: &str) -> Result<(), AwsError> {
    if p.is_empty() || p.chars().count() > 128 {
        return Err(constraint(
            "*****",
            "password",
            "Member must have length less than or equal to 128",
        ));
    }
    Ok(())
}
