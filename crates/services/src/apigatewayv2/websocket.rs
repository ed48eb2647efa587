//! WebSocket APIs' data plane: an upgrade request to a deployed stage runs the `$connect` route
//! (its REQUEST Lambda authorizer, then its integration: a failure or a non-2xx answer refuses
//! the upgrade with that status), then every frame is routed by the API's route selection
//! expression (`$default` when nothing matches), and `$disconnect` runs when the socket closes.
//! Lambda integrations (AWS_PROXY) get AWS's WebSocket proxy events (eventType CONNECT, MESSAGE,
//! DISCONNECT); the other types run as [`integration`] describes. A two-way route (a route
//! response selection expression and a `$default` route response) sends the integration's
//! answer back on the socket. Errors are the frames AWS sends:
//! `{"message": "Internal server error", "connectionId": ..., "requestId": ...}`.
//!
//! The stage's current deployment is read at each event, so a redeploy applies to open
//! connections at their next message.

use super::connections::{Connection, MAX_MESSAGE, Outbound, new_connection_id};
use super::integration::{self, Answer, Event, Failure, Handshake};
use super::selection::select_route_key;
use crate::apigateway::ApiGatewayService;
use crate::apigateway::invoke::authorizer::evaluate;
use crate::apigateway::invoke::{function_of_uri, invoke_function, message, proxy};
use cumulo_wire::{AwsRequest, AwsResponse};
use futures_util::{SinkExt, StreamExt};
use http::StatusCode;
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};

/// Whether a request asks to become a WebSocket (`Upgrade: websocket`).
pub fn is_upgrade(req: &AwsRequest) -> bool {
    req.header("upgrade")
        .is_some_and(|u| u.eq_ignore_ascii_case("websocket"))
        && req.header("sec-websocket-key").is_some()
}

/// What an open connection keeps from its upgrade request: every event of it carries these.
struct Link {
    svc: Arc<ApiGatewayService>,
    region: String,
    api_id: String,
    stage: String,
    connection_id: String,
    connected_at: chrono::DateTime<chrono::Utc>,
    domain_name: String,
    identity: Value,
    headers: Map<String, Value>,
    multi_headers: Map<String, Value>,
    authorizer: Option<Value>,
    handshake: Handshake,
    conn: Arc<Connection>,
}

/// An accepted connection, waiting for its socket.
pub struct Session {
    link: Arc<Link>,
    inbox: mpsc::UnboundedReceiver<Outbound>,
}

/// The 101 answer and the connection, or the refusal (403 for an unknown stage, the
/// authorizer's 401/403, the `$connect` integration's status).
pub type Upgrade = Result<(AwsResponse, Session), AwsResponse>;

/// The deployed routes, integrations and authorizers of a stage, and the API's route selection
/// expression.
struct Deployed {
    routes: Vec<Value>,
    integrations: std::collections::BTreeMap<String, Value>,
    authorizers: std::collections::BTreeMap<String, Value>,
    selection: String,
    stage_variables: Value,
}

fn deployed(svc: &ApiGatewayService, region: &str, api_id: &str, stage: &str) -> Option<Deployed> {
    svc.read(region, |r| {
        let api = r.v2_apis.get(api_id)?;
        let st = api.stages.get(stage)?;
        let dep = api.deployments.get(st["deploymentId"].as_str()?)?;
        Some(Deployed {
            routes: dep.routes.values().cloned().collect(),
            integrations: dep.integrations.clone(),
            authorizers: dep.authorizers.clone(),
            selection: api.doc["routeSelectionExpression"]
                .as_str()
                .unwrap_or("$request.body.action")
                .to_string(),
            stage_variables: st.get("stageVariables").cloned().unwrap_or(Value::Null),
        })
    })
}

impl Deployed {
    fn route(&self, key: &str) -> Option<&Value> {
        self.routes.iter().find(|r| r["routeKey"] == key)
    }

