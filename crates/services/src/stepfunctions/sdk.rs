//! The generic `arn:aws:states:::aws-sdk:<service>:<action>` path: the SDK integration's
//! service name is mapped to the catalog's signing name, the JSON parameters are written in
//! the service's own wire shape (JSON 1.0/1.1, or the query/EC2 form written by the service's
//! model), the service answers in-process through [`crate::catalog::Catalog::service`], and its
//! answer is read back as JSON in the SDK's PascalCase (a query answer by the model, in the
//! SDK's types and member names). The rest-json services (Lambda, EFS, API Gateway v1 and v2,
//! Scheduler) are reached through their HTTP bindings ([`super::rest`]) and the rest-xml ones
//! (Route 53, CloudFront, S3) through their models ([`super::rest_xml`]).

use crate::catalog::{Descriptor, Wire};
use crate::s3::xml_in::{self, Element};
use cumulo_wire::query_model::{AnswerForm, QueryModel};
use cumulo_wire::{AwsError, AwsRequest};
use serde_json::Value;

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
        "apigateway" | "apigatewayv2" => "apigateway",
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
        "scheduler" => "scheduler",
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
    /// query or EC2, with requests and answers by the service's model
    /// ([`crate::query_models`]).
    Query {
        version: &'static str,
    },
    /// rest-json with the operations' bindings from botocore ([`super::rest`]).
    Rest(&'static [super::rest::RestOp]),
    /// rest-xml, written and read by the service's model ([`super::rest_xml`]).
    RestXml(&'static cumulo_wire::rest_xml_model::RestXmlModel),
}

/// How `sdk` (the integration's service name, which picks a rest-json client's routes where
/// two clients share a service: API Gateway's v1 and v2) reaches the service `d`.
pub fn route(d: &Descriptor, sdk: &str) -> Option<Route> {
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
            Wire::Query { version, .. } | Wire::Ec2 { version, .. } => {
                Some(Route::Query { version })
            }
            Wire::RestJson { .. } => super::rest::routes(sdk).map(Route::Rest),
            Wire::RestXml { .. } => super::rest_xml::model(d.name).map(Route::RestXml),
            _ => None,
        })
    })
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

/// A query (or EC2) request's form body: the parameters, in the SDK's member names, written
/// by the operation's input shape. An operation the model lacks (one the emulation does not
/// implement) is sent without parameters, so the service answers it with its own 501.
pub fn form_body(
    model: &QueryModel,
    action: &str,
    version: &str,
    params: &Value,
) -> Result<String, AwsError> {
    let mut pairs = vec![
        ("Action".to_string(), action.to_string()),
        ("Version".to_string(), version.to_string()),
    ];
    if model.has_operation(action) {
        pairs.extend(model.form(action, params)?);
    }
    Ok(pairs
        .iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect::<Vec<_>>()
        .join("&"))
}

/// A query service's successful answer as the SDK's result: the output shape's members in
/// their types (timestamps as ISO-8601 text, as the integration gives them).
pub fn query_answer(model: &QueryModel, action: &str, body: &[u8]) -> Result<Value, AwsError> {
    Ok(model.read_answer(action, body, AnswerForm::Sdk)?.result)
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
    fn query_requests_and_answers_go_by_the_model() {
        let ec2 = crate::query_models::model("ec2", "2016-11-15").unwrap();
        let body = form_body(
            ec2,
            "DescribeVpcs",
            "2016-11-15",
            &json!({"VpcIds": ["vpc-1"], "Filters": [{"Name": "is-default", "Values": ["true"]}]}),
        )
        .unwrap();
        assert_eq!(
            body,
            "Action=DescribeVpcs&Version=2016-11-15&VpcId.1=vpc-1&Filter.1.Name=is-default&Filter.1.Value.1=true"
        );
        // An operation the emulation does not implement goes without parameters (it answers 501).
        assert_eq!(
            form_body(
                ec2,
                "DescribeFleets",
                "2016-11-15",
                &json!({"FleetIds": ["f"]})
            )
            .unwrap(),
            "Action=DescribeFleets&Version=2016-11-15"
        );
        let xml = br#"<DescribeVpcsResponse><requestId>r</requestId><vpcSet><item><vpcId>vpc-1</vpcId><isDefault>false</isDefault></item></vpcSet></DescribeVpcsResponse>"#;
        assert_eq!(
            query_answer(ec2, "DescribeVpcs", xml).unwrap(),
            json!({"Vpcs": [{"VpcId": "vpc-1", "IsDefault": false}]})
        );
        let err = br#"<ErrorResponse><Error><Type>Sender</Type><Code>NoSuchEntity</Code><Message>gone</Message></Error></ErrorResponse>"#;
        assert_eq!(query_error(err), ("NoSuchEntity".into(), "gone".into()));
    }
}
