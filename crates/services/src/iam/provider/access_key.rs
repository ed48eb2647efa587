//! AWS::IAM::AccessKey: a user's key pair. Ref is the access key id; the secret is the sensitive
//! `SecretAccessKey` attribute. `Status` updates in place; `Serial` and `UserName` replace.

use super::{Iam, fail, opt};
use crate::providers::{check_known, object, required};
use cumulo_engine::{Observed, Provider, ProviderContext, ProviderError, ProviderOutcome};
use serde_json::{Map, Value, json};

pub const ACCESS_KEY: &str = "AWS::IAM::AccessKey";

pub struct AccessKeyProvider {
    pub iam: Iam,
}

fn parts(props: &Map<String, Value>) -> Result<(String, String), ProviderError> {
    check_known(ACCESS_KEY, props, &["Serial", "Status", "UserName"], &[])?;
    Ok((
        required(props, "UserName")?,
        opt(props, "Status")?.unwrap_or_else(|| "Active".to_string()),
    ))
}

#[async_trait::async_trait]
impl Provider for AccessKeyProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["SecretAccessKey", "Id"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let (user, status) = parts(&*object(ACCESS_KEY, properties)?)?;
        let acct = &ctx.account_id;
        let key = self
            .iam
            .create_access_key(acct, &user)
            .map_err(|e| fail(ctx, e))?;
        if status != "Active"
            && let Err(e) = self
                .iam
                .update_access_key(acct, &user, &key.key.id, &status)
        {
            let _ = self.iam.delete_access_key(acct, &user, &key.key.id);
            return Err(fail(ctx, e));
        }
        Ok(ProviderOutcome {
            physical_id: key.key.id.clone(),
            attributes: Map::from_iter([
                ("SecretAccessKey".to_string(), json!(key.key.secret)),
                ("Id".to_string(), json!(key.key.id)),
            ]),
            no_echo_attributes: vec!["SecretAccessKey".to_string()],
            ..Default::default()
        })
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let (user, status) = parts(&*object(ACCESS_KEY, new)?)?;
        let acct = &ctx.account_id;
        self.iam
            .update_access_key(acct, &user, physical_id, &status)
            .map_err(|e| fail(ctx, e))?;
        let secret = self
            .iam
            .list_access_keys(acct, &user)
            .map_err(|e| fail(ctx, e))?
            .into_iter()
            .find(|k| k.key.id == physical_id)
            .map(|k| k.key.secret)
            .unwrap_or_default();
        Ok(ProviderOutcome {
            physical_id: physical_id.to_string(),
            attributes: Map::from_iter([
                ("SecretAccessKey".to_string(), json!(secret)),
                ("Id".to_string(), json!(physical_id)),
            ]),
            no_echo_attributes: vec!["SecretAccessKey".to_string()],
            ..Default::default()
        })
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        properties: &Value,
    ) -> Result<(), ProviderError> {
        let (user, _) = parts(&*object(ACCESS_KEY, properties)?)?;
        match self
            .iam
            .delete_access_key(&ctx.account_id, &user, physical_id)
        {
            Ok(()) => Ok(()),
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
        properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let (user, _) = parts(&*object(ACCESS_KEY, properties)?)?;
        let keys = match self.iam.list_access_keys(&ctx.account_id, &user) {
            Ok(k) => k,
            Err(e) if e.code == "NoSuchEntity" => return Ok(None),
            Err(e) => return Err(fail(ctx, e)),
        };
        let Some(k) = keys.into_iter().find(|k| k.key.id == physical_id) else {
            return Ok(None);
        };
        let mut props = Map::new();
        props.insert("UserName".into(), json!(k.user_name));
        props.insert(
            "Status".into(),
            json!(if k.key.active { "Active" } else { "Inactive" }),
        );
        Ok(Some(Observed {
            properties: props,
            attributes: Map::from_iter([
                ("SecretAccessKey".to_string(), json!(k.key.secret)),
                ("Id".to_string(), json!(k.key.id)),
            ]),
        }))
    }
}