    fn integration(&self, route: &Value) -> Option<&Value> {
        route["target"]
            .as_str()
            .and_then(|t| t.strip_prefix("integrations/"))
            .and_then(|i| self.integrations.get(i))
    }
}

impl Link {
    fn context(&self, route_key: &str, event_type: &str, request_id: &str) -> Value {
        let now = chrono::Utc::now();
        let mut ctx = json!({
            "routeKey": route_key, "eventType": event_type, "extendedRequestId": request_id,
            "requestTime": now.format("%d/%b/%Y:%H:%M:%S +0000").to_string(),
            "messageDirection": "IN", "stage": self.stage,
            "connectedAt": self.connected_at.timestamp_millis(),
            "requestTimeEpoch": now.timestamp_millis(), "identity": self.identity,
            "requestId": request_id, "domainName": self.domain_name,
            "connectionId": self.connection_id, "apiId": self.api_id,
        });
        if let Some(a) = &self.authorizer {
            ctx["authorizer"] = a.clone();
        }
        ctx
    }

    fn error_frame(&self, msg: &str, request_id: &str) {
        let frame = json!({"message": msg, "connectionId": self.connection_id,
            "requestId": request_id});
        let _ = self.conn.outbox.send(Outbound::Text(frame.to_string()));
    }

    /// Runs a route's integration for one event: `body` the message (empty for `$connect`
    /// and `$disconnect`, which see the upgrade request), `event` its Lambda proxy event.
    async fn integrate(
        &self,
        dep: &Deployed,
        integration: &Value,
        event: &Value,
        upgrade: bool,
    ) -> Result<Answer, Failure> {
        let ev = Event {
            svc: &self.svc,
            region: &self.region,
            body: event["body"].as_str().unwrap_or(""),
            context: &event["requestContext"],
            stage_variables: &dep.stage_variables,
            handshake: upgrade.then_some(&self.handshake),
            proxy_event: event,
        };
        integration::run(integration, &ev).await
    }

    /// One text frame from the client: routed, integrated, answered when the route is two-way.
    async fn on_message(self: Arc<Self>, body: String) {
        let request_id = uuid::Uuid::new_v4().to_string();
        let Some(dep) = deployed(&self.svc, &self.region, &self.api_id, &self.stage) else {
            return self.error_frame("Forbidden", &request_id);
        };
        let key = select_route_key(&dep.selection, &body);
        let route = key
            .as_deref()
            .filter(|k| !matches!(*k, "$connect" | "$disconnect"))
            .and_then(|k| dep.route(k))
            .or_else(|| dep.route("$default"));
        let Some(route) = route else {
            return self.error_frame("Forbidden", &request_id);
        };
        let route_key = route["routeKey"].as_str().unwrap_or("$default").to_string();
        let Some(integration) = dep.integration(route) else {
            return self.error_frame("Internal server error", &request_id);
        };
        let mut ctx = self.context(&route_key, "MESSAGE", &request_id);
        ctx["messageId"] = new_connection_id().into();
        let event = json!({"requestContext": ctx, "body": body, "isBase64Encoded": false});
        match self.integrate(&dep, integration, &event, false).await {
            Ok(answer) => {
                // Two-way: the route selects a route response (`$default`, the only key
                // WebSocket APIs support) and has it.
                let two_way = route["routeResponseSelectionExpression"]
                    .as_str()
                    .is_some_and(|e| !e.is_empty())
                    && route["routeResponses"]
                        .as_object()
                        .is_some_and(|m| m.values().any(|r| r["routeResponseKey"] == "$default"));
                if two_way && let Some(text) = answer.body {
                    let _ = self.conn.outbox.send(Outbound::Text(text));
                }
            }
            Err(f) => self.error_frame(&f.message, &request_id),
        }
    }

