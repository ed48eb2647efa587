//! Evaluation against live state: the template crate's [`Resolver`] over a stack's resources and
//! the region's exports, property hashing, and dynamic-reference substitution.

use crate::state::{StackRecord, State};
use crate::status::StackStatus;
use crate::world::World;
use cumulo_template::dynref::references_in;
use cumulo_template::{Diagnostic, Resolver, Value as TemplateValue, find_dynamic_references};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::cell::RefCell;
use std::collections::HashMap;

/// Refs and GetAtts read the stack's recorded physical ids and attributes; ImportValue reads
/// the exports of the region's live stacks and remembers which names were imported.
pub(crate) struct LiveResolver<'a> {
    pub state: &'a State,
    pub stack: &'a StackRecord,
    pub imported: RefCell<Vec<String>>,
}

impl<'a> LiveResolver<'a> {
    pub fn new(state: &'a State, stack: &'a StackRecord) -> Self {
        LiveResolver {
            state,
            stack,
            imported: RefCell::new(Vec::new()),
        }
    }
}

impl Resolver for LiveResolver<'_> {
    fn resource_ref(&self, logical_id: &str) -> Result<TemplateValue, Diagnostic> {
        self.stack
            .resources
            .get(logical_id)
            .and_then(|r| r.physical_id.clone())
            .map(TemplateValue::from)
            .ok_or_else(|| {
                Diagnostic::new(format!(
                    "Template error: resource {logical_id} has no physical id yet"
                ))
            })
    }

    fn get_att(&self, logical_id: &str, attribute: &str) -> Result<TemplateValue, Diagnostic> {
        let r = self.stack.resources.get(logical_id).ok_or_else(|| {
            Diagnostic::new(format!(
                "Template error: instance of Fn::GetAtt references undefined resource {logical_id}"
            ))
        })?;
        r.attributes.get(attribute).map(TemplateValue::from).ok_or_else(|| {
            Diagnostic::new(format!(
                "Template error: resource {logical_id} does not support attribute type {attribute} in Fn::GetAtt"
            ))
        })
    }

    fn import_value(&self, export_name: &str) -> Result<TemplateValue, Diagnostic> {
        let found = find_export(self.state, &self.stack.region, export_name);
        match found {
            Some((_, value)) => {
                self.imported.borrow_mut().push(export_name.to_string());
                Ok(TemplateValue::from(value))
            }
            None => Err(Diagnostic::new(format!(
                "No export named {export_name} found."
            ))),
        }
    }
}

/// The live stack exporting `name` in `region`, and the value.
pub(crate) fn find_export(state: &State, region: &str, name: &str) -> Option<(String, String)> {
    state
        .stacks
        .values()
        .filter(|s| s.region == region && s.status != StackStatus::DELETE_COMPLETE)
        .find_map(|s| {
            s.outputs
                .iter()
                .find(|o| o.export_name.as_deref() == Some(name))
                .map(|o| (s.stack_id.clone(), o.value.clone()))
        })
}

/// Names of the live stacks (other than `except`) importing `name` in `region`.
pub(crate) fn importers(state: &State, region: &str, name: &str, except: &str) -> Vec<String> {
    let mut out: Vec<String> = state
        .stacks
        .values()
        .filter(|s| {
            s.region == region
                && s.status != StackStatus::DELETE_COMPLETE
                && s.stack_id != except
                && s.imports.iter().any(|i| i == name)
        })
        .map(|s| s.stack_name.clone())
        .collect();
    out.sort();
    out
}

