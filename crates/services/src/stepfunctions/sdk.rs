//! The generic `arn:aws:states:::aws-sdk:<service>:<action>` path: the SDK integration's
//! service name is mapped to the catalog's signing name, the JSON parameters are written in
//! the service's own wire shape (JSON 1.0/1.1 or query form), the service answers in-process
//! through [`crate::catalog::Catalog::service`], and its answer is read back as JSON in the
//! SDK's PascalCase. Lambda and EFS (rest-json) are reached through their HTTP bindings
//! ([`super::rest`]); API Gateway, Route 53, CloudFront beyond createInvalidation and S3
//! beyond its special cases are not reached here.

use crate::catalog::{Descriptor, Wire};
use crate::s3::xml_in::{self, Element};
use cumulo_wire::AwsRequest;
use serde_json::{Map, Value};

/// The catalog signing name an SDK integration's service name (AWS's lower-case SDK client
/// name) stands for.
pub fn signing_name(sdk: &str) -> Option<&'static str> {
    Some(match sdk {
        "sfn" => "states",
        "eventbridge" => "events",
        "cloudwatchlogs" => "logs",
        "cloudwatch" => "monitoring",
        "applicationautoscaling" => "application-autoscaling",
        "elasticloadbalancingv2" => "elasticloadbalancing",
        "efs" => "elasticfilesystem",
        "lambda" => "lambda",
        "acm" => "acm",
        "apigateway" => "apigateway",
        "apprunner" => "apprunner",
        "autoscaling" => "autoscaling",
        "cloudformation" => "cloudformation",
        "cloudfront" => "cloudfront",
        "dynamodb" => "dynamodb",
        "ec2" => "ec2",
        "ecr" => "ecr",
        "ecs" => "ecs",
        "iam" => "iam",
        "kms" => "kms",
        "route53" => "route53",
        "s3" => "s3",
        "secretsmanager" => "secretsmanager",
        "servicediscovery" => "servicediscovery",
        "sns" => "sns",
        "sqs" => "sqs",
        "ssm" => "ssm",
        "sts" => "sts",
        _ => return None,
    })
}

/// Services whose API members are camelCase (botocore's models): the SDK's PascalCase
/// parameters are lower-cased on the way in and the answer upper-cased on the way out, as
/// the SDK's own member names are. Listed with the members that are maps or documents
/// (user keys, copied verbatim) and the API's few PascalCase members (left as given).
struct Camel {
    maps: &'static [&'static str],
    pascal: &'static [&'static str],
}

fn camel(signing: &str) -> Option<Camel> {
    Some(match signing {
        "ecs" => Camel {
            maps: &[
                "dockerLabels",
                "driverOpts",
                "hookDetails",
                "labels",
                "options",
            ],
            pascal: &[],
        },
        "ecr" => Camel {
            maps: &["annotations", "findingSeverityCounts", "tags"],
            pascal: &["Key", "Value"],
        },
        "logs" => Camel {
            maps: &[
                "attributes",
                "deliverySourceConfiguration",
                "dimensions",
                "enumerations",
                "extractedValues",
                "histogram",
                "keyAttributes",
                "logRecord",
                "tags",
            ],
            pascal: &[],
        },
        "states" => Camel {
            maps: &["assignedVariables", "variableReferences"],
            pascal: &[],
        },
        _ => return None,
    })
}

fn first(key: &str, upper: bool) -> String {
    let mut c = key.chars();
    match c.next() {
        Some(f) if upper => f.to_ascii_uppercase().to_string() + c.as_str(),
        Some(f) => f.to_ascii_lowercase().to_string() + c.as_str(),
        None => String::new(),
    }
}

/// Recases member names, leaving the values of map/document members untouched.
fn recase(v: &Value, shape: &Camel, upper: bool) -> Value {
    match v {
        Value::Object(m) => Value::Object(
            m.iter()
                .map(|(k, v)| {
                    let api = if upper { k.clone() } else { first(k, false) };
                    let api = if !upper && shape.pascal.contains(&k.as_str()) {
                        k.clone()
                    } else {
                        api
                    };
                    let key = if upper { first(k, true) } else { api.clone() };
                    if shape.maps.contains(&api.as_str()) {
                        (key, v.clone())
                    } else {
                        (key, recase(v, shape, upper))
                    }
                })
                .collect(),
        ),
        Value::Array(a) => Value::Array(a.iter().map(|x| recase(x, shape, upper)).collect()),
        v => v.clone(),
    }
}

/// The SDK's parameters in the API's member names.
pub fn to_api(signing: &str, params: &Value) -> Value {
    match camel(signing) {
        Some(c) => recase(params, &c, false),
        None => params.clone(),
    }
}

/// The API's answer in the SDK's member names.
pub fn from_api(signing: &str, answer: &Value) -> Value {
    match camel(signing) {
        Some(c) => recase(answer, &c, true),
        None => answer.clone(),
    }
}

