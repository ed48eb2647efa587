//! WebSocket APIs' selection expressions: the route selection expression that picks a
//! message's route, the template selection expressions that pick request and response
//! templates, and the integration response keys (`$default`, an exact value or a `/regex/`)
//! that an integration's answer selects.

use serde_json::Value;

/// Evaluates a selection expression: `$name` or `${name}` variables, each resolved by `var`,
/// among literal text (`\$` is a literal dollar). `None` when a variable has no value.
pub fn evaluate(expression: &str, var: impl Fn(&str) -> Option<String>) -> Option<String> {
    let mut out = String::new();
    let mut rest = expression;
    while let Some(i) = rest.find('$') {
        if rest[..i].ends_with('\\') {
            out.push_str(&rest[..i - 1]);
            out.push('$');
            rest = &rest[i + 1..];
            continue;
        }
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let (name, next) = if let Some(braced) = after.strip_prefix('{') {
            let end = braced.find('}')?;
            (&braced[..end], &braced[end + 1..])
        } else {
            let end = after
                .find(|c: char| !(c.is_alphanumeric() || matches!(c, '.' | '_' | '-')))
                .unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        out.push_str(&var(name)?);
        rest = next;
    }
    out.push_str(rest);
    Some(out)
}

/// The `request.body.<path>` variable over a message: read from its JSON, stringified.
pub fn body_variable(name: &str, body: &Value) -> Option<String> {
    let path = name.strip_prefix("request.body")?;
    let value = path
        .split('.')
        .filter(|s| !s.is_empty())
        .try_fold(body, |v, k| v.get(k))?;
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    }
}

/// Evaluates a route selection expression over a message; `None` when the body is not JSON
/// or a path is missing (the message goes to `$default`).
pub fn select_route_key(expression: &str, body: &str) -> Option<String> {
    // Parsed only when a variable reads the body: `\$default` needs no JSON.
    let parsed: std::cell::OnceCell<Option<Value>> = std::cell::OnceCell::new();
    evaluate(expression, |name| {
        let json = parsed.get_or_init(|| serde_json::from_str(body).ok());
        body_variable(name, json.as_ref()?)
    })
}

/// The template of `templates` that `expression` picks (its variables resolved by `var`):
/// the evaluated key's, else `$default`'s; `None` when neither exists.
pub fn pick_template<'a>(
    templates: &'a Value,
    expression: &Value,
    var: impl Fn(&str) -> Option<String>,
) -> Option<&'a str> {
    let key = expression
        .as_str()
        .and_then(|e| evaluate(e, var))
        .unwrap_or_else(|| "$default".to_string());
    templates
        .get(&key)
        .or_else(|| templates.get("$default"))
        .and_then(Value::as_str)
}

/// The integration response an integration's answer selects: the first whose key (a
/// `/regex/` matched whole, or an exact value) matches `selector` (the status code of HTTP
/// and MOCK integrations, a Lambda function's `errorMessage`), else the `$default` one. A
/// successful Lambda function has no selector: `$default`.
pub fn integration_response<'a>(responses: &'a Value, selector: Option<&str>) -> Option<&'a Value> {
    let all: Vec<&Value> = responses
        .as_object()
        .map(|m| m.values().collect())
        .unwrap_or_default();
    let key = |r: &Value| {
        r["integrationResponseKey"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    let matches = |k: &str, sel: &str| match k.strip_prefix('/').and_then(|k| k.strip_suffix('/')) {
        Some(pattern) => {
            regex::Regex::new(&format!("^(?s:{pattern})$")).is_ok_and(|re| re.is_match(sel))
        }
        None => k == sel,
    };
    selector
        .and_then(|sel| {
            all.iter()
                .find(|r| key(r) != "$default" && matches(&key(r), sel))
        })
        .or_else(|| all.iter().find(|r| key(r) == "$default"))
        .copied()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn route_selection_expressions() {
        let e = "$request.body.action";
        assert_eq!(
            select_route_key(e, r#"{"action":"send","x":1}"#).as_deref(),
            Some("send")
        );
        assert_eq!(select_route_key(e, r#"{"x":1}"#), None);
        assert_eq!(select_route_key(e, "not json"), None);
        assert_eq!(
            select_route_key("${request.body.a.b}-v", r#"{"a":{"b":2}}"#).as_deref(),
            Some("2-v")
        );
        assert_eq!(
            select_route_key("\\$default", "not json").as_deref(),
            Some("$default")
        );
    }

    #[test]
    fn template_selection() {
        let templates = json!({"$default": "d", "send": "s", "404": "nf"});
        let body = json!({"action": "send"});
        let var = |n: &str| match n {
            "integration.response.statuscode" => Some("404".to_string()),
            _ => body_variable(n, &body),
        };
        let e = json!("${request.body.action}");
        assert_eq!(pick_template(&templates, &e, var), Some("s"));
        let e = json!("$integration.response.statuscode");
        assert_eq!(pick_template(&templates, &e, var), Some("nf"));
        // A key no template has, a missing variable, no expression: `$default`.
        for e in [json!("other"), json!("${request.body.none}"), Value::Null] {
            assert_eq!(pick_template(&templates, &e, var), Some("d"));
        }
        assert_eq!(pick_template(&json!({"x": "y"}), &Value::Null, var), None);
    }

    #[test]
    fn integration_response_keys() {
        let responses = json!({
            "a": {"integrationResponseKey": "$default", "n": "default"},
            "b": {"integrationResponseKey": "/4\\d\\d/", "n": "4xx"},
            "c": {"integrationResponseKey": "/.*denied.*/", "n": "denied"},
            "d": {"integrationResponseKey": "201", "n": "exact"}});
        let pick = |s| integration_response(&responses, s).map(|r| r["n"].clone());
        assert_eq!(pick(Some("404")), Some(json!("4xx")));
        assert_eq!(pick(Some("201")), Some(json!("exact")));
        assert_eq!(pick(Some("access denied\nfor you")), Some(json!("denied")));
        assert_eq!(pick(Some("500")), Some(json!("default")));
        assert_eq!(pick(None), Some(json!("default")));
        assert_eq!(integration_response(&json!({}), Some("200")), None);
    }
}
