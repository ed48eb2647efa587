//! The data plane: a deployed stage answering HTTP. The gateway hands over every request to
//! `<api-id>.execute-api.<host>` (rewritten to the path form) and to
//! `/_aws/execute-api/<api-id>/<stage>/<path>`; REST APIs serve their stage's deployment
//! snapshot here, HTTP APIs are served by [`crate::apigatewayv2::invoke`].
//!
//! A REST API request is matched to a resource and method (`matching`), checked for its API key
//! and authorizer (`authorizer`), and run through its integration: AWS_PROXY Lambda with the
//! proxy event (`proxy`), AWS Lambda and MOCK with mapping templates, HTTP and HTTP_PROXY
//! through `http`. Errors answer with the API's gateway responses.

pub(crate) mod authorizer;
pub(crate) mod http;
pub(crate) mod matching;
pub(crate) mod parameters;
pub(crate) mod proxy;
mod query_json;
pub(crate) mod service;

pub use authorizer::AuthCache;

use super::ApiGatewayService;
use super::ops::default_gateway_response;
use super::state::{RestApi, Snapshot};
use super::vtl;
use crate::lambda::InvocationType;
use ::http::{HeaderMap, Method, StatusCode};
use bytes::Bytes;
use cumulo_wire::{AwsRequest, AwsResponse};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

/// The `<api-id>` of an `<api-id>.execute-api.<anything>` host.
pub fn api_of_host(host: &str) -> Option<&str> {
    let (id, rest) = host.split_once('.')?;
    (rest.starts_with("execute-api.") && !id.is_empty()).then_some(id)
}

/// A plain JSON answer (`{"message": ...}`), as API Gateway's own errors are.
pub fn json_answer(status: u16, body: Value) -> AwsResponse {
    AwsResponse::new(
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
        "application/json",
        body.to_string(),
    )
}

pub fn message(status: u16, msg: &str) -> AwsResponse {
    json_answer(status, json!({ "message": msg }))
}

/// What one REST API request has resolved to so far.
pub(crate) struct Call<'a> {
    pub svc: &'a ApiGatewayService,
    pub req: &'a AwsRequest,
    pub region: String,
    pub api_id: String,
    pub stage: Value,
    pub stage_name: String,
    pub deployment_id: String,
    pub snapshot: Snapshot,
    /// The request path below the stage, as sent (`/pets/1`).
    pub path: String,
    pub request_id: String,
    pub request_time: chrono::DateTime<chrono::Utc>,
    pub resource_id: String,
    pub resource_path: String,
    pub path_params: BTreeMap<String, String>,
    pub authorizer: Option<Map<String, Value>>,
}

