//! A function's Api event: its permission, and its integration written into a managed body.

use super::*;

/// `Api.get_rest_api_id_string`.
pub(crate) fn api_id_string(v: &Value) -> Option<&str> {
    match v {
        Value::Object(o) if o.contains_key("Ref") => o["Ref"].as_str(),
        v => v.as_str(),
    }
}

/// What an Api event names, read the same way for a function's and a state machine's.
struct Route {
    path: String,
    /// Lower-cased, as the translator compares methods.
    method: String,
    /// `RestApiId` as written (the implicit API's `Ref` when absent), for the permission's ARN.
    raw_api: Value,
    api_id: String,
}

impl Route {
    /// Refuses a property the event type does not define, then reads the route.
    fn read(sam: &Sam, event: &Event, allowed: &[&str]) -> Result<Self, String> {
        if let Some(p) = event.props.keys().find(|p| !allowed.contains(&p.as_str())) {
            return Err(invalid(
                &event.id,
                format!("property {p} not defined for resource of type Api"),
            ));
        }
        let text = |key: &str| {
            event
                .props
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
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
        Ok(Route {
            path: text("Path"),
            method: text("Method").to_lowercase(),
            raw_api,
            api_id,
        })
    }

    /// The API the event names, which must be a resource of the template.
    fn api<'a>(&self, event: &Event, api: Option<&'a Value>) -> Result<&'a Value, String> {
        api.filter(|a| a.is_object()).ok_or_else(|| {
            invalid(
                &event.id,
                "RestApiId property of Api event must reference a valid resource in the same template.",
            )
        })
    }

    /// The route's method in the body being edited (`m` normalized), which `add_path` made.
    fn method_in<'e>(&self, editor: &'e mut Editor, m: &str) -> Result<&'e mut Dict, String> {
        let path = &self.path;
        editor.method_mut(path, m).ok_or_else(|| {
            invalid(
                &self.api_id,
                format!("Value of '{path}' path must be a dictionary according to Swagger spec."),
            )
        })
    }

    /// The event's `Auth` applied to its method, against the API's own (`api_auth`).
    fn add_auth(
        &self,
        sam: &Sam,
        event: &Event,
        editor: &mut Editor,
        auth: &Value,
        (api_props, api_auth): (&Value, Option<&Value>),
    ) -> Result<(), String> {
        auth::add_event_auth(
            sam,
            event,
            editor,
            auth,
            api_auth,
            (&self.path, &self.method),
            &self.stage(api_props),
        )
    }

    /// The event's `Stage` as the translator sets it: the API's StageName when a string (the
    /// template's, but the implicit API's own `Prod`), else `Stage`.
    fn stage(&self, api_props: &Value) -> Py {
        match api_props.get("StageName") {
            Some(Value::String(s)) => Py::Str(s.clone(), !(self.api_id == IMPLICIT && s == "Prod")),
            _ => Py::str("Stage"),
        }
    }

    /// Wraps the whole method in the target's condition, as the translator does last.
    fn make_method_conditional(&self, editor: &mut Editor, m: &str, condition: &Option<Py>) {
        if let Some(c) = condition
            && let Some(item) = editor.path_item_mut(&self.path)
            && let Some(def) = item.get(m).cloned()
        {
            item.set(m, false, make_conditional(c.clone(), def));
        }
    }
}

/// The API's `Auth`, its parameters resolved.
fn api_auth(t: &Translation, api_props: &Value) -> Option<Value> {
    api_props
        .get("Auth")
        .map(|a| crate::intrinsics::resolve_params(a, &t.params))
}

/// A target's `Condition`, which wraps its integration and method.
fn condition_of(attrs: &Map<String, Value>, id: &str) -> Result<Option<Py>, String> {
    match attrs.get("Condition") {
        None => Ok(None),
        Some(Value::String(c)) => Ok(Some(Py::uni(c))),
        Some(_) => Err(unsupported(id, "A Condition that is not a string")),
    }
}

