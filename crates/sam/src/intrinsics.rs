//! The translator's partial evaluation of intrinsics: parameter references resolved where it
//! needs a value (version hashes, alias names), and, at the end, references to generated
//! resources (`!Ref Fn.Alias`, `!GetAtt Api.Stage`) and to renamed logical ids rewritten.

use crate::Context;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// The values `Ref` resolves to: the operation's, the template's defaults, and the region and
/// partition (the translator adds no other pseudo parameter).
pub fn parameter_values(root: &Map<String, Value>, ctx: &Context) -> Map<String, Value> {
    let mut values = ctx.parameters.clone();
    if let Some(Value::Object(decls)) = root.get("Parameters") {
        for (name, d) in decls {
            if let Some(default) = d.get("Default")
                && !values.contains_key(name)
            {
                values.insert(name.clone(), default.clone());
            }
        }
    }
    values
        .entry("AWS::Region")
        .or_insert_with(|| json!(ctx.region));
    values
        .entry("AWS::Partition")
        .or_insert_with(|| json!(ctx.partition));
    values
}

fn single<'v>(v: &'v Value, name: &str) -> Option<&'v Value> {
    let o = v.as_object()?;
    (o.len() == 1).then(|| o.get(name)).flatten()
}

/// `resolve_parameter_refs`: `{"Ref": P}` → P's value, `${P}` in an `Fn::Sub` string → its
/// (string) value; pre-order, so a resolved value is walked too.
pub fn resolve_params(v: &Value, params: &Map<String, Value>) -> Value {
    if params.is_empty() {
        return v.clone();
    }
    let mut v = v.clone();
    if let Some(Value::String(name)) = single(&v, "Ref") {
        if let Some(value) = params.get(name.as_str())
            && !value
                .as_str()
                .is_some_and(|s| s.starts_with("{{IntrinsicFunction:"))
        {
            v = value.clone();
        }
    } else if single(&v, "Fn::Sub").is_some() {
        sub_strings(&mut v, &mut |name: &str, full: &str| match params
            .get(name)
            .and_then(Value::as_str)
        {
            Some(s) if !s.starts_with("{{IntrinsicFunction:") => s.to_string(),
            _ => full.to_string(),
        });
    }
    match v {
        Value::Object(o) => Value::Object(
            o.into_iter()
                .map(|(k, c)| {
                    let c = resolve_params(&c, params);
                    (k, c)
                })
                .collect(),
        ),
        Value::Array(items) => {
            Value::Array(items.iter().map(|c| resolve_params(c, params)).collect())
        }
        other => other,
    }
}

/// Rewrites each `${name}` of an `Fn::Sub`'s string through `f(name, "${name}")`, names as
/// the translator matches them (`[A-Za-z0-9.]+` or `AWS::X`).
fn sub_strings(v: &mut Value, f: &mut dyn FnMut(&str, &str) -> String) {
    let Some(sub) = v.as_object_mut().and_then(|o| o.get_mut("Fn::Sub")) else {
        return;
    };
    let text = match sub {
        Value::String(s) => s,
        Value::Array(items) => match items.first_mut() {
            Some(Value::String(s)) => s,
            _ => return,
        },
        _ => return,
    };
    *text = replace_refs(text, f);
}

fn is_ref_name(name: &str) -> bool {
    let plain = !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '.');
    let pseudo = name.strip_prefix("AWS::").is_some_and(|rest| {
        let mut cs = rest.chars();
        cs.next().is_some_and(|c| c.is_ascii_uppercase()) && cs.all(|c| c.is_ascii_alphabetic())
    });
    plain || pseudo
}