impl Call<'_> {
    fn stage_variables(&self) -> Value {
        match self.stage.get("variables") {
            Some(Value::Object(m)) if !m.is_empty() => Value::Object(m.clone()),
            _ => Value::Null,
        }
    }

    /// Answers with a gateway response: the API's customised one for `kind`, else AWS's
    /// default (its status, `{"message": ...}`).
    fn gateway_response(&self, kind: &str, status: u16, msg: &str) -> AwsResponse {
        let custom = self
            .snapshot
            .gateway_responses
            .get(kind)
            .or_else(|| {
                let group = if status >= 500 {
                    "DEFAULT_5XX"
                } else {
                    "DEFAULT_4XX"
                };
                self.snapshot.gateway_responses.get(group)
            })
            .cloned();
        let Some(custom) = custom else {
            return message(status, msg);
        };
        let default = default_gateway_response(kind);
        let status = custom["statusCode"]
            .as_str()
            .and_then(|s| s.parse::<u16>().ok())
            .unwrap_or(status);
        let template = custom["responseTemplates"]["application/json"]
            .as_str()
            .or_else(|| default["responseTemplates"]["application/json"].as_str())
            .unwrap_or("")
            .to_string();
        let mut env = self.vtl_env(Bytes::new());
        if let Some(c) = env.vars.get_mut("context") {
            c["error"] = json!({"message": msg,
                "messageString": Value::String(msg.to_string()).to_string(), "responseType": kind});
        }
        let body = vtl::render(&template, &mut env)
            .unwrap_or_else(|_| json!({"message": msg}).to_string());
        let mut resp = AwsResponse::new(
            StatusCode::from_u16(status).unwrap_or(StatusCode::FORBIDDEN),
            "application/json",
            body,
        );
        for (k, v) in custom["responseParameters"]
            .as_object()
            .into_iter()
            .flatten()
        {
            if let (Some(name), Some(value)) =
                (k.strip_prefix("gatewayresponse.header."), v.as_str())
            {
                if let Some(lit) = value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')) {
                    resp.set_header(name, lit);
                } else if let Some(h) = value.strip_prefix("method.request.header.")
                    && let Some(val) = self.req.header(h)
                {
                    resp.set_header(name, val);
                }
            }
        }
        resp
    }

    fn context(&self) -> Value {
        let mut ctx = json!({
            "accountId": self.svc.account_id,
            "apiId": self.api_id,
            "deploymentId": self.deployment_id,
            "domainName": self.req.host,
            "domainPrefix": self.api_id,
            "extendedRequestId": self.request_id,
            "httpMethod": self.req.method.as_str(),
            "identity": proxy::identity(self.req),
            "path": format!("/{}{}", self.stage_name, self.path),
            "protocol": "HTTP/1.1",
            "requestId": self.request_id,
            "requestTime": self.request_time.format("%d/%b/%Y:%H:%M:%S +0000").to_string(),
            "requestTimeEpoch": self.request_time.timestamp_millis(),
            "resourceId": self.resource_id,
            "resourcePath": self.resource_path,
            "stage": self.stage_name,
            // What a template may set (`#set($context.requestOverride.header.X = ...)`) to
            // change the integration request, and the method response.
            "requestOverride": {"header": {}, "querystring": {}, "path": {}},
            "responseOverride": {"header": {}},
        });
        if let Some(a) = &self.authorizer {
            ctx["authorizer"] = Value::Object(a.clone());
        }
        ctx
    }

    /// The variables a mapping template sees.
    fn vtl_env(&self, body: Bytes) -> vtl::Env {
        let mut env = vtl::Env::default();
        env.input.body = String::from_utf8_lossy(&body).into_owned();
        env.input.path = self.path_params.clone();
        for (k, v) in &self.req.query {
            env.input.querystring.insert(k.clone(), v.clone());
        }
        for (k, v) in &self.req.headers {
            env.input.header.insert(
                proxy::title_case(k.as_str()),
                String::from_utf8_lossy(v.as_bytes()).into_owned(),
            );
        }
        env.vars.insert("context".into(), self.context());
        let sv = self.stage_variables();
        env.vars.insert(
            "stageVariables".into(),
            if sv.is_null() { json!({}) } else { sv },
        );
        env
    }
}

/// Answers a data-plane request (`/_aws/execute-api/<api-id>/...`).
pub async fn handle(svc: &ApiGatewayService, req: AwsRequest) -> AwsResponse {
    let rest = req.raw_path[super::EXECUTE_API_PATH.len()..].to_string();
    let (api_id, below) = match rest.split_once('/') {
        Some((a, b)) => (a.to_string(), format!("/{b}")),
        None => (rest.clone(), "/".to_string()),
    };
    let Some(region) = svc.region_of_api(&api_id) else {
        return message(403, "Forbidden");
    };
    let is_v2 = svc.read(&region, |r| r.v2_apis.contains_key(&api_id));
    if is_v2 {
        return crate::apigatewayv2::invoke::handle(svc, &req, &region, &api_id, &below).await;
    }
    let mut resp = serve_rest(svc, &req, &region, &api_id, &below).await;
    let request_id = uuid::Uuid::new_v4().to_string();
    if !resp.headers.contains_key("x-amzn-requestid") {
        resp.set_header("x-amzn-RequestId", &request_id);
    }
    resp
}

