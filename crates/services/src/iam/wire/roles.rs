//! Roles (and service-linked roles) on the wire.

use super::Call;
use crate::iam::encode::{self, truncation};
use crate::iam::roles::CreateRoleInput;
use cumulo_wire::AwsError;

impl Call<'_> {
    pub(super) fn roles(&self, action: &str) -> Result<Option<String>, AwsError> {
        let (svc, acct) = (self.svc, self.account);
        Ok(Some(match action {
            "CreateRole" => {
                let role = svc.create_role(
                    acct,
                    CreateRoleInput {
                        name: self.req("RoleName")?,
                        path: self.opt("Path").map(str::to_string),
                        assume_role_policy: self.req("AssumeRolePolicyDocument")?,
                        description: self.opt("Description").map(str::to_string),
                        max_session_duration: self.int("MaxSessionDuration")?,
                        permissions_boundary: self.opt("PermissionsBoundary").map(str::to_string),
                        tags: self.tags(),
                    },
                )?;
                self.with(action, |w| encode::role(w, "Role", &role, true))
            }
            "GetRole" => {
                let role = svc.get_role(acct, &self.req("RoleName")?)?;
                self.with(action, |w| encode::role(w, "Role", &role, true))
            }
            "ListRoles" => {
                let (roles, next) = self.page(svc.list_roles(acct, self.opt("PathPrefix"))?)?;
                self.with(action, |w| {
                    w.open("Roles", None);
                    for r in &roles {
                        encode::role(w, "member", r, false);
                    }
                    w.close();
                    truncation(w, next.as_deref());
                })
            }
            "DeleteRole" => {
                svc.delete_role(acct, &self.req("RoleName")?)?;
                self.empty(action)
            }
            "UpdateRole" => {
                svc.update_role(
                    acct,
                    &self.req("RoleName")?,
                    self.opt("Description"),
                    self.int("MaxSessionDuration")?,
                )?;
                self.with(action, |_| {})
            }
            "UpdateRoleDescription" => {
                let role = svc.update_role(
                    acct,
                    &self.req("RoleName")?,
                    Some(&self.req("Description")?),
                    None,
                )?;
                self.with(action, |w| encode::role(w, "Role", &role, true))
            }
            "UpdateAssumeRolePolicy" => {
                svc.update_assume_role_policy(
                    acct,
                    &self.req("RoleName")?,
                    &self.req("PolicyDocument")?,
                )?;
                self.empty(action)
            }
            "PutRolePermissionsBoundary" => {
                svc.put_role_permissions_boundary(
                    acct,
                    &self.req("RoleName")?,
                    &self.req("PermissionsBoundary")?,
                )?;
                self.empty(action)
            }
            "DeleteRolePermissionsBoundary" => {
                svc.delete_role_permissions_boundary(acct, &self.req("RoleName")?)?;
                self.empty(action)
            }
            "TagRole" => {
                svc.tag_role(acct, &self.req("RoleName")?, &self.tags())?;
                self.empty(action)
            }
            "UntagRole" => {
                svc.untag_role(acct, &self.req("RoleName")?, &self.p.list("TagKeys"))?;
                self.empty(action)
            }
            "ListRoleTags" => {
                let role = svc.get_role(acct, &self.req("RoleName")?)?;
                self.tag_page(action, role.tags)?
            }
            "CreateServiceLinkedRole" => {
                let role = svc.create_service_linked_role(
                    acct,
                    &self.req("AWSServiceName")?,
                    self.opt("Description"),
                    self.opt("CustomSuffix"),
                )?;
                self.with(action, |w| encode::role(w, "Role", &role, true))
            }
            "DeleteServiceLinkedRole" => {
                let task = svc.delete_service_linked_role(acct, &self.req("RoleName")?)?;
                self.with(action, |w| {
                    w.elem("DeletionTaskId", &task);
                })
            }
            "GetServiceLinkedRoleDeletionStatus" => {
                let status =
                    svc.service_linked_role_deletion_status(acct, &self.req("DeletionTaskId")?)?;
                self.with(action, |w| {
                    w.elem("Status", status);
                })
            }
            _ => return Ok(None),
        }))
    }

    pub(super) fn tag_page(
        &self,
        action: &str,
        tags: Vec<(String, String)>,
    ) -> Result<String, AwsError> {
        let (tags, next) = self.page(tags)?;
        Ok(self.with(action, |w| {
            encode::tags(w, &tags);
            truncation(w, next.as_deref());
        }))
    }
}