    /// `$disconnect`, after the socket closed: its answer goes nowhere.
    async fn on_close(&self, code: u16, reason: &str) {
        let request_id = uuid::Uuid::new_v4().to_string();
        let Some(dep) = deployed(&self.svc, &self.region, &self.api_id, &self.stage) else {
            return;
        };
        let Some(integration) = dep.route("$disconnect").and_then(|r| dep.integration(r)) else {
            return;
        };
        let mut ctx = self.context("$disconnect", "DISCONNECT", &request_id);
        ctx["disconnectStatusCode"] = code.into();
        ctx["disconnectReason"] = reason.into();
        let event = json!({"headers": self.headers, "multiValueHeaders": self.multi_headers,
            "requestContext": ctx, "isBase64Encoded": false});
        let _ = self.integrate(&dep, integration, &event, true).await;
    }
}

/// The `route.request.header.X` / `route.request.querystring.x` identity sources of a
/// WebSocket authorizer; `None` when one is missing or empty (AWS's 401).
fn identity_values(req: &AwsRequest, sources: &Value) -> Option<Vec<String>> {
    let list: Vec<&str> = match sources {
        Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
        Value::String(s) => s.split(',').map(str::trim).collect(),
        _ => Vec::new(),
    };
    list.into_iter()
        .map(|src| {
            let v = if let Some(h) = src.strip_prefix("route.request.header.") {
                req.header(h)
            } else if let Some(q) = src.strip_prefix("route.request.querystring.") {
                req.query_param(q)
            } else {
                None
            };
            v.filter(|v| !v.is_empty()).map(str::to_string)
        })
        .collect()
}

/// Runs the `$connect` route's REQUEST Lambda authorizer: its policy must allow the route's ARN.
async fn authorize(
    link: &Link,
    req: &AwsRequest,
    auth: &Value,
    event: &Value,
) -> Result<Value, AwsResponse> {
    let sources = auth.get("identitySource").cloned().unwrap_or(Value::Null);
    let ids = if sources.is_null() {
        Vec::new()
    } else {
        identity_values(req, &sources).ok_or_else(|| message(401, "Unauthorized"))?
    };
    let method_arn = format!(
        "arn:aws:execute-api:{}:{}:{}/{}/$connect",
        link.region, link.svc.account_id, link.api_id, link.stage
    );
    let ttl = auth["authorizerResultTtlInSeconds"].as_u64().unwrap_or(0);
    let cache_key = format!(
        "{}:{}:{}",
        link.api_id,
        auth["authorizerId"].as_str().unwrap_or(""),
        ids.join("\u{0}")
    );
    let cached = (!ids.is_empty())
        .then(|| link.svc.auth_cache.get(&cache_key))
        .flatten();
    let answer = match cached {
        Some(a) => a,
        None => {
            let mut event = event.clone();
            event["type"] = "REQUEST".into();
            event["methodArn"] = method_arn.clone().into();
            let function = function_of_uri(auth["authorizerUri"].as_str().unwrap_or(""))
                .ok_or_else(|| message(500, "Internal server error"))?;
            let payload = invoke_function(&link.svc, &link.region, function, &event)
                .await
                .map_err(|_| message(500, "Internal server error"))?;
            let v: Value = serde_json::from_slice(&payload).unwrap_or(Value::Null);
            if !v.is_object() {
                return Err(message(500, "Internal server error"));
            }
            if !ids.is_empty() {
                link.svc.auth_cache.put(cache_key, ttl, v.clone());
            }
            v
        }
    };
    if !matches!(evaluate(&answer["policyDocument"], &method_arn), Ok(true)) {
        return Err(message(403, "Forbidden"));
    }
    let mut out = match answer.get("context") {
        Some(Value::Object(m)) => Value::Object(m.clone()),
        _ => json!({}),
    };
    if let Some(p) = answer.get("principalId") {
        out["principalId"] = p.clone();
    }
    out["integrationLatency"] = 0.into();
    Ok(out)
}

