//! An HTTP API's `Auth` as the translator writes it into the OpenAPI body: its authorizers
//! (JWT, Lambda `request`, the built-in AWS_IAM) as `components.securitySchemes`, the default
//! authorizer on every integrated method without its own `security`, each HttpApi event's
//! Authorizer and AuthorizationScopes on its route, and the Lambda permission SAM adds for an
//! authorizer that asks for it (`EnableFunctionDefaultPermissions`).

use crate::api::{contents_mut, is_no_value};
use crate::resource::{Res, Sam, reference, truthy};
use crate::{invalid, invalid_event};
use serde_json::{Map, Value, json};

const AUTH_PROPERTIES: [&str; 3] = ["Authorizers", "DefaultAuthorizer", "EnableIamAuthorizer"];
const IAM: &str = "AWS_IAM";
const AUTHORIZER_KEY: &str = "x-amazon-apigateway-authorizer";
const INTEGRATION: &str = "x-amazon-apigateway-integration";

/// One authorizer (`ApiGatewayV2Authorizer`), its values as the template gives them.
pub struct Authorizer {
    name: String,
    scopes: Option<Value>,
    jwt: Option<Map<String, Value>>,
    id_source: Option<Value>,
    function_arn: Option<Value>,
    invoke_role: Option<Value>,
    identity: Option<Value>,
    payload_version: Option<Value>,
    simple_responses: Option<Value>,
    default_permissions: Option<Value>,
    iam: bool,
}

/// The properties each kind of authorizer accepts, with the name and kind an error names.
const PROPERTY_DISPLAY: [(&str, &str, &str); 9] = [
    ("AuthorizationScopes", "OAuth2 Authorizer", "JWT"),
    ("JwtConfiguration", "OAuth2 Authorizer", "JWT"),
    (
        "IdentitySource",
        "OAuth2 Authorizer. For Lambda Authorizer, use the 'Identity' property instead",
        "JWT",
    ),
    ("FunctionArn", "Lambda Authorizer", "REQUEST"),
    ("FunctionInvokeRole", "Lambda Authorizer", "REQUEST"),
    ("Identity", "Lambda Authorizer", "REQUEST"),
    (
        "AuthorizerPayloadFormatVersion",
        "Lambda Authorizer",
        "REQUEST",
    ),
    ("EnableSimpleResponses", "Lambda Authorizer", "REQUEST"),
    (
        "EnableFunctionDefaultPermissions",
        "Lambda Authorizer",
        "REQUEST",
    ),
];

fn present(a: &Map<String, Value>, k: &str) -> Option<Value> {
    a.get(k).filter(|v| !v.is_null()).cloned()
}

impl Authorizer {
    fn iam() -> Authorizer {
        Authorizer {
            name: IAM.into(),
            scopes: None,
            jwt: None,
            id_source: None,
            function_arn: None,
            invoke_role: None,
            identity: None,
            payload_version: None,
            simple_responses: None,
            default_permissions: None,
            iam: true,
        }
    }

