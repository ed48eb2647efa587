//! `aws-sdk:` Tasks to rest-json services (Lambda, EFS): the operation's HTTP binding from
//! botocore's model ([`super::rest_routes`]) places each parameter in the URI, the query
//! string, a header or the JSON body, as the SDK would.

use cumulo_wire::AwsRequest;
use serde_json::{Map, Value};

/// One operation's HTTP binding.
pub struct RestOp {
    pub name: &'static str,
    pub method: &'static str,
    /// The URI template (`{Member}` labels, `{Member+}` greedy), possibly with a fixed query.
    pub uri: &'static str,
    /// (member, query parameter name).
    pub query: &'static [(&'static str, &'static str)],
    /// (member, header name).
    pub headers: &'static [(&'static str, &'static str)],
}

/// The routes of a rest-json service by signing name.
pub fn routes(signing: &str) -> Option<&'static [RestOp]> {
    match signing {
        "lambda" => Some(super::rest_routes::LAMBDA),
        "elasticfilesystem" => Some(super::rest_routes::EFS),
        _ => None,
    }
}

fn encode(s: &str, greedy: bool) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric()
            || matches!(b, b'-' | b'_' | b'.' | b'~')
            || (greedy && b == b'/')
        {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        v => v.to_string(),
    }
}

/// The request for `op` with these (PascalCase, as the API's) parameters.
pub fn request(op: &RestOp, params: &Value) -> AwsRequest {
    let mut rest: Map<String, Value> = params.as_object().cloned().unwrap_or_default();
    let (template, fixed) = op.uri.split_once('?').unwrap_or((op.uri, ""));
    let mut path = String::new();
    let mut tail = template;
    while let Some(start) = tail.find('{') {
        path.push_str(&tail[..start]);
        let Some(end) = tail[start..].find('}') else {
            break;
        };
        let label = &tail[start + 1..start + end];
        let (member, greedy) = match label.strip_suffix('+') {
            Some(m) => (m, true),
            None => (label, false),
        };
        if let Some(v) = rest.remove(member) {
            path.push_str(&encode(&text(&v), greedy));
        }
        tail = &tail[start + end + 1..];
    }
    path.push_str(tail);
    let mut query: Vec<String> = fixed
        .split('&')
        .filter(|p| !p.is_empty())
        .map(str::to_string)
        .collect();
    for (member, name) in op.query {
        match rest.remove(*member) {
            Some(Value::Array(items)) => {
                for i in items {
                    query.push(format!(
                        "{}={}",
                        encode(name, false),
                        encode(&text(&i), false)
                    ));
                }
            }
            Some(Value::Null) | None => {}
            Some(v) => query.push(format!(
                "{}={}",
                encode(name, false),
                encode(&text(&v), false)
            )),
        }
    }
    let mut headers = Vec::new();
    for (member, name) in op.headers {
        if let Some(v) = rest.remove(*member) {
            headers.push((*name, text(&v)));
        }
    }
    if !query.is_empty() {
        path = format!("{path}?{}", query.join("&"));
    }
    let method = op.method.parse().unwrap_or(http::Method::POST);
    let mut req = AwsRequest::new(method, &path);
    for (name, value) in headers {
        if let (Ok(n), Ok(v)) = (
            http::HeaderName::from_bytes(name.as_bytes()),
            value.parse::<http::HeaderValue>(),
        ) {
            req.headers.insert(n, v);
        }
    }
    if let Ok(c) = "application/json".parse() {
        req.headers.insert("content-type", c);
    }
    if !rest.is_empty() {
        req.body = Value::Object(rest).to_string().into();
    }
    req
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn op(name: &str) -> &'static RestOp {
        routes("lambda")
            .and_then(|r| r.iter().find(|o| o.name == name))
            .expect("route")
    }

    #[test]
    fn parameters_go_where_the_model_binds_them() {
        let req = request(
            op("GetFunction"),
            &json!({"FunctionName": "my fn", "Qualifier": "1"}),
        );
        assert_eq!(req.method, http::Method::GET);
        assert_eq!(req.raw_path, "/2015-03-31/functions/my%20fn");
        assert_eq!(req.raw_query, "Qualifier=1");
        assert!(req.body.is_empty());
        let req = request(
            op("ListProvisionedConcurrencyConfigs"),
            &json!({"FunctionName": "f", "MaxItems": 5}),
        );
        assert_eq!(req.raw_query, "List=ALL&MaxItems=5");
        let req = request(
            op("TagResource"),
            &json!({"Resource": "arn:x", "Tags": {"k": "v"}}),
        );
        assert_eq!(req.raw_path, "/2017-03-31/tags/arn%3Ax");
        assert_eq!(req.body.as_ref(), br#"{"Tags":{"k":"v"}}"#);
    }
}