fn replace_refs(text: &str, f: &mut dyn FnMut(&str, &str) -> String) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        match after.find('}') {
            Some(end) if is_ref_name(&after[..end]) => {
                let name = &after[..end];
                out.push_str(&f(name, &format!("${{{name}}}")));
                rest = &after[end + 1..];
            }
            _ => {
                out.push_str("${");
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// `Fn.Alias`-style references: the SAM resource's logical id and property → the generated
/// resource's logical id.
#[derive(Default)]
pub struct Refs {
    map: HashMap<(String, String), String>,
}

impl Refs {
    pub fn add(&mut self, id: &str, property: &str, target: &str) {
        self.map
            .insert((id.to_string(), property.to_string()), target.to_string());
    }

    fn get(&self, id: &str, property: &str) -> Option<&String> {
        self.map.get(&(id.to_string(), property.to_string()))
    }
}

fn walk(v: &mut Value, f: &mut dyn FnMut(&mut Value)) {
    f(v);
    match v {
        Value::Object(o) => o.values_mut().for_each(|c| walk(c, f)),
        Value::Array(items) => items.iter_mut().for_each(|c| walk(c, f)),
        _ => {}
    }
}

fn getatt_parts(v: &Value) -> Option<Vec<String>> {
    let items = single(v, "Fn::GetAtt")?.as_array()?;
    if items.len() < 2 {
        return None;
    }
    let parts: Option<Vec<&str>> = items.iter().map(Value::as_str).collect();
    Some(parts?.join(".").split('.').map(str::to_string).collect())
}

/// `!Ref Fn.Alias` → `!Ref FnAliaslive`; `!GetAtt Fn.Alias.Arn`; `${Fn.Alias}` in a Sub.
pub fn resolve_resource_refs(root: &mut Value, refs: &Refs) {
    if refs.map.is_empty() {
        return;
    }
    walk(root, &mut |v| {
        if let Some(Value::String(r)) = single(v, "Ref") {
            if let Some((id, prop)) = r.split_once('.')
                && let Some(t) = refs.get(id, prop)
            {
                *v = json!({"Ref": t});
            }
        } else if let Some(parts) = getatt_parts(v) {
            if let Some(t) = refs.get(&parts[0], &parts[1]) {
                let mut out = vec![json!(t)];
                out.extend(parts[2..].iter().map(|p| json!(p)));
                *v = json!({"Fn::GetAtt": out});
            }
        } else if single(v, "Fn::Sub").is_some() {
            sub_strings(v, &mut |name, full| {
                let splits: Vec<&str> = name.split('.').collect();
                if splits.len() < 2 {
                    return full.to_string();
                }
                match refs.get(splits[0], splits[1]) {
                    Some(t) => full.replacen(&format!("{}.{}", splits[0], splits[1]), t, 1),
                    None => full.to_string(),
                }
            });
        }
    });
}

/// References to logical ids the translation changed.
pub fn resolve_id_refs(root: &mut Value, renamed: &Map<String, Value>) {
    if renamed.is_empty() {
        return;
    }
    let new = |id: &str| renamed.get(id).and_then(Value::as_str).map(str::to_string);
    walk(root, &mut |v| {
        if let Some(Value::String(r)) = single(v, "Ref") {
            if !r.contains('.')
                && let Some(t) = new(r)
            {
                *v = json!({"Ref": t});
            }
        } else if let Some(parts) = getatt_parts(v) {
            if let Some(t) = new(&parts[0]) {
                let mut out = vec![json!(t)];
                out.extend(parts[1..].iter().map(|p| json!(p)));
                *v = json!({"Fn::GetAtt": out});
            }
        } else if single(v, "Fn::Sub").is_some() {
            sub_strings(v, &mut |name, full| {
                let id = name.split('.').next().unwrap_or(name);
                match new(id) {
                    Some(t) => full.replace(id, &t),
                    None => full.to_string(),
                }
            });
        }
    });
}

/// DependsOn naming a renamed logical id.
pub fn resolve_depends_on(root: &mut Value, renamed: &Map<String, Value>) {
    if renamed.is_empty() {
        return;
    }
    walk(root, &mut |v| {
        let Some(d) = v.as_object_mut().and_then(|o| o.get_mut("DependsOn")) else {
            return;
        };
        match d {
            Value::String(s) => {
                if let Some(t) = renamed.get(s.as_str()) {
                    *d = t.clone();
                }
            }
            Value::Array(items) => {
                for item in items.iter_mut() {
                    if let Some(t) = item.as_str().and_then(|s| renamed.get(s)) {
                        *item = t.clone();
                    }
                }
            }
            _ => {}
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_resolve_in_refs_and_subs() {
        let mut p = Map::new();
        p.insert("Stage".into(), json!("prod"));
        let v = json!({"a": {"Ref": "Stage"}, "b": {"Fn::Sub": "x-${Stage}-${Other}-${AWS::Region}"}, "c": {"Ref": "Other"}});
        assert_eq!(
            resolve_params(&v, &p),
            json!({"a": "prod", "b": {"Fn::Sub": "x-prod-${Other}-${AWS::Region}"}, "c": {"Ref": "Other"}})
        );
    }

    #[test]
    fn resource_refs_rewrite() {
        let mut refs = Refs::default();
        refs.add("Fn", "Alias", "FnAliaslive");
        let mut v = json!([{"Ref": "Fn.Alias"}, {"Fn::GetAtt": ["Fn", "Alias.Arn"]}, {"Fn::Sub": "${Fn.Alias}/${Fn.Alias.Arn}"}]);
        resolve_resource_refs(&mut v, &refs);
        assert_eq!(
            v,
            json!([{"Ref": "FnAliaslive"}, {"Fn::GetAtt": ["FnAliaslive", "Arn"]}, {"Fn::Sub": "${FnAliaslive}/${FnAliaslive.Arn}"}])
        );
    }
}
