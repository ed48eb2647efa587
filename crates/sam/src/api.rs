//! AWS::Serverless::HttpApi and functions' HttpApi events: the implicit `ServerlessHttpApi`
//! gathered from events without an ApiId (before Globals, as the translator's plugin runs),
//! each event's route and Lambda proxy integration written into the API's OpenAPI body and its
//! invoke permission, and the API as an AWS::ApiGatewayV2::Api with its auto-deployed stage.
//! REST APIs (AWS::Serverless::Api, Api events) are `rest_api`'s.

use crate::conditions::PathCondition::{Combined, Own};
use crate::conditions::RouteConditions;
use crate::events::Event;
use crate::function::Target;
use crate::resource::{Res, Sam, is_intrinsic, reference, truthy};
use crate::{Translation, invalid, invalid_event, pyjson, unsupported};
use serde_json::{Map, Value, json};

const IMPLICIT_HTTP_API: &str = "ServerlessHttpApi";
const HTTP_API: &str = "AWS::Serverless::HttpApi";
pub(crate) const ANY_METHOD: &str = "x-amazon-apigateway-any-method";
const DEFAULT_PATH: &str = "$default";
const INTEGRATION: &str = "x-amazon-apigateway-integration";
/// The implicit API's condition when its routes' functions have several.
const IMPLICIT_CONDITION: &str = "ServerlessHttpApiCondition";

pub(crate) fn is_no_value(v: &Value) -> bool {
    v.get("Ref").and_then(Value::as_str) == Some("AWS::NoValue")
}

fn is_conditional(v: &Value) -> bool {
    is_intrinsic(v)
        && v.get("Fn::If")
            .and_then(Value::as_array)
            .is_some_and(|b| b.len() == 3)
}

/// `get_conditional_contents`: the definitions a path item or method holds, both branches of
/// an `Fn::If` (but `AWS::NoValue`), else itself.
pub(crate) fn contents_mut(v: &mut Value) -> Vec<&mut Value> {
    if !is_conditional(v) {
        return vec![v];
    }
    v.get_mut("Fn::If")
        .and_then(Value::as_array_mut)
        .map(|branches| {
            branches
                .iter_mut()
                .skip(1)
                .filter(|b| !is_no_value(b))
                .collect()
        })
        .unwrap_or_default()
}

/// [`contents_mut`], read only.
fn contents(v: &Value) -> Vec<&Value> {
    if !is_conditional(v) {
        return vec![v];
    }
    v["Fn::If"]
        .as_array()
        .map(|branches| {
            branches
                .iter()
                .skip(1)
                .filter(|b| !is_no_value(b))
                .collect()
        })
        .unwrap_or_default()
}

/// `make_conditional`: the value where `condition` holds, nothing elsewhere.
fn make_conditional(condition: &str, data: Value) -> Value {
    json!({"Fn::If": [condition, data, {"Ref": "AWS::NoValue"}]})
}

/// A path's method definitions that have an integration, through the conditions wrapping the
/// path and the method (`iter_on_method_definitions_for_path_at_method`).
fn integrated_methods<'a>(
    body: &'a mut Value,
    path: &str,
    method: &str,
) -> Vec<&'a mut Map<String, Value>> {
    let key = normalize_method(method);
    let Some(item) = body.get_mut("paths").and_then(|p| p.get_mut(path)) else {
        return Vec::new();
    };
    contents_mut(item)
        .into_iter()
        .filter_map(|i| i.get_mut(&key))
        .flat_map(contents_mut)
        .filter_map(Value::as_object_mut)
        .filter(|d| truthy(d.get(INTEGRATION)))
        .collect()
}

fn skeleton() -> Value {
    json!({"openapi": "3.0.1", "info": {"version": "1.0", "title": {"Ref": "AWS::StackName"}}, "paths": {}})
}

/// An OpenAPI 3 document the editor accepts: `openapi` 3.x and a `paths` map.
pub(crate) fn is_openapi(body: &Value) -> bool {
    let version_ok = body
        .get("openapi")
        .and_then(Value::as_str)
        .is_some_and(|v| {
            let mut parts = v.split('.');
            parts.next() == Some("3")
                && parts.clone().count() <= 2
                && parts.clone().count() >= 1
                && parts.all(|p| p.len() == 1 && p.chars().all(|c| c.is_ascii_digit()))
        });
    version_ok && body.get("paths").is_some_and(Value::is_object)
}

