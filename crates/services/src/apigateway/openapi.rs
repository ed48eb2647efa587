//! OpenAPI 3 and Swagger 2 for REST APIs: ImportRestApi / PutRestApi (and CloudFormation's
//! `Body`) build resources, methods, integrations (`x-amazon-apigateway-integration`),
//! authorizers (`x-amazon-apigateway-authorizer`), models and gateway responses from a
//! definition in JSON or YAML; GetExport writes a deployment back as OpenAPI.

use super::ids;
use super::ops::not_found;
use super::patch::bad_request;
use super::state::{Resource, RestApi, Snapshot};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

const VERBS: &[(&str, &str)] = &[
    ("get", "GET"),
    ("put", "PUT"),
    ("post", "POST"),
    ("delete", "DELETE"),
    ("patch", "PATCH"),
    ("options", "OPTIONS"),
    ("head", "HEAD"),
    ("x-amazon-apigateway-any-method", "ANY"),
];

fn invalid() -> AwsError {
    bad_request("Invalid OpenAPI input.")
}

/// Reads a definition (JSON or YAML) that says it is OpenAPI or Swagger.
pub fn parse(body: &[u8]) -> Result<Value, AwsError> {
    let text = std::str::from_utf8(body).map_err(|_| invalid())?;
    let value = match serde_json::from_str::<Value>(text) {
        Ok(v) => v,
        Err(_) => cumulo_template::parse_template(text)
            .map(|d| d.value.to_json())
            .map_err(|_| invalid())?,
    };
    let is_spec = value.get("openapi").is_some() || value.get("swagger").is_some();
    if !value.is_object() || !is_spec {
        return Err(invalid());
    }
    Ok(value)
}

/// CreateRestApi's input for an imported definition.
pub fn api_input(spec: &Value, params: &[(String, String)]) -> Value {
    let mut input = json!({ "name": spec["info"]["title"].as_str().unwrap_or("imported") });
    if let Some(d) = spec["info"]["description"]
        .as_str()
        .filter(|d| !d.is_empty())
    {
        input["description"] = d.into();
    }
    let endpoint = params
        .iter()
        .find(|(k, _)| k == "endpointConfigurationTypes")
        .map(|(_, v)| v.clone())
        .or_else(|| {
            spec["x-amazon-apigateway-endpoint-configuration"]["types"][0]
                .as_str()
                .map(str::to_string)
        });
    if let Some(t) = endpoint {
        input["endpointConfiguration"] = json!({ "types": [t] });
    }
    input
}