async fn serve_rest(
    svc: &ApiGatewayService,
    req: &AwsRequest,
    region: &str,
    api_id: &str,
    below: &str,
) -> AwsResponse {
    let (stage_name, path) = match below.trim_start_matches('/').split_once('/') {
        Some((s, p)) => (s.to_string(), format!("/{p}")),
        None => (below.trim_start_matches('/').to_string(), "/".to_string()),
    };
    let found = svc.read(region, |r| {
        let api = r.rest_apis.get(api_id)?;
        let stage = api.stages.get(&stage_name)?.clone();
        let dep_id = stage["deploymentId"].as_str()?.to_string();
        let dep = api.deployments.get(&dep_id)?;
        Some((stage, dep_id, dep.snapshot.clone(), api.doc.clone()))
    });
    let Some((stage, deployment_id, snapshot, api_doc)) = found else {
        return message(403, "Missing Authentication Token");
    };
    if api_doc["disableExecuteApiEndpoint"].as_bool() == Some(true) {
        return message(403, "Forbidden");
    }
    let mut call = Call {
        svc,
        req,
        region: region.to_string(),
        api_id: api_id.to_string(),
        stage,
        stage_name,
        deployment_id,
        snapshot,
        path,
        request_id: uuid::Uuid::new_v4().to_string(),
        request_time: chrono::Utc::now(),
        resource_id: String::new(),
        resource_path: String::new(),
        path_params: BTreeMap::new(),
        authorizer: None,
    };
    let decoded = percent_encoding::percent_decode_str(&call.path)
        .decode_utf8_lossy()
        .into_owned();
    let Some(found) = matching::find(&call.snapshot.resources, &decoded) else {
        return call.gateway_response(
            "MISSING_AUTHENTICATION_TOKEN",
            403,
            "Missing Authentication Token",
        );
    };
    let resource = &call.snapshot.resources[&found.resource_id];
    let verb = req.method.as_str();
    let Some(method) = resource
        .methods
        .get(verb)
        .or_else(|| resource.methods.get("ANY"))
        .cloned()
    else {
        return call.gateway_response(
            "MISSING_AUTHENTICATION_TOKEN",
            403,
            "Missing Authentication Token",
        );
    };
    call.resource_id = found.resource_id.clone();
    call.resource_path = RestApi::path_of(&call.snapshot.resources, &found.resource_id);
    call.path_params = found.params;

    if method["apiKeyRequired"].as_bool() == Some(true) && !api_key_ok(&call) {
        return call.gateway_response("INVALID_API_KEY", 403, "Forbidden");
    }
    if let Some(resp) = missing_parameters(&call, &method) {
        return resp;
    }
    match method["authorizationType"].as_str() {
        Some("CUSTOM") | Some("COGNITO_USER_POOLS") => {
            let id = method["authorizerId"].as_str().unwrap_or("");
            match authorizer::authorize(&call, id).await {
                Ok(ctx) => call.authorizer = Some(ctx),
                Err(resp) => return resp,
            }
        }
        _ => {}
    }
    let Some(integration) = method.get("methodIntegration").cloned() else {
        return message(500, "Internal server error");
    };
    match integration["type"].as_str().unwrap_or("") {
        "AWS_PROXY" => lambda_proxy(&call, &integration).await,
        "MOCK" => mock(&call, &integration),
        "AWS" => aws_integration(&call, &integration).await,
        "HTTP_PROXY" => http_proxy(&call, &integration).await,
        "HTTP" => http_integration(&call, &integration).await,
        other => message(
            500,
            &format!("cumulo: integration type {other} is not supported"),
        ),
    }
}

