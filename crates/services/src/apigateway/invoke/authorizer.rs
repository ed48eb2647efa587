//! Lambda authorizers (TOKEN and REQUEST) of REST APIs: the identity sources are read (a
//! missing one is 401 `Unauthorized` without calling the function), the function is invoked
//! with AWS's event, and its policy is evaluated against the method ARN (an explicit Deny wins,
//! else an Allow whose resource matches, `*` and `?` wildcards). Answers are cached per
//! authorizer and identity for `authorizerResultTtlInSeconds` (0: not cached).
//!
//! COGNITO_USER_POOLS: the bearer token's claims are read without verifying its signature
//! (cumulo has no Cognito) and passed on as `claims`.

use super::{Call, invoke_function, json_answer, message, proxy};
use base64::Engine;
use cumulo_wire::AwsResponse;
use serde_json::{Map, Value, json};
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Authorizer answers by (authorizer id + identity), with their expiry.
#[derive(Default)]
pub struct AuthCache(Mutex<HashMap<String, (Instant, Value)>>);

impl AuthCache {
    pub fn get(&self, key: &str) -> Option<Value> {
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        match map.get(key) {
            Some((until, v)) if *until > Instant::now() => Some(v.clone()),
            Some(_) => {
                map.remove(key);
                None
            }
            None => None,
        }
    }

    pub fn put(&self, key: String, ttl: u64, v: Value) {
        if ttl == 0 {
            return;
        }
        let mut map = self.0.lock().unwrap_or_else(|p| p.into_inner());
        map.insert(key, (Instant::now() + Duration::from_secs(ttl), v));
    }
}

fn unauthorized() -> AwsResponse {
    message(401, "Unauthorized")
}

/// Whether an IAM resource pattern (with `*` and `?`) matches an ARN.
pub fn arn_matches(pattern: &str, arn: &str) -> bool {
    let mut re = String::from("^");
    for c in pattern.chars() {
        match c {
            '*' => re.push_str(".*"),
            '?' => re.push('.'),
            c => re.push_str(&regex::escape(&c.to_string())),
        }
    }
    re.push('$');
    regex::Regex::new(&re).is_ok_and(|r| r.is_match(arn))
}

/// Allow (true) or not from a policy document for `arn`; `Err` is an explicit deny.
pub fn evaluate(policy: &Value, arn: &str) -> Result<bool, ()> {
    let statements = match &policy["Statement"] {
        Value::Array(a) => a.clone(),
        s @ Value::Object(_) => vec![s.clone()],
        _ => Vec::new(),
    };
    let mut allowed = false;
    for s in statements {
        let resources: Vec<String> = match &s["Resource"] {
            Value::String(r) => vec![r.clone()],
            Value::Array(a) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect(),
            _ => Vec::new(),
        };
        if !resources.iter().any(|r| arn_matches(r, arn)) {
            continue;
        }
        match s["Effect"].as_str() {
            Some("Deny") => return Err(()),
            Some("Allow") => allowed = true,
            _ => {}
        }
    }
    Ok(allowed)
}

/// The identity values an authorizer reads (`method.request.header.Auth`, ...), `None` when
/// one is missing.
fn identity(call: &Call<'_>, sources: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    for src in sources.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let v = if let Some(h) = src.strip_prefix("method.request.header.") {
            call.req.header(h).map(str::to_string)
        } else if let Some(q) = src.strip_prefix("method.request.querystring.") {
            call.req.query_param(q).map(str::to_string)
        } else if let Some(v) = src.strip_prefix("stageVariables.") {
            call.stage["variables"][v].as_str().map(str::to_string)
        } else if let Some(c) = src.strip_prefix("context.") {
            call.context()[c].as_str().map(str::to_string)
        } else {
            None
        };
        out.push(v.filter(|v| !v.is_empty())?);
    }
    Some(out)
}

