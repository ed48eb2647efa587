//! WebSocket APIs' selection expressions and MOCK integrations: the route selection expression
//! that picks a message's route, the template selection expressions that pick request and
//! response templates, and a MOCK integration's answer from its templates and integration
//! responses.

use crate::apigateway::vtl;
use serde_json::{Value, json};

/// Evaluates a route selection expression over a message: `$request.body.<path>` (or
/// `${request.body.<path>}`) read from the JSON body, stringified, among literal text; `None`
/// when the body is not JSON or a path is missing (the message goes to `$default`).
pub fn select_route_key(expression: &str, body: &str) -> Option<String> {
    // Parsed only when a variable reads the body: `\$default` needs no JSON.
    let parsed: std::cell::OnceCell<Option<Value>> = std::cell::OnceCell::new();
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
        let (var, next) = if let Some(braced) = after.strip_prefix('{') {
            let end = braced.find('}')?;
            (&braced[..end], &braced[end + 1..])
        } else {
            let end = after
                .find(|c: char| !(c.is_alphanumeric() || matches!(c, '.' | '_' | '-')))
                .unwrap_or(after.len());
            (&after[..end], &after[end..])
        };
        let path = var.strip_prefix("request.body")?;
        let json = parsed
            .get_or_init(|| serde_json::from_str(body).ok())
            .as_ref()?;
        let value = path
            .split('.')
            .filter(|s| !s.is_empty())
            .try_fold(json, |v, k| v.get(k))?;
        match value {
            Value::String(s) => out.push_str(s),
            other => out.push_str(&other.to_string()),
        }
        rest = next;
    }
    out.push_str(rest);
    Some(out)
}

/// The template of `templates` a selection expression picks for `body`: the evaluated key's,
/// else `$default`'s.
fn pick_template<'a>(templates: &'a Value, expression: &Value, body: &str) -> Option<&'a str> {
    let key = expression
        .as_str()
        .and_then(|e| select_route_key(e, body))
        .unwrap_or_else(|| "$default".to_string());
    templates
        .get(&key)
        .or_else(|| templates.get("$default"))
        .and_then(Value::as_str)
}

/// A MOCK integration: its request template's `statusCode` (200 without one) selects an
/// integration response (`$default`, an exact status or a `/regex/` key), whose response
/// template is the answer's body.
pub(crate) fn mock(integration: &Value, body: &str, context: &Value) -> Result<Value, u16> {
    let mut env = vtl::Env::default();
    env.input.body = body.to_string();
    env.vars.insert("context".into(), context.clone());
    env.vars.insert("stageVariables".into(), json!({}));
    let render = |template: &str, env: &mut vtl::Env| {
        vtl::render(template, env).map_err(|e| {
            eprintln!("cumulo: apigateway: WebSocket MOCK template: {e}");
            500u16
        })
    };
    let template = pick_template(
        &integration["requestTemplates"],
        &integration["templateSelectionExpression"],
        body,
    );
    let status = match template {
        Some(t) => {
            let out = render(t, &mut env)?;
            let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
            v["statusCode"]
                .as_u64()
                .or_else(|| v["statusCode"].as_str()?.parse().ok())
                .unwrap_or(200)
        }
        None => 200,
    };
    let code = status.to_string();
    let responses: Vec<&Value> = integration["integrationResponses"]
        .as_object()
        .map(|m| m.values().collect())
        .unwrap_or_default();
    let matches = |r: &&&Value| {
        let key = r["integrationResponseKey"].as_str().unwrap_or("");
        match key.strip_prefix('/').and_then(|k| k.strip_suffix('/')) {
            Some(pattern) => {
                regex::Regex::new(&format!("^(?:{pattern})$")).is_ok_and(|re| re.is_match(&code))
            }
            None => key == code,
        }
    };
    let chosen = responses.iter().find(matches).or_else(|| {
        responses
            .iter()
            .find(|r| r["integrationResponseKey"] == "$default")
    });
    let answer = match chosen.and_then(|r| {
        pick_template(
            &r["responseTemplates"],
            &r["templateSelectionExpression"],
            body,
        )
    }) {
        Some(t) => Value::String(render(t, &mut env)?),
        None => Value::Null,
    };
    Ok(json!({"statusCode": status, "body": answer}))
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn mock_templates_and_integration_responses() {
        let integ = json!({
            "requestTemplates": {"$default": "{\"statusCode\": $input.json('$.code')}"},
            "templateSelectionExpression": "\\$default",
            "integrationResponses": {
                "a": {"integrationResponseKey": "/4\\d\\d/",
                      "responseTemplates": {"$default": "bad $context.connectionId"}},
                "b": {"integrationResponseKey": "$default",
                      "responseTemplates": {"$default": "ok $input.path('$.code')"}}}});
        let ctx = json!({"connectionId": "c1"});
        let ok = mock(&integ, r#"{"code": 200}"#, &ctx).unwrap();
        assert_eq!(
            (ok["statusCode"].as_u64(), ok["body"].as_str()),
            (Some(200), Some("ok 200"))
        );
        let bad = mock(&integ, r#"{"code": 404}"#, &ctx).unwrap();
        assert_eq!(
            (bad["statusCode"].as_u64(), bad["body"].as_str()),
            (Some(404), Some("bad c1"))
        );
        // No templates: a 200 without a body.
        assert_eq!(
            mock(&json!({}), "", &ctx).unwrap(),
            json!({"statusCode": 200, "body": null})
        );
    }
}