pub(crate) fn normalize_method(m: &str) -> String {
    let m = m.to_ascii_lowercase();
    if m == "any" {
        ANY_METHOD.to_string()
    } else {
        m
    }
}

/// The implicit HTTP API: added when a function's HttpApi event names no ApiId, the events
/// completed (ApiId, and `$default`/any for an event with neither Path nor Method) and each
/// route added to the API's body, as the translator's plugin does before Globals.
pub fn add_implicit_apis(
    root: &mut Map<String, Value>,
    _t: &Translation,
) -> Result<(), Vec<String>> {
    let Some(Value::Object(resources)) = root.get_mut("Resources") else {
        return Ok(());
    };
    // An HttpApi with neither DefinitionBody nor DefinitionUri gets SAM's own body.
    for r in resources.values_mut() {
        if r.get("Type").and_then(Value::as_str) != Some(HTTP_API) {
            continue;
        }
        let Some(r) = r.as_object_mut() else { continue };
        let props = r.entry("Properties").or_insert_with(|| json!({}));
        if let Some(p) = props.as_object_mut()
            && !truthy(p.get("DefinitionBody"))
            && !truthy(p.get("DefinitionUri"))
        {
            p.insert("DefinitionBody".into(), skeleton());
            p.insert("__MANAGE_SWAGGER".into(), json!(true));
        }
    }
    let existing = resources.get(IMPLICIT_HTTP_API).cloned();
    resources.insert(
        IMPLICIT_HTTP_API.into(),
        json!({"Type": HTTP_API, "Properties": {"DefinitionBody": skeleton(), "__MANAGE_SWAGGER": true}}),
    );
    let mut errors = Vec::new();
    let mut deletion = Vec::new();
    let mut replace = Vec::new();
    let mut conditions = RouteConditions::default();
    let ids: Vec<String> = resources.keys().cloned().collect();
    for id in &ids {
        let r = &resources[id.as_str()];
        let ty = r.get("Type").and_then(Value::as_str).unwrap_or("");
        if ty != "AWS::Serverless::Function" && ty != "AWS::Serverless::StateMachine" {
            continue;
        }
        let Some(Value::Object(events)) = r.get("Properties").and_then(|p| p.get("Events")) else {
            continue;
        };
        let mut events = events.clone();
        let attrs = (
            r.get("Condition").cloned(),
            r.get("DeletionPolicy").cloned(),
            r.get("UpdateReplacePolicy").cloned(),
        );
        let mut changed = false;
        for (event_id, event) in events.iter_mut() {
            if event.get("Type").and_then(Value::as_str) != Some("HttpApi") {
                continue;
            }
            if attrs.0.as_ref().is_some_and(|c| !c.is_string()) {
                errors.push(unsupported(id, "A Condition that is not a string"));
                continue;
            }
            let condition = attrs.0.as_ref().and_then(Value::as_str).map(str::to_string);
            let props = match event.get("Properties") {
                None | Some(Value::Null) => Map::new(),
                Some(Value::Object(p)) => p.clone(),
                Some(_) => {
                    errors.push(invalid(
                        id,
                        format!(
                            "Event with id [{event_id}] is invalid. Properties should be a map."
                        ),
                    ));
                    continue;
                }
            };
            let mut props = props;
            if !props.contains_key("ApiId") {
                props.insert("ApiId".into(), json!({"Ref": IMPLICIT_HTTP_API}));
            }
            let no_path = !truthy(props.get("Path"));
            let no_method = !truthy(props.get("Method"));
            if no_path && no_method {
                props.insert("Path".into(), json!(DEFAULT_PATH));
                props.insert("Method".into(), json!(ANY_METHOD));
            }
            let api_id = match props.get("ApiId") {
                Some(Value::Object(o)) if o.contains_key("Ref") => o["Ref"].clone(),
                Some(v) => v.clone(),
                None => Value::Null,
            };
            let (Some(path), Some(method)) = (
                props
                    .get("Path")
                    .and_then(Value::as_str)
                    .map(str::to_string),
                props
                    .get("Method")
                    .and_then(Value::as_str)
                    .map(str::to_string),
            ) else {
                let missing = if props.get("Path").is_none() {
                    "Path"
                } else {
                    "Method"
                };
                errors.push(invalid(
                    id,
                    format!(
                        "Event with id [{event_id}] is invalid. Property '{missing}' is required."
                    ),
                ));
                continue;
            };
            let Some(api_id) = api_id.as_str().map(str::to_string) else {
                errors.push(invalid(id, format!("Event with id [{event_id}] is invalid. ApiId must be a valid reference to an '{HTTP_API}' resource in same template.")));
                continue;
            };
            let is_http = resources
                .get(&api_id)
                .and_then(|a| a.get("Type"))
                .and_then(Value::as_str)
                == Some(HTTP_API);
            if !is_http {
                errors.push(invalid(id, format!("Event with id [{event_id}] is invalid. ApiId must be a valid reference to an '{HTTP_API}' resource in same template.")));
                continue;
            }
            conditions.add(&api_id, &path, &method, condition.clone());
            deletion.push((api_id.clone(), attrs.1.clone()));
            replace.push((api_id.clone(), attrs.2.clone()));
            if let Some(props_of_api) = resources
                .get_mut(&api_id)
                .and_then(|a| a.get_mut("Properties"))
                .and_then(Value::as_object_mut)
            {
                let managed = props_of_api.get("__MANAGE_SWAGGER") == Some(&json!(true));
                if let Some(body) = props_of_api.get_mut("DefinitionBody")
                    && managed
                    && is_openapi(body)
                {
                    add_path(body, &path, &method);
                }
                if let Some(settings) = props.get("RouteSettings") {
                    // A conditional function's settings hold only under its condition.
                    let settings = match &condition {
                        Some(c) => make_conditional(c, settings.clone()),
                        None => settings.clone(),
                    };
                    crate::http_auth::merge_route_settings(
                        id,
                        event_id,
                        &api_id,
                        props_of_api,
                        (&path, &method),
                        &settings,
                    )
                    .map_err(|e| vec![e])?;
                }
            }
            event["Properties"] = Value::Object(props);
            changed = true;
        }
        if changed
            && let Some(p) = resources
                .get_mut(id.as_str())
                .and_then(|r| r.get_mut("Properties"))
                .and_then(Value::as_object_mut)
        {
            p.insert("Events".into(), Value::Object(events));
        }
    }
    // The implicit API takes the strongest deletion and replace policies of its functions.
    if let Some(api) = resources
        .get_mut(IMPLICIT_HTTP_API)
        .and_then(Value::as_object_mut)
    {
        crate::resource::inherit_policies(api, IMPLICIT_HTTP_API, &deletion, &replace);
    }
    if let Some(api) = resources
        .get_mut(IMPLICIT_HTTP_API)
        .and_then(Value::as_object_mut)
    {
        conditions.condition_implicit(IMPLICIT_HTTP_API, api, IMPLICIT_CONDITION);
    }
    for (api_id, r) in resources.iter_mut() {
        let managed = r.get("Type").and_then(Value::as_str) == Some(HTTP_API)
            && r.pointer("/Properties/__MANAGE_SWAGGER") == Some(&json!(true));
        let Some(paths) = r
            .pointer_mut("/Properties/DefinitionBody/paths")
            .and_then(Value::as_object_mut)
            .filter(|_| managed)
        else {
            continue;
        };
        for (path, item) in paths.iter_mut() {
            if let Some(c) = conditions.path(api_id, path) {
                let (Own(name) | Combined(name)) = c;
                *item = make_conditional(&name, item.take());
            }
        }
    }
    let empty = resources
        .get(IMPLICIT_HTTP_API)
        .and_then(|a| a.pointer("/Properties/DefinitionBody/paths"))
        .and_then(Value::as_object)
        .is_none_or(Map::is_empty);
    if empty {
        match existing {
            Some(e) => {
                resources.insert(IMPLICIT_HTTP_API.into(), e);
            }
            None => {
                resources.shift_remove(IMPLICIT_HTTP_API);
            }
        }
    }
    conditions.write(root);
    if errors.is_empty() {
        Ok(())
    } else {
        Err(errors)
    }
}

