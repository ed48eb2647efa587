//! What the providers' `read` and `canonicalize` share: the template shapes services report
//! back in, and the canonical forms both sides of a comparison are put in (seed 002's twin).
//!
//! The canonical forms only remove differences of SPELLING that reach the service as the same
//! thing: a scalar written `30` or `"30"` (templates write both; SQS and SNS attributes are
//! strings on the wire and are reported as strings), JSON-document properties given as objects
//! or as their text, and tag lists in any order. A difference of VALUE always survives.

use serde_json::{Map, Value};

/// A scalar as the string the service stores (`30`, `true`); other values unchanged.
pub(crate) fn scalar_text(v: &Value) -> Value {
    match v {
        Value::Number(n) => Value::String(n.to_string()),
        Value::Bool(b) => Value::String(b.to_string()),
        Value::String(s) if s.eq_ignore_ascii_case("true") || s.eq_ignore_ascii_case("false") => {
            Value::String(s.to_ascii_lowercase())
        }
        other => other.clone(),
    }
}

/// Every scalar leaf of a document as its text (a JSON policy's `"maxReceiveCount": 5` and
/// `"5"` are one policy to SQS).
pub(crate) fn deep_text(v: &Value) -> Value {
    match v {
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), deep_text(v))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(deep_text).collect()),
        other => scalar_text(other),
    }
}

/// A document property given as an object or as its JSON text, as the object.
pub(crate) fn document(v: &Value) -> Value {
    match v {
        Value::String(s) => serde_json::from_str::<Value>(s)
            .ok()
            .filter(Value::is_object)
            .unwrap_or_else(|| v.clone()),
        other => other.clone(),
    }
}

/// Tags sorted by key, values as text.
pub(crate) fn sorted_tags(v: &Value) -> Value {
    let Value::Array(items) = v else {
        return v.clone();
    };
    let mut items: Vec<Value> = items
        .iter()
        .map(|t| match t {
            Value::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, v)| (k.clone(), scalar_text(v)))
                    .collect::<Map<_, _>>(),
            ),
            other => other.clone(),
        })
        .collect();
    items.sort_by(|a, b| {
        let key = |t: &Value| {
            t.get("Key")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        key(a).cmp(&key(b))
    });
    Value::Array(items)
}

/// `properties` with `scalars` as text, `documents` as objects with text leaves, and `Tags`
/// sorted: the canonical form of a type whose properties are string attributes.
pub(crate) fn canonical_attributes(
    properties: Value,
    scalars: &[&str],
    documents: &[&str],
) -> Value {
    let Value::Object(mut props) = properties else {
        return properties;
    };
    for (k, v) in props.iter_mut() {
        if scalars.contains(&k.as_str()) {
            *v = scalar_text(v);
        } else if documents.contains(&k.as_str()) {
            *v = deep_text(&document(v));
        } else if k == "Tags" {
            *v = sorted_tags(v);
        }
    }
    Value::Object(props)
}

/// A `Tags` list from key/value pairs (sorted by key), `None` when there are none. System
/// (`aws:`) tags are CloudFormation's own, never the template's, so they are left out.
pub(crate) fn tags_value<I: IntoIterator<Item = (String, String)>>(pairs: I) -> Option<Value> {
    let mut pairs: Vec<(String, String)> = pairs
        .into_iter()
        .filter(|(k, _)| !super::system_tags::is_system(k))
        .collect();
    if pairs.is_empty() {
        return None;
    }
    pairs.sort();
    Some(Value::Array(
        pairs
            .into_iter()
            .map(|(k, v)| serde_json::json!({"Key": k, "Value": v}))
            .collect(),
    ))
}

/// The read-back of a policy attached to several targets (AWS::SQS::QueuePolicy's `Queues`,
/// AWS::SNS::TopicPolicy's `Topics`): `targets` yields each recorded target's attributes, `None`
/// for one that is gone. The targets still there answer `list_key`; the first one's non-empty
/// `Policy` answers PolicyDocument. `None` when no target is left.
pub(crate) fn attached_policy<E>(
    list_key: &str,
    physical_id: &str,
    targets: impl IntoIterator<Item = (String, Result<Option<Vec<(String, String)>>, E>)>,
) -> Result<Option<cumulo_engine::Observed>, E> {
    let mut live = Vec::new();
    let mut policy = None;
    for (target, attrs) in targets {
        let Some(attrs) = attrs? else { continue };
        live.push(Value::String(target));
        if policy.is_none() {
            policy = attrs
                .into_iter()
                .find(|(k, v)| k == "Policy" && !v.is_empty())
                .map(|(_, v)| document(&Value::String(v)));
        }
    }
    if live.is_empty() {
        return Ok(None);
    }
    let mut properties = Map::new();
    properties.insert(list_key.into(), Value::Array(live));
    if let Some(p) = policy {
        properties.insert("PolicyDocument".into(), p);
    }
    let attributes = Map::from_iter([("Id".to_string(), Value::String(physical_id.into()))]);
    Ok(Some(cumulo_engine::Observed {
        properties,
        attributes,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_and_strings_are_one_spelling() {
        let a = canonical_attributes(
            json!({"DelaySeconds": 5, "FifoQueue": true, "RedrivePolicy": {"maxReceiveCount": 3, "deadLetterTargetArn": "a"}}),
            &["DelaySeconds", "FifoQueue"],
            &["RedrivePolicy"],
        );
        let b = canonical_attributes(
            json!({"DelaySeconds": "5", "FifoQueue": "True", "RedrivePolicy": "{\"deadLetterTargetArn\":\"a\",\"maxReceiveCount\":\"3\"}"}),
            &["DelaySeconds", "FifoQueue"],
            &["RedrivePolicy"],
        );
        assert_eq!(a, b);
    }

    #[test]
    fn values_still_differ() {
        let a = canonical_attributes(json!({"DelaySeconds": 5}), &["DelaySeconds"], &[]);
        let b = canonical_attributes(json!({"DelaySeconds": "6"}), &["DelaySeconds"], &[]);
        assert_ne!(a, b);
    }

    #[test]
    fn tags_in_any_order() {
        assert_eq!(
            sorted_tags(&json!([{"Key": "b", "Value": 1}, {"Key": "a", "Value": "x"}])),
            json!([{"Key": "a", "Value": "x"}, {"Key": "b", "Value": "1"}])
        );
    }
}
