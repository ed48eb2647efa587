//! A WebSocket route's integration, run for one event (`$connect`, a message, `$disconnect`):
//! Lambda proxy (AWS_PROXY) with AWS's proxy event; HTTP_PROXY, the message (or the upgrade's
//! headers and query string) forwarded to the integration URI; and the non-proxy types (MOCK,
//! HTTP, AWS reaching a Lambda function or another service) through the request template the
//! template selection expression picks, the integration response the backend's answer selects
//! (its status code; a function's `errorMessage`) and that response's own template. Templates
//! are the REST APIs' VTL ([`vtl`]); AWS integrations reuse the REST data plane's Lambda call
//! and service call (`invoke::service`), and request parameters its `Mapped`.

use super::selection::{body_variable, integration_response, pick_template};
use crate::apigateway::ApiGatewayService;
use crate::apigateway::invoke::parameters::Mapped;
use crate::apigateway::invoke::{
    endpoint_host, function_of_uri, http, invoke_function, invoke_mapped, lambda_function, service,
    with_stage_variables,
};
use crate::apigateway::vtl;
use ::http::{HeaderMap, HeaderName, HeaderValue, Method};
use bytes::Bytes;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

/// The upgrade request of a connection: what `$connect` (and `$disconnect`) integrations see
/// of the client, since a message carries no headers.
#[derive(Default)]
pub(crate) struct Handshake {
    /// Values by Title-Case name.
    pub headers: BTreeMap<String, Vec<String>>,
    pub query: Vec<(String, String)>,
    pub raw_query: String,
}

impl Handshake {
    fn header(&self, name: &str) -> Option<&Vec<String>> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v)
    }

    fn query_values(&self, name: &str) -> Vec<&str> {
        self.query
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }
}

/// One event of a connection, as its route's integration receives it.
pub(crate) struct Event<'a> {
    pub svc: &'a ApiGatewayService,
    pub region: &'a str,
    /// The message; empty for `$connect` and `$disconnect`.
    pub body: &'a str,
    /// The event's request context: `$context` of templates and `context.*` of mappings.
    pub context: &'a Value,
    pub stage_variables: &'a Value,
    /// The upgrade request, for `$connect` and `$disconnect` only.
    pub handshake: Option<&'a Handshake>,
    /// AWS's Lambda proxy event, for AWS_PROXY.
    pub proxy_event: &'a Value,
}

/// What the integration answered: a status (which decides `$connect`), the body a two-way
/// route sends back, and headers (a proxy `$connect` answer's reach the 101).
#[derive(Debug)]
pub(crate) struct Answer {
    pub status: u16,
    pub body: Option<String>,
    pub headers: Vec<(String, String)>,
}

/// An integration that failed: the status that refuses a `$connect`, and the message of the
/// error frame a message gets.
#[derive(Debug, PartialEq)]
pub(crate) struct Failure {
    pub status: u16,
    pub message: String,
}

impl Failure {
    fn internal() -> Self {
        Failure {
            status: 500,
            message: "Internal server error".into(),
        }
    }

    /// What cumulo does not run, named in the frame (as the REST data plane's 500 names it)
    /// and in the server's log.
    fn unsupported(message: String) -> Self {
        eprintln!("cumulo: apigateway: {message}");
        Failure {
            status: 500,
            message,
        }
    }
}

/// Runs `integration` for `ev`.
pub(crate) async fn run(integration: &Value, ev: &Event<'_>) -> Result<Answer, Failure> {
    let kind = integration["integrationType"].as_str().unwrap_or("");
    if integration["connectionType"] == "VPC_LINK" && kind.starts_with("HTTP") {
        return Err(Failure::unsupported(format!(
            "WebSocket {kind} integrations through a VPC link are not supported"
        )));
    }
    match kind {
        "AWS_PROXY" => lambda_proxy(integration, ev).await,
        "HTTP_PROXY" => http_proxy(integration, ev).await,
        kind @ ("MOCK" | "HTTP" | "AWS") => non_proxy(kind, integration, ev).await,
        other => Err(Failure::unsupported(format!(
            "WebSocket integrations of type {other} are not supported"
        ))),
    }
}

