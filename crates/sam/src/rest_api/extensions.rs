//! The swagger extensions an Api's properties write: Cors, GatewayResponses and Models.

use super::*;

pub(crate) const ALL_HTTP_METHODS: [&str; 7] =
    ["OPTIONS", "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"];

/// `_add_cors`: an OPTIONS mock method answering the CORS headers on every path without one.
pub(crate) fn add_cors(id: &str, body: &mut Py, cors: &Value) -> Result<(), String> {
    const FIELDS: [&str; 5] = [
        "AllowMethods",
        "AllowHeaders",
        "AllowOrigin",
        "MaxAge",
        "AllowCredentials",
    ];
    let mut props: BTreeMap<&str, Py> = BTreeMap::new();
    match cors {
        Value::String(_) => {
            props.insert("AllowOrigin", Py::from_template(cors));
        }
        v if crate::resource::is_intrinsic(v) => {
            props.insert("AllowOrigin", Py::from_template(cors));
        }
        Value::Object(o) => {
            for (k, v) in o {
                let Some(field) = FIELDS.iter().find(|f| **f == k.as_str()) else {
                    return Err(invalid(
                        id,
                        format!("Invalid key '{k}' for 'Cors' property."),
                    ));
                };
                props.insert(field, Py::from_template(v));
            }
        }
        _ => return Err(invalid(id, "Invalid value for 'Cors' property")),
    }
    let origin = props.get("AllowOrigin").cloned().unwrap_or(Py::str("'*'"));
    let credentials = props
        .get("AllowCredentials")
        .cloned()
        .unwrap_or(Py::Bool(false));
    if !is_valid(body) {
        return Err(invalid(
            id,
            "Unable to add Cors configuration because 'DefinitionBody' does not contain a valid Swagger definition.",
        ));
    }
    if credentials == Py::Bool(true) && origin.as_str() == Some("'*'") {
        return Err(invalid(
            id,
            "Unable to add Cors configuration because 'AllowCredentials' can not be true when 'AllowOrigin' is \"'*'\" or not set",
        ));
    }
    let mut editor = Editor::new(body).map_err(|e| invalid(id, e))?;
    let mut seen = Vec::new();
    for path in editor.paths().keys() {
        let normalized = if path == "/" {
            path.clone()
        } else {
            path.trim_end_matches('/').to_string()
        };
        if seen.contains(&normalized) {
            continue;
        }
        seen.push(normalized);
        let Some(item) = editor.path_item_mut(&path) else {
            continue;
        };
        if item.contains("options") {
            continue;
        }
        if !origin.truthy() {
            return Err(invalid(
                id,
                "Invalid input. Value for AllowedOrigins is required",
            ));
        }
        let methods = match props.get("AllowMethods").filter(|m| m.truthy()) {
            Some(m) => m.clone(),
            None => {
                let keys = item.keys();
                let mut all: Vec<String> = if keys.iter().any(|k| k == ANY_METHOD) {
                    ALL_HTTP_METHODS.iter().map(|m| m.to_string()).collect()
                } else {
                    keys.iter()
                        .map(|k| k.to_uppercase())
                        .chain(["OPTIONS".to_string()])
                        .collect()
                };
                all.sort();
                all.dedup();
                Py::str(&format!("'{}'", all.join(",")))
            }
        };
        let options = cors_options(
            &origin,
            props.get("AllowHeaders").filter(|h| h.truthy()),
            &methods,
            props.get("MaxAge").filter(|m| !matches!(m, Py::None)),
            credentials == Py::Bool(true),
        );
        item.set("options", false, options);
    }
    *body = editor.swagger();
    Ok(())
}