/// A method whose request validator checks parameters refuses a request without a required
/// one, as AWS does (400 `Missing required request parameters: [...]`). Bodies are not
/// validated against their models.
fn missing_parameters(call: &Call<'_>, method: &Value) -> Option<AwsResponse> {
    let validator = method["requestValidatorId"].as_str()?;
    let validates = call.svc.read(&call.region, |r| {
        r.rest_apis
            .get(&call.api_id)
            .and_then(|a| a.validators.get(validator))
            .map(|v| v["validateRequestParameters"] == true)
    });
    if validates != Some(true) {
        return None;
    }
    let mut missing = Vec::new();
    for (k, required) in method["requestParameters"].as_object()? {
        if *required != true {
            continue;
        }
        let present = if let Some(q) = k.strip_prefix("method.request.querystring.") {
            call.req.query_param(q).is_some()
        } else if let Some(h) = k.strip_prefix("method.request.header.") {
            call.req.header(h).is_some()
        } else if let Some(p) = k.strip_prefix("method.request.path.") {
            call.path_params.contains_key(p)
        } else {
            true
        };
        if !present {
            missing.push(k.rsplit('.').next().unwrap_or(k).to_string());
        }
    }
    (!missing.is_empty()).then(|| {
        call.gateway_response(
            "BAD_REQUEST_PARAMETERS",
            400,
            &format!(
                "Missing required request parameters: [{}]",
                missing.join(", ")
            ),
        )
    })
}

/// Whether the request carries an enabled API key of a usage plan that covers this stage.
fn api_key_ok(call: &Call<'_>) -> bool {
    let key = if call.snapshot.api_key_source == "AUTHORIZER" {
        call.authorizer
            .as_ref()
            .and_then(|a| a.get("usageIdentifierKey"))
            .and_then(Value::as_str)
            .map(str::to_string)
    } else {
        call.req.header("x-api-key").map(str::to_string)
    };
    let Some(key) = key else { return false };
    call.svc.read(&call.region, |r| {
        let Some((key_id, _)) = r
            .api_keys
            .iter()
            .find(|(_, k)| k["value"].as_str() == Some(key.as_str()) && k["enabled"] == true)
        else {
            return false;
        };
        r.usage_plans.iter().any(|(plan_id, plan)| {
            r.usage_plan_keys
                .get(plan_id)
                .is_some_and(|ks| ks.contains(key_id))
                && plan["apiStages"].as_array().is_some_and(|stages| {
                    stages.iter().any(|s| {
                        s["apiId"].as_str() == Some(call.api_id.as_str())
                            && s["stage"].as_str() == Some(call.stage_name.as_str())
                    })
                })
        })
    })
}

/// `${stageVariables.name}` in an integration URI, replaced.
pub(crate) fn with_stage_variables(text: &str, vars: &Value) -> String {
    let mut out = text.to_string();
    for (k, v) in vars.as_object().into_iter().flatten() {
        out = out.replace(
            &format!("${{stageVariables.{k}}}"),
            v.as_str().unwrap_or(""),
        );
    }
    out
}

/// The function an integration or authorizer URI names
/// (`arn:aws:apigateway:<region>:lambda:path/2015-03-31/functions/<arn>/invocations`).
pub fn function_of_uri(uri: &str) -> Option<&str> {
    let start = uri.find("/functions/")? + "/functions/".len();
    let rest = &uri[start..];
    Some(rest.strip_suffix("/invocations").unwrap_or(rest))
}

/// Invokes a function with `event`; `Err` is the function's error (its payload) or a failed
/// invocation.
pub(crate) async fn invoke_function(
    svc: &ApiGatewayService,
    region: &str,
    function: &str,
    event: &Value,
) -> Result<Bytes, Option<Bytes>> {
    let core = svc.lambda.core();
    let payload = Bytes::from(event.to_string());
    match core
        .invoke(
            region,
            function,
            None,
            payload,
            InvocationType::RequestResponse,
            "",
        )
        .await
    {
        Ok(inv) => match inv.output {
            Some(out) if out.function_error.is_none() => Ok(out.payload),
            Some(out) => Err(Some(out.payload)),
            None => Err(None),
        },
        Err(e) => {
            eprintln!(
                "cumulo: apigateway: invoking {function} failed: {}",
                e.message
            );
            Err(None)
        }
    }
}

