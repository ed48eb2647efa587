//! The HTTP APIs' data plane: a request is matched to a route of its stage's deployment
//! (`$default` stage: no stage in the path), CORS preflights are answered from the API's
//! `corsConfiguration`, the route's authorizer runs (JWT: claims read, issuer, audience and
//! expiry checked, signature not verified; Lambda REQUEST with simple or IAM responses), and the
//! integration is called: AWS_PROXY Lambda with payload format 2.0 or 1.0, HTTP_PROXY. An
//! unknown route is AWS's 404 `{"message":"Not Found"}`.

use crate::apigateway::ApiGatewayService;
use crate::apigateway::invoke::authorizer::evaluate;
use crate::apigateway::invoke::{function_of_uri, http, invoke_function, message, proxy};
use crate::apigateway::state::V2Deployment;
use ::http::{Method, StatusCode};
use base64::Engine;
use cumulo_wire::{AwsRequest, AwsResponse};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::time::Duration;

/// A matched route: its document and path parameters.
#[derive(Debug)]
pub struct Matched {
    pub route: Value,
    pub params: BTreeMap<String, String>,
}

/// How specific a route's path is for a request path, `None` when it does not match: literal
/// segments beat `{param}`, which beats a greedy `{param+}`.
fn route_match(route_path: &str, segs: &[&str]) -> Option<(Vec<u8>, BTreeMap<String, String>)> {
    let parts: Vec<&str> = route_path.split('/').filter(|s| !s.is_empty()).collect();
    let mut score = Vec::new();
    let mut params = BTreeMap::new();
    for (i, part) in parts.iter().enumerate() {
        if let Some(name) = part.strip_prefix('{').and_then(|p| p.strip_suffix("+}")) {
            if i >= segs.len() {
                return None;
            }
            params.insert(name.to_string(), segs[i..].join("/"));
            score.push(0);
            return Some((score, params));
        }
        let seg = segs.get(i)?;
        if let Some(name) = part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
            params.insert(name.to_string(), (*seg).to_string());
            score.push(1);
        } else if part == seg {
            score.push(2);
        } else {
            return None;
        }
    }
    (parts.len() == segs.len()).then_some((score, params))
}

/// The route of `routes` a request reaches: the most specific path, an exact method before
/// `ANY`, then `$default`.
pub fn find_route(routes: &BTreeMap<String, Value>, method: &str, path: &str) -> Option<Matched> {
    let segs: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
    let mut best: Option<((Vec<u8>, bool), Matched)> = None;
    for r in routes.values() {
        let Some((m, p)) = r["routeKey"].as_str().and_then(|k| k.split_once(' ')) else {
            continue;
        };
        if m != method && m != "ANY" {
            continue;
        }
        let Some((score, params)) = route_match(p, &segs) else {
            continue;
        };
        let key = (score, m == method);
        if best.as_ref().is_none_or(|(k, _)| key > *k) {
            best = Some((
                key,
                Matched {
                    route: r.clone(),
                    params,
                },
            ));
        }
    }
    best.map(|(_, m)| m).or_else(|| {
        routes
            .values()
            .find(|r| r["routeKey"] == "$default")
            .map(|r| Matched {
                route: r.clone(),
                params: BTreeMap::new(),
            })
    })
}

fn not_found() -> AwsResponse {
    message(404, "Not Found")
}