    /// The constructor's checks, in its order.
    fn new(api: &str, name: &str, a: &Map<String, Value>) -> Result<Authorizer, String> {
        let jwt = match a.get("JwtConfiguration").filter(|v| truthy(Some(v))) {
            None => None,
            Some(Value::Object(o)) => Some(
                o.iter()
                    .map(|(k, v)| (k.to_lowercase(), v.clone()))
                    .collect(),
            ),
            Some(_) => {
                return Err(invalid(api, "Property 'JwtConfiguration' should be a map."));
            }
        };
        let kind = if jwt.is_some() { "JWT" } else { "REQUEST" };
        if present(a, "AuthorizationScopes").is_some_and(|s| !s.is_array()) {
            return Err(invalid(api, "AuthorizationScopes must be a list."));
        }
        for (property, allowed_for, owner) in PROPERTY_DISPLAY {
            let given = if property == "JwtConfiguration" {
                jwt.is_some()
            } else {
                present(a, property).is_some()
            };
            if given && owner != kind {
                return Err(invalid(
                    api,
                    format!("{property} is only supported for {allowed_for}."),
                ));
            }
        }
        if kind == "JWT" && !truthy(a.get("IdentitySource")) {
            return Err(invalid(
                api,
                format!("{name} OAuth2 Authorizer must define 'IdentitySource'."),
            ));
        }
        if kind == "REQUEST" {
            if !truthy(a.get("FunctionArn")) {
                return Err(invalid(
                    api,
                    format!("{name} Lambda Authorizer must define 'FunctionArn'."),
                ));
            }
            if !truthy(a.get("AuthorizerPayloadFormatVersion")) {
                return Err(invalid(
                    api,
                    format!(
                        "{name} Lambda Authorizer must define 'AuthorizerPayloadFormatVersion'."
                    ),
                ));
            }
        }
        let default_permissions = present(a, "EnableFunctionDefaultPermissions");
        if default_permissions
            .as_ref()
            .is_some_and(|v| !v.is_boolean())
        {
            return Err(invalid(
                api,
                format!(
                    "Property 'Authorizers.{name}.EnableFunctionDefaultPermissions' should be a boolean."
                ),
            ));
        }
        Ok(Authorizer {
            name: name.to_string(),
            scopes: present(a, "AuthorizationScopes"),
            jwt,
            id_source: present(a, "IdentitySource"),
            function_arn: present(a, "FunctionArn"),
            invoke_role: present(a, "FunctionInvokeRole"),
            identity: present(a, "Identity"),
            payload_version: present(a, "AuthorizerPayloadFormatVersion"),
            simple_responses: present(a, "EnableSimpleResponses"),
            default_permissions,
            iam: false,
        })
    }

    /// `generate_openapi`: the authorizer's security scheme.
    fn openapi(&self, api: &str, partition: &str) -> Result<Value, String> {
        if self.iam {
            return Ok(json!({
                "type": "apiKey",
                "name": "Authorization",
                "in": "header",
                "x-amazon-apigateway-authtype": "awsSigv4",
            }));
        }
        if let Some(jwt) = &self.jwt {
            return Ok(json!({
                "type": "oauth2",
                AUTHORIZER_KEY: {
                    "jwtConfiguration": jwt,
                    "identitySource": self.id_source,
                    "type": "jwt",
                },
            }));
        }
        let mut a = Map::new();
        a.insert("type".into(), json!("request"));
        a.insert(
            "authorizerUri".into(),
            json!({"Fn::Sub": [
                format!("arn:{partition}:apigateway:${{AWS::Region}}:lambda:path/2015-03-31/functions/${{__FunctionArn__}}/invocations"),
                {"__FunctionArn__": self.function_arn},
            ]}),
        );
        if let Some(role) = self
            .invoke_role
            .as_ref()
            .filter(|r| truthy(Some(r)) && r.as_str() != Some("NONE"))
        {
            a.insert("authorizerCredentials".into(), role.clone());
        }
        if let Some(identity) = self.identity.as_ref().filter(|i| truthy(Some(i))) {
            let Some(identity) = identity.as_object() else {
                return Err(invalid(
                    api,
                    format!(
                        "Property 'Auth.Authorizers.{}.Identity' should be a map.",
                        self.name
                    ),
                ));
            };
            if let Some(ttl) = present(identity, "ReauthorizeEvery") {
                a.insert("authorizerResultTtlInSeconds".into(), ttl);
            }
            let mut sources = Vec::new();
            for (prefix, property) in [
                ("$request.header.", "Headers"),
                ("$request.querystring.", "QueryStrings"),
                ("$stageVariables.", "StageVariables"),
                ("$context.", "Context"),
            ] {
                let Some(values) = identity.get(property).filter(|v| truthy(Some(v))) else {
                    continue;
                };
                let path = format!("Authorizers.{}.Identity.{property}", self.name);
                let Some(values) = values.as_array() else {
                    return Err(invalid(api, format!("Property '{path}' should be a list.")));
                };
                for (i, v) in values.iter().enumerate() {
                    let Some(s) = v.as_str() else {
                        return Err(invalid(
                            api,
                            format!("Property '{path}[{i}]' should be a string."),
                        ));
                    };
                    sources.push(json!(format!("{prefix}{s}")));
                }
            }
            a.insert("identitySource".into(), Value::Array(sources));
        }
        a.insert(
            "authorizerPayloadFormatVersion".into(),
            self.payload_version.clone().unwrap_or(Value::Null),
        );
        if let Some(simple) = self.simple_responses.as_ref().filter(|v| truthy(Some(v))) {
            a.insert("enableSimpleResponses".into(), simple.clone());
        }
        Ok(json!({"type": "apiKey", "name": "Unused", "in": "header", AUTHORIZER_KEY: a}))
    }

