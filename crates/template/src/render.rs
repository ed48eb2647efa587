//! Rendering: a template fully evaluated without deploying it. Values only a deployment knows
//! are placeholders (see [`PlaceholderResolver`]); the result is the processed template plus the
//! provisioning order. Used by `cumulo render`, `cumulo validate` and the tests.

use crate::Diagnostic;
use crate::context::{PLACEHOLDER_PREFIX, PlaceholderResolver, Pseudo};
use crate::dynref::find_dynamic_references;
use crate::model::parameters_of;
use crate::params::SsmLookup;
use crate::prepare::{Prepared, prepare};
use crate::value::{Map, Value};
use indexmap::{IndexMap, IndexSet};

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
    /// Check the template as ValidateTemplate would (see
    /// [`Evaluator::validating`](crate::intrinsics::Evaluator::validating)).
    pub validate: bool,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            parameters: IndexMap::new(),
            region: "us-east-1".to_string(),
            account_id: "000000000000".to_string(),
            stack_name: "cumulo-render".to_string(),
            dummy_parameters: false,
            validate: false,
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
    let mut prepared = prepare(root, &given, &stand_ins, pseudo, ssm)?;
    prepared.validating = options.validate;
    let mut errors = Vec::new();
    let mut resources = Map::with_capacity(prepared.order.len());
    for id in &prepared.order {
        match prepared.resolve_resource_value(id, &PlaceholderResolver) {
            Ok(r) => {
                let mut obj = Map::new();
                obj.insert("Type", Value::String(r.resource_type.into()));
                obj.insert("Properties", r.properties);
                if !r.depends_on.is_empty() {
                    // Moved in: `json!` would copy every name.
                    let names = r.depends_on.into_iter().map(Value::from).collect();
                    obj.insert("DependsOn", Value::Array(names));
                }
                for (k, v) in [
                    ("DeletionPolicy", r.deletion_policy.map(Value::from)),
                    (
                        "UpdateReplacePolicy",
                        r.update_replace_policy.map(Value::from),
                    ),
                    ("Metadata", r.metadata),
                    ("CreationPolicy", r.creation_policy),
                    ("UpdatePolicy", r.update_policy),
                ] {
                    if let Some(v) = v {
                        obj.insert(k, v);
                    }
                }
                resources.insert(id.clone(), Value::Object(obj));
            }
            Err(e) => errors.push(e),
        }
    }
    let mut outputs = Map::with_capacity(prepared.live_outputs.len());
    match prepared.resolve_output_values(&PlaceholderResolver) {
        Ok(list) => {
            for o in list {
                let mut obj = Map::new();
                obj.insert("Value", o.value);
                if let Some(d) = o.description {
                    obj.insert("Description", Value::String(d.into()));
                }
                if let Some(e) = o.export_name {
                    let export = Map::from_iter([("Name", Value::from(e))]);
                    obj.insert("Export", Value::Object(export));
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
            .map(|f| {
                Value::Object(Map::from_iter([
                    ("Path", Value::from(format!("/Resources{}", f.path))),
                    ("Reference", Value::from(f.text)),
                ]))
            })
            .collect::<Vec<_>>(),
        Err(e) => {
            errors.extend(e);
            Vec::new()
        }
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    let parameters: Map = prepared
        .parameters
        .iter()
        .map(|(k, p)| {
            let v = if p.no_echo {
                Value::String("****".into())
            } else {
                p.value.to_value()
            };
            (k.clone(), v)
        })
        .collect();
    let conditions: Map = prepared
        .conditions
        .iter()
        .map(|(k, v)| (k.clone(), Value::Bool(*v)))
        .collect();
    // Built by moving values in, not copied.
    let mut output = Map::new();
    output.insert("Parameters", Value::Object(parameters));
    output.insert("Conditions", Value::Object(conditions));
    output.insert("Resources", resources);
    output.insert("Outputs", Value::Object(outputs));
    output.insert("ProvisioningOrder", strings(&prepared.order));
    output.insert(
        "ProvisioningLevels",
        Value::Array(prepared.levels.iter().map(|l| strings(l)).collect()),
    );
    output.insert("DynamicReferences", Value::Array(dynamic_references));
    let output = Value::Object(output);
    Ok(Rendered { prepared, output })
}

fn strings(items: &[String]) -> Value {
    Value::Array(items.iter().cloned().map(Value::from).collect())
}
