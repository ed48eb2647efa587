//! REST APIs: AWS::Serverless::Api and functions' `Api` events, as the translator makes them.
//!
//! Three passes, in the translator's order: before Globals, every Api without a definition gets
//! SAM's swagger skeleton and the implicit `ServerlessRestApi` gathers the events that name no
//! `RestApiId` (each event's path and method added to its API's swagger); during each
//! function's translation, its Api events add their Lambda proxy integrations and permissions;
//! last, each Api becomes an AWS::ApiGateway::RestApi, a Deployment and a Stage.
//!
//! The swagger bodies live as [`Py`] values, the translator's Python 2.7 emulation, because the
//! Deployment's logical id hashes `str(swagger)`: every copy and insertion the translator makes
//! of a body is made here in the same order, so the dicts print in the same order.

use crate::events::Event;
use crate::function::Target;
use crate::py27::{Dict, Py};
use crate::resource::{Res, Sam, reference, tag_list, truthy};
use crate::{Translation, invalid, invalid_event, pyjson, unsupported};
use serde_json::{Map, Value, json};
use sha1::{Digest, Sha1};
use std::collections::BTreeMap;

pub const API: &str = "AWS::Serverless::Api";
const IMPLICIT: &str = "ServerlessRestApi";
const IMPLICIT_HTTP: &str = "ServerlessHttpApi";
pub(crate) const ANY_METHOD: &str = "x-amazon-apigateway-any-method";
pub(crate) const INTEGRATION: &str = "x-amazon-apigateway-integration";
const BINARY_MEDIA_TYPES: &str = "x-amazon-apigateway-binary-media-types";

/// Each REST API's swagger body (by the API's logical id), as the translator holds it.
#[derive(Debug, Default)]
pub struct Bodies {
    bodies: BTreeMap<String, Py>,
    /// Per API, the concatenated FunctionNames of the functions whose Api events name it: part
    /// of the Deployment's hash.
    function_names: BTreeMap<String, String>,
    /// The template's Resources as the translator's converted dict (its keys' history), when
    /// it has a REST API.
    resources: Option<Dict>,
    /// The `SHARED` usage plan gathered over the APIs.
    shared: crate::rest_auth::SharedUsagePlan,
    /// The Route 53 record set groups the APIs' domains share.
    record_sets: crate::rest_domain::RecordSetGroups,
}

impl Bodies {
    /// The resources' iteration order, when the translator converted the template.
    pub fn order(&self) -> Option<Vec<String>> {
        self.resources.as_ref().map(Dict::keys)
    }

    /// The implicit HTTP API plugin's passage through the Resources dict: `ServerlessHttpApi`
    /// set, and deleted again unless kept.
    pub fn http_api_plugin(&mut self, kept: bool) {
        if let Some(d) = &mut self.resources {
            d.set(IMPLICIT_HTTP, false, Py::None);
            if !kept {
                d.remove(IMPLICIT_HTTP);
            }
        }
    }
}

fn skeleton() -> Py {
    let mut info = Dict::py27();
    info.set("version", false, Py::str("1.0"));
    info.set("title", false, Py::plain(&json!({"Ref": "AWS::StackName"})));
    let mut s = Dict::py27();
    s.set("swagger", false, Py::str("2.0"));
    s.set("info", false, Py::Dict(info));
    s.set("paths", false, Py::Dict(Dict::py27()));
    Py::Dict(s)
}

fn openapi3(v: &str) -> bool {
    let mut parts = v.split('.');
    parts.next() == Some("3") && {
        let rest: Vec<&str> = parts.collect();
        (1..=2).contains(&rest.len())
            && rest
                .iter()
                .all(|p| p.len() == 1 && p.chars().all(|c| c.is_ascii_digit()))
    }
}

/// `SwaggerEditor.is_valid`.
pub(crate) fn is_valid(body: &Py) -> bool {
    let Some(d) = body.as_dict() else {
        return false;
    };
    if !matches!(d.get("paths"), Some(Py::Dict(_))) {
        return false;
    }
    if d.get("swagger").is_some_and(Py::truthy) {
        return true;
    }
    d.get("openapi")
        .filter(|v| v.truthy())
        .and_then(Py::as_str)
        .is_some_and(openapi3)
}

/// `_normalize_method_name`: lower case (keeping the template's unicode mark), `any` as API
/// Gateway's any-method.
pub(crate) fn normalize(method: &str, uni: bool) -> (String, bool) {
    let m = method.to_lowercase();
    if m == "any" {
        (ANY_METHOD.to_string(), false)
    } else {
        (m, uni)
    }
}

/// The swagger editor over a deep copy of a body (the translator's `SwaggerEditor(doc)`).
pub(crate) struct Editor {
    pub(crate) doc: Dict,
}

impl Editor {
    pub(crate) fn new(body: &Py) -> Result<Editor, String> {
        if !is_valid(body) {
            return Err(
                "Invalid Swagger document or the Swagger document is not explicitly defined in 'DefinitionBody'."
                    .into(),
            );
        }
        let doc = body
            .as_dict()
            .map(Dict::deepcopy)
            .unwrap_or_else(Dict::py27);
        let editor = Editor { doc };
        for path in editor
            .doc
            .get("paths")
            .and_then(Py::as_dict)
            .map(Dict::keys)
            .unwrap_or_default()
        {
            if let Some(item) = editor.paths().get(&path) {
                match item {
                    Py::Dict(d) if d.contains("Fn::If") => {
                        return Err(format!(
                            "A path given with Fn::If ({path}) is not supported by cumulo's SAM transform."
                        ));
                    }
                    Py::Dict(_) => {}
                    _ => {
                        return Err(format!(
                            "Value of '{path}' path must be a dictionary according to Swagger spec."
                        ));
                    }
                }
            }
        }
        Ok(editor)
    }

    pub(crate) fn paths(&self) -> &Dict {
        static EMPTY: std::sync::OnceLock<Dict> = std::sync::OnceLock::new();
        self.doc
            .get("paths")
            .and_then(Py::as_dict)
            .unwrap_or_else(|| EMPTY.get_or_init(Dict::plain))
    }

    pub(crate) fn paths_mut(&mut self) -> Option<&mut Dict> {
        self.doc.get_mut("paths").and_then(Py::as_dict_mut)
    }

    fn method(&self, path: &str, method: &str) -> Option<&Py> {
        self.paths().get(path)?.as_dict()?.get(method)
    }

    pub(crate) fn method_mut(&mut self, path: &str, method: &str) -> Option<&mut Dict> {
        self.paths_mut()?
            .get_mut(path)?
            .as_dict_mut()?
            .get_mut(method)?
            .as_dict_mut()
    }

    fn has_integration(&self, path: &str, method: &str) -> bool {
        let (m, _) = normalize(method, false);
        self.method(path, &m)
            .and_then(Py::as_dict)
            .and_then(|d| d.get(INTEGRATION))
            .is_some_and(Py::truthy)
    }

