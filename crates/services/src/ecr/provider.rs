//! CloudFormation provider: AWS::ECR::Repository over ECR's typed operations. Ref is the name;
//! GetAtt `Arn` and `RepositoryUri`. A generated name is lower-cased, as ECR requires and AWS
//! does. Delete refuses a repository with images unless `EmptyOnDelete` is true, as AWS does.

use super::{CreateRepositoryInput, EcrService};
use crate::providers::system_tags::{TagChange, system_tags};
use crate::providers::{
    ProviderServices, already_exists, check_known, failed, json_text, object, scalar, tags,
};
use cumulo_engine::{
    Observed, Provider, ProviderContext, ProviderError, ProviderOutcome, ProviderRegistry,
};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};
use std::sync::Arc;

const REPOSITORY: &str = "AWS::ECR::Repository";
const SERVICE: &str = "Ecr";

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    r.register(
        REPOSITORY,
        Arc::new(RepositoryProvider { ecr: s.ecr.clone() }),
    );
}

struct RepositoryProvider {
    ecr: Arc<EcrService>,
}

/// What a Repository's properties ask for.
struct Spec {
    mutability: Option<String>,
    scan_on_push: bool,
    encryption_type: Option<String>,
    kms_key: Option<String>,
    lifecycle: Option<String>,
    policy: Option<String>,
    tags: Vec<(String, String)>,
}

fn sub_object<'a>(
    props: &'a Map<String, Value>,
    key: &str,
) -> Result<Option<&'a Map<String, Value>>, ProviderError> {
    match props.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Object(m)) => Ok(Some(m)),
        Some(v) => Err(ProviderError::Failed(format!(
            "Properties validation failed for resource with message: #/{key}: expected type: JSONObject, found: {}",
            crate::providers::json_type(v)
        ))),
    }
}

fn flag(props: &Map<String, Value>, key: &str) -> Result<bool, ProviderError> {
    Ok(scalar(props, key)?.is_some_and(|v| v.eq_ignore_ascii_case("true")))
}

fn spec(ctx: &ProviderContext, props: &Map<String, Value>) -> Result<Spec, ProviderError> {
    check_known(
        REPOSITORY,
        props,
        &[
            "EmptyOnDelete",
            "EncryptionConfiguration",
            "ImageScanningConfiguration",
            "ImageTagMutability",
            "LifecyclePolicy",
            "RepositoryName",
            "RepositoryPolicyText",
            "Tags",
        ],
        &[(
            "ImageTagMutabilityExclusionFilters",
            "cumulo's ECR does not emulate tag mutability exclusion filters",
        )],
    )?;
    let scan_on_push = match sub_object(props, "ImageScanningConfiguration")? {
        Some(s) => flag(s, "ScanOnPush")?,
        None => false,
    };
    let (encryption_type, kms_key) = match sub_object(props, "EncryptionConfiguration")? {
        Some(e) => (scalar(e, "EncryptionType")?, scalar(e, "KmsKey")?),
        None => (None, None),
    };
    // Read at delete time; checked here so a malformed value fails the create, not the delete.
    flag(props, "EmptyOnDelete")?;
    let lifecycle = match sub_object(props, "LifecyclePolicy")? {
        Some(l) => scalar(l, "LifecyclePolicyText")?,
        None => None,
    };
    Ok(Spec {
        mutability: scalar(props, "ImageTagMutability")?,
        scan_on_push,
        encryption_type,
        kms_key,
        lifecycle,
        policy: json_text(props, "RepositoryPolicyText")?,
        tags: tags(ctx, props)?,
    })
}

impl RepositoryProvider {
    fn outcome(&self, ctx: &ProviderContext, name: &str) -> ProviderOutcome {
        ProviderOutcome {
            physical_id: name.to_string(),
            attributes: Map::from_iter([
                (
                    "Arn".to_string(),
                    json!(self.ecr.repository_arn(&ctx.region, name)),
                ),
                (
                    "RepositoryUri".to_string(),
                    json!(self.ecr.repository_uri(&ctx.region, name)),
                ),
            ]),
            ..Default::default()
        }
    }

