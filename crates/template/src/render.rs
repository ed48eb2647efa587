//! Rendering: a template fully evaluated without deploying it. Values only a deployment knows
//! are placeholders (see [`PlaceholderResolver`]); the result is the processed template plus the
//! provisioning order. Used by `cumulo render`, `cumulo validate` and the tests.

use crate::Diagnostic;
use crate::context::{PLACEHOLDER_PREFIX, PlaceholderResolver, Pseudo};
use crate::dynref::find_dynamic_references;
use crate::model::parameters_of;
use crate::params::SsmLookup;
use crate::prepare::{Prepared, prepare};
use indexmap::{IndexMap, IndexSet};
use serde_json::{Map, Value, json};

/// What to render with.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    pub parameters: IndexMap<String, String>,
    pub region: String,
    pub account_id: String,
    pub stack_name: String,
    /// Fill parameters that have neither a given value nor a default with a value satisfying
    /// their constraints, instead of failing with "must have values".
    pub dummy_parameters: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            parameters: IndexMap::new(),
            region: "us-east-1".to_string(),
            account_id: "000000000000".to_string(),
            stack_name: "cumulo-render".to_string(),
            dummy_parameters: false,
        }
    }
}

/// A rendered template.
#[derive(Debug, Clone)]
pub struct Rendered {
    pub prepared: Prepared,
    /// `{Parameters, Conditions, Resources, Outputs, ProvisioningOrder, ProvisioningLevels,
    /// DynamicReferences}`; NoEcho parameter values are masked as `****`.
    pub output: Value,
}

/// Stands in for SSM when rendering: `AWS::SSM::Parameter::Value<...>` parameters render as
/// `{{cumulo:SSM:name}}`.
pub struct PlaceholderSsm;

impl SsmLookup for PlaceholderSsm {
    fn get_parameter(&self, name: &str) -> Option<String> {
        Some(format!("{PLACEHOLDER_PREFIX}SSM:{name}}}}}"))
    }
}

/// A deterministic stack id for rendering (a real stack gets a random uuid).
const RENDER_STACK_UUID: &str = "00000000-0000-0000-0000-000000000000";

/// Renders a parsed template.
pub fn render(
    root: Value,
    options: &RenderOptions,
    ssm: &dyn SsmLookup,
) -> Result<Rendered, Vec<Diagnostic>> {
    let mut given = options.parameters.clone();
    let mut stand_ins = IndexSet::new();
    if options.dummy_parameters {
        for d in parameters_of(&root)?.values() {
            if d.default.is_none() && !given.contains_key(&d.name) {
                given.insert(d.name.clone(), d.dummy_value());
                stand_ins.insert(d.name.clone());
            }
        }
    }
    let pseudo = Pseudo::new(
        &options.region,
        &options.account_id,
        &options.stack_name,
        RENDER_STACK_UUID,
    );
    let prepared = prepare(root, &given, &stand_ins, pseudo, ssm)?;
    let mut errors = Vec::new();
    let mut resources = Map::with_capacity(prepared.order.len());
    for id in &prepared.order {
        match prepared.resolve_resource(id, &PlaceholderResolver) {
            Ok(r) => {
                let mut obj = Map::new();
                obj.insert("Type".into(), Value::String(r.resource_type));
                obj.insert("Properties".into(), r.properties);
                if !r.depends_on.is_empty() {
                    // Moved in: `json!` would copy every name.
                    let names = r.depends_on.into_iter().map(Value::String).collect();
                    obj.insert("DependsOn".into(), Value::Array(names));
                }
                for (k, v) in [
                    ("DeletionPolicy", r.deletion_policy.map(Value::String)),
                    (
                        "UpdateReplacePolicy",
                        r.update_replace_policy.map(Value::String),
                    ),
                    ("Metadata", r.metadata),
                    ("CreationPolicy", r.creation_policy),
                    ("UpdatePolicy", r.update_policy),
                ] {
                    if let Some(v) = v {
                        obj.insert(k.into(), v);
                    }
                }
                resources.insert(id.clone(), Value::Object(obj));
            }
            Err(e) => errors.push(e),
        }
    }
    let mut outputs = Map::with_capacity(prepared.live_outputs.len());
    match prepared.resolve_outputs(&PlaceholderResolver) {
        Ok(list) => {
            for o in list {
                let mut obj = Map::new();
                obj.insert("Value".into(), o.value);
                if let Some(d) = o.description {
                    obj.insert("Description".into(), Value::String(d));
                }
                if let Some(e) = o.export_name {
                    obj.insert("Export".into(), json!({ "Name": e }));
                }
                outputs.insert(o.name, Value::Object(obj));
            }
        }
        Err(e) => errors.extend(e),
    }
    let resources = Value::Object(resources);
    let dynamic_references = match find_dynamic_references(&resources) {
        Ok(found) => found
            .into_iter()
            .map(|f| json!({ "Path": format!("/Resources{}", f.path), "Reference": f.text }))
            .collect::<Vec<_>>(),
        Err(e) => {
            errors.extend(e);
            Vec::new()
        }
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    let parameters: Map<String, Value> = prepared
        .parameters
        .iter()
        .map(|(k, p)| {
            let v = if p.no_echo {
                Value::String("****".into())
            } else {
                p.value.to_json()
            };
            (k.clone(), v)
        })
        .collect();
    let conditions: Map<String, Value> = prepared
        .conditions
        .iter()
        .map(|(k, v)| (k.clone(), Value::Bool(*v)))
        .collect();
    // Built by moving values in: `json!` would re-serialize (deep-copy) each section.
    let mut output = Map::new();
    output.insert("Parameters".into(), Value::Object(parameters));
    output.insert("Conditions".into(), Value::Object(conditions));
    output.insert("Resources".into(), resources);
    output.insert("Outputs".into(), Value::Object(outputs));
    output.insert("ProvisioningOrder".into(), strings(&prepared.order));
    output.insert(
        "ProvisioningLevels".into(),
        Value::Array(prepared.levels.iter().map(|l| strings(l)).collect()),
    );
    output.insert("DynamicReferences".into(), Value::Array(dynamic_references));
    let output = Value::Object(output);
    Ok(Rendered { prepared, output })
}

fn strings(items: &[String]) -> Value {
    Value::Array(items.iter().cloned().map(Value::String).collect())
}
