//! CloudFormation providers over Secrets Manager's typed operations:
//! - AWS::SecretsManager::Secret: Ref and GetAtt Id are the ARN. SecretString, or a value made by
//!   GetRandomPassword from GenerateSecretString (SecretStringTemplate + GenerateStringKey), or
//!   neither (an empty secret), never both. A stack deletes its secrets without a recovery
//!   window, as CloudFormation does, so the name is free again at once. ReplicaRegions make
//!   real replicas in those regions (removed before the secret is deleted).
//! - AWS::SecretsManager::ResourcePolicy: Ref and Id are the secret's ARN.
//! - AWS::SecretsManager::SecretTargetAttachment: copies host, port, engine... from a database
//!   into the secret; none of its target types (RDS, DocumentDB, Redshift) is emulated, so it is
//!   refused naming the type.

use super::SecretsManagerService;
use super::ops::{CreateSecretInput, SecretValueInput};
use super::password::{self, PasswordOptions};
use super::replication::ReplicaInput;
use crate::providers::system_tags::{TagChange, system_tags};
use crate::providers::{
    ProviderServices, already_exists, check_known, failed, json_text, list, object, required,
    scalar, tags, unsupported_prop,
};
use cumulo_engine::{
    Observed, Provider, ProviderContext, ProviderError, ProviderOutcome, ProviderRegistry,
};
use cumulo_wire::AwsError;
use rand::Rng;
use serde_json::{Map, Value, json};
use std::sync::Arc;

const SECRET: &str = "AWS::SecretsManager::Secret";
const POLICY: &str = "AWS::SecretsManager::ResourcePolicy";
const ATTACHMENT: &str = "AWS::SecretsManager::SecretTargetAttachment";

const SECRET_PROPS: &[&str] = &[
    "Description",
    "GenerateSecretString",
    "KmsKeyId",
    "Name",
    "ReplicaRegions",
    "SecretString",
    "Tags",
];
const SECRET_UNSUPPORTED: &[(&str, &str)] =
    &[("Type", "managed external secrets are not emulated")];
const GENERATE_PROPS: &[&str] = &[
    "ExcludeCharacters",
    "ExcludeLowercase",
    "ExcludeNumbers",
    "ExcludePunctuation",
    "ExcludeUppercase",
    "GenerateStringKey",
    "IncludeSpace",
    "PasswordLength",
    "RequireEachIncludedType",
    "SecretStringTemplate",
];

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    let sm = s.secretsmanager.clone();
    r.register(SECRET, Arc::new(SecretProvider { sm: sm.clone() }));
    r.register(POLICY, Arc::new(PolicyProvider { sm }));
    r.register(ATTACHMENT, Arc::new(AttachmentProvider));
}

fn is_not_found(e: &AwsError) -> bool {
    e.code == "ResourceNotFoundException"
}

fn invalid(message: &str) -> ProviderError {
    ProviderError::Failed(format!(
        "Properties validation failed for resource with message: {message}"
    ))
}

fn flag(props: &Map<String, Value>, key: &str) -> Result<Option<bool>, ProviderError> {
    Ok(scalar(props, key)?.map(|v| v.eq_ignore_ascii_case("true")))
}

/// The value a Secret's properties call for: SecretString, a generated one, or none.
fn secret_value(props: &Map<String, Value>) -> Result<Option<String>, ProviderError> {
    let literal = scalar(props, "SecretString")?;
    let generate = match props.get("GenerateSecretString") {
        None | Some(Value::Null) => None,
        Some(Value::Object(g)) => Some(g),
        Some(_) => {
            return Err(invalid("#/GenerateSecretString: expected type: JSONObject"));
        }
    };
    match (literal, generate) {
        (Some(_), Some(_)) => Err(ProviderError::Failed(
            "You can't specify both SecretString and GenerateSecretString.".into(),
        )),
        (Some(s), None) => Ok(Some(s)),
        (None, None) => Ok(None),
        (None, Some(g)) => generated(g).map(Some),
    }
}