    /// `add_path`: the path item and the method, unless present.
    fn add_path(
        &mut self,
        path: &str,
        path_uni: bool,
        method: &str,
        method_uni: bool,
    ) -> Result<(), String> {
        let (m, m_uni) = normalize(method, method_uni);
        let Some(paths) = self.paths_mut() else {
            return Ok(());
        };
        let item = paths.setdefault(path, path_uni, Py::Dict(Dict::py27()));
        let Some(item) = item.as_dict_mut() else {
            return Err(format!(
                "Value of '{path}' path must be a dictionary according to Swagger spec."
            ));
        };
        item.setdefault(&m, m_uni, Py::Dict(Dict::py27()));
        Ok(())
    }

    /// The editor's `swagger`: a deep copy of its document.
    pub(crate) fn swagger(&self) -> Py {
        Py::Dict(self.doc.deepcopy())
    }
}

/// Whether the template has a REST API (explicit, or an Api event): only then does the
/// translator convert it to its Python 2.7 types.
fn has_rest_api(resources: &Map<String, Value>) -> bool {
    resources.values().any(|r| {
        let ty = r.get("Type").and_then(Value::as_str);
        ty == Some(API)
            || (matches!(
                ty,
                Some("AWS::Serverless::Function" | "AWS::Serverless::StateMachine")
            ) && r
                .pointer("/Properties/Events")
                .and_then(Value::as_object)
                .is_some_and(|events| {
                    events
                        .values()
                        .any(|e| e.get("Type").and_then(Value::as_str) == Some("Api"))
                }))
    })
}

/// The translator's iteration order of a template-converted dict's keys.
fn py27_order<'a>(keys: impl Iterator<Item = &'a String>) -> Vec<String> {
    let mut d = Dict::py27();
    for k in keys {
        d.set(k, true, Py::None);
    }
    d.keys()
}

/// The Default Definition Body and implicit REST API plugins: bodies for every Api, the
/// implicit `ServerlessRestApi`, and each Api event's path in its API's managed swagger.
pub fn add_implicit(root: &mut Map<String, Value>) -> Result<Bodies, Vec<String>> {
    let mut bodies = Bodies::default();
    let Some(Value::Object(resources)) = root.get_mut("Resources") else {
        return Ok(bodies);
    };
    if !has_rest_api(resources) {
        return Ok(bodies);
    }
    let mut dict = Dict::py27();
    for k in resources.keys() {
        dict.set(k, true, Py::None);
    }
    for (id, r) in resources.iter_mut() {
        if r.get("Type").and_then(Value::as_str) != Some(API) {
            continue;
        }
        let Some(r) = r.as_object_mut() else { continue };
        let props = r.entry("Properties").or_insert_with(|| json!({}));
        let Some(p) = props.as_object_mut() else {
            continue;
        };
        if !truthy(p.get("DefinitionBody")) && !truthy(p.get("DefinitionUri")) {
            bodies.bodies.insert(id.clone(), skeleton());
            p.insert("__MANAGE_SWAGGER".into(), json!(true));
        } else if let Some(b) = p.get("DefinitionBody").filter(|b| !b.is_null()) {
            bodies.bodies.insert(id.clone(), Py::from_template(b));
        }
    }
    let existing = resources.get(IMPLICIT).cloned();
    dict.set(IMPLICIT, false, Py::None);
    let order = dict.keys();
    resources.insert(
        IMPLICIT.into(),
        json!({"Type": API, "Properties": {"StageName": "Prod", "__MANAGE_SWAGGER": true}}),
    );
    let previous_body = bodies.bodies.insert(IMPLICIT.into(), skeleton());
    let mut errors = Vec::new();
    let mut deletion = Vec::new();
    let mut replace = Vec::new();
    for id in &order {
        let Some(r) = resources.get(id.as_str()) else {
            continue;
        };
        let ty = r.get("Type").and_then(Value::as_str).unwrap_or("");
        if ty != "AWS::Serverless::Function" && ty != "AWS::Serverless::StateMachine" {
            continue;
        }
        let Some(Value::Object(events)) = r.pointer("/Properties/Events") else {
            continue;
        };
        let mut events = events.clone();
        // `_get_api_events`: a Py27Dict of the Api events, filled in the Events' own order.
        let api_events: Vec<String> = py27_order(py27_order(events.keys()).iter().filter(|name| {
            events[name.as_str()].get("Type").and_then(Value::as_str) == Some("Api")
        }));
        if api_events.is_empty() {
            continue;
        }
        let condition = r.get("Condition").cloned();
        let policies = (
            r.get("DeletionPolicy").cloned(),
            r.get("UpdateReplacePolicy").cloned(),
        );
        for name in api_events {
            let Some(event) = events.get_mut(&name) else {
                continue;
            };
            let props = match event.get_mut("Properties") {
                None | Some(Value::Null) => continue,
                Some(Value::Object(p)) if p.is_empty() => continue,
                Some(Value::Object(p)) => p,
                Some(_) => {
                    errors.push(invalid_event(id, &name, "Properties should be a map."));
                    continue;
                }
            };
            if condition.is_some() {
                errors.push(unsupported(
                    id,
                    "An Api event of a resource with a Condition",
                ));
                continue;
            }
            if !props.contains_key("RestApiId") {
                props.insert("RestApiId".into(), json!({"Ref": IMPLICIT}));
            }
            let api_id = match props.get("RestApiId") {
                Some(Value::Object(o)) if o.contains_key("Ref") => o["Ref"].clone(),
                Some(v) => v.clone(),
                None => Value::Null,
            };
            for p in ["Path", "Method"] {
                if props.get(p).is_none_or(Value::is_null) {
                    errors.push(invalid_event(
                        id,
                        &name,
                        format!("Property '{p}' is required."),
                    ));
                }
            }
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
                if props
                    .get("Path")
                    .is_some_and(|v| !v.is_null() && !v.is_string())
                {
                    errors.push(invalid_event(
                        id,
                        &name,
                        "Property 'Path' should be a string.",
                    ));
                } else if props
                    .get("Method")
                    .is_some_and(|v| !v.is_null() && !v.is_string())
                {
                    errors.push(invalid_event(
                        id,
                        &name,
                        "Property 'Method' should be a string.",
                    ));
                }
                continue;
            };
            let Some(api_id) = api_id.as_str().map(str::to_string) else {
                errors.push(invalid_event(
                    id,
                    &name,
                    "Property 'RestApiId' should be a string.",
                ));
                continue;
            };
            deletion.push((api_id.clone(), policies.0.clone()));
            replace.push((api_id.clone(), policies.1.clone()));
            let target_type = resources
                .get(&api_id)
                .and_then(|a| a.get("Type"))
                .and_then(Value::as_str);
            if target_type.is_none() || target_type == Some("AWS::Serverless::HttpApi") {
                errors.push(invalid_event(
                    id,
                    &name,
                    format!("RestApiId must be a valid reference to an '{API}' resource in same template."),
                ));
                continue;
            }
            let managed = resources
                .get(&api_id)
                .and_then(|a| a.pointer("/Properties/__MANAGE_SWAGGER"))
                .is_some_and(|v| truthy(Some(v)));
            if managed
                && let Some(body) = bodies.bodies.get_mut(&api_id)
                && is_valid(body)
            {
                match Editor::new(body) {
                    Ok(mut editor) => {
                        if let Err(e) = editor.add_path(&path, true, &method, true) {
                            errors.push(invalid(&api_id, e));
                            continue;
                        }
                        *body = editor.swagger();
                    }
                    Err(e) => errors.push(invalid(&api_id, e)),
                }
            }
        }
        if let Some(p) = resources
            .get_mut(id.as_str())
            .and_then(|r| r.get_mut("Properties"))
            .and_then(Value::as_object_mut)
        {
            p.insert("Events".into(), Value::Object(std::mem::take(&mut events)));
        }
    }
    if let Some(api) = resources.get_mut(IMPLICIT).and_then(Value::as_object_mut) {
        let pick = |list: &[(String, Option<Value>)], order: &[&str]| -> Option<&'static str> {
            let given: Vec<&str> = list
                .iter()
                .filter(|(a, _)| a == IMPLICIT)
                .filter_map(|(_, p)| p.as_ref().and_then(Value::as_str))
                .collect();
            order.iter().find(|o| given.contains(o)).map(|o| match *o {
                "Retain" => "Retain",
                "Snapshot" => "Snapshot",
                _ => "Delete",
            })
        };
        if let Some(p) = pick(&deletion, &["Retain", "Delete"]) {
            api.insert("DeletionPolicy".into(), json!(p));
        }
        if let Some(p) = pick(&replace, &["Retain", "Snapshot", "Delete"]) {
            api.insert("UpdateReplacePolicy".into(), json!(p));
        }
    }
    let empty = bodies
        .bodies
        .get(IMPLICIT)
        .and_then(Py::as_dict)
        .and_then(|d| d.get("paths"))
        .is_none_or(|p| !p.truthy());
    if empty {
        match existing {
            Some(e) => {
                resources.insert(IMPLICIT.into(), e);
                match previous_body {
                    Some(b) => bodies.bodies.insert(IMPLICIT.into(), b),
                    None => bodies.bodies.remove(IMPLICIT),
                };
            }
            None => {
                resources.shift_remove(IMPLICIT);
                bodies.bodies.remove(IMPLICIT);
                dict.remove(IMPLICIT);
            }
        }
    }
    sync(resources, &bodies);
    bodies.resources = Some(dict);
    if errors.is_empty() {
        Ok(bodies)
    } else {
        Err(errors)
    }
}

