//! The query-protocol adapter: decodes form parameters into typed calls, encodes XML responses.

use super::IamService;
use super::encode::{self, truncation};
use super::policies::{CreatePolicyInput, Scope};
use super::principals::PrincipalKind;
use super::roles::CreateRoleInput;
use super::validate::{constraint, missing, page};
use cumulo_wire::query::QueryParams;
use cumulo_wire::xml::XmlWriter;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};

pub const NS: &str = "https://iam.amazonaws.com/doc/2010-05-08/";
const PROTOCOL: Protocol = Protocol::Query(NS);

pub fn handle(svc: &IamService, req: &AwsRequest) -> AwsResponse {
    let params = query_params(req);
    let action = params.get("Action").unwrap_or("").to_string();
    let call = Call {
        svc,
        p: &params,
        account: &req.account_id,
        request_id: &req.request_id,
        access_key: req.access_key.as_deref(),
    };
    match call.dispatch(&action) {
        Ok(body) => AwsResponse::xml(body).with_header("x-amzn-requestid", &req.request_id),
        Err(e) => e.into_response(PROTOCOL, &req.request_id),
    }
}

/// The URL query plus, under a form content type (or none), the form body.
fn query_params(req: &AwsRequest) -> QueryParams {
    let form = req
        .header("content-type")
        .is_none_or(|ct| ct.starts_with("application/x-www-form-urlencoded"));
    if form {
        QueryParams::from_request(req)
    } else {
        QueryParams(req.query.clone())
    }
}

struct Call<'a> {
    svc: &'a IamService,
    p: &'a QueryParams,
    account: &'a str,
    request_id: &'a str,
    access_key: Option<&'a str>,
}

