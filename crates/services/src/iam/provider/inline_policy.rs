//! AWS::IAM::RolePolicy, UserPolicy and GroupPolicy: one inline policy on one principal, each
//! a [`Declared`] over IAM's inline-policy operations. The physical id is
//! `<PolicyName>|<PrincipalName>`, the schema's composite primary identifier; both parts are
//! createOnly, so an update only rewrites the document.

use crate::iam::{IamService, PrincipalKind};
use crate::providers::declared::{Answer, Declared, Made};
use crate::providers::{json_text, required};
use cumulo_engine::{Observed, ProviderContext, ProviderError};
use serde_json::{Map, Value, json};
use std::sync::Arc;

/// One inline-policy type; `K` selects the principal kind (ROLE, USER, GROUP).
pub(super) struct InlinePolicy<const K: u8>(pub Arc<IamService>);

const fn kind(k: u8) -> PrincipalKind {
    match k {
        0 => PrincipalKind::Role,
        1 => PrincipalKind::User,
        _ => PrincipalKind::Group,
    }
}

pub(super) const ROLE: u8 = 0;
pub(super) const USER: u8 = 1;
pub(super) const GROUP: u8 = 2;

fn document(props: &Map<String, Value>) -> Result<String, ProviderError> {
    json_text(props, "PolicyDocument")?.ok_or_else(|| {
        ProviderError::Failed(
            "Properties validation failed for resource with message: #: required key [PolicyDocument] not found".into(),
        )
    })
}

macro_rules! inline_policy {
    ($k:ident, $ty:literal, $principal:literal) => {
        #[async_trait::async_trait]
        impl Declared for InlinePolicy<$k> {
            const ATTRIBUTES: &'static [&'static str] = &[];
            const TYPE: &'static str = $ty;
            const SERVICE: &'static str = "Iam";
            const PROPERTIES: &'static [&'static str] =
                &["PolicyDocument", "PolicyName", $principal];
            const NOT_FOUND: &'static [&'static str] = &["NoSuchEntity"];

            async fn create(
                &self,
                ctx: &ProviderContext,
                props: &Map<String, Value>,
            ) -> Answer<Made> {
                let principal = required(props, $principal)?;
                let name = required(props, "PolicyName")?;
                self.0.put_inline_policy(
                    &ctx.account_id,
                    kind($k),
                    &principal,
                    &name,
                    &document(props)?,
                )?;
                Ok(Made::new(format!("{name}|{principal}")))
            }

            async fn update(
                &self,
                ctx: &ProviderContext,
                id: &str,
                _: &Map<String, Value>,
                new: &Map<String, Value>,
            ) -> Answer<Made> {
                let principal = required(new, $principal)?;
                let name = required(new, "PolicyName")?;
                self.0.put_inline_policy(
                    &ctx.account_id,
                    kind($k),
                    &principal,
                    &name,
                    &document(new)?,
                )?;
                Ok(Made::new(id))
            }

            async fn delete(
                &self,
                ctx: &ProviderContext,
                _: &str,
                props: &Map<String, Value>,
            ) -> Answer<()> {
                let principal = required(props, $principal)?;
                let name = required(props, "PolicyName")?;
                Ok(self
                    .0
                    .delete_inline_policy(&ctx.account_id, kind($k), &principal, &name)?)
            }

            fn read(
                &self,
                ctx: &ProviderContext,
                _: &str,
                props: &Map<String, Value>,
            ) -> Answer<Option<Observed>> {
                let principal = required(props, $principal)?;
                let name = required(props, "PolicyName")?;
                let (_, doc) =
                    self.0
                        .get_inline_policy(&ctx.account_id, kind($k), &principal, &name)?;
                let doc: Value = serde_json::from_str(&doc).unwrap_or(Value::String(doc));
                Ok(Some(Observed {
                    properties: Map::from_iter([
                        ("PolicyDocument".to_string(), doc),
                        ("PolicyName".to_string(), json!(name)),
                        ($principal.to_string(), json!(principal)),
                    ]),
                    attributes: Map::new(),
                }))
            }

            fn created_identity(
                &self,
                _: &ProviderContext,
                props: &Map<String, Value>,
            ) -> Option<String> {
                Some(format!(
                    "{}|{}",
                    required(props, "PolicyName").ok()?,
                    required(props, $principal).ok()?
                ))
            }
        }
    };
}

inline_policy!(ROLE, "AWS::IAM::RolePolicy", "RoleName");
inline_policy!(USER, "AWS::IAM::UserPolicy", "UserName");
inline_policy!(GROUP, "AWS::IAM::GroupPolicy", "GroupName");

#[cfg(test)]
mod tests {
    use crate::providers::test_support::{ctx, services};
    use serde_json::json;

    #[tokio::test]
    async fn a_role_policy_is_the_roles_inline_policy() {
        let s = services();
        let reg = crate::providers::registry(&s);
        let role = reg.get("AWS::IAM::Role").unwrap().clone();
        let trust = json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole", "Principal": {"Service": "ecs-tasks.amazonaws.com"}}]});
        role.create(
            &ctx("R", "AWS::IAM::Role"),
            &json!({"RoleName": "r1", "AssumeRolePolicyDocument": trust}),
        )
        .await
        .unwrap();
        let p = reg.get("AWS::IAM::RolePolicy").unwrap().clone();
        let c = ctx("P", "AWS::IAM::RolePolicy");
        let doc = |action: &str| json!({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": action, "Resource": "*"}]});
        let props =
            json!({"RoleName": "r1", "PolicyName": "p1", "PolicyDocument": doc("s3:GetObject")});
        let made = p.create(&c, &props).await.unwrap();
        assert_eq!(made.physical_id, "p1|r1");
        let new =
            json!({"RoleName": "r1", "PolicyName": "p1", "PolicyDocument": doc("sqs:SendMessage")});
        p.update(&c, "p1|r1", &props, &new).await.unwrap();
        let (_, got) = s
            .iam
            .get_inline_policy("000000000000", crate::iam::PrincipalKind::Role, "r1", "p1")
            .unwrap();
        assert!(got.contains("sqs:SendMessage"), "{got}");
        p.delete(&c, "p1|r1", &new).await.unwrap();
        assert!(matches!(
            p.delete(&c, "p1|r1", &new).await,
            Err(cumulo_engine::ProviderError::NotFound(_))
        ));
    }
}