/// CORS response headers for a request from `origin`, when the configuration allows it.
fn cors_headers(cors: &Value, origin: &str, preflight: bool) -> Vec<(String, String)> {
    let list = |k: &str| -> Vec<String> {
        cors[k]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    };
    let origins = list("allowOrigins");
    let allowed = if origins.iter().any(|o| o == "*") {
        "*".to_string()
    } else if origins.iter().any(|o| o == origin) {
        origin.to_string()
    } else {
        return Vec::new();
    };
    let mut out = vec![("access-control-allow-origin".to_string(), allowed)];
    if cors["allowCredentials"] == true {
        out.push(("access-control-allow-credentials".into(), "true".into()));
    }
    let expose = list("exposeHeaders");
    if !expose.is_empty() && !preflight {
        out.push(("access-control-expose-headers".into(), expose.join(",")));
    }
    if preflight {
        let methods = list("allowMethods");
        if !methods.is_empty() {
            out.push(("access-control-allow-methods".into(), methods.join(",")));
        }
        let headers = list("allowHeaders");
        if !headers.is_empty() {
            out.push(("access-control-allow-headers".into(), headers.join(",")));
        }
        if let Some(age) = cors["maxAge"].as_i64() {
            out.push(("access-control-max-age".into(), age.to_string()));
        }
    }
    out
}

struct Ctx<'a> {
    svc: &'a ApiGatewayService,
    req: &'a AwsRequest,
    region: &'a str,
    api_id: &'a str,
    stage_name: String,
    stage: Value,
    raw_path: String,
    route_key: String,
    params: BTreeMap<String, String>,
    request_id: String,
    now: chrono::DateTime<chrono::Utc>,
    authorizer: Option<Value>,
}

impl Ctx<'_> {
    fn v2_event(&self) -> Value {
        proxy::v2_event(
            self.req,
            self.api_id,
            &self.svc.account_id,
            &self.stage_name,
            &self.route_key,
            &self.raw_path,
            &self.params,
            &self.stage["stageVariables"],
            self.authorizer.as_ref(),
            &self.request_id,
            self.now,
        )
    }

    /// A payload format 1.0 event for an HTTP API route.
    fn v1_event(&self) -> Value {
        let lists = proxy::header_lists(self.req);
        let headers: Map<String, Value> = lists
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.join(","))))
            .collect();
        let multi: Map<String, Value> = lists.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        let (query, multi_query) = proxy::query_maps(self.req);
        let (body, b64) = proxy::event_body(self.req, &[]);
        let or_null = |m: Map<String, Value>| {
            if m.is_empty() {
                Value::Null
            } else {
                Value::Object(m)
            }
        };
        let resource = self
            .route_key
            .split_once(' ')
            .map_or(self.route_key.as_str(), |(_, p)| p);
        let mut ctx = json!({
            "accountId": self.svc.account_id, "apiId": self.api_id, "domainName": self.req.host,
            "domainPrefix": self.api_id, "extendedRequestId": self.request_id,
            "httpMethod": self.req.method.as_str(), "identity": proxy::identity(self.req),
            "path": self.req_path(), "protocol": "HTTP/1.1", "requestId": self.request_id,
            "requestTime": self.now.format("%d/%b/%Y:%H:%M:%S +0000").to_string(),
            "requestTimeEpoch": self.now.timestamp_millis(), "resourceId": self.route_key,
            "resourcePath": resource, "stage": self.stage_name,
        });
        if let Some(a) = &self.authorizer {
            ctx["authorizer"] = a.clone();
        }
        json!({
            "version": "1.0", "resource": resource, "path": self.req_path(),
            "httpMethod": self.req.method.as_str(), "headers": or_null(headers),
            "multiValueHeaders": or_null(multi), "queryStringParameters": or_null(query),
            "multiValueQueryStringParameters": or_null(multi_query),
            "requestContext": ctx,
            "pathParameters": or_null(self.params.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect()),
            "stageVariables": self.stage["stageVariables"].as_object().filter(|m| !m.is_empty()).map_or(Value::Null, |m| Value::Object(m.clone())),
            "body": body, "isBase64Encoded": b64,
        })
    }

    fn req_path(&self) -> String {
        if self.stage_name == "$default" {
            self.raw_path.clone()
        } else {
            format!("/{}{}", self.stage_name, self.raw_path)
        }
    }
}