/// Writes the bodies back into the template (what Globals and other resources see).
fn sync(resources: &mut Map<String, Value>, bodies: &Bodies) {
    for (id, body) in &bodies.bodies {
        if let Some(p) = resources
            .get_mut(id)
            .and_then(|r| r.get_mut("Properties"))
            .and_then(Value::as_object_mut)
        {
            p.insert("DefinitionBody".into(), body.to_json());
        }
    }
}

/// The Globals plugin's `fix_openapi_definitions`: a managed body takes the API's
/// OpenApiVersion (3.x) as its `openapi`, losing `swagger`.
pub fn fix_openapi_definitions(root: &mut Map<String, Value>, bodies: &mut Bodies) {
    let Some(Value::Object(resources)) = root.get_mut("Resources") else {
        return;
    };
    for (id, r) in resources.iter() {
        if r.get("Type").and_then(Value::as_str) != Some(API) {
            continue;
        }
        let Some(p) = r.get("Properties") else {
            continue;
        };
        let Some(version) = p.get("OpenApiVersion").and_then(Value::as_str) else {
            continue;
        };
        if p.get("__MANAGE_SWAGGER").is_none() || !openapi3(version) {
            continue;
        }
        if let Some(Py::Dict(d)) = bodies.bodies.get_mut(id) {
            d.set("openapi", false, Py::uni(version));
            if d.get("swagger").is_some_and(Py::truthy) {
                d.remove("swagger");
            }
        }
    }
    sync(resources, bodies);
}

/// `Api.get_rest_api_id_string`.
fn api_id_string(v: &Value) -> Option<&str> {
    match v {
        Value::Object(o) if o.contains_key("Ref") => o["Ref"].as_str(),
        v => v.as_str(),
    }
}

const EVENT_PROPERTIES: [&str; 9] = [
    "Path",
    "Method",
    "RestApiId",
    "Stage",
    "Auth",
    "RequestModel",
    "RequestParameters",
    "TimeoutInMillis",
    "ResponseTransferMode",
];

