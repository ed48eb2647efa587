//! `aws-sdk:` Tasks to rest-json services (Lambda, EFS, API Gateway v1 and v2, Scheduler): the
//! operation's HTTP binding from botocore's model ([`super::rest_routes`]) places each
//! parameter in the URI, the query string, a header, the payload or the JSON body, as the SDK
//! would. A camelCase API (API Gateway's two) is recased by its model's shapes: the state's
//! PascalCase parameters become the API's member names (nested structures' members their
//! wire names) and its answer the SDK's PascalCase, map keys (tags, stage variables,
//! `resourceMethods`' methods, route request parameters) kept as they are. The two API
//! Gateway clients share one signing name and one service, so routes go by the SDK
//! integration's service name, not the signing name.

use cumulo_wire::{AwsRequest, AwsResponse};
use serde_json::{Map, Value};
use std::sync::LazyLock;

/// (member, name on the wire).
type Names = &'static [(&'static str, &'static str)];

/// One operation's HTTP binding.
pub struct RestOp {
    pub name: &'static str,
    pub method: &'static str,
    /// The URI template (`{label}`, `{label+}` greedy), possibly with a fixed query.
    pub uri: &'static str,
    /// (member, URI label).
    pub labels: Names,
    /// (member, query parameter name).
    pub query: Names,
    /// (member, header name).
    pub headers: Names,
    /// The member sent as the whole body, if any.
    pub payload: Option<&'static str>,
    /// Body members whose JSON key is not their name.
    pub body_names: Names,
    pub input: &'static str,
    pub output: &'static str,
    /// The output member that is the whole answer body, if any.
    pub out_payload: Option<&'static str>,
    /// (output member, header name).
    pub out_headers: Names,
}

/// One rest-json service as an SDK integration reaches it.
pub struct RestApi {
    /// The SDK integration's service name (`aws-sdk:<sdk>:<action>`).
    pub sdk: &'static str,
    pub ops: &'static [RestOp],
    /// The error shapes the model declares: the SDK has a class for each, and the integration
    /// names the error by it.
    pub errors: &'static [&'static str],
}

fn api(sdk: &str) -> Option<&'static RestApi> {
    super::rest_routes::APIS.iter().find(|a| a.sdk == sdk)
}

/// The routes of a rest-json service by the SDK integration's service name.
pub fn routes(sdk: &str) -> Option<&'static [RestOp]> {
    api(sdk).map(|a| a.ops)
}

/// Whether the rest-json service `sdk`'s model declares the error `code` (EFS's and
/// Scheduler's ValidationException, unlike most services').
pub fn models_error(sdk: &str, code: &str) -> bool {
    api(sdk).is_some_and(|a| a.errors.contains(&code))
}

static APIGATEWAY_SHAPES: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("apigateway_shapes.json")).unwrap_or(Value::Null)
});

static APIGATEWAYV2_SHAPES: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("apigatewayv2_shapes.json")).unwrap_or(Value::Null)
});

/// A camelCase API's shapes (structure members with their wire names, list and map values),
/// by the SDK integration's service name.
pub fn camel_shapes(sdk: &str) -> Option<&'static Value> {
    match sdk {
        "apigateway" => Some(&APIGATEWAY_SHAPES),
        "apigatewayv2" => Some(&APIGATEWAYV2_SHAPES),
        _ => None,
    }
}

