//! The pipeline from a parsed template to something a deployment can walk: transforms checked,
//! parameters validated, Fn::ForEach expanded, the model built, conditions evaluated,
//! condition-false resources and outputs pruned, references checked and the dependency graph
//! ordered. Then each resource or output can be resolved against a [`Resolver`].

use crate::Diagnostic;
use crate::conditions::evaluate_conditions;
use crate::context::{Pseudo, Resolver};
use crate::errors::{self, Block};
use crate::graph::DependencyGraph;
use crate::intrinsics::{Evaluator, Mode};
use crate::lang_ext;
use crate::model::{LANGUAGE_EXTENSIONS, Template, parameters_of, transforms_of};
use crate::params::{ResolvedParameter, SsmLookup, resolve_parameters};
use crate::value::{Map, Value};
use crate::{NameMap, NameSet};
use indexmap::{IndexMap, IndexSet};

/// A template ready to deploy (or render).
#[derive(Debug, Clone)]
pub struct Prepared {
    /// The model after Fn::ForEach expansion, every resource included.
    pub template: Template,
    pub parameters: NameMap<String, ResolvedParameter>,
    pub pseudo: Pseudo,
    pub conditions: NameMap<String, bool>,
    /// Every defined resource.
    pub defined: NameSet<String>,
    /// The resources whose condition holds, in template order.
    pub live: NameSet<String>,
    /// The outputs whose condition holds, in template order.
    pub live_outputs: Vec<String>,
    pub graph: DependencyGraph,
    /// Provisioning order (dependencies first; ties in template order).
    pub order: Vec<String>,
    /// Resources that can be provisioned in parallel, level by level.
    pub levels: Vec<Vec<String>>,
    /// Resolved to check the template, not to deploy it (see [`Evaluator::validating`]).
    pub validating: bool,
}

/// A resource with its intrinsics resolved. The engine takes it as `serde_json` values (what its
/// records and providers hold); rendering keeps the template's own ([`Value`]), which costs no
/// copy.
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedResource<V = serde_json::Value> {
    pub logical_id: String,
    pub resource_type: String,
    pub properties: V,
    /// Every resource it depends on (explicit DependsOn and implicit references).
    pub depends_on: Vec<String>,
    pub deletion_policy: Option<String>,
    pub update_replace_policy: Option<String>,
    pub metadata: Option<V>,
    pub creation_policy: Option<V>,
    pub update_policy: Option<V>,
}

impl ResolvedResource<Value> {
    fn into_json(self) -> ResolvedResource {
        ResolvedResource {
            logical_id: self.logical_id,
            resource_type: self.resource_type,
            properties: self.properties.into(),
            depends_on: self.depends_on,
            deletion_policy: self.deletion_policy,
            update_replace_policy: self.update_replace_policy,
            metadata: self.metadata.map(Into::into),
            creation_policy: self.creation_policy.map(Into::into),
            update_policy: self.update_policy.map(Into::into),
        }
    }
}

/// An output with its intrinsics resolved (`serde_json` for the engine, as resources are).
#[derive(Debug, Clone, PartialEq)]
pub struct ResolvedOutput<V = serde_json::Value> {
    pub name: String,
    pub value: V,
    pub description: Option<String>,
    pub export_name: Option<String>,
}

/// Transforms left for this pure pipeline other than the language extensions are reported by
/// name: SAM, AWS::Include and macros, which a stack operation runs before it prepares (see
/// [`crate::transform`]; `cumulo render` runs SAM itself), but preparing cannot.
fn check_transforms(root: &Value) -> Result<bool, Vec<Diagnostic>> {
    let transforms = transforms_of(root);
    let unsupported: Vec<&String> = transforms
        .iter()
        .filter(|t| *t != LANGUAGE_EXTENSIONS)
        .collect();
    if !unsupported.is_empty() {
        return Err(unsupported
            .into_iter()
            .map(|t| {
                let why = format!(
                    "Transform {t} runs when a stack operation or change set starts; it is not run here"
                );
                errors::format_error(why).with_path("Transform")
            })
            .collect());
    }
    Ok(!transforms.is_empty())
}

/// The first `Rain::` key and the first `Fn::ForEach::` key anywhere, in document order.
/// Templates written for Rain need `rain pkg` before any CloudFormation (or cumulo) can read
/// them; Fn::ForEach needs the language extensions transform. One walk finds both: a walk of
/// its own for each was a noticeable part of preparing a large template.
#[derive(Default)]
struct SpecialKeys<'v> {
    rain: Option<&'v str>,
    for_each: Option<&'v str>,
}

impl<'v> SpecialKeys<'v> {
    fn find(&mut self, v: &'v Value) {
        match v {
            Value::Object(obj) => {
                for (k, v) in obj {
                    // Most keys start with neither letter: one byte test instead of two
                    // prefix comparisons per key.
                    if let Some(b'R' | b'F') = k.as_bytes().first() {
                        if self.rain.is_none() && k.starts_with("Rain::") {
                            self.rain = Some(k);
                        } else if self.for_each.is_none() && k.starts_with(lang_ext::FOR_EACH) {
                            self.for_each = Some(k);
                        }
                    }
                    if self.rain.is_some() && self.for_each.is_some() {
                        return;
                    }
                    self.find(v);
                }
            }
            Value::Array(items) => {
                for item in items {
                    self.find(item);
                }
            }
            _ => {}
        }
    }
}

