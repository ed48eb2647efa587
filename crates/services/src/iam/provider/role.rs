//! AWS::IAM::Role, AWS::IAM::ServiceLinkedRole and AWS::IAM::InstanceProfile.

use super::principal::{
    PolicySet, drop_own_policies, ignore_missing, reconcile_policies, tag_diff,
};
use super::{Iam, document_value, fail, opt, policies_value, strings, tags_value};
use crate::iam::model::Role;
use crate::iam::{CreateRoleInput, PrincipalKind};
use crate::providers::{
    already_exists, check_known, given_or_generated_name, json_text, object, tags,
};
use cumulo_engine::{Observed, Provider, ProviderContext, ProviderError, ProviderOutcome};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};

pub const ROLE: &str = "AWS::IAM::Role";
pub const SERVICE_LINKED_ROLE: &str = "AWS::IAM::ServiceLinkedRole";
pub const INSTANCE_PROFILE: &str = "AWS::IAM::InstanceProfile";

pub struct RoleProvider {
    pub iam: Iam,
}

/// Everything about a role an update can change in place.
#[derive(Debug, Clone, PartialEq)]
pub struct RoleSpec {
    pub trust: String,
    /// Empty when the role has none.
    pub description: String,
    pub max_session: i64,
    pub boundary: Option<String>,
    pub tags: Vec<(String, String)>,
    pub policies: PolicySet,
}

impl RoleSpec {
    fn from_props(
        ctx: &ProviderContext,
        props: &Map<String, Value>,
    ) -> Result<Self, ProviderError> {
        check_known(
            ROLE,
            props,
            &[
                "AssumeRolePolicyDocument",
                "Description",
                "ManagedPolicyArns",
                "MaxSessionDuration",
                "Path",
                "PermissionsBoundary",
                "Policies",
                "RoleName",
                "Tags",
            ],
            &[],
        )?;
        let trust = json_text(props, "AssumeRolePolicyDocument")?.ok_or_else(|| {
            ProviderError::Failed(
                "Properties validation failed for resource with message: #: required key [AssumeRolePolicyDocument] not found".into(),
            )
        })?;
        let max_session = match opt(props, "MaxSessionDuration")? {
            None => crate::iam::DEFAULT_MAX_SESSION,
            Some(v) => v.parse().map_err(|_| {
                ProviderError::Failed(format!(
                    "Properties validation failed for resource with message: #/MaxSessionDuration: expected type: Integer, found: {v}"
                ))
            })?,
        };
        Ok(RoleSpec {
            trust,
            description: opt(props, "Description")?.unwrap_or_default(),
            max_session,
            boundary: opt(props, "PermissionsBoundary")?,
            tags: tags(ctx, props)?,
            policies: PolicySet::from_props(props)?,
        })
    }

    /// The role as it is now.
    fn live(r: &Role) -> Self {
        RoleSpec {
            trust: r.assume_role_policy.clone(),
            description: r.description.clone().unwrap_or_default(),
            max_session: r.max_session_duration,
            boundary: r.permissions_boundary.clone(),
            tags: r.tags.clone(),
            policies: PolicySet {
                inline: r.inline.clone(),
                attached: r.attached.clone(),
            },
        }
    }
}

/// Moves the role from `from` to `to`, one mutation per differing part.
fn apply(
    iam: &Iam,
    account: &str,
    name: &str,
    from: &RoleSpec,
    to: &RoleSpec,
) -> Result<(), AwsError> {
    if from.trust != to.trust {
        iam.update_assume_role_policy(account, name, &to.trust)?;
    }
    if from.description != to.description || from.max_session != to.max_session {
        iam.update_role(account, name, Some(&to.description), Some(to.max_session))?;
    }
    if from.boundary != to.boundary {
        match &to.boundary {
            Some(b) => iam.put_role_permissions_boundary(account, name, b)?,
            None => ignore_missing(iam.delete_role_permissions_boundary(account, name))?,
        }
    }
    let (gone, set) = tag_diff(&from.tags, &to.tags);
    if !gone.is_empty() {
        iam.untag_role(account, name, &gone)?;
    }
    if !set.is_empty() {
        iam.tag_role(account, name, &set)?;
    }
    reconcile_policies(
        iam,
        account,
        PrincipalKind::Role,
        name,
        &from.policies,
        &to.policies,
    )
}

