//! The Lambda proxy integration's event and response, as AWS builds and reads them: payload
//! format 1.0 (REST APIs, and HTTP APIs that ask for it) and 2.0 (HTTP APIs).
//!
//! cumulo's HTTP server does not keep the case of header names as the client sent them, so
//! they reach the function in canonical Title-Case (`Content-Type`, `X-Api-Key`); payload 2.0
//! lower-cases them, as AWS does.

use super::{Call, message};
use base64::Engine;
use bytes::Bytes;
use cumulo_wire::{AwsRequest, AwsResponse};
use http::StatusCode;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

/// `content-type` → `Content-Type`.
pub fn title_case(name: &str) -> String {
    name.split('-')
        .map(|w| {
            let mut c = w.chars();
            match c.next() {
                Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
                None => String::new(),
            }
        })
        .collect::<Vec<_>>()
        .join("-")
}

pub fn identity(req: &AwsRequest) -> Value {
    json!({
        "accessKey": null, "accountId": null, "caller": null,
        "cognitoAuthenticationProvider": null, "cognitoAuthenticationType": null,
        "cognitoIdentityId": null, "cognitoIdentityPoolId": null, "principalOrgId": null,
        "sourceIp": "127.0.0.1", "user": null,
        "userAgent": req.header("user-agent"), "userArn": null,
    })
}

/// Header values by Title-Case name, in arrival order (several values each).
pub fn header_lists(req: &AwsRequest) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (k, v) in &req.headers {
        out.entry(title_case(k.as_str()))
            .or_default()
            .push(String::from_utf8_lossy(v.as_bytes()).into_owned());
    }
    out
}

/// The body as the event carries it: text, or base64 when the content type is binary.
pub fn event_body(req: &AwsRequest, binary_types: &[String]) -> (Value, bool) {
    if req.body.is_empty() {
        return (Value::Null, false);
    }
    let ct = req.header("content-type").unwrap_or("");
    let binary = binary_types.iter().any(|t| {
        t == "*/*"
            || ct.starts_with(t.as_str())
            || t.strip_suffix("/*").is_some_and(|p| ct.starts_with(p))
    }) || std::str::from_utf8(&req.body).is_err();
    if binary {
        let b = base64::engine::general_purpose::STANDARD.encode(&req.body);
        (Value::String(b), true)
    } else {
        (
            Value::String(String::from_utf8_lossy(&req.body).into_owned()),
            false,
        )
    }
}

fn null_if_empty(m: Map<String, Value>) -> Value {
    if m.is_empty() {
        Value::Null
    } else {
        Value::Object(m)
    }
}

/// The REST API proxy event (payload format 1.0).
pub fn rest_event(call: &Call<'_>) -> Value {
    let req = call.req;
    let lists = header_lists(req);
    let headers: Map<String, Value> = lists
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                Value::String(v.last().cloned().unwrap_or_default()),
            )
        })
        .collect();
    let multi_headers: Map<String, Value> =
        lists.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
    let (query, multi_query) = query_maps(req);
    let (body, b64) = event_body(req, &call.snapshot.binary_media_types);
    json!({
        "resource": call.resource_path,
        "path": call.path,
        "httpMethod": req.method.as_str(),
        "headers": null_if_empty(headers),
        "multiValueHeaders": null_if_empty(multi_headers),
        "queryStringParameters": null_if_empty(query),
        "multiValueQueryStringParameters": null_if_empty(multi_query),
        "pathParameters": null_if_empty(call.path_params.iter().map(|(k, v)| (k.clone(), Value::String(v.clone()))).collect()),
        "stageVariables": call.stage_variables(),
        "requestContext": call.context(),
        "body": body,
        "isBase64Encoded": b64,
    })
}

pub fn query_maps(req: &AwsRequest) -> (Map<String, Value>, Map<String, Value>) {
    let mut single = Map::new();
    let mut multi: Map<String, Value> = Map::new();
    for (k, v) in &req.query {
        single.insert(k.clone(), Value::String(v.clone()));
        match multi.get_mut(k) {
            Some(Value::Array(a)) => a.push(Value::String(v.clone())),
            _ => {
                multi.insert(k.clone(), json!([v]));
            }
        }
    }
    (single, multi)
}