/// A function's Api event: its permission, and the Lambda proxy integration written into a
/// managed body.
pub fn function_event(
    t: &mut Translation,
    sam: &Sam,
    event: &Event,
    target: &Target,
    live: &Map<String, Value>,
) -> Result<Vec<Res>, String> {
    for p in event.props.keys() {
        if !EVENT_PROPERTIES.contains(&p.as_str()) {
            return Err(invalid(
                &event.id,
                format!("property {p} not defined for resource of type Api"),
            ));
        }
    }
    let streaming = event
        .props
        .get("ResponseTransferMode")
        .and_then(Value::as_str)
        == Some("RESPONSE_STREAM");
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
        .to_lowercase();
    let raw_api = event
        .props
        .get("RestApiId")
        .cloned()
        .unwrap_or(json!({"Ref": IMPLICIT}));
    let Some(api_id) = api_id_string(&raw_api).map(str::to_string) else {
        return Err(invalid_event(
            sam.id,
            event.name,
            "A RestApiId that is not a reference to an API of the template is not supported by cumulo's SAM transform.",
        ));
    };
    let Some(api) = live.get(&api_id).filter(|a| a.is_object()) else {
        return Err(invalid(
            &event.id,
            "RestApiId property of Api event must reference a valid resource in the same template.",
        ));
    };
    let api_props = api.get("Properties").cloned().unwrap_or(json!({}));
    let suffix = match api_props.get("StageName") {
        Some(Value::String(s)) if s.is_empty() => {
            return Err(invalid(&api_id, "StageName cannot be empty."));
        }
        Some(Value::String(s)) => s.clone(),
        _ => "Stage".to_string(),
    };
    // The permission.
    let trimmed = if path.len() > 1 && path.ends_with('/') {
        &path[..path.len() - 1]
    } else {
        path.as_str()
    };
    let wildcarded = wildcard_parameters(trimmed);
    let m = if method == "any" {
        "*".to_string()
    } else {
        method.to_uppercase()
    };
    let arn = format!(
        "arn:{}:execute-api:${{AWS::Region}}:${{AWS::AccountId}}:${{__ApiId__}}/${{__Stage__}}/{m}{wildcarded}",
        t.ctx.partition
    );
    let perm_id = if suffix.chars().all(|c| c.is_alphanumeric()) && !suffix.is_empty() {
        format!("{}Permission{suffix}", event.id)
    } else {
        format!("{}Permission{}", event.id, pyjson::hash(&json!(suffix)))
    };
    let mut perm = Res::new(perm_id, "AWS::Lambda::Permission", target.attrs.clone());
    perm.put("Action", json!("lambda:InvokeFunction"));
    perm.put("FunctionName", target.name());
    perm.put("Principal", json!("apigateway.amazonaws.com"));
    perm.put(
        "SourceArn",
        json!({"Fn::Sub": [arn, {"__ApiId__": raw_api, "__Stage__": "*"}]}),
    );
    let managed = truthy(api_props.get("__MANAGE_SWAGGER"));
    if truthy(api_props.get("MergeDefinitions")) {
        return Err(unsupported(&api_id, "'MergeDefinitions'"));
    }
    if managed && let Some(body) = t.rest.bodies.get(&api_id) {
        let mut editor = Editor::new(body).map_err(|e| invalid(&api_id, e))?;
        if editor.has_integration(&path, &method) {
            return Err(invalid_event(
                sam.id,
                event.name,
                format!("API method \"{method}\" defined multiple times for path \"{path}\"."),
            ));
        }
        if target.attrs.contains_key("Condition") {
            return Err(unsupported(
                sam.id,
                "An Api event of a function with a Condition",
            ));
        }
        let function_arn = target.arn();
        let shorthand = match function_arn.get("Ref").and_then(Value::as_str) {
            Some(r) => format!("${{{r}}}"),
            None => format!("${{{}.Arn}}", target.id),
        };
        let (version, invocations) = if streaming {
            ("2021-11-15", "/response-streaming-invocations")
        } else {
            ("2015-03-31", "/invocations")
        };
        let uri = format!(
            "arn:{}:apigateway:${{AWS::Region}}:lambda:path/{version}/functions/{shorthand}{invocations}",
            t.ctx.partition
        );
        let mut uri_dict = Dict::py27();
        // The function's logical id comes from the template (a Py27UniStr), an alias's not.
        uri_dict.update(vec![(
            "Fn::Sub".into(),
            false,
            Py::Str(uri, !target.is_alias),
        )]);
        editor
            .add_path(&path, true, &method, true)
            .map_err(|e| invalid(&api_id, e))?;
        let (m, _) = normalize(&method, true);
        let Some(definition) = editor.method_mut(&path, &m) else {
            return Err(invalid(
                &api_id,
                format!("Value of '{path}' path must be a dictionary according to Swagger spec."),
            ));
        };
        let mut integration = Dict::py27();
        integration.set("type", false, Py::str("aws_proxy"));
        integration.set("httpMethod", false, Py::str("POST"));
        integration.set("uri", false, Py::Dict(uri_dict));
        if streaming {
            integration.set("responseTransferMode", false, Py::str("STREAM"));
        }
        let api_auth = api_props
            .get("Auth")
            .map(|a| crate::intrinsics::resolve_params(a, &t.params));
        if let Some(c) = crate::rest_auth::integration_credentials(
            event.props.get("Auth"),
            api_auth.as_ref(),
            &t.ctx.partition,
        ) {
            integration.set("credentials", false, c);
        }
        definition.set(INTEGRATION, false, Py::Dict(integration));
        definition.setdefault("responses", false, Py::Dict(Dict::py27()));
        if let Some(auth) = event.props.get("Auth").filter(|a| truthy(Some(a))) {
            crate::rest_auth::add_event_auth(
                sam,
                event,
                &mut editor,
                auth,
                api_auth.as_ref(),
                (&path, &method),
            )?;
        }
        let Some(definition) = editor.method_mut(&path, &m) else {
            return Err(invalid(
                &api_id,
                format!("Value of '{path}' path must be a dictionary according to Swagger spec."),
            ));
        };
        if let Some(timeout) = event
            .props
            .get("TimeoutInMillis")
            .filter(|v| truthy(Some(v)))
            && let Some(Py::Dict(i)) = definition.get_mut(INTEGRATION)
        {
            i.set("timeoutInMillis", false, Py::from_template(timeout));
        }
        if let Some(model) = event.props.get("RequestModel").filter(|v| truthy(Some(v))) {
            request_model(event, &mut editor, &api_props, (&path, &m), model)?;
        }
        let Some(definition) = editor.method_mut(&path, &m) else {
            return Err(invalid(
                &api_id,
                format!("Value of '{path}' path must be a dictionary according to Swagger spec."),
            ));
        };
        if let Some(params) = event
            .props
            .get("RequestParameters")
            .filter(|v| truthy(Some(v)))
        {
            request_parameters(sam.id, event, definition, params)?;
        }
        t.rest.bodies.insert(api_id.clone(), editor.swagger());
    }
    // OverrideApiAuth: the event's Auth applied (again) to the API's own body.
    let auth = event.props.get("Auth").filter(|a| truthy(Some(a)));
    if let Some(auth) = auth.filter(|a| a.get("OverrideApiAuth").is_some_and(|o| truthy(Some(o))))
        && let Some(body) = t.rest.bodies.get(&api_id).filter(|b| b.truthy())
    {
        if !["Authorizer", "ApiKeyRequired", "ResourcePolicy"]
            .iter()
            .any(|k| auth.get(*k).is_some_and(|v| truthy(Some(v))))
        {
            return Err(invalid(
                &event.id,
                "Must define one of: Authorizer, ApiKeyRequired or ResourcePolicy when using the OverrideApiAuth property.",
            ));
        }
        let mut editor = Editor::new(body).map_err(|e| invalid(&api_id, e))?;
        let api_auth = api_props
            .get("Auth")
            .map(|a| crate::intrinsics::resolve_params(a, &t.params));
        crate::rest_auth::add_event_auth(
            sam,
            event,
            &mut editor,
            auth,
            api_auth.as_ref(),
            (&path, &method),
        )?;
        t.rest.bodies.insert(api_id.clone(), editor.swagger());
    }
    // `_get_function_names`: every Api event naming a RestApiId adds the FunctionName.
    if let Some(name) = sam.get("FunctionName") {
        let resolved = crate::intrinsics::resolve_params(name, &t.params);
        if truthy(Some(&resolved)) {
            let text = Py::from_template(&resolved).deepcopy().to_str();
            t.rest
                .function_names
                .entry(api_id.clone())
                .or_default()
                .push_str(&text);
        }
    }
    Ok(vec![perm])
}

