//! What roles, users and groups share as resources (inline `Policies`, `ManagedPolicyArns`),
//! and AWS::IAM::User and AWS::IAM::Group.

use super::{Iam, fail, inline_policies, opt, policies_value, strings, tags_value};
use crate::iam::PrincipalKind;
use crate::providers::{already_exists, check_known, object, tags};
use cumulo_engine::{Observed, Provider, ProviderContext, ProviderError, ProviderOutcome};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

pub const USER: &str = "AWS::IAM::User";
pub const GROUP: &str = "AWS::IAM::Group";

/// A principal's policies as a template declares them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PolicySet {
    pub inline: BTreeMap<String, String>,
    pub attached: Vec<String>,
}

impl PolicySet {
    pub fn from_props(props: &Map<String, Value>) -> Result<Self, ProviderError> {
        Ok(PolicySet {
            inline: inline_policies(props)?,
            attached: strings(props, "ManagedPolicyArns")?,
        })
    }
}

/// Moves a principal's policies from `from` to `to`: inline puts and deletes, then detaches,
/// then attaches (last, since an ARN that does not exist is the likeliest failure).
pub fn reconcile_policies(
    iam: &Iam,
    account: &str,
    kind: PrincipalKind,
    name: &str,
    from: &PolicySet,
    to: &PolicySet,
) -> Result<(), AwsError> {
    for (p, doc) in &to.inline {
        if from.inline.get(p) != Some(doc) {
            iam.put_inline_policy(account, kind, name, p, doc)?;
        }
    }
    for p in from.inline.keys().filter(|p| !to.inline.contains_key(*p)) {
        ignore_missing(iam.delete_inline_policy(account, kind, name, p))?;
    }
    for arn in from.attached.iter().filter(|a| !to.attached.contains(a)) {
        ignore_missing(iam.detach_policy(account, kind, name, arn))?;
    }
    for arn in to.attached.iter().filter(|a| !from.attached.contains(a)) {
        iam.attach_policy(account, kind, name, arn)?;
    }
    Ok(())
}

/// A removal of something already gone is what was wanted.
pub fn ignore_missing(r: Result<(), AwsError>) -> Result<(), AwsError> {
    match r {
        Err(e) if e.code == "NoSuchEntity" => Ok(()),
        other => other,
    }
}

/// Drops a principal's inline policies and detaches its managed ones, as AWS's delete handlers
/// do before DeleteRole/User/Group (which refuse while any remain). Gone ones are skipped.
pub fn drop_own_policies<'a>(
    iam: &Iam,
    acct: &str,
    kind: PrincipalKind,
    name: &str,
    inline: impl IntoIterator<Item = &'a String>,
    attached: &[String],
) -> Result<(), AwsError> {
    for p in inline {
        ignore_missing(iam.delete_inline_policy(acct, kind, name, p))?;
    }
    for arn in attached {
        ignore_missing(iam.detach_policy(acct, kind, name, arn))?;
    }
    Ok(())
}

/// Tag changes from `from` to `to` as (keys to remove, tags to set).
pub fn tag_diff(
    from: &[(String, String)],
    to: &[(String, String)],
) -> (Vec<String>, Vec<(String, String)>) {
    let gone = from
        .iter()
        .filter(|(k, _)| !to.iter().any(|(n, _)| n == k))
        .map(|(k, _)| k.clone())
        .collect();
    let set = to.iter().filter(|t| !from.contains(t)).cloned().collect();
    (gone, set)
}

// --- AWS::IAM::User ---------------------------------------------------------------------------

pub struct UserProvider {
    pub iam: Iam,
}

#[derive(Debug, Clone, PartialEq)]
struct UserSpec {
    path: String,
    boundary: Option<String>,
    tags: Vec<(String, String)>,
    groups: Vec<String>,
    /// (password, reset required); the password is write-only.
    login: Option<(String, bool)>,
    policies: PolicySet,
}

