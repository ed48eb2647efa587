//! Users, groups, and the inline and attached policies of roles, users and groups on the wire.

use super::Call;
use crate::iam::encode::{self, truncation};
use crate::iam::principals::PrincipalKind;
use cumulo_wire::AwsError;

impl Call<'_> {
    /// Inline and attached policies of roles, users and groups.
    pub(super) fn principal_policies(&self, action: &str) -> Result<Option<String>, AwsError> {
        let (kind, op) = match action
            .strip_suffix("RolePolicy")
            .or_else(|| action.strip_suffix("RolePolicies"))
        {
            Some(op) => (PrincipalKind::Role, op),
            None => match action
                .strip_suffix("UserPolicy")
                .or_else(|| action.strip_suffix("UserPolicies"))
            {
                Some(op) => (PrincipalKind::User, op),
                None => match action
                    .strip_suffix("GroupPolicy")
                    .or_else(|| action.strip_suffix("GroupPolicies"))
                {
                    Some(op) => (PrincipalKind::Group, op),
                    None => return Ok(None),
                },
            },
        };
        let name_param = match kind {
            PrincipalKind::Role => "RoleName",
            PrincipalKind::User => "UserName",
            PrincipalKind::Group => "GroupName",
        };
        let (svc, acct) = (self.svc, self.account);
        Ok(Some(match op {
            "Put" => {
                svc.put_inline_policy(
                    acct,
                    kind,
                    &self.req(name_param)?,
                    &self.req("PolicyName")?,
                    &self.req("PolicyDocument")?,
                )?;
                self.empty(action)
            }
            "Get" => {
                let policy_name = self.req("PolicyName")?;
                let (owner, doc) =
                    svc.get_inline_policy(acct, kind, &self.req(name_param)?, &policy_name)?;
                self.with(action, |w| {
                    w.elem(name_param, &owner)
                        .elem("PolicyName", &policy_name)
                        .elem("PolicyDocument", &encode::document(&doc));
                })
            }
            "List" => {
                let (names, next) =
                    self.page(svc.list_inline_policies(acct, kind, &self.req(name_param)?)?)?;
                self.with(action, |w| {
                    encode::strings(w, "PolicyNames", &names);
                    truncation(w, next.as_deref());
                })
            }
            "Delete" => {
                svc.delete_inline_policy(
                    acct,
                    kind,
                    &self.req(name_param)?,
                    &self.req("PolicyName")?,
                )?;
                self.empty(action)
            }
            "Attach" => {
                svc.attach_policy(acct, kind, &self.req(name_param)?, &self.req("PolicyArn")?)?;
                self.empty(action)
            }
            "Detach" => {
                svc.detach_policy(acct, kind, &self.req(name_param)?, &self.req("PolicyArn")?)?;
                self.empty(action)
            }
            "ListAttached" => {
                let (items, next) = self.page(svc.list_attached_policies(
                    acct,
                    kind,
                    &self.req(name_param)?,
                    self.opt("PathPrefix"),
                )?)?;
                self.with(action, |w| {
                    encode::attached(w, &items);
                    truncation(w, next.as_deref());
                })
            }
            _ => return Ok(None),
        }))
    }

    pub(super) fn users(&self, action: &str) -> Result<Option<String>, AwsError> {
        let (svc, acct) = (self.svc, self.account);
        Ok(Some(match action {
            "CreateUser" => {
                let user = svc.create_user(
                    acct,
                    &self.req("UserName")?,
                    self.opt("Path"),
                    self.opt("PermissionsBoundary"),
                    &self.tags(),
                )?;
                self.with(action, |w| encode::user(w, "User", &user, true))
            }
            "GetUser" => match self.user_or_caller() {
                Ok(name) => {
                    let user = svc.get_user(acct, &name)?;
                    self.with(action, |w| encode::user(w, "User", &user, true))
                }
                // The default caller is the account's root user, as with AWS root credentials.
                Err(_) => self.with(action, |w| {
                    w.open("User", None)
                        .elem("UserId", acct)
                        .elem("Arn", &format!("arn:aws:iam::{acct}:root"))
                        .elem("CreateDate", "2020-01-01T00:00:00Z")
                        .close();
                }),
            },
            "ListUsers" => {
                let (users, next) = self.page(svc.list_users(acct, self.opt("PathPrefix"))?)?;
                self.with(action, |w| {
                    w.open("Users", None);
                    for u in &users {
                        encode::user(w, "member", u, false);
                    }
                    w.close();
                    truncation(w, next.as_deref());
                })
            }
            "UpdateUser" => {
                svc.update_user(
                    acct,
                    &self.req("UserName")?,
                    self.opt("NewPath"),
                    self.opt("NewUserName"),
                )?;
                self.empty(action)
            }
            "DeleteUser" => {
                svc.delete_user(acct, &self.req("UserName")?)?;
                self.empty(action)
            }
            "TagUser" => {
                svc.tag_user(acct, &self.req("UserName")?, &self.tags())?;
                self.empty(action)
            }
            "UntagUser" => {
                svc.untag_user(acct, &self.req("UserName")?, &self.p.list("TagKeys"))?;
                self.empty(action)
            }
            "ListUserTags" => {
                let user = svc.get_user(acct, &self.req("UserName")?)?;
                self.tag_page(action, user.tags)?
            }
            "PutUserPermissionsBoundary" => {
                svc.put_user_permissions_boundary(
                    acct,
                    &self.req("UserName")?,
                    &self.req("PermissionsBoundary")?,
                )?;
                self.empty(action)
            }
            "DeleteUserPermissionsBoundary" => {
                svc.delete_user_permissions_boundary(acct, &self.req("UserName")?)?;
                self.empty(action)
            }
            "CreateAccessKey" => {
                let key = svc.create_access_key(acct, &self.user_or_caller()?)?;
                self.with(action, |w| encode::access_key(w, "AccessKey", &key, true))
            }
            "ListAccessKeys" => {
                let (keys, next) =
                    self.page(svc.list_access_keys(acct, &self.user_or_caller()?)?)?;
                self.with(action, |w| {
                    w.open("AccessKeyMetadata", None);
                    for k in &keys {
                        encode::access_key(w, "member", k, false);
                    }
                    w.close();
                    truncation(w, next.as_deref());
                })
            }
            "UpdateAccessKey" => {
                svc.update_access_key(
                    acct,
                    &self.user_or_caller()?,
                    &self.req("AccessKeyId")?,
                    &self.req("Status")?,
                )?;
                self.empty(action)
            }
            "DeleteAccessKey" => {
                svc.delete_access_key(acct, &self.user_or_caller()?, &self.req("AccessKeyId")?)?;
                self.empty(action)
            }
            "CreateLoginProfile" | "GetLoginProfile" => {
                let user = self.req("UserName")?;
                let (name, lp) = if action == "CreateLoginProfile" {
                    let lp = svc.create_login_profile(
                        acct,
                        &user,
                        &self.req("Password")?,
                        self.bool("PasswordResetRequired")?.unwrap_or(false),
                    )?;
                    (svc.get_user(acct, &user)?.name, lp)
                } else {
                    svc.get_login_profile(acct, &user)?
                };
                self.with(action, |w| {
                    w.open("LoginProfile", None)
                        .elem("UserName", &name)
                        .elem("CreateDate", &encode::ts(&lp.create_date))
                        .elem(
                            "PasswordResetRequired",
                            if lp.password_reset_required {
                                "true"
                            } else {
                                "false"
                            },
                        )
                        .close();
                })
            }
            "UpdateLoginProfile" => {
                svc.update_login_profile(
                    acct,
                    &self.req("UserName")?,
                    self.opt("Password"),
                    self.bool("PasswordResetRequired")?,
                )?;
                self.empty(action)
            }
            "DeleteLoginProfile" => {
                svc.delete_login_profile(acct, &self.req("UserName")?)?;
                self.empty(action)
            }
            _ => return Ok(None),
        }))
    }

    pub(super) fn groups(&self, action: &str) -> Result<Option<String>, AwsError> {
        let (svc, acct) = (self.svc, self.account);
        Ok(Some(match action {
            "CreateGroup" => {
                let g = svc.create_group(acct, &self.req("GroupName")?, self.opt("Path"))?;
                self.with(action, |w| encode::group(w, "Group", &g))
            }
            "GetGroup" => {
                let (g, users) = svc.get_group(acct, &self.req("GroupName")?)?;
                let (users, next) = self.page(users)?;
                self.with(action, |w| {
                    encode::group(w, "Group", &g);
                    w.open("Users", None);
                    for u in &users {
                        encode::user(w, "member", u, false);
                    }
                    w.close();
                    truncation(w, next.as_deref());
                })
            }
            "ListGroups" | "ListGroupsForUser" => {
                let groups = if action == "ListGroups" {
                    svc.list_groups(acct, self.opt("PathPrefix"))?
                } else {
                    svc.list_groups_for_user(acct, &self.req("UserName")?)?
                };
                let (groups, next) = self.page(groups)?;
                self.with(action, |w| {
                    w.open("Groups", None);
                    for g in &groups {
                        encode::group(w, "member", g);
                    }
                    w.close();
                    truncation(w, next.as_deref());
                })
            }
            "UpdateGroup" => {
                svc.update_group(
                    acct,
                    &self.req("GroupName")?,
                    self.opt("NewPath"),
                    self.opt("NewGroupName"),
                )?;
                self.empty(action)
            }
            "DeleteGroup" => {
                svc.delete_group(acct, &self.req("GroupName")?)?;
                self.empty(action)
            }
            "AddUserToGroup" => {
                svc.add_user_to_group(acct, &self.req("GroupName")?, &self.req("UserName")?)?;
                self.empty(action)
            }
            "RemoveUserFromGroup" => {
                svc.remove_user_from_group(acct, &self.req("GroupName")?, &self.req("UserName")?)?;
                self.empty(action)
            }
            _ => return Ok(None),
        }))
    }
}