pub(crate) async fn handle(
    svc: &ApiGatewayService,
    req: &AwsRequest,
    region: &str,
    api_id: &str,
    below: &str,
) -> AwsResponse {
    let found = svc.read(region, |r| {
        let api = r.v2_apis.get(api_id)?;
        let first = below
            .trim_start_matches('/')
            .split('/')
            .next()
            .unwrap_or("");
        let (stage_name, path) =
            if !first.is_empty() && api.stages.contains_key(first) && first != "$default" {
                let rest = &below.trim_start_matches('/')[first.len()..];
                (
                    first.to_string(),
                    if rest.is_empty() {
                        "/".to_string()
                    } else {
                        rest.to_string()
                    },
                )
            } else if api.stages.contains_key("$default") {
                ("$default".to_string(), below.to_string())
            } else {
                return Some((api.doc.clone(), None));
            };
        let stage = api.stages.get(&stage_name)?.clone();
        let dep = stage["deploymentId"]
            .as_str()
            .and_then(|d| api.deployments.get(d))
            .cloned();
        Some((api.doc.clone(), dep.map(|d| (stage_name, path, stage, d))))
    });
    let Some((api_doc, deployed)) = found else {
        return not_found();
    };
    if api_doc["protocolType"] == "WEBSOCKET" {
        return websocket_http(svc, req, api_id, below);
    }
    if api_doc["disableExecuteApiEndpoint"] == true {
        return message(403, "Forbidden");
    }
    let cors = api_doc
        .get("corsConfiguration")
        .filter(|c| c.is_object())
        .cloned();
    let origin = req.header("origin").map(str::to_string);
    // Preflight: answered by API Gateway itself when CORS is configured.
    if let (Some(cors), Some(origin)) = (&cors, &origin)
        && req.method == Method::OPTIONS
        && req.header("access-control-request-method").is_some()
    {
        let mut resp = AwsResponse::empty(StatusCode::NO_CONTENT);
        for (k, v) in cors_headers(cors, origin, true) {
            resp.set_header(&k, &v);
        }
        return resp;
    }
    let Some((stage_name, path, stage, deployment)) = deployed else {
        return not_found();
    };
    let mut resp = serve(
        svc,
        req,
        region,
        api_id,
        stage_name,
        path,
        stage,
        &deployment,
    )
    .await;
    if let (Some(cors), Some(origin)) = (&cors, &origin) {
        for (k, v) in cors_headers(cors, origin, false) {
            resp.set_header(&k, &v);
        }
    }
    let request_id = uuid::Uuid::new_v4().to_string();
    resp.set_header("apigw-requestid", &request_id);
    resp
}

/// Plain HTTP to a WebSocket API's stage: the @connections management API at
/// `/<stage>/@connections/<id>` (connections are per stage), and AWS's 403 for anything else
/// (a WebSocket endpoint serves only upgrades, which the HTTP layer hands to
/// [`super::websocket`]).
fn websocket_http(
    svc: &ApiGatewayService,
    req: &AwsRequest,
    api_id: &str,
    below: &str,
) -> AwsResponse {
    let rest = below.trim_start_matches('/');
    let (stage, tail) = rest.split_once('/').unwrap_or((rest, ""));
    match tail.strip_prefix("@connections/") {
        Some(id) if !id.is_empty() && !id.contains('/') => {
            super::connections::manage(&svc.connections, req, api_id, stage, id)
        }
        _ => message(403, "Forbidden"),
    }
}