    fn default_scopes(&self) -> Value {
        self.scopes.clone().unwrap_or(json!([]))
    }
}

/// The Auth's keys, checked as the translator checks them.
fn auth_map<'a>(id: &str, auth: &'a Value) -> Result<&'a Map<String, Value>, String> {
    let Some(a) = auth.as_object() else {
        return Err(invalid(id, "Type of property 'Auth' is invalid."));
    };
    if !a.keys().all(|k| AUTH_PROPERTIES.contains(&k.as_str())) {
        return Err(invalid(id, "Invalid value for 'Auth' property"));
    }
    Ok(a)
}

/// `_get_authorizers`: AWS_IAM first when enabled, then the configured ones.
fn authorizers(id: &str, auth: &Map<String, Value>) -> Result<Vec<Authorizer>, String> {
    let mut out = Vec::new();
    if auth.get("EnableIamAuthorizer") == Some(&json!(true)) {
        out.push(Authorizer::iam());
    }
    let Some(config) = auth.get("Authorizers").filter(|c| truthy(Some(c))) else {
        return Ok(out);
    };
    let Some(config) = config.as_object() else {
        return Err(invalid(id, "Property 'Auth.Authorizers' should be a map."));
    };
    for (name, a) in config {
        let Some(a) = a.as_object() else {
            return Err(invalid(
                id,
                format!("Property 'Auth.Authorizers.{name}' should be a map."),
            ));
        };
        if a.contains_key("OpenIdConnectUrl") {
            return Err(invalid(
                id,
                format!(
                    "'OpenIdConnectUrl' is no longer a supported property for authorizer '{name}'. Please refer to the AWS SAM documentation."
                ),
            ));
        }
        let built = Authorizer::new(id, name, a)?;
        out.retain(|o: &Authorizer| o.name != built.name);
        out.push(built);
    }
    Ok(out)
}

fn structure(id: &str, message: impl std::fmt::Display) -> String {
    invalid(id, crate::structure(message))
}

/// `_add_auth`: the API's authorizers and default authorizer written into its body.
pub fn add_api_auth(
    id: &str,
    body: Option<&mut Value>,
    auth: &Value,
    partition: &str,
) -> Result<(), String> {
    let Some(body) = body else {
        return Err(invalid(
            id,
            "Auth works only with inline OpenApi specified in the 'DefinitionBody' property.",
        ));
    };
    let auth = auth_map(id, auth)?;
    if !crate::api::is_openapi(body) {
        return Err(invalid(
            id,
            "Unable to add Auth configuration because 'DefinitionBody' does not contain a valid OpenApi definition.",
        ));
    }
    let list = authorizers(id, auth)?;
    let mut schemes = match body.pointer("/components/securitySchemes") {
        Some(Value::Object(s)) => s.clone(),
        None | Some(Value::Null) => Map::new(),
        Some(_) => Map::new(),
    };
    for a in &list {
        schemes.insert(a.name.clone(), a.openapi(id, partition)?);
    }
    if let Some(default) = auth
        .get("DefaultAuthorizer")
        .filter(|d| truthy(Some(d)) && !is_no_value(d))
    {
        let Some(default) = default.as_str() else {
            return Err(invalid(
                id,
                "Property 'Auth.DefaultAuthorizer' should be a string.",
            ));
        };
        let Some(chosen) = list.iter().find(|a| a.name == default) else {
            return Err(invalid(
                id,
                format!(
                    "Unable to set DefaultAuthorizer because '{default}' was not defined in 'Authorizers'."
                ),
            ));
        };
        set_default_authorizer(id, body, default, &chosen.default_scopes())?;
    }
    if !schemes.is_empty()
        && let Some(doc) = body.as_object_mut()
    {
        let components = doc.entry("components").or_insert_with(|| json!({}));
        if !truthy(Some(components)) || !components.is_object() {
            *components = json!({});
        }
        components["securitySchemes"] = Value::Object(schemes);
    }
    Ok(())
}