/// `RequestModel`: the model as the method's body parameter (or OpenAPI 3 requestBody), and
/// its request validator.
fn request_model(
    event: &Event,
    editor: &mut Editor,
    api_props: &Value,
    (path, method): (&str, &str),
    model: &Value,
) -> Result<(), String> {
    let Some(model) = model.as_object() else {
        return Err(invalid(
            &event.id,
            "Property 'RequestModel' should be a map.",
        ));
    };
    let shown_method = event
        .props
        .get("Method")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_lowercase();
    let Some(name) = model.get("Model").filter(|m| truthy(Some(m))) else {
        return Ok(());
    };
    let shown = Py::from_template(name).to_str();
    let prefix = format!(
        "Unable to set RequestModel [{shown}] on API method [{shown_method}] for path [{path}]"
    );
    let api_models = api_props.get("Models").filter(|m| truthy(Some(m)));
    let Some(api_models) = api_models else {
        return Err(invalid(
            &event.id,
            format!("{prefix} because the related API does not define any Models."),
        ));
    };
    if !crate::resource::is_intrinsic(api_models) && !api_models.is_object() {
        return Err(invalid(
            &event.id,
            format!("{prefix} because the related API Models defined is of invalid type."),
        ));
    }
    let Some(name) = name.as_str() else {
        return Err(invalid(
            &event.id,
            format!("{prefix} because the related API does not contain valid Models."),
        ));
    };
    if !api_models.get(name).is_some_and(|m| truthy(Some(m))) {
        return Err(invalid(
            &event.id,
            format!("{prefix} because it wasn't defined in the API's Models."),
        ));
    }
    let lower = name.to_lowercase();
    let required = model
        .get("Required")
        .filter(|r| !r.is_null())
        .map(Py::from_template);
    let swagger = editor
        .doc
        .get("swagger")
        .is_some_and(|v| !matches!(v, Py::None));
    let openapi = editor
        .doc
        .get("openapi")
        .filter(|v| v.truthy())
        .and_then(Py::as_str)
        .is_some_and(openapi3);
    if let Some(def) = editor.method_mut(path, method)
        && def.get(INTEGRATION).is_some_and(Py::truthy)
    {
        if swagger {
            let mut list = match def.get("parameters") {
                Some(Py::List(l)) => l.clone(),
                _ => Vec::new(),
            };
            let mut parameter = Dict::py27();
            parameter.set("in", false, Py::str("body"));
            parameter.set("name", false, Py::uni(&lower));
            parameter.set(
                "schema",
                false,
                Py::plain(&json!({"$ref": format!("#/definitions/{lower}")})),
            );
            if let Some(r) = &required {
                parameter.set("required", false, r.clone());
            }
            list.push(Py::Dict(parameter));
            def.set("parameters", false, Py::List(list));
        } else if openapi {
            let mut body = Py::plain(
                &json!({"content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{lower}")}}}}),
            );
            if let (Some(r), Some(b)) = (&required, body.as_dict_mut()) {
                b.set("required", false, r.clone());
            }
            def.set("requestBody", false, body);
        }
    }
    let validate_body = model.get("ValidateBody").filter(|v| !v.is_null());
    let validate_parameters = model.get("ValidateParameters").filter(|v| !v.is_null());
    if validate_body.is_none() && validate_parameters.is_none() {
        return Ok(());
    }
    let (Some(body), Some(params)) = (
        validate_body.map_or(Some(false), Value::as_bool),
        validate_parameters.map_or(Some(false), Value::as_bool),
    ) else {
        return Err(invalid(
            &event.id,
            format!(
                "Unable to set Validator to RequestModel [{name}] on API method [{shown_method}] for path [{path}] ValidateBody and ValidateParameters must be a boolean type, strings or intrinsics are not supported."
            ),
        ));
    };
    let validator = match (body, params) {
        (true, true) => "body-and-params",
        (true, false) => "body-only",
        (false, true) => "params-only",
        (false, false) => "no-validation",
    };
    const VALIDATORS: &str = "x-amazon-apigateway-request-validators";
    if !editor.doc.get(VALIDATORS).is_some_and(Py::truthy) {
        editor.doc.set(VALIDATORS, false, Py::Dict(Dict::py27()));
    }
    if let Some(Py::Dict(all)) = editor.doc.get_mut(VALIDATORS)
        && !all.get(validator).is_some_and(Py::truthy)
    {
        let mut settings = Dict::py27();
        settings.set("validateRequestBody", false, Py::Bool(body));
        settings.set("validateRequestParameters", false, Py::Bool(params));
        let mut definition = Dict::py27();
        definition.set(validator, false, Py::Dict(settings));
        all.update(definition.items());
    }
    if let Some(def) = editor.method_mut(path, method)
        && def.get(INTEGRATION).is_some_and(Py::truthy)
    {
        def.update(vec![(
            "x-amazon-apigateway-request-validator".into(),
            false,
            Py::str(validator),
        )]);
    }
    Ok(())
}

/// `RequestParameters`: each as a swagger parameter, and cache keys where `Caching` says.
fn request_parameters(
    id: &str,
    event: &Event,
    definition: &mut Dict,
    params: &Value,
) -> Result<(), String> {
    let bad_key = "Invalid value for 'RequestParameters' property. Keys must be in the format 'method.request.[querystring|path|header].{value}', e.g 'method.request.header.Authorization'.";
    let Some(list) = params.as_array() else {
        return Err(invalid_event(
            id,
            event.name,
            "Property 'RequestParameters' should be a list.",
        ));
    };
    let valid = |n: &str| {
        [
            "method.request.querystring.",
            "method.request.path.",
            "method.request.header.",
        ]
        .iter()
        .any(|p| n.starts_with(p))
    };
    let mut parsed = Vec::new();
    for p in list {
        match p {
            Value::String(name) => {
                if !valid(name) {
                    return Err(invalid(&event.id, bad_key));
                }
                parsed.push((name.clone(), Py::Bool(false), Py::Bool(false)));
            }
            Value::Object(o) if !o.is_empty() => {
                let (name, settings) = o
                    .iter()
                    .next()
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .unwrap_or_default();
                if !valid(&name) {
                    return Err(invalid(&event.id, bad_key));
                }
                let Some(settings) = settings
                    .as_object()
                    .filter(|s| s.keys().all(|k| k == "Required" || k == "Caching"))
                else {
                    return Err(invalid(
                        &event.id,
                        "Invalid value for 'RequestParameters' property. Values must be an object, e.g { Required: true, Caching: false }",
                    ));
                };
                let get = |k: &str| settings.get(k).map_or(Py::Bool(false), Py::from_template);
                parsed.push((name, get("Required"), get("Caching")));
            }
            _ => {
                return Err(invalid(
                    &event.id,
                    "Invalid value for 'RequestParameters' property. Property must be either a string or an object",
                ));
            }
        }
    }
    let mut existing = match definition.get("parameters") {
        Some(Py::List(l)) => l.clone(),
        _ => Vec::new(),
    };
    for (name, required, caching) in parsed {
        let location_name = name.replacen("method.request.", "", 1);
        let (location, short) = location_name
            .split_once('.')
            .unwrap_or((&location_name, ""));
        // "query" is the translator's own string, the others the template's.
        let location = if location == "querystring" {
            Py::str("query")
        } else {
            Py::uni(location)
        };
        let mut parameter = Dict::py27();
        parameter.set("in", false, location);
        parameter.set("name", false, Py::uni(short));
        parameter.set("required", false, required);
        parameter.set("type", false, Py::str("string"));
        existing.push(Py::Dict(parameter));
        if caching.truthy()
            && let Some(Py::Dict(integration)) = definition.get_mut(INTEGRATION)
        {
            let mut keys = match integration.get("cacheKeyParameters") {
                Some(Py::List(l)) => l.clone(),
                _ => Vec::new(),
            };
            keys.push(Py::uni(&name));
            integration.set("cacheKeyParameters", false, Py::List(keys));
        }
    }
    definition.set("parameters", false, Py::List(existing));
    Ok(())
}

