//! CloudFormation providers: AWS::KMS::Key (Ref the key id; GetAtt Arn, KeyId) and
//! AWS::KMS::Alias (Ref the alias name), over KMS's typed operations.

use super::KmsService;
use super::ops::{CreateKeyInput, KeyView};
use super::state::{KeyManager, KeyState};
use crate::providers::system_tags::TagChange;
use crate::providers::{
    ProviderServices, already_exists, check_known, failed, json_text, object, required, scalar,
    tags,
};
use cumulo_engine::{
    Observed, Provider, ProviderContext, ProviderError, ProviderOutcome, ProviderRegistry,
};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};
use std::sync::Arc;

const KEY: &str = "AWS::KMS::Key";
const ALIAS: &str = "AWS::KMS::Alias";

const KEY_PROPS: &[&str] = &[
    "Description",
    "Enabled",
    "EnableKeyRotation",
    "KeyPolicy",
    "KeySpec",
    "KeyUsage",
    "MultiRegion",
    "Origin",
    "PendingWindowInDays",
    "RotationPeriodInDays",
    "Tags",
    // Key policies are stored, not evaluated, so there is no lockout to check.
    "BypassPolicyLockoutSafetyCheck",
];

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    r.register(KEY, Arc::new(KeyProvider { kms: s.kms.clone() }));
    r.register(ALIAS, Arc::new(AliasProvider { kms: s.kms.clone() }));
}

fn flag(props: &Map<String, Value>, key: &str, default: bool) -> Result<bool, ProviderError> {
    Ok(match scalar(props, key)? {
        Some(v) => v.eq_ignore_ascii_case("true"),
        None => default,
    })
}

fn number(props: &Map<String, Value>, key: &str) -> Result<Option<i64>, ProviderError> {
    scalar(props, key)?
        .map(|v| {
            v.parse::<i64>().map_err(|_| {
                ProviderError::Failed(format!(
                    "Properties validation failed for resource with message: #/{key}: expected type: Integer, found: String"
                ))
            })
        })
        .transpose()
}

fn not_found(e: &AwsError) -> bool {
    e.code == "NotFoundException"
}

struct KeyProvider {
    kms: Arc<KmsService>,
}

fn key_outcome(v: &KeyView) -> ProviderOutcome {
    let mut attributes = Map::new();
    attributes.insert("Arn".into(), json!(v.arn()));
    attributes.insert("KeyId".into(), json!(v.key_id()));
    ProviderOutcome {
        physical_id: v.key_id().to_string(),
        attributes,
        ..Default::default()
    }
}

