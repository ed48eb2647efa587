//! WebSocket APIs' live connections and the @connections management API
//! (`apigatewaymanagementapi/2018-11-29`, signing name `execute-api`): PostToConnection,
//! GetConnection and DeleteConnection at `<stage endpoint>/@connections/{connectionId}`.
//!
//! Connections are process state, not stored: a connection is a TCP socket of this process, so
//! a restart of `cumulo serve` closes every one of them (clients see the socket close, as on AWS
//! when its connection limits end one; no `$disconnect` runs for them).

use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use http::{Method, StatusCode};
use serde_json::json;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// AWS's limit on one message (PostToConnection's Data and client frames): 128 KB.
pub const MAX_MESSAGE: usize = 128 * 1024;

/// What the connection's socket task is asked to do.
#[derive(Debug)]
pub enum Outbound {
    Text(String),
    Binary(Vec<u8>),
    /// DeleteConnection: close the socket (the `$disconnect` route then runs).
    Close,
}

/// One open connection.
#[derive(Debug)]
pub struct Connection {
    pub api_id: String,
    pub stage: String,
    pub connected_at: chrono::DateTime<chrono::Utc>,
    pub last_active: Mutex<chrono::DateTime<chrono::Utc>>,
    pub source_ip: String,
    pub user_agent: String,
    pub outbox: mpsc::UnboundedSender<Outbound>,
}

/// AWS's limits on a connection: 10 minutes idle, 2 hours in all.
pub const IDLE_TIMEOUT: chrono::TimeDelta = chrono::TimeDelta::minutes(10);
pub const MAX_DURATION: chrono::TimeDelta = chrono::TimeDelta::hours(2);

impl Connection {
    pub fn touch(&self) {
        *self.last_active.lock().unwrap_or_else(|p| p.into_inner()) = chrono::Utc::now();
    }

    /// How long until AWS's limits end the connection (zero when they already have).
    pub fn time_left(&self, now: chrono::DateTime<chrono::Utc>) -> std::time::Duration {
        let last = *self.last_active.lock().unwrap_or_else(|p| p.into_inner());
        let end = (last + IDLE_TIMEOUT).min(self.connected_at + MAX_DURATION);
        (end - now).to_std().unwrap_or_default()
    }
}

/// Every open connection by id.
#[derive(Debug, Default)]
pub struct Connections {
    map: Mutex<HashMap<String, Arc<Connection>>>,
}

impl Connections {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Connection>>> {
        self.map.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn insert(&self, id: &str, conn: Arc<Connection>) {
        self.lock().insert(id.to_string(), conn);
    }

    pub fn remove(&self, id: &str) {
        self.lock().remove(id);
    }

    /// The connection `id` of this API's stage: another stage's connection is as unknown as a
    /// closed one.
    pub fn get(&self, api_id: &str, stage: &str, id: &str) -> Option<Arc<Connection>> {
        self.lock()
            .get(id)
            .filter(|c| c.api_id == api_id && c.stage == stage)
            .cloned()
    }
}

/// A connection id as AWS shapes them (`U_ZPieCjoAMCKuA=`: 11 random bytes, URL-safe base64).
pub fn new_connection_id() -> String {
    use base64::Engine;
    let bytes: [u8; 11] = rand::random();
    base64::engine::general_purpose::URL_SAFE.encode(bytes)
}

fn gone() -> AwsError {
    AwsError::new(StatusCode::GONE, "GoneException", "")
}

fn iso(t: chrono::DateTime<chrono::Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

/// Answers one @connections call for `api_id`'s `stage`.
pub(crate) fn manage(
    connections: &Connections,
    req: &AwsRequest,
    api_id: &str,
    stage: &str,
    connection_id: &str,
) -> AwsResponse {
    let id = percent_encoding::percent_decode_str(connection_id)
        .decode_utf8_lossy()
        .into_owned();
    let answer = (|| {
        let conn = connections.get(api_id, stage, &id).ok_or_else(gone)?;
        match req.method {
            Method::POST => {
                if req.body.len() > MAX_MESSAGE {
                    return Err(AwsError::new(
                        StatusCode::PAYLOAD_TOO_LARGE,
                        "PayloadTooLargeException",
                        "Message too long",
                    ));
                }
                let frame = match std::str::from_utf8(&req.body) {
                    Ok(text) => Outbound::Text(text.to_string()),
                    Err(_) => Outbound::Binary(req.body.to_vec()),
                };
                conn.outbox.send(frame).map_err(|_| gone())?;
                Ok(AwsResponse::empty(StatusCode::OK))
            }
            Method::GET => {
                let last = *conn.last_active.lock().unwrap_or_else(|p| p.into_inner());
                let body = json!({
                    "connectedAt": iso(conn.connected_at),
                    "identity": {"sourceIp": conn.source_ip, "userAgent": conn.user_agent},
                    "lastActiveAt": iso(last),
                });
                Ok(AwsResponse::new(
                    StatusCode::OK,
                    "application/json",
                    body.to_string(),
                ))
            }
            Method::DELETE => {
                conn.outbox.send(Outbound::Close).map_err(|_| gone())?;
                connections.remove(&id);
                Ok(AwsResponse::empty(StatusCode::NO_CONTENT))
            }
            _ => Err(AwsError::not_implemented(
                "execute-api",
                &format!("{} /@connections/{{connectionId}}", req.method),
            )),
        }
    })();
    answer.unwrap_or_else(|e| e.into_response(Protocol::RestJson, &req.request_id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_look_like_aws() {
        let id = new_connection_id();
        assert_eq!(id.len(), 16);
        assert!(id.ends_with('='));
    }

    #[test]
    fn idle_and_total_limits() {
        let (tx, _rx) = mpsc::unbounded_channel();
        let t0 = chrono::Utc::now();
        let c = Connection {
            api_id: "a".into(),
            stage: "s".into(),
            connected_at: t0,
            last_active: Mutex::new(t0),
            source_ip: String::new(),
            user_agent: String::new(),
            outbox: tx,
        };
        assert_eq!(c.time_left(t0).as_secs(), 600);
        // Activity pushes the idle limit, never past two hours from the connect.
        *c.last_active.lock().unwrap() = t0 + chrono::TimeDelta::minutes(115);
        let now = t0 + chrono::TimeDelta::minutes(116);
        assert_eq!(c.time_left(now).as_secs(), 4 * 60);
        assert_eq!(c.time_left(t0 + chrono::TimeDelta::hours(3)).as_secs(), 0);
    }

    #[test]
    fn another_stage_does_not_see_a_connection() {
        let c = Connections::default();
        let (tx, _rx) = mpsc::unbounded_channel();
        c.insert(
            "x",
            Arc::new(Connection {
                api_id: "a".into(),
                stage: "prod".into(),
                connected_at: chrono::Utc::now(),
                last_active: Mutex::new(chrono::Utc::now()),
                source_ip: "127.0.0.1".into(),
                user_agent: String::new(),
                outbox: tx,
            }),
        );
        assert!(c.get("a", "prod", "x").is_some());
        assert!(c.get("a", "dev", "x").is_none());
        c.remove("x");
        assert!(c.get("a", "prod", "x").is_none());
    }
}
