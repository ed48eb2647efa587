//! The JSON-Patch-like `patchOperations` every Update* call takes. A path names a member of the
//! record (`/description`, `/variables/stage`, `/binaryMediaTypes/image~1png` where `~1` is a
//! `/`); values always arrive as strings and take the type of the member they set.
//!
//! Which paths a record accepts is the caller's list of patterns (`*` one segment, `**` the
//! rest); anything else is AWS's "Invalid patch path" and nothing changes.

use cumulo_wire::AwsError;
use serde_json::{Map, Value};

const OPS: &[&str] = &["add", "remove", "move", "test", "replace", "copy"];

/// Members that hold booleans or numbers though patches set them with strings.
const BOOLEANS: &[&str] = &[
    "enabled",
    "apiKeyRequired",
    "validateRequestBody",
    "validateRequestParameters",
    "tracingEnabled",
    "cacheClusterEnabled",
    "disableExecuteApiEndpoint",
    "autoDeploy",
    "allowCredentials",
    "enableSimpleResponses",
];
const NUMBERS: &[&str] = &[
    "minimumCompressionSize",
    "timeoutInMillis",
    "authorizerResultTtlInSeconds",
    "maxAge",
    "limit",
    "offset",
    "burstLimit",
    "rateLimit",
];

#[derive(Debug, Clone, PartialEq)]
pub struct PatchOp {
    pub op: String,
    pub path: String,
    pub value: Option<String>,
    pub from: Option<String>,
}

impl PatchOp {
    /// The path's segments, unescaped (`~1` is `/`, `~0` is `~`).
    pub fn segments(&self) -> Vec<String> {
        segments(&self.path)
    }
}

pub fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .skip(1)
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// Reads `patchOperations`, refusing unknown ops as AWS's validation does (all of them in one
/// message, numbered from 1). `input` names the operation's input shape
/// (`updateRestApiInput`).
pub fn parse(body: &Value, input: &str) -> Result<Vec<PatchOp>, AwsError> {
    let list = body
        .get("patchOperations")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut ops = Vec::new();
    let mut errors = Vec::new();
    for (i, o) in list.iter().enumerate() {
        let op = o
            .get("op")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if !OPS.contains(&op.as_str()) {
            errors.push(format!(
                "Value '{op}' at '{input}.patchOperations.{}.member.op' failed to satisfy constraint: Member must satisfy enum value set: [add, remove, move, test, replace, copy]",
                i + 1
            ));
        }
        let text = |k: &str| match o.get(k) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Null) | None => None,
            Some(v) => Some(v.to_string()),
        };
        ops.push(PatchOp {
            op,
            path: text("path").unwrap_or_default(),
            value: text("value"),
            from: text("from"),
        });
    }
    if !errors.is_empty() {
        return Err(validation_errors(&errors));
    }
    Ok(ops)
}

/// AWS's `ValidationException` listing `errors`.
pub fn validation_errors(errors: &[String]) -> AwsError {
    let n = errors.len();
    AwsError::bad_request(
        "ValidationException",
        format!(
            "{n} validation error{} detected: {}",
            if n == 1 { "" } else { "s" },
            errors.join("; ")
        ),
    )
}

pub fn bad_request(msg: impl Into<String>) -> AwsError {
    AwsError::bad_request("BadRequestException", msg)
}

/// Whether `path` matches a pattern (`/variables/*`, `/tags/**`).
fn matches(pattern: &str, path: &str) -> bool {
    let p: Vec<&str> = pattern.split('/').skip(1).collect();
    let s: Vec<&str> = path.split('/').skip(1).collect();
    for (i, seg) in p.iter().enumerate() {
        if *seg == "**" {
            return s.len() > i;
        }
        match s.get(i) {
            Some(x) if *seg == "*" || seg == x => {}
            _ => return false,
        }
    }
    p.len() == s.len()
}