/// The model's field name for a parameter (`RoleName` → `roleName`), for validation messages.
fn field(name: &str) -> String {
    let mut c = name.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

impl<'a> Call<'a> {
    fn req(&self, name: &str) -> Result<String, AwsError> {
        self.p
            .get(name)
            .map(str::to_string)
            .ok_or_else(|| missing(&field(name)))
    }

    fn opt(&self, name: &str) -> Option<&'a str> {
        self.p.get(name)
    }

    fn int(&self, name: &str) -> Result<Option<i64>, AwsError> {
        self.p
            .get(name)
            .map(|v| {
                v.trim()
                    .parse::<i64>()
                    .map_err(|_| constraint(v, &field(name), "Member must be a number"))
            })
            .transpose()
    }

    fn bool(&self, name: &str) -> Result<Option<bool>, AwsError> {
        match self.p.get(name) {
            None => Ok(None),
            Some(v) if v.eq_ignore_ascii_case("true") => Ok(Some(true)),
            Some(v) if v.eq_ignore_ascii_case("false") => Ok(Some(false)),
            Some(v) => Err(constraint(v, &field(name), "Member must be a boolean")),
        }
    }

    fn tags(&self) -> Vec<(String, String)> {
        self.p
            .list_of_structs("Tags")
            .into_iter()
            .map(|fields| {
                let get = |f: &str| {
                    fields
                        .iter()
                        .find(|(k, _)| k == f)
                        .map(|(_, v)| v.clone())
                        .unwrap_or_default()
                };
                (get("Key"), get("Value"))
            })
            .collect()
    }

    fn page<T>(&self, items: Vec<T>) -> Result<(Vec<T>, Option<String>), AwsError> {
        page(items, self.opt("Marker"), self.int("MaxItems")?)
    }

    /// The user a call without `UserName` acts on: the owner of the caller's access key.
    fn user_or_caller(&self) -> Result<String, AwsError> {
        if let Some(u) = self.opt("UserName") {
            return Ok(u.to_string());
        }
        self.access_key
            .and_then(|k| self.svc.access_key_owner(self.account, k))
            .ok_or_else(|| {
                AwsError::validation("Must specify userName when calling with non-User credentials")
            })
    }

    /// `<ActionResponse>[<ActionResult>...</ActionResult>]<ResponseMetadata>`.
    fn respond(&self, action: &str, body: Option<&dyn Fn(&mut XmlWriter)>) -> String {
        let mut w = XmlWriter::new();
        w.raw(&format!("<{action}Response xmlns=\"{NS}\">"));
        if let Some(body) = body {
            w.raw(&format!("<{action}Result>"));
            body(&mut w);
            w.raw(&format!("</{action}Result>"));
        }
        w.open("ResponseMetadata", None)
            .elem("RequestId", self.request_id)
            .close();
        w.raw(&format!("</{action}Response>"));
        w.finish()
    }

    fn empty(&self, action: &str) -> String {
        self.respond(action, None)
    }

    fn with(&self, action: &str, body: impl Fn(&mut XmlWriter)) -> String {
        self.respond(action, Some(&body))
    }

    fn dispatch(&self, action: &str) -> Result<String, AwsError> {
        if let Some(out) = self.roles(action)? {
            return Ok(out);
        }
        if let Some(out) = self.principal_policies(action)? {
            return Ok(out);
        }
        if let Some(out) = self.users(action)? {
            return Ok(out);
        }
        if let Some(out) = self.groups(action)? {
            return Ok(out);
        }
        if let Some(out) = self.policies(action)? {
            return Ok(out);
        }
        if let Some(out) = self.profiles(action)? {
            return Ok(out);
        }
        match action {
            "" => Err(AwsError::bad_request(
                "MissingAction",
                "Missing Action parameter",
            )),
            other if KNOWN_ACTIONS.contains(&other) => Err(AwsError::not_implemented("iam", other)),
            other => Err(AwsError::bad_request(
                "InvalidAction",
                format!("Could not find operation {other} for version 2010-05-08"),
            )),
        }
    }

    fn roles(&self, action: &str) -> Result<Option<String>, AwsError> {
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

    fn tag_page(&self, action: &str, tags: Vec<(String, String)>) -> Result<String, AwsError> {
        let (tags, next) = self.page(tags)?;
        Ok(self.with(action, |w| {
            encode::tags(w, &tags);
            truncation(w, next.as_deref());
        }))
    }

    /// Inline and attached policies of roles, users and groups.
    fn principal_policies(&self, action: &str) -> Result<Option<String>, AwsError> {
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

    fn users(&self, action: &str) -> Result<Option<String>, AwsError> {
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

    fn groups(&self, action: &str) -> Result<Option<String>, AwsError> {
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

    fn policies(&self, action: &str) -> Result<Option<String>, AwsError> {
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

    fn profiles(&self, action: &str) -> Result<Option<String>, AwsError> {
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

/// IAM operations that exist in AWS but are not emulated (they answer 501 naming themselves).
const KNOWN_ACTIONS: &[&str] = &[
    "AcceptDelegationRequest",
    "AddClientIDToOpenIDConnectProvider",
    "AssociateDelegationRequest",
    "ChangePassword",
    "CreateAccountAlias",
    "CreateDelegationRequest",
    "CreateOpenIDConnectProvider",
    "CreateSAMLProvider",
    "CreateServiceSpecificCredential",
    "CreateVirtualMFADevice",
    "DeactivateMFADevice",
    "DeleteAccountAlias",
    "DeleteAccountPasswordPolicy",
    "DeleteOpenIDConnectProvider",
    "DeleteSAMLProvider",
    "DeleteSSHPublicKey",
    "DeleteServerCertificate",
    "DeleteServiceSpecificCredential",
    "DeleteSigningCertificate",
    "DeleteVirtualMFADevice",
    "DisableOrganizationsRootCredentialsManagement",
    "DisableOrganizationsRootSessions",
    "DisableOutboundWebIdentityFederation",
    "EnableMFADevice",
    "EnableOrganizationsRootCredentialsManagement",
    "EnableOrganizationsRootSessions",
    "EnableOutboundWebIdentityFederation",
    "GenerateCredentialReport",
    "GenerateOrganizationsAccessReport",
    "GenerateServiceLastAccessedDetails",
    "GetAccessKeyLastUsed",
    "GetAccountAuthorizationDetails",
    "GetAccountPasswordPolicy",
    "GetAccountSummary",
    "GetContextKeysForCustomPolicy",
    "GetContextKeysForPrincipalPolicy",
    "GetCredentialReport",
    "GetDelegationRequest",
    "GetHumanReadableSummary",
    "GetMFADevice",
    "GetOpenIDConnectProvider",
    "GetOrganizationsAccessReport",
    "GetOutboundWebIdentityFederationInfo",
    "GetSAMLProvider",
    "GetSSHPublicKey",
    "GetServerCertificate",
    "GetServiceLastAccessedDetails",
    "GetServiceLastAccessedDetailsWithEntities",
    "ListAccountAliases",
    "ListDelegationRequests",
    "ListMFADeviceTags",
    "ListMFADevices",
    "ListOpenIDConnectProviderTags",
    "ListOpenIDConnectProviders",
    "ListOrganizationsFeatures",
    "ListPoliciesGrantingServiceAccess",
    "ListSAMLProviderTags",
    "ListSAMLProviders",
    "ListSSHPublicKeys",
    "ListServerCertificateTags",
    "ListServerCertificates",
    "ListServiceSpecificCredentials",
    "ListSigningCertificates",
    "ListVirtualMFADevices",
    "RejectDelegationRequest",
    "RemoveClientIDFromOpenIDConnectProvider",
    "ResetServiceSpecificCredential",
    "ResyncMFADevice",
    "SendDelegationToken",
    "SetSecurityTokenServicePreferences",
    "SimulateCustomPolicy",
    "SimulatePrincipalPolicy",
    "TagMFADevice",
    "TagOpenIDConnectProvider",
    "TagSAMLProvider",
    "TagServerCertificate",
    "UntagMFADevice",
    "UntagOpenIDConnectProvider",
    "UntagSAMLProvider",
    "UntagServerCertificate",
    "UpdateAccountPasswordPolicy",
    "UpdateDelegationRequest",
    "UpdateOpenIDConnectProviderThumbprint",
    "UpdateSAMLProvider",
    "UpdateSSHPublicKey",
    "UpdateServerCertificate",
    "UpdateServiceSpecificCredential",
    "UpdateSigningCertificate",
    "UploadSSHPublicKey",
    "UploadServerCertificate",
    "UploadSigningCertificate",
];
