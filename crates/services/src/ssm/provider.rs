//! CloudFormation provider: AWS::SSM::Parameter over Parameter Store's typed operations. An
//! update is PutParameter with Overwrite (a new version, as AWS's handler does) plus tag edits.

use super::{PutParameterInput, SsmService};
use crate::providers::system_tags::{TagChange, system_tags};
use crate::providers::{
    ProviderServices, already_exists, check_known, failed, json_text, object, required, scalar,
};
use cumulo_engine::{
    Observed, Provider, ProviderContext, ProviderError, ProviderOutcome, ProviderRegistry,
};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::Arc;

const PARAMETER: &str = "AWS::SSM::Parameter";

pub fn register(r: &mut ProviderRegistry, s: &ProviderServices) {
    r.register(
        PARAMETER,
        Arc::new(ParameterProvider { ssm: s.ssm.clone() }),
    );
}

struct ParameterProvider {
    ssm: Arc<SsmService>,
}

/// The parameter's tags: a `{key: value}` map in this type's schema (a `[{Key, Value}]` list is
/// accepted too), then the stack's tags.
fn parameter_tags(
    ctx: &ProviderContext,
    props: &Map<String, Value>,
) -> Result<BTreeMap<String, String>, ProviderError> {
    let mut out = BTreeMap::new();
    match props.get("Tags") {
        None | Some(Value::Null) => {}
        Some(Value::Object(m)) => {
            for (k, v) in m {
                out.insert(
                    k.clone(),
                    crate::providers::scalar_value(v).unwrap_or_default(),
                );
            }
        }
        Some(Value::Array(_)) => {
            out.extend(crate::providers::tags(ctx, props)?);
        }
        Some(v) => {
            return Err(ProviderError::Failed(format!(
                "Properties validation failed for resource with message: #/Tags: expected type: JSONObject, found: {}",
                crate::providers::json_type(v)
            )));
        }
    }
    for (k, v) in crate::providers::tags(ctx, &Map::new())? {
        out.entry(k).or_insert(v);
    }
    Ok(out)
}

fn input(
    props: &Map<String, Value>,
    name: String,
    overwrite: bool,
) -> Result<PutParameterInput, ProviderError> {
    check_known(
        PARAMETER,
        props,
        &[
            "AllowedPattern",
            "DataType",
            "Description",
            "Name",
            "Policies",
            "Tags",
            "Tier",
            "Type",
            "Value",
        ],
        &[],
    )?;
    let param_type = required(props, "Type")?;
    if param_type != "String" && param_type != "StringList" {
        // CloudFormation cannot create SecureString parameters; its schema's enum says so.
        return Err(ProviderError::Failed(format!(
            "Properties validation failed for resource with message: #/Type: {param_type} is not a valid enum value"
        )));
    }
    Ok(PutParameterInput {
        name,
        value: required(props, "Value")?,
        param_type: Some(param_type),
        description: scalar(props, "Description")?,
        key_id: None,
        overwrite,
        allowed_pattern: scalar(props, "AllowedPattern")?,
        tags: Vec::new(),
        tier: scalar(props, "Tier")?,
        policies: json_text(props, "Policies")?,
        data_type: scalar(props, "DataType")?,
    })
}

fn outcome(name: &str, props: &Map<String, Value>) -> Result<ProviderOutcome, ProviderError> {
    Ok(ProviderOutcome {
        physical_id: name.to_string(),
        attributes: Map::from_iter([
            ("Type".to_string(), json!(required(props, "Type")?)),
            ("Value".to_string(), json!(required(props, "Value")?)),
        ]),
        ..Default::default()
    })
}

/// The parameter's name: the template's, or generated (one rule for create and its identity).
fn parameter_name(
    ctx: &ProviderContext,
    props: &Map<String, Value>,
) -> Result<String, ProviderError> {
    Ok(match scalar(props, "Name")? {
        Some(n) => n,
        None => ctx.generated_name(1011, ""),
    })
}