/// Applies a definition to an API: `merge` keeps what the definition does not name, else the
/// API's resources, models, authorizers and gateway responses are replaced.
pub fn apply(
    api: &mut RestApi,
    spec: &Value,
    merge: bool,
    _params: &[(String, String)],
) -> Result<(), AwsError> {
    let root = api.doc["rootResourceId"].as_str().unwrap_or("").to_string();
    if !merge {
        api.resources.retain(|id, _| *id == root);
        if let Some(r) = api.resources.get_mut(&root) {
            r.methods.clear();
        }
        api.authorizers.clear();
        api.gateway_responses.clear();
        api.models.retain(|n, _| n == "Empty" || n == "Error");
    }
    if let Some(t) = spec["info"]["title"].as_str() {
        api.doc["name"] = t.into();
    }
    if let Some(d) = spec["info"]["description"].as_str() {
        api.doc["description"] = d.into();
    }
    if let Some(v) = spec["info"]["version"].as_str() {
        api.doc["version"] = v.into();
    }
    if let Some(b) = spec
        .get("x-amazon-apigateway-binary-media-types")
        .filter(|b| b.is_array())
    {
        api.doc["binaryMediaTypes"] = b.clone();
    }
    if let Some(s) = spec["x-amazon-apigateway-api-key-source"].as_str() {
        api.doc["apiKeySource"] = s.into();
    }
    if let Some(p) = spec.get("x-amazon-apigateway-policy") {
        api.doc["policy"] = p.to_string().into();
    }
    // Authorizers by security scheme name.
    let schemes = spec["components"]["securitySchemes"]
        .as_object()
        .or_else(|| spec["securityDefinitions"].as_object())
        .cloned()
        .unwrap_or_default();
    let mut authorizer_ids: BTreeMap<String, String> = BTreeMap::new();
    let mut api_key_schemes = Vec::new();
    for (name, scheme) in &schemes {
        if let Some(a) = scheme.get("x-amazon-apigateway-authorizer") {
            let kind = match a["type"]
                .as_str()
                .unwrap_or("token")
                .to_ascii_lowercase()
                .as_str()
            {
                "request" => "REQUEST",
                "cognito_user_pools" => "COGNITO_USER_POOLS",
                _ => "TOKEN",
            };
            let id = ids::short();
            let mut doc = json!({
                "id": id, "name": name, "type": kind,
                "authorizerResultTtlInSeconds": a["authorizerResultTtlInSeconds"].as_i64().unwrap_or(300),
            });
            for (from, to) in [
                ("authorizerUri", "authorizerUri"),
                ("authorizerCredentials", "authorizerCredentials"),
                (
                    "identityValidationExpression",
                    "identityValidationExpression",
                ),
                ("providerARNs", "providerARNs"),
                ("identitySource", "identitySource"),
            ] {
                if let Some(v) = a.get(from) {
                    doc[to] = v.clone();
                }
            }
            if doc.get("identitySource").is_none() && kind == "TOKEN" {
                let header = scheme["name"].as_str().unwrap_or("Authorization");
                doc["identitySource"] = format!("method.request.header.{header}").into();
            }
            if let Some(t) = scheme["x-amazon-apigateway-authtype"].as_str() {
                doc["authType"] = t.into();
            }
            api.authorizers.insert(id.clone(), doc);
            authorizer_ids.insert(name.clone(), id);
        } else if scheme["type"].as_str() == Some("apiKey") {
            api_key_schemes.push(name.clone());
        }
    }
    // Models.
    let schemas = spec["components"]["schemas"]
        .as_object()
        .or_else(|| spec["definitions"].as_object())
        .cloned()
        .unwrap_or_default();
    for (name, schema) in &schemas {
        api.models.insert(
            name.clone(),
            json!({"id": ids::short(), "name": name, "contentType": "application/json",
                "schema": schema.to_string()}),
        );
    }
    // Gateway responses.
    if let Some(gr) = spec["x-amazon-apigateway-gateway-responses"].as_object() {
        for (t, r) in gr {
            let mut doc = json!({"defaultResponse": false, "responseType": t,
                "responseParameters": r.get("responseParameters").cloned().unwrap_or_else(|| json!({})),
                "responseTemplates": r.get("responseTemplates").cloned().unwrap_or_else(|| json!({}))});
            if let Some(sc) = r.get("statusCode") {
                doc["statusCode"] = sc
                    .as_str()
                    .map_or_else(|| sc.to_string(), str::to_string)
                    .into();
            }
            api.gateway_responses.insert(t.clone(), doc);
        }
    }
    let global_security = spec.get("security").cloned();
    let Some(paths) = spec["paths"].as_object() else {
        return Ok(());
    };
    for (path, item) in paths {
        let id = ensure_path(api, &root, path)?;
        let Some(item) = item.as_object() else {
            continue;
        };
        let shared_params = item.get("parameters").cloned();
        for (key, verb) in VERBS {
            let Some(op) = item.get(*key) else { continue };
            let method = method_doc(
                op,
                verb,
                shared_params.as_ref(),
                global_security.as_ref(),
                &authorizer_ids,
                &api_key_schemes,
            );
            if let Some(r) = api.resources.get_mut(&id) {
                r.methods.insert((*verb).to_string(), method);
            }
        }
    }
    Ok(())
}

/// The resource at `path`, made (with its ancestors) when missing.
fn ensure_path(api: &mut RestApi, root: &str, path: &str) -> Result<String, AwsError> {
    let mut at = root.to_string();
    for part in path.split('/').filter(|p| !p.is_empty()) {
        let found = api
            .resources
            .values()
            .find(|r| r.parent_id.as_deref() == Some(at.as_str()) && r.path_part == part)
            .map(|r| r.id.clone());
        at = match found {
            Some(id) => id,
            None => {
                let id = ids::short();
                api.resources.insert(
                    id.clone(),
                    Resource {
                        id: id.clone(),
                        parent_id: Some(at.clone()),
                        path_part: part.to_string(),
                        methods: BTreeMap::new(),
                    },
                );
                id
            }
        };
    }
    if !api.resources.contains_key(&at) {
        return Err(not_found("Invalid Resource identifier specified"));
    }
    Ok(at)
}