/// The 101 Switching Protocols answer to `req`, with the `$connect` integration's headers
/// (`Sec-WebSocket-Protocol`, as AWS's subprotocol example returns).
fn switching(req: &AwsRequest, headers: &[(String, String)]) -> AwsResponse {
    let key = req.header("sec-websocket-key").unwrap_or("");
    let mut resp = AwsResponse::empty(StatusCode::SWITCHING_PROTOCOLS);
    resp.headers.remove(http::header::CONTENT_TYPE);
    resp.set_header("connection", "Upgrade");
    resp.set_header("upgrade", "websocket");
    resp.set_header(
        "sec-websocket-accept",
        &tokio_tungstenite::tungstenite::handshake::derive_accept_key(key.as_bytes()),
    );
    for (k, v) in headers {
        if !matches!(
            k.to_ascii_lowercase().as_str(),
            "connection" | "upgrade" | "sec-websocket-accept" | "content-length"
        ) {
            resp.set_header(k, v);
        }
    }
    resp
}

/// An upgrade request to `/<stage>` of WebSocket API `api_id`: `$connect` decides.
pub(crate) async fn connect(
    svc: Arc<ApiGatewayService>,
    req: &AwsRequest,
    region: &str,
    api_id: &str,
    stage: &str,
    domain_name: String,
) -> Upgrade {
    let forbidden = || message(403, "Forbidden");
    let dep = deployed(&svc, region, api_id, stage).ok_or_else(forbidden)?;
    let connection_id = new_connection_id();
    let connected_at = chrono::Utc::now();
    let lists = proxy::header_lists(req);
    let headers: Map<String, Value> = lists
        .iter()
        .map(|(k, v)| (k.clone(), Value::String(v.join(","))))
        .collect();
    let multi_headers: Map<String, Value> =
        lists.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    let (tx, inbox) = mpsc::unbounded_channel();
    let conn = Arc::new(Connection {
        api_id: api_id.to_string(),
        stage: stage.to_string(),
        connected_at,
        last_active: Mutex::new(connected_at),
        source_ip: "127.0.0.1".to_string(),
        user_agent: req.header("user-agent").unwrap_or("").to_string(),
        outbox: tx,
    });
    let mut link = Link {
        svc: svc.clone(),
        region: region.to_string(),
        api_id: api_id.to_string(),
        stage: stage.to_string(),
        connection_id: connection_id.clone(),
        connected_at,
        domain_name,
        identity: proxy::identity(req),
        headers,
        multi_headers,
        authorizer: None,
        handshake: Handshake {
            headers: lists,
            query: req.query.clone(),
            raw_query: req.raw_query.clone(),
        },
        conn: conn.clone(),
    };
    let request_id = uuid::Uuid::new_v4().to_string();
    let (query, multi_query) = proxy::query_maps(req);
    let mut event = json!({"headers": link.headers, "multiValueHeaders": link.multi_headers});
    if !query.is_empty() {
        event["queryStringParameters"] = Value::Object(query);
        event["multiValueQueryStringParameters"] = Value::Object(multi_query);
    }
    let mut answer_headers = Vec::new();
    if let Some(route) = dep.route("$connect") {
        if route["authorizationType"] == "CUSTOM" {
            let id = route["authorizerId"].as_str().unwrap_or("");
            let auth = dep
                .authorizers
                .get(id)
                .ok_or_else(|| message(500, "Internal server error"))?;
            let mut auth_event = event.clone();
            auth_event["requestContext"] = link.context("$connect", "CONNECT", &request_id);
            link.authorizer = Some(authorize(&link, req, auth, &auth_event).await?);
        }
        let integration = dep
            .integration(route)
            .ok_or_else(|| message(500, "Internal server error"))?;
        event["requestContext"] = link.context("$connect", "CONNECT", &request_id);
        event["isBase64Encoded"] = false.into();
        let answer = link
            .integrate(&dep, integration, &event, true)
            .await
            .map_err(|f| message(f.status, &f.message))?;
        // The integration's status decides (a proxy answer's, the HTTP backend's, a MOCK
        // template's, 500 for a failed non-proxy function).
        if !(200..300).contains(&answer.status) {
            return Err(AwsResponse::new(
                StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR),
                "application/json",
                answer.body.unwrap_or_default(),
            ));
        }
        answer_headers = answer.headers;
    }
    svc.connections.insert(&connection_id, conn);
    let resp = switching(req, &answer_headers);
    Ok((
        resp,
        Session {
            link: Arc::new(link),
            inbox,
        },
    ))
}