fn generated(g: &Map<String, Value>) -> Result<String, ProviderError> {
    check_known(SECRET, g, GENERATE_PROPS, &[])?;
    let length = scalar(g, "PasswordLength")?
        .map(|v| {
            v.parse::<i64>().map_err(|_| {
                invalid("#/GenerateSecretString/PasswordLength: expected type: Integer")
            })
        })
        .transpose()?;
    let o = PasswordOptions {
        length,
        exclude_characters: scalar(g, "ExcludeCharacters")?.unwrap_or_default(),
        exclude_numbers: flag(g, "ExcludeNumbers")?.unwrap_or(false),
        exclude_punctuation: flag(g, "ExcludePunctuation")?.unwrap_or(false),
        exclude_uppercase: flag(g, "ExcludeUppercase")?.unwrap_or(false),
        exclude_lowercase: flag(g, "ExcludeLowercase")?.unwrap_or(false),
        include_space: flag(g, "IncludeSpace")?.unwrap_or(false),
        require_each_included_type: flag(g, "RequireEachIncludedType")?,
    };
    let pw = password::generate(&o).map_err(|e| ProviderError::Failed(e.message))?;
    match (
        scalar(g, "SecretStringTemplate")?,
        scalar(g, "GenerateStringKey")?,
    ) {
        (None, None) => Ok(pw),
        (Some(template), Some(key)) => {
            let mut doc: Map<String, Value> = serde_json::from_str(&template).map_err(|_| {
                ProviderError::Failed("SecretStringTemplate must be a valid JSON object.".into())
            })?;
            doc.insert(key, json!(pw));
            Ok(Value::Object(doc).to_string())
        }
        _ => Err(ProviderError::Failed(
            "GenerateStringKey and SecretStringTemplate must be specified together.".into(),
        )),
    }
}

/// `{logical id}-{12 random}`: how CloudFormation names a secret whose Name is absent.
fn generated_secret_name(ctx: &ProviderContext) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
    let mut rng = rand::rng();
    let token: String = (0..12)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect();
    let mut base = ctx.logical_id.clone();
    base.truncate(512 - 13);
    format!("{base}-{token}")
}

fn secret_outcome(arn: &str) -> ProviderOutcome {
    let mut attributes = Map::new();
    attributes.insert("Id".into(), json!(arn));
    ProviderOutcome {
        physical_id: arn.to_string(),
        attributes,
        ..Default::default()
    }
}

struct SecretProvider {
    sm: Arc<SecretsManagerService>,
}

/// `ReplicaRegions: [{Region, KmsKeyId}]`.
fn replica_regions(props: &Map<String, Value>) -> Result<Vec<ReplicaInput>, ProviderError> {
    list(props, "ReplicaRegions")?
        .iter()
        .map(|r| {
            let obj = r.as_object().ok_or_else(|| {
                ProviderError::Failed(
                    "Properties validation failed for resource with message: #/ReplicaRegions: expected type: JSONObject".into(),
                )
            })?;
            Ok(ReplicaInput {
                region: required(obj, "Region")?,
                kms_key_id: scalar(obj, "KmsKeyId")?,
            })
        })
        .collect()
}