#[allow(clippy::too_many_arguments)]
async fn serve(
    svc: &ApiGatewayService,
    req: &AwsRequest,
    region: &str,
    api_id: &str,
    stage_name: String,
    path: String,
    stage: Value,
    deployment: &V2Deployment,
) -> AwsResponse {
    let decoded = percent_encoding::percent_decode_str(&path)
        .decode_utf8_lossy()
        .into_owned();
    let Some(matched) = find_route(&deployment.routes, req.method.as_str(), &decoded) else {
        return not_found();
    };
    let route_key = matched.route["routeKey"]
        .as_str()
        .unwrap_or("$default")
        .to_string();
    let mut ctx = Ctx {
        svc,
        req,
        region,
        api_id,
        stage_name,
        stage,
        raw_path: path,
        route_key,
        params: matched.params,
        request_id: uuid::Uuid::new_v4().to_string(),
        now: chrono::Utc::now(),
        authorizer: None,
    };
    match matched.route["authorizationType"].as_str() {
        Some("JWT") | Some("CUSTOM") => {
            let id = matched.route["authorizerId"].as_str().unwrap_or("");
            let Some(auth) = deployment.authorizers.get(id) else {
                return message(500, "Internal Server Error");
            };
            match authorize(&ctx, auth).await {
                Ok(a) if !has_route_scope(&matched.route, &a) => {
                    return message(403, "Forbidden");
                }
                Ok(a) => ctx.authorizer = Some(a),
                Err(resp) => return resp,
            }
        }
        Some("AWS_IAM") => {}
        _ => {}
    }
    let Some(integration) = matched.route["target"]
        .as_str()
        .and_then(|t| t.strip_prefix("integrations/"))
        .and_then(|i| deployment.integrations.get(i))
    else {
        return not_found();
    };
    let uri = integration["integrationUri"]
        .as_str()
        .unwrap_or("")
        .to_string();
    match integration["integrationType"].as_str().unwrap_or("") {
        "AWS_PROXY" => {
            let function = if uri.starts_with("arn:aws:lambda:") {
                Some(uri.as_str())
            } else {
                function_of_uri(&uri)
            };
            let Some(function) = function else {
                return message(500, "Internal Server Error");
            };
            let v1 = integration["payloadFormatVersion"] == "1.0";
            let event = if v1 { ctx.v1_event() } else { ctx.v2_event() };
            match invoke_function(svc, region, function, &event).await {
                Ok(payload) if v1 => proxy::rest_response(&payload, None, None)
                    .unwrap_or_else(|| message(500, "Internal Server Error")),
                Ok(payload) => proxy::v2_response(&payload),
                Err(_) => message(500, "Internal Server Error"),
            }
        }
        "HTTP_PROXY" => {
            let mut url = uri.clone();
            for (k, v) in &ctx.params {
                url = url
                    .replace(&format!("{{{k}+}}"), v)
                    .replace(&format!("{{{k}}}"), v);
            }
            if !req.raw_query.is_empty() {
                url.push(if url.contains('?') { '&' } else { '?' });
                url.push_str(&req.raw_query);
            }
            let method = integration["integrationMethod"]
                .as_str()
                .filter(|m| *m != "ANY")
                .and_then(|m| m.parse::<Method>().ok())
                .unwrap_or_else(|| req.method.clone());
            let timeout =
                Duration::from_millis(integration["timeoutInMillis"].as_u64().unwrap_or(30000));
            match http::send(method, &url, &req.headers, req.body.clone(), timeout).await {
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
                Err(e) if e == "timed out" => message(504, "Service Unavailable"),
                Err(e) => {
                    eprintln!("cumulo: apigateway: HTTP_PROXY to {url}: {e}");
                    message(500, "Internal Server Error")
                }
            }
        }
        other => message(
            500,
            &format!("cumulo: HTTP API integrations of type {other} are not supported"),
        ),
    }
}