/// Runs the pipeline. `given` are the stack's parameter values; `stand_ins` names those of them
/// that are placeholders rather than user input (not checked against constraints).
pub fn prepare(
    mut root: Value,
    given: &IndexMap<String, String>,
    stand_ins: &IndexSet<String>,
    pseudo: Pseudo,
    ssm: &dyn SsmLookup,
) -> Result<Prepared, Vec<Diagnostic>> {
    let lang_ext = check_transforms(&root)?;
    let mut special = SpecialKeys::default();
    special.find(&root);
    if let Some(directive) = special.rain {
        return Err(vec![errors::format_error(format!(
            "{directive} is a Rain directive: package the template with `rain pkg` first"
        ))]);
    }
    let for_each_key = special.for_each.map(str::to_string);
    let decls = parameters_of(&root)?;
    let parameters = resolve_parameters(&decls, given, stand_ins, ssm)?;
    let no_resources = NameSet::default();
    let no_conditions = NameMap::default();
    let resolver = NoDeployment;
    if lang_ext {
        let raw_mappings = root
            .get("Mappings")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let ev = Evaluator {
            parameters: &parameters,
            mappings: &raw_mappings,
            pseudo: &pseudo,
            conditions: &no_conditions,
            defined: &no_resources,
            live: &no_resources,
            resolver: &resolver,
            lang_ext,
            mode: Mode::Values(Block::Resources),
            validating: false,
        };
        lang_ext::expand_for_each(&mut root, &ev).map_err(|e| vec![e])?;
    } else if let Some(key) = for_each_key {
        return Err(vec![errors::format_error(format!(
            "{key} requires the {LANGUAGE_EXTENSIONS} transform"
        ))]);
    }
    let template = Template::from_value(root)?;
    let defined: NameSet<String> = template.resources.keys().cloned().collect();
    let conditions = {
        let ev = Evaluator {
            parameters: &parameters,
            mappings: &template.mappings,
            pseudo: &pseudo,
            conditions: &no_conditions,
            defined: &defined,
            live: &no_resources,
            resolver: &resolver,
            lang_ext,
            mode: Mode::Conditions,
            validating: false,
        };
        evaluate_conditions(&template.conditions, &ev)?
    };
    let mut errors = Vec::new();
    let mut holds = |c: &Option<String>, block: Block| match c {
        None => true,
        Some(name) => match conditions.get(name) {
            Some(v) => *v,
            None => {
                let e = errors::unresolved_condition_in_block(name, block);
                if !errors.contains(&e) {
                    errors.push(e);
                }
                false
            }
        },
    };
    let live: NameSet<String> = template
        .resources
        .values()
        .filter(|r| holds(&r.condition, Block::Resources))
        .map(|r| r.logical_id.clone())
        .collect();
    let live_outputs: Vec<String> = template
        .outputs
        .values()
        .filter(|o| holds(&o.condition, Block::Outputs))
        .map(|o| o.name.clone())
        .collect();
    let (graph, graph_errors) =
        DependencyGraph::build(&template, &live, &live_outputs, &conditions);
    errors.extend(graph_errors);
    // Cycles are reported alongside reference errors: both come from the same graph.
    let order = match graph.order() {
        Ok(order) => order,
        Err(cycles) => {
            errors.extend(cycles);
            Vec::new()
        }
    };
    if !errors.is_empty() {
        return Err(errors);
    }
    let levels = graph.levels_of(&order);
    Ok(Prepared {
        template,
        parameters,
        pseudo,
        conditions,
        defined,
        live,
        live_outputs,
        graph,
        order,
        levels,
        validating: false,
    })
}

/// Used while nothing is deployed (ForEach collections, conditions): resources cannot be
/// referenced there, and the evaluator rejects such references before asking.
struct NoDeployment;

impl Resolver for NoDeployment {
    fn resource_ref(&self, logical_id: &str) -> Result<Value, Diagnostic> {
        Err(errors::unresolved_dependencies(
            &[logical_id.to_string()],
            Block::Resources,
        ))
    }

    fn get_att(&self, logical_id: &str, _attribute: &str) -> Result<Value, Diagnostic> {
        Err(errors::unresolved_dependencies(
            &[logical_id.to_string()],
            Block::Resources,
        ))
    }

    fn import_value(&self, export_name: &str) -> Result<Value, Diagnostic> {
        Err(errors::template_error(format!(
            "No export named {export_name} found."
        )))
    }
}

impl Prepared {
    /// An evaluator over this template for the given block.
    pub fn evaluator<'a>(&'a self, resolver: &'a dyn Resolver, block: Block) -> Evaluator<'a> {
        Evaluator {
            parameters: &self.parameters,
            mappings: &self.template.mappings,
            pseudo: &self.pseudo,
            conditions: &self.conditions,
            defined: &self.defined,
            live: &self.live,
            resolver,
            lang_ext: self.template.has_language_extensions(),
            mode: Mode::Values(block),
            validating: self.validating,
        }
    }