fn uri(integration: &Value, ev: &Event<'_>) -> String {
    with_stage_variables(
        integration["integrationUri"].as_str().unwrap_or(""),
        ev.stage_variables,
    )
}

async fn lambda_proxy(integration: &Value, ev: &Event<'_>) -> Result<Answer, Failure> {
    let uri = uri(integration, ev);
    let function = if uri.starts_with("arn:aws:lambda:") {
        Some(uri.as_str())
    } else {
        function_of_uri(&uri)
    };
    let Some(function) = function else {
        return Err(Failure::internal());
    };
    match invoke_function(ev.svc, ev.region, function, ev.proxy_event).await {
        Ok(payload) => Ok(proxy_answer(&payload)),
        // The function failed: AWS's 502; it could not be invoked: a 500.
        Err(Some(_)) => Err(Failure {
            status: 502,
            message: "Internal server error".into(),
        }),
        Err(None) => Err(Failure::internal()),
    }
}

/// A Lambda proxy answer: `{statusCode, headers, body}`, or a bare value (a 200 whose body is
/// the value itself).
fn proxy_answer(payload: &[u8]) -> Answer {
    let value: Value = serde_json::from_slice(payload)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(payload).into_owned()));
    let text = |v: &Value| match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        other => Some(other.to_string()),
    };
    match &value {
        Value::Object(m) => Answer {
            status: m
                .get("statusCode")
                .and_then(|s| s.as_u64().or_else(|| s.as_str()?.parse().ok()))
                .and_then(|s| u16::try_from(s).ok())
                .unwrap_or(200),
            body: m.get("body").and_then(text),
            headers: m
                .get("headers")
                .and_then(Value::as_object)
                .into_iter()
                .flatten()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect(),
        },
        other => Answer {
            status: 200,
            body: text(other),
            headers: Vec::new(),
        },
    }
}

/// The request headers, query string and path parameters an integration's
/// Resolves the integration's request parameters from their sources: `'static'` values,
/// `route.request.header|multivalueheader|querystring|multivaluequerystring.X` (the upgrade
/// request: `$connect` only), `route.request.body.<JSONPath>`, `context.X` and
/// `stageVariables.X`. A source without a value maps nothing.
fn mapped(integration: &Value, ev: &Event<'_>) -> Mapped {
    let body: std::cell::OnceCell<Value> = std::cell::OnceCell::new();
    let source = |src: &str| -> Option<String> {
        if let Some(lit) = src.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
            return Some(lit.to_string());
        }
        if let Some(path) = src.strip_prefix("route.request.body.") {
            let json = body.get_or_init(|| serde_json::from_str(ev.body).unwrap_or(Value::Null));
            let path = if path.starts_with('$') {
                path.to_string()
            } else {
                format!("$.{path}")
            };
            let v = vtl::json_path(json, &path);
            return (!v.is_null()).then(|| vtl::display(&v));
        }
        if let Some(rest) = src.strip_prefix("route.request.") {
            let hs = ev.handshake?;
            let (kind, name) = rest.split_once('.')?;
            return match kind {
                "header" => hs.header(name)?.last().cloned(),
                "multivalueheader" => Some(hs.header(name)?.join(",")),
                "querystring" => hs.query_values(name).last().map(|v| v.to_string()),
                "multivaluequerystring" => {
                    let all = hs.query_values(name);
                    (!all.is_empty()).then(|| all.join(","))
                }
                _ => {
                    eprintln!(
                        "cumulo: apigateway: request parameter source {src} is not supported"
                    );
                    None
                }
            };
        }
        let (root, path) = if let Some(p) = src.strip_prefix("context.") {
            (ev.context, p)
        } else if let Some(p) = src.strip_prefix("stageVariables.") {
            (ev.stage_variables, p)
        } else {
            eprintln!("cumulo: apigateway: request parameter source {src} is not supported");
            return None;
        };
        let v = path.split('.').try_fold(root, |v, k| v.get(k))?;
        (!v.is_null()).then(|| vtl::display(v))
    };
    Mapped::resolve(&integration["requestParameters"], source)
}