    /// Applies the settings that have their own operations (those CreateRepository lacks).
    fn apply(
        &self,
        ctx: &ProviderContext,
        name: &str,
        s: &Spec,
        old: Option<&Spec>,
    ) -> Result<(), AwsError> {
        let region = &ctx.region;
        if old.is_none_or(|o| o.lifecycle != s.lifecycle) {
            match &s.lifecycle {
                Some(text) => self.ecr.put_lifecycle_policy(region, name, text)?,
                None if old.is_some() => match self.ecr.delete_lifecycle_policy(region, name) {
                    Ok(_) => {}
                    Err(e) if e.code == "LifecyclePolicyNotFoundException" => {}
                    Err(e) => return Err(e),
                },
                None => {}
            }
        }
        if old.is_none_or(|o| o.policy != s.policy) {
            match &s.policy {
                Some(text) => self.ecr.set_repository_policy(region, name, text)?,
                None if old.is_some() => match self.ecr.delete_repository_policy(region, name) {
                    Ok(_) => {}
                    Err(e) if e.code == "RepositoryPolicyNotFoundException" => {}
                    Err(e) => return Err(e),
                },
                None => {}
            }
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl Provider for RepositoryProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Arn", "RepositoryUri"])
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(REPOSITORY, properties)?;
        let s = spec(ctx, &props)?;
        let name = match scalar(&props, "RepositoryName")? {
            Some(n) => n,
            None => ctx.generated_name(256, "").to_lowercase(),
        };
        let input = CreateRepositoryInput {
            name: name.clone(),
            tag_mutability: s.mutability.clone(),
            scan_on_push: s.scan_on_push,
            encryption_type: s.encryption_type.clone(),
            kms_key: s.kms_key.clone(),
            tags: s.tags.clone(),
            system_tags: system_tags(ctx),
        };
        match self.ecr.create_repository(&ctx.region, None, input) {
            Ok(_) => {}
            Err(e) if e.code == "RepositoryAlreadyExistsException" => {
                return Err(already_exists(ctx, &name));
            }
            Err(e) => return Err(failed(ctx, SERVICE, e)),
        }
        if let Err(e) = self.apply(ctx, &name, &s, None) {
            // The repository must not outlive the failed create.
            let _ = self.ecr.delete_repository(&ctx.region, &name, true);
            return Err(failed(ctx, SERVICE, e));
        }
        Ok(self.outcome(ctx, &name))
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let old = spec(ctx, &*object(REPOSITORY, old)?)?;
        let s = spec(ctx, &*object(REPOSITORY, new)?)?;
        let region = &ctx.region;
        let fail = |e: AwsError| failed(ctx, SERVICE, e);
        let current = self.ecr.repository(region, physical_id).map_err(fail)?;
        let mutability = s.mutability.clone().unwrap_or_else(|| "MUTABLE".into());
        if mutability != current.tag_mutability {
            self.ecr
                .put_image_tag_mutability(region, physical_id, &mutability)
                .map_err(fail)?;
        }
        if s.scan_on_push != current.scan_on_push {
            self.ecr
                .put_image_scanning_configuration(region, physical_id, s.scan_on_push)
                .map_err(fail)?;
        }
        self.apply(ctx, physical_id, &s, Some(&old)).map_err(fail)?;
        let arn = self.ecr.repository_arn(region, physical_id);
        let change = TagChange::between(&current.tags, &s.tags);
        self.ecr
            .untag_resource(region, &arn, &change.remove)
            .map_err(fail)?;
        self.ecr
            .tag_resource(region, &arn, &change.set)
            .map_err(fail)?;
        Ok(self.outcome(ctx, physical_id))
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        properties: &Value,
    ) -> Result<(), ProviderError> {
        let props = object(REPOSITORY, properties)?;
        let force = flag(&props, "EmptyOnDelete")?;
        match self.ecr.delete_repository(&ctx.region, physical_id, force) {
            Ok(_) => Ok(()),
            Err(e) if e.code == "RepositoryNotFoundException" => {
                Err(ProviderError::NotFound(physical_id.to_string()))
            }
            Err(e) => Err(failed(ctx, SERVICE, e)),
        }
    }

    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _p: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let r = match self.ecr.repository(&ctx.region, physical_id) {
            Ok(r) => r,
            Err(e) if e.code == "RepositoryNotFoundException" => return Ok(None),
            Err(e) => return Err(failed(ctx, SERVICE, e)),
        };
        let mut p = Map::new();
        p.insert("RepositoryName".into(), json!(r.name));
        p.insert("ImageTagMutability".into(), json!(r.tag_mutability));
        p.insert(
            "ImageScanningConfiguration".into(),
            json!({"ScanOnPush": r.scan_on_push}),
        );
        let mut enc = json!({"EncryptionType": r.encryption_type});
        if let Some(k) = &r.kms_key {
            enc["KmsKey"] = json!(k);
        }
        p.insert("EncryptionConfiguration".into(), enc);
        if let Some(l) = &r.lifecycle_policy {
            p.insert(
                "LifecyclePolicy".into(),
                json!({"LifecyclePolicyText": l, "RegistryId": self.ecr.registry_id()}),
            );
        }
        if let Some(text) = &r.policy {
            p.insert(
                "RepositoryPolicyText".into(),
                serde_json::from_str(text).unwrap_or_else(|_| json!(text)),
            );
        }
        if !r.tags.is_empty() {
            let t: Vec<Value> = r
                .tags
                .iter()
                .map(|(k, v)| json!({"Key": k, "Value": v}))
                .collect();
            p.insert("Tags".into(), Value::Array(t));
        }
        Ok(Some(Observed {
            properties: p,
            attributes: self.outcome(ctx, physical_id).attributes,
        }))
    }
}