/// `_options_method_response_for_cors`.
pub(crate) fn cors_options(
    origin: &Py,
    headers: Option<&Py>,
    methods: &Py,
    max_age: Option<&Py>,
    credentials: bool,
) -> Py {
    let key = |h: &str| format!("method.response.header.{h}");
    let string = || Py::plain(&json!({"type": "string"}));
    let mut parameters = Dict::py27();
    parameters.update(vec![(
        key("Access-Control-Allow-Origin"),
        false,
        origin.clone(),
    )]);
    let mut response_headers = Dict::py27();
    response_headers.update(vec![(
        "Access-Control-Allow-Origin".into(),
        false,
        string(),
    )]);
    if let Some(h) = headers {
        parameters.set(&key("Access-Control-Allow-Headers"), false, h.clone());
        response_headers.set("Access-Control-Allow-Headers", false, string());
    }
    if methods.truthy() {
        parameters.set(&key("Access-Control-Allow-Methods"), false, methods.clone());
        response_headers.set("Access-Control-Allow-Methods", false, string());
    }
    if let Some(m) = max_age {
        parameters.set(&key("Access-Control-Max-Age"), false, m.clone());
        response_headers.set(
            "Access-Control-Max-Age",
            false,
            Py::plain(&json!({"type": "integer"})),
        );
    }
    if credentials {
        parameters.set(
            &key("Access-Control-Allow-Credentials"),
            false,
            Py::str("'true'"),
        );
        response_headers.set("Access-Control-Allow-Credentials", false, string());
    }
    let mut default = Dict::py27();
    default.set("statusCode", false, Py::str("200"));
    default.set("responseParameters", false, Py::Dict(parameters));
    default.set(
        "responseTemplates",
        false,
        Py::plain(&json!({"application/json": "{}\n"})),
    );
    let mut responses = Dict::py27();
    responses.set("default", false, Py::Dict(default));
    let mut integration = Dict::py27();
    integration.set("type", false, Py::str("mock"));
    integration.set(
        "requestTemplates",
        false,
        Py::plain(&json!({"application/json": "{\n  \"statusCode\" : 200\n}\n"})),
    );
    integration.set("responses", false, Py::Dict(responses));
    let mut ok = Dict::py27();
    ok.set(
        "description",
        false,
        Py::str("Default response for CORS method"),
    );
    ok.set("headers", false, Py::Dict(response_headers));
    let mut method_responses = Dict::py27();
    method_responses.set("200", false, Py::Dict(ok));
    let mut out = Dict::py27();
    out.set("summary", false, Py::str("CORS support"));
    out.set("consumes", false, Py::plain(&json!(["application/json"])));
    out.set("produces", false, Py::plain(&json!(["application/json"])));
    out.set(INTEGRATION, false, Py::Dict(integration));
    out.set("responses", false, Py::Dict(method_responses));
    Py::Dict(out)
}

pub(crate) const GATEWAY_RESPONSE_PROPERTIES: [&str; 3] =
    ["ResponseParameters", "ResponseTemplates", "StatusCode"];