#[async_trait::async_trait]
impl Provider for SecretProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Id"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(SECRET, properties)?;
        check_known(SECRET, &props, SECRET_PROPS, SECRET_UNSUPPORTED)?;
        let name = match scalar(&props, "Name")? {
            Some(n) => n,
            None => generated_secret_name(ctx),
        };
        if self.sm.describe_secret(&ctx.region, &name).is_ok() {
            return Err(already_exists(ctx, &name));
        }
        let input = CreateSecretInput {
            name,
            client_request_token: None,
            description: scalar(&props, "Description")?,
            kms_key_id: scalar(&props, "KmsKeyId")?,
            value: secret_value(&props)?.map(SecretValueInput::String),
            tags: tags(ctx, &props)?,
            replicas: replica_regions(&props)?,
            force_overwrite_replicas: false,
        };
        let (arn, _, _) = self
            .sm
            .create_secret(&ctx.region, input)
            .map_err(|e| failed(ctx, "SecretsManager", e))?;
        let system = system_tags(ctx);
        if !system.is_empty() {
            self.sm
                .add_system_tags(&ctx.region, &arn, &system)
                .map_err(|e| failed(ctx, "SecretsManager", e))?;
        }
        Ok(secret_outcome(&arn))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let old_props = object(SECRET, old)?;
        let props = object(SECRET, new)?;
        check_known(SECRET, &props, SECRET_PROPS, SECRET_UNSUPPORTED)?;
        let fail = |e| failed(ctx, "SecretsManager", e);
        let changed = |k: &str| old_props.get(k) != props.get(k);
        // A new version only when what makes the value changed (a generated value is not
        // regenerated by unrelated updates).
        let value = if changed("SecretString") || changed("GenerateSecretString") {
            secret_value(&props)?.map(SecretValueInput::String)
        } else {
            None
        };
        let description = changed("Description")
            .then(|| scalar(&props, "Description"))
            .transpose()?
            .map(Option::unwrap_or_default);
        let kms_key_id = if changed("KmsKeyId") {
            Some(scalar(&props, "KmsKeyId")?.unwrap_or_else(|| "alias/aws/secretsmanager".into()))
        } else {
            None
        };
        if value.is_some() || description.is_some() || kms_key_id.is_some() {
            self.sm
                .update_secret(
                    &ctx.region,
                    physical_id,
                    None,
                    description,
                    kms_key_id,
                    value,
                )
                .map_err(fail)?;
        }
        let live = self
            .sm
            .describe_secret(&ctx.region, physical_id)
            .map_err(fail)?
            .tags;
        let change = TagChange::between(live.iter().map(|(k, v)| (k, v)), &tags(ctx, &props)?);
        if !change.remove.is_empty() {
            self.sm
                .untag_resource(&ctx.region, physical_id, &change.remove)
                .map_err(fail)?;
        }
        if !change.set.is_empty() {
            self.sm
                .tag_resource(&ctx.region, physical_id, &change.set)
                .map_err(fail)?;
        }
        let wanted = replica_regions(&props)?;
        let current: Vec<ReplicaInput> = self
            .sm
            .describe_secret(&ctx.region, physical_id)
            .map_err(fail)?
            .replicas
            .into_iter()
            .map(|r| ReplicaInput {
                region: r.region,
                kms_key_id: r.kms_key_id,
            })
            .collect();
        // A replica whose key changes is made again under the new key.
        let gone: Vec<String> = current
            .iter()
            .filter(|c| !wanted.contains(c))
            .map(|c| c.region.clone())
            .collect();
        let added: Vec<ReplicaInput> = wanted
            .into_iter()
            .filter(|w| !current.contains(w))
            .collect();
        if !gone.is_empty() {
            self.sm
                .remove_regions_from_replication(&ctx.region, physical_id, &gone)
                .map_err(fail)?;
        }
        if !added.is_empty() {
            self.sm
                .replicate_secret_to_regions(&ctx.region, physical_id, &added, false)
                .map_err(fail)?;
        }
        Ok(secret_outcome(physical_id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        // Replicas go first: Secrets Manager refuses to delete a primary that has any.
        if let Ok(s) = self.sm.describe_secret(&ctx.region, physical_id)
            && !s.replicas.is_empty()
        {
            let regions: Vec<String> = s.replicas.into_iter().map(|r| r.region).collect();
            self.sm
                .remove_regions_from_replication(&ctx.region, physical_id, &regions)
                .map_err(|e| failed(ctx, "SecretsManager", e))?;
        }
        match self.sm.delete_secret(&ctx.region, physical_id, None, true) {
            Ok(_) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(failed(ctx, "SecretsManager", e)),
        }
    }

    /// The secret's metadata; its value is write-only in the resource schema, so not read.
    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let s = match self.sm.describe_secret(&ctx.region, physical_id) {
            Ok(s) if s.deletion_ms.is_none() => s,
            Ok(_) => return Ok(None),
            Err(e) if is_not_found(&e) => return Ok(None),
            Err(e) => return Err(failed(ctx, "SecretsManager", e)),
        };
        let mut p = Map::new();
        p.insert("Name".into(), json!(s.name));
        if let Some(d) = &s.description {
            p.insert("Description".into(), json!(d));
        }
        if let Some(k) = &s.kms_key_id {
            p.insert("KmsKeyId".into(), json!(k));
        }
        if !s.replicas.is_empty() {
            let replicas: Vec<Value> = s
                .replicas
                .iter()
                .map(|r| match &r.kms_key_id {
                    Some(k) => json!({"Region": r.region, "KmsKeyId": k}),
                    None => json!({"Region": r.region}),
                })
                .collect();
            p.insert("ReplicaRegions".into(), Value::Array(replicas));
        }
        if !s.tags.is_empty() {
            p.insert(
                "Tags".into(),
                s.tags
                    .iter()
                    .map(|(k, v)| json!({"Key": k, "Value": v}))
                    .collect(),
            );
        }
        Ok(Some(Observed {
            properties: p,
            attributes: secret_outcome(&s.arn).attributes,
        }))
    }
}

struct PolicyProvider {
    sm: Arc<SecretsManagerService>,
}

fn policy_parts(props: &Map<String, Value>) -> Result<(String, String), ProviderError> {
    // BlockPublicPolicy: policies are stored, not evaluated, so none is ever public-blocked.
    check_known(
        POLICY,
        props,
        &["SecretId", "ResourcePolicy", "BlockPublicPolicy"],
        &[],
    )?;
    let policy = json_text(props, "ResourcePolicy")?
        .ok_or_else(|| invalid("#: required key [ResourcePolicy] not found"))?;
    Ok((required(props, "SecretId")?, policy))
}