const PROXY_KEYS: &[&str] = &[
    "statusCode",
    "headers",
    "multiValueHeaders",
    "body",
    "isBase64Encoded",
    "cookies",
];

fn header_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Null => None,
        Value::Bool(_) | Value::Number(_) => Some(v.to_string()),
        _ => None,
    }
}

/// Whether a base64 body is sent as binary: the client accepts, or the function answers, one
/// of the API's binary media types. Otherwise API Gateway sends the base64 text as it is.
pub fn binary_wanted(
    binary_types: &[String],
    accept: Option<&str>,
    content_type: Option<&str>,
) -> bool {
    let matches = |t: &str| {
        let t = t.split(';').next().unwrap_or("").trim();
        binary_types.iter().any(|b| {
            b == "*/*"
                || b == t
                || b.strip_suffix("/*")
                    .is_some_and(|p| t.starts_with(&format!("{p}/")))
        })
    };
    accept.is_some_and(|a| a.split(',').next().is_some_and(matches))
        || content_type.is_some_and(matches)
}

/// Maps a function's answer (payload format 1.0) to the HTTP response; `None` when it is
/// malformed (the caller answers AWS's 502). `binary_types`: the API's binary media types
/// (HTTP APIs: `None`, they always decode), `accept`: the request's `Accept`.
pub fn rest_response(
    payload: &Bytes,
    binary_types: Option<&[String]>,
    accept: Option<&str>,
) -> Option<AwsResponse> {
    let v: Value = serde_json::from_slice(payload).ok()?;
    let m = v.as_object()?;
    if m.keys().any(|k| !PROXY_KEYS.contains(&k.as_str())) {
        return None;
    }
    let status = match m.get("statusCode") {
        None | Some(Value::Null) => 200,
        Some(Value::Number(n)) => u16::try_from(n.as_u64()?).ok()?,
        Some(Value::String(s)) => s.parse::<u16>().ok()?,
        _ => return None,
    };
    let status = StatusCode::from_u16(status).ok()?;
    let b64 = match m.get("isBase64Encoded") {
        None | Some(Value::Null) => false,
        Some(Value::Bool(b)) => *b,
        Some(Value::String(s)) => s == "true",
        _ => return None,
    };
    let answered_type = ["headers", "multiValueHeaders"].iter().find_map(|k| {
        m.get(*k)?
            .as_object()?
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-type"))
            .and_then(|(_, v)| v.as_str().or_else(|| v.as_array()?.first()?.as_str()))
    });
    let decode = b64 && binary_types.is_none_or(|t| binary_wanted(t, accept, answered_type));
    let body = match m.get("body") {
        None | Some(Value::Null) => Bytes::new(),
        Some(Value::String(s)) if decode => Bytes::from(
            base64::engine::general_purpose::STANDARD
                .decode(s.as_bytes())
                .ok()?,
        ),
        Some(Value::String(s)) => Bytes::from(s.clone()),
        Some(other) => Bytes::from(other.to_string()),
    };
    let mut resp = AwsResponse::new(status, "", body);
    let mut has_ct = false;
    let mut add = |resp: &mut AwsResponse, k: &str, val: &str| {
        if let (Ok(name), Ok(value)) = (
            http::HeaderName::from_bytes(k.as_bytes()),
            http::HeaderValue::from_str(val),
        ) {
            if name == http::header::CONTENT_TYPE {
                has_ct = true;
            }
            resp.headers.append(name, value);
        }
    };
    match m.get("multiValueHeaders") {
        None | Some(Value::Null) => {}
        Some(Value::Object(h)) => {
            for (k, vals) in h {
                match vals {
                    Value::Array(list) => {
                        for x in list {
                            add(&mut resp, k, &header_text(x)?);
                        }
                    }
                    Value::Null => {}
                    _ => return None,
                }
            }
        }
        _ => return None,
    }
    match m.get("headers") {
        None | Some(Value::Null) => {}
        Some(Value::Object(h)) => {
            for (k, x) in h {
                if let Some(t) = header_text(x) {
                    add(&mut resp, k, &t);
                } else if !x.is_null() {
                    return None;
                }
            }
        }
        _ => return None,
    }
    if !has_ct {
        resp.set_header("content-type", "application/json");
    }
    Some(resp)
}