/// Moves the role from what the template declared before (`from`) to what it declares now
/// (`to`), touching only what the template manages (an AWS::IAM::Policy resource's inline
/// policy on the same role is left alone). If a mutation fails, the role is reconciled back to
/// the snapshot of the live role taken first, so a failed update leaves it exactly as it was.
pub fn update_role_compensated(
    iam: &Iam,
    account: &str,
    name: &str,
    from: &RoleSpec,
    to: &RoleSpec,
) -> Result<(), AwsError> {
    let before = RoleSpec::live(&iam.get_role(account, name)?);
    if let Err(e) = apply(iam, account, name, from, to) {
        if let Ok(now) = iam.get_role(account, name) {
            let _ = apply(iam, account, name, &RoleSpec::live(&now), &before);
        }
        return Err(e);
    }
    Ok(())
}

fn role_outcome(r: &Role) -> ProviderOutcome {
    ProviderOutcome {
        physical_id: r.name.clone(),
        attributes: Map::from_iter([
            ("Arn".to_string(), json!(r.arn)),
            ("RoleId".to_string(), json!(r.id)),
        ]),
        ..Default::default()
    }
}

#[async_trait::async_trait]
impl Provider for RoleProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Arn", "RoleId"])
    }

    fn created_identity(&self, ctx: &ProviderContext, properties: &Value) -> Option<String> {
        let props = object(ROLE, properties).ok()?;
        given_or_generated_name(ctx, &props, "RoleName", 64).ok()
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(ROLE, properties)?;
        let spec = RoleSpec::from_props(ctx, &props)?;
        let name = given_or_generated_name(ctx, &props, "RoleName", 64)?;
        let acct = &ctx.account_id;
        if self.iam.get_role(acct, &name).is_ok() {
            return Err(already_exists(ctx, &name));
        }
        let path = opt(&props, "Path")?;
        self.iam
            .create_role(
                acct,
                CreateRoleInput {
                    name: name.clone(),
                    path,
                    assume_role_policy: spec.trust.clone(),
                    description: (!spec.description.is_empty()).then(|| spec.description.clone()),
                    max_session_duration: Some(spec.max_session),
                    permissions_boundary: spec.boundary.clone(),
                    tags: spec.tags.clone(),
                },
            )
            .map_err(|e| fail(ctx, e))?;
        let none = PolicySet::default();
        if let Err(e) = reconcile_policies(
            &self.iam,
            acct,
            PrincipalKind::Role,
            &name,
            &none,
            &spec.policies,
        ) {
            // A failed create is not recorded, so nothing else would ever delete the role.
            let _ = reconcile_policies(
                &self.iam,
                acct,
                PrincipalKind::Role,
                &name,
                &spec.policies,
                &none,
            );
            let _ = self.iam.delete_role(acct, &name);
            return Err(fail(ctx, e));
        }
        let role = self.iam.get_role(acct, &name).map_err(|e| fail(ctx, e))?;
        Ok(role_outcome(&role))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let mut from = RoleSpec::from_props(ctx, &*object(ROLE, old)?)?;
        let to = RoleSpec::from_props(ctx, &*object(ROLE, new)?)?;
        // Tags from the role as it is: a stack-level tag UpdateStack dropped is not in `old`.
        from.tags = self
            .iam
            .get_role(&ctx.account_id, physical_id)
            .map_err(|e| fail(ctx, e))?
            .tags;
        update_role_compensated(&self.iam, &ctx.account_id, physical_id, &from, &to)
            .map_err(|e| fail(ctx, e))?;
        let role = self
            .iam
            .get_role(&ctx.account_id, physical_id)
            .map_err(|e| fail(ctx, e))?;
        Ok(role_outcome(&role))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        let acct = &ctx.account_id;
        let iam = &self.iam;
        let role = match iam.get_role(acct, physical_id) {
            Ok(r) => r,
            Err(e) if e.code == "NoSuchEntity" => {
                return Err(ProviderError::NotFound(physical_id.to_string()));
            }
            Err(e) => return Err(fail(ctx, e)),
        };
        // As AWS's handler does: drop the role's own policies, then the role. Instance profiles
        // holding it are other resources; DeleteRole refuses while one does, as on AWS.
        let cleanup = || -> Result<(), AwsError> {
            drop_own_policies(
                iam,
                acct,
                PrincipalKind::Role,
                physical_id,
                role.inline.keys(),
                &role.attached,
            )?;
            ignore_missing(iam.delete_role(acct, physical_id))
        };
        cleanup().map_err(|e| fail(ctx, e))
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let r = match self.iam.get_role(&ctx.account_id, physical_id) {
            Ok(r) => r,
            Err(e) if e.code == "NoSuchEntity" => return Ok(None),
            Err(e) => return Err(fail(ctx, e)),
        };
        let mut p = Map::new();
        p.insert("RoleName".into(), json!(r.name));
        p.insert("Path".into(), json!(r.path));
        p.insert(
            "AssumeRolePolicyDocument".into(),
            document_value(&r.assume_role_policy),
        );
        if let Some(d) = &r.description {
            p.insert("Description".into(), json!(d));
        }
        p.insert("MaxSessionDuration".into(), json!(r.max_session_duration));
        if let Some(b) = &r.permissions_boundary {
            p.insert("PermissionsBoundary".into(), json!(b));
        }
        p.insert("ManagedPolicyArns".into(), json!(r.attached));
        p.insert("Policies".into(), policies_value(&r.inline));
        p.insert("Tags".into(), tags_value(&r.tags));
        Ok(Some(Observed {
            properties: p,
            attributes: role_outcome(&r).attributes,
        }))
    }
}

