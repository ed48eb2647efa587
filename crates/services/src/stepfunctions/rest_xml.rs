//! `aws-sdk:` Tasks to the rest-xml services (Route 53, CloudFront, S3): the operation's
//! input is written as the HTTP request an SDK sends, from the same botocore-derived model
//! the service reads (Route 53's and CloudFront's own `model.json`; S3, whose adapter is
//! hand-written, from `s3_model.json`, written by `scripts/gen-rest-xml-model.py s3 2006-03-01
//! crates/services/src/stepfunctions/s3_model.json ALL`), handed to the service's adapter
//! in-process, and its answer read back typed by that model
//! ([`cumulo_wire::rest_xml_model`]'s client direction).
//!
//! Step Functions runs these calls through the AWS SDK for Java 2.x, and what that SDK does
//! to requests and answers is what a state sees: a CreateBucket without a location constraint
//! is given the execution's region (outside us-east-1); a string Body is sent as
//! `text/plain; charset=UTF-8` and any other JSON value as its JSON text; a HEAD answered 404
//! is `NoSuchKey` (HeadObject) or `NoSuchBucket` (HeadBucket); Route 53's ids lose their
//! path prefix (`/hostedzone/Z1` → `Z1`) in answers. The payload quota is the interpreter's
//! ([`super::asl::within_quota`]), as for every Task.

use cumulo_wire::rest_xml_model::{RequestError, RestXmlModel, error_code};
use cumulo_wire::{AwsRequest, AwsResponse};
use http::Method;
use serde_json::{Value, json};
use std::sync::LazyLock;

static S3_MODEL: LazyLock<Option<RestXmlModel>> =
    LazyLock::new(|| RestXmlModel::parse(include_str!("s3_model.json")).ok());

/// The model a rest-xml service's SDK requests are written from, by signing name.
pub fn model(signing: &str) -> Option<&'static RestXmlModel> {
    match signing {
        "route53" => crate::route53::model().ok(),
        "cloudfront" => crate::cloudfront::model().ok(),
        "s3" => S3_MODEL.as_ref(),
        _ => None,
    }
}

/// A service's error answer: HTTP status, code and message.
#[derive(Debug, PartialEq)]
pub struct ApiError {
    pub status: u16,
    pub code: String,
    pub message: String,
}

/// Why a call did not succeed.
#[derive(Debug)]
pub enum CallError {
    /// The parameters cannot be written as the operation's request.
    Request(RequestError),
    /// The service refused the call.
    Api(ApiError),
}

/// The request for `op` (the API's operation name) with the state's parameters.
pub fn request(
    model: &RestXmlModel,
    signing: &str,
    op: &str,
    params: &Value,
    region: &str,
) -> Result<AwsRequest, CallError> {
    let mut params = params.clone();
    if signing == "s3" {
        sdk_request_defaults(op, &mut params, region);
    }
    model.request(op, &params).map_err(CallError::Request)
}

/// What the Java SDK adds to an S3 request before it is sent.
fn sdk_request_defaults(op: &str, params: &mut Value, region: &str) {
    let Value::Object(p) = params else { return };
    match op {
        "CreateBucket" if region != "us-east-1" => {
            let config = p
                .entry("CreateBucketConfiguration")
                .or_insert_with(|| json!({}));
            if let Value::Object(c) = config {
                c.entry("LocationConstraint")
                    .or_insert_with(|| Value::from(region));
            }
        }
        "PutObject" if p.contains_key("Body") => {
            p.entry("ContentType")
                .or_insert_with(|| Value::from("text/plain; charset=UTF-8"));
        }
        _ => {}
    }
}

/// The service's answer to `req` as the state's result.
pub fn answer(
    model: &RestXmlModel,
    signing: &str,
    op: &str,
    method: &Method,
    resp: &AwsResponse,
) -> Result<Value, CallError> {
    if !resp.status.is_success() {
        let (mut code, mut message) = error_code(resp);
        // A HEAD answer has no body to name its error; the SDK names the 404s.
        if *method == Method::HEAD && resp.status.as_u16() == 404 && signing == "s3" {
            let (c, m) = match op {
                "HeadObject" => ("NoSuchKey", "The specified key does not exist."),
                _ => ("NoSuchBucket", "The specified bucket does not exist."),
            };
            (code, message) = (c.to_string(), m.to_string());
        }
        return Err(CallError::Api(ApiError {
            status: resp.status.as_u16(),
            code,
            message,
        }));
    }
    let mut out = model.answer(op, resp).map_err(|e| {
        CallError::Api(ApiError {
            status: e.status.as_u16(),
            code: e.code.clone(),
            message: e.message.clone(),
        })
    })?;
    if signing == "route53" {
        without_id_prefixes(op, &mut out);
    }
    Ok(out)
}