/// Reads `$request.header.X` / `$request.querystring.x` / `$stageVariables.x` identity sources.
fn identity_values(ctx: &Ctx<'_>, sources: &Value) -> Option<Vec<String>> {
    let list: Vec<String> = match sources {
        Value::Array(a) => a
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect(),
        Value::String(s) => s.split(',').map(|x| x.trim().to_string()).collect(),
        _ => Vec::new(),
    };
    let mut out = Vec::new();
    for src in list {
        let v = if let Some(h) = src.strip_prefix("$request.header.") {
            ctx.req.header(h).map(str::to_string)
        } else if let Some(q) = src.strip_prefix("$request.querystring.") {
            ctx.req.query_param(q).map(str::to_string)
        } else if let Some(s) = src.strip_prefix("$stageVariables.") {
            ctx.stage["stageVariables"][s].as_str().map(str::to_string)
        } else {
            None
        };
        out.push(v.filter(|v| !v.is_empty())?);
    }
    Some(out)
}

/// A JWT route's `authorizationScopes`: the token must carry at least one of them in its
/// `scope` (space-separated) or `scp` claim, else AWS answers 403. Other routes pass.
fn has_route_scope(route: &Value, authorized: &Value) -> bool {
    let Some(required) = route["authorizationScopes"]
        .as_array()
        .filter(|s| !s.is_empty())
    else {
        return true;
    };
    let Some(claims) = authorized["jwt"]["claims"].as_object() else {
        return true;
    };
    let mut carried: Vec<&str> = Vec::new();
    for claim in ["scope", "scp"] {
        match claims.get(claim) {
            Some(Value::String(s)) => carried.extend(s.split(' ')),
            Some(Value::Array(l)) => carried.extend(l.iter().filter_map(Value::as_str)),
            _ => {}
        }
    }
    required
        .iter()
        .filter_map(Value::as_str)
        .any(|r| carried.contains(&r))
}

