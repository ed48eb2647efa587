//! Conditional functions on implicit APIs, as the translator's implicit API plugins condition
//! them (REST and HTTP alike): the routes each API got from events, with the Condition of the
//! resource whose event added each; the implicit API exists only under its routes' conditions,
//! and a path only under its methods', when every one has one.

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// api → path → method → the condition of the resource whose event added it.
#[derive(Default)]
pub(crate) struct RouteConditions {
    apis: BTreeMap<String, BTreeMap<String, BTreeMap<String, Option<String>>>>,
    /// The template Conditions the combinations need, in the order they were made.
    pub made: Vec<(String, Value)>,
}

/// A path's condition: one of its functions' own, or one combining several.
pub(crate) enum PathCondition {
    Own(String),
    Combined(String),
}

impl RouteConditions {
    pub fn add(&mut self, api: &str, path: &str, method: &str, condition: Option<String>) {
        self.apis
            .entry(api.to_string())
            .or_default()
            .entry(path.to_string())
            .or_default()
            .insert(method.to_string(), condition);
    }

    /// `_maybe_add_condition_to_implicit_api`: the implicit API's Condition when every route
    /// on it has one (combined under `combined` when they differ).
    pub fn condition_implicit(
        &mut self,
        implicit: &str,
        api: &mut Map<String, Value>,
        combined: &str,
    ) {
        let routes = self
            .apis
            .get(implicit)
            .into_iter()
            .flat_map(|paths| paths.values().flat_map(|m| m.values().cloned()))
            .collect();
        let Some(distinct) = all_conditional(routes) else {
            return;
        };
        if let [only] = distinct.as_slice() {
            api.insert("Condition".into(), json!(only));
        } else {
            api.insert("Condition".into(), json!(combined));
            self.made.extend(combined_condition(distinct, combined));
        }
    }

    /// `_maybe_add_conditions_to_implicit_api_paths`: the condition a path of `api`'s managed
    /// body exists under, when every method on it has one (`<api><path>PathCondition` when
    /// they differ).
    pub fn path(&mut self, api: &str, path: &str) -> Option<PathCondition> {
        let methods = self
            .apis
            .get(api)
            .and_then(|p| p.get(path))
            .map(|m| m.values().cloned().collect())
            .unwrap_or_default();
        let distinct = all_conditional(methods)?;
        if let [only] = distinct.as_slice() {
            return Some(PathCondition::Own(only.clone()));
        }
        let logical = path
            .replace('/', "SLASH")
            .replace('{', "OB")
            .replace('}', "CB");
        let name = format!("{api}{logical}PathCondition");
        self.made.extend(combined_condition(distinct, &name));
        Some(PathCondition::Combined(name))
    }

    /// Adds the combined conditions to the template's Conditions section.
    pub fn write(self, root: &mut Map<String, Value>) {
        if self.made.is_empty() {
            return;
        }
        if let Some(section) = root
            .entry("Conditions")
            .or_insert_with(|| json!({}))
            .as_object_mut()
        {
            section.extend(self.made);
        }
    }
}

/// The distinct conditions (sorted, as the translator sorts them) of routes that all have
/// one; `None` when there are no routes or one has none.
fn all_conditional(conditions: Vec<Option<String>>) -> Option<Vec<String>> {
    let mut distinct = conditions.into_iter().collect::<Option<Vec<String>>>()?;
    distinct.sort();
    distinct.dedup();
    (!distinct.is_empty()).then_some(distinct)
}

/// `make_combined_condition`: the conditions joined with `Fn::Or`, ten at most per condition
/// (more make numbered conditions that are joined in turn).
fn combined_condition(mut list: Vec<String>, name: &str) -> Vec<(String, Value)> {
    const MAX: usize = 10;
    let mut out = Vec::new();
    let mut remaining = 1 + (list.len().saturating_sub(2)) / (MAX - 1);
    remaining = remaining.saturating_sub(1);
    while list.len() > 1 {
        let new_name = if remaining > 0 {
            let n = format!("{name}{remaining}");
            remaining -= 1;
            n
        } else {
            name.to_string()
        };
        let take = list.len().min(MAX);
        let group: Vec<Value> = list
            .drain(..take)
            .map(|c| json!({"Condition": c}))
            .collect();
        list.push(new_name.clone());
        out.push((new_name, json!({"Fn::Or": group})));
    }
    out
}