/// The Route 53 answers whose ids the Java SDK strips of their path prefix, and where those
/// ids are (`[]` walks a list's items).
const ROUTE53_IDS: &[(&str, &[&str])] = &[
    ("ChangeResourceRecordSets", &["ChangeInfo.Id"]),
    (
        "CreateHostedZone",
        &["ChangeInfo.Id", "HostedZone.Id", "DelegationSet.Id"],
    ),
    ("DeleteHostedZone", &["ChangeInfo.Id"]),
    ("GetChange", &["ChangeInfo.Id"]),
    ("GetHostedZone", &["HostedZone.Id", "DelegationSet.Id"]),
    ("ListHostedZones", &["HostedZones[].Id"]),
    (
        "ListResourceRecordSets",
        &[
            "ResourceRecordSets[].AliasTarget.HostedZoneId",
            "ResourceRecordSets[].HealthCheckId",
            "ResourceRecordSets[].SetIdentifier",
        ],
    ),
    ("CreateHealthCheck", &["HealthCheck.Id"]),
    ("GetHealthCheck", &["HealthCheck.Id"]),
    ("ListHealthChecks", &["HealthChecks[].Id"]),
    ("CreateReusableDelegationSet", &["DelegationSet.Id"]),
    ("GetReusableDelegationSet", &["DelegationSet.Id"]),
    ("ListReusableDelegationSets", &["DelegationSets[].Id"]),
];

fn without_id_prefixes(op: &str, out: &mut Value) {
    fn strip(v: &mut Value, path: &[&str]) {
        let Some((first, rest)) = path.split_first() else {
            // What follows the last `/` (one at the start only is kept).
            if let Value::String(s) = v
                && let Some(i) = s.rfind('/').filter(|i| *i > 0)
            {
                *s = s[i + 1..].to_string();
            }
            return;
        };
        match first.strip_suffix("[]") {
            Some(list) => {
                for item in v
                    .get_mut(list)
                    .and_then(Value::as_array_mut)
                    .into_iter()
                    .flatten()
                {
                    strip(item, rest);
                }
            }
            None => {
                if let Some(inner) = v.get_mut(*first) {
                    strip(inner, rest);
                }
            }
        }
    }
    for (_, paths) in ROUTE53_IDS.iter().filter(|(o, _)| *o == op) {
        for path in *paths {
            strip(out, &path.split('.').collect::<Vec<_>>());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::StatusCode;

    #[test]
    fn the_models_load_and_cover_the_emulated_operations() {
        for (service, ops) in [
            (
                "s3",
                &["GetObject", "PutObject", "ListObjectsV2", "CopyObject"][..],
            ),
            (
                "route53",
                &["CreateHostedZone", "ChangeResourceRecordSets"][..],
            ),
            ("cloudfront", &["GetDistribution", "CreateInvalidation"][..]),
        ] {
            let m = model(service).expect(service);
            for op in ops {
                assert!(m.has_operation(op), "{service} {op}");
            }
        }
    }

    #[test]
    fn s3_requests_get_what_the_java_sdk_adds() {
        let m = model("s3").unwrap();
        let req = request(
            m,
            "s3",
            "PutObject",
            &json!({"Bucket": "b", "Key": "k", "Body": {"a": 1}}),
            "us-east-1",
        )
        .unwrap();
        assert_eq!(req.raw_path, "/b/k");
        assert_eq!(
            req.header("content-type"),
            Some("text/plain; charset=UTF-8")
        );
        assert_eq!(req.body.as_ref(), br#"{"a":1}"#);
        let create = request(
            m,
            "s3",
            "CreateBucket",
            &json!({"Bucket": "b"}),
            "eu-west-1",
        )
        .unwrap();
        assert!(
            String::from_utf8_lossy(&create.body)
                .contains("<LocationConstraint>eu-west-1</LocationConstraint>")
        );
        let east = request(
            m,
            "s3",
            "CreateBucket",
            &json!({"Bucket": "b"}),
            "us-east-1",
        )
        .unwrap();
        assert!(east.body.is_empty());
    }

    #[test]
    fn head_404s_are_named_as_the_sdk_names_them() {
        let m = model("s3").unwrap();
        let resp = AwsResponse::empty(StatusCode::NOT_FOUND);
        let Err(CallError::Api(e)) = answer(m, "s3", "HeadObject", &Method::HEAD, &resp) else {
            panic!("not an API error");
        };
        assert_eq!((e.status, e.code.as_str()), (404, "NoSuchKey"));
    }

    #[test]
    fn route53_ids_lose_their_path_prefix() {
        let mut out = json!({"HostedZones": [{"Id": "/hostedzone/Z1"}, {"Id": "Z2"}]});
        without_id_prefixes("ListHostedZones", &mut out);
        assert_eq!(out, json!({"HostedZones": [{"Id": "Z1"}, {"Id": "Z2"}]}));
        let mut out =
            json!({"ChangeInfo": {"Id": "/change/C1"}, "HostedZone": {"Id": "/hostedzone/Z1"}});
        without_id_prefixes("CreateHostedZone", &mut out);
        assert_eq!(
            out,
            json!({"ChangeInfo": {"Id": "C1"}, "HostedZone": {"Id": "Z1"}})
        );
    }
}