fn first(key: &str, upper: bool) -> String {
    let mut c = key.chars();
    match c.next() {
        Some(f) if upper => f.to_ascii_uppercase().to_string() + c.as_str(),
        Some(f) => f.to_ascii_lowercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

/// The state's parameters for the input `shape`: its own members by their member names (the
/// SDK's `RestApiId` is v1's `restApiId`, v2's `ApiId` stays: [`request`] binds them to the
/// URI, query, headers or body), nested structures' members by their wire names (v2's
/// `CorsConfiguration.AllowOrigins` is `allowOrigins`).
pub fn to_api(shapes: &Value, shape: &str, params: &Value) -> Value {
    walk(shapes, shape, params, Case::Member)
}

/// An answer of the output `shape` (its wire names) in the SDK's names (the wire's `item` is
/// v1's member `items`, `Items`; v2's `apiId` is `ApiId`).
pub fn from_api(shapes: &Value, shape: &str, answer: &Value) -> Value {
    walk(shapes, shape, answer, Case::Sdk)
}

/// What [`walk`] renames keys into.
#[derive(Clone, Copy, PartialEq)]
enum Case {
    /// The operation input's member names (then [`Case::Wire`] below them).
    Member,
    /// The names on the wire.
    Wire,
    /// The SDK's PascalCase, from the wire's names.
    Sdk,
}

/// `value` as `shape` recased. Map keys stay; a key the shape does not name only has its
/// first letter changed.
fn walk(shapes: &Value, shape: &str, value: &Value, case: Case) -> Value {
    let upper = case == Case::Sdk;
    let below = if case == Case::Member {
        Case::Wire
    } else {
        case
    };
    let s = &shapes[shape];
    match value {
        Value::Object(m) if s["members"].is_object() => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let member = s["members"].as_object().and_then(|members| {
                        members.iter().find(|(name, spec)| {
                            if upper {
                                spec[0] == k.as_str()
                            } else {
                                first(name, true) == *k || *name == k
                            }
                        })
                    });
                    match member {
                        Some((name, spec)) => {
                            let inner = spec[1].as_str().unwrap_or("");
                            let key = match case {
                                Case::Member => name.clone(),
                                Case::Wire => spec[0].as_str().unwrap_or(name).to_string(),
                                Case::Sdk => first(name, true),
                            };
                            (key, walk(shapes, inner, v, below))
                        }
                        None => (first(k, upper), v.clone()),
                    }
                })
                .collect(),
        ),
        Value::Object(m) if s["map"].is_string() => {
            let inner = s["map"].as_str().unwrap_or("");
            Value::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), walk(shapes, inner, v, below)))
                    .collect(),
            )
        }
        Value::Array(items) => {
            let inner = s["list"].as_str().unwrap_or("");
            Value::Array(
                items
                    .iter()
                    .map(|i| walk(shapes, inner, i, below))
                    .collect(),
            )
        }
        v => v.clone(),
    }
}

