//! `AWS::LanguageExtensions`: expansion of `Fn::ForEach::<Name>` keys, before the model is built.
//! (Fn::Length, Fn::ToJsonString and FindInMap's DefaultValue are evaluated with the other
//! intrinsics, enabled by the evaluator's `lang_ext` flag.)

use crate::Diagnostic;
use crate::errors;
use crate::intrinsics::{Evaluator, scalar_string};
use crate::value::{Map, Value};

pub(crate) const FOR_EACH: &str = "Fn::ForEach::";

/// The sections in which AWS expands Fn::ForEach (and, inside Resources, nested properties).
const SECTIONS: &[&str] = &["Conditions", "Resources", "Outputs"];

/// Expands every Fn::ForEach in the template. `ev` supplies parameters and mappings for the
/// collections (resources cannot be referenced there).
pub fn expand_for_each(root: &mut Value, ev: &Evaluator<'_>) -> Result<(), Diagnostic> {
    let Some(top) = root.as_object_mut() else {
        return Ok(());
    };
    for section in SECTIONS {
        if let Some(Value::Object(obj)) = top.get_mut(section) {
            let expanded = expand_object(obj, ev, section)?;
            *obj = expanded;
        }
    }
    Ok(())
}

fn expand_object(obj: &Map, ev: &Evaluator<'_>, path: &str) -> Result<Map, Diagnostic> {
    let mut out = Map::with_capacity(obj.len());
    for (key, value) in obj {
        if key.starts_with(FOR_EACH) {
            let path = format!("{path}/{key}");
            for (k, v) in expand_one(value, ev, &path)? {
                if out.contains_key(&k) {
                    return Err(errors::format_error(format!(
                        "Fn::ForEach {key} produces the key {k}, which is already defined"
                    ))
                    .with_path(path));
                }
                out.insert(k, v);
            }
        } else {
            let v = expand_value(value, ev, &format!("{path}/{key}"))?;
            out.insert(key.clone(), v);
        }
    }
    Ok(out)
}

fn expand_value(v: &Value, ev: &Evaluator<'_>, path: &str) -> Result<Value, Diagnostic> {
    match v {
        Value::Object(obj) => Ok(Value::Object(expand_object(obj, ev, path)?)),
        Value::Array(items) => Ok(Value::Array(
            items
                .iter()
                .map(|i| expand_value(i, ev, path))
                .collect::<Result<_, _>>()?,
        )),
        other => Ok(other.clone()),
    }
}

/// One `Fn::ForEach::Name: [Identifier, Collection, {OutputKey: OutputValue}]`.
fn expand_one(spec: &Value, ev: &Evaluator<'_>, path: &str) -> Result<Map, Diagnostic> {
    let malformed = || errors::malformed("Fn::ForEach").with_path(path.to_string());
    let Some([Value::String(id), collection, Value::Object(body)]) =
        spec.as_array().map(Vec::as_slice)
    else {
        return Err(malformed());
    };
    if id.is_empty() {
        return Err(malformed());
    }
    let items = match ev
        .eval(collection)
        .map_err(|e| e.with_path(path.to_string()))?
    {
        Some(Value::Array(items)) => items
            .iter()
            .map(|i| scalar_string(i).ok_or_else(malformed))
            .collect::<Result<Vec<_>, _>>()?,
        _ => return Err(malformed()),
    };
    let mut out = Map::new();
    for item in &items {
        let mut produced = Map::with_capacity(body.len());
        for (k, v) in body {
            produced.insert(substitute(k, id, item), substitute_value(v, id, item));
        }
        // Nested loops in the body expand after this loop's identifier is substituted.
        for (k, v) in expand_object(&produced, ev, path)? {
            out.insert(k, v);
        }
    }
    Ok(out)
}

/// `${Id}` → the item; `&{Id}` → the item with non-alphanumeric characters removed.
fn substitute(s: &str, id: &str, item: &str) -> String {
    if !s.contains('{') {
        return s.to_string();
    }
    let alnum: String = item.chars().filter(char::is_ascii_alphanumeric).collect();
    s.replace(&format!("${{{id}}}"), item)
        .replace(&format!("&{{{id}}}"), &alnum)
}

fn substitute_value(v: &Value, id: &str, item: &str) -> Value {
    match v {
        Value::String(s) => Value::String(substitute(s, id, item).into()),
        Value::Array(items) => Value::Array(
            items
                .iter()
                .map(|i| substitute_value(i, id, item))
                .collect(),
        ),
        Value::Object(obj) => {
            if obj.len() == 1
                && let Some(Value::String(target)) = obj.get("Ref")
                && target == id
            {
                return Value::from(item);
            }
            Value::Object(
                obj.iter()
                    .map(|(k, v)| (substitute(k, id, item), substitute_value(v, id, item)))
                    .collect(),
            )
        }
        other => other.clone(),
    }
}