/// How the SDK integration reaches a service: the protocol it prefers among those the
/// service answers (JSON first, then query).
pub enum Route {
    Json {
        target: &'static str,
        json10: bool,
    },
    Query {
        version: &'static str,
        ec2: bool,
    },
    /// rest-json with the operations' bindings from botocore ([`super::rest`]).
    Rest(&'static [super::rest::RestOp]),
    /// rest-xml, written and read by the service's model ([`super::rest_xml`]).
    RestXml(&'static cumulo_wire::rest_xml_model::RestXmlModel),
}

pub fn route(d: &Descriptor) -> Option<Route> {
    let json = d.protocols.iter().find_map(|w| match w {
        Wire::Json10 { target_prefix } => Some(Route::Json {
            target: target_prefix,
            json10: true,
        }),
        Wire::Json11 { target_prefix } => Some(Route::Json {
            target: target_prefix,
            json10: false,
        }),
        _ => None,
    });
    json.or_else(|| {
        d.protocols.iter().find_map(|w| match w {
            Wire::Query { version, .. } => Some(Route::Query {
                version,
                ec2: false,
            }),
            Wire::Ec2 { version, .. } => Some(Route::Query { version, ec2: true }),
            Wire::RestJson { .. } => super::rest::routes(d.name).map(Route::Rest),
            Wire::RestXml { .. } => super::rest_xml::model(d.name).map(Route::RestXml),
            _ => None,
        })
    })
}

/// The JSON parameters as query form pairs: lists as `Name.member.N` (EC2: `Name.N`), maps as
/// `Name.entry.N.key`/`.value`, nested structures as `Name.Member`.
pub fn to_form(params: &Value, ec2: bool) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Value::Object(m) = params {
        for (k, v) in m {
            flatten(k, v, ec2, &mut out);
        }
    }
    out
}

fn flatten(prefix: &str, v: &Value, ec2: bool, out: &mut Vec<(String, String)>) {
    match v {
        Value::Null => {}
        Value::String(s) => out.push((prefix.to_string(), s.clone())),
        Value::Array(items) => {
            if items.is_empty() && !ec2 {
                out.push((prefix.to_string(), String::new()));
            }
            for (i, item) in items.iter().enumerate() {
                let key = if ec2 {
                    format!("{prefix}.{}", i + 1)
                } else {
                    format!("{prefix}.member.{}", i + 1)
                };
                flatten(&key, item, ec2, out);
            }
        }
        Value::Object(m) => {
            for (k, v) in m {
                flatten(&format!("{prefix}.{k}"), v, ec2, out);
            }
        }
        v => out.push((prefix.to_string(), v.to_string())),
    }
}

fn encode(s: &str) -> String {
    let mut out = String::new();
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A query request's form body.
pub fn form_body(action: &str, version: &str, params: &Value, ec2: bool) -> String {
    let mut pairs = vec![
        ("Action".to_string(), action.to_string()),
        ("Version".to_string(), version.to_string()),
    ];
    pairs.extend(to_form(params, ec2));
    pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&")
}

/// An XML element as JSON: elements whose children are all `member`/`item` are lists (EC2
/// names list items `item`), `entry` children with `key`/`value` are maps, other elements with
/// children are structures, leaves are strings (the SDK's types are not known without a
/// model, so numbers and booleans stay text; an empty element with a plural name (`…s`,
/// `…Set`, `…List`) is an empty list, any other an empty string).
fn element_json(e: &Element, ec2: bool) -> Value {
    if e.children.is_empty() {
        let text = e.text.trim();
        // An empty list is an empty element; its plural name is the only hint without a model.
        if text.is_empty() && ["s", "Set", "List"].iter().any(|s| e.name.ends_with(s)) {
            return Value::Array(Vec::new());
        }
        return Value::String(text.to_string());
    }
    if e.children
        .iter()
        .all(|c| c.name == "member" || c.name == "item")
    {
        return Value::Array(e.children.iter().map(|c| element_json(c, ec2)).collect());
    }
    if e.children.iter().all(|c| c.name == "entry") {
        let mut m = Map::new();
        for c in &e.children {
            let key = c.child_text("key").unwrap_or_default().to_string();
            let value = c
                .child("value")
                .map(|v| element_json(v, ec2))
                .unwrap_or(Value::Null);
            m.insert(key, value);
        }
        return Value::Object(m);
    }
    let mut m = Map::new();
    for c in &e.children {
        if c.name == "requestId" || c.name == "ResponseMetadata" {
            continue;
        }
        let name = first(&c.name, true);
        let name = if ec2 { sdk_member(&name) } else { name };
        m.insert(name, element_json(c, ec2));
    }
    Value::Object(m)
}

/// EC2's wire member name as the SDK's (`VpcSet` → `Vpcs`); other services' are the same.
fn sdk_member(wire: &str) -> String {
    let table = super::ec2_names::EC2_OUTPUT;
    match table.binary_search_by(|(w, _)| (*w).cmp(wire)) {
        Ok(i) => table[i].1.to_string(),
        Err(_) => wire.to_string(),
    }
}

/// A query service's successful answer as the SDK's result: the `<Action>Result` element's
/// members (EC2 has no Result wrapper).
pub fn query_answer(body: &[u8], ec2: bool) -> Value {
    let Ok(root) = xml_in::parse(body) else {
        return Value::Object(Map::new());
    };
    let result = root
        .children
        .iter()
        .find(|c| c.name.ends_with("Result"))
        .unwrap_or(&root);
    match element_json(result, ec2) {
        Value::Object(m) => Value::Object(m),
        _ => Value::Object(Map::new()),
    }
}

/// A query service's error answer: (code, message).
pub fn query_error(body: &[u8]) -> (String, String) {
    fn find<'a>(e: &'a Element, name: &str) -> Option<&'a Element> {
        if e.name == name {
            return Some(e);
        }
        e.children.iter().find_map(|c| find(c, name))
    }
    let Ok(root) = xml_in::parse(body) else {
        return ("UnknownError".into(), String::new());
    };
    let error = find(&root, "Error").unwrap_or(&root);
    (
        error
            .child_text("Code")
            .unwrap_or("UnknownError")
            .to_string(),
        error.child_text("Message").unwrap_or_default().to_string(),
    )
}