// --- AWS::IAM::ServiceLinkedRole --------------------------------------------------------------

pub struct ServiceLinkedRoleProvider {
    pub iam: Iam,
}

fn slr_outcome(r: &Role) -> ProviderOutcome {
    ProviderOutcome {
        physical_id: r.name.clone(),
        attributes: Map::from_iter([("RoleName".to_string(), json!(r.name))]),
        ..Default::default()
    }
}

#[async_trait::async_trait]
impl Provider for ServiceLinkedRoleProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["RoleName"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(SERVICE_LINKED_ROLE, properties)?;
        check_known(
            SERVICE_LINKED_ROLE,
            &props,
            &["AWSServiceName", "CustomSuffix", "Description"],
            &[],
        )?;
        let service = opt(&props, "AWSServiceName")?.ok_or_else(|| {
            ProviderError::Failed(
                "Properties validation failed for resource with message: #: required key [AWSServiceName] not found".into(),
            )
        })?;
        let role = self
            .iam
            .create_service_linked_role(
                &ctx.account_id,
                &service,
                opt(&props, "Description")?.as_deref(),
                opt(&props, "CustomSuffix")?.as_deref(),
            )
            .map_err(|e| fail(ctx, e))?;
        Ok(slr_outcome(&role))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(SERVICE_LINKED_ROLE, new)?;
        check_known(
            SERVICE_LINKED_ROLE,
            &props,
            &["AWSServiceName", "CustomSuffix", "Description"],
            &[],
        )?;
        let description = opt(&props, "Description")?.unwrap_or_default();
        let role = self
            .iam
            .update_role(&ctx.account_id, physical_id, Some(&description), None)
            .map_err(|e| fail(ctx, e))?;
        Ok(slr_outcome(&role))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        match self
            .iam
            .delete_service_linked_role(&ctx.account_id, physical_id)
        {
            Ok(_) => Ok(()),
            Err(e) if e.code == "NoSuchEntity" => {
                Err(ProviderError::NotFound(physical_id.to_string()))
            }
            Err(e) => Err(fail(ctx, e)),
        }
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let r = match self.iam.get_role(&ctx.account_id, physical_id) {
            Ok(r) => r,
            Err(e) if e.code == "NoSuchEntity" => return Ok(None),
            Err(e) => return Err(fail(ctx, e)),
        };
        let service = r
            .path
            .trim_start_matches("/aws-service-role/")
            .trim_end_matches('/')
            .to_string();
        let mut p = Map::new();
        p.insert("AWSServiceName".into(), json!(service));
        if let Some(d) = &r.description {
            p.insert("Description".into(), json!(d));
        }
        if let Some((_, suffix)) = r.name.split_once('_') {
            p.insert("CustomSuffix".into(), json!(suffix));
        }
        Ok(Some(Observed {
            properties: p,
            attributes: slr_outcome(&r).attributes,
        }))
    }
}

// --- AWS::IAM::InstanceProfile ----------------------------------------------------------------

pub struct InstanceProfileProvider {
    pub iam: Iam,
}

fn profile_props(props: &Map<String, Value>) -> Result<Vec<String>, ProviderError> {
    check_known(
        INSTANCE_PROFILE,
        props,
        &["InstanceProfileName", "Path", "Roles"],
        &[],
    )?;
    let roles = strings(props, "Roles")?;
    if roles.is_empty() {
        return Err(ProviderError::Failed(
            "Properties validation failed for resource with message: #: required key [Roles] not found".into(),
        ));
    }
    Ok(roles)
}