fn user_spec(ctx: &ProviderContext, props: &Map<String, Value>) -> Result<UserSpec, ProviderError> {
    check_known(
        USER,
        props,
        &[
            "Groups",
            "LoginProfile",
            "ManagedPolicyArns",
            "Path",
            "PermissionsBoundary",
            "Policies",
            "Tags",
            "UserName",
        ],
        &[],
    )?;
    let login = match props.get("LoginProfile") {
        None | Some(Value::Null) => None,
        Some(Value::Object(lp)) => Some((
            crate::providers::required(lp, "Password")?,
            opt(lp, "PasswordResetRequired")?.is_some_and(|v| v == "true"),
        )),
        Some(_) => {
            return Err(ProviderError::Failed(
                "Properties validation failed for resource with message: #/LoginProfile: expected type: JSONObject".into(),
            ));
        }
    };
    Ok(UserSpec {
        path: opt(props, "Path")?.unwrap_or_else(|| "/".to_string()),
        boundary: opt(props, "PermissionsBoundary")?,
        tags: tags(ctx, props)?,
        groups: strings(props, "Groups")?,
        login,
        policies: PolicySet::from_props(props)?,
    })
}

impl UserProvider {
    fn apply(
        &self,
        account: &str,
        name: &str,
        from: &UserSpec,
        to: &UserSpec,
    ) -> Result<(), AwsError> {
        let iam = &self.iam;
        if from.path != to.path {
            iam.update_user(account, name, Some(&to.path), None)?;
        }
        if from.boundary != to.boundary {
            match &to.boundary {
                Some(b) => iam.put_user_permissions_boundary(account, name, b)?,
                None => ignore_missing(iam.delete_user_permissions_boundary(account, name))?,
            }
        }
        let (gone, set) = tag_diff(&from.tags, &to.tags);
        if !gone.is_empty() {
            iam.untag_user(account, name, &gone)?;
        }
        if !set.is_empty() {
            iam.tag_user(account, name, &set)?;
        }
        match (&from.login, &to.login) {
            (None, Some((pw, reset))) => {
                iam.create_login_profile(account, name, pw, *reset)?;
            }
            (Some(_), Some((pw, reset))) if from.login != to.login => {
                iam.update_login_profile(account, name, Some(pw), Some(*reset))?
            }
            (Some(_), None) => ignore_missing(iam.delete_login_profile(account, name))?,
            _ => {}
        }
        for g in from.groups.iter().filter(|g| !to.groups.contains(g)) {
            ignore_missing(iam.remove_user_from_group(account, g, name))?;
        }
        for g in to.groups.iter().filter(|g| !from.groups.contains(g)) {
            iam.add_user_to_group(account, g, name)?;
        }
        reconcile_policies(
            iam,
            account,
            PrincipalKind::User,
            name,
            &from.policies,
            &to.policies,
        )
    }

    fn outcome(&self, account: &str, name: &str) -> Result<ProviderOutcome, AwsError> {
        let u = self.iam.get_user(account, name)?;
        Ok(ProviderOutcome {
            physical_id: u.name.clone(),
            attributes: Map::from_iter([("Arn".to_string(), json!(u.arn))]),
            ..Default::default()
        })
    }
}

fn empty_user(path: &str) -> UserSpec {
    UserSpec {
        path: path.to_string(),
        boundary: None,
        tags: Vec::new(),
        groups: Vec::new(),
        login: None,
        policies: PolicySet::default(),
    }
}