/// `set_path_default_authorizer` over every path: each integrated method (but OPTIONS) without
/// a `security` of its own gets the default.
fn set_default_authorizer(
    id: &str,
    body: &mut Value,
    default: &str,
    scopes: &Value,
) -> Result<(), String> {
    let Some(paths) = body.get_mut("paths").and_then(Value::as_object_mut) else {
        return Ok(());
    };
    for (path, item) in paths.iter_mut() {
        for item in contents_mut(item) {
            let Some(item) = item.as_object_mut() else {
                return Err(structure(
                    id,
                    format!(
                        "Value of '{path}' path must be a dictionary according to Swagger spec."
                    ),
                ));
            };
            for (method, def) in item.iter_mut() {
                let normalized = method.to_ascii_lowercase();
                if normalized == "parameters" || normalized == "options" {
                    continue;
                }
                for def in contents_mut(def) {
                    let Some(def) = def.as_object_mut() else {
                        return Err(structure(
                            id,
                            format!(
                                "Definition of method '{method}' for path '{path}' should be a map."
                            ),
                        ));
                    };
                    if !truthy(def.get(INTEGRATION)) || truthy(def.get("security")) {
                        continue;
                    }
                    def.insert("security".into(), json!([{default: scopes}]));
                }
            }
        }
    }
    Ok(())
}

/// `_add_auth_to_openapi_integration`: an HttpApi event's Authorizer (or the API's default)
/// and scopes on its route.
pub fn add_event_auth(
    sam: &Sam,
    event_name: &str,
    api_id: &str,
    api: &Map<String, Value>,
    body: &mut Value,
    (path, method): (&str, &str),
    event_auth: &Value,
) -> Result<(), String> {
    let event_error = |m: String| invalid_event(sam.id, event_name, m);
    let Some(event_auth) = event_auth.as_object() else {
        return Err(event_error("Type of property 'Auth' is invalid.".into()));
    };
    let empty = Map::new();
    let api_auth = match api.get("Auth") {
        None => &empty,
        Some(Value::Object(a)) => a,
        Some(_) => return Err(invalid(api_id, "Property 'Auth' should be a map.")),
    };
    let authorizer = match event_auth.get("Authorizer").filter(|a| truthy(Some(a))) {
        Some(a) => a.clone(),
        None => match api_auth
            .get("DefaultAuthorizer")
            .filter(|d| truthy(Some(d)))
        {
            Some(d) => d.clone(),
            None => {
                return Err(event_error(
                    "'Auth' section requires either an explicit 'Authorizer' set or a 'DefaultAuthorizer' configured on the HttpApi.".into(),
                ));
            }
        },
    };
    let shown = crate::py27::Py::from_template(&authorizer).to_str();
    let api_authorizers = api_auth.get("Authorizers").filter(|a| truthy(Some(a)));
    let iam_enabled = api_auth.get("EnableIamAuthorizer") == Some(&json!(true));
    let name = authorizer.as_str();
    let checked = name == Some("NONE") || (name == Some(IAM) && iam_enabled);
    if !checked && (name.is_none() || !api_authorizers.is_some_and(Value::is_object)) {
        return Err(event_error(format!(
            "Unable to set Authorizer [{shown}] on API method [{method}] for path [{path}]. The method authorizer must be a string with a corresponding dict entry in the api authorizer."
        )));
    }
    if name == Some("NONE") {
        if !truthy(api_auth.get("DefaultAuthorizer")) {
            return Err(event_error(format!(
                "Unable to set Authorizer on API method [{method}] for path [{path}] because 'NONE' is only a valid value when a DefaultAuthorizer on the API is specified."
            )));
        }
    } else if !(name == Some(IAM) && iam_enabled) {
        if api_authorizers.is_none() {
            return Err(event_error(format!(
                "Unable to set Authorizer [{shown}] on API method [{method}] for path [{path}] because the related API does not define any Authorizers."
            )));
        }
        if !truthy(api_authorizers.and_then(|a| a.get(name.unwrap_or("")))) {
            return Err(event_error(format!(
                "Unable to set Authorizer [{shown}] on API method [{method}] for path [{path}] because it wasn't defined in the API's Authorizers."
            )));
        }
    }
    let event_scopes = event_auth
        .get("AuthorizationScopes")
        .filter(|s| truthy(Some(s)));
    if event_scopes.is_some_and(|s| !s.is_array()) {
        return Err(event_error(format!(
            "Unable to set Authorizer on API method [{method}] for path [{path}] because 'AuthorizationScopes' must be a list of strings."
        )));
    }
    let name = name.unwrap_or_default();
    let mut entry = json!([]);
    if name != "NONE" && name != IAM {
        let own = api_authorizers.and_then(|a| a.get(name));
        if own.is_some_and(|o| !o.is_null() && !o.is_object()) {
            return Err(structure(
                sam.id,
                format!("Type of authorizer '{name}' must be a dictionary"),
            ));
        }
        let mut scopes = own.and_then(|o| o.get("AuthorizationScopes")).cloned();
        if event_scopes.is_some() {
            scopes = event_scopes.cloned();
        }
        if truthy(own)
            && let Some(s) = scopes.filter(|s| truthy(Some(s)))
        {
            entry = s;
        }
    }
    let key = crate::api::normalize_method(method);
    let Some(item) = body.get_mut("paths").and_then(|p| p.get_mut(path)) else {
        return Ok(());
    };
    for item in contents_mut(item) {
        let Some(def) = item.get_mut(&key) else {
            continue;
        };
        for def in contents_mut(def) {
            let Some(def) = def.as_object_mut() else {
                return Err(structure(
                    sam.id,
                    format!("Definition of method '{method}' for path '{path}' should be a map."),
                ));
            };
            if !truthy(def.get(INTEGRATION)) {
                continue;
            }
            let mut security = match def.get("security") {
                None => Vec::new(),
                Some(Value::Array(l)) => l.clone(),
                Some(_) => {
                    return Err(structure(
                        sam.id,
                        format!("Type of security for path {path} method {method} must be a list"),
                    ));
                }
            };
            security.push(json!({name: entry.clone()}));
            def.insert("security".into(), Value::Array(security));
        }
    }
    Ok(())
}