fn add_path(body: &mut Value, path: &str, method: &str) {
    let method = normalize_method(method);
    if let Some(paths) = body.get_mut("paths").and_then(Value::as_object_mut) {
        let item = paths.entry(path.to_string()).or_insert_with(|| json!({}));
        for item in contents_mut(item) {
            if let Some(item) = item.as_object_mut() {
                item.entry(method.clone()).or_insert_with(|| json!({}));
            }
        }
    }
}

/// Whether every branch of the path holds the method with an integration (`has_integration`).
fn has_integration(body: &Value, path: &str, method: &str) -> bool {
    let key = normalize_method(method);
    let Some(item) = body.get("paths").and_then(|p| p.get(path)) else {
        return false;
    };
    contents(item).into_iter().all(|i| {
        i.get(&key).is_some_and(|m| {
            m.is_object() && contents(m).into_iter().any(|d| truthy(d.get(INTEGRATION)))
        })
    })
}

/// `${Fn.Arn}` / `${FnAliaslive}`: the function's ARN as a Sub shorthand.
fn shorthand(arn: &Value) -> String {
    if let Some(r) = arn.get("Ref").and_then(Value::as_str) {
        return format!("${{{r}}}");
    }
    let parts: Vec<&str> = arn
        .get("Fn::GetAtt")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    format!("${{{}}}", parts.join("."))
}

