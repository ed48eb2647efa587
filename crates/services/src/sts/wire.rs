//! The query-protocol adapter: decodes form parameters into typed calls, encodes XML responses.

use super::{AssumeRoleInput, IssuedCredentials, StsService};
use cumulo_wire::query::QueryParams;
use cumulo_wire::xml::XmlWriter;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};

pub(crate) const NS: &str = "https://sts.amazonaws.com/doc/2011-06-15/";
const PROTOCOL: Protocol = Protocol::Query(NS);

pub fn handle(svc: &StsService, req: &AwsRequest) -> AwsResponse {
    let params = query_params(req);
    let action = params.get("Action").unwrap_or("").to_string();
    match dispatch(svc, req, &params, &action) {
        Ok(body) => AwsResponse::xml(body).with_header("x-amzn-requestid", &req.request_id),
        Err(e) => e.into_response(PROTOCOL, &req.request_id),
    }
}

/// The URL query plus, under a form content type (or none), the form body: the query protocol
/// reads nothing else, so a body sent as JSON or text carries no Action.
fn query_params(req: &AwsRequest) -> QueryParams {
    let form = req
        .header("content-type")
        .is_none_or(|ct| ct.starts_with("application/x-www-form-urlencoded"));
    if form {
        QueryParams::from_request(req)
    } else {
        QueryParams(req.query.clone())
    }
}

fn dispatch(
    svc: &StsService,
    req: &AwsRequest,
    p: &QueryParams,
    action: &str,
) -> Result<String, AwsError> {
    let access_key = req.access_key.as_deref();
    match action {
        "GetCallerIdentity" => {
            let id = svc.get_caller_identity(access_key);
            Ok(respond(action, &req.request_id, |w| {
                w.elem("Arn", &id.arn)
                    .elem("UserId", &id.user_id)
                    .elem("Account", &id.account);
            }))
        }
        "AssumeRole" => {
            let input = AssumeRoleInput {
                role_arn: required(p, "RoleArn", "roleArn")?,
                role_session_name: required(p, "RoleSessionName", "roleSessionName")?,
                duration_seconds: int_param(p, "DurationSeconds", "durationSeconds")?,
                policy: p.get("Policy").map(str::to_string),
                source_identity: p.get("SourceIdentity").map(str::to_string),
            };
            let issued = svc.assume_role(access_key, input)?;
            Ok(respond(action, &req.request_id, |w| {
                write_credentials(w, &issued);
                if let Some(u) = &issued.assumed_role_user {
                    w.open("AssumedRoleUser", None)
                        .elem("AssumedRoleId", &u.assumed_role_id)
                        .elem("Arn", &u.arn)
                        .close();
                }
                if let Some(policy) = p.get("Policy") {
                    // AWS reports the packed session policy as a percentage of the allowed size.
                    let percent = policy.len() * 100 / 2048;
                    w.elem("PackedPolicySize", &percent.to_string());
                }
                w.opt("SourceIdentity", p.get("SourceIdentity"));
            }))
        }
        "GetSessionToken" => {
            let duration = int_param(p, "DurationSeconds", "durationSeconds")?;
            let issued = svc.get_session_token(access_key, duration)?;
            Ok(respond(action, &req.request_id, |w| {
                write_credentials(w, &issued)
            }))
        }
        "GetFederationToken" => {
            let issued = svc.get_federation_token(
                access_key,
                &required(p, "Name", "name")?,
                int_param(p, "DurationSeconds", "durationSeconds")?,
            )?;
            Ok(respond(action, &req.request_id, |w| {
                write_credentials(w, &issued);
                if let Some(u) = &issued.federated_user {
                    w.open("FederatedUser", None)
                        .elem("FederatedUserId", &u.federated_user_id)
                        .elem("Arn", &u.arn)
                        .close();
                }
                if let Some(policy) = p.get("Policy") {
                    let percent = policy.len() * 100 / 2048;
                    w.elem("PackedPolicySize", &percent.to_string());
                }
            }))
        }
        "GetAccessKeyInfo" => {
            let account = svc.get_access_key_info(&required(p, "AccessKeyId", "accessKeyId")?)?;
            Ok(respond(action, &req.request_id, |w| {
                w.elem("Account", &account);
            }))
        }
        "" => Err(AwsError::bad_request(
            "MissingAction",
            "Missing Action parameter",
        )),
        other if KNOWN_ACTIONS.contains(&other) => Err(AwsError::not_implemented("sts", other)),
        other => Err(AwsError::bad_request(
            "InvalidAction",
            format!("Could not find operation {other} for version 2011-06-15"),
        )),
    }
}

/// STS operations that exist in AWS but are not emulated (they answer 501 naming themselves).
const KNOWN_ACTIONS: &[&str] = &[
    "AssumeRoleWithSAML",
    "AssumeRoleWithWebIdentity",
    "AssumeRoot",
    "DecodeAuthorizationMessage",
    "GetDelegatedAccessToken",
    "GetWebIdentityToken",
];

fn required(p: &QueryParams, name: &str, field: &str) -> Result<String, AwsError> {
    p.get(name).map(str::to_string).ok_or_else(|| {
        AwsError::validation(format!(
            "1 validation error detected: Value null at '{field}' failed to satisfy constraint: Member must not be null"
        ))
    })
}

fn int_param(p: &QueryParams, name: &str, field: &str) -> Result<Option<i64>, AwsError> {
    p.get(name)
        .map(|v| {
            v.trim().parse::<i64>().map_err(|_| {
                AwsError::validation(format!(
                    "1 validation error detected: Value '{v}' at '{field}' failed to satisfy constraint: Member must be a number"
                ))
            })
        })
        .transpose()
}

fn write_credentials(w: &mut XmlWriter, issued: &IssuedCredentials) {
    let c = &issued.credentials;
    w.open("Credentials", None)
        .elem("AccessKeyId", &c.access_key_id)
        .elem("SecretAccessKey", &c.secret_access_key)
        .elem("SessionToken", &c.session_token)
        .elem(
            "Expiration",
            &c.expiration.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
        )
        .close();
}

/// `<ActionResponse><ActionResult>...</ActionResult><ResponseMetadata>` as every query API answers.
fn respond(action: &str, request_id: &str, body: impl FnOnce(&mut XmlWriter)) -> String {
    let mut w = XmlWriter::new();
    w.raw(&format!(
        "<{action}Response xmlns=\"{NS}\"><{action}Result>"
    ));
    body(&mut w);
    w.raw(&format!("</{action}Result>"));
    w.open("ResponseMetadata", None)
        .elem("RequestId", request_id)
        .close();
    w.raw(&format!("</{action}Response>"));
    w.finish()
}
