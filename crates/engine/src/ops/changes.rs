//! A change set's Changes: Add / Modify / Remove per resource, Replacement from the createOnly
//! table, and Details saying which property changed and whether statically (the template) or
//! dynamically (a reference to something the change set adds or replaces).

use crate::api::*;
use crate::canonical::canonical;
use crate::provider::ProviderRegistry;
use crate::schema;
use crate::state::{StackRecord, State};
use cumulo_template::context::PLACEHOLDER_PREFIX;
use cumulo_template::{Diagnostic, Prepared, Resolver, Value as TemplateValue};
use serde_json::Value;
use std::collections::HashSet;

/// Resolves a resource against the live stack where the value is known before execution;
/// a reference to something the change set adds or replaces is a placeholder.
struct PlanResolver<'a> {
    /// None: a stack not created yet, where every resource is new.
    stack: Option<&'a StackRecord>,
    state: &'a State,
    /// Resources whose physical id changes (added or possibly replaced).
    new_identity: HashSet<String>,
    /// Resources whose attributes may change (modified).
    modified: HashSet<String>,
    region: String,
}

impl Resolver for PlanResolver<'_> {
    fn resource_ref(&self, logical_id: &str) -> Result<TemplateValue, Diagnostic> {
        match self.stack.and_then(|s| s.resources.get(logical_id)) {
            Some(r) if !self.new_identity.contains(logical_id) && r.physical_id.is_some() => Ok(
                TemplateValue::from(r.physical_id.clone().unwrap_or_default()),
            ),
            _ => cumulo_template::PlaceholderResolver.resource_ref(logical_id),
        }
    }

    fn get_att(&self, logical_id: &str, attribute: &str) -> Result<TemplateValue, Diagnostic> {
        let known = !self.new_identity.contains(logical_id) && !self.modified.contains(logical_id);
        match self
            .stack
            .and_then(|s| s.resources.get(logical_id))
            .and_then(|r| r.attributes.get(attribute))
        {
            Some(v) if known => Ok(TemplateValue::from(v)),
            _ => cumulo_template::PlaceholderResolver.get_att(logical_id, attribute),
        }
    }

    fn import_value(&self, export_name: &str) -> Result<TemplateValue, Diagnostic> {
        crate::resolve::find_export(self.state, &self.region, export_name)
            .map(|(_, v)| TemplateValue::from(v))
            .ok_or_else(|| Diagnostic::new(format!("No export named {export_name} found.")))
    }
}

/// The change a placeholder stands for: `{{cumulo:Ref:X}}` is a ResourceReference to `X`,
/// `{{cumulo:GetAtt:X.Attr}}` a ResourceAttribute `X.Attr` (AWS's CausingEntity forms).
fn placeholder_cause(v: &Value) -> Option<(&'static str, String)> {
    let s = match v {
        Value::String(s) => s.as_str(),
        Value::Array(items) => return items.iter().find_map(placeholder_cause),
        Value::Object(o) => return o.values().find_map(placeholder_cause),
        _ => return None,
    };
    let at = s.find(PLACEHOLDER_PREFIX)?;
    let rest = &s[at + PLACEHOLDER_PREFIX.len()..];
    let end = rest.find("}}").unwrap_or(rest.len());
    if let Some(id) = rest[..end].strip_prefix("Ref:") {
        return Some(("ResourceReference", id.to_string()));
    }
    let entity = rest[..end].strip_prefix("GetAtt:")?;
    Some(("ResourceAttribute", entity.to_string()))
}

/// The changed parameters a template expression refers to (`Ref`, `${Name}` in `Fn::Sub`).
fn parameter_refs(v: &Value, changed: &HashSet<String>, out: &mut Vec<String>) {
    let mut note = |name: &str| {
        if changed.contains(name) && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    };
    match v {
        Value::Object(o) => {
            if let Some(Value::String(name)) = o.get("Ref") {
                note(name);
            }
            let sub = match o.get("Fn::Sub") {
                Some(Value::String(text)) => Some(text.as_str()),
                Some(Value::Array(args)) => args.first().and_then(Value::as_str),
                _ => None,
            };
            for piece in sub.unwrap_or_default().split("${").skip(1) {
                if let Some(name) = piece.split('}').next() {
                    note(name);
                }
            }
            for inner in o.values() {
                parameter_refs(inner, changed, out);
            }
        }
        Value::Array(items) => {
            for inner in items {
                parameter_refs(inner, changed, out);
            }
        }
        _ => {}
    }
}