/// Whether the `$default` any-method route already integrates this function (its permission
/// then covers every route).
fn default_route_is(body: &Value, logical_id: &str) -> bool {
    if !has_integration(body, DEFAULT_PATH, ANY_METHOD) {
        return false;
    }
    let Some(item) = body.pointer(&format!("/paths/{DEFAULT_PATH}")) else {
        return false;
    };
    // Every definition's every URI (through their conditions) names the function.
    contents(item)
        .into_iter()
        .filter_map(|i| i.get(ANY_METHOD))
        .flat_map(contents)
        .all(|d| {
            let uri = d.get(INTEGRATION).and_then(|i| i.get("uri"));
            uri.is_some_and(Value::is_object)
                && uri.into_iter().flat_map(contents).all(|u| {
                    first_arn(u.get("Fn::Sub").and_then(Value::as_str).unwrap_or(""))
                        == Some(logical_id)
                })
        })
}

/// The translator's regex `([A-Za-z0-9]+\.Arn)`, its first match without `.Arn`.
fn first_arn(uri: &str) -> Option<&str> {
    uri.find(".Arn").map(|end| {
        let start = uri[..end]
            .rfind(|c: char| !c.is_ascii_alphanumeric())
            .map_or(0, |i| i + uri[i..].chars().next().map_or(1, char::len_utf8));
        &uri[start..end]
    })
}

fn strip_one_trailing_slash(path: &str) -> &str {
    if path.len() > 1 && path.ends_with('/') {
        &path[..path.len() - 1]
    } else {
        path
    }
}

/// `{param}` and `{proxy+}` segments as `*`, for a permission's source ARN.
fn wildcard_parameters(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end)
                if (&after[..end] == "proxy+"
                    || (!after[..end].is_empty()
                        && after[..end]
                            .chars()
                            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)))) =>
            {
                out.push('*');
                rest = &after[end + 1..];
            }
            _ => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

fn path_parameters(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = path;
    while let Some(start) = rest.find('{') {
        let after = &rest[start + 1..];
        match after.find('}') {
            Some(end) => {
                out.push(after[..end].to_string());
                rest = &after[end + 1..];
            }
            None => break,
        }
    }
    out
}