impl KeyProvider {
    /// Brings rotation and the enabled state to what `props` says; rotation changes only while
    /// the key is enabled, as KMS requires, so a disabled key is enabled for the change.
    fn apply_state(
        &self,
        ctx: &ProviderContext,
        id: &str,
        props: &Map<String, Value>,
    ) -> Result<(), ProviderError> {
        let fail = |e| failed(ctx, "Kms", e);
        let enabled = flag(props, "Enabled", true)?;
        let rotation = flag(props, "EnableKeyRotation", false)?;
        let period = number(props, "RotationPeriodInDays")?;
        let current = self.kms.describe_key(&ctx.region, id).map_err(fail)?;
        let r = &current.record;
        let rotation_changes = r.rotation_enabled != rotation
            || (rotation && period.is_some_and(|p| r.rotation_period_days != Some(p)));
        if rotation_changes {
            if r.state != KeyState::Enabled {
                self.kms.enable_key(&ctx.region, id).map_err(fail)?;
            }
            self.kms
                .set_key_rotation(&ctx.region, id, rotation, period)
                .map_err(fail)?;
        }
        if enabled {
            self.kms.enable_key(&ctx.region, id).map_err(fail)?;
        } else {
            self.kms.disable_key(&ctx.region, id).map_err(fail)?;
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Provider for KeyProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Arn", "KeyId"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(KEY, properties)?;
        check_known(KEY, &props, KEY_PROPS, &[])?;
        let input = CreateKeyInput {
            description: scalar(&props, "Description")?,
            policy: json_text(&props, "KeyPolicy")?,
            key_usage: scalar(&props, "KeyUsage")?,
            key_spec: scalar(&props, "KeySpec")?,
            origin: scalar(&props, "Origin")?,
            custom_key_store_id: None,
            multi_region: flag(&props, "MultiRegion", false)?,
            tags: tags(ctx, &props)?,
        };
        let v = self
            .kms
            .create_key(&ctx.region, input)
            .map_err(|e| failed(ctx, "Kms", e))?;
        self.apply_state(ctx, v.key_id(), &props)?;
        Ok(key_outcome(&v))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let old_props = object(KEY, old)?;
        let props = object(KEY, new)?;
        check_known(KEY, &props, KEY_PROPS, &[])?;
        let fail = |e| failed(ctx, "Kms", e);
        for (prop, default) in [
            ("KeySpec", "SYMMETRIC_DEFAULT"),
            ("KeyUsage", "ENCRYPT_DECRYPT"),
            ("Origin", "AWS_KMS"),
        ] {
            let v = scalar(&props, prop)?;
            if v.as_deref().is_some_and(|v| v != default) {
                return Err(crate::providers::unsupported_prop(
                    KEY,
                    prop,
                    &format!("only {default} keys are emulated"),
                ));
            }
        }
        if flag(&props, "MultiRegion", false)? {
            return Err(crate::providers::unsupported_prop(
                KEY,
                "MultiRegion",
                "multi-Region keys are not emulated",
            ));
        }
        let id = physical_id;
        let description = scalar(&props, "Description")?.unwrap_or_default();
        if scalar(&old_props, "Description")?.unwrap_or_default() != description {
            self.kms
                .update_key_description(&ctx.region, id, &description)
                .map_err(fail)?;
        }
        let policy = json_text(&props, "KeyPolicy")?;
        if json_text(&old_props, "KeyPolicy")? != policy {
            let text = match policy {
                Some(p) => p,
                None => super::ops::default_policy(&ctx.account_id),
            };
            self.kms
                .put_key_policy(&ctx.region, id, None, &text)
                .map_err(fail)?;
        }
        let live = self.kms.list_resource_tags(&ctx.region, id).map_err(fail)?;
        let change = TagChange::between(live.iter().map(|(k, v)| (k, v)), &tags(ctx, &props)?);
        if !change.remove.is_empty() {
            self.kms
                .untag_resource(&ctx.region, id, &change.remove)
                .map_err(fail)?;
        }
        if !change.set.is_empty() {
            self.kms
                .tag_resource(&ctx.region, id, &change.set)
                .map_err(fail)?;
        }
        self.apply_state(ctx, id, &props)?;
        let v = self.kms.describe_key(&ctx.region, id).map_err(fail)?;
        Ok(key_outcome(&v))
    }

    /// Schedules the deletion AWS does (PendingWindowInDays, default 30); a key already gone or
    /// already scheduled is deleted as far as the stack is concerned.
    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        properties: &Value,
    ) -> Result<(), ProviderError> {
        let props = object(KEY, properties)?;
        let window = number(&props, "PendingWindowInDays")?;
        match self
            .kms
            .schedule_key_deletion(&ctx.region, physical_id, window)
        {
            Ok(_) => Ok(()),
            Err(e) if not_found(&e) || e.code == "KMSInvalidStateException" => Ok(()),
            Err(e) => Err(failed(ctx, "Kms", e)),
        }
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let v = match self.kms.describe_key(&ctx.region, physical_id) {
            Ok(v) => v,
            Err(e) if not_found(&e) => return Ok(None),
            Err(e) => return Err(failed(ctx, "Kms", e)),
        };
        let r = &v.record;
        if r.state == KeyState::PendingDeletion || r.manager == KeyManager::Aws {
            return Ok(None);
        }
        let policy: Value =
            serde_json::from_str(&r.policy).unwrap_or_else(|_| Value::String(r.policy.clone()));
        let mut p = Map::new();
        p.insert("Description".into(), json!(r.description));
        p.insert("Enabled".into(), json!(r.state == KeyState::Enabled));
        p.insert("EnableKeyRotation".into(), json!(r.rotation_enabled));
        if let Some(days) = r.rotation_period_days {
            p.insert("RotationPeriodInDays".into(), json!(days));
        }
        p.insert("KeyPolicy".into(), policy);
        p.insert("KeySpec".into(), json!("SYMMETRIC_DEFAULT"));
        p.insert("KeyUsage".into(), json!("ENCRYPT_DECRYPT"));
        p.insert("MultiRegion".into(), json!(false));
        p.insert("Origin".into(), json!("AWS_KMS"));
        if !r.tags.is_empty() {
            p.insert(
                "Tags".into(),
                r.tags
                    .iter()
                    .map(|(k, v)| json!({"Key": k, "Value": v}))
                    .collect(),
            );
        }
        Ok(Some(Observed {
            properties: p,
            attributes: key_outcome(&v).attributes,
        }))
    }
}