/// What explains a resource's property changes: its template text before and after, and the
/// parameters whose values changed.
struct Causes<'a> {
    /// The resource as the stack's current template has it (None: not found there).
    old: Option<&'a Value>,
    new_properties: Value,
    changed_parameters: &'a HashSet<String>,
}

impl Causes<'_> {
    fn old_property(&self, name: &str) -> Option<&Value> {
        self.old?.get("Properties")?.get(name)
    }
}

pub(crate) fn compute_changes(
    registry: &ProviderRegistry,
    st: &State,
    live: Option<&StackRecord>,
    prepared: &Prepared,
    stack_tags_changed: bool,
) -> Vec<ResourceChange> {
    plan(registry, st, live, prepared, stack_tags_changed)
        .into_iter()
        .map(|(c, _)| c)
        .collect()
}

/// The recorded and the new properties of a modified resource, both canonical.
pub(crate) type Sides = Option<(Value, Value)>;

/// The changes, each Modify with the two canonical property bags it compared (what
/// `cumulo diff` shows property by property). When the stack's tags change, every resource
/// whose type takes tags is a Modify with Scope `Tags`, as AWS lists it (the update hands it the
/// new tags).
pub(crate) fn plan(
    registry: &ProviderRegistry,
    st: &State,
    live: Option<&StackRecord>,
    prepared: &Prepared,
    stack_tags_changed: bool,
) -> Vec<(ResourceChange, Sides)> {
    let mut changes: Vec<(ResourceChange, Sides)> = Vec::new();
    let Some(stack) = live else {
        for logical in &prepared.order {
            if let Some(r) = prepared.template.resources.get(logical) {
                changes.push((add(logical, &r.resource_type), None));
            }
        }
        return changes;
    };
    let mut resolver = PlanResolver {
        stack: Some(stack),
        state: st,
        new_identity: HashSet::new(),
        modified: HashSet::new(),
        region: stack.region.clone(),
    };
    let old_template = super::common::parse(&stack.template_body).ok();
    let changed_parameters: HashSet<String> = super::common::stored_params(prepared)
        .into_iter()
        .filter(|p| {
            stack
                .parameters
                .iter()
                .find(|o| o.key == p.key)
                .is_none_or(|o| o.value != p.value || o.resolved != p.resolved)
        })
        .map(|p| p.key)
        .collect();
    for logical in &prepared.order {
        let Some(r) = prepared.template.resources.get(logical) else {
            continue;
        };
        let Some(old) = stack
            .resources
            .get(logical)
            .filter(|o| o.physical_id.is_some())
        else {
            resolver.new_identity.insert(logical.clone());
            changes.push((add(logical, &r.resource_type), None));
            continue;
        };
        let Ok(resolved) = prepared.resolve_resource(logical, &resolver) else {
            continue;
        };
        if resolved.resource_type != old.resource_type {
            resolver.new_identity.insert(logical.clone());
            let sides = Some(((*old.properties).clone(), resolved.properties.clone()));
            changes.push((
                ResourceChange {
                    action: "Modify".into(),
                    logical_resource_id: logical.clone(),
                    physical_resource_id: old.physical_id.clone(),
                    resource_type: resolved.resource_type.clone(),
                    replacement: Some("True".into()),
                    scope: vec!["Properties".into()],
                    before_context: context(&old.properties),
                    after_context: context(&resolved.properties),
                    ..Default::default()
                },
                sides,
            ));
            continue;
        }
        // Both sides through the provider's canonical twin: the deploy compares the same way.
        let rtype = &resolved.resource_type;
        let old_resource = old_template
            .as_ref()
            .and_then(|t| t.get("Resources")?.get(logical))
            .map(TemplateValue::to_json);
        let policies = policy_details(old_resource.as_ref(), r);
        let retag = stack_tags_changed && crate::tagging(rtype).taggable();
        let same = crate::canonical::same(registry, rtype, &old.properties, &resolved.properties);
        if same && policies.is_empty() && !retag {
            continue;
        }
        let sides = (
            canonical(registry, rtype, &old.properties),
            canonical(registry, rtype, &resolved.properties),
        );
        let causes = Causes {
            old: old_resource.as_ref(),
            new_properties: r.properties.to_json(),
            changed_parameters: &changed_parameters,
        };
        let mut details = if same {
            Vec::new()
        } else {
            property_details(rtype, &sides.0, &sides.1, &causes)
        };
        if details.is_empty() && policies.is_empty() && !retag {
            continue;
        }
        let replacement = if details
            .iter()
            .any(|d| d.target.requires_recreation.as_deref() == Some("Always"))
        {
            "True"
        } else if details
            .iter()
            .any(|d| d.target.requires_recreation.as_deref() == Some("Conditionally"))
        {
            "Conditional"
        } else {
            "False"
        };
        if replacement == "False" {
            resolver.modified.insert(logical.clone());
        } else {
            resolver.new_identity.insert(logical.clone());
        }
        let mut scope: Vec<String> = Vec::new();
        if !details.is_empty() {
            scope.push("Properties".into());
        }
        if retag
            || details
                .iter()
                .any(|d| d.target.name.as_deref() == Some("Tags"))
        {
            scope.push("Tags".into());
        }
        scope.extend(policies.iter().map(|d| d.target.attribute.clone()));
        details.extend(policies);
        if retag {
            details.push(stack_tags_detail());
        }
        changes.push((
            ResourceChange {
                action: "Modify".into(),
                logical_resource_id: logical.clone(),
                physical_resource_id: old.physical_id.clone(),
                resource_type: resolved.resource_type.clone(),
                replacement: Some(replacement.into()),
                before_context: context(&sides.0),
                after_context: context(&sides.1),
                scope,
                details,
                ..Default::default()
            },
            Some(sides),
        ));
    }
    for (logical, old) in &stack.resources {
        if !prepared.live.contains(logical) {
            changes.push((
                ResourceChange {
                    action: "Remove".into(),
                    logical_resource_id: logical.clone(),
                    physical_resource_id: old.physical_id.clone(),
                    resource_type: old.resource_type.clone(),
                    before_context: context(&old.properties),
                    ..Default::default()
                },
                None,
            ));
        }
    }
    changes
}