/// A function's Api or HttpApi event: the permission, and the route's integration written
/// into the API's body (the API resource as the translation holds it).
pub fn function_event(
    _t: &mut Translation,
    sam: &Sam,
    event: &Event,
    target: &Target,
    live: &mut Map<String, Value>,
) -> Result<Vec<Res>, String> {
    for p in event.props.keys() {
        if ![
            "Path",
            "Method",
            "ApiId",
            "Stage",
            "Auth",
            "TimeoutInMillis",
            "RouteSettings",
            "PayloadFormatVersion",
        ]
        .contains(&p.as_str())
        {
            return Err(invalid(
                &event.id,
                format!("property {p} not defined for resource of type HttpApi"),
            ));
        }
    }
    let path = event
        .props
        .get("Path")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let method = event
        .props
        .get("Method")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let api_ref = event.props.get("ApiId").cloned().unwrap_or(Value::Null);
    let api_id = match &api_ref {
        Value::Object(o) => o
            .get("Ref")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        Value::String(s) => s.clone(),
        _ => String::new(),
    };
    let Some(api) = live.get_mut(&api_id).and_then(Value::as_object_mut) else {
        return Err(invalid_event(
            sam.id,
            event.name,
            format!(
                "ApiId must be a valid reference to an '{HTTP_API}' resource in same template."
            ),
        ));
    };
    let props = api.entry("Properties").or_insert_with(|| json!({}));
    let Some(api_props) = props.as_object_mut() else {
        return Err(invalid(
            &api_id,
            "Properties of a resource must be an object.",
        ));
    };
    let managed = api_props.get("__MANAGE_SWAGGER") == Some(&json!(true));
    let mut out = Vec::new();
    // The permission, unless the `$default` route already integrates this function.
    let body = api_props.get("DefinitionBody").cloned();
    if let Some(b) = &body
        && !is_openapi(b)
    {
        return Err(invalid(
            &api_id,
            "Structure of the SAM template is invalid. Invalid OpenApi document. Invalid values or missing keys for 'openapi' or 'paths' in 'DefinitionBody'.",
        ));
    }
    let mut p = strip_one_trailing_slash(&path).to_string();
    let covered = if p == DEFAULT_PATH {
        p = String::new();
        false
    } else {
        body.as_ref()
            .is_some_and(|b| default_route_is(b, &target.id))
    };
    if !covered {
        let p = wildcard_parameters(&p);
        let lower = method.to_ascii_lowercase();
        let m = if lower == "any" || lower == ANY_METHOD {
            "*".to_string()
        } else {
            method.to_ascii_uppercase()
        };
        let mut resource = "${__ApiId__}/${__Stage__}".to_string();
        if lower == "any" && p == format!("/{DEFAULT_PATH}") {
            resource.push_str(&p);
        } else {
            resource.push_str(&format!("/{m}{p}"));
        }
        let arn = format!(
            "arn:${{AWS::Partition}}:execute-api:${{AWS::Region}}:${{AWS::AccountId}}:{resource}"
        );
        let mut perm = Res::new(
            format!("{}Permission", event.id),
            "AWS::Lambda::Permission",
            target.attrs.clone(),
        );
        perm.put("Action", json!("lambda:InvokeFunction"));
        perm.put("FunctionName", target.name());
        perm.put("Principal", json!("apigateway.amazonaws.com"));
        perm.put(
            "SourceArn",
            json!({"Fn::Sub": [arn, {"__ApiId__": api_ref, "__Stage__": "*"}]}),
        );
        out.push(perm);
    }
    let Some(body) = api_props.get_mut("DefinitionBody") else {
        return Ok(out);
    };
    let method_key = normalize_method(&method);
    if managed && has_integration(body, &path, &method) {
        return Err(invalid_event(
            sam.id,
            event.name,
            format!(
                "API method '{}' defined multiple times for path '{path}'.",
                method.to_ascii_lowercase()
            ),
        ));
    }
    let uri = json!({"Fn::Sub": format!("arn:${{AWS::Partition}}:apigateway:${{AWS::Region}}:lambda:path/2015-03-31/functions/{}/invocations", shorthand(&target.arn()))});
    // A conditional function's integration URI, then its whole method, hold only under its
    // condition, so CloudFormation never resolves a function it did not make.
    let condition = target.attrs.get("Condition").and_then(Value::as_str);
    let uri = match condition {
        Some(c) => make_conditional(c, uri),
        None => uri,
    };
    if !has_integration(body, &path, &method) {
        add_path(body, &path, &method);
        let item = body.get_mut("paths").and_then(|p| p.get_mut(&path));
        for item in item.into_iter().flat_map(contents_mut) {
            let Some(m) = item.get_mut(&method_key) else {
                continue;
            };
            if m.is_null() {
                *m = json!({});
            }
            if let Some(d) = m.as_object_mut() {
                d.insert(INTEGRATION.into(), json!({"type": "aws_proxy", "httpMethod": "POST", "payloadFormatVersion": "2.0", "uri": uri.clone()}));
                if path == DEFAULT_PATH && method_key == ANY_METHOD {
                    d.insert("isDefaultRoute".into(), json!(true));
                }
                d.entry("responses").or_insert_with(|| json!({}));
            }
            if let Some(c) = condition {
                *m = make_conditional(c, m.take());
            }
        }
    }
    if let Some(auth) = event.props.get("Auth").filter(|a| truthy(Some(a))) {
        let api_snapshot = api_props.clone();
        if let Some(body) = api_props.get_mut("DefinitionBody") {
            crate::http_auth::add_event_auth(
                sam,
                event.name,
                &api_id,
                &api_snapshot,
                body,
                (&path, &method.to_ascii_lowercase()),
                auth,
            )?;
        }
    }
    let Some(body) = api_props.get_mut("DefinitionBody") else {
        return Ok(out);
    };
    let timeout = event
        .props
        .get("TimeoutInMillis")
        .filter(|v| truthy(Some(v)));
    let format = event
        .props
        .get("PayloadFormatVersion")
        .filter(|v| truthy(Some(v)));
    let params = path_parameters(&path);
    for m in integrated_methods(body, &path, &method) {
        if let Some(timeout) = timeout
            && let Some(i) = m.get_mut(INTEGRATION).and_then(Value::as_object_mut)
        {
            i.insert("timeoutInMillis".into(), timeout.clone());
        }
        if !params.is_empty()
            && let Some(list) = m
                .entry("parameters")
                .or_insert_with(|| json!([]))
                .as_array_mut()
        {
            for name in &params {
                match list
                    .iter_mut()
                    .find(|p| p.get("name") == Some(&json!(name)))
                {
                    Some(existing) => {
                        existing["in"] = json!("path");
                        existing["required"] = json!(true);
                    }
                    None => list.push(json!({"name": name, "in": "path", "required": true})),
                }
            }
        }
        if let Some(v) = format
            && let Some(i) = m.get_mut(INTEGRATION).and_then(Value::as_object_mut)
        {
            i.insert("payloadFormatVersion".into(), v.clone());
        }
    }
    Ok(out)
}