/// The request's URL: the URI with stage variables and mapped path parameters, then the
/// upgrade's query string (HTTP_PROXY `$connect`) and the mapped query parameters.
fn url(integration: &Value, ev: &Event<'_>, m: &Mapped, pass_query: bool) -> String {
    let upgrade_query = match ev.handshake {
        Some(hs) if pass_query => hs.raw_query.as_str(),
        _ => "",
    };
    m.url(&uri(integration, ev), upgrade_query)
}

/// The upgrade's headers that a forwarded request must not carry (hop-by-hop and the
/// WebSocket handshake's own).
const NOT_FORWARDED: &[&str] = &[
    "host",
    "connection",
    "upgrade",
    "content-length",
    "transfer-encoding",
    "sec-websocket-key",
    "sec-websocket-version",
    "sec-websocket-extensions",
];

/// Sends the integration's HTTP request: its method (`integrationMethod`; POST when it names
/// none), `headers` then the mapped ones, and `body`.
async fn send(
    integration: &Value,
    url: &str,
    mut headers: HeaderMap,
    m: &Mapped,
    body: String,
) -> Result<http::Reply, Failure> {
    let method = integration["integrationMethod"]
        .as_str()
        .filter(|m| *m != "ANY")
        .and_then(|m| m.parse::<Method>().ok())
        .unwrap_or(Method::POST);
    m.apply_headers(&mut headers);
    let timeout = Duration::from_millis(integration["timeoutInMillis"].as_u64().unwrap_or(29000));
    match http::send(method, url, &headers, Bytes::from(body), timeout).await {
        Ok(reply) => Ok(reply),
        Err(e) if e == "timed out" => Err(Failure {
            status: 504,
            message: "Endpoint request timed out".into(),
        }),
        Err(e) => {
            eprintln!("cumulo: apigateway: WebSocket integration request to {url}: {e}");
            Err(Failure::internal())
        }
    }
}

/// A message's body goes as JSON, as AWS's integration requests do; the upgrade's
/// (`$connect`, `$disconnect`) have none.
fn json_content(headers: &mut HeaderMap, body: &str) {
    if !body.is_empty() {
        headers.insert(
            ::http::header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        );
    }
}

async fn http_proxy(integration: &Value, ev: &Event<'_>) -> Result<Answer, Failure> {
    let m = mapped(integration, ev);
    let url = url(integration, ev, &m, true);
    let mut headers = HeaderMap::new();
    for (k, values) in ev.handshake.map(|h| &h.headers).into_iter().flatten() {
        if NOT_FORWARDED.contains(&k.to_ascii_lowercase().as_str()) {
            continue;
        }
        let Ok(name) = k.parse::<HeaderName>() else {
            continue;
        };
        for v in values {
            if let Ok(v) = HeaderValue::from_str(v) {
                headers.append(name.clone(), v);
            }
        }
    }
    json_content(&mut headers, ev.body);
    let reply = send(integration, &url, headers, &m, ev.body.to_string()).await?;
    let body = String::from_utf8_lossy(&reply.body).into_owned();
    Ok(Answer {
        status: reply.status.as_u16(),
        body: (!body.is_empty()).then_some(body),
        // What a 101 may carry of the backend's answer: not its framing or content headers.
        headers: reply
            .headers
            .iter()
            .filter(|(k, _)| {
                !matches!(
                    k.as_str(),
                    "connection" | "transfer-encoding" | "content-length" | "content-type" | "date"
                )
            })
            .filter_map(|(k, v)| Some((k.to_string(), v.to_str().ok()?.to_string())))
            .collect(),
    })
}

/// What a non-proxy backend answered, before its integration response is applied.
struct Backend {
    status: u16,
    headers: HeaderMap,
    body: String,
    /// What a response template reads as `$input`: the backend's body; a MOCK, which has
    /// none, lends the message (as cumulo's MOCK always has).
    input: String,
    /// What selects the integration response: the status code (HTTP, MOCK), the function's
    /// `errorMessage` (AWS; none when it succeeded).
    selector: Option<String>,
}