fn add(logical: &str, resource_type: &str) -> ResourceChange {
    ResourceChange {
        action: "Add".into(),
        logical_resource_id: logical.to_string(),
        resource_type: resource_type.to_string(),
        ..Default::default()
    }
}

/// A resource's properties as a change's BeforeContext / AfterContext.
fn context(properties: &Value) -> Option<String> {
    Some(serde_json::json!({ "Properties": properties }).to_string())
}

/// A property value as BeforeValue / AfterValue show it.
fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A resource's properties as the change set will send them, resolved against the live stack
/// where `changes` leave a value known before execution and a placeholder elsewhere (what a
/// nested change set gets as its nested stack's TemplateURL and Parameters).
pub(crate) fn planned_properties(
    st: &State,
    region: &str,
    live: Option<&StackRecord>,
    prepared: &Prepared,
    changes: &[ResourceChange],
    logical: &str,
) -> Result<Value, Diagnostic> {
    let mut resolver = PlanResolver {
        stack: live,
        state: st,
        new_identity: HashSet::new(),
        modified: HashSet::new(),
        region: region.to_string(),
    };
    for c in changes {
        match (c.action.as_str(), c.replacement.as_deref()) {
            ("Modify", Some("False")) => resolver.modified.insert(c.logical_resource_id.clone()),
            _ => resolver.new_identity.insert(c.logical_resource_id.clone()),
        };
    }
    Ok(prepared.resolve_resource(logical, &resolver)?.properties)
}

/// The resource attributes a change set reports besides Properties, when the template changes
/// them alone: `Modify` with `Replacement: False`, applied by the update without a provider call.
const POLICY_ATTRIBUTES: [&str; 4] = [
    "DeletionPolicy",
    "UpdateReplacePolicy",
    "Metadata",
    "UpdatePolicy",
];

