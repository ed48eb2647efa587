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

/// The logical id a placeholder refers to (`{{cumulo:Ref:X}}`, `{{cumulo:GetAtt:X.Attr}}`).
fn placeholder_target(v: &Value) -> Option<String> {
    let s = match v {
        Value::String(s) => s.as_str(),
        Value::Array(items) => return items.iter().find_map(placeholder_target),
        Value::Object(o) => return o.values().find_map(placeholder_target),
        _ => return None,
    };
    let at = s.find(PLACEHOLDER_PREFIX)?;
    let rest = &s[at + PLACEHOLDER_PREFIX.len()..];
    let rest = rest
        .strip_prefix("Ref:")
        .or_else(|| rest.strip_prefix("GetAtt:"))?;
    let end = rest.find(['.', '}']).unwrap_or(rest.len());
    Some(rest[..end].to_string())
}

pub(crate) fn compute_changes(
    registry: &ProviderRegistry,
    st: &State,
    live: Option<&StackRecord>,
    prepared: &Prepared,
) -> Vec<ResourceChange> {
    plan(registry, st, live, prepared)
        .into_iter()
        .map(|(c, _)| c)
        .collect()
}

/// The recorded and the new properties of a modified resource, both canonical.
pub(crate) type Sides = Option<(Value, Value)>;

/// The changes, each Modify with the two canonical property bags it compared (what
/// `cumulo diff` shows property by property).
pub(crate) fn plan(
    registry: &ProviderRegistry,
    st: &State,
    live: Option<&StackRecord>,
    prepared: &Prepared,
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
        if crate::canonical::same(registry, rtype, &old.properties, &resolved.properties) {
            continue;
        }
        let sides = (
            canonical(registry, rtype, &old.properties),
            canonical(registry, rtype, &resolved.properties),
        );
        let details = property_details(rtype, &sides.0, &sides.1);
        if details.is_empty() {
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
        let mut scope = vec!["Properties".to_string()];
        if details
            .iter()
            .any(|d| d.target.name.as_deref() == Some("Tags"))
        {
            scope.push("Tags".into());
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

/// One detail per top-level property that differs.
fn property_details(resource_type: &str, old: &Value, new: &Value) -> Vec<ResourceChangeDetail> {
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
        let target = b.and_then(placeholder_target);
        let create_only = schema::is_create_only(resource_type, name);
        let requires = match (create_only, target.is_some()) {
            (false, _) => "Never",
            (true, false) => "Always",
            (true, true) => "Conditionally",
        };
        let change_type = match (a, b) {
            (None, _) => "Add",
            (_, None) => "Remove",
            _ => "Modify",
        };
        out.push(ResourceChangeDetail {
            target: ResourceTargetDefinition {
                attribute: "Properties".into(),
                name: Some(name.clone()),
                requires_recreation: Some(requires.into()),
                path: Some(format!("/Properties/{name}")),
                before_value: a.map(value_text),
                after_value: b.map(value_text),
                attribute_change_type: Some(change_type.into()),
            },
            evaluation: if target.is_some() {
                "Dynamic"
            } else {
                "Static"
            }
            .into(),
            change_source: if target.is_some() {
                "ResourceReference"
            } else {
                "DirectModification"
            }
            .into(),
            causing_entity: target,
        });
    }
    out
}
