//! AWS::IAM::Policy: one inline policy put on each of its roles, users and groups.

use super::principal::ignore_missing;
use super::{Iam, document_value, fail, strings};
use crate::iam::PrincipalKind;
use crate::providers::{check_known, json_text, object, required};
use cumulo_engine::{Observed, Provider, ProviderContext, ProviderError, ProviderOutcome};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};

pub const POLICY: &str = "AWS::IAM::Policy";

pub struct PolicyProvider {
    pub iam: Iam,
}

#[derive(Debug, Clone, PartialEq)]
struct Spec {
    name: String,
    document: String,
    targets: Vec<(PrincipalKind, String)>,
}

fn spec(props: &Map<String, Value>) -> Result<Spec, ProviderError> {
    check_known(
        POLICY,
        props,
        &["Groups", "PolicyDocument", "PolicyName", "Roles", "Users"],
        &[],
    )?;
    let document = json_text(props, "PolicyDocument")?.ok_or_else(|| {
        ProviderError::Failed(
            "Properties validation failed for resource with message: #: required key [PolicyDocument] not found".into(),
        )
    })?;
    let mut targets = Vec::new();
    for (key, kind) in [
        ("Roles", PrincipalKind::Role),
        ("Users", PrincipalKind::User),
        ("Groups", PrincipalKind::Group),
    ] {
        targets.extend(strings(props, key)?.into_iter().map(|n| (kind, n)));
    }
    if targets.is_empty() {
        return Err(ProviderError::Failed(
            "Resource handler returned message: \"At least one of [Roles, Users, Groups] must be specified.\" (HandlerErrorCode: InvalidRequest)".into(),
        ));
    }
    Ok(Spec {
        name: required(props, "PolicyName")?,
        document,
        targets,
    })
}

impl PolicyProvider {
    /// Puts `to` everywhere it belongs and removes `from` from where it no longer does.
    fn apply(&self, account: &str, from: Option<&Spec>, to: Option<&Spec>) -> Result<(), AwsError> {
        if let Some(to) = to {
            for (kind, n) in &to.targets {
                let same = from.is_some_and(|f| {
                    f.name == to.name
                        && f.document == to.document
                        && f.targets.contains(&(*kind, n.clone()))
                });
                if !same {
                    self.iam
                        .put_inline_policy(account, *kind, n, &to.name, &to.document)?;
                }
            }
        }
        if let Some(from) = from {
            for (kind, n) in &from.targets {
                let kept = to.is_some_and(|t| {
                    t.name == from.name && t.targets.contains(&(*kind, n.clone()))
                });
                if !kept {
                    ignore_missing(self.iam.delete_inline_policy(account, *kind, n, &from.name))?;
                }
            }
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Provider for PolicyProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Id"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let s = spec(&*object(POLICY, properties)?)?;
        if let Err(e) = self.apply(&ctx.account_id, None, Some(&s)) {
            let _ = self.apply(&ctx.account_id, Some(&s), None);
            return Err(fail(ctx, e));
        }
        // AWS's physical id for this type is a generated stack-scoped name, not the policy's.
        let id = ctx.generated_name(64, "");
        Ok(ProviderOutcome {
            physical_id: id.clone(),
            attributes: Map::from_iter([("Id".to_string(), json!(id))]),
            ..Default::default()
        })
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let from = spec(&*object(POLICY, old)?)?;
        let to = spec(&*object(POLICY, new)?)?;
        if let Err(e) = self.apply(&ctx.account_id, Some(&from), Some(&to)) {
            let _ = self.apply(&ctx.account_id, Some(&to), Some(&from));
            return Err(fail(ctx, e));
        }
        Ok(ProviderOutcome {
            physical_id: physical_id.to_string(),
            attributes: Map::from_iter([("Id".to_string(), json!(physical_id))]),
            ..Default::default()
        })
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        _physical_id: &str,
        properties: &Value,
    ) -> Result<(), ProviderError> {
        let s = spec(&*object(POLICY, properties)?)?;
        self.apply(&ctx.account_id, Some(&s), None)
            .map_err(|e| fail(ctx, e))
    }

    /// The policy as found on its first principal; gone when no principal has it any more.
    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let s = spec(&*object(POLICY, properties)?)?;
        let mut found: Option<String> = None;
        let mut p = Map::new();
        for (key, kind) in [
            ("Roles", PrincipalKind::Role),
            ("Users", PrincipalKind::User),
            ("Groups", PrincipalKind::Group),
        ] {
            let mut names = Vec::new();
            for (k, n) in s.targets.iter().filter(|(k, _)| *k == kind) {
                match self.iam.get_inline_policy(&ctx.account_id, *k, n, &s.name) {
                    Ok((owner, doc)) => {
                        found.get_or_insert(doc);
                        names.push(owner);
                    }
                    Err(e) if e.code == "NoSuchEntity" => {}
                    Err(e) => return Err(fail(ctx, e)),
                }
            }
            if !names.is_empty() {
                p.insert(key.to_string(), json!(names));
            }
        }
        let Some(doc) = found else {
            return Ok(None);
        };
        p.insert("PolicyName".into(), json!(s.name));
        p.insert("PolicyDocument".into(), document_value(&doc));
        Ok(Some(Observed {
            properties: p,
            attributes: Map::from_iter([("Id".to_string(), json!(physical_id))]),
        }))
    }
}