/// The variables a template sees: `$input` over `input_body` (the upgrade's headers and
/// query string for `$connect`), `$context`, `$stageVariables`.
fn env(ev: &Event<'_>, input_body: &str) -> vtl::Env {
    let mut env = vtl::Env::default();
    env.input.body = input_body.to_string();
    if let Some(hs) = ev.handshake {
        for (k, v) in &hs.headers {
            env.input.header.insert(k.clone(), v.join(","));
        }
        for (k, v) in &hs.query {
            env.input.querystring.insert(k.clone(), v.clone());
        }
    }
    env.vars.insert("context".into(), ev.context.clone());
    let sv = if ev.stage_variables.is_object() {
        ev.stage_variables.clone()
    } else {
        json!({})
    };
    env.vars.insert("stageVariables".into(), sv);
    env
}

fn render(template: &str, env: &mut vtl::Env) -> Result<String, Failure> {
    vtl::render(template, env).map_err(|e| Failure::unsupported(e.to_string()))
}

async fn non_proxy(kind: &str, integration: &Value, ev: &Event<'_>) -> Result<Answer, Failure> {
    let parsed: Value = serde_json::from_str(ev.body).unwrap_or(Value::Null);
    // The request template, else the body as it came (as the passthrough behaviour allows).
    let payload = match pick_template(
        &integration["requestTemplates"],
        &integration["templateSelectionExpression"],
        |n| body_variable(n, &parsed),
    ) {
        Some(t) => render(t, &mut env(ev, ev.body))?,
        None => {
            let has_templates = integration["requestTemplates"]
                .as_object()
                .is_some_and(|t| !t.is_empty());
            match integration["passthroughBehavior"].as_str() {
                Some("NEVER") => return Err(unsupported_media()),
                Some("WHEN_NO_TEMPLATES") if has_templates => return Err(unsupported_media()),
                _ => ev.body.to_string(),
            }
        }
    };
    let backend = match kind {
        "MOCK" => {
            let status = serde_json::from_str::<Value>(&payload)
                .ok()
                .and_then(|v| {
                    let s = &v["statusCode"];
                    s.as_u64().or_else(|| s.as_str()?.parse().ok())
                })
                .and_then(|s| u16::try_from(s).ok())
                .unwrap_or(200);
            Backend {
                status,
                headers: HeaderMap::new(),
                body: String::new(),
                input: ev.body.to_string(),
                selector: Some(status.to_string()),
            }
        }
        "HTTP" => {
            let m = mapped(integration, ev);
            let url = url(integration, ev, &m, false);
            let mut headers = HeaderMap::new();
            json_content(&mut headers, &payload);
            let reply = send(integration, &url, headers, &m, payload).await?;
            Backend {
                status: reply.status.as_u16(),
                selector: Some(reply.status.as_u16().to_string()),
                headers: reply.headers,
                body: String::from_utf8_lossy(&reply.body).into_owned(),
                input: String::from_utf8_lossy(&reply.body).into_owned(),
            }
        }
        _ => {
            let uri = uri(integration, ev);
            if let Some(function) = lambda_function(&uri) {
                let reply = invoke_mapped(ev.svc, ev.region, function, &payload)
                    .await
                    .map_err(|()| Failure::internal())?;
                Backend {
                    status: if reply.error.is_some() { 500 } else { 200 },
                    headers: HeaderMap::new(),
                    body: String::from_utf8_lossy(&reply.payload).into_owned(),
                    input: String::from_utf8_lossy(&reply.payload).into_owned(),
                    selector: reply.error,
                }
            } else {
                let m = mapped(integration, ev);
                let method = integration["integrationMethod"]
                    .as_str()
                    .and_then(|m| m.parse::<Method>().ok())
                    .unwrap_or(Method::POST);
                let out = service::Outgoing {
                    method,
                    mapped: &m,
                    body: Bytes::from(payload),
                    content_type: "application/json",
                    host: endpoint_host(ev.context["domainName"].as_str().unwrap_or("")),
                };
                let reply = service::call(ev.svc, &uri, out)
                    .await
                    .map_err(Failure::unsupported)?;
                let body = String::from_utf8_lossy(&reply.body).into_owned();
                Backend {
                    status: reply.status,
                    selector: Some(reply.status.to_string()),
                    headers: reply.headers,
                    input: body.clone(),
                    body,
                }
            }
        }
    };
    respond(integration, ev, &parsed, backend)
}

/// AWS's answer when the passthrough behaviour refuses a message no template takes.
fn unsupported_media() -> Failure {
    Failure {
        status: 415,
        message: "Unsupported Media Type".into(),
    }
}

