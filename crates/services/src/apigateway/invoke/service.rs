//! AWS (non-proxy) integrations of services other than Lambda's function invocation: the
//! integration URI `arn:aws:apigateway:<region>:<service>:action/<Action>` or
//! `...:<service>:path/<path>` (`<bucket>.s3:path/<key>` for a bucket's host) names a service,
//! and cumulo hands that service the integration request in-process, as AWS's front end would
//! send it, so the service's own validation, errors and answer reach the integration responses.
//!
//! How the request is shaped, as AWS does it:
//! - `action/` to a JSON-protocol service (DynamoDB, Step Functions, EventBridge, ...): `POST /`
//!   with `X-Amz-Target: <prefix>.<Action>` and the service's JSON content type; the mapped
//!   body is the request.
//! - `action/` to a query-protocol service (SNS, SQS, ...): `Action=<Action>&Version=...` and
//!   the mapped query string, with the mapped body as a form.
//! - `path/`: the integration's HTTP method on `/<path>` (SQS's `path/<account>/<queue>`, S3's
//!   `path/<bucket>/<key>`), with the mapped body.
//! - A mapped (or `$context.requestOverride`) `X-Amz-Target` header sends JSON whatever the form.
//! - Query answers are XML; unless the mapping sets an `Accept` naming XML, the integration
//!   gets their JSON form ([`super::query_json`], read by the service's model), as AWS's
//!   services answer API Gateway.
//! - A JSON-only service named with `action/` and no body but query parameters (SSM's
//!   `GetParameter` with `integration.request.querystring.Name`) reaches AWS through the legacy
//!   query protocol; cumulo sends the parameters as JSON strings and wraps the answer as that
//!   protocol's JSON form (`{"GetParameterResponse": {"GetParameterResult": ...}}`, with
//!   `null` for the members the answer leaves out, by SSM's model).
//!
//! No IAM: the integration's `credentials` role is stored, not assumed, and nothing checks it.

use super::parameters::Mapped;
use super::query_json;
use crate::apigateway::ApiGatewayService;
use crate::catalog::{self, Wire};
use ::http::{HeaderMap, HeaderName, HeaderValue, Method};
use bytes::Bytes;
use cumulo_wire::AwsRequest;
use serde_json::{Map, Value, json};

/// Where an AWS integration URI points.
#[derive(Debug, PartialEq)]
struct Target<'a> {
    region: &'a str,
    service: &'a str,
    /// The host label before the service (`<bucket>.s3`).
    subdomain: Option<&'a str>,
    form: Form<'a>,
}

#[derive(Debug, PartialEq)]
enum Form<'a> {
    Action(&'a str),
    Path(&'a str),
}

fn target(uri: &str) -> Option<Target<'_>> {
    let mut parts = uri.splitn(6, ':');
    let (_arn, _partition, apigateway) = (parts.next()?, parts.next()?, parts.next()?);
    if apigateway != "apigateway" {
        return None;
    }
    let region = parts.next()?;
    let host = parts.next()?;
    let rest = parts.next()?;
    let (subdomain, service) = match host.rsplit_once('.') {
        Some((sub, s)) => (Some(sub), s),
        None => (None, host),
    };
    let form = if let Some(a) = rest.strip_prefix("action/") {
        Form::Action(a)
    } else {
        Form::Path(rest.strip_prefix("path/")?)
    };
    Some(Target {
        region,
        service,
        subdomain,
        form,
    })
}

/// The integration request, after templates and request parameters.
pub(crate) struct Outgoing<'a> {
    pub method: Method,
    pub mapped: &'a Mapped,
    pub body: Bytes,
    /// The Content-Type of the method request, which the integration request keeps unless
    /// a mapping sets one.
    pub content_type: &'a str,
    /// `host:port` cumulo answers at (services build URLs from it).
    pub host: String,
}

/// What the service answered.
pub(crate) struct Reply {
    pub status: u16,
    pub headers: HeaderMap,
    pub body: Bytes,
}

/// How the request goes to the service.
enum Shape<'a> {
    Json {
        target: String,
        content_type: &'a str,
        /// Wrap the answer as the legacy query protocol's JSON form of this action.
        legacy: Option<&'a str>,
    },
    Query {
        action: &'a str,
        version: &'a str,
    },
    Path(String),
}

