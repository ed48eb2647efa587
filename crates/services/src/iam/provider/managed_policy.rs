//! AWS::IAM::ManagedPolicy: a customer managed policy and its attachments. A changed document
//! becomes a new default version (the oldest non-default one is deleted first when the policy
//! already has five, as AWS's handler does).

use super::principal::ignore_missing;
use super::{Iam, document_value, fail, opt, strings};
use crate::iam::{CreatePolicyInput, MAX_VERSIONS, PrincipalKind};
use crate::providers::{already_exists, check_known, json_text, object};
use cumulo_engine::{Observed, Provider, ProviderContext, ProviderError, ProviderOutcome};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};

pub const MANAGED_POLICY: &str = "AWS::IAM::ManagedPolicy";

pub struct ManagedPolicyProvider {
    pub iam: Iam,
}

fn document(props: &Map<String, Value>) -> Result<String, ProviderError> {
    check_known(
        MANAGED_POLICY,
        props,
        &[
            "Description",
            "Groups",
            "ManagedPolicyName",
            "Path",
            "PolicyDocument",
            "Roles",
            "Users",
        ],
        &[],
    )?;
    json_text(props, "PolicyDocument")?.ok_or_else(|| {
        ProviderError::Failed(
            "Properties validation failed for resource with message: #: required key [PolicyDocument] not found".into(),
        )
    })
}

fn targets(props: &Map<String, Value>) -> Result<Vec<(PrincipalKind, String)>, ProviderError> {
    let mut out = Vec::new();
    for (key, kind) in [
        ("Roles", PrincipalKind::Role),
        ("Users", PrincipalKind::User),
        ("Groups", PrincipalKind::Group),
    ] {
        out.extend(strings(props, key)?.into_iter().map(|n| (kind, n)));
    }
    Ok(out)
}

impl ManagedPolicyProvider {
    fn attach_all(
        &self,
        account: &str,
        arn: &str,
        from: &[(PrincipalKind, String)],
        to: &[(PrincipalKind, String)],
    ) -> Result<(), AwsError> {
        for (k, n) in from.iter().filter(|t| !to.contains(t)) {
            ignore_missing(self.iam.detach_policy(account, *k, n, arn))?;
        }
        for (k, n) in to.iter().filter(|t| !from.contains(t)) {
            self.iam.attach_policy(account, *k, n, arn)?;
        }
        Ok(())
    }

    fn outcome(&self, account: &str, arn: &str) -> Result<ProviderOutcome, AwsError> {
        let p = self.iam.get_policy(account, arn)?;
        let ts = |d: &chrono::DateTime<chrono::Utc>| d.format("%Y-%m-%dT%H:%M:%SZ").to_string();
        Ok(ProviderOutcome {
            physical_id: p.arn.clone(),
            attributes: Map::from_iter([
                ("PolicyArn".to_string(), json!(p.arn)),
                ("PolicyId".to_string(), json!(p.id)),
                ("AttachmentCount".to_string(), json!(p.attachment_count)),
                ("CreateDate".to_string(), json!(ts(&p.create_date))),
                ("UpdateDate".to_string(), json!(ts(&p.update_date))),
                ("DefaultVersionId".to_string(), json!(p.default_version)),
                ("IsAttachable".to_string(), json!(true)),
                (
                    "PermissionsBoundaryUsageCount".to_string(),
                    json!(p.boundary_usage_count),
                ),
            ]),
            ..Default::default()
        })
    }

    /// Makes `doc` the default version, making room first when the policy has five.
    fn new_default_version(&self, account: &str, arn: &str, doc: &str) -> Result<(), AwsError> {
        let versions = self.iam.list_policy_versions(account, arn)?;
        if versions.len() >= MAX_VERSIONS
            && let Some((oldest, _)) = versions.iter().rev().find(|(_, default)| !default)
        {
            self.iam.delete_policy_version(account, arn, &oldest.id)?;
        }
        self.iam.create_policy_version(account, arn, doc, true)?;
        Ok(())
    }
}