/// Applies the integration response `backend` selects: its template (picked by its template
/// selection expression) renders the body; without one the backend's body passes through.
fn respond(
    integration: &Value,
    ev: &Event<'_>,
    request: &Value,
    backend: Backend,
) -> Result<Answer, Failure> {
    let Some(response) = integration_response(
        &integration["integrationResponses"],
        backend.selector.as_deref(),
    ) else {
        if integration["integrationResponses"].is_object() {
            eprintln!(
                "cumulo: apigateway: no integration response of integration {} matches {:?} and it has no $default",
                integration["integrationId"].as_str().unwrap_or(""),
                backend.selector.as_deref().unwrap_or("")
            );
        }
        return Ok(Answer {
            status: backend.status,
            body: None,
            headers: Vec::new(),
        });
    };
    let header = |name: &str| -> Vec<String> {
        backend
            .headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok().map(str::to_string))
            .collect()
    };
    let var = |name: &str| -> Option<String> {
        if name == "integration.response.statuscode" {
            return Some(backend.status.to_string());
        }
        if let Some(h) = name.strip_prefix("integration.response.header.") {
            return header(h).last().cloned();
        }
        if let Some(h) = name.strip_prefix("integration.response.multivalueheader.") {
            let all = header(h);
            return (!all.is_empty()).then(|| all.join(","));
        }
        body_variable(name, request)
    };
    let body = match pick_template(
        &response["responseTemplates"],
        &response["templateSelectionExpression"],
        var,
    ) {
        Some(t) => Some(render(t, &mut env(ev, &backend.input))?),
        None => (!backend.body.is_empty()).then(|| backend.body.clone()),
    };
    Ok(Answer {
        status: backend.status,
        body,
        headers: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event<'a>(
        svc: &'a ApiGatewayService,
        body: &'a str,
        ctx: &'a Value,
        hs: Option<&'a Handshake>,
    ) -> Event<'a> {
        static NULL: Value = Value::Null;
        Event {
            svc,
            region: "us-east-1",
            body,
            context: ctx,
            stage_variables: &NULL,
            handshake: hs,
            proxy_event: &NULL,
        }
    }

    #[tokio::test]
    async fn mock_templates_and_integration_responses() {
        let svc = crate::providers::test_support::services().apigateway;
        let integ = json!({
            "integrationType": "MOCK",
            "requestTemplates": {"$default": "{\"statusCode\": $input.json('$.code')}"},
            "templateSelectionExpression": "\\$default",
            "integrationResponses": {
                "a": {"integrationResponseKey": "/4\\d\\d/",
                      "responseTemplates": {"$default": "bad $context.connectionId"}},
                "b": {"integrationResponseKey": "$default",
                      "templateSelectionExpression": "${request.body.kind}",
                      "responseTemplates": {"$default": "ok $input.path('$.code')",
                                            "short": "k"}}}});
        let ctx = json!({"connectionId": "c1"});
        let run_with = |body: &'static str| {
            let (svc, ctx, integ) = (&svc, &ctx, &integ);
            async move { run(integ, &event(svc, body, ctx, None)).await.unwrap() }
        };
        let ok = run_with(r#"{"code": 200}"#).await;
        assert_eq!((ok.status, ok.body.as_deref()), (200, Some("ok 200")));
        let short = run_with(r#"{"code": 200, "kind": "short"}"#).await;
        assert_eq!(short.body.as_deref(), Some("k"));
        let bad = run_with(r#"{"code": 404}"#).await;
        assert_eq!((bad.status, bad.body.as_deref()), (404, Some("bad c1")));
        // No templates: a 200 without a body.
        let bare = run(
            &json!({"integrationType": "MOCK"}),
            &event(&svc, "", &ctx, None),
        )
        .await
        .unwrap();
        assert_eq!((bare.status, bare.body), (200, None));
        // A passthrough behaviour of NEVER refuses a message no template takes.
        let never = json!({"integrationType": "MOCK", "passthroughBehavior": "NEVER",
            "requestTemplates": {"x": "{}"}, "templateSelectionExpression": "x-$request.body.a"});
        let refused = run(&never, &event(&svc, "{}", &ctx, None))
            .await
            .unwrap_err();
        assert_eq!(refused.status, 415);
    }

    #[tokio::test]
    async fn unsupported_integrations_are_named() {
        let svc = crate::providers::test_support::services().apigateway;
        let ctx = json!({});
        let kinesis = json!({"integrationType": "AWS",
            "integrationUri": "arn:aws:apigateway:us-east-1:kinesis:action/PutRecord"});
        let f = run(&kinesis, &event(&svc, "{}", &ctx, None))
            .await
            .unwrap_err();
        assert_eq!(f.status, 500);
        assert!(
            f.message.contains("kinesis is not one of them"),
            "{}",
            f.message
        );
        let vpc = json!({"integrationType": "HTTP_PROXY", "connectionType": "VPC_LINK",
            "integrationUri": "arn:aws:elasticloadbalancing:us-east-1:000000000000:listener/net/n/1/2"});
        let f = run(&vpc, &event(&svc, "{}", &ctx, None)).await.unwrap_err();
        assert_eq!(
            f.message,
            "WebSocket HTTP_PROXY integrations through a VPC link are not supported"
        );
        let vtl =
            json!({"integrationType": "MOCK", "requestTemplates": {"$default": "#macro(x)#end"}});
        let f = run(&vtl, &event(&svc, "{}", &ctx, None)).await.unwrap_err();
        assert!(
            f.message.starts_with("cumulo: mapping template"),
            "{}",
            f.message
        );
    }

    #[test]
    fn request_parameters() {
        let svc = crate::providers::test_support::services().apigateway;
        let ctx = json!({"connectionId": "c1", "authorizer": {"principalId": "p"}});
        let hs = Handshake {
            headers: BTreeMap::from([(
                "Auth".to_string(),
                vec!["a1".to_string(), "a2".to_string()],
            )]),
            query: vec![("t".into(), "1".into()), ("t".into(), "2".into())],
            raw_query: "t=1&t=2".into(),
        };
        let integ = json!({"integrationUri": "http://h/{item}", "requestParameters": {
            "integration.request.header.ConnectionId": "context.connectionId",
            "integration.request.header.Who": "context.authorizer.principalId",
            "integration.request.header.Auth": "route.request.header.auth",
            "integration.request.header.All": "route.request.multivalueheader.Auth",
            "integration.request.querystring.t": "route.request.querystring.t",
            "integration.request.querystring.ts": "route.request.multivaluequerystring.t",
            "integration.request.querystring.static": "'a b'",
            "integration.request.path.item": "route.request.body.item.id",
            "integration.request.header.Missing": "route.request.body.nope"}});
        let ev = event(&svc, r#"{"item": {"id": 7}}"#, &ctx, Some(&hs));
        let m = mapped(&integ, &ev);
        let h: BTreeMap<_, _> = m.headers.iter().cloned().collect();
        assert_eq!(h["ConnectionId"], "c1");
        assert_eq!(h["Who"], "p");
        assert_eq!(h["Auth"], "a2");
        assert_eq!(h["All"], "a1,a2");
        assert!(!h.contains_key("Missing"));
        assert_eq!(
            url(&integ, &ev, &m, true),
            "http://h/7?t=1&t=2&t=2&ts=1%2C2&static=a%20b"
        );
        // A message has no upgrade request: its header sources map nothing.
        let ev = event(&svc, "{}", &ctx, None);
        let m = mapped(&integ, &ev);
        assert!(!m.headers.iter().any(|(k, _)| k == "Auth"));
        assert_eq!(url(&integ, &ev, &m, true), "http://h/{item}?static=a%20b");
    }

    #[test]
    fn proxy_answers() {
        let a = proxy_answer(br#"{"statusCode": "401", "body": {"x": 1}, "headers": {"h": "v"}}"#);
        assert_eq!(
            (a.status, a.body.as_deref(), a.headers),
            (
                401,
                Some(r#"{"x":1}"#),
                vec![("h".to_string(), "v".to_string())]
            )
        );
        let bare = proxy_answer(b"\"text\"");
        assert_eq!((bare.status, bare.body.as_deref()), (200, Some("text")));
        assert_eq!(proxy_answer(b"null").body, None);
    }
}