#[async_trait::async_trait]
impl Provider for UserProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Arn"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(USER, properties)?;
        let spec = user_spec(ctx, &props)?;
        let name = match opt(&props, "UserName")? {
            Some(n) => n,
            None => ctx.generated_name(64, ""),
        };
        let acct = &ctx.account_id;
        if self.iam.get_user(acct, &name).is_ok() {
            return Err(already_exists(ctx, &name));
        }
        self.iam
            .create_user(
                acct,
                &name,
                Some(&spec.path),
                spec.boundary.as_deref(),
                &spec.tags,
            )
            .map_err(|e| fail(ctx, e))?;
        let base = UserSpec {
            boundary: spec.boundary.clone(),
            tags: spec.tags.clone(),
            ..empty_user(&spec.path)
        };
        if let Err(e) = self.apply(acct, &name, &base, &spec) {
            // Leave nothing behind: a failed create is not recorded, so nothing would delete it.
            let _ = self.apply(acct, &name, &spec, &base);
            let _ = self.iam.delete_user(acct, &name);
            return Err(fail(ctx, e));
        }
        self.outcome(acct, &name).map_err(|e| fail(ctx, e))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let mut from = user_spec(ctx, &*object(USER, old)?)?;
        let to = user_spec(ctx, &*object(USER, new)?)?;
        let acct = &ctx.account_id;
        // Tags from the user as it is: a stack-level tag UpdateStack dropped is not in `old`.
        from.tags = self
            .iam
            .get_user(acct, physical_id)
            .map_err(|e| fail(ctx, e))?
            .tags;
        if let Err(e) = self.apply(acct, physical_id, &from, &to) {
            let _ = self.apply(acct, physical_id, &to, &from);
            return Err(fail(ctx, e));
        }
        self.outcome(acct, physical_id).map_err(|e| fail(ctx, e))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        let acct = &ctx.account_id;
        let iam = &self.iam;
        let user = match iam.get_user(acct, physical_id) {
            Ok(u) => u,
            Err(e) if e.code == "NoSuchEntity" => {
                return Err(ProviderError::NotFound(physical_id.to_string()));
            }
            Err(e) => return Err(fail(ctx, e)),
        };
        // As AWS's handler does: clear what DeleteUser would refuse over, then delete.
        let cleanup = || -> Result<(), AwsError> {
            if user.login_profile.is_some() {
                ignore_missing(iam.delete_login_profile(acct, physical_id))?;
            }
            for g in iam.list_groups_for_user(acct, physical_id)? {
                ignore_missing(iam.remove_user_from_group(acct, &g.name, physical_id))?;
            }
            drop_own_policies(
                iam,
                acct,
                PrincipalKind::User,
                physical_id,
                user.inline.keys(),
                &user.attached,
            )?;
            ignore_missing(iam.delete_user(acct, physical_id))
        };
        cleanup().map_err(|e| fail(ctx, e))
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let acct = &ctx.account_id;
        let u = match self.iam.get_user(acct, physical_id) {
            Ok(u) => u,
            Err(e) if e.code == "NoSuchEntity" => return Ok(None),
            Err(e) => return Err(fail(ctx, e)),
        };
        let groups = self
            .iam
            .list_groups_for_user(acct, physical_id)
            .map_err(|e| fail(ctx, e))?;
        let mut p = Map::new();
        p.insert("UserName".into(), json!(u.name));
        p.insert("Path".into(), json!(u.path));
        if let Some(b) = &u.permissions_boundary {
            p.insert("PermissionsBoundary".into(), json!(b));
        }
        p.insert(
            "Groups".into(),
            json!(groups.iter().map(|g| g.name.clone()).collect::<Vec<_>>()),
        );
        p.insert("ManagedPolicyArns".into(), json!(u.attached));
        p.insert("Policies".into(), policies_value(&u.inline));
        p.insert("Tags".into(), tags_value(&u.tags));
        Ok(Some(Observed {
            properties: p,
            attributes: Map::from_iter([("Arn".to_string(), json!(u.arn))]),
        }))
    }
}

// --- AWS::IAM::Group --------------------------------------------------------------------------

pub struct GroupProvider {
    pub iam: Iam,
}