async fn lambda_proxy(call: &Call<'_>, integration: &Value) -> AwsResponse {
    let uri = with_stage_variables(
        integration["uri"].as_str().unwrap_or(""),
        &call.stage_variables(),
    );
    let Some(function) = function_of_uri(&uri) else {
        return message(500, "Internal server error");
    };
    let event = proxy::rest_event(call);
    match invoke_function(call.svc, &call.region, function, &event).await {
        Ok(payload) => proxy::rest_response(
            &payload,
            Some(&call.snapshot.binary_media_types),
            call.req.header("accept"),
        )
        .unwrap_or_else(|| message(502, "Internal server error")),
        // The function failed: AWS's 502; it could not be invoked at all (no such function):
        // the 500 of a configuration error.
        Err(Some(_)) => message(502, "Internal server error"),
        Err(None) => message(500, "Internal server error"),
    }
}

/// The request template for the request's content type, per the passthrough behaviour;
/// `Ok(None)` passes the body through.
// The error is the answer to send, returned once per request: its size does not matter.
#[allow(clippy::result_large_err)]
fn request_template(call: &Call<'_>, integration: &Value) -> Result<Option<String>, AwsResponse> {
    let ct = call
        .req
        .header("content-type")
        .map(|c| c.split(';').next().unwrap_or("").trim().to_string())
        .unwrap_or_else(|| "application/json".to_string());
    let templates = integration["requestTemplates"].as_object();
    if let Some(t) = templates.and_then(|t| t.get(&ct)) {
        return Ok(Some(t.as_str().unwrap_or("").to_string()));
    }
    let behaviour = integration["passthroughBehavior"]
        .as_str()
        .unwrap_or("WHEN_NO_MATCH");
    let has_templates = templates.is_some_and(|t| !t.is_empty());
    match behaviour {
        "NEVER" => Err(message(415, "Unsupported Media Type")),
        "WHEN_NO_TEMPLATES" if has_templates => Err(message(415, "Unsupported Media Type")),
        _ => Ok(None),
    }
}

#[allow(clippy::result_large_err)]
fn render(call: &Call<'_>, template: &str, body: Bytes) -> Result<String, AwsResponse> {
    render_with_context(call, template, body).map(|(text, _)| text)
}

/// Renders `template` and answers the `$context` it left, whose `requestOverride` and
/// `responseOverride` change the integration request or the method response.
#[allow(clippy::result_large_err)]
fn render_with_context(
    call: &Call<'_>,
    template: &str,
    body: Bytes,
) -> Result<(String, Value), AwsResponse> {
    let mut env = call.vtl_env(body);
    let text = vtl::render(template, &mut env).map_err(|e| message(500, &e.to_string()))?;
    Ok((text, env.vars.remove("context").unwrap_or(Value::Null)))
}

/// The integration response whose selection pattern matches `selector` (an error message or
/// status code), else the default one (no pattern).
fn select_response(integration: &Value, selector: Option<&str>) -> Option<Value> {
    let responses = integration["integrationResponses"].as_object()?;
    if let Some(sel) = selector {
        for r in responses.values() {
            let pattern = r["selectionPattern"].as_str().unwrap_or("");
            if pattern.is_empty() {
                continue;
            }
            let full = format!("^(?s:{pattern})$");
            if regex::Regex::new(&full).is_ok_and(|re| re.is_match(sel)) {
                return Some(r.clone());
            }
        }
    }
    responses
        .values()
        .find(|r| r["selectionPattern"].as_str().unwrap_or("").is_empty())
        .cloned()
}