const PROPERTIES: [&str; 37] = [
    "__MANAGE_SWAGGER",
    "Name",
    "StageName",
    "Tags",
    "PropagateTags",
    "DefinitionBody",
    "DefinitionUri",
    "MergeDefinitions",
    "CacheClusterEnabled",
    "CacheClusterSize",
    "Variables",
    "EndpointConfiguration",
    "MethodSettings",
    "BinaryMediaTypes",
    "MinimumCompressionSize",
    "Cors",
    "Auth",
    "GatewayResponses",
    "AccessLogSetting",
    "CanarySetting",
    "TracingEnabled",
    "OpenApiVersion",
    "Models",
    "Domain",
    "FailOnWarnings",
    "Description",
    "Mode",
    "DisableExecuteApiEndpoint",
    "ApiKeySourceType",
    "AlwaysDeploy",
    "Policy",
    "SecurityPolicy",
    "EndpointAccessMode",
    "Connectors",
    "IgnoreGlobals",
    "ResourcePolicy",
    "DomainV2",
];

/// Properties of an Api cumulo's transform does not implement: refused by name when set
/// (AlwaysDeploy names the Deployment after the clock, which a pure transform has not).
const REFUSED: [&str; 2] = ["MergeDefinitions", "AlwaysDeploy"];

/// The generated types that take the API's tags when PropagateTags says so.
const TAGGED: [&str; 5] = [
    "AWS::ApiGateway::RestApi",
    "AWS::ApiGateway::Stage",
    "AWS::ApiGateway::DomainName",
    "AWS::ApiGateway::UsagePlan",
    "AWS::ApiGateway::ApiKey",
];

/// An AWS::Serverless::Api: the RestApi with its body, its Deployment (named after the body's
/// hash) and its Stage.
pub fn translate(t: &mut Translation, sam: &Sam) -> Result<Vec<Res>, String> {
    sam.check_known(&PROPERTIES[..33])?;
    for p in REFUSED {
        if truthy(sam.get(p)) {
            return Err(unsupported(sam.id, &format!("'{p}'")));
        }
    }
    let Some(stage_name) = sam.cloned("StageName") else {
        return Err(invalid(sam.id, "Missing required property 'StageName'."));
    };
    let uri = sam.get("DefinitionUri").filter(|v| truthy(Some(v)));
    let mut body = t.rest.bodies.get(sam.id).cloned().filter(|b| b.truthy());
    if uri.is_some() && body.is_some() {
        return Err(invalid(
            sam.id,
            "Specify either 'DefinitionUri' or 'DefinitionBody' property and not both.",
        ));
    }
    let open_api_version = sam.get("OpenApiVersion").filter(|v| truthy(Some(v)));
    if let Some(v) = open_api_version
        && !v.as_str().is_some_and(|s| {
            let mut parts = s.split('.');
            matches!(parts.next(), Some("2" | "3")) && {
                let rest: Vec<&str> = parts.collect();
                (1..=2).contains(&rest.len())
                    && rest
                        .iter()
                        .all(|p| p.len() == 1 && p.chars().all(|c| c.is_ascii_digit()))
            }
        })
    {
        return Err(invalid(
            sam.id,
            "The OpenApiVersion value must be of the format '3.0.0'.",
        ));
    }
    let mut api = sam.main("AWS::ApiGateway::RestApi");
    let binary = sam
        .get("BinaryMediaTypes")
        .map(|b| crate::intrinsics::resolve_params(b, &t.params));
    api.set("BinaryMediaTypes", binary.clone());
    api.set(
        "MinimumCompressionSize",
        sam.cloned("MinimumCompressionSize"),
    );
    if let Some(endpoint) = sam.get("EndpointConfiguration").filter(|v| truthy(Some(v))) {
        endpoint_configuration(sam.id, &mut api, endpoint)?;
    }
    if let Some(cors) = sam.get("Cors").filter(|v| truthy(Some(v))) {
        let Some(b) = body.as_mut() else {
            return Err(invalid(
                sam.id,
                "Cors works only with inline Swagger specified in 'DefinitionBody' property.",
            ));
        };
        add_cors(sam.id, b, cors)?;
    }
    let auth = sam
        .get("Auth")
        .map(|a| crate::intrinsics::resolve_params(a, &t.params))
        .filter(|a| truthy(Some(a)));
    if let Some(auth) = &auth {
        let Some(b) = body.as_mut() else {
            return Err(invalid(
                sam.id,
                "Auth works only with inline Swagger specified in 'DefinitionBody' property.",
            ));
        };
        crate::rest_auth::add_api_auth(sam.id, b, auth)?;
        crate::rest_auth::fix_partition(b, &t.ctx.partition);
        *b = openapi_postprocess(b.clone(), open_api_version.and_then(Value::as_str));
    }
    if let Some(responses) = sam.get("GatewayResponses").filter(|v| truthy(Some(v))) {
        let Some(b) = body.as_mut() else {
            return Err(invalid(
                sam.id,
                "GatewayResponses works only with inline Swagger specified in 'DefinitionBody' property.",
            ));
        };
        add_gateway_responses(sam.id, b, responses)?;
    }
    if let Some(binary) = binary.filter(|b| truthy(Some(b)))
        && let Some(b) = body.as_mut()
    {
        let mut editor = Editor::new(b).map_err(|e| invalid(sam.id, e))?;
        editor.doc.set(
            BINARY_MEDIA_TYPES,
            false,
            replace_slashes(&Py::from_template(&binary)),
        );
        *b = editor.swagger();
    }
    if let Some(models) = sam.get("Models").filter(|v| truthy(Some(v))) {
        let Some(b) = body.as_mut() else {
            return Err(invalid(
                sam.id,
                "Models works only with inline Swagger specified in 'DefinitionBody' property.",
            ));
        };
        add_models(sam.id, b, models)?;
        *b = openapi_postprocess(b.clone(), open_api_version.and_then(Value::as_str));
    }
    if truthy(sam.get("FailOnWarnings")) {
        api.set("FailOnWarnings", sam.cloned("FailOnWarnings"));
    }
    if let Some(disable) = sam.get("DisableExecuteApiEndpoint") {
        let Some(b) = body.as_mut() else {
            return Err(invalid(
                sam.id,
                "DisableExecuteApiEndpoint works only within 'DefinitionBody' property.",
            ));
        };
        disable_execute_api_endpoint(sam.id, b, disable)?;
    }
    let mut swagger = None;
    if let Some(u) = uri {
        let loc = body_s3_location(sam.id, u)?;
        api.put("BodyS3Location", loc.to_json());
        swagger = Some(loc);
    } else if let Some(b) = body {
        let b = openapi_postprocess(b, open_api_version.and_then(Value::as_str));
        api.put("Body", b.to_json());
        swagger = Some(b);
    }
    for p in [
        "Name",
        "Description",
        "Mode",
        "ApiKeySourceType",
        "Policy",
        "SecurityPolicy",
        "EndpointAccessMode",
    ] {
        if truthy(sam.get(p)) {
            api.set(p, sam.cloned(p));
        }
    }
    let domain = match sam.get("Domain") {
        Some(d) => Some(crate::rest_domain::construct(
            sam,
            &crate::intrinsics::resolve_params(d, &t.params),
            &mut t.rest.record_sets,
        )?),
        None => None,
    };
    let mut deployment = Res::new(
        format!("{}Deployment", sam.id),
        "AWS::ApiGateway::Deployment",
        sam.passthrough(),
    );
    deployment.put("RestApiId", reference(sam.id));
    if open_api_version.is_none() {
        deployment.put("StageName", json!("Stage"));
    }
    let prefix = stage_name.as_str().unwrap_or("");
    let stage_id = if !prefix.is_empty() && prefix.chars().all(char::is_alphanumeric) {
        format!("{}{prefix}Stage", sam.id)
    } else if prefix.is_empty() {
        format!("{}Stage", sam.id)
    } else {
        format!("{}Stage{}", sam.id, pyjson::hash(&json!(prefix)))
    };
    if let Some(swagger) = swagger.filter(Py::truthy) {
        let mut inputs = vec![swagger.to_str()];
        if let Some(v) = open_api_version {
            inputs.push(match v {
                Value::String(s) => s.clone(),
                other => Py::from_template(other).to_str(),
            });
        }
        if let Some(d) = &domain {
            inputs.push(d.hashed.clone());
        }
        if let Some(names) = t.rest.function_names.get(sam.id).filter(|n| !n.is_empty()) {
            inputs.push(names.clone());
        }
        let data = inputs.join("||");
        let digest = hex::encode(Sha1::digest(data.as_bytes()));
        deployment.id = format!("{}Deployment{}", sam.id, &digest[..10]);
        deployment.put(
            "Description",
            json!(format!("RestApi deployment id: {digest}")),
        );
    }
    let mut stage = Res::new(&stage_id, "AWS::ApiGateway::Stage", sam.passthrough());
    stage.put("DeploymentId", reference(&deployment.id));
    stage.put("RestApiId", reference(sam.id));
    stage.put("StageName", stage_name);
    for (from, to) in [
        ("CacheClusterEnabled", "CacheClusterEnabled"),
        ("CacheClusterSize", "CacheClusterSize"),
        ("Variables", "Variables"),
        ("MethodSettings", "MethodSettings"),
        ("AccessLogSetting", "AccessLogSetting"),
        ("CanarySetting", "CanarySetting"),
        ("TracingEnabled", "TracingEnabled"),
    ] {
        stage.set(to, sam.cloned(from));
    }
    if let Some(tags) = sam.get("Tags") {
        let Some(tags) = tags.as_object() else {
            return Err(invalid(sam.id, "Type of property 'Tags' is invalid."));
        };
        // The converted Tags dict, in its Python 2.7 order.
        let ordered: Map<String, Value> = py27_order(tags.keys())
            .into_iter()
            .filter_map(|k| tags.get(&k).map(|v| (k, v.clone())))
            .collect();
        stage.put("Tags", Value::Array(tag_list(&ordered)));
    }
    t.refs.add(sam.id, "Stage", &stage_id);
    t.refs.add(sam.id, "Deployment", &deployment.id);
    let mut out = vec![api, deployment, stage];
    if let Some(d) = domain {
        if d.resources
            .iter()
            .any(|r| r.ty == "AWS::ApiGateway::DomainName")
        {
            let first = &d.resources[0].id;
            t.refs.add(sam.id, "DomainName", first);
        }
        out.extend(d.resources);
    }
    if let Some(auth) = &auth {
        out.extend(crate::rest_auth::authorizer_permissions(
            sam,
            auth,
            &t.ctx.partition,
        )?);
        let plan = crate::rest_auth::usage_plan(sam, auth, &stage_id, &mut t.rest.shared)?;
        for r in &plan {
            let property = match r.ty.as_str() {
                "AWS::ApiGateway::UsagePlan" => "UsagePlan",
                "AWS::ApiGateway::ApiKey" => "ApiKey",
                _ => "UsagePlanKey",
            };
            t.refs.add(sam.id, property, &r.id);
        }
        out.extend(plan);
    }
    if truthy(sam.get("PropagateTags"))
        && let Some(Value::Object(tags)) = sam.get("Tags").filter(|t| truthy(Some(t)))
    {
        let ordered: Map<String, Value> = py27_order(tags.keys())
            .into_iter()
            .filter_map(|k| tags.get(&k).map(|v| (k, v.clone())))
            .collect();
        for r in out.iter_mut().filter(|r| TAGGED.contains(&r.ty.as_str())) {
            r.put("Tags", Value::Array(tag_list(&ordered)));
        }
    }
    Ok(out)
}