fn policy_details(
    old: Option<&Value>,
    new: &cumulo_template::model::Resource,
) -> Vec<ResourceChangeDetail> {
    let after = [
        &new.deletion_policy,
        &new.update_replace_policy,
        &new.metadata,
        &new.update_policy,
    ];
    POLICY_ATTRIBUTES
        .iter()
        .zip(after)
        .filter_map(|(attribute, after)| {
            let (a, b) = (
                old.and_then(|o| o.get(*attribute)),
                after.as_ref().map(TemplateValue::to_json),
            );
            (a != b.as_ref()).then(|| ResourceChangeDetail {
                target: target(attribute, None, "Never", a, b.as_ref()),
                evaluation: "Static".into(),
                change_source: "DirectModification".into(),
                causing_entity: None,
            })
        })
        .collect()
}

/// The detail of a resource whose stack's tags changed: the `Tags` attribute, never a
/// replacement, from the stack's own (static) input.
fn stack_tags_detail() -> ResourceChangeDetail {
    ResourceChangeDetail {
        target: ResourceTargetDefinition {
            attribute: "Tags".into(),
            requires_recreation: Some("Never".into()),
            ..Default::default()
        },
        evaluation: "Static".into(),
        change_source: "DirectModification".into(),
        causing_entity: None,
    }
}

/// A detail's target, with the values IncludePropertyValues shows.
fn target(
    attribute: &str,
    name: Option<&str>,
    requires: &str,
    before: Option<&Value>,
    after: Option<&Value>,
) -> ResourceTargetDefinition {
    let change_type = match (before, after) {
        (None, _) => "Add",
        (_, None) => "Remove",
        _ => "Modify",
    };
    ResourceTargetDefinition {
        attribute: attribute.into(),
        name: name.map(str::to_string),
        requires_recreation: Some(requires.into()),
        path: Some(match name {
            Some(n) => format!("/{attribute}/{n}"),
            None => format!("/{attribute}"),
        }),
        before_value: before.map(value_text),
        after_value: after.map(value_text),
        attribute_change_type: Some(change_type.into()),
    }
}

/// Every cause of each top-level property that differs, as AWS lists them: a property whose
/// template text changed is a Static DirectModification; one whose value comes from a changed
/// parameter a Static ParameterReference beside a Dynamic DirectModification; one that refers
/// to a resource the change set adds, replaces or modifies a Dynamic ResourceReference (`Ref`)
/// or ResourceAttribute (`Fn::GetAtt`).
fn property_details(
    resource_type: &str,
    old: &Value,
    new: &Value,
    causes: &Causes,
) -> Vec<ResourceChangeDetail> {
    let empty = serde_json::Map::new();
    let old = old.as_object().unwrap_or(&empty);
    let new = new.as_object().unwrap_or(&empty);
    let mut names: Vec<&String> = new.keys().collect();
    names.extend(old.keys().filter(|k| !new.contains_key(*k)));
    let mut out = Vec::new();
    for name in names {
        let (a, b) = (old.get(name), new.get(name));
        if a == b {
            continue;
        }
        let raw_new = causes.new_properties.get(name.as_str());
        let direct = causes.old.is_none() || causes.old_property(name) != raw_new;
        let mut parameters = Vec::new();
        if let Some(raw) = raw_new {
            parameter_refs(raw, causes.changed_parameters, &mut parameters);
        }
        let reference = b.and_then(placeholder_cause);
        let requires = match (schema::is_create_only(resource_type, name), &reference) {
            (false, _) => "Never",
            (true, None) => "Always",
            (true, Some(_)) => "Conditionally",
        };
        let detail =
            |evaluation: &str, source: &str, entity: Option<String>| ResourceChangeDetail {
                target: target("Properties", Some(name), requires, a, b),
                evaluation: evaluation.into(),
                change_source: source.into(),
                causing_entity: entity,
            };
        if direct || (parameters.is_empty() && reference.is_none()) {
            out.push(detail("Static", "DirectModification", None));
        }
        for p in &parameters {
            out.push(detail("Static", "ParameterReference", Some(p.clone())));
        }
        if !direct && !parameters.is_empty() {
            out.push(detail("Dynamic", "DirectModification", None));
        }
        if let Some((source, entity)) = reference {
            out.push(detail("Dynamic", source, Some(entity)));
        }
    }
    out
}