/// Calls the service `uri` names with `out`; `Err` is the message of the 500 cumulo answers
/// for a URI it cannot reach (malformed, or a service it does not emulate).
pub(crate) async fn call(
    svc: &ApiGatewayService,
    uri: &str,
    out: Outgoing<'_>,
) -> Result<Reply, String> {
    let t = target(uri).ok_or_else(|| format!("cumulo: {uri} is not an AWS integration URI"))?;
    let not_emulated = || {
        format!(
            "cumulo: AWS integrations reach the services cumulo emulates; {} is not one of them ({uri})",
            t.service
        )
    };
    let descriptor = catalog::descriptor(t.service).ok_or_else(not_emulated)?;
    let catalog = svc.catalog().ok_or_else(|| {
        format!(
            "cumulo: no service catalog to reach {} in ({uri})",
            t.service
        )
    })?;
    let service = catalog.service(t.service).ok_or_else(not_emulated)?;
    let json = descriptor.protocols.iter().find_map(|w| match w {
        Wire::Json10 { target_prefix } => Some((*target_prefix, "application/x-amz-json-1.0")),
        Wire::Json11 { target_prefix } => Some((*target_prefix, "application/x-amz-json-1.1")),
        _ => None,
    });
    let query = descriptor.protocols.iter().find_map(|w| match w {
        Wire::Query { version, .. } | Wire::Ec2 { version, .. } => Some(*version),
        _ => None,
    });
    let mut body = out.body;
    let shape = match t.form {
        Form::Path(p) => match t.subdomain {
            Some(sub) => Shape::Path(format!("/{sub}/{p}")),
            None => Shape::Path(format!("/{p}")),
        },
        Form::Action(action) => match (json, query) {
            (Some((prefix, ct)), q)
                if q.is_none() || out.mapped.header("x-amz-target").is_some() =>
            {
                // AWS maps an empty method request body to `{}`: still no parameters.
                let no_body = matches!(std::str::from_utf8(&body).map(str::trim), Ok("" | "{}"));
                let legacy = q.is_none() && no_body && !out.mapped.query.is_empty();
                if legacy {
                    let params: Map<String, Value> = out
                        .mapped
                        .query
                        .iter()
                        .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                        .collect();
                    body = Bytes::from(Value::Object(params).to_string());
                }
                Shape::Json {
                    target: format!("{prefix}.{action}"),
                    content_type: ct,
                    legacy: legacy.then_some(action),
                }
            }
            (_, Some(version)) => Shape::Query { action, version },
            _ => {
                return Err(format!(
                    "cumulo: {} is a REST API: its AWS integrations name a path/, not an action/ ({uri})",
                    t.service
                ));
            }
        },
    };
    let mut query_string = out.mapped.query_string();
    let (path, content_type) = match &shape {
        Shape::Json { content_type, .. } => {
            if body.iter().all(u8::is_ascii_whitespace) {
                body = Bytes::from_static(b"{}");
            }
            ("/".to_string(), *content_type)
        }
        Shape::Query { action, version } => {
            let lead = format!("Action={action}&Version={version}");
            query_string = if query_string.is_empty() {
                lead
            } else {
                format!("{lead}&{query_string}")
            };
            ("/".to_string(), "application/x-www-form-urlencoded")
        }
        Shape::Path(p) => (out.mapped.substitute_path(p), out.content_type),
    };
    let mut req = AwsRequest::new(
        out.method,
        &if query_string.is_empty() {
            path
        } else {
            format!("{path}?{query_string}")
        },
    );
    req.region = t.region.to_string();
    req.account_id = svc.account_id.clone();
    req.host = out.host;
    set(&mut req.headers, "content-type", content_type);
    set(&mut req.headers, "accept", "application/json");
    if let Shape::Json { target, .. } = &shape {
        set(&mut req.headers, "x-amz-target", target);
    }
    for (k, v) in &out.mapped.headers {
        set(&mut req.headers, k, v);
    }
    req.body = body;
    let request_id = req.request_id.clone();
    let wants_xml = req.header("accept").is_some_and(|a| a.contains("xml"));
    let resp = service.handle(req).await;
    let mut reply = Reply {
        status: resp.status.as_u16(),
        headers: resp.headers,
        body: resp.body,
    };
    match shape {
        // A query service answers XML whatever the form (SQS's `path/` too).
        Shape::Query { .. } | Shape::Path(_) if query.is_some() && !wants_xml => {
            let model = query.and_then(|v| crate::query_models::model(descriptor.name, v));
            if let Some(v) = model.and_then(|m| query_json::convert(m, &reply.body)) {
                reply.body = Bytes::from(v.to_string());
                set(&mut reply.headers, "content-type", "application/json");
            }
        }
        Shape::Json {
            legacy: Some(action),
            ..
        } if (200..300).contains(&reply.status) => {
            let mut result: Value = serde_json::from_slice(&reply.body).unwrap_or(json!({}));
            if let Some(model) = crate::query_models::model(descriptor.name, "") {
                result = model.with_nulls(action, result);
            }
            let wrapped = json!({ format!("{action}Response"): {
                format!("{action}Result"): result,
                "ResponseMetadata": {"RequestId": request_id},
            }});
            reply.body = Bytes::from(wrapped.to_string());
        }
        _ => {}
    }
    Ok(reply)
}

fn set(headers: &mut HeaderMap, name: &str, value: &str) {
    if let (Ok(k), Ok(v)) = (name.parse::<HeaderName>(), HeaderValue::from_str(value)) {
        headers.insert(k, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris() {
        assert_eq!(
            target("arn:aws:apigateway:us-east-1:states:action/StartSyncExecution"),
            Some(Target {
                region: "us-east-1",
                service: "states",
                subdomain: None,
                form: Form::Action("StartSyncExecution"),
            })
        );
        assert_eq!(
            target("arn:aws:apigateway:eu-west-1:sqs:path/000000000000/q"),
            Some(Target {
                region: "eu-west-1",
                service: "sqs",
                subdomain: None,
                form: Form::Path("000000000000/q"),
            })
        );
        assert_eq!(
            target("arn:aws:apigateway:us-east-1:my-bucket.s3:path/a/{key}"),
            Some(Target {
                region: "us-east-1",
                service: "s3",
                subdomain: Some("my-bucket"),
                form: Form::Path("a/{key}"),
            })
        );
        assert_eq!(target("arn:aws:apigateway:us-east-1:sqs:other/x"), None);
        assert_eq!(target("https://example.com/x"), None);
    }
}