/// Renders an integration response: status, mapped headers and the response template (the
/// integration's body passes through when no template applies).
fn integration_answer(
    call: &Call<'_>,
    response: &Value,
    body: Bytes,
    integration_headers: &HeaderMap,
) -> AwsResponse {
    let status = response["statusCode"]
        .as_str()
        .and_then(|s| s.parse::<u16>().ok())
        .unwrap_or(200);
    let templates = response["responseTemplates"].as_object();
    let template = templates
        .and_then(|t| t.get("application/json").or_else(|| t.values().next()))
        .and_then(Value::as_str);
    let (out, context) = match template {
        Some(t) if !t.is_empty() => match render_with_context(call, t, body.clone()) {
            Ok((s, context)) => (Bytes::from(s), context),
            Err(resp) => return resp,
        },
        _ => (body.clone(), Value::Null),
    };
    let ct = templates
        .and_then(|t| t.keys().next().cloned())
        .unwrap_or_else(|| "application/json".to_string());
    let overrides = &context["responseOverride"];
    let status = overrides["status"]
        .as_u64()
        .or_else(|| overrides["status"].as_str()?.trim().parse().ok())
        .and_then(|s| u16::try_from(s).ok())
        .unwrap_or(status);
    let mut resp = AwsResponse::new(
        StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
        &ct,
        out,
    );
    let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    for (k, v) in response["responseParameters"]
        .as_object()
        .into_iter()
        .flatten()
    {
        let (Some(name), Some(expr)) = (k.strip_prefix("method.response.header."), v.as_str())
        else {
            continue;
        };
        let value = if let Some(lit) = expr.strip_prefix('\'').and_then(|e| e.strip_suffix('\'')) {
            Some(lit.to_string())
        } else if let Some(h) = expr.strip_prefix("integration.response.header.") {
            integration_headers
                .get(h)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        } else if let Some(path) = expr.strip_prefix("integration.response.body.") {
            let v = vtl::json_path(&parsed, &format!("$.{path}"));
            (!v.is_null()).then(|| vtl::display(&v))
        } else if let Some(h) = expr.strip_prefix("method.request.header.") {
            call.req.header(h).map(str::to_string)
        } else {
            None
        };
        if let Some(value) = value {
            resp.set_header(name, &value);
        }
    }
    for (name, value) in overrides["header"].as_object().into_iter().flatten() {
        if !value.is_null() {
            resp.set_header(name, &vtl::display(value));
        }
    }
    resp
}

fn mock(call: &Call<'_>, integration: &Value) -> AwsResponse {
    let template = match request_template(call, integration) {
        Ok(t) => t,
        Err(resp) => return resp,
    };
    let status = match template {
        Some(t) => match render(call, &t, call.req.body.clone()) {
            Ok(out) => serde_json::from_str::<Value>(&out)
                .ok()
                .and_then(|v| {
                    v.get("statusCode")
                        .and_then(|s| s.as_i64().or_else(|| s.as_str()?.parse().ok()))
                })
                .unwrap_or(200),
            Err(resp) => return resp,
        },
        None => serde_json::from_slice::<Value>(&call.req.body)
            .ok()
            .and_then(|v| v.get("statusCode").and_then(Value::as_i64))
            .unwrap_or(200),
    };
    match select_response(integration, Some(&status.to_string())) {
        Some(r) => integration_answer(call, &r, Bytes::new(), &HeaderMap::new()),
        None => message(500, "Internal server error"),
    }
}

