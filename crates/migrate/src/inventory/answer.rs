//! Reading AWS answers as JSON whatever their wire protocol: an XML answer's one-item list
//! and an empty list do not look like lists after a generic conversion, so every list is
//! read through [`list`].

use serde_json::Value;

/// The members of a list: an array's items, a lone object as one item, nothing otherwise
/// (an empty XML list arrives as `""` or `null`).
pub fn list(value: Option<&Value>) -> Vec<&Value> {
    match value {
        Some(Value::Array(items)) => items.iter().collect(),
        Some(v @ Value::Object(_)) => vec![v],
        _ => Vec::new(),
    }
}

/// A member as a string: strings as they are, numbers and booleans spelled out (XML answers
/// carry everything as text, JSON ones do not).
pub fn text(value: &Value, key: &str) -> Option<String> {
    match value.get(key)? {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// A member that is true, whether `true` or `"true"`.
pub fn flag(value: &Value, key: &str) -> bool {
    text(value, key).is_some_and(|t| t == "true")
}

/// `Key`/`Value` pairs (stack tags, ACM tags) as a map.
pub fn tags(value: Option<&Value>) -> std::collections::BTreeMap<String, String> {
    list(value)
        .into_iter()
        .filter_map(|t| Some((text(t, "Key")?, text(t, "Value").unwrap_or_default())))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lists_read_the_same_from_json_and_converted_xml() {
        let v = json!({"a": [1, 2], "b": {"x": 1}, "c": "", "d": null});
        assert_eq!(list(v.get("a")).len(), 2);
        assert_eq!(list(v.get("b")).len(), 1);
        assert!(list(v.get("c")).is_empty());
        assert!(list(v.get("d")).is_empty());
        assert!(list(v.get("missing")).is_empty());
        assert_eq!(text(&json!({"n": 3}), "n").as_deref(), Some("3"));
        assert!(flag(&json!({"f": "true"}), "f"));
        assert!(flag(&json!({"f": true}), "f"));
    }
}