/// Applies `ops` to `doc`, each op's path checked against `allowed`. On error `doc` may be
/// half-changed: callers apply to a copy.
pub fn apply(doc: &mut Value, ops: &[PatchOp], allowed: &[&str]) -> Result<(), AwsError> {
    for op in ops {
        if op.path.is_empty() && op.op != "copy" {
            return Err(bad_request("Invalid patch path null"));
        }
        if !allowed.iter().any(|p| matches(p, &op.path)) {
            return Err(bad_request(format!("Invalid patch path {}", op.path)));
        }
        apply_one(doc, op)?;
    }
    Ok(())
}

/// The check of the Update* calls that take only `replace` of listed members (resources,
/// models, request validators), in AWS's words.
pub fn replace_only(op: &PatchOp, allowed: &[&str]) -> Result<(), AwsError> {
    if op.op != "replace" {
        return Err(bad_request(format!(
            "Invalid patch path  '{}' specified for op '{}'. Please choose supported operations",
            op.path, op.op
        )));
    }
    if !allowed.contains(&op.path.as_str()) {
        return Err(bad_request(format!(
            "Invalid patch path  '{}' specified for op 'replace'. Must be one of: [{}]",
            op.path,
            allowed.join(", ")
        )));
    }
    Ok(())
}

/// A string value in the type the member takes.
fn typed(key: &str, existing: Option<&Value>, value: &str) -> Value {
    let as_bool = || match value {
        "true" => Some(Value::Bool(true)),
        "false" => Some(Value::Bool(false)),
        _ => None,
    };
    let as_number = || {
        value
            .parse::<i64>()
            .map(Value::from)
            .ok()
            .or_else(|| value.parse::<f64>().ok().map(Value::from))
    };
    let converted = match existing {
        Some(Value::Bool(_)) => as_bool(),
        Some(Value::Number(_)) => as_number(),
        Some(Value::Object(_)) | Some(Value::Array(_)) => serde_json::from_str(value).ok(),
        _ if BOOLEANS.contains(&key) => as_bool(),
        _ if NUMBERS.contains(&key) => as_number(),
        _ => None,
    };
    converted.unwrap_or_else(|| Value::String(value.to_string()))
}

/// Applies one op without checking its path.
pub fn apply_one(doc: &mut Value, op: &PatchOp) -> Result<(), AwsError> {
    let segs = op.segments();
    let Some((last, parents)) = segs.split_last() else {
        return Err(bad_request(format!("Invalid patch path {}", op.path)));
    };
    if !doc.is_object() {
        *doc = Value::Object(Map::new());
    }
    let mut at = &mut *doc;
    for s in parents {
        if let Value::Array(items) = at {
            let i = s
                .parse::<usize>()
                .ok()
                .filter(|i| *i < items.len())
                .or_else(|| items.iter().position(|v| v.as_str() == Some(s)))
                .ok_or_else(|| bad_request(format!("Invalid patch path {}", op.path)))?;
            at = &mut items[i];
            continue;
        }
        if !at.is_object() {
            *at = Value::Object(Map::new());
        }
        let Value::Object(m) = at else {
            unreachable!("made an object above")
        };
        if op.op == "remove" && !m.contains_key(s) {
            return Ok(());
        }
        at = m
            .entry(s.clone())
            .or_insert_with(|| Value::Object(Map::new()));
    }
    match at {
        Value::Array(items) => {
            let pos = last
                .parse::<usize>()
                .ok()
                .filter(|i| *i < items.len())
                .or_else(|| items.iter().position(|v| v.as_str() == Some(last)));
            match op.op.as_str() {
                "add" => {
                    let v = op.value.clone().unwrap_or_else(|| last.clone());
                    if !items.iter().any(|x| x.as_str() == Some(&v)) {
                        items.push(Value::String(v));
                    }
                }
                "remove" => {
                    if let Some(i) = pos {
                        items.remove(i);
                    }
                }
                "replace" => {
                    let v = Value::String(op.value.clone().unwrap_or_default());
                    match pos {
                        Some(i) => items[i] = v,
                        None => items.push(v),
                    }
                }
                other => return Err(unsupported(other, &op.path)),
            }
        }
        Value::Object(m) => match op.op.as_str() {
            "add" | "replace" => {
                let v = match &op.value {
                    Some(v) => typed(last, m.get(last), v),
                    None => Value::Null,
                };
                if v.is_null() {
                    m.remove(last);
                } else {
                    m.insert(last.clone(), v);
                }
            }
            "remove" => {
                m.remove(last);
            }
            other => return Err(unsupported(other, &op.path)),
        },
        _ => return Err(bad_request(format!("Invalid patch path {}", op.path))),
    }
    Ok(())
}

