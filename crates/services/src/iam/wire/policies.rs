//! Managed policies and instance profiles on the wire.

use super::Call;
use crate::iam::encode::{self, truncation};
use crate::iam::policies::{CreatePolicyInput, Scope};
use crate::iam::principals::PrincipalKind;
use crate::iam::validate::constraint;
use cumulo_wire::AwsError;

impl Call<'_> {
    pub(super) fn policies(&self, action: &str) -> Result<Option<String>, AwsError> {
        let (svc, acct) = (self.svc, self.account);
        Ok(Some(match action {
            "CreatePolicy" => {
                let p = svc.create_policy(
                    acct,
                    CreatePolicyInput {
                        name: self.req("PolicyName")?,
                        path: self.opt("Path").map(str::to_string),
                        document: self.req("PolicyDocument")?,
                        description: self.opt("Description").map(str::to_string),
                        tags: self.tags(),
                    },
                )?;
                self.with(action, |w| encode::policy(w, "Policy", &p, true))
            }
            "GetPolicy" => {
                let p = svc.get_policy(acct, &self.req("PolicyArn")?)?;
                self.with(action, |w| encode::policy(w, "Policy", &p, true))
            }
            "ListPolicies" => {
                let scope = match self.opt("Scope").unwrap_or("All") {
                    "All" => Scope::All,
                    "AWS" => Scope::Aws,
                    "Local" => Scope::Local,
                    other => {
                        return Err(constraint(
                            other,
                            "scope",
                            "Member must satisfy enum value set: [All, AWS, Local]",
                        ));
                    }
                };
                let mut list = svc.list_policies(acct, scope, false, self.opt("PathPrefix"))?;
                if self.bool("OnlyAttached")?.unwrap_or(false) {
                    let boundary = self.opt("PolicyUsageFilter") == Some("PermissionsBoundary");
                    list.retain(|p| {
                        if boundary {
                            p.boundary_usage_count > 0
                        } else {
                            p.attachment_count > 0
                        }
                    });
                }
                let (list, next) = self.page(list)?;
                self.with(action, |w| {
                    w.open("Policies", None);
                    for p in &list {
                        encode::policy(w, "member", p, false);
                    }
                    w.close();
                    truncation(w, next.as_deref());
                })
            }
            "DeletePolicy" => {
                svc.delete_policy(acct, &self.req("PolicyArn")?)?;
                self.empty(action)
            }
            "CreatePolicyVersion" => {
                let (v, default) = svc.create_policy_version(
                    acct,
                    &self.req("PolicyArn")?,
                    &self.req("PolicyDocument")?,
                    self.bool("SetAsDefault")?.unwrap_or(false),
                )?;
                self.with(action, |w| {
                    encode::version(w, "PolicyVersion", &v, default, false)
                })
            }
            "GetPolicyVersion" => {
                let (v, default) =
                    svc.get_policy_version(acct, &self.req("PolicyArn")?, &self.req("VersionId")?)?;
                self.with(action, |w| {
                    encode::version(w, "PolicyVersion", &v, default, true)
                })
            }
            "ListPolicyVersions" => {
                let (versions, next) =
                    self.page(svc.list_policy_versions(acct, &self.req("PolicyArn")?)?)?;
                self.with(action, |w| {
                    w.open("Versions", None);
                    for (v, default) in &versions {
                        encode::version(w, "member", v, *default, false);
                    }
                    w.close();
                    truncation(w, next.as_deref());
                })
            }
            "DeletePolicyVersion" => {
                svc.delete_policy_version(acct, &self.req("PolicyArn")?, &self.req("VersionId")?)?;
                self.empty(action)
            }
            "SetDefaultPolicyVersion" => {
                svc.set_default_policy_version(
                    acct,
                    &self.req("PolicyArn")?,
                    &self.req("VersionId")?,
                )?;
                self.empty(action)
            }
            "ListEntitiesForPolicy" => {
                if self.opt("PolicyUsageFilter") == Some("PermissionsBoundary") {
                    return Err(AwsError::not_implemented(
                        "iam",
                        "ListEntitiesForPolicy with PolicyUsageFilter PermissionsBoundary",
                    ));
                }
                let filter = match self.opt("EntityFilter") {
                    None => None,
                    Some("User") => Some(Some(PrincipalKind::User)),
                    Some("Role") => Some(Some(PrincipalKind::Role)),
                    Some("Group") => Some(Some(PrincipalKind::Group)),
                    // Policies are never attached to policies: these filters match nothing.
                    Some("LocalManagedPolicy" | "AWSManagedPolicy") => Some(None),
                    Some(other) => {
                        return Err(constraint(
                            other,
                            "entityFilter",
                            "Member must satisfy enum value set: [User, Role, LocalManagedPolicy, Group, AWSManagedPolicy]",
                        ));
                    }
                };
                let mut entities = svc.list_entities_for_policy(
                    acct,
                    &self.req("PolicyArn")?,
                    filter.flatten(),
                    self.opt("PathPrefix"),
                )?;
                if filter == Some(None) {
                    entities.clear();
                }
                let (entities, next) = self.page(entities)?;
                self.with(action, |w| {
                    for (name, kind, n, id) in [
                        ("PolicyGroups", PrincipalKind::Group, "GroupName", "GroupId"),
                        ("PolicyUsers", PrincipalKind::User, "UserName", "UserId"),
                        ("PolicyRoles", PrincipalKind::Role, "RoleName", "RoleId"),
                    ] {
                        w.open(name, None);
                        for (_, en, eid) in entities.iter().filter(|e| e.0 == kind) {
                            w.open("member", None).elem(n, en).elem(id, eid).close();
                        }
                        w.close();
                    }
                    truncation(w, next.as_deref());
                })
            }
            "TagPolicy" => {
                svc.tag_policy(acct, &self.req("PolicyArn")?, &self.tags())?;
                self.empty(action)
            }
            "UntagPolicy" => {
                svc.untag_policy(acct, &self.req("PolicyArn")?, &self.p.list("TagKeys"))?;
                self.empty(action)
            }
            "ListPolicyTags" => {
                let p = svc.get_policy(acct, &self.req("PolicyArn")?)?;
                self.tag_page(action, p.tags)?
            }
            _ => return Ok(None),
        }))
    }

    pub(super) fn profiles(&self, action: &str) -> Result<Option<String>, AwsError> {
        let (svc, acct) = (self.svc, self.account);
        Ok(Some(match action {
            "CreateInstanceProfile" => {
                let p = svc.create_instance_profile(
                    acct,
                    &self.req("InstanceProfileName")?,
                    self.opt("Path"),
                    &self.tags(),
                )?;
                self.with(action, |w| encode::profile(w, "InstanceProfile", &p, &[]))
            }
            "GetInstanceProfile" => {
                let (p, roles) =
                    svc.get_instance_profile(acct, &self.req("InstanceProfileName")?)?;
                self.with(action, |w| {
                    encode::profile(w, "InstanceProfile", &p, &roles)
                })
            }
            "ListInstanceProfiles" | "ListInstanceProfilesForRole" => {
                let list = if action == "ListInstanceProfiles" {
                    svc.list_instance_profiles(acct, self.opt("PathPrefix"))?
                } else {
                    svc.list_instance_profiles_for_role(acct, &self.req("RoleName")?)?
                };
                let (list, next) = self.page(list)?;
                self.with(action, |w| {
                    w.open("InstanceProfiles", None);
                    for (p, roles) in &list {
                        encode::profile(w, "member", p, roles);
                    }
                    w.close();
                    truncation(w, next.as_deref());
                })
            }
            "DeleteInstanceProfile" => {
                svc.delete_instance_profile(acct, &self.req("InstanceProfileName")?)?;
                self.empty(action)
            }
            "AddRoleToInstanceProfile" => {
                svc.add_role_to_instance_profile(
                    acct,
                    &self.req("InstanceProfileName")?,
                    &self.req("RoleName")?,
                )?;
                self.empty(action)
            }
            "RemoveRoleFromInstanceProfile" => {
                svc.remove_role_from_instance_profile(
                    acct,
                    &self.req("InstanceProfileName")?,
                    &self.req("RoleName")?,
                )?;
                self.empty(action)
            }
            "TagInstanceProfile" => {
                svc.tag_instance_profile(acct, &self.req("InstanceProfileName")?, &self.tags())?;
                self.empty(action)
            }
            "UntagInstanceProfile" => {
                svc.untag_instance_profile(
                    acct,
                    &self.req("InstanceProfileName")?,
                    &self.p.list("TagKeys"),
                )?;
                self.empty(action)
            }
            "ListInstanceProfileTags" => {
                let (p, _) = svc.get_instance_profile(acct, &self.req("InstanceProfileName")?)?;
                self.tag_page(action, p.tags)?
            }
            _ => return Ok(None),
        }))
    }
}