pub(crate) const EVENT_PROPERTIES: [&str; 9] = [
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
    let route = Route::read(sam, event, &EVENT_PROPERTIES)?;
    let streaming = event
        .props
        .get("ResponseTransferMode")
        .and_then(Value::as_str)
        == Some("RESPONSE_STREAM");
    let api = route.api(event, live.get(&route.api_id))?;
    let Route {
        path,
        method,
        raw_api,
        api_id,
    } = &route;
    let api_props = api.get("Properties").cloned().unwrap_or(json!({}));
    let suffix = match api_props.get("StageName") {
        Some(Value::String(s)) if s.is_empty() => {
            return Err(invalid(api_id, "StageName cannot be empty."));
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
    let merge = truthy(api_props.get("MergeDefinitions"));
    let body = t.rest.bodies.get(api_id).cloned();
    if (managed || merge)
        && let Some(body) = body
    {
        // MergeDefinitions: the event's method is generated on SAM's skeleton, then merged
        // into the API's own body.
        let generated = if merge { skeleton() } else { body.clone() };
        let mut editor = Editor::new(&generated).map_err(|e| invalid(api_id, e))?;
        if editor.has_integration(path, method) {
            return Err(invalid_event(
                sam.id,
                event.name,
                format!("API method \"{method}\" defined multiple times for path \"{path}\"."),
            ));
        }
        let condition = condition_of(&target.attrs, sam.id)?;
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
            .add_path(path, true, method, true)
            .map_err(|e| invalid(api_id, e))?;
        let (m, _) = normalize(method, true);
        let definition = route.method_in(&mut editor, &m)?;
        let mut integration = Dict::py27();
        integration.set("type", false, Py::str("aws_proxy"));
        integration.set("httpMethod", false, Py::str("POST"));
        // A function's condition wraps its integration URI, then its whole method.
        let uri = match &condition {
            Some(c) => make_conditional(c.clone(), Py::Dict(uri_dict)),
            None => Py::Dict(uri_dict),
        };
        integration.set("uri", false, uri);
        if streaming {
            integration.set("responseTransferMode", false, Py::str("STREAM"));
        }
        let api_auth = api_auth(t, &api_props);
        if let Some(c) = auth::integration_credentials(
            event.props.get("Auth"),
            api_auth.as_ref(),
            &t.ctx.partition,
        ) {
            integration.set("credentials", false, c);
        }
        definition.set(INTEGRATION, false, Py::Dict(integration));
        definition.setdefault("responses", false, Py::Dict(Dict::py27()));
        route.make_method_conditional(&mut editor, &m, &condition);
        if let Some(auth) = event.props.get("Auth").filter(|a| truthy(Some(a))) {
            route.add_auth(
                sam,
                event,
                &mut editor,
                auth,
                (&api_props, api_auth.as_ref()),
            )?;
        }
        let definition = route.method_in(&mut editor, &m)?;
        if let Some(timeout) = event
            .props
            .get("TimeoutInMillis")
            .filter(|v| truthy(Some(v)))
            && let Some(Py::Dict(i)) = definition.get_mut(INTEGRATION)
        {
            i.set("timeoutInMillis", false, Py::from_template(timeout));
        }
        if let Some(model) = event.props.get("RequestModel").filter(|v| truthy(Some(v))) {
            request_model(event, &mut editor, &api_props, (path, &m), model)?;
        }
        let definition = route.method_in(&mut editor, &m)?;
        if let Some(params) = event
            .props
            .get("RequestParameters")
            .filter(|v| truthy(Some(v)))
        {
            request_parameters(sam.id, event, definition, params)?;
        }
        let result = if merge {
            merged_definitions(api_id, body, &editor, path, method)?
        } else {
            editor.swagger()
        };
        t.rest.bodies.insert(api_id.clone(), result);
    }
    // OverrideApiAuth: the event's Auth applied (again) to the API's own body.
    let auth = event.props.get("Auth").filter(|a| truthy(Some(a)));
    if let Some(auth) = auth.filter(|a| a.get("OverrideApiAuth").is_some_and(|o| truthy(Some(o))))
        && let Some(body) = t.rest.bodies.get(api_id).filter(|b| b.truthy())
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
        let mut editor = Editor::new(body).map_err(|e| invalid(api_id, e))?;
        let api_auth = api_auth(t, &api_props);
        route.add_auth(
            sam,
            event,
            &mut editor,
            auth,
            (&api_props, api_auth.as_ref()),
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
pub(crate) fn request_model(
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
pub(crate) fn request_parameters(
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

/// `get_path_without_trailing_slash`: `{param}`, `{param+}` and `{proxy+}` segments as `*`.
pub(crate) fn wildcard_parameters(path: &str) -> String {
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

const STATE_MACHINE_EVENT_PROPERTIES: [&str; 6] = [
    "Path",
    "Method",
    "RestApiId",
    "Stage",
    "Auth",
    "UnescapeMappingTemplate",
];

/// A state machine's Api event: the role API Gateway starts executions with, and the `aws`
/// StartExecution integration (its request template naming the state machine) written into a
/// managed body.
pub fn state_machine_event(
    t: &mut Translation,
    sam: &Sam,
    event: &Event,
    target: &str,
) -> Result<Vec<Res>, String> {
    let route = Route::read(sam, event, &STATE_MACHINE_EVENT_PROPERTIES)?;
    if target != sam.id {
        return Err(unsupported(
            sam.id,
            "An Api event of a state machine targeting its alias",
        ));
    }
    let api = route
        .api(
            event,
            t.original.pointer(&format!("/Resources/{}", route.api_id)),
        )?
        .clone();
    let Route {
        path,
        method,
        api_id,
        ..
    } = &route;
    let api_props = api.get("Properties").cloned().unwrap_or(json!({}));
    if matches!(api_props.get("StageName"), Some(Value::String(s)) if s.is_empty()) {
        return Err(invalid(api_id, "StageName cannot be empty."));
    }
    let role_id = format!("{}Role", event.id);
    let mut role = Res::new(&role_id, "AWS::IAM::Role", sam.passthrough());
    role.put(
        "AssumeRolePolicyDocument",
        json!({"Version": "2012-10-17", "Statement": [{"Action": ["sts:AssumeRole"], "Effect": "Allow", "Principal": {"Service": ["apigateway.amazonaws.com"]}}]}),
    );
    role.put(
        "Policies",
        json!([{"PolicyName": format!("{role_id}StartExecutionPolicy"), "PolicyDocument": {"Statement": [{"Action": "states:StartExecution", "Effect": "Allow", "Resource": {"Ref": target}}]}}]),
    );
    role.set(
        "PermissionsBoundary",
        sam.cloned("PermissionsBoundary")
            .filter(|v| truthy(Some(v))),
    );
    let managed = truthy(api_props.get("__MANAGE_SWAGGER"));
    if managed && let Some(body) = t.rest.bodies.get(api_id) {
        let mut editor = Editor::new(body).map_err(|e| invalid(api_id, e))?;
        if editor.has_integration(path, method) {
            return Err(invalid(
                &event.id,
                format!("API method \"{method}\" defined multiple times for path \"{path}\"."),
            ));
        }
        let condition = condition_of(&sam.attrs, sam.id)?;
        let template = if truthy(event.props.get("UnescapeMappingTemplate")) {
            format!(
                "{{\"input\": \"$util.escapeJavaScript($input.json('$')).replaceAll(\"\\\\'\",\"'\")\", \"stateMachineArn\": \"${{{}}}\"}}",
                sam.id
            )
        } else {
            format!(
                "{{\"input\": \"$util.escapeJavaScript($input.json('$'))\", \"stateMachineArn\": \"${{{}}}\"}}",
                sam.id
            )
        };
        editor
            .add_path(path, true, method, true)
            .map_err(|e| invalid(api_id, e))?;
        let (m, _) = normalize(method, true);
        let definition = route.method_in(&mut editor, &m)?;
        let status = |code: &str| {
            let mut d = Dict::py27();
            d.update(vec![("statusCode".into(), false, Py::str(code))]);
            Py::Dict(d)
        };
        let described = |text: &str| {
            let mut d = Dict::py27();
            d.update(vec![("description".into(), false, Py::str(text))]);
            Py::Dict(d)
        };
        let mut responses = Dict::py27();
        responses.set("200", false, status("200"));
        responses.set("400", false, status("400"));
        let mut method_responses = Dict::py27();
        method_responses.set("200", false, described("OK"));
        method_responses.set("400", false, described("Bad Request"));
        let mut integration = Dict::py27();
        integration.set("type", false, Py::str("aws"));
        integration.set("httpMethod", false, Py::str("POST"));
        let uri = Py::plain(
            &json!({"Fn::Sub": "arn:${AWS::Partition}:apigateway:${AWS::Region}:states:action/StartExecution"}),
        );
        let uri = match &condition {
            Some(c) => make_conditional(c.clone(), uri),
            None => uri,
        };
        integration.set("uri", false, uri);
        integration.set("responses", false, Py::Dict(responses));
        let mut credentials = Dict::plain();
        credentials.set(
            "Fn::GetAtt",
            false,
            Py::List(vec![Py::str(&role_id), Py::str("Arn")]),
        );
        integration.set("credentials", false, Py::Dict(credentials));
        definition.set(INTEGRATION, false, Py::Dict(integration));
        definition.setdefault("responses", false, Py::Dict(method_responses));
        if let Some(Py::Dict(i)) = definition.get_mut(INTEGRATION) {
            i.update(vec![(
                "requestTemplates".into(),
                false,
                Py::plain(&json!({"application/json": {"Fn::Sub": template}})),
            )]);
        }
        route.make_method_conditional(&mut editor, &m, &condition);
        if let Some(auth) = event.props.get("Auth").filter(|a| truthy(Some(a))) {
            let api_auth = api_auth(t, &api_props);
            route.add_auth(
                sam,
                event,
                &mut editor,
                auth,
                (&api_props, api_auth.as_ref()),
            )?;
        }
        t.rest.bodies.insert(api_id.clone(), editor.swagger());
    }
    Ok(vec![role])
}

/// `_get_merged_definitions`: the generated method merged over the body's own (a plain dict,
/// the body's keys first), the body itself copied shallowly as the translator does.
fn merged_definitions(
    api_id: &str,
    body: Py,
    editor: &Editor,
    path: &str,
    method: &str,
) -> Result<Py, String> {
    let Py::Dict(source) = body else {
        return Ok(body);
    };
    // `source.copy()`: a Py27Dict copy re-adds the keys through a merge.
    let mut merged = Dict::py27();
    merged.update(source.items());
    // `merged.get("paths") or {}`: empty paths are a new dict the body never sees.
    let attached = merged.get("paths").is_some_and(Py::truthy);
    let mut paths = match merged.get("paths") {
        Some(Py::Dict(p)) if !p.is_empty() => p.clone(),
        Some(Py::Dict(_)) | None | Some(Py::None) => Dict::plain(),
        Some(_) => {
            return Err(invalid(
                api_id,
                "Property 'DefinitionBody' is invalid: paths.",
            ));
        }
    };
    let own = match paths.get(path) {
        None => None,
        Some(Py::Dict(item)) => match item.get(method) {
            None | Some(Py::None) => None,
            Some(Py::Dict(d)) => Some(d.clone()),
            Some(_) => {
                return Err(invalid(
                    api_id,
                    format!("Property 'DefinitionBody.paths.{path}.{method}' should be a map."),
                ));
            }
        },
        Some(_) => {
            return Err(invalid(
                api_id,
                format!("Property 'DefinitionBody' is invalid: {path}."),
            ));
        }
    };
    let (normalized, _) = normalize(method, true);
    let generated = editor
        .swagger()
        .as_dict()
        .and_then(|d| d.get("paths"))
        .and_then(Py::as_dict)
        .and_then(|p| p.get(path))
        .and_then(Py::as_dict)
        .and_then(|i| i.get(&normalized))
        .and_then(Py::as_dict)
        .cloned()
        .unwrap_or_else(Dict::py27);
    let mut method_body = Dict::plain();
    for (k, uni, v) in own.map(|d| d.items()).unwrap_or_default() {
        method_body.set(&k, uni, v);
    }
    for (k, uni, v) in generated.items() {
        method_body.set(&k, uni, v);
    }
    if !paths.contains(path) {
        let mut item = Dict::plain();
        item.set(method, true, Py::Dict(method_body.clone()));
        paths.set(path, true, Py::Dict(item));
    }
    if let Some(Py::Dict(item)) = paths.get_mut(path) {
        item.set(method, true, Py::Dict(method_body));
    }
    if attached {
        merged.set("paths", false, Py::Dict(paths));
    }
    Ok(Py::Dict(merged))
}