/// `a`, `a and b`, `a, b and c`: how AWS lists the stacks importing an export.
pub(crate) fn and_list(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

/// Hash of resolved properties: canonical JSON (object keys sorted) through SHA-256.
pub(crate) fn hash_properties(v: &Value) -> String {
    fn canonical(v: &Value, out: &mut String) {
        match v {
            Value::Object(o) => {
                let mut keys: Vec<&String> = o.keys().collect();
                keys.sort();
                out.push('{');
                for k in keys {
                    out.push_str(&Value::String(k.clone()).to_string());
                    out.push(':');
                    if let Some(item) = o.get(k) {
                        canonical(item, out);
                    }
                    out.push(',');
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for item in items {
                    canonical(item, out);
                    out.push(',');
                }
                out.push(']');
            }
            other => out.push_str(&other.to_string()),
        }
    }
    let mut s = String::new();
    canonical(v, &mut s);
    hex::encode(Sha256::digest(s.as_bytes()))
}

/// A value as an output or parameter string: lists join with commas, as AWS shows them.
pub(crate) fn value_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Array(items) => items.iter().map(value_text).collect::<Vec<_>>().join(","),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Substitutes every dynamic reference in `literal` with its value from the world, once: the
/// substituted text is never rescanned. The error names the reference.
pub(crate) async fn resolve_dynamic(
    world: &dyn World,
    region: &str,
    literal: &Value,
) -> Result<Value, String> {
    let found = find_dynamic_references(literal).map_err(|errors| {
        errors
            .into_iter()
            .map(|d| d.message)
            .collect::<Vec<_>>()
            .join("; ")
    })?;
    if found.is_empty() {
        return Ok(literal.clone());
    }
    let mut values: HashMap<String, String> = HashMap::new();
    for f in &found {
        if values.contains_key(&f.text) {
            continue;
        }
        let v = world.resolve_dynamic(region, &f.reference).await?;
        values.insert(f.text.clone(), v);
    }
    Ok(substitute(literal, &values))
}

fn substitute(v: &Value, values: &HashMap<String, String>) -> Value {
    match v {
        Value::String(s) => {
            let refs = references_in(s);
            if refs.is_empty() {
                return v.clone();
            }
            let mut out = String::with_capacity(s.len());
            let mut rest = s.as_str();
            for text in refs {
                let Some(at) = rest.find(text) else {
                    continue;
                };
                out.push_str(&rest[..at]);
                match values.get(text) {
                    Some(value) => out.push_str(value),
                    None => out.push_str(text),
                }
                rest = &rest[at + text.len()..];
            }
            out.push_str(rest);
            Value::String(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|i| substitute(i, values)).collect()),
        Value::Object(o) => Value::Object(
            o.iter()
                .map(|(k, i)| (k.clone(), substitute(i, values)))
                .collect(),
        ),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hash_ignores_key_order_but_not_values() {
        let a = json!({"A": 1, "B": {"X": [1, 2], "Y": "s"}});
        let b = json!({"B": {"Y": "s", "X": [1, 2]}, "A": 1});
        assert_eq!(hash_properties(&a), hash_properties(&b));
        assert_ne!(
            hash_properties(&a),
            hash_properties(&json!({"A": 1, "B": {"X": [2, 1], "Y": "s"}}))
        );
        assert_ne!(
            hash_properties(&json!({"A": "1"})),
            hash_properties(&json!({"A": 1}))
        );
    }

    #[test]
    fn substitution_happens_once_and_keeps_the_surrounding_text() {
        let mut values = HashMap::new();
        values.insert(
            "{{resolve:ssm:a}}".to_string(),
            "x{{resolve:ssm:b}}".to_string(),
        );
        values.insert("{{resolve:ssm:b}}".to_string(), "NEVER".to_string());
        let v = json!({"P": ["pre-{{resolve:ssm:a}}-mid-{{resolve:ssm:a}}-post"], "N": 3});
        assert_eq!(
            substitute(&v, &values),
            json!({"P": ["pre-x{{resolve:ssm:b}}-mid-x{{resolve:ssm:b}}-post"], "N": 3})
        );
    }

    #[test]
    fn importer_lists_read_as_aws_writes_them() {
        let names = |n: &[&str]| n.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(and_list(&names(&["a"])), "a");
        assert_eq!(and_list(&names(&["a", "b"])), "a and b");
        assert_eq!(and_list(&names(&["a", "b", "c"])), "a, b and c");
    }

    #[test]
    fn output_values_join_lists_with_commas() {
        assert_eq!(value_text(&json!(["a", "b"])), "a,b");
        assert_eq!(value_text(&json!(5)), "5");
    }
}