/// `_add_gateway_responses`: `x-amazon-apigateway-gateway-responses`.
pub(crate) fn add_gateway_responses(
    id: &str,
    body: &mut Py,
    responses: &Value,
) -> Result<(), String> {
    let Some(given) = responses.as_object() else {
        return Err(invalid(id, "Property 'GatewayResponses' should be a map."));
    };
    for (name, r) in given {
        if crate::resource::is_intrinsic(r) {
            return Err(invalid(
                id,
                "Unable to set GatewayResponses attribute because intrinsic functions are not supported for this field.",
            ));
        }
        let Some(r) = r.as_object() else {
            return Err(invalid(
                id,
                format!(
                    "Invalid property type '{}' for GatewayResponses. Expected an object of type 'GatewayResponse'.",
                    python_type(r)
                ),
            ));
        };
        for k in r.keys() {
            if !GATEWAY_RESPONSE_PROPERTIES.contains(&k.as_str()) {
                return Err(invalid(
                    id,
                    format!("Invalid property '{k}' in 'GatewayResponses' property '{name}'."),
                ));
            }
        }
        if let Some(Value::Object(params)) = r.get("ResponseParameters") {
            for k in params.keys() {
                if !["Headers", "Paths", "QueryStrings"].contains(&k.as_str()) {
                    return Err(invalid(
                        id,
                        format!("Invalid gateway response parameter '{k}'"),
                    ));
                }
            }
        }
    }
    if !is_valid(body) {
        return Err(invalid(
            id,
            "Unable to add Auth configuration because 'DefinitionBody' does not contain a valid Swagger definition.",
        ));
    }
    let converted = Py::from_template(responses);
    let mut editor = Editor::new(body).map_err(|e| invalid(id, e))?;
    const KEY: &str = "x-amazon-apigateway-gateway-responses";
    let mut all = match editor.doc.get(KEY) {
        Some(Py::Dict(d)) if !d.is_empty() => d.clone(),
        _ => Dict::py27(),
    };
    for (name, uni, r) in converted.as_dict().map(Dict::items).unwrap_or_default() {
        let r = r.as_dict().cloned().unwrap_or_else(Dict::py27);
        let empty = || Py::Dict(Dict::py27());
        let parameters = r.get("ResponseParameters").cloned().unwrap_or_else(empty);
        let templates = r
            .get("ResponseTemplates")
            .filter(|t| t.truthy())
            .cloned()
            .unwrap_or_else(empty);
        let mut prefixed = Dict::py27();
        for (property, prefix) in [
            ("Headers", "header."),
            ("Paths", "path."),
            ("QueryStrings", "querystring."),
        ] {
            match parameters.as_dict().and_then(|p| p.get(property)) {
                None => {}
                Some(Py::Dict(values)) => {
                    for (k, k_uni, v) in values.items() {
                        prefixed.set(&format!("gatewayresponse.{prefix}{k}"), k_uni, v);
                    }
                }
                Some(_) => {
                    return Err(invalid(
                        id,
                        format!("Property 'ResponseParameters.{property}' should be a map."),
                    ));
                }
            }
        }
        let mut swagger = Dict::py27();
        swagger.set("responseParameters", false, Py::Dict(prefixed));
        swagger.set("responseTemplates", false, templates);
        if let Some(code) = r.get("StatusCode").filter(|c| c.truthy()) {
            // `str(status_code)`: a plain string.
            swagger.set("statusCode", false, Py::str(&code.to_str()));
        }
        all.set(&name, uni, Py::Dict(swagger));
    }
    if !all.is_empty() {
        editor.doc.set(KEY, false, Py::Dict(all));
    }
    *body = editor.swagger();
    Ok(())
}

pub(crate) fn python_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// `_add_models`: each model's schema under `definitions`, by its lower-cased name.
pub(crate) fn add_models(id: &str, body: &mut Py, models: &Value) -> Result<(), String> {
    if !is_valid(body) {
        return Err(invalid(
            id,
            "Unable to add Models definitions because 'DefinitionBody' does not contain a valid Swagger definition.",
        ));
    }
    let Some(given) = models.as_object() else {
        return Err(invalid(id, "Invalid value for 'Models' property"));
    };
    if !given.values().all(Value::is_object) {
        return Err(invalid(id, "Invalid value for 'Models' property"));
    }
    let converted = Py::from_template(models);
    let mut editor = Editor::new(body).map_err(|e| invalid(id, e))?;
    let mut definitions = match editor.doc.get("definitions") {
        Some(Py::Dict(d)) if !d.is_empty() => d.clone(),
        _ => Dict::py27(),
    };
    for (name, uni, schema) in converted.as_dict().map(Dict::items).unwrap_or_default() {
        if !schema
            .as_dict()
            .and_then(|s| s.get("type"))
            .is_some_and(Py::truthy)
        {
            return Err(structure_error("'Models' schema is missing 'type'."));
        }
        definitions.set(&name.to_lowercase(), uni, schema);
    }
    if !definitions.is_empty() {
        editor.doc.set("definitions", false, Py::Dict(definitions));
    }
    *body = editor.swagger();
    Ok(())
}

pub(crate) fn structure_error(message: &str) -> String {
    crate::structure(message)
}