async fn authorize(ctx: &Ctx<'_>, auth: &Value) -> Result<Value, AwsResponse> {
    let unauthorized = || message(401, "Unauthorized");
    let forbidden = || message(403, "Forbidden");
    if auth["authorizerType"] == "JWT" {
        let sources = auth
            .get("identitySource")
            .cloned()
            .unwrap_or_else(|| json!(["$request.header.Authorization"]));
        let ids = identity_values(ctx, &sources).ok_or_else(unauthorized)?;
        let token = ids[0].strip_prefix("Bearer ").unwrap_or(&ids[0]);
        let claims = token
            .split('.')
            .nth(1)
            .and_then(|p| {
                base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .decode(p.trim_end_matches('='))
                    .ok()
            })
            .and_then(|b| serde_json::from_slice::<Value>(&b).ok())
            .filter(Value::is_object)
            .ok_or_else(unauthorized)?;
        let cfg = &auth["jwtConfiguration"];
        if let Some(iss) = cfg["issuer"].as_str()
            && claims["iss"].as_str() != Some(iss)
        {
            return Err(unauthorized());
        }
        if let Some(aud) = cfg["audience"].as_array().filter(|a| !a.is_empty()) {
            let token_aud: Vec<Value> = match &claims["aud"] {
                Value::Array(a) => a.clone(),
                Value::Null => vec![claims["client_id"].clone()],
                v => vec![v.clone()],
            };
            if !aud.iter().any(|a| token_aud.contains(a)) {
                return Err(unauthorized());
            }
        }
        if claims["exp"]
            .as_i64()
            .is_some_and(|e| e < ctx.now.timestamp())
        {
            return Err(unauthorized());
        }
        let scopes = claims["scope"].as_str().map(|s| {
            s.split(' ')
                .map(|x| Value::String(x.to_string()))
                .collect::<Vec<_>>()
        });
        return Ok(json!({"jwt": {"claims": claims, "scopes": scopes}}));
    }
    // Lambda REQUEST authorizer.
    let v2 = auth["authorizerPayloadFormatVersion"]
        .as_str()
        .unwrap_or("2.0")
        == "2.0";
    let sources = auth.get("identitySource").cloned().unwrap_or(Value::Null);
    let ids = if sources.is_null() {
        Vec::new()
    } else {
        identity_values(ctx, &sources).ok_or_else(unauthorized)?
    };
    let route_arn = format!(
        "arn:aws:execute-api:{}:{}:{}/{}/{}{}",
        ctx.region,
        ctx.svc.account_id,
        ctx.api_id,
        ctx.stage_name,
        ctx.req.method.as_str(),
        ctx.raw_path
    );
    let ttl = auth["authorizerResultTtlInSeconds"].as_u64().unwrap_or(0);
    let cache_key = format!(
        "{}:{}:{}",
        ctx.api_id,
        auth["authorizerId"].as_str().unwrap_or(""),
        ids.join("\u{0}")
    );
    let answer = match (!ids.is_empty())
        .then(|| ctx.svc.auth_cache.get(&cache_key))
        .flatten()
    {
        Some(a) => a,
        None => {
            let mut event = if v2 { ctx.v2_event() } else { ctx.v1_event() };
            event["type"] = "REQUEST".into();
            if v2 {
                event["routeArn"] = route_arn.clone().into();
                event["identitySource"] = json!(ids);
            } else {
                event["methodArn"] = route_arn.clone().into();
            }
            let uri = auth["authorizerUri"].as_str().unwrap_or("");
            let function =
                function_of_uri(uri).ok_or_else(|| message(500, "Internal Server Error"))?;
            let payload = invoke_function(ctx.svc, ctx.region, function, &event)
                .await
                .map_err(|_| message(500, "Internal Server Error"))?;
            let v: Value = serde_json::from_slice(&payload).unwrap_or(Value::Null);
            if !v.is_object() {
                return Err(message(500, "Internal Server Error"));
            }
            if !ids.is_empty() {
                ctx.svc.auth_cache.put(cache_key, ttl, v.clone());
            }
            v
        }
    };
    let simple = auth["enableSimpleResponses"] == true;
    let allowed = if simple {
        answer["isAuthorized"] == true
    } else {
        matches!(evaluate(&answer["policyDocument"], &route_arn), Ok(true))
    };
    if !allowed {
        return Err(forbidden());
    }
    let context = answer.get("context").cloned().unwrap_or_else(|| json!({}));
    let mut out = json!({"lambda": context});
    if let Some(p) = answer.get("principalId") {
        out["principalId"] = p.clone();
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routes(keys: &[&str]) -> BTreeMap<String, Value> {
        keys.iter()
            .enumerate()
            .map(|(i, k)| (i.to_string(), json!({"routeKey": k})))
            .collect()
    }

    #[test]
    fn route_selection() {
        let r = routes(&[
            "GET /items/{id}",
            "ANY /{proxy+}",
            "GET /items/special",
            "$default",
            "POST /items",
        ]);
        let key = |m: &str, p: &str| {
            find_route(&r, m, p)
                .map(|x| (x.route["routeKey"].as_str().unwrap().to_string(), x.params))
        };
        assert_eq!(
            key("GET", "/items/special").unwrap().0,
            "GET /items/special"
        );
        let (k, p) = key("GET", "/items/7").unwrap();
        assert_eq!((k.as_str(), p["id"].as_str()), ("GET /items/{id}", "7"));
        let (k, p) = key("DELETE", "/items/7").unwrap();
        assert_eq!(
            (k.as_str(), p["proxy"].as_str()),
            ("ANY /{proxy+}", "items/7")
        );
        assert_eq!(key("GET", "/").unwrap().0, "$default");
        let r = routes(&["GET /a"]);
        assert!(find_route(&r, "GET", "/b").is_none());
    }

    #[test]
    fn cors() {
        let c = json!({"allowOrigins": ["https://x.example"], "allowMethods": ["GET", "POST"], "maxAge": 60});
        let h = cors_headers(&c, "https://x.example", true);
        assert!(h.contains(&(
            "access-control-allow-origin".into(),
            "https://x.example".into()
        )));
        assert!(h.contains(&("access-control-allow-methods".into(), "GET,POST".into())));
        assert!(cors_headers(&c, "https://evil.example", true).is_empty());
    }
}