/// `_add_endpoint_extension`: `disableExecuteApiEndpoint` in the endpoint configuration
/// extension (in each of an OpenAPI 3 body's servers).
fn disable_execute_api_endpoint(id: &str, body: &mut Py, value: &Value) -> Result<(), String> {
    const EXTENSION: &str = "x-amazon-apigateway-endpoint-configuration";
    let mut editor = Editor::new(body).map_err(|e| invalid(id, e))?;
    let value = Py::from_template(value);
    let deep_set = |d: &mut Py, what: &str| -> Result<(), String> {
        let Some(d) = d.as_dict_mut() else {
            return Err(crate::structure(format!(
                "Invalid OpenAPI definition{what}: ."
            )));
        };
        let config = d.setdefault(EXTENSION, false, Py::Dict(Dict::plain()));
        let Some(config) = config.as_dict_mut() else {
            return Err(crate::structure(format!(
                "Invalid OpenAPI definition{what}: {EXTENSION}."
            )));
        };
        config.set("disableExecuteApiEndpoint", false, value.clone());
        Ok(())
    };
    let openapi = editor
        .doc
        .get("openapi")
        .filter(|v| v.truthy())
        .and_then(Py::as_str)
        .is_some_and(openapi3);
    if openapi {
        let mut servers = match editor.doc.get("servers") {
            Some(Py::List(l)) => l.clone(),
            Some(_) => return Err(invalid(id, "Property 'servers' should be a list.")),
            None => vec![Py::Dict(Dict::py27())],
        };
        for (i, config) in servers.iter_mut().enumerate() {
            deep_set(config, &format!(" of 'servers[{i}]'"))?;
        }
        editor.doc.set("servers", false, Py::List(servers));
    } else {
        let mut doc = Py::Dict(editor.doc.clone());
        deep_set(&mut doc, "")?;
        if let Py::Dict(d) = doc {
            editor.doc = d;
        }
    }
    *body = editor.swagger();
    Ok(())
}

