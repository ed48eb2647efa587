//! ValidateTemplate and GetTemplateSummary.

use super::common::*;
use crate::api::*;
use crate::engine::Engine;
use crate::error::EngineError;
use cumulo_template::Value;
use cumulo_template::model::parameters_of;
use cumulo_template::{Pseudo, prepare};
use indexmap::{IndexMap, IndexSet};

/// Parses and checks a template as a deployment would, with stand-in values for parameters
/// that have no default (ValidateTemplate checks the template, not parameter values).
async fn checked(
    engine: &Engine,
    caller: &Caller,
    input: &TemplateInput,
) -> Result<(Value, Vec<ParameterDeclaration>), EngineError> {
    let text = text_of(engine, caller, input).await?;
    checked_text(caller, &text)
}

/// The template a ValidateTemplate / GetTemplateSummary call names.
async fn text_of(
    engine: &Engine,
    caller: &Caller,
    input: &TemplateInput,
) -> Result<String, EngineError> {
    Ok(
        match (&input.stack_name, &input.template_body, &input.template_url) {
            (Some(name), None, None) => {
                let st = engine.inner.lock();
                find(&st, caller, name)
                    .ok_or_else(|| EngineError::stack_not_found(name))?
                    .template_body
                    .clone()
            }
            (_, body, url) => {
                template_text(engine, caller, body.as_deref(), url.as_deref()).await?
            }
        },
    )
}

fn checked_text(
    caller: &Caller,
    text: &str,
) -> Result<(Value, Vec<ParameterDeclaration>), EngineError> {
    let root = parse(text)?;
    let decls = parameters_of(&root).map_err(first_error)?;
    let mut given = IndexMap::new();
    let mut stand_ins = IndexSet::new();
    for d in decls.values() {
        if d.default.is_none() {
            given.insert(d.name.clone(), d.dummy_value());
            stand_ins.insert(d.name.clone());
        }
    }
    let pseudo = Pseudo::new(
        &caller.region,
        &caller.account_id,
        "validate",
        "00000000-0000-0000-0000-000000000000",
    );
    let no_ssm = |_: &str| Some(String::new());
    // ValidateTemplate does not run AWS::Include or macros: what they produce is checked when
    // a stack operation or change set runs them.
    if !super::transform::expands(&root) {
        prepare(root.clone(), &given, &stand_ins, pseudo, &no_ssm).map_err(first_error)?;
    }
    let params = declarations(&root)?;
    Ok((root, params))
}

/// The template's parameters as ValidateTemplate and GetTemplateSummary list them.
fn declarations(root: &Value) -> Result<Vec<ParameterDeclaration>, EngineError> {
    Ok(parameters_of(root)
        .map_err(first_error)?
        .values()
        .map(|d| ParameterDeclaration {
            parameter_key: d.name.clone(),
            default_value: d.default.clone(),
            parameter_type: d.type_name.clone(),
            no_echo: d.no_echo,
            description: d.description.clone(),
            allowed_values: d.allowed_values.clone().unwrap_or_default(),
        })
        .collect())
}

fn transforms(root: &Value) -> Vec<String> {
    cumulo_template::model::transforms_of(root)
}

pub async fn validate_template(
    engine: &Engine,
    caller: &Caller,
    input: TemplateInput,
) -> Result<ValidateTemplateOutput, EngineError> {
    let input = TemplateInput {
        stack_name: None,
        ..input
    };
    let (root, parameters) = checked(engine, caller, &input).await?;
    let (capabilities, capabilities_reason) = required_capabilities(&root);
    Ok(ValidateTemplateOutput {
        parameters,
        description: root
            .get("Description")
            .and_then(Value::as_str)
            .map(str::to_string),
        capabilities,
        capabilities_reason,
        declared_transforms: transforms(&root),
    })
}

pub async fn get_template_summary(
    engine: &Engine,
    caller: &Caller,
    input: TemplateInput,
) -> Result<TemplateSummaryOutput, EngineError> {
    // A stack's summary is of the template it processed; its declared transforms are the
    // submitted template's.
    let submitted = match &input.stack_name {
        Some(name) if input.template_body.is_none() && input.template_url.is_none() => {
            let st = engine.inner.lock();
            find(&st, caller, name).and_then(|s| s.original_body.clone())
        }
        _ => None,
    };
    let text = text_of(engine, caller, &input).await?;
    let (original, _) = checked_text(caller, &text)?;
    let processed_stack = submitted.is_some();
    let declared = match submitted {
        Some(submitted) => transforms(&checked_text(caller, &submitted)?.0),
        None => transforms(&original),
    };
    // AWS summarizes the template its transforms (AWS::Include, macros, SAM) make, with the
    // parameters' defaults, and names the transforms it declared.
    // A stack's template is already processed.
    let root = if !processed_stack && super::transform::expands(&original) {
        super::transform::process(engine, caller, text, original.clone(), &IndexMap::new())
            .await?
            .root
    } else {
        original.clone()
    };
    let parameters = declarations(&root)?;
    let (mut capabilities, mut capabilities_reason) = required_capabilities(&original);
    let (processed, processed_reason) = required_capabilities(&root);
    for c in processed {
        if !capabilities.contains(&c) {
            capabilities.push(c);
        }
    }
    capabilities_reason = capabilities_reason.or(processed_reason);
    let mut types: Vec<String> = Vec::new();
    let mut summaries: Vec<ResourceIdentifierSummary> = Vec::new();
    if let Some(resources) = root.get("Resources").and_then(Value::as_object) {
        for (logical, r) in resources {
            let Some(t) = r.get("Type").and_then(Value::as_str) else {
                continue;
            };
            if !types.iter().any(|x| x == t) {
                types.push(t.to_string());
            }
            if let Some(schema) = crate::schema::schema(t)
                && !schema.primary_identifier.is_empty()
            {
                match summaries.iter_mut().find(|s| s.resource_type == t) {
                    Some(s) => s.logical_resource_ids.push(logical.to_string()),
                    None => summaries.push(ResourceIdentifierSummary {
                        resource_type: t.to_string(),
                        logical_resource_ids: vec![logical.to_string()],
                        resource_identifiers: schema.primary_identifier.clone(),
                    }),
                }
            }
        }
    }
    Ok(TemplateSummaryOutput {
        parameters,
        description: root
            .get("Description")
            .and_then(Value::as_str)
            .map(str::to_string),
        capabilities,
        capabilities_reason,
        resource_types: types,
        version: root
            .get("AWSTemplateFormatVersion")
            .and_then(Value::as_str)
            .map(str::to_string),
        metadata: root.get("Metadata").map(|m| m.to_string()),
        declared_transforms: declared,
        resource_identifier_summaries: summaries,
    })
}