/// A query request for an in-process call.
pub fn query_request(body: String) -> AwsRequest {
    let mut req = AwsRequest::new(http::Method::POST, "/");
    if let Ok(c) = "application/x-www-form-urlencoded; charset=utf-8".parse() {
        req.headers.insert("content-type", c);
    }
    req.body = body.into();
    req
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn camel_apis_recase_members_but_not_map_keys() {
        let p = json!({"Cluster": "c", "DockerLabels": {"MyKey": "v"}, "Tags": [{"Key": "k"}]});
        let api = to_api("ecs", &p);
        assert_eq!(
            api,
            json!({"cluster": "c", "dockerLabels": {"MyKey": "v"}, "tags": [{"key": "k"}]})
        );
        let back = from_api("logs", &json!({"logGroups": [{"tags": {"lowKey": "v"}}]}));
        assert_eq!(back, json!({"LogGroups": [{"Tags": {"lowKey": "v"}}]}));
        // ECR's tags are PascalCase Key/Value in the API itself.
        let ecr = to_api("ecr", &json!({"Tags": [{"Key": "k", "Value": "v"}]}));
        assert_eq!(ecr, json!({"tags": [{"Key": "k", "Value": "v"}]}));
        // PascalCase APIs are left as given (DynamoDB attribute names stay intact).
        let d = json!({"Item": {"id": {"S": "1"}}});
        assert_eq!(to_api("dynamodb", &d), d);
    }

    #[test]
    fn query_form_flattens_lists_maps_and_structures() {
        let p = json!({"Name": "t", "Attributes": {"a": "1"}, "Tags": [{"Key": "k", "Value": "v"}], "N": 3});
        let form = to_form(&p, false);
        assert!(form.contains(&("Name".into(), "t".into())));
        assert!(form.contains(&("Attributes.a".into(), "1".into())));
        assert!(form.contains(&("Tags.member.1.Key".into(), "k".into())));
        assert!(form.contains(&("N".into(), "3".into())));
        let ec2 = to_form(&json!({"VpcId": ["vpc-1", "vpc-2"]}), true);
        assert_eq!(
            ec2,
            vec![
                ("VpcId.1".into(), "vpc-1".into()),
                ("VpcId.2".into(), "vpc-2".into())
            ]
        );
        assert_eq!(
            form_body(
                "ListTopics",
                "2010-03-31",
                &json!({"NextToken": "a b"}),
                false
            ),
            "Action=ListTopics&Version=2010-03-31&NextToken=a%20b"
        );
    }

    #[test]
    fn query_answers_read_back_as_json() {
        let xml = br#"<ListTopicsResponse xmlns="x"><ListTopicsResult><Topics><member><TopicArn>arn:1</TopicArn></member></Topics></ListTopicsResult><ResponseMetadata><RequestId>r</RequestId></ResponseMetadata></ListTopicsResponse>"#;
        assert_eq!(
            query_answer(xml, false),
            json!({"Topics": [{"TopicArn": "arn:1"}]})
        );
        let empty = br#"<R><DescribeLoadBalancersResult><LoadBalancers/><NextMarker></NextMarker></DescribeLoadBalancersResult></R>"#;
        assert_eq!(
            query_answer(empty, false),
            json!({"LoadBalancers": [], "NextMarker": ""})
        );
        let ec2 = br#"<DescribeVpcsResponse><requestId>r</requestId><vpcSet><item><vpcId>vpc-1</vpcId></item></vpcSet></DescribeVpcsResponse>"#;
        assert_eq!(
            query_answer(ec2, true),
            json!({"Vpcs": [{"VpcId": "vpc-1"}]})
        );
        let err = br#"<ErrorResponse><Error><Type>Sender</Type><Code>NoSuchEntity</Code><Message>gone</Message></Error></ErrorResponse>"#;
        assert_eq!(query_error(err), ("NoSuchEntity".into(), "gone".into()));
    }
}