fn group_spec(props: &Map<String, Value>) -> Result<(String, PolicySet), ProviderError> {
    check_known(
        GROUP,
        props,
        &["GroupName", "ManagedPolicyArns", "Path", "Policies"],
        &[],
    )?;
    Ok((
        opt(props, "Path")?.unwrap_or_else(|| "/".to_string()),
        PolicySet::from_props(props)?,
    ))
}

impl GroupProvider {
    fn outcome(&self, account: &str, name: &str) -> Result<ProviderOutcome, AwsError> {
        let (g, _) = self.iam.get_group(account, name)?;
        Ok(ProviderOutcome {
            physical_id: g.name.clone(),
            attributes: Map::from_iter([("Arn".to_string(), json!(g.arn))]),
            ..Default::default()
        })
    }
}

#[async_trait::async_trait]
impl Provider for GroupProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Arn"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(GROUP, properties)?;
        let (path, policies) = group_spec(&props)?;
        let name = match opt(&props, "GroupName")? {
            Some(n) => n,
            None => ctx.generated_name(128, ""),
        };
        let acct = &ctx.account_id;
        if self.iam.get_group(acct, &name).is_ok() {
            return Err(already_exists(ctx, &name));
        }
        self.iam
            .create_group(acct, &name, Some(&path))
            .map_err(|e| fail(ctx, e))?;
        let none = PolicySet::default();
        if let Err(e) = reconcile_policies(
            &self.iam,
            acct,
            PrincipalKind::Group,
            &name,
            &none,
            &policies,
        ) {
            let _ = reconcile_policies(
                &self.iam,
                acct,
                PrincipalKind::Group,
                &name,
                &policies,
                &none,
            );
            let _ = self.iam.delete_group(acct, &name);
            return Err(fail(ctx, e));
        }
        self.outcome(acct, &name).map_err(|e| fail(ctx, e))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let (old_path, from) = group_spec(&*object(GROUP, old)?)?;
        let (path, to) = group_spec(&*object(GROUP, new)?)?;
        let acct = &ctx.account_id;
        let run = || -> Result<(), AwsError> {
            if old_path != path {
                self.iam
                    .update_group(acct, physical_id, Some(&path), None)?;
            }
            reconcile_policies(
                &self.iam,
                acct,
                PrincipalKind::Group,
                physical_id,
                &from,
                &to,
            )
        };
        if let Err(e) = run() {
            let _ = reconcile_policies(
                &self.iam,
                acct,
                PrincipalKind::Group,
                physical_id,
                &to,
                &from,
            );
            if old_path != path {
                let _ = self
                    .iam
                    .update_group(acct, physical_id, Some(&old_path), None);
            }
            return Err(fail(ctx, e));
        }
        self.outcome(acct, physical_id).map_err(|e| fail(ctx, e))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        let acct = &ctx.account_id;
        let iam = &self.iam;
        let (g, users) = match iam.get_group(acct, physical_id) {
            Ok(x) => x,
            Err(e) if e.code == "NoSuchEntity" => {
                return Err(ProviderError::NotFound(physical_id.to_string()));
            }
            Err(e) => return Err(fail(ctx, e)),
        };
        let cleanup = || -> Result<(), AwsError> {
            for u in &users {
                ignore_missing(iam.remove_user_from_group(acct, physical_id, &u.name))?;
            }
            drop_own_policies(
                iam,
                acct,
                PrincipalKind::Group,
                physical_id,
                g.inline.keys(),
                &g.attached,
            )?;
            ignore_missing(iam.delete_group(acct, physical_id))
        };
        cleanup().map_err(|e| fail(ctx, e))
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let (g, _) = match self.iam.get_group(&ctx.account_id, physical_id) {
            Ok(x) => x,
            Err(e) if e.code == "NoSuchEntity" => return Ok(None),
            Err(e) => return Err(fail(ctx, e)),
        };
        let mut p = Map::new();
        p.insert("GroupName".into(), json!(g.name));
        p.insert("Path".into(), json!(g.path));
        p.insert("ManagedPolicyArns".into(), json!(g.attached));
        p.insert("Policies".into(), policies_value(&g.inline));
        Ok(Some(Observed {
            properties: p,
            attributes: Map::from_iter([("Arn".to_string(), json!(g.arn))]),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::test_support::{ctx, services};

    fn doc(action: &str) -> Value {
        json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": action, "Resource": "*"}]})
    }

    #[tokio::test]
    async fn user_and_group_reconcile_and_clean_up() {
        let s = services();
        let reg = crate::providers::registry(&s);
        let (users, groups) = (
            reg.get(USER).expect("user").clone(),
            reg.get(GROUP).expect("group").clone(),
        );
        let (cu, cg) = (ctx("User", USER), ctx("Group", GROUP));
        let acct = "000000000000";
        let g_props = json!({"GroupName": "devs", "Policies": [{"PolicyName": "gp", "PolicyDocument": doc("s3:*")}]});
        groups.create(&cg, &g_props).await.expect("group");
        let old = json!({
            "Path": "/a/",
            "Groups": ["devs"],
            "LoginProfile": {"Password": "pw-1", "PasswordResetRequired": true},
            "Policies": [{"PolicyName": "up", "PolicyDocument": doc("sqs:*")}],
            "ManagedPolicyArns": ["arn:aws:iam::aws:policy/ReadOnlyAccess"],
            "Tags": [{"Key": "k", "Value": "1"}],
        });
        let out = users.create(&cu, &old).await.expect("user");
        assert!(out.physical_id.starts_with("teststack-User-"));
        let u = s.iam.get_user(acct, &out.physical_id).expect("user");
        assert_eq!(out.attributes["Arn"], json!(u.arn));
        assert!(u.login_profile.is_some_and(|l| l.password_reset_required));
        let (_, members) = s.iam.get_group(acct, "devs").expect("group");
        assert_eq!(members.len(), 1);

        let new = json!({
            "Path": "/b/",
            "Policies": [{"PolicyName": "up2", "PolicyDocument": doc("sns:*")}],
            "Tags": [{"Key": "k", "Value": "2"}],
        });
        users
            .update(&cu, &out.physical_id, &old, &new)
            .await
            .expect("update");
        let u = s.iam.get_user(acct, &out.physical_id).expect("user");
        assert_eq!(u.path, "/b/");
        assert_eq!(u.inline.keys().collect::<Vec<_>>(), vec!["up2"]);
        assert!(u.attached.is_empty() && u.login_profile.is_none());
        assert_eq!(u.tags, vec![("k".to_string(), "2".to_string())]);
        assert!(s.iam.get_group(acct, "devs").expect("group").1.is_empty());

        // A failed update (a group that does not exist) is undone.
        let bad = json!({"Path": "/c/", "Groups": ["nope"], "Tags": [{"Key": "k", "Value": "3"}]});
        users
            .update(&cu, &out.physical_id, &new, &bad)
            .await
            .expect_err("no group");
        assert_eq!(s.iam.get_user(acct, &out.physical_id).expect("user"), u);

        users
            .update(&cu, &out.physical_id, &new, &old)
            .await
            .expect("back");
        let observed = users
            .read(&cu, &out.physical_id, &old)
            .await
            .expect("read")
            .expect("exists");
        assert_eq!(observed.properties["Groups"], json!(["devs"]));
        users
            .delete(&cu, &out.physical_id, &old)
            .await
            .expect("delete user");
        assert!(s.iam.get_user(acct, &out.physical_id).is_err());
        groups
            .delete(&cg, "devs", &g_props)
            .await
            .expect("delete group");
        assert!(s.iam.get_group(acct, "devs").is_err());
        assert_eq!(
            groups.read(&cg, "devs", &g_props).await.expect("read"),
            None
        );
    }
}