fn profile_outcome(iam: &Iam, account: &str, name: &str) -> Result<ProviderOutcome, AwsError> {
    let (p, _) = iam.get_instance_profile(account, name)?;
    Ok(ProviderOutcome {
        physical_id: p.name.clone(),
        attributes: Map::from_iter([("Arn".to_string(), json!(p.arn))]),
        ..Default::default()
    })
}

#[async_trait::async_trait]
impl Provider for InstanceProfileProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Arn"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(INSTANCE_PROFILE, properties)?;
        let roles = profile_props(&props)?;
        let name = match opt(&props, "InstanceProfileName")? {
            Some(n) => n,
            None => ctx.generated_name(128, ""),
        };
        let acct = &ctx.account_id;
        if self.iam.get_instance_profile(acct, &name).is_ok() {
            return Err(already_exists(ctx, &name));
        }
        self.iam
            .create_instance_profile(acct, &name, opt(&props, "Path")?.as_deref(), &[])
            .map_err(|e| fail(ctx, e))?;
        for r in &roles {
            if let Err(e) = self.iam.add_role_to_instance_profile(acct, &name, r) {
                for added in roles.iter().take_while(|x| *x != r) {
                    let _ = self
                        .iam
                        .remove_role_from_instance_profile(acct, &name, added);
                }
                let _ = self.iam.delete_instance_profile(acct, &name);
                return Err(fail(ctx, e));
            }
        }
        profile_outcome(&self.iam, acct, &name).map_err(|e| fail(ctx, e))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let from = profile_props(&*object(INSTANCE_PROFILE, old)?)?;
        let to = profile_props(&*object(INSTANCE_PROFILE, new)?)?;
        let acct = &ctx.account_id;
        let iam = &self.iam;
        let run = || -> Result<(), AwsError> {
            for r in from.iter().filter(|r| !to.contains(r)) {
                ignore_missing(iam.remove_role_from_instance_profile(acct, physical_id, r))?;
            }
            for r in to.iter().filter(|r| !from.contains(r)) {
                iam.add_role_to_instance_profile(acct, physical_id, r)?;
            }
            Ok(())
        };
        if let Err(e) = run() {
            for r in to.iter().filter(|r| !from.contains(r)) {
                let _ = iam.remove_role_from_instance_profile(acct, physical_id, r);
            }
            for r in from.iter().filter(|r| !to.contains(r)) {
                let _ = iam.add_role_to_instance_profile(acct, physical_id, r);
            }
            return Err(fail(ctx, e));
        }
        profile_outcome(iam, acct, physical_id).map_err(|e| fail(ctx, e))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        let acct = &ctx.account_id;
        let (_, roles) = match self.iam.get_instance_profile(acct, physical_id) {
            Ok(x) => x,
            Err(e) if e.code == "NoSuchEntity" => {
                return Err(ProviderError::NotFound(physical_id.to_string()));
            }
            Err(e) => return Err(fail(ctx, e)),
        };
        let cleanup = || -> Result<(), AwsError> {
            for r in &roles {
                ignore_missing(self.iam.remove_role_from_instance_profile(
                    acct,
                    physical_id,
                    &r.name,
                ))?;
            }
            ignore_missing(self.iam.delete_instance_profile(acct, physical_id))
        };
        cleanup().map_err(|e| fail(ctx, e))
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let (p, roles) = match self.iam.get_instance_profile(&ctx.account_id, physical_id) {
            Ok(x) => x,
            Err(e) if e.code == "NoSuchEntity" => return Ok(None),
            Err(e) => return Err(fail(ctx, e)),
        };
        let mut props = Map::new();
        props.insert("InstanceProfileName".into(), json!(p.name));
        props.insert("Path".into(), json!(p.path));
        props.insert(
            "Roles".into(),
            json!(roles.iter().map(|r| r.name.clone()).collect::<Vec<_>>()),
        );
        Ok(Some(Observed {
            properties: props,
            attributes: Map::from_iter([("Arn".to_string(), json!(p.arn))]),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::test_support::{ctx, services};

    const TRUST: &str = r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":{"Service":"lambda.amazonaws.com"},"Action":"sts:AssumeRole"}]}"#;

    fn doc(action: &str) -> Value {
        json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": action, "Resource": "*"}]})
    }

    #[tokio::test]
    async fn failed_update_leaves_the_role_as_it_was() {
        let s = services();
        let p = crate::providers::registry(&s)
            .get(ROLE)
            .expect("registered")
            .clone();
        let c = ctx("Role", ROLE);
        let old = json!({
            "AssumeRolePolicyDocument": TRUST,
            "Description": "before",
            "Policies": [{"PolicyName": "keep", "PolicyDocument": doc("s3:GetObject")}],
            "ManagedPolicyArns": ["arn:aws:iam::aws:policy/ReadOnlyAccess"],
            "Tags": [{"Key": "k", "Value": "v"}],
        });
        let out = p.create(&c, &old).await.expect("create");
        assert!(
            out.attributes["RoleId"]
                .as_str()
                .is_some_and(|id| id.starts_with("AROA"))
        );
        // An inline policy another resource (AWS::IAM::Policy) put on the role: not the
        // role's to manage, so updates leave it alone.
        s.iam
            .put_inline_policy(
                "000000000000",
                PrincipalKind::Role,
                &out.physical_id,
                "external",
                &doc("sns:*").to_string(),
            )
            .expect("put");
        let before = s
            .iam
            .get_role("000000000000", &out.physical_id)
            .expect("role");

        // Every part changes, and the last step (attaching a policy that does not exist) fails.
        let new = json!({
            "AssumeRolePolicyDocument": TRUST.replace("lambda", "ec2"),
            "Description": "after",
            "MaxSessionDuration": 7200,
            "PermissionsBoundary": "arn:aws:iam::aws:policy/PowerUserAccess",
            "Policies": [{"PolicyName": "added", "PolicyDocument": doc("sqs:*")}],
            "ManagedPolicyArns": ["arn:aws:iam::000000000000:policy/does-not-exist"],
            "Tags": [{"Key": "other", "Value": "x"}],
        });
        let e = p
            .update(&c, &out.physical_id, &old, &new)
            .await
            .expect_err("fails");
        assert!(
            e.to_string()
                .contains("does not exist or is not attachable"),
            "{e}"
        );
        let after = s
            .iam
            .get_role("000000000000", &out.physical_id)
            .expect("role");
        assert_eq!(after, before);

        // The same update without the bad ARN goes through part by part.
        let mut good = new.clone();
        good["ManagedPolicyArns"] = json!(["arn:aws:iam::aws:policy/AdministratorAccess"]);
        p.update(&c, &out.physical_id, &old, &good)
            .await
            .expect("update");
        let r = s
            .iam
            .get_role("000000000000", &out.physical_id)
            .expect("role");
        assert_eq!(r.description.as_deref(), Some("after"));
        assert_eq!(r.max_session_duration, 7200);
        assert_eq!(
            r.inline.keys().collect::<Vec<_>>(),
            vec!["added", "external"]
        );
        assert_eq!(
            r.attached,
            vec!["arn:aws:iam::aws:policy/AdministratorAccess"]
        );
        assert_eq!(r.tags, vec![("other".to_string(), "x".to_string())]);
        assert!(r.assume_role_policy.contains("ec2"));

        let observed = p
            .read(&c, &out.physical_id, &good)
            .await
            .expect("read")
            .expect("exists");
        assert_eq!(observed.properties["Description"], json!("after"));
        assert_eq!(observed.attributes["Arn"], json!(r.arn));

        s.iam
            .delete_inline_policy(
                "000000000000",
                PrincipalKind::Role,
                &out.physical_id,
                "external",
            )
            .expect("delete external");
        p.delete(&c, &out.physical_id, &good).await.expect("delete");
        assert!(s.iam.get_role("000000000000", &out.physical_id).is_err());
        assert!(matches!(
            p.delete(&c, &out.physical_id, &good).await,
            Err(ProviderError::NotFound(_))
        ));
        assert_eq!(
            p.read(&c, &out.physical_id, &good).await.expect("read"),
            None
        );
    }

    #[tokio::test]
    async fn failed_create_leaves_nothing_behind() {
        let s = services();
        let p = crate::providers::registry(&s)
            .get(ROLE)
            .expect("registered")
            .clone();
        let c = ctx("Role", ROLE);
        let props = json!({
            "RoleName": "half-made",
            "AssumeRolePolicyDocument": TRUST,
            "Policies": [{"PolicyName": "p", "PolicyDocument": doc("s3:*")}],
            "ManagedPolicyArns": ["arn:aws:iam::000000000000:policy/none"],
        });
        p.create(&c, &props).await.expect_err("fails");
        assert!(s.iam.get_role("000000000000", "half-made").is_err());
        let e = p
            .create(
                &c,
                &json!({"AssumeRolePolicyDocument": TRUST, "Unknown": 1}),
            )
            .await
            .expect_err("unknown property");
        assert!(e.to_string().contains("Unknown"), "{e}");
    }
}