fn endpoint_configuration(id: &str, api: &mut Res, value: &Value) -> Result<(), String> {
    match value {
        Value::Object(o) if truthy(o.get("Type")) => {
            let ty = o["Type"].clone();
            api.put("Parameters", json!({"endpointConfigurationTypes": ty}));
            let mut config = json!({"Types": [ty]});
            if o.contains_key("VPCEndpointIds") && o.contains_key("VpcEndpointIds") {
                return Err(invalid(
                    id,
                    "'VPCEndpointIds' and 'VpcEndpointIds' cannot be used together in EndpointConfiguration.",
                ));
            }
            if let Some(ids) = o.get("VPCEndpointIds").or_else(|| o.get("VpcEndpointIds")) {
                config["VpcEndpointIds"] = ids.clone();
            }
            if let Some(ip) = o.get("IpAddressType") {
                config["IpAddressType"] = ip.clone();
            }
            api.put("EndpointConfiguration", config);
        }
        other => {
            api.put("EndpointConfiguration", json!({"Types": [other]}));
            api.put("Parameters", json!({"endpointConfigurationTypes": other}));
        }
    }
    Ok(())
}

/// `add_binary_media_types`'s `~1` → `/`, every string (and key) a Py27UniStr.
fn replace_slashes(v: &Py) -> Py {
    match v {
        Py::Dict(d) => {
            let mut out = Dict::py27();
            for (k, _, v) in d.items() {
                out.set(&k.replace("~1", "/"), true, replace_slashes(&v));
            }
            Py::Dict(out)
        }
        Py::List(l) => Py::List(l.iter().map(replace_slashes).collect()),
        Py::Str(s, _) => Py::uni(&s.replace("~1", "/")),
        other => other.clone(),
    }
}

/// `_construct_body_s3_dict`.
fn body_s3_location(id: &str, uri: &Value) -> Result<Py, String> {
    let mut out = Dict::py27();
    match uri {
        Value::Object(o) => {
            if !truthy(o.get("Bucket")) || !truthy(o.get("Key")) {
                return Err(invalid(
                    id,
                    "'DefinitionUri' requires Bucket and Key properties to be specified.",
                ));
            }
            out.set("Bucket", false, Py::from_template(&o["Bucket"]));
            out.set("Key", false, Py::from_template(&o["Key"]));
            if let Some(v) = o.get("Version") {
                out.set("Version", false, Py::from_template(v));
            }
        }
        Value::String(s) => {
            let parsed = s
                .strip_prefix("s3://")
                .and_then(|rest| rest.split_once('/'))
                .filter(|(b, k)| !b.is_empty() && !k.is_empty());
            let Some((bucket, rest)) = parsed else {
                return Err(invalid(
                    id,
                    "'DefinitionUri' is not a valid S3 Uri of the form 's3://bucket/key' with optional versionId query parameter.",
                ));
            };
            let (key, version) = match rest.split_once("?versionId=") {
                Some((k, v)) => (k, Some(v)),
                None => (rest, None),
            };
            if rest.contains('?') && version.is_none() {
                return Err(unsupported(
                    id,
                    "A DefinitionUri with a query other than versionId",
                ));
            }
            out.set("Bucket", false, Py::uni(bucket));
            out.set("Key", false, Py::uni(key));
            if let Some(v) = version {
                out.set("Version", false, Py::uni(v));
            }
        }
        _ => {
            return Err(unsupported(
                id,
                "A DefinitionUri given as an intrinsic function",
            ));
        }
    }
    Ok(Py::Dict(out))
}

/// `_openapi_postprocess`: an OpenAPI 3 body's securityDefinitions and definitions moved under
/// components (swagger bodies are left as they are).
pub(crate) fn openapi_postprocess(mut body: Py, open_api_version: Option<&str>) -> Py {
    let Some(d) = body.as_dict_mut() else {
        return body;
    };
    if d.get("swagger").is_some_and(|v| !matches!(v, Py::None)) {
        return body;
    }
    let version = match (d.get("openapi"), open_api_version) {
        (Some(Py::Str(v, _)), None) => Some(v.clone()),
        (_, v) => v.map(str::to_string),
    };
    if !version.as_deref().is_some_and(openapi3) {
        return body;
    }
    for (from, to) in [
        ("securityDefinitions", "securitySchemes"),
        ("definitions", "schemas"),
    ] {
        if d.get(from).is_some_and(Py::truthy) {
            let mut components = match d.get("components") {
                Some(Py::Dict(c)) if !c.is_empty() => c.clone(),
                _ => Dict::py27(),
            };
            if let Some(v) = d.get(from).cloned() {
                components.set(to, false, v);
            }
            d.set("components", false, Py::Dict(components));
            d.remove(from);
        }
    }
    // CORS preflights in OpenAPI 3: no produces/consumes, each header's type under a schema.
    let Some(Py::Dict(paths)) = d.get_mut("paths") else {
        return body;
    };
    for path in paths.keys() {
        let Some(Py::Dict(options)) = paths
            .get_mut(&path)
            .and_then(Py::as_dict_mut)
            .and_then(|item| item.get_mut("options"))
            .filter(|o| o.truthy())
        else {
            continue;
        };
        for field in options.keys() {
            if field == "produces" || field == "consumes" {
                options.remove(&field);
            }
        }
        let Some(Py::Dict(headers)) = options
            .get_mut("responses")
            .and_then(Py::as_dict_mut)
            .and_then(|r| r.get_mut("200"))
            .and_then(Py::as_dict_mut)
            .and_then(|ok| ok.get_mut("headers"))
        else {
            continue;
        };
        for (name, uni, value) in headers.items() {
            let mut wrapped = Dict::py27();
            wrapped.set("schema", false, value);
            headers.set(&name, uni, Py::Dict(wrapped));
        }
    }
    body
}

/// `get_path_without_trailing_slash`: `{param}`, `{param+}` and `{proxy+}` segments as `*`.
fn wildcard_parameters(path: &str) -> String {
    let mut out = String::new();
    let mut rest = path;
    while let Some(start) = rest.find('{') {
        out.push_str(&rest[..start]);
        let after = &rest[start + 1..];
        let name = after.find('}').map(|end| &after[..end]);
        match name {
            Some(n)
                if !n.trim_end_matches('+').is_empty()
                    && n.strip_suffix('+')
                        .unwrap_or(n)
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
                    && n.matches('+').count() <= 1 =>
            {
                out.push('*');
                rest = &after[n.len() + 1..];
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

const ALL_HTTP_METHODS: [&str; 7] = ["OPTIONS", "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH"];

/// `_add_cors`: an OPTIONS mock method answering the CORS headers on every path without one.
fn add_cors(id: &str, body: &mut Py, cors: &Value) -> Result<(), String> {
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
        let Some(item) = editor
            .paths_mut()
            .and_then(|p| p.get_mut(&path))
            .and_then(Py::as_dict_mut)
        else {
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
fn cors_options(
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

const GATEWAY_RESPONSE_PROPERTIES: [&str; 3] =
    ["ResponseParameters", "ResponseTemplates", "StatusCode"];

/// `_add_gateway_responses`: `x-amazon-apigateway-gateway-responses`.
fn add_gateway_responses(id: &str, body: &mut Py, responses: &Value) -> Result<(), String> {
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

fn python_type(v: &Value) -> &'static str {
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
fn add_models(id: &str, body: &mut Py, models: &Value) -> Result<(), String> {
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

fn structure_error(message: &str) -> String {
    crate::structure(message)
}