/// `_construct_authorizer_lambda_permission`: a Lambda authorizer that enables its default
/// permission may be invoked by this API's authorizers.
pub fn permissions(sam: &Sam, auth: &Value) -> Result<Vec<Res>, String> {
    let auth = auth_map(sam.id, auth)?;
    let mut out = Vec::new();
    for a in authorizers(sam.id, auth)? {
        let Some(arn) = a.function_arn.as_ref().filter(|f| truthy(Some(f))) else {
            continue;
        };
        if !truthy(a.default_permissions.as_ref()) {
            continue;
        }
        let mut p = Res::new(
            format!("{}{}AuthorizerPermission", sam.id, a.name),
            "AWS::Lambda::Permission",
            sam.passthrough(),
        );
        p.put("Action", json!("lambda:InvokeFunction"));
        p.put("FunctionName", arn.clone());
        p.put("Principal", json!("apigateway.amazonaws.com"));
        p.put(
            "SourceArn",
            json!({"Fn::Sub": [
                "arn:${AWS::Partition}:execute-api:${AWS::Region}:${AWS::AccountId}:${__ApiId__}/authorizers/*",
                {"__ApiId__": reference(sam.id)}
            ]}),
        );
        out.push(p);
    }
    Ok(out)
}

/// The implicit plugin's `_add_route_settings_to_api`: an event's RouteSettings merged into
/// its API's, under the route key (`GET /path`, or the path alone for the any-method).
pub fn merge_route_settings(
    fn_id: &str,
    event_id: &str,
    api_id: &str,
    api: &mut Map<String, Value>,
    (path, method): (&str, &str),
    settings: &Value,
) -> Result<(), String> {
    let route = if method == crate::api::ANY_METHOD {
        path.to_string()
    } else {
        format!("{} {path}", method.to_uppercase())
    };
    let mut all = match api.get("RouteSettings") {
        None => Map::new(),
        Some(Value::Object(o)) => o.clone(),
        Some(_) => {
            return Err(invalid(api_id, "Property 'RouteSettings' should be a map."));
        }
    };
    let Some(settings) = settings.as_object() else {
        return Err(invalid_event(
            fn_id,
            event_id,
            "Property 'RouteSettings' should be a map.",
        ));
    };
    let entry = all.entry(route).or_insert_with(|| json!({}));
    let Some(entry) = entry.as_object_mut() else {
        return Err(invalid(
            api_id,
            "Property 'RouteSettings' should be a map of maps.",
        ));
    };
    for (k, v) in settings {
        entry.insert(k.clone(), v.clone());
    }
    api.insert("RouteSettings".into(), Value::Object(all));
    Ok(())
}