fn method_doc(
    op: &Value,
    verb: &str,
    shared: Option<&Value>,
    global_security: Option<&Value>,
    authorizers: &BTreeMap<String, String>,
    api_key_schemes: &[String],
) -> Value {
    let mut m = json!({"httpMethod": verb, "authorizationType": "NONE", "apiKeyRequired": false});
    let security = op.get("security").or(global_security);
    for req in security.and_then(Value::as_array).into_iter().flatten() {
        for name in req.as_object().into_iter().flat_map(|o| o.keys()) {
            if let Some(id) = authorizers.get(name) {
                m["authorizationType"] = "CUSTOM".into();
                m["authorizerId"] = id.clone().into();
            } else if api_key_schemes.contains(name) {
                m["apiKeyRequired"] = true.into();
            } else if name == "sigv4" {
                m["authorizationType"] = "AWS_IAM".into();
            }
        }
    }
    let mut params = Map::new();
    for p in shared
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .chain(op["parameters"].as_array().into_iter().flatten())
    {
        let kind = match p["in"].as_str() {
            Some("path") => "path",
            Some("query") => "querystring",
            Some("header") => "header",
            _ => continue,
        };
        if let Some(n) = p["name"].as_str() {
            params.insert(
                format!("method.request.{kind}.{n}"),
                Value::Bool(p["required"].as_bool().unwrap_or(false)),
            );
        }
    }
    if !params.is_empty() {
        m["requestParameters"] = Value::Object(params);
    }
    if let Some(id) = op["operationId"].as_str() {
        m["operationName"] = id.into();
    }
    let mut responses = Map::new();
    for (code, r) in op["responses"].as_object().into_iter().flatten() {
        if code.len() != 3 {
            continue;
        }
        let mut doc = json!({"statusCode": code});
        if let Some(h) = r["headers"].as_object() {
            doc["responseParameters"] = Value::Object(
                h.keys()
                    .map(|k| (format!("method.response.header.{k}"), Value::Bool(false)))
                    .collect(),
            );
        }
        responses.insert(code.clone(), doc);
    }
    if !responses.is_empty() {
        m["methodResponses"] = Value::Object(responses);
    }
    if let Some(i) = op.get("x-amazon-apigateway-integration") {
        let kind = i["type"]
            .as_str()
            .unwrap_or("mock")
            .to_ascii_uppercase()
            .replace('-', "_");
        let mut integ = json!({
            "type": kind,
            "passthroughBehavior": i["passthroughBehavior"].as_str().unwrap_or("WHEN_NO_MATCH").to_ascii_uppercase(),
            "timeoutInMillis": i["timeoutInMillis"].as_i64().unwrap_or(29000),
            "cacheNamespace": ids::short(),
            "cacheKeyParameters": i.get("cacheKeyParameters").cloned().unwrap_or_else(|| json!([])),
        });
        if kind != "MOCK" {
            integ["httpMethod"] = i["httpMethod"]
                .as_str()
                .unwrap_or("POST")
                .to_ascii_uppercase()
                .into();
            integ["connectionType"] = i["connectionType"].as_str().unwrap_or("INTERNET").into();
        }
        for k in [
            "uri",
            "credentials",
            "requestTemplates",
            "requestParameters",
            "contentHandling",
            "connectionId",
        ] {
            if let Some(v) = i.get(k) {
                integ[k] = v.clone();
            }
        }
        let mut irs = Map::new();
        for (pattern, r) in i["responses"].as_object().into_iter().flatten() {
            let status = r["statusCode"]
                .as_str()
                .map(str::to_string)
                .or_else(|| r["statusCode"].as_i64().map(|n| n.to_string()))
                .unwrap_or_else(|| "200".to_string());
            let mut doc = json!({"statusCode": status,
                "selectionPattern": if pattern == "default" { "" } else { pattern.as_str() }});
            for k in ["responseTemplates", "responseParameters", "contentHandling"] {
                if let Some(v) = r.get(k) {
                    doc[k] = v.clone();
                }
            }
            if pattern == "default" {
                doc.as_object_mut().map(|d| d.remove("selectionPattern"));
            }
            irs.insert(status, doc);
        }
        if !irs.is_empty() {
            integ["integrationResponses"] = Value::Object(irs);
        }
        m["methodIntegration"] = integ;
    }
    m
}