async fn aws_integration(call: &Call<'_>, integration: &Value) -> AwsResponse {
    let uri = with_stage_variables(
        integration["uri"].as_str().unwrap_or(""),
        &call.stage_variables(),
    );
    // AWS maps an empty request body to `{}` for the template and the integration.
    let body = if call.req.body.is_empty() {
        Bytes::from_static(b"{}")
    } else {
        call.req.body.clone()
    };
    let (payload, context) = match request_template(call, integration) {
        Ok(Some(t)) => match render_with_context(call, &t, body) {
            Ok(rendered) => rendered,
            Err(resp) => return resp,
        },
        Ok(None) => (String::from_utf8_lossy(&body).into_owned(), Value::Null),
        Err(resp) => return resp,
    };
    if let Some(function) = lambda_function(&uri) {
        let Ok(reply) = invoke_mapped(call.svc, &call.region, function, &payload).await else {
            return message(500, "Internal server error");
        };
        return match select_response(integration, reply.error.as_deref()) {
            Some(r) => integration_answer(call, &r, reply.payload, &HeaderMap::new()),
            None => message(500, "Internal server error"),
        };
    }
    let mut mapped = parameters::Mapped::resolve(&integration["requestParameters"], |src| {
        parameters::rest_source(call, src)
    });
    mapped.apply_overrides(&context["requestOverride"]);
    for (k, v) in &call.path_params {
        if !mapped.path.iter().any(|(name, _)| name == k) {
            mapped.path.push((k.clone(), v.clone()));
        }
    }
    let method = integration["httpMethod"]
        .as_str()
        .and_then(|m| m.parse::<Method>().ok())
        .unwrap_or(Method::POST);
    let content_type = call
        .req
        .header("content-type")
        .unwrap_or("application/json");
    let out = service::Outgoing {
        method,
        mapped: &mapped,
        body: Bytes::from(payload),
        content_type,
        host: endpoint_host(&call.req.host),
    };
    match service::call(call.svc, &uri, out).await {
        Ok(reply) => match select_response(integration, Some(&reply.status.to_string())) {
            Some(r) => integration_answer(call, &r, reply.body, &reply.headers),
            None => message(500, "Internal server error"),
        },
        Err(unsupported) => message(500, &unsupported),
    }
}

/// The `host:port` of cumulo's own endpoint behind an API's host
/// (`<api-id>.execute-api.localhost:4566` → `localhost:4566`).
pub(crate) fn endpoint_host(host: &str) -> String {
    match host.split_once(".execute-api.") {
        Some((_, rest)) => rest.to_string(),
        None => host.to_string(),
    }
}

/// The Lambda function a non-proxy AWS integration's URI invokes
/// (`arn:aws:apigateway:<region>:lambda:path/2015-03-31/functions/<arn>/invocations`); other
/// URIs reach their service through [`service::call`].
pub(crate) fn lambda_function(uri: &str) -> Option<&str> {
    uri.contains(":lambda:path/")
        .then(|| function_of_uri(uri))
        .flatten()
}

/// What a non-proxy AWS integration's function answered.
pub(crate) struct MappedReply {
    pub payload: Bytes,
    /// The function's `errorMessage` when it failed: what integration responses select on.
    pub error: Option<String>,
}

/// Invokes a non-proxy AWS integration's function with its mapped request: the template's
/// output as the event (`{}` when empty, a JSON string when it is not JSON). `Err` is an
/// invocation that did not run (no such function).
pub(crate) async fn invoke_mapped(
    svc: &ApiGatewayService,
    region: &str,
    function: &str,
    payload: &str,
) -> Result<MappedReply, ()> {
    let event: Value = if payload.trim().is_empty() {
        json!({})
    } else {
        serde_json::from_str(payload).unwrap_or_else(|_| Value::String(payload.to_string()))
    };
    match invoke_function(svc, region, function, &event).await {
        Ok(payload) => Ok(MappedReply {
            payload,
            error: None,
        }),
        Err(Some(payload)) => {
            let error = serde_json::from_slice::<Value>(&payload)
                .ok()
                .and_then(|v| v["errorMessage"].as_str().map(str::to_string))
                .unwrap_or_default();
            Ok(MappedReply {
                payload,
                error: Some(error),
            })
        }
        Err(None) => Err(()),
    }
}

fn integration_url(call: &Call<'_>, integration: &Value) -> String {
    let mut url = with_stage_variables(
        integration["uri"].as_str().unwrap_or(""),
        &call.stage_variables(),
    );
    for (k, v) in &call.path_params {
        url = url.replace(&format!("{{{k}}}"), v);
        url = url.replace(&format!("{{{k}+}}"), v);
    }
    url
}

