//! App Runner's operations. Each takes the request in the API's member names (JSON) and answers
//! the response likewise, so the wire adapter and the CloudFormation providers share them.
//! Every check runs before anything changes; every change is written to the store before the
//! answer.
//!
//! Error codes are App Runner's (`InvalidRequestException`, `ResourceNotFoundException`,
//! `InvalidStateException`); where AWS's exact message is not documented the wording is
//! cumulo's own (README: App Runner).

mod configs;
mod domains;
mod network;
mod services;
mod tags;

pub use configs::DEFAULT_AUTO_SCALING;

use super::AppRunnerService;
use super::state::Region;
use crate::json_body::{Body, null_member};
use cumulo_wire::AwsError;
use serde_json::{Map, Value, json};

pub fn invalid(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("InvalidRequestException", message)
}

pub fn not_found(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("ResourceNotFoundException", message)
}

pub fn invalid_state(message: impl Into<String>) -> AwsError {
    AwsError::bad_request("InvalidStateException", message)
}

fn internal(e: impl std::fmt::Display) -> AwsError {
    AwsError::internal(format!("cumulo: apprunner: store write failed: {e}"))
}

pub fn now() -> f64 {
    chrono::Utc::now().timestamp_millis() as f64 / 1000.0
}

/// 32 lowercase hex digits: the id part of App Runner's ARNs.
fn hex32() -> String {
    uuid::Uuid::new_v4().simple().to_string()
}

/// `n` random lowercase letters and digits (a service URL's host label).
fn alnum(n: usize) -> String {
    use rand::Rng;
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut rng = rand::rng();
    (0..n)
        .map(|_| CHARS[rng.random_range(0..CHARS.len())] as char)
        .collect()
}

/// The validation message names members as AWS's does: `serviceName`, not `ServiceName`
/// (each dotted part of a nested member).
fn member(name: &str) -> String {
    name.split('.')
        .map(|part| {
            let mut c = part.chars();
            match c.next() {
                Some(f) => f.to_lowercase().chain(c).collect(),
                None => String::new(),
            }
        })
        .collect::<Vec<String>>()
        .join(".")
}

fn missing(name: &str) -> AwsError {
    invalid(null_member(&member(name)))
}

/// The request object as typed members.
pub fn body(input: &Value) -> Result<Body<'_>, AwsError> {
    match input {
        Value::Object(m) => Ok(Body::new(m, missing)),
        _ => Err(AwsError::bad_request(
            "SerializationException",
            "Start of structure or map found where not expected.",
        )),
    }
}

/// A required object member.
fn required_object<'a>(b: &Body<'a>, name: &str) -> Result<Body<'a>, AwsError> {
    b.object(name)?.ok_or_else(|| missing(name))
}

/// AWS's request-validation message for a value outside a member's pattern.
fn check_pattern(name: &str, value: &str, pattern: &str) -> Result<(), AwsError> {
    // ASCII classes, as AWS's patterns mean them: Unicode `\w` repeated `{1,1000}` (role ARNs)
    // would exceed the regex size limit.
    let ok = regex::bytes::RegexBuilder::new(&format!("^(?:{pattern})$"))
        .unicode(false)
        .build()
        .map(|r| r.is_match(value.as_bytes()))
        .unwrap_or(false);
    if ok {
        Ok(())
    } else {
        Err(invalid(format!(
            "1 validation error detected: Value '{value}' at '{}' failed to satisfy constraint: Member must satisfy regular expression pattern: {pattern}",
            member(name)
        )))
    }
}

/// AWS's request-validation message for a number outside a member's range.
fn check_range(name: &str, value: i64, min: i64, max: i64) -> Result<(), AwsError> {
    if (min..=max).contains(&value) {
        Ok(())
    } else {
        Err(invalid(format!(
            "1 validation error detected: Value '{value}' at '{}' failed to satisfy constraint: Member must have value {}",
            member(name),
            if max == i64::MAX {
                format!("greater than or equal to {min}")
            } else {
                format!("between {min} and {max}")
            }
        )))
    }
}

/// One of the member's enum values.
fn check_enum(name: &str, value: &str, allowed: &[&str]) -> Result<(), AwsError> {
    if allowed.contains(&value) {
        Ok(())
    } else {
        Err(invalid(format!(
            "1 validation error detected: Value '{value}' at '{}' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
            member(name),
            allowed.join(", ")
        )))
    }
}

/// A page of `items` from `NextToken` (an offset) of `MaxResults` (1..=`limit`, default
/// `limit`).
fn page<T: Clone>(
    b: &Body<'_>,
    items: &[T],
    limit: i64,
) -> Result<(Vec<T>, Option<String>), AwsError> {
    let n = b.opt_i64("MaxResults")?.unwrap_or(limit);
    check_range("MaxResults", n, 1, limit)?;
    let offset: usize = match b.opt_str("NextToken")? {
        None => 0,
        Some(t) => t
            .parse()
            .map_err(|_| invalid(format!("Invalid NextToken: {t}")))?,
    };
    let out: Vec<T> = items
        .iter()
        .skip(offset)
        .take(n as usize)
        .cloned()
        .collect();
    let end = offset + out.len();
    Ok((out, (end < items.len()).then(|| end.to_string())))
}