impl PolicyProvider {
    fn put(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(POLICY, properties)?;
        let (secret, policy) = policy_parts(&props)?;
        let (arn, _) = self
            .sm
            .put_resource_policy(&ctx.region, &secret, &policy)
            .map_err(|e| failed(ctx, "SecretsManager", e))?;
        let system = system_tags(ctx);
        if !system.is_empty() {
            self.sm
                .add_system_tags(&ctx.region, &arn, &system)
                .map_err(|e| failed(ctx, "SecretsManager", e))?;
        }
        Ok(secret_outcome(&arn))
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
        self.put(ctx, properties)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        _physical_id: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        self.put(ctx, new)
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        match self.sm.delete_resource_policy(&ctx.region, physical_id) {
            Ok(_) => Ok(()),
            Err(e) if is_not_found(&e) => Ok(()),
            Err(e) => Err(failed(ctx, "SecretsManager", e)),
        }
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let (arn, _, policy) = match self.sm.get_resource_policy(&ctx.region, physical_id) {
            Ok(r) => r,
            Err(e) if is_not_found(&e) => return Ok(None),
            Err(e) => return Err(failed(ctx, "SecretsManager", e)),
        };
        Ok(policy.map(|p| {
            let mut props = Map::new();
            props.insert("SecretId".into(), json!(arn));
            props.insert(
                "ResourcePolicy".into(),
                serde_json::from_str(&p).unwrap_or(Value::String(p)),
            );
            Observed {
                properties: props,
                attributes: secret_outcome(&arn).attributes,
            }
        }))
    }
}

/// Refuses every target: each of its types is a database service cumulo does not emulate.
struct AttachmentProvider;

#[async_trait::async_trait]
impl Provider for AttachmentProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }

    async fn create(
        &self,
        _ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(ATTACHMENT, properties)?;
        check_known(
            ATTACHMENT,
            &props,
            &["SecretId", "TargetId", "TargetType"],
            &[],
        )?;
        required(&props, "SecretId")?;
        required(&props, "TargetId")?;
        let target_type = required(&props, "TargetType")?;
        Err(unsupported_prop(
            ATTACHMENT,
            "TargetType",
            &format!(
                "cumulo does not emulate {target_type}, so there is no database to read host, port and engine from"
            ),
        ))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        _physical_id: &str,
        _old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        self.create(ctx, new).await
    }

    /// Nothing was ever created.
    async fn delete(
        &self,
        _ctx: &ProviderContext,
        _physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        Ok(())
    }

    async fn read(
        &self,
        _ctx: &ProviderContext,
        _physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::test_support::{ctx, services};

    #[tokio::test]
    async fn generated_secret_and_template() {
        let s = services();
        let p = SecretProvider {
            sm: s.secretsmanager.clone(),
        };
        let c = ctx("DbSecret", SECRET);
        let props = json!({"GenerateSecretString": {
            "SecretStringTemplate": "{\"username\":\"admin\"}",
            "GenerateStringKey": "password",
            "PasswordLength": 20,
            "ExcludePunctuation": true
        }});
        let out = p.create(&c, &props).await.expect("create");
        assert!(
            out.physical_id.contains(":secret:DbSecret-"),
            "{}",
            out.physical_id
        );
        assert_eq!(out.attributes["Id"], json!(out.physical_id));
        let v = s
            .secretsmanager
            .get_secret_value("us-east-1", &out.physical_id, None, None)
            .unwrap();
        let SecretValueInput::String(text) = v.value else {
            panic!("binary")
        };
        let doc: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(doc["username"], "admin");
        let pw = doc["password"].as_str().unwrap();
        assert_eq!(pw.len(), 20);
        assert!(pw.chars().all(|c| c.is_ascii_alphanumeric()));
        let both = json!({"SecretString": "x", "GenerateSecretString": {}});
        let e = p.create(&c, &both).await.expect_err("both");
        assert!(e.to_string().contains("both"), "{e}");
        let observed = p.read(&c, &out.physical_id, &Value::Null).await.unwrap();
        assert!(observed.is_some());
        p.delete(&c, &out.physical_id, &Value::Null).await.unwrap();
        assert!(
            p.read(&c, &out.physical_id, &Value::Null)
                .await
                .unwrap()
                .is_none()
        );
        p.delete(&c, &out.physical_id, &Value::Null).await.unwrap();
    }

    #[tokio::test]
    async fn attachment_refuses_unemulated_targets() {
        let c = ctx("Att", ATTACHMENT);
        let e = AttachmentProvider
            .create(
                &c,
                &json!({"SecretId": "s", "TargetId": "db", "TargetType": "AWS::RDS::DBInstance"}),
            )
            .await
            .expect_err("refused");
        assert!(e.to_string().contains("AWS::RDS::DBInstance"), "{e}");
    }
}