#[async_trait::async_trait]
impl Provider for ParameterProvider {
    fn attributes(&self) -> Option<&'static [&'static str]> {
        Some(&["Type", "Value"])
    }

    fn created_identity(&self, ctx: &ProviderContext, properties: &Value) -> Option<String> {
        let props = object(PARAMETER, properties).ok()?;
        parameter_name(ctx, &props).ok()
    }

    async fn create(
        &self,
        ctx: &ProviderContext,
        properties: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let props = object(PARAMETER, properties)?;
        let name = parameter_name(ctx, &props)?;
        let mut put = input(&props, name.clone(), false)?;
        put.tags = parameter_tags(ctx, &props)?.into_iter().collect();
        if self.ssm.get_parameter(&ctx.region, &name, false).is_ok() {
            return Err(already_exists(ctx, &name));
        }
        self.ssm
            .put_parameter(&ctx.region, put)
            .await
            .map_err(|e| failed(ctx, "Ssm", e))?;
        let system = system_tags(ctx);
        if !system.is_empty() {
            self.ssm
                .add_system_tags(&ctx.region, &name, &system)
                .await
                .map_err(|e| failed(ctx, "Ssm", e))?;
        }
        outcome(&name, &props)
    }

    async fn update(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        old: &Value,
        new: &Value,
    ) -> Result<ProviderOutcome, ProviderError> {
        let old_props = object(PARAMETER, old)?;
        let props = object(PARAMETER, new)?;
        let put = input(&props, physical_id.to_string(), true)?;
        let old_put = input(&old_props, physical_id.to_string(), true)?;
        let unchanged = put.value == old_put.value
            && put.param_type == old_put.param_type
            && put.description == old_put.description
            && put.allowed_pattern == old_put.allowed_pattern
            && put.tier == old_put.tier
            && put.policies == old_put.policies
            && put.data_type == old_put.data_type;
        if !unchanged {
            self.ssm
                .put_parameter(&ctx.region, put)
                .await
                .map_err(|e| failed(ctx, "Ssm", e))?;
        }
        let wanted: Vec<(String, String)> = parameter_tags(ctx, &props)?.into_iter().collect();
        let live = self
            .ssm
            .list_tags(&ctx.region, "Parameter", physical_id)
            .map_err(|e| failed(ctx, "Ssm", e))?;
        let change = TagChange::between(&live, &wanted);
        if !change.remove.is_empty() {
            self.ssm
                .remove_tags(&ctx.region, "Parameter", physical_id, &change.remove)
                .await
                .map_err(|e| failed(ctx, "Ssm", e))?;
        }
        if !change.set.is_empty() {
            self.ssm
                .add_tags(&ctx.region, "Parameter", physical_id, &change.set)
                .await
                .map_err(|e| failed(ctx, "Ssm", e))?;
        }
        outcome(physical_id, &props)
    }

    async fn delete(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<(), ProviderError> {
        match self.ssm.delete_parameter(&ctx.region, physical_id).await {
            Ok(()) => Ok(()),
            Err(e) if e.code == "ParameterNotFound" => {
                Err(ProviderError::NotFound(physical_id.to_string()))
            }
            Err(e) => Err(failed(ctx, "Ssm", e)),
        }
    }

    /// The parameter's latest version in the template's shape, with its tags (the `{key:
    /// value}` map this type's schema has).
    async fn read(
        &self,
        ctx: &ProviderContext,
        physical_id: &str,
        _properties: &Value,
    ) -> Result<Option<Observed>, ProviderError> {
        let Some((param, latest)) = self.ssm.describe_parameter(&ctx.region, physical_id) else {
            return Ok(None);
        };
        let mut props = Map::new();
        props.insert("Name".into(), json!(param.name));
        props.insert("Type".into(), json!(latest.param_type.as_str()));
        props.insert("Value".into(), json!(latest.value));
        props.insert("Tier".into(), json!(latest.tier.as_str()));
        props.insert("DataType".into(), json!(latest.data_type));
        if let Some(d) = &latest.description {
            props.insert("Description".into(), json!(d));
        }
        if let Some(p) = &latest.allowed_pattern {
            props.insert("AllowedPattern".into(), json!(p));
        }
        if let Some(p) = &latest.policies {
            props.insert("Policies".into(), json!(p));
        }
        if !param.tags.is_empty() {
            let tags: Map<String, Value> = param
                .tags
                .iter()
                .map(|(k, v)| (k.clone(), json!(v)))
                .collect();
            props.insert("Tags".into(), Value::Object(tags));
        }
        let attributes = Map::from_iter([
            ("Type".to_string(), json!(latest.param_type.as_str())),
            ("Value".to_string(), json!(latest.value)),
        ]);
        Ok(Some(Observed {
            properties: props,
            attributes,
        }))
    }

    /// Parameter Store's defaults made explicit on both sides: a parameter declared without
    /// `Tier` is a Standard one and without `DataType` a `text` one (what PutParameter stores
    /// and what a read reports), so declaring the default is not a change.
    fn canonicalize(&self, properties: Value) -> Value {
        let Value::Object(mut props) = properties else {
            return properties;
        };
        props.entry("Tier").or_insert_with(|| json!("Standard"));
        props.entry("DataType").or_insert_with(|| json!("text"));
        for key in ["Value", "Description", "AllowedPattern"] {
            // A number written unquoted is stored as its text (never re-cased: values are
            // case-sensitive).
            if let Some(v) = props
                .get_mut(key)
                .filter(|v| v.is_number() || v.is_boolean())
            {
                *v = json!(v.to_string());
            }
        }
        Value::Object(props)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::providers::test_support::{ctx, services};

    #[tokio::test]
    async fn parameter_create_update_delete() {
        let s = services();
        let p = crate::providers::registry(&s)
            .get(PARAMETER)
            .expect("registered")
            .clone();
        let c = ctx("Param", PARAMETER);
        let props = json!({"Type": "String", "Value": "v1", "Tags": {"env": "dev"}});
        let out = p.create(&c, &props).await.expect("create");
        assert!(out.physical_id.starts_with("teststack-Param-"));
        assert_eq!(out.attributes["Value"], json!("v1"));
        assert_eq!(out.attributes["Type"], json!("String"));
        let new = json!({"Type": "String", "Value": "v2", "Tags": {"env": "prod"}});
        p.update(&c, &out.physical_id, &props, &new)
            .await
            .expect("update");
        let v = s
            .ssm
            .get_parameter("us-east-1", &out.physical_id, false)
            .expect("get");
        assert_eq!((v.value.as_str(), v.version), ("v2", 2));
        let tags = s
            .ssm
            .list_tags("us-east-1", "Parameter", &out.physical_id)
            .expect("tags");
        assert_eq!(tags.get("env").map(String::as_str), Some("prod"));
        p.delete(&c, &out.physical_id, &new).await.expect("delete");
        assert!(matches!(
            p.delete(&c, &out.physical_id, &new).await,
            Err(ProviderError::NotFound(_))
        ));
    }

    #[tokio::test]
    async fn secure_string_and_missing_value_are_refused() {
        let s = services();
        let p = crate::providers::registry(&s)
            .get(PARAMETER)
            .expect("p")
            .clone();
        let c = ctx("P", PARAMETER);
        let e = p
            .create(&c, &json!({"Type": "SecureString", "Value": "x"}))
            .await
            .expect_err("secure");
        assert!(e.to_string().contains("SecureString"), "{e}");
        let e = p
            .create(&c, &json!({"Type": "String"}))
            .await
            .expect_err("value");
        assert!(e.to_string().contains("[Value]"), "{e}");
    }
}