async fn http_proxy(call: &Call<'_>, integration: &Value) -> AwsResponse {
    let mapped = parameters::Mapped::resolve(&integration["requestParameters"], |src| {
        parameters::rest_source(call, src)
    });
    let url = mapped.url(&integration_url(call, integration), &call.req.raw_query);
    let mut headers = call.req.headers.clone();
    mapped.apply_headers(&mut headers);
    let method = integration["httpMethod"]
        .as_str()
        .filter(|m| *m != "ANY")
        .and_then(|m| m.parse::<Method>().ok())
        .unwrap_or_else(|| call.req.method.clone());
    let timeout = Duration::from_millis(integration["timeoutInMillis"].as_u64().unwrap_or(29000));
    match http::send(method, &url, &headers, call.req.body.clone(), timeout).await {
        Ok(reply) => {
            let mut resp = AwsResponse::new(reply.status, "", reply.body);
            for (k, v) in &reply.headers {
                if !matches!(
                    k.as_str(),
                    "connection" | "transfer-encoding" | "content-length"
                ) {
                    resp.headers.append(k.clone(), v.clone());
                }
            }
            resp
        }
        Err(e) if e == "timed out" => message(504, "Endpoint request timed out"),
        Err(e) => {
            eprintln!("cumulo: apigateway: HTTP_PROXY to {url}: {e}");
            message(500, "Internal server error")
        }
    }
}

async fn http_integration(call: &Call<'_>, integration: &Value) -> AwsResponse {
    let (body, context) = match request_template(call, integration) {
        Ok(Some(t)) => match render_with_context(call, &t, call.req.body.clone()) {
            Ok((s, context)) => (Bytes::from(s), context),
            Err(resp) => return resp,
        },
        Ok(None) => (call.req.body.clone(), Value::Null),
        Err(resp) => return resp,
    };
    let mut mapped = parameters::Mapped::resolve(&integration["requestParameters"], |src| {
        parameters::rest_source(call, src)
    });
    mapped.apply_overrides(&context["requestOverride"]);
    let url = mapped.url(&integration_url(call, integration), "");
    let method = integration["httpMethod"]
        .as_str()
        .and_then(|m| m.parse::<Method>().ok())
        .unwrap_or(Method::POST);
    let timeout = Duration::from_millis(integration["timeoutInMillis"].as_u64().unwrap_or(29000));
    let mut headers = HeaderMap::new();
    headers.insert(
        ::http::header::CONTENT_TYPE,
        ::http::HeaderValue::from_static("application/json"),
    );
    mapped.apply_headers(&mut headers);
    match http::send(method, &url, &headers, body, timeout).await {
        Ok(reply) => {
            let status = reply.status.as_u16().to_string();
            match select_response(integration, Some(&status)) {
                Some(r) => integration_answer(call, &r, reply.body, &reply.headers),
                None => message(500, "Internal server error"),
            }
        }
        Err(e) if e == "timed out" => message(504, "Endpoint request timed out"),
        Err(e) => {
            eprintln!("cumulo: apigateway: HTTP integration to {url}: {e}");
            message(500, "Internal server error")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_uris() {
        assert_eq!(
            api_of_host("abc123defg.execute-api.localhost:4566"),
            Some("abc123defg")
        );
        assert_eq!(api_of_host("bucket.s3.localhost"), None);
        assert_eq!(
            function_of_uri(
                "arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/arn:aws:lambda:us-east-1:000000000000:function:f/invocations"
            ),
            Some("arn:aws:lambda:us-east-1:000000000000:function:f")
        );
    }

    #[test]
    fn selection_patterns() {
        let integ = json!({"integrationResponses": {
            "200": {"statusCode": "200", "selectionPattern": ""},
            "400": {"statusCode": "400", "selectionPattern": ".*Bad.*"},
            "500": {"statusCode": "500", "selectionPattern": "5\\d{2}"}}});
        assert_eq!(
            select_response(&integ, Some("Bad input")).unwrap()["statusCode"],
            "400"
        );
        assert_eq!(
            select_response(&integ, Some("503")).unwrap()["statusCode"],
            "500"
        );
        assert_eq!(select_response(&integ, None).unwrap()["statusCode"], "200");
    }
}