/// Runs the method's authorizer; `Ok` is `requestContext.authorizer`, `Err` the answer.
pub async fn authorize(call: &Call<'_>, id: &str) -> Result<Map<String, Value>, AwsResponse> {
    let Some(auth) = call.snapshot.authorizers.get(id).cloned() else {
        return Err(message(500, "Internal server error"));
    };
    let kind = auth["type"].as_str().unwrap_or("TOKEN");
    let default_source = if kind == "REQUEST" {
        ""
    } else {
        "method.request.header.Authorization"
    };
    let sources = auth["identitySource"].as_str().unwrap_or(default_source);
    let Some(ids) = identity(call, sources) else {
        return Err(unauthorized());
    };
    if kind == "COGNITO_USER_POOLS" {
        let token = ids.first().map(String::as_str).unwrap_or("");
        let token = token.strip_prefix("Bearer ").unwrap_or(token);
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
        let mut m = Map::new();
        m.insert("claims".into(), claims);
        return Ok(m);
    }
    if kind == "TOKEN"
        && let Some(expr) = auth["identityValidationExpression"]
            .as_str()
            .filter(|e| !e.is_empty())
    {
        let ok = regex::Regex::new(&format!("^(?:{expr})$")).is_ok_and(|r| r.is_match(&ids[0]));
        if !ok {
            return Err(unauthorized());
        }
    }
    let method_arn = format!(
        "arn:aws:execute-api:{}:{}:{}/{}/{}{}",
        call.region,
        call.svc.account_id,
        call.api_id,
        call.stage_name,
        call.req.method.as_str(),
        call.path
    );
    let ttl = auth["authorizerResultTtlInSeconds"].as_u64().unwrap_or(300);
    let cache_key = format!("{}:{id}:{}", call.api_id, ids.join("\u{0}"));
    let answer = match call.svc.auth_cache.get(&cache_key) {
        Some(v) => v,
        None => {
            let event = if kind == "TOKEN" {
                json!({"type": "TOKEN", "authorizationToken": ids[0], "methodArn": method_arn})
            } else {
                let mut e = proxy::rest_event(call);
                e["type"] = "REQUEST".into();
                e["methodArn"] = method_arn.clone().into();
                if let Some(m) = e.as_object_mut() {
                    m.remove("body");
                    m.remove("isBase64Encoded");
                }
                e
            };
            let uri = auth["authorizerUri"].as_str().unwrap_or("");
            let Some(function) = super::function_of_uri(uri) else {
                return Err(json_answer(500, json!({"message": null})));
            };
            match invoke_function(call.svc, &call.region, function, &event).await {
                Ok(payload) => {
                    let v: Value = serde_json::from_slice(&payload).unwrap_or(Value::Null);
                    if !v.is_object() {
                        return Err(json_answer(500, json!({"message": null})));
                    }
                    call.svc.auth_cache.put(cache_key, ttl, v.clone());
                    v
                }
                Err(Some(p)) => {
                    let msg = serde_json::from_slice::<Value>(&p)
                        .ok()
                        .and_then(|v| v["errorMessage"].as_str().map(str::to_string));
                    if msg.as_deref() == Some("Unauthorized") {
                        return Err(unauthorized());
                    }
                    return Err(json_answer(500, json!({"message": null})));
                }
                Err(None) => return Err(json_answer(500, json!({"message": null}))),
            }
        }
    };
    match evaluate(&answer["policyDocument"], &method_arn) {
        Err(()) => Err(json_answer(
            403,
            json!({"Message": "User is not authorized to access this resource with an explicit deny"}),
        )),
        Ok(false) => Err(json_answer(
            403,
            json!({"Message": "User is not authorized to access this resource"}),
        )),
        Ok(true) => {
            let mut ctx = Map::new();
            for (k, v) in answer["context"].as_object().into_iter().flatten() {
                ctx.insert(k.clone(), v.clone());
            }
            if let Some(p) = answer.get("principalId") {
                ctx.insert("principalId".into(), p.clone());
            }
            if let Some(k) = answer.get("usageIdentifierKey") {
                ctx.insert("usageIdentifierKey".into(), k.clone());
            }
            ctx.insert("integrationLatency".into(), 0.into());
            Ok(ctx)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies() {
        let arn = "arn:aws:execute-api:us-east-1:000000000000:abc/dev/GET/pets";
        let allow = json!({"Statement": [{"Effect": "Allow", "Action": "execute-api:Invoke",
            "Resource": "arn:aws:execute-api:us-east-1:000000000000:abc/*/GET/*"}]});
        assert_eq!(evaluate(&allow, arn), Ok(true));
        let other = json!({"Statement": [{"Effect": "Allow", "Resource": "arn:aws:execute-api:*:*:abc/*/POST/*"}]});
        assert_eq!(evaluate(&other, arn), Ok(false));
        let deny = json!({"Statement": [{"Effect": "Allow", "Resource": "*"},
            {"Effect": "Deny", "Resource": ["arn:aws:execute-api:*:*:abc/dev/GET/pets"]}]});
        assert_eq!(evaluate(&deny, arn), Err(()));
    }

    #[test]
    fn cache_honours_ttl() {
        let c = AuthCache::default();
        c.put("k".into(), 0, json!(1));
        assert_eq!(c.get("k"), None);
        c.put("k".into(), 60, json!(2));
        assert_eq!(c.get("k"), Some(json!(2)));
    }
}
