//! The console's login under `--verify-signatures`: the access key id and secret of one of the
//! configured credentials, exchanged for a session cookie (random, kept in memory: a restart
//! signs everyone out). Without a session the API answers 401 and pages show the login form.

use crate::web::{ApiError, Body, check_origin, error_response, json_ok};
use cumulo_services::SigningKeys;
use cumulo_wire::AwsRequest;
use http::{HeaderValue, Response, StatusCode, header};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::sync::Mutex;

pub const LOGIN_PATH: &str = "/_cumulo/api/v1/login";
const COOKIE: &str = "cumulo_console";

#[derive(Default)]
pub struct Sessions(Mutex<HashSet<String>>);

impl Sessions {
    /// Whether the request carries a session this process issued.
    pub fn signed_in(&self, req: &AwsRequest) -> bool {
        let Some(token) = cookie(req) else {
            return false;
        };
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(token)
    }

    /// `POST login` with `{"access_key_id", "secret_access_key"}`.
    pub fn login(&self, req: &AwsRequest, keys: &SigningKeys) -> Response<Body> {
        match self.try_login(req, keys) {
            Ok(r) => r,
            Err(e) => error_response(&e),
        }
    }

    fn try_login(&self, req: &AwsRequest, keys: &SigningKeys) -> Result<Response<Body>, ApiError> {
        if req.method != http::Method::POST {
            return Err(ApiError::not_found("NotFound", "Sign in with POST"));
        }
        check_origin(req)?;
        let v: Value = serde_json::from_slice(&req.body)
            .map_err(|e| ApiError::bad_request(format!("The body is not JSON: {e}")))?;
        let field = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("");
        let (id, secret) = (field("access_key_id"), field("secret_access_key"));
        let known = keys.secret(id).is_some_and(|s| same(s, secret));
        if !known {
            return Err(ApiError::new(
                StatusCode::UNAUTHORIZED,
                "InvalidCredentials",
                "The access key id or secret is not one this endpoint accepts",
            ));
        }
        let token = uuid::Uuid::new_v4().simple().to_string();
        self.0
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(token.clone());
        let mut r = json_ok(&json!({"signed_in": id}))?;
        let cookie = format!("{COOKIE}={token}; Path=/_cumulo/; HttpOnly; SameSite=Strict");
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            r.headers_mut().insert(header::SET_COOKIE, v);
        }
        Ok(r)
    }
}

/// Equal strings, compared in time independent of where they differ.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn cookie(req: &AwsRequest) -> Option<&str> {
    req.headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .find_map(|c| c.trim().strip_prefix(COOKIE)?.strip_prefix('='))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        assert!(same("test", "test"));
        assert!(!same("test", "tesT") && !same("test", "tes") && !same("", "x"));
    }
}