#[async_trait::async_trait]
impl Provider for ManagedPolicyProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&[
            "PolicyArn",
            "PolicyId",
            "AttachmentCount",
            "CreateDate",
            "UpdateDate",
            "DefaultVersionId",
            "IsAttachable",
            "PermissionsBoundaryUsageCount",
        ])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(MANAGED_POLICY, properties)?;
        let doc = document(&props)?;
        let to = targets(&props)?;
        let name = match opt(&props, "ManagedPolicyName")? {
            Some(n) => n,
            None => ctx.generated_name(128, ""),
        };
        let acct = &ctx.account_id;
        if self.iam.policy_arn_by_name(acct, &name).is_some() {
            return Err(already_exists(ctx, &name));
        }
        let p = self
            .iam
            .create_policy(
                acct,
                CreatePolicyInput {
                    name,
                    path: opt(&props, "Path")?,
                    document: doc,
                    description: opt(&props, "Description")?,
                    tags: Vec::new(),
                },
            )
            .map_err(|e| fail(ctx, e))?;
        if let Err(e) = self.attach_all(acct, &p.arn, &[], &to) {
            let _ = self.attach_all(acct, &p.arn, &to, &[]);
            let _ = self.iam.delete_policy(acct, &p.arn);
            return Err(fail(ctx, e));
        }
        self.outcome(acct, &p.arn).map_err(|e| fail(ctx, e))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let old_props = object(MANAGED_POLICY, old)?;
        let props = object(MANAGED_POLICY, new)?;
        let (old_doc, doc) = (document(&old_props)?, document(&props)?);
        let (from, to) = (targets(&old_props)?, targets(&props)?);
        let acct = &ctx.account_id;
        if old_doc != doc {
            self.new_default_version(acct, physical_id, &doc)
                .map_err(|e| fail(ctx, e))?;
        }
        if let Err(e) = self.attach_all(acct, physical_id, &from, &to) {
            let _ = self.attach_all(acct, physical_id, &to, &from);
            return Err(fail(ctx, e));
        }
        self.outcome(acct, physical_id).map_err(|e| fail(ctx, e))
    }

    /// Detaches it from everything, deletes its other versions, then the policy.
    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        let acct = &ctx.account_id;
        let iam = &self.iam;
        let entities = match iam.list_entities_for_policy(acct, physical_id, None, None) {
            Ok(e) => e,
            Err(e) if e.code == "NoSuchEntity" => {
                return Err(ProviderError::NotFound(physical_id.to_string()));
            }
            Err(e) => return Err(fail(ctx, e)),
        };
        let cleanup = || -> Result<(), AwsError> {
            for (k, n, _) in &entities {
                ignore_missing(iam.detach_policy(acct, *k, n, physical_id))?;
            }
            for (v, default) in iam.list_policy_versions(acct, physical_id)? {
                if !default {
                    ignore_missing(iam.delete_policy_version(acct, physical_id, &v.id))?;
                }
            }
            ignore_missing(iam.delete_policy(acct, physical_id))
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
        let p = match self.iam.get_policy(acct, physical_id) {
            Ok(p) => p,
            Err(e) if e.code == "NoSuchEntity" => return Ok(None),
            Err(e) => return Err(fail(ctx, e)),
        };
        let (v, _) = self
            .iam
            .get_policy_version(acct, physical_id, &p.default_version)
            .map_err(|e| fail(ctx, e))?;
        let entities = self
            .iam
            .list_entities_for_policy(acct, physical_id, None, None)
            .map_err(|e| fail(ctx, e))?;
        let mut props = Map::new();
        props.insert("ManagedPolicyName".into(), json!(p.name));
        props.insert("Path".into(), json!(p.path));
        if let Some(d) = &p.description {
            props.insert("Description".into(), json!(d));
        }
        props.insert("PolicyDocument".into(), document_value(&v.document));
        for (key, kind) in [
            ("Roles", PrincipalKind::Role),
            ("Users", PrincipalKind::User),
            ("Groups", PrincipalKind::Group),
        ] {
            let names: Vec<&String> = entities
                .iter()
                .filter(|e| e.0 == kind)
                .map(|e| &e.1)
                .collect();
            if !names.is_empty() {
                props.insert(key.into(), json!(names));
            }
        }
        let attributes = self
            .outcome(acct, physical_id)
            .map_err(|e| fail(ctx, e))?
            .attributes;
        Ok(Some(Observed {
            properties: props,
            attributes,
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
    async fn document_changes_roll_versions_and_keep_five() {
        let s = services();
        let p = crate::providers::registry(&s)
            .get(MANAGED_POLICY)
            .expect("registered")
            .clone();
        let c = ctx("Managed", MANAGED_POLICY);
        s.iam
            .create_role(
                "000000000000",
                crate::iam::CreateRoleInput {
                    name: "target".into(),
                    assume_role_policy: doc("sts:AssumeRole").to_string(),
                    ..Default::default()
                },
            )
            .expect("role");
        let mut props = json!({"PolicyDocument": doc("a:1"), "Roles": ["target"]});
        let out = p.create(&c, &props).await.expect("create");
        assert!(
            out.physical_id
                .starts_with("arn:aws:iam::000000000000:policy/teststack-Managed-")
        );
        assert_eq!(out.attributes["PolicyArn"], json!(out.physical_id));
        assert_eq!(out.attributes["AttachmentCount"], json!(1));
        for i in 2..=7 {
            let new = json!({"PolicyDocument": doc(&format!("a:{i}")), "Roles": ["target"]});
            let o = p
                .update(&c, &out.physical_id, &props, &new)
                .await
                .expect("update");
            assert_eq!(o.attributes["DefaultVersionId"], json!(format!("v{i}")));
            props = new;
        }
        let versions = s
            .iam
            .list_policy_versions("000000000000", &out.physical_id)
            .expect("versions");
        let ids: Vec<&str> = versions.iter().map(|(v, _)| v.id.as_str()).collect();
        assert_eq!(ids, vec!["v7", "v6", "v5", "v4", "v3"]);
        assert!(versions[0].1);

        // Attachments follow the template; delete detaches and removes every version.
        let new = json!({"PolicyDocument": doc("a:7"), "Roles": []});
        p.update(&c, &out.physical_id, &props, &new)
            .await
            .expect("detach");
        assert!(
            s.iam
                .get_role("000000000000", "target")
                .expect("role")
                .attached
                .is_empty()
        );
        p.update(&c, &out.physical_id, &new, &props)
            .await
            .expect("reattach");
        p.delete(&c, &out.physical_id, &props)
            .await
            .expect("delete");
        assert!(s.iam.get_policy("000000000000", &out.physical_id).is_err());
        assert!(
            s.iam
                .get_role("000000000000", "target")
                .expect("role")
                .attached
                .is_empty()
        );
        assert!(matches!(
            p.delete(&c, &out.physical_id, &props).await,
            Err(ProviderError::NotFound(_))
        ));
    }
}