/// CorsConfiguration as the body's `x-amazon-apigateway-cors` (merged into one the body has).
fn add_cors(id: &str, body: Option<&mut Value>, cors: &Value) -> Result<(), String> {
    let Some(body) = body else {
        return Err(invalid(
            id,
            "Cors works only with inline OpenApi specified in 'DefinitionBody' property.",
        ));
    };
    const FIELDS: [&str; 6] = [
        "AllowMethods",
        "AllowHeaders",
        "AllowOrigins",
        "MaxAge",
        "ExposeHeaders",
        "AllowCredentials",
    ];
    let given: Map<String, Value> = match cors {
        Value::Bool(_) => [("AllowOrigins".to_string(), json!(["*"]))]
            .into_iter()
            .collect(),
        v if crate::resource::is_intrinsic(v) => {
            return Err(unsupported(
                id,
                "A CorsConfiguration given as an intrinsic function",
            ));
        }
        Value::Object(o) => {
            for k in o.keys() {
                if !FIELDS.contains(&k.as_str()) {
                    return Err(invalid(
                        id,
                        format!("Invalid key '{k}' for 'Cors' property."),
                    ));
                }
            }
            o.clone()
        }
        _ => return Err(invalid(id, "Invalid value for 'Cors' property.")),
    };
    if !is_openapi(body) {
        return Err(invalid(
            id,
            "Unable to add Cors configuration because 'DefinitionBody' does not contain a valid OpenApi definition.",
        ));
    }
    if given.get("AllowCredentials") == Some(&json!(true))
        && given.get("AllowOrigins") == Some(&json!(["*"]))
    {
        return Err(invalid(
            id,
            "Unable to add Cors configuration because 'AllowCredentials' can not be true when 'AllowOrigin' is \"'*'\" or not set.",
        ));
    }
    let Some(doc) = body.as_object_mut() else {
        return Ok(());
    };
    let config = doc
        .entry("x-amazon-apigateway-cors")
        .or_insert_with(|| json!({}));
    let Some(config) = config.as_object_mut() else {
        return Err(invalid(
            id,
            "Structure of the SAM template is invalid. Value of 'x-amazon-apigateway-cors' must be a dictionary according to Swagger spec.",
        ));
    };
    for (field, key) in [
        ("AllowOrigins", "allowOrigins"),
        ("AllowHeaders", "allowHeaders"),
        ("AllowMethods", "allowMethods"),
        ("ExposeHeaders", "exposeHeaders"),
    ] {
        if let Some(v) = given.get(field).filter(|v| truthy(Some(v))) {
            config.insert(key.into(), v.clone());
        }
    }
    if let Some(v) = given.get("MaxAge").filter(|v| !v.is_null()) {
        config.insert("maxAge".into(), v.clone());
    }
    if given.get("AllowCredentials") == Some(&json!(true)) {
        config.insert("allowCredentials".into(), json!(true));
    }
    Ok(())
}