/// Adds `NextToken` to a list answer when there is one.
fn with_token(mut v: Value, token: Option<String>) -> Value {
    if let Some(t) = token {
        v["NextToken"] = json!(t);
    }
    v
}

/// Tags as the API takes them; `aws:` keys are reserved.
fn tags_in(b: &Body<'_>) -> Result<Vec<(String, String)>, AwsError> {
    let tags = b.tag_list("Tags", "Key", "Value")?;
    if let Some((k, _)) = tags.iter().find(|(k, _)| k.starts_with("aws:")) {
        return Err(invalid(format!(
            "1 validation error detected: Value '{k}' at 'tags.member.key' failed to satisfy constraint: Member must satisfy regular expression pattern: ^(?!aws:).+"
        )));
    }
    Ok(tags)
}

fn tags_json(tags: &[(String, String)]) -> Value {
    Value::Array(
        tags.iter()
            .map(|(k, v)| json!({"Key": k, "Value": v}))
            .collect(),
    )
}

/// Sets `key` to `value` in a JSON object when `value` is `Some`.
fn put(m: &mut Map<String, Value>, key: &str, value: Option<Value>) {
    if let Some(v) = value {
        m.insert(key.into(), v);
    }
}

impl AppRunnerService {
    /// The region's records (with the built-in DefaultConfiguration, present in every region).
    fn region<'a>(&self, regions: &'a mut super::state::Regions, region: &str) -> &'a mut Region {
        let r = regions.entry(region.to_string()).or_default();
        configs::ensure_builtin(r, &self.arn(region, DEFAULT_AUTO_SCALING));
        r
    }
}

#[cfg(test)]
mod tests {
    use super::DEFAULT_AUTO_SCALING;
    use crate::apprunner::state::ConfigKind;
    use crate::providers::test_support::services;
    use serde_json::json;

    const REGION: &str = "us-east-1";

    #[test]
    fn a_configuration_reference_may_stop_at_the_name_or_the_revision() {
        let svc = services().apprunner;
        let arns: Vec<String> = (0..3)
            .map(|_| {
                let out = svc
                    .create_config(
                        REGION,
                        ConfigKind::AutoScaling,
                        &json!({"AutoScalingConfigurationName": "high-availability"}),
                    )
                    .unwrap();
                out["AutoScalingConfiguration"]["AutoScalingConfigurationArn"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        let mut regions = svc.lock();
        let r = svc.region(&mut regions, REGION);
        let base = svc.arn(REGION, "autoscalingconfiguration/high-availability");
        let resolve =
            |reference: &str| svc.resolve_config(r, REGION, ConfigKind::AutoScaling, reference);
        assert_eq!(resolve(&base).as_ref(), Some(&arns[2]));
        assert_eq!(resolve(&format!("{base}/2")).as_ref(), Some(&arns[1]));
        assert_eq!(resolve(&arns[0]).as_ref(), Some(&arns[0]));
        assert_eq!(resolve(&format!("{base}/4")), None);
        assert_eq!(resolve(&format!("{base}/x")), None);
        assert_eq!(resolve(&format!("{base}/1/{}", "0".repeat(32))), None);
        // Another kind's prefix, or another region's, names nothing.
        assert_eq!(
            svc.resolve_config(r, REGION, ConfigKind::Observability, &base),
            None
        );
        assert_eq!(resolve(&base.replace(REGION, "eu-west-1")), None);
        // The built-in configuration is there without having been made.
        let default = svc.arn(REGION, DEFAULT_AUTO_SCALING);
        assert_eq!(
            resolve(&svc.arn(REGION, "autoscalingconfiguration/DefaultConfiguration")),
            Some(default)
        );
    }

    #[test]
    fn a_refused_service_leaves_nothing_behind() {
        let svc = services().apprunner;
        let source = json!({"ImageRepository": {
            "ImageIdentifier": "public.ecr.aws/nginx/nginx:latest", "ImageRepositoryType": "ECR_PUBLIC"}});
        let bad = json!({"ServiceName": "web-1", "SourceConfiguration": source,
                         "InstanceConfiguration": {"Cpu": "4 vCPU", "Memory": "2 GB"}});
        let e = svc.create_service(REGION, &bad).unwrap_err();
        assert_eq!(e.code, "InvalidRequestException");
        assert_eq!(
            svc.list_services(REGION, &json!({})).unwrap()["ServiceSummaryList"],
            json!([])
        );
        let ok = json!({"ServiceName": "web-1", "SourceConfiguration": source,
                        "InstanceConfiguration": {"Cpu": "4 vCPU", "Memory": "12 GB"}});
        let s = &svc.create_service(REGION, &ok).unwrap()["Service"];
        assert_eq!(
            s["InstanceConfiguration"],
            json!({"Cpu": "4096", "Memory": "12288"})
        );
        assert_eq!(s["Status"], "OPERATION_IN_PROGRESS");
    }
}
