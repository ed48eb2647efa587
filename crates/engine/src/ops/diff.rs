//! `cumulo diff`: what a deploy of a template would do to a stack, per resource (create,
//! update, replace, delete) and per property, from the same planner change sets use (so the
//! replacement decision comes from the createOnly table and both sides go through the
//! providers' canonical twin, exactly as the deploy compares them). Nothing is written.

use super::common::*;
use crate::api::{Caller, Parameter};
use crate::engine::Engine;
use crate::error::EngineError;
use crate::status::StackStatus;
use serde::Serialize;
use serde_json::Value;

/// One property that differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PropertyChange {
    pub name: String,
    /// `None`: the property is added.
    pub old: Option<Value>,
    /// `None`: the property is removed.
    pub new: Option<Value>,
    /// `Never` | `Conditionally` | `Always` (CloudFormation's RequiresRecreation).
    pub requires_recreation: String,
}

/// One resource the deploy would touch.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ResourceDiff {
    /// `create` | `update` | `replace` | `delete` (`replace` also when it is conditional on a
    /// value known only during the deploy).
    pub action: String,
    pub logical_id: String,
    pub resource_type: String,
    pub physical_id: Option<String>,
    pub properties: Vec<PropertyChange>,
}

/// Input of [`Engine::diff`].
#[derive(Debug, Clone, Default)]
pub struct DiffInput {
    pub stack_name: String,
    /// The template text (any size: it never crosses the API).
    pub template: String,
    pub parameters: Vec<Parameter>,
}

pub fn diff(
    engine: &Engine,
    caller: &Caller,
    input: DiffInput,
) -> Result<Vec<ResourceDiff>, EngineError> {
    let root = parse(&input.template)?;
    let st = engine.inner.lock();
    let live = find(&st, caller, &input.stack_name).filter(|s| {
        !matches!(
            s.status,
            StackStatus::DELETE_COMPLETE | StackStatus::ROLLBACK_COMPLETE
        )
    });
    let given = given_params(&input.parameters, live.map(|s| s.parameters.as_slice()))?;
    let stack_id = live
        .map(|s| s.stack_id.clone())
        .unwrap_or_else(|| new_stack_id(&caller.region, &caller.account_id, &input.stack_name));
    let prepared = prepare_for(
        engine,
        &caller.region,
        &caller.account_id,
        &stack_id,
        &input.stack_name,
        &root,
        &given,
    )?;
    let planned = super::changes::plan(&engine.inner.registry, &st, live, &prepared, false);
    Ok(planned
        .into_iter()
        .map(|(change, sides)| {
            let action = match (change.action.as_str(), change.replacement.as_deref()) {
                ("Add", _) => "create",
                ("Remove", _) => "delete",
                (_, Some("True" | "Conditional")) => "replace",
                _ => "update",
            };
            // A property has one detail per cause (a parameter, a reference, the template):
            // the diff lists it once.
            let mut seen = std::collections::HashSet::new();
            let properties = match &sides {
                Some((old, new)) => change
                    .details
                    .iter()
                    .filter(|d| d.target.attribute == "Properties")
                    .filter_map(|d| {
                        let name = d.target.name.clone()?;
                        if !seen.insert(name.clone()) {
                            return None;
                        }
                        Some(PropertyChange {
                            old: old.get(&name).cloned(),
                            new: new.get(&name).cloned(),
                            requires_recreation: d
                                .target
                                .requires_recreation
                                .clone()
                                .unwrap_or_else(|| "Never".into()),
                            name,
                        })
                    })
                    .collect(),
                None => Vec::new(),
            };
            ResourceDiff {
                action: action.into(),
                logical_id: change.logical_resource_id,
                resource_type: change.resource_type,
                physical_id: change.physical_resource_id,
                properties,
            }
        })
        .collect())
}