/// `add_endpoint_config`: `disableExecuteApiEndpoint` in each server's endpoint configuration
/// extension (one server made when the body has none).
fn disable_execute_api_endpoint(
    id: &str,
    body: Option<&mut Value>,
    value: &Value,
) -> Result<(), String> {
    const EXTENSION: &str = "x-amazon-apigateway-endpoint-configuration";
    let Some(doc) = body.and_then(Value::as_object_mut) else {
        return Err(invalid(
            id,
            "DisableExecuteApiEndpoint works only within 'DefinitionBody' property.",
        ));
    };
    let servers = doc.entry("servers").or_insert_with(|| json!([{}]));
    let Some(servers) = servers.as_array_mut() else {
        return Err(invalid(id, "Property 'servers' should be a list."));
    };
    for config in servers {
        let Some(config) = config.as_object_mut() else {
            return Err(invalid(
                id,
                crate::structure(
                    "Value of 'servers' item must be a dictionary according to Swagger spec.",
                ),
            ));
        };
        let extension = config.entry(EXTENSION).or_insert_with(|| json!({}));
        if !extension.is_object() {
            *extension = json!({});
        }
        extension["disableExecuteApiEndpoint"] = value.clone();
    }
    Ok(())
}

const HTTP_API_PROPERTIES: [&str; 17] = [
    "__MANAGE_SWAGGER",
    "Name",
    "StageName",
    "Tags",
    "PropagateTags",
    "DefinitionBody",
    "DefinitionUri",
    "StageVariables",
    "CorsConfiguration",
    "AccessLogSettings",
    "DefaultRouteSettings",
    "Auth",
    "RouteSettings",
    "Domain",
    "FailOnWarnings",
    "Description",
    "DisableExecuteApiEndpoint",
];