    /// Resolves one live resource's properties and attributes.
    pub fn resolve_resource(
        &self,
        logical_id: &str,
        resolver: &dyn Resolver,
    ) -> Result<ResolvedResource, Diagnostic> {
        self.resolve_resource_value(logical_id, resolver)
            .map(ResolvedResource::into_json)
    }

    /// [`resolve_resource`](Self::resolve_resource) in the template's own values.
    pub fn resolve_resource_value(
        &self,
        logical_id: &str,
        resolver: &dyn Resolver,
    ) -> Result<ResolvedResource<Value>, Diagnostic> {
        let r = self
            .template
            .resources
            .get(logical_id)
            .filter(|_| self.live.contains(logical_id))
            .ok_or_else(|| {
                errors::unresolved_dependencies(&[logical_id.to_string()], Block::Resources)
            })?;
        let ev = self.evaluator(resolver, Block::Resources);
        // Paths are written out only for an error: formatting them for every resource was a
        // noticeable part of resolving a large template.
        let at = |sub: &'static str| {
            move |e: Diagnostic| {
                if e.path.is_some() {
                    e
                } else {
                    e.with_path(format!("Resources/{logical_id}/{sub}"))
                }
            }
        };
        let properties = ev
            .eval(&r.properties)
            .map_err(at("Properties"))?
            .unwrap_or_else(|| Value::Object(Map::new()));
        let opt = |v: &Option<Value>, sub: &'static str| -> Result<Option<Value>, Diagnostic> {
            match v {
                None => Ok(None),
                Some(v) => ev.eval(v).map_err(at(sub)),
            }
        };
        let policy = |v: &Option<Value>, sub: &'static str| -> Result<Option<String>, Diagnostic> {
            match opt(v, sub)? {
                None => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.to_string())),
                Some(_) => Err(errors::format_error(format!("{sub} must be a string"))
                    .with_path(format!("Resources/{logical_id}/{sub}"))),
            }
        };
        Ok(ResolvedResource {
            logical_id: logical_id.to_string(),
            resource_type: r.resource_type.clone(),
            properties,
            depends_on: self
                .graph
                .deps
                .get(logical_id)
                .map(|d| d.iter().cloned().collect())
                .unwrap_or_default(),
            deletion_policy: policy(&r.deletion_policy, "DeletionPolicy")?,
            update_replace_policy: policy(&r.update_replace_policy, "UpdateReplacePolicy")?,
            metadata: opt(&r.metadata, "Metadata")?,
            creation_policy: opt(&r.creation_policy, "CreationPolicy")?,
            update_policy: opt(&r.update_policy, "UpdatePolicy")?,
        })
    }

    /// Resolves the live outputs, collecting every error.
    pub fn resolve_outputs(
        &self,
        resolver: &dyn Resolver,
    ) -> Result<Vec<ResolvedOutput>, Vec<Diagnostic>> {
        let outputs = self.resolve_output_values(resolver)?;
        Ok(outputs
            .into_iter()
            .map(|o| ResolvedOutput {
                name: o.name,
                value: o.value.into(),
                description: o.description,
                export_name: o.export_name,
            })
            .collect())
    }

    /// [`resolve_outputs`](Self::resolve_outputs) in the template's own values.
    pub fn resolve_output_values(
        &self,
        resolver: &dyn Resolver,
    ) -> Result<Vec<ResolvedOutput<Value>>, Vec<Diagnostic>> {
        let ev = self.evaluator(resolver, Block::Outputs);
        let mut out = Vec::new();
        let mut errors = Vec::new();
        for name in &self.live_outputs {
            let Some(o) = self.template.outputs.get(name) else {
                continue;
            };
            let text = |v: &Option<Value>, what: &str| -> Result<Option<String>, Diagnostic> {
                match v {
                    None => Ok(None),
                    Some(v) => match ev.eval(v)? {
                        None => Ok(None),
                        Some(v) => {
                            crate::intrinsics::scalar_string(&v)
                                .map(Some)
                                .ok_or_else(|| {
                                    errors::template_error(format!(
                                        "Output {name} {what} must be a string"
                                    ))
                                })
                        }
                    },
                }
            };
            let resolved = (|| {
                let value = ev.eval(&o.value)?.ok_or_else(|| {
                    errors::format_error("Every Outputs member must contain a Value object")
                })?;
                Ok::<_, Diagnostic>(ResolvedOutput {
                    name: name.clone(),
                    value,
                    description: text(&o.description, "Description")?,
                    export_name: text(&o.export_name, "Export Name")?,
                })
            })();
            match resolved {
                Ok(r) => out.push(r),
                Err(e) => errors.push(if e.path.is_some() {
                    e
                } else {
                    e.with_path(format!("Outputs/{name}"))
                }),
            }
        }
        if errors.is_empty() {
            Ok(out)
        } else {
            Err(errors)
        }
    }
}