impl Session {
    /// Serves the connection over the upgraded socket until either side closes it, then runs
    /// `$disconnect`.
    pub async fn run<S>(mut self, io: S)
    where
        S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
    {
        let config = WebSocketConfig::default()
            // Only the message is limited: a frame is read whole before its message is
            // refused, so the close frame reaches a client that is still sending.
            .max_message_size(Some(MAX_MESSAGE));
        let mut ws = WebSocketStream::from_raw_socket(io, Role::Server, Some(config)).await;
        let link = self.link.clone();
        let (code, reason) = loop {
            tokio::select! {
                incoming = ws.next() => match incoming {
                    Some(Ok(Message::Text(text))) => {
                        link.conn.touch();
                        tokio::spawn(link.clone().on_message(text.to_string()));
                    }
                    // AWS takes no binary frames: it disconnects the client with 1003.
                    Some(Ok(Message::Binary(_))) => {
                        let _ = ws.send(Message::Close(Some(CloseFrame {
                            code: CloseCode::Unsupported,
                            reason: "".into(),
                        }))).await;
                        break (1003, String::new());
                    }
                    Some(Ok(Message::Close(frame))) => {
                        break match frame {
                            Some(f) => (u16::from(f.code), f.reason.to_string()),
                            None => (1005, String::new()),
                        };
                    }
                    Some(Ok(_)) => link.conn.touch(),
                    // Over AWS's 128 KB message limit: closed with 1009.
                    Some(Err(tokio_tungstenite::tungstenite::Error::Capacity(_))) => {
                        let _ = ws.send(Message::Close(Some(CloseFrame {
                            code: CloseCode::Size,
                            reason: "Message too big".into(),
                        }))).await;
                        break (1009, "Message too big".to_string());
                    }
                    Some(Err(_)) | None => break (1006, "Connection was closed abnormally".to_string()),
                },
                // AWS's idle (10 min) and total (2 h) limits: "Going away".
                _ = tokio::time::sleep(link.conn.time_left(chrono::Utc::now())) => {
                    let _ = ws.send(Message::Close(Some(CloseFrame {
                        code: CloseCode::Away,
                        reason: "Going away".into(),
                    }))).await;
                    break (1001, "Going away".to_string());
                }
                out = self.inbox.recv() => match out {
                    Some(Outbound::Text(t)) => { let _ = ws.send(Message::text(t)).await; }
                    Some(Outbound::Binary(b)) => { let _ = ws.send(Message::binary(b)).await; }
                    Some(Outbound::Close) | None => {
                        let _ = ws.send(Message::Close(Some(CloseFrame {
                            code: CloseCode::Normal,
                            reason: "".into(),
                        }))).await;
                        break (1000, String::new());
                    }
                },
            }
        };
        let _ = ws.close(None).await;
        link.svc.connections.remove(&link.connection_id);
        link.on_close(code, &reason).await;
    }

    /// The upgrade never completed (the client went away after the 101): the connection ends
    /// as a close would end it.
    pub async fn abandon(self) {
        self.link.svc.connections.remove(&self.link.connection_id);
        self.link
            .on_close(1006, "Connection was closed abnormally")
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_sources() {
        let mut req = AwsRequest::new(http::Method::GET, "/prod?token=t1");
        req.headers.insert("auth", "a1".parse().unwrap());
        let both = json!([
            "route.request.header.Auth",
            "route.request.querystring.token"
        ]);
        assert_eq!(
            identity_values(&req, &both),
            Some(vec!["a1".into(), "t1".into()])
        );
        assert_eq!(
            identity_values(&req, &json!(["route.request.header.Missing"])),
            None
        );
    }
}