/// An AWS::Serverless::HttpApi: the ApiGatewayV2 API with its body, and its auto-deployed stage.
pub fn translate(t: &mut Translation, sam: &Sam) -> Result<Vec<Res>, String> {
    sam.check_known(&HTTP_API_PROPERTIES)?;
    let mut api = sam.main("AWS::ApiGatewayV2::Api");
    let mut body = sam.cloned("DefinitionBody");
    let uri = sam.get("DefinitionUri").filter(|v| truthy(Some(v)));
    if body.is_some() && uri.is_some() {
        return Err(invalid(
            sam.id,
            "Specify either 'DefinitionUri' or 'DefinitionBody' property and not both.",
        ));
    }
    if let Some(cors) = sam.get("CorsConfiguration") {
        let cors = crate::intrinsics::resolve_params(cors, &t.params);
        if truthy(Some(&cors)) {
            add_cors(sam.id, body.as_mut(), &cors)?;
        }
    }
    let auth = sam.get("Auth").filter(|a| truthy(Some(a)));
    if let Some(auth) = auth {
        crate::http_auth::add_api_auth(sam.id, body.as_mut(), auth, &t.ctx.partition)?;
    }
    // Tags go into the body (SAM's `httpapi:createdBy` after the user's) and onto the stage.
    let user_tags = sam.get("Tags").filter(|v| truthy(Some(v)));
    if user_tags.is_some() && body.is_none() {
        return Err(invalid(
            sam.id,
            "Tags works only with inline OpenApi specified in the 'DefinitionBody' property.",
        ));
    }
    if user_tags.is_some() && body.as_ref().is_some_and(|b| !is_openapi(b)) {
        return Err(invalid(
            sam.id,
            "Unable to add `Tags` because 'DefinitionBody' does not contain a valid OpenApi definition.",
        ));
    }
    let mut tags = None;
    if let Some(b) = body.as_mut().filter(|b| is_openapi(b)) {
        let mut all = match user_tags {
            Some(Value::Object(t)) => t.clone(),
            Some(_) => return Err(invalid(sam.id, "Type of property 'Tags' is invalid.")),
            None => Map::new(),
        };
        all.insert("httpapi:createdBy".into(), json!("SAM"));
        let list = b
            .as_object_mut()
            .map(|o| o.entry("tags").or_insert_with(|| json!([])));
        let Some(Value::Array(list)) = list else {
            return Err(invalid(
                sam.id,
                "Structure of the SAM template is invalid. Tags in OpenApi DefinitionBody needs to be a list.",
            ));
        };
        for (name, value) in &all {
            match list
                .iter_mut()
                .find(|t| t.get("name") == Some(&json!(name)))
            {
                Some(existing) => existing["x-amazon-apigateway-tag-value"] = value.clone(),
                None => list.push(json!({"name": name, "x-amazon-apigateway-tag-value": value})),
            }
        }
        tags = Some(Value::Object(all));
    }
    if truthy(sam.get("FailOnWarnings")) {
        api.set("FailOnWarnings", sam.cloned("FailOnWarnings"));
    }
    if let Some(disable) = sam
        .get("DisableExecuteApiEndpoint")
        .filter(|v| !v.is_null())
    {
        disable_execute_api_endpoint(sam.id, body.as_mut(), disable)?;
    }
    if let Some(name) = sam.get("Name").filter(|v| truthy(Some(v))) {
        let Some(b) = body.as_mut() else {
            return Err(invalid(
                sam.id,
                "Name works only with inline OpenApi specified in the 'DefinitionBody' property.",
            ));
        };
        if b.pointer("/info/title") != Some(&json!({"Ref": "AWS::StackName"})) {
            return Err(invalid(
                sam.id,
                "Unable to set Name because it is already defined within inline OpenAPI specified in the 'DefinitionBody' property.",
            ));
        }
        if let Some(info) = b.get_mut("info").and_then(Value::as_object_mut) {
            info.insert("title".into(), name.clone());
        }
    }
    if let Some(description) = sam.get("Description").filter(|v| truthy(Some(v))) {
        let Some(b) = body.as_mut() else {
            return Err(invalid(
                sam.id,
                "Description works only with inline OpenApi specified in the 'DefinitionBody' property.",
            ));
        };
        if truthy(b.pointer("/info/description")) {
            return Err(invalid(
                sam.id,
                "Unable to set Description because it is already defined within inline OpenAPI specified in the 'DefinitionBody' property.",
            ));
        }
        if let Some(info) = b
            .as_object_mut()
            .map(|o| o.entry("info").or_insert_with(|| json!({})))
            .and_then(Value::as_object_mut)
        {
            info.insert("description".into(), description.clone());
        }
    }
    if truthy(sam.get("FailOnWarnings"))
        && let Some(paths) = body
            .as_mut()
            .and_then(|b| b.get_mut("paths"))
            .and_then(Value::as_object_mut)
        && let Some(v) = paths.shift_remove(DEFAULT_PATH)
    {
        paths.insert(format!("/{DEFAULT_PATH}"), v);
    }
    match (body, uri) {
        (Some(b), _) => api.put("Body", b),
        (None, Some(u)) => {
            let (bucket, key, version) = crate::function::s3_pointer(sam.id, u, "DefinitionUri")?;
            let mut loc = json!({"Bucket": bucket, "Key": key});
            if let Some(v) = version {
                loc["Version"] = v;
            }
            api.put("BodyS3Location", loc);
        }
        (None, None) => {
            return Err(invalid(
                sam.id,
                "'DefinitionUri' or 'DefinitionBody' are required properties of an 'AWS::Serverless::HttpApi'. Add a value for one of these properties or add a 'HttpApi' event to an 'AWS::Serverless::Function'.",
            ));
        }
    }
    let stage_name = sam
        .get("StageName")
        .filter(|v| truthy(Some(v)))
        .cloned()
        .unwrap_or(json!(DEFAULT_PATH));
    let prefix = stage_name.as_str().unwrap_or("");
    let stage_id = if !prefix.is_empty() && prefix.chars().all(char::is_alphanumeric) {
        format!("{}{prefix}Stage", sam.id)
    } else if prefix == DEFAULT_PATH {
        format!("{}ApiGatewayDefaultStage", sam.id)
    } else {
        format!("{}Stage{}", sam.id, pyjson::hash(&json!(prefix)))
    };
    let mut stage = Res::new(&stage_id, "AWS::ApiGatewayV2::Stage", sam.passthrough());
    stage.put("ApiId", reference(sam.id));
    stage.put("StageName", stage_name);
    stage.set("StageVariables", sam.cloned("StageVariables"));
    stage.set("AccessLogSettings", sam.cloned("AccessLogSettings"));
    stage.set("DefaultRouteSettings", sam.cloned("DefaultRouteSettings"));
    let stage_tags = tags.clone();
    stage.set("Tags", tags);
    stage.put("AutoDeploy", json!(true));
    stage.set("RouteSettings", sam.cloned("RouteSettings"));
    t.refs.add(sam.id, "Stage", &stage_id);
    let mut out = vec![api];
    let domain = match sam.get("Domain").filter(|d| !d.is_null()) {
        Some(d) => Some(crate::http_domain::construct(
            sam,
            &crate::intrinsics::resolve_params(d, &t.params),
            stage_tags.unwrap_or_else(|| json!({"httpapi:createdBy": "SAM"})),
            &mut t.rest.record_sets,
        )?),
        None => None,
    };
    if let Some(auth) = auth {
        out.extend(crate::http_auth::permissions(sam, auth)?);
    }
    if let Some(d) = domain {
        t.refs.add(sam.id, "DomainName", &d.domain_id);
        out.extend(d.resources);
    }
    out.push(stage);
    Ok(out)
}