/// The HTTP API event, payload format 2.0.
#[allow(clippy::too_many_arguments)]
pub fn v2_event(
    req: &AwsRequest,
    api_id: &str,
    account: &str,
    stage: &str,
    route_key: &str,
    raw_path: &str,
    path_params: &BTreeMap<String, String>,
    stage_variables: &Value,
    authorizer: Option<&Value>,
    request_id: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Value {
    let mut headers = Map::new();
    let mut cookies = Vec::new();
    for (k, v) in &req.headers {
        let val = String::from_utf8_lossy(v.as_bytes()).into_owned();
        if k == http::header::COOKIE {
            cookies.extend(val.split(';').map(|c| Value::String(c.trim().to_string())));
            continue;
        }
        match headers.get_mut(k.as_str()) {
            Some(Value::String(prev)) => {
                prev.push(',');
                prev.push_str(&val);
            }
            _ => {
                headers.insert(k.as_str().to_string(), Value::String(val));
            }
        }
    }
    let mut query: Map<String, Value> = Map::new();
    for (k, v) in &req.query {
        match query.get_mut(k) {
            Some(Value::String(prev)) => {
                prev.push(',');
                prev.push_str(v);
            }
            _ => {
                query.insert(k.clone(), Value::String(v.clone()));
            }
        }
    }
    let (body, b64) = event_body(req, &[]);
    let mut event = json!({
        "version": "2.0",
        "routeKey": route_key,
        "rawPath": raw_path,
        "rawQueryString": req.raw_query,
        "headers": headers,
        "requestContext": {
            "accountId": account,
            "apiId": api_id,
            "domainName": req.host,
            "domainPrefix": api_id,
            "http": {
                "method": req.method.as_str(),
                "path": raw_path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": req.header("user-agent").unwrap_or(""),
            },
            "requestId": request_id,
            "routeKey": route_key,
            "stage": stage,
            "time": now.format("%d/%b/%Y:%H:%M:%S +0000").to_string(),
            "timeEpoch": now.timestamp_millis(),
        },
        "isBase64Encoded": b64,
    });
    if !cookies.is_empty() {
        event["cookies"] = Value::Array(cookies);
    }
    if !query.is_empty() {
        event["queryStringParameters"] = Value::Object(query);
    }
    if !path_params.is_empty() {
        event["pathParameters"] = json!(path_params);
    }
    if stage_variables.as_object().is_some_and(|m| !m.is_empty()) {
        event["stageVariables"] = stage_variables.clone();
    }
    if let Some(a) = authorizer {
        event["requestContext"]["authorizer"] = a.clone();
    }
    if !body.is_null() {
        event["body"] = body;
    }
    event
}

/// Maps a function's answer under payload format 2.0: an object with `statusCode` is a
/// response; anything else valid JSON (a string, a number, an object without `statusCode`)
/// becomes a 200 `application/json` answer with the payload as its body.
pub fn v2_response(payload: &Bytes) -> AwsResponse {
    let Ok(v) = serde_json::from_slice::<Value>(payload) else {
        return message(500, "Internal Server Error");
    };
    let Some(m) = v.as_object().filter(|m| m.contains_key("statusCode")) else {
        let body = match &v {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        };
        return AwsResponse::new(StatusCode::OK, "application/json", body);
    };
    let status = match &m["statusCode"] {
        Value::Number(n) => n.as_u64().and_then(|n| u16::try_from(n).ok()),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
    .and_then(|s| StatusCode::from_u16(s).ok());
    let Some(status) = status else {
        return message(500, "Internal Server Error");
    };
    let b64 = m
        .get("isBase64Encoded")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    let body = match m.get("body") {
        Some(Value::String(s)) if b64 => base64::engine::general_purpose::STANDARD
            .decode(s.as_bytes())
            .map(Bytes::from)
            .unwrap_or_default(),
        Some(Value::String(s)) => Bytes::from(s.clone()),
        None | Some(Value::Null) => Bytes::new(),
        Some(other) => Bytes::from(other.to_string()),
    };
    let mut resp = AwsResponse::new(status, "", body);
    for (k, x) in m
        .get("headers")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        if let Some(t) = header_text(x) {
            resp.set_header(k, &t);
        }
    }
    for c in m
        .get("cookies")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(c) = c.as_str()
            && let Ok(v) = http::HeaderValue::from_str(c)
        {
            resp.headers.append(http::header::SET_COOKIE, v);
        }
    }
    if !resp.headers.contains_key(http::header::CONTENT_TYPE) {
        resp.set_header("content-type", "application/json");
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header_values(r: &AwsResponse, name: &str) -> Vec<String> {
        r.headers
            .get_all(name)
            .iter()
            .map(|v| v.to_str().unwrap().to_string())
            .collect()
    }

    #[test]
    fn rest_responses_as_aws_maps_them() {
        let r = rest_response(&Bytes::from_static(br#"{"statusCode": 201, "body": "hi", "headers": {"test-header": "value", "header-bool": true}}"#), None, None).unwrap();
        assert_eq!(r.status, 201);
        assert_eq!(r.body, "hi");
        assert_eq!(header_values(&r, "header-bool"), ["true"]);
        assert_eq!(header_values(&r, "content-type"), ["application/json"]);
        let r = rest_response(&Bytes::from_static(br#"{"statusCode": "200", "multiValueHeaders": {"test-multi": ["value-multi"]}, "headers": {"test-multi": "value-solo"}}"#), None, None).unwrap();
        assert_eq!(
            header_values(&r, "test-multi"),
            ["value-multi", "value-solo"]
        );
        let r = rest_response(
            &Bytes::from_static(br#"{"body": "dGVzdC1kYXRh", "isBase64Encoded": true}"#),
            None,
            None,
        )
        .unwrap();
        assert_eq!(r.body, "test-data");
        // A REST API without binary media types sends the base64 text, as AWS did.
        let text = rest_response(
            &Bytes::from_static(br#"{"body": "dGVzdC1kYXRh", "isBase64Encoded": true}"#),
            Some(&[]),
            None,
        )
        .unwrap();
        assert_eq!(text.body, "dGVzdC1kYXRh");
        let types = ["image/*".to_string()];
        assert!(binary_wanted(&types, Some("image/png, */*"), None));
        assert!(!binary_wanted(
            &types,
            Some("text/html"),
            Some("application/json")
        ));
        for bad in [
            &b"null"[..],
            b"\"just a string\"",
            br#"{"wrong": 1}"#,
            br#"{"statusCode": "abc"}"#,
            br#"{"multiValueHeaders": {"a": "not-a-list"}}"#,
            b"",
        ] {
            assert!(
                rest_response(&Bytes::copy_from_slice(bad), None, None).is_none(),
                "{:?}",
                String::from_utf8_lossy(bad)
            );
        }
    }

    #[test]
    fn v2_responses() {
        let r = v2_response(&Bytes::from_static(br#""hello""#));
        assert_eq!((r.status.as_u16(), r.body.as_ref()), (200, &b"hello"[..]));
        let r = v2_response(&Bytes::from_static(br#"{"a": 1}"#));
        assert_eq!(
            (r.status.as_u16(), r.body.as_ref()),
            (200, &br#"{"a":1}"#[..])
        );
        let r = v2_response(&Bytes::from_static(
            br#"{"statusCode": 404, "body": "no", "cookies": ["a=1", "b=2"]}"#,
        ));
        assert_eq!(r.status, 404);
        assert_eq!(header_values(&r, "set-cookie"), ["a=1", "b=2"]);
    }

    #[test]
    fn title_cases_header_names() {
        assert_eq!(title_case("x-api-key"), "X-Api-Key");
        assert_eq!(title_case("content-type"), "Content-Type");
    }
}
