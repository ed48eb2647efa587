//! Groups and their members.

use super::IamService;
use super::model::{Group, User};
use super::state::{Changes, Kind, Put, key};
use super::validate::{self, already_exists, delete_conflict, new_id, no_such_entity};
use chrono::{SubsecRound, Utc};
use cumulo_wire::AwsError;

impl IamService {
    pub fn create_group(
        &self,
        account: &str,
        name: &str,
        path: Option<&str>,
    ) -> Result<Group, AwsError> {
        validate::name(name, "groupName", 128)?;
        let path = path.unwrap_or("/");
        validate::path(path)?;
        self.state.mutate(account, |a| {
            if a.groups.contains_key(&key(name)) {
                return Err(already_exists(format!(
                    "Group with name {name} already exists."
                )));
            }
            let g = Group {
                name: name.to_string(),
                id: new_id("AGPA"),
                path: path.to_string(),
                arn: format!("arn:aws:iam::{account}:group{path}{name}"),
                create_date: Utc::now().trunc_subsecs(0),
                inline: Default::default(),
                attached: Vec::new(),
                members: Vec::new(),
            };
            Ok((g.clone(), Changes::put(Put::Group(g))))
        })
    }

    /// GetGroup: the group and its members, in the order they were added.
    pub fn get_group(&self, account: &str, name: &str) -> Result<(Group, Vec<User>), AwsError> {
        validate::name(name, "groupName", 128)?;
        self.state.read(account, |a| {
            let g = a.group(name)?.clone();
            let users = g
                .members
                .iter()
                .filter_map(|m| a.users.get(m).cloned())
                .collect();
            Ok((g, users))
        })
    }

    pub fn list_groups(
        &self,
        account: &str,
        path_prefix: Option<&str>,
    ) -> Result<Vec<Group>, AwsError> {
        if let Some(pp) = path_prefix {
            validate::path_prefix(pp)?;
        }
        Ok(self.state.read(account, |a| {
            a.groups
                .values()
                .filter(|g| path_prefix.is_none_or(|pp| g.path.starts_with(pp)))
                .cloned()
                .collect()
        }))
    }

    /// UpdateGroup: a new path and/or name.
    pub fn update_group(
        &self,
        account: &str,
        name: &str,
        new_path: Option<&str>,
        new_name: Option<&str>,
    ) -> Result<(), AwsError> {
        validate::name(name, "groupName", 128)?;
        if let Some(p) = new_path {
            validate::path(p)?;
        }
        if let Some(n) = new_name {
            validate::name(n, "newGroupName", 128)?;
        }
        self.state.mutate(account, |a| {
            let mut g = a.group(name)?.clone();
            let mut changes = Changes::default();
            if let Some(n) = new_name {
                if key(n) != key(&g.name) && a.groups.contains_key(&key(n)) {
                    return Err(already_exists(format!(
                        "Group with name {n} already exists."
                    )));
                }
                changes = changes.del(Kind::Group, key(&g.name));
                g.name = n.to_string();
            }
            if let Some(p) = new_path {
                g.path = p.to_string();
            }
            g.arn = format!("arn:aws:iam::{account}:group{}{}", g.path, g.name);
            Ok(((), changes.and(Put::Group(g))))
        })
    }

    /// DeleteGroup: refused while it has members or policies.
    pub fn delete_group(&self, account: &str, name: &str) -> Result<(), AwsError> {
        validate::name(name, "groupName", 128)?;
        self.state.mutate(account, |a| {
            let g = a.group(name)?;
            if !g.members.is_empty() {
                return Err(delete_conflict(
                    "Cannot delete entity, must remove users from group first.",
                ));
            }
            if !g.inline.is_empty() {
                return Err(delete_conflict(
                    "Cannot delete entity, must delete policies first.",
                ));
            }
            if !g.attached.is_empty() {
                return Err(delete_conflict(
                    "Cannot delete entity, must detach all policies first.",
                ));
            }
            Ok(((), Changes::default().del(Kind::Group, key(name))))
        })
    }

    /// AddUserToGroup (adding a member twice is a no-op, as on AWS).
    pub fn add_user_to_group(
        &self,
        account: &str,
        group: &str,
        user: &str,
    ) -> Result<(), AwsError> {
        validate::name(group, "groupName", 128)?;
        validate::name(user, "userName", 64)?;
        self.state.mutate(account, |a| {
            let mut g = a.group(group)?.clone();
            a.user(user)?;
            let k = key(user);
            if g.members.contains(&k) {
                return Ok(((), Changes::default()));
            }
            g.members.push(k);
            Ok(((), Changes::put(Put::Group(g))))
        })
    }

    pub fn remove_user_from_group(
        &self,
        account: &str,
        group: &str,
        user: &str,
    ) -> Result<(), AwsError> {
        validate::name(group, "groupName", 128)?;
        validate::name(user, "userName", 64)?;
        self.state.mutate(account, |a| {
            let mut g = a.group(group)?.clone();
            let u = a.user(user)?;
            let k = key(user);
            if !g.members.contains(&k) {
                return Err(no_such_entity(format!(
                    "User {} is not in group {}.",
                    u.name, g.name
                )));
            }
            g.members.retain(|m| *m != k);
            Ok(((), Changes::put(Put::Group(g))))
        })
    }

    pub fn list_groups_for_user(&self, account: &str, user: &str) -> Result<Vec<Group>, AwsError> {
        validate::name(user, "userName", 64)?;
        self.state.read(account, |a| {
            a.user(user)?;
            let k = key(user);
            Ok(a.groups
                .values()
                .filter(|g| g.members.contains(&k))
                .cloned()
                .collect())
        })
    }
}