/// A successful answer as the operation's output: the JSON body, or the payload member's
/// text, with the output's header members.
pub fn answer(op: &RestOp, resp: &AwsResponse) -> Value {
    let mut out = match op.out_payload {
        Some(p) => {
            let mut m = Map::new();
            m.insert(
                p.to_string(),
                Value::String(String::from_utf8_lossy(&resp.body).into_owned()),
            );
            m
        }
        None if resp.body.is_empty() => Map::new(),
        None => match serde_json::from_slice(&resp.body) {
            Ok(Value::Object(m)) => m,
            _ => Map::new(),
        },
    };
    for (member, header) in op.out_headers {
        if let Some(v) = resp.headers.get(*header).and_then(|v| v.to_str().ok()) {
            out.insert(member.to_string(), Value::String(v.to_string()));
        }
    }
    Value::Object(out)
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

/// The request for `op` with these parameters (in the API's member names).
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
        let (label, greedy) = match label.strip_suffix('+') {
            Some(l) => (l, true),
            None => (label, false),
        };
        let member = op
            .labels
            .iter()
            .find(|(_, l)| *l == label)
            .map_or(label, |(m, _)| m);
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
    let mut pair = |name: &str, v: &Value| {
        query.push(format!(
            "{}={}",
            encode(name, false),
            encode(&text(v), false)
        ))
    };
    for (member, name) in op.query {
        match rest.remove(*member) {
            Some(Value::Array(items)) => items.iter().for_each(|i| pair(name, i)),
            // A map member is one query parameter per entry (API Gateway's `parameters`).
            Some(Value::Object(entries)) => entries.iter().for_each(|(k, v)| pair(k, v)),
            Some(Value::Null) | None => {}
            Some(v) => pair(name, &v),
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
    if let Some(payload) = op.payload {
        if let Some(v) = rest.remove(payload).filter(|v| !v.is_null()) {
            req.body = text(&v).into();
        }
    } else if !rest.is_empty() {
        for (member, wire) in op.body_names {
            if let Some(v) = rest.remove(*member) {
                rest.insert(wire.to_string(), v);
            }
        }
        req.body = Value::Object(rest).to_string().into();
    }
    req
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn op(name: &str) -> &'static RestOp {
        service_op("lambda", name)
    }

    fn service_op(service: &str, name: &str) -> &'static RestOp {
        routes(service)
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

    #[test]
    fn camel_case_apis_are_recased_by_their_model() {
        let shapes = camel_shapes("apigateway").unwrap();
        let put = service_op("apigateway", "PutIntegration");
        let params = to_api(
            shapes,
            put.input,
            &json!({"RestApiId": "a1", "ResourceId": "r1", "HttpMethod": "GET", "Type": "HTTP",
                "IntegrationHttpMethod": "POST", "RequestParameters": {"Header.X": "v"}}),
        );
        let req = request(put, &params);
        assert_eq!(
            req.raw_path,
            "/restapis/a1/resources/r1/methods/GET/integration"
        );
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        // The member integrationHttpMethod is `httpMethod` on the wire; map keys are kept.
        assert_eq!(
            body,
            json!({"type": "HTTP", "httpMethod": "POST", "requestParameters": {"Header.X": "v"}})
        );

        let get = service_op("apigateway", "GetResources");
        let answer = json!({"item": [{"id": "r1", "path": "/", "resourceMethods":
            {"GET": {"httpMethod": "GET", "methodResponses": {"200": {"statusCode": "200"}}}}}]});
        assert_eq!(
            from_api(shapes, get.output, &answer),
            json!({"Items": [{"Id": "r1", "Path": "/", "ResourceMethods":
                {"GET": {"HttpMethod": "GET", "MethodResponses": {"200": {"StatusCode": "200"}}}}}]})
        );
        let stage = service_op("apigateway", "CreateStage");
        assert_eq!(
            to_api(shapes, stage.input, &json!({"Variables": {"lowKey": "v"}})),
            json!({"variables": {"lowKey": "v"}})
        );
    }

    #[test]
    fn api_gateway_v2_goes_by_its_own_routes_and_wire_names() {
        let shapes = camel_shapes("apigatewayv2").unwrap();
        let create = service_op("apigatewayv2", "CreateRoute");
        let params = to_api(
            shapes,
            create.input,
            &json!({"ApiId": "a1", "RouteKey": "GET /x",
                "RequestParameters": {"route.request.querystring.q": {"Required": true}}}),
        );
        let req = request(create, &params);
        assert_eq!(
            (req.method.as_str(), req.raw_path.as_str()),
            ("POST", "/v2/apis/a1/routes")
        );
        let body: Value = serde_json::from_slice(&req.body).unwrap();
        // Members go by their locationName; a map's keys stay, its values' members recased.
        assert_eq!(
            body,
            json!({"routeKey": "GET /x",
                "requestParameters": {"route.request.querystring.q": {"required": true}}})
        );
        let api = service_op("apigatewayv2", "CreateApi");
        let params = to_api(
            shapes,
            api.input,
            &json!({"Name": "n", "ProtocolType": "HTTP",
                "CorsConfiguration": {"AllowOrigins": ["*"], "MaxAge": 5}, "Tags": {"lowKey": "v"}}),
        );
        let body: Value = serde_json::from_slice(&request(api, &params).body).unwrap();
        assert_eq!(
            body,
            json!({"name": "n", "protocolType": "HTTP",
                "corsConfiguration": {"allowOrigins": ["*"], "maxAge": 5}, "tags": {"lowKey": "v"}})
        );
        let get = service_op("apigatewayv2", "GetApis");
        assert_eq!(
            from_api(
                shapes,
                get.output,
                &json!({"items": [{"apiId": "a1", "name": "n",
                "corsConfiguration": {"allowOrigins": ["*"]}, "tags": {"lowKey": "v"}}]})
            ),
            json!({"Items": [{"ApiId": "a1", "Name": "n",
                "CorsConfiguration": {"AllowOrigins": ["*"]}, "Tags": {"lowKey": "v"}}]})
        );
        // v1's routes are not v2's: one signing name, two clients.
        assert!(
            routes("apigateway")
                .unwrap()
                .iter()
                .all(|o| o.name != "GetApis")
        );
    }

    #[test]
    fn scheduler_goes_by_its_model_and_keeps_its_modeled_errors() {
        let get = service_op("scheduler", "GetSchedule");
        let req = request(get, &json!({"Name": "s 1", "GroupName": "g"}));
        assert_eq!(
            (
                req.method.as_str(),
                req.raw_path.as_str(),
                req.raw_query.as_str()
            ),
            ("GET", "/schedules/s%201", "groupName=g")
        );
        let tags = service_op("scheduler", "ListTagsForResource");
        let req = request(
            tags,
            &json!({"ResourceArn": "arn:aws:scheduler:us-east-1:1:schedule-group/g"}),
        );
        assert_eq!(
            req.raw_path,
            "/tags/arn%3Aaws%3Ascheduler%3Aus-east-1%3A1%3Aschedule-group%2Fg"
        );
        // Scheduler's (and EFS's) model declares ValidationException; DynamoDB's, a JSON
        // service, is not looked up here, and Lambda's model does not have it.
        assert!(models_error("scheduler", "ValidationException"));
        assert!(models_error("efs", "ValidationException"));
        assert!(!models_error("lambda", "ValidationException"));
        assert!(!models_error("dynamodb", "ValidationException"));
    }
}