struct AliasProvider {
    kms: Arc<KmsService>,
}

fn alias_parts(props: &Map<String, Value>) -> Result<(String, String), ProviderError> {
    check_known(ALIAS, props, &["AliasName", "TargetKeyId"], &[])?;
    Ok((
        required(props, "AliasName")?,
        required(props, "TargetKeyId")?,
    ))
}

impl AliasProvider {
    fn target_of(&self, region: &str, name: &str) -> Result<Option<String>, AwsError> {
        let (aliases, _) = self.kms.list_aliases(region, None, Some(100), Some(name))?;
        Ok(aliases
            .into_iter()
            .find(|a| a.name == name)
            .map(|a| a.target_key_id))
    }
}

#[async_trait::async_trait]
impl Provider for AliasProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(ALIAS, properties)?;
        let (name, target) = alias_parts(&props)?;
        if self
            .target_of(&ctx.region, &name)
            .map_err(|e| failed(ctx, "Kms", e))?
            .is_some()
        {
            return Err(already_exists(ctx, &name));
        }
        self.kms
            .create_alias(&ctx.region, &name, &target)
            .map_err(|e| failed(ctx, "Kms", e))?;
        Ok(ProviderOutcome {
            physical_id: name,
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
        let props = object(ALIAS, new)?;
        let (_, target) = alias_parts(&props)?;
        self.kms
            .update_alias(&ctx.region, physical_id, &target)
            .map_err(|e| failed(ctx, "Kms", e))?;
        Ok(ProviderOutcome {
            physical_id: physical_id.to_string(),
            ..Default::default()
        })
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        match self.kms.delete_alias(&ctx.region, physical_id) {
            Ok(()) => Ok(()),
            Err(e) if not_found(&e) => Ok(()),
            Err(e) => Err(failed(ctx, "Kms", e)),
        }
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let target = self
            .target_of(&ctx.region, physical_id)
            .map_err(|e| failed(ctx, "Kms", e))?;
        Ok(target.map(|t| {
            let mut p = Map::new();
            p.insert("AliasName".into(), json!(physical_id));
            p.insert("TargetKeyId".into(), json!(t));
            Observed {
                properties: p,
                attributes: Map::new(),
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::test_support::{ctx, services};

    #[tokio::test]
    async fn key_lifecycle_through_the_provider() {
        let s = services();
        let p = KeyProvider { kms: s.kms.clone() };
        let c = ctx("K", KEY);
        let out = p
            .create(
                &c,
                &json!({"Description": "one", "EnableKeyRotation": true, "Enabled": false,
                        "Tags": [{"Key": "a", "Value": "1"}]}),
            )
            .await
            .expect("create");
        let id = out.physical_id.clone();
        assert_eq!(out.attributes["KeyId"], json!(id));
        let v = s.kms.describe_key("us-east-1", &id).unwrap();
        assert_eq!(v.record.state, KeyState::Disabled);
        assert!(v.record.rotation_enabled);
        let observed = p.read(&c, &id, &Value::Null).await.unwrap().unwrap();
        assert_eq!(observed.properties["Enabled"], json!(false));
        assert_eq!(
            observed.properties["Tags"],
            json!([{"Key": "a", "Value": "1"}])
        );
        p.update(
            &c,
            &id,
            &json!({"Description": "one", "EnableKeyRotation": true, "Enabled": false,
                    "Tags": [{"Key": "a", "Value": "1"}]}),
            &json!({"Description": "two", "Enabled": true}),
        )
        .await
        .expect("update");
        let v = s.kms.describe_key("us-east-1", &id).unwrap();
        assert_eq!(v.record.description, "two");
        assert_eq!(v.record.state, KeyState::Enabled);
        assert!(!v.record.rotation_enabled);
        assert!(v.record.tags.is_empty());
        let e = p
            .create(&c, &json!({"KeySpec": "RSA_2048"}))
            .await
            .expect_err("rsa");
        assert!(e.to_string().contains("RSA_2048"), "{e}");
        p.delete(&c, &id, &json!({"PendingWindowInDays": 7}))
            .await
            .expect("delete");
        let v = s.kms.describe_key("us-east-1", &id).unwrap();
        assert_eq!(v.record.pending_window_days, Some(7));
        assert!(p.read(&c, &id, &Value::Null).await.unwrap().is_none());
        p.delete(&c, &id, &Value::Null).await.expect("again");
    }
}