/// GetExport: the deployment as OpenAPI 3 (`oas30`) or Swagger 2 (`swagger`).
pub fn export(api: &RestApi, snap: &Snapshot, stage: &str, kind: &str, host: &str) -> Value {
    let swagger = kind == "swagger";
    let mut paths = Map::new();
    for r in snap.resources.values() {
        if r.methods.is_empty() {
            continue;
        }
        let mut item = Map::new();
        for (verb, m) in &r.methods {
            let key = VERBS
                .iter()
                .find(|(_, v)| v == verb)
                .map_or("get", |(k, _)| *k);
            let mut responses = Map::new();
            for code in m["methodResponses"]
                .as_object()
                .into_iter()
                .flat_map(|o| o.keys())
            {
                responses.insert(
                    code.clone(),
                    json!({"description": format!("{code} response")}),
                );
            }
            let mut op = json!({"responses": responses});
            if let Some(i) = m.get("methodIntegration") {
                let mut x = i.clone();
                x["type"] = i["type"].as_str().unwrap_or("").to_ascii_lowercase().into();
                if let Some(irs) = i["integrationResponses"].as_object() {
                    let mut out = Map::new();
                    for r in irs.values() {
                        let pattern = r["selectionPattern"]
                            .as_str()
                            .filter(|p| !p.is_empty())
                            .unwrap_or("default");
                        let mut d = r.clone();
                        d.as_object_mut().map(|o| o.remove("selectionPattern"));
                        out.insert(pattern.to_string(), d);
                    }
                    x["responses"] = Value::Object(out);
                }
                if let Some(o) = x.as_object_mut() {
                    o.remove("integrationResponses");
                    o.remove("cacheNamespace");
                }
                op["x-amazon-apigateway-integration"] = x;
            }
            item.insert(key.to_string(), op);
        }
        paths.insert(
            RestApi::path_of(&snap.resources, &r.id),
            Value::Object(item),
        );
    }
    let title = api.doc["name"].clone();
    let version = chrono::DateTime::from_timestamp(
        api.doc["createdDate"].as_f64().unwrap_or(ids::now()) as i64,
        0,
    )
    .map(|d| d.format("%Y-%m-%dT%H:%M:%SZ").to_string())
    .unwrap_or_default();
    let host_name = format!(
        "{}.execute-api.{}",
        api.doc["id"].as_str().unwrap_or(""),
        host
    );
    if swagger {
        json!({"swagger": "2.0", "info": {"title": title, "version": version},
            "host": host_name, "basePath": format!("/{stage}"), "schemes": ["http"], "paths": paths})
    } else {
        json!({"openapi": "3.0.1", "info": {"title": title, "version": version},
            "servers": [{"url": format!("http://{host_name}/{{basePath}}"),
                "variables": {"basePath": {"default": stage}}}],
            "paths": paths})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_what_is_not_openapi() {
        assert_eq!(
            parse(b"not: [valid").unwrap_err().message,
            "Invalid OpenAPI input."
        );
        assert!(parse(b"{\"foo\": 1}").is_err());
        assert!(parse(b"openapi: 3.0.1\ninfo: {title: t}\npaths: {}\n").is_ok());
    }

    #[test]
    fn builds_resources_and_integrations() {
        let spec = parse(br#"{"openapi": "3.0.1", "info": {"title": "pets"},
            "paths": {"/pets/{id}": {"get": {"parameters": [{"name": "id", "in": "path", "required": true}],
              "x-amazon-apigateway-integration": {"type": "aws_proxy", "httpMethod": "POST",
                "uri": "arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/f/invocations"}}}}}"#).unwrap();
        let mut api = RestApi {
            doc: json!({"id": "a", "rootResourceId": "root"}),
            resources: BTreeMap::from([(
                "root".to_string(),
                Resource {
                    id: "root".into(),
                    parent_id: None,
                    path_part: String::new(),
                    methods: BTreeMap::new(),
                },
            )]),
            deployments: BTreeMap::new(),
            stages: BTreeMap::new(),
            models: BTreeMap::new(),
            validators: BTreeMap::new(),
            authorizers: BTreeMap::new(),
            gateway_responses: BTreeMap::new(),
        };
        apply(&mut api, &spec, false, &[]).unwrap();
        assert_eq!(api.doc["name"], "pets");
        let r = api
            .resources
            .values()
            .find(|r| r.path_part == "{id}")
            .unwrap();
        assert_eq!(RestApi::path_of(&api.resources, &r.id), "/pets/{id}");
        let m = &r.methods["GET"];
        assert_eq!(m["methodIntegration"]["type"], "AWS_PROXY");
        assert_eq!(m["requestParameters"]["method.request.path.id"], true);
    }
}