fn unsupported(op: &str, path: &str) -> AwsError {
    bad_request(format!(
        "Invalid patch path  '{path}' specified for op '{op}'. Please choose supported operations"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ops(v: Value) -> Vec<PatchOp> {
        parse(&json!({ "patchOperations": v }), "updateRestApiInput").unwrap()
    }

    #[test]
    fn replace_add_remove_with_types() {
        let mut doc = json!({"name": "a", "variables": {}, "binaryMediaTypes": [],
            "minimumCompressionSize": 1, "disableExecuteApiEndpoint": false});
        let o = ops(json!([
            {"op": "replace", "path": "/name", "value": "b"},
            {"op": "add", "path": "/variables/k", "value": "v"},
            {"op": "add", "path": "/binaryMediaTypes/image~1png"},
            {"op": "replace", "path": "/minimumCompressionSize", "value": "10"},
            {"op": "replace", "path": "/disableExecuteApiEndpoint", "value": "true"},
        ]));
        apply(
            &mut doc,
            &o,
            &[
                "/name",
                "/variables/*",
                "/binaryMediaTypes/*",
                "/minimumCompressionSize",
                "/disableExecuteApiEndpoint",
            ],
        )
        .unwrap();
        assert_eq!(
            doc,
            json!({"name": "b", "variables": {"k": "v"},
            "binaryMediaTypes": ["image/png"], "minimumCompressionSize": 10,
            "disableExecuteApiEndpoint": true})
        );
        let o = ops(
            json!([{"op": "remove", "path": "/binaryMediaTypes/image~1png"},
            {"op": "remove", "path": "/variables/k"}]),
        );
        apply(&mut doc, &o, &["/binaryMediaTypes/*", "/variables/*"]).unwrap();
        assert_eq!(doc["binaryMediaTypes"], json!([]));
        assert_eq!(doc["variables"], json!({}));
    }

    #[test]
    fn refuses_unknown_paths_and_ops() {
        let mut doc = json!({});
        let o = ops(json!([{"op": "replace", "path": "/id", "value": "x"}]));
        let e = apply(&mut doc, &o, &["/name"]).unwrap_err();
        assert_eq!(e.message, "Invalid patch path /id");
        let e = parse(
            &json!({"patchOperations": [{"op": "wrong", "path": "/a"}, {"op": "wrong"}]}),
            "updateRestApiInput",
        )
        .unwrap_err();
        assert_eq!(e.code, "ValidationException");
        assert!(e.message.starts_with("2 validation errors detected: Value 'wrong' at 'updateRestApiInput.patchOperations.1.member.op'"));
    }

    #[test]
    fn replaces_a_list_member_by_value() {
        let mut doc = json!({"endpointConfiguration": {"types": ["EDGE"]}});
        let o = ops(
            json!([{"op": "replace", "path": "/endpointConfiguration/types/EDGE", "value": "REGIONAL"}]),
        );
        apply(&mut doc, &o, &["/endpointConfiguration/types/*"]).unwrap();
        assert_eq!(doc["endpointConfiguration"]["types"], json!(["REGIONAL"]));
    }
}
