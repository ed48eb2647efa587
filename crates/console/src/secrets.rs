//! SSM parameters and Secrets Manager secrets through their typed operations. What is secret
//! (a SecureString's value, every secret's value) is never in a listing or a description: it is
//! answered only to a separate `POST .../reveal`, which passes the CSRF check like every
//! state-changing call, so a page (or a cross-site request) shows it only on an explicit action.
//! Nothing here logs a value.

use crate::api::Ctx;
use crate::web::{ApiError, ApiResult, json_ok};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use cumulo_services::secretsmanager::SecretValueInput;
use cumulo_services::secretsmanager::SecretsManagerService;
use cumulo_services::secretsmanager::state::Secret;
use cumulo_services::ssm::{DescribeInput, ParameterType, SsmService};
use serde_json::{Value, json};
use std::sync::Arc;

/// What a hidden value shows instead.
const HIDDEN: &str = "****";

/// A revealed value's answer: never stored by a cache (a browser's or a proxy's).
fn revealed(value: &Value) -> ApiResult {
    let mut r = json_ok(value)?;
    r.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static("no-store"),
    );
    Ok(r)
}

fn ms(t: i64) -> Value {
    chrono::DateTime::from_timestamp_millis(t)
        .map_or(Value::Null, |t| json!(crate::stacks::time(&t)))
}

fn ssm(ctx: &Ctx<'_>) -> Result<Arc<SsmService>, ApiError> {
    ctx.service::<SsmService>()
}

fn secretsmanager(ctx: &Ctx<'_>) -> Result<Arc<SecretsManagerService>, ApiError> {
    ctx.service::<SecretsManagerService>()
}

/// `(name, arn)` of every parameter of the region (DescribeParameters, every page).
pub fn parameter_names(ctx: &Ctx<'_>) -> Result<Vec<(String, String)>, ApiError> {
    let svc = ssm(ctx)?;
    let mut out = Vec::new();
    let mut next_token = None;
    loop {
        let (page, next) = svc
            .describe_parameters(
                &ctx.region,
                DescribeInput {
                    next_token,
                    ..Default::default()
                },
            )
            .map_err(ApiError::from_aws)?;
        out.extend(page.into_iter().map(|(p, _)| {
            let arn = parameter_arn(ctx, &p.name);
            (p.name, arn)
        }));
        match next {
            Some(t) => next_token = Some(t),
            None => return Ok(out),
        }
    }
}

fn parameter_arn(ctx: &Ctx<'_>, name: &str) -> String {
    let sep = if name.starts_with('/') { "" } else { "/" };
    format!(
        "arn:aws:ssm:{}:{}:parameter{sep}{name}",
        ctx.region,
        ctx.account_id()
    )
}

fn seconds(t: f64) -> Value {
    ms((t * 1000.0).round() as i64)
}

/// `GET ssm/parameters`: every parameter's latest version's metadata (DescribeParameters), and
/// its value unless it is a SecureString.
pub fn parameters(ctx: &Ctx<'_>) -> ApiResult {
    let svc = ssm(ctx)?;
    let mut list = Vec::new();
    let mut next_token = None;
    loop {
        let (page, next) = svc
            .describe_parameters(
                &ctx.region,
                DescribeInput {
                    next_token,
                    ..Default::default()
                },
            )
            .map_err(ApiError::from_aws)?;
        for (p, v) in page {
            let secure = v.param_type == ParameterType::SecureString;
            list.push(json!({
                "name": p.name,
                "arn": parameter_arn(ctx, &p.name),
                "type": v.param_type.as_str(),
                "version": v.version,
                "tier": v.tier.as_str(),
                "data_type": v.data_type,
                "description": v.description,
                "last_modified": seconds(v.last_modified),
                "value": if secure { json!(HIDDEN) } else { json!(v.value) },
                "hidden": secure,
            }));
        }
        match next {
            Some(t) => next_token = Some(t),
            None => break,
        }
    }
    json_ok(&json!({ "parameters": list }))
}

/// `GET ssm/parameters/{name}`: one parameter (GetParameter without decryption for the value of
/// a plain one; a SecureString's stays hidden), its history's versions and labels, its tags.
pub fn parameter(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let svc = ssm(ctx)?;
    let (p, latest) = svc.describe_parameter(&ctx.region, name).ok_or_else(|| {
        ApiError::not_found("ParameterNotFound", format!("Parameter {name} not found"))
    })?;
    let secure = latest.param_type == ParameterType::SecureString;
    let value = if secure {
        json!(HIDDEN)
    } else {
        json!(
            svc.get_parameter(&ctx.region, name, false)
                .map_err(ApiError::from_aws)?
                .value
        )
    };
    let (history, _) = svc
        .get_parameter_history(&ctx.region, name, false, None, None)
        .map_err(ApiError::from_aws)?;
    let versions: Vec<Value> = history
        .iter()
        .map(|(v, _)| {
            json!({
                "version": v.version,
                "type": v.param_type.as_str(),
                "labels": v.labels,
                "last_modified": seconds(v.last_modified),
                "description": v.description,
            })
        })
        .collect();
    let tags = svc
        .list_tags(&ctx.region, "Parameter", &p.name)
        .map_err(ApiError::from_aws)?;
    json_ok(&json!({
        "name": p.name,
        "arn": parameter_arn(ctx, &p.name),
        "type": latest.param_type.as_str(),
        "version": latest.version,
        "tier": latest.tier.as_str(),
        "data_type": latest.data_type,
        "description": latest.description,
        "allowed_pattern": latest.allowed_pattern,
        "key_id": latest.key_id,
        "last_modified": seconds(latest.last_modified),
        "value": value,
        "hidden": secure,
        "versions": versions,
        "tags": tags,
    }))
}

/// `POST ssm/parameters/{name}/reveal`: the latest value, decrypted (GetParameter
/// WithDecryption).
pub fn reveal_parameter(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let v = ssm(ctx)?
        .get_parameter(&ctx.region, name, true)
        .map_err(|e| match e.code.as_ref() {
            "ParameterNotFound" => {
                ApiError::not_found("ParameterNotFound", format!("Parameter {name} not found"))
            }
            _ => ApiError::from_aws(e),
        })?;
    revealed(&json!({ "name": v.name, "version": v.version, "value": v.value }))
}

/// `(name, arn)` of every secret of the region (ListSecrets, every page).
pub fn secret_names(ctx: &Ctx<'_>) -> Result<Vec<(String, String)>, ApiError> {
    Ok(all_secrets(ctx)?
        .into_iter()
        .map(|s| (s.name, s.arn))
        .collect())
}

fn all_secrets(ctx: &Ctx<'_>) -> Result<Vec<Secret>, ApiError> {
    let svc = secretsmanager(ctx)?;
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let (page, next) = svc
            .list_secrets(
                &ctx.region,
                &[],
                None,
                token.as_deref(),
                None,
                Some("name"),
                true,
            )
            .map_err(ApiError::from_aws)?;
        out.extend(page);
        match next {
            Some(t) => token = Some(t),
            None => return Ok(out),
        }
    }
}

/// A secret's description, never its value (DescribeSecret's fields).
fn secret_json(s: &Secret) -> Value {
    json!({
        "name": s.name,
        "arn": s.arn,
        "description": s.description,
        "kms_key_id": s.kms_key_id,
        "created": ms(s.created_ms),
        "last_changed": ms(s.last_changed_ms),
        "last_accessed": s.last_accessed_ms.map_or(Value::Null, ms),
        "deleted": s.deletion_ms.map_or(Value::Null, ms),
        "tags": s.tags.iter().map(|(k, v)| json!({"key": k, "value": v})).collect::<Vec<_>>(),
        "versions": s.versions.iter().rev().map(|v| json!({
            "version_id": v.id,
            "stages": v.stages,
            "created": ms(v.created_ms),
        })).collect::<Vec<_>>(),
        "primary_region": s.primary_region,
        "replicas": s.replicas.iter().map(|r| json!({"region": r.region, "status": r.status})).collect::<Vec<_>>(),
    })
}

/// `GET secretsmanager/secrets`: every secret's description (scheduled deletions included).
pub fn secrets(ctx: &Ctx<'_>) -> ApiResult {
    let list: Vec<Value> = all_secrets(ctx)?.iter().map(secret_json).collect();
    json_ok(&json!({ "secrets": list }))
}

/// `GET secretsmanager/secrets/{name or ARN}`: DescribeSecret (with the resource policy);
/// the value is not part of it.
pub fn secret(ctx: &Ctx<'_>, id: &str) -> ApiResult {
    let svc = secretsmanager(ctx)?;
    let s = svc
        .describe_secret(&ctx.region, id)
        .map_err(ApiError::from_aws)?;
    let mut v = secret_json(&s);
    v["policy"] = json!(s.policy);
    json_ok(&v)
}

/// `POST secretsmanager/secrets/{name or ARN}/reveal?version_id=&stage=`: GetSecretValue (which
/// records the access, as it does for any caller). A binary secret answers base64.
pub fn reveal_secret(ctx: &Ctx<'_>, id: &str) -> ApiResult {
    let q = crate::web::Query::of(ctx.req);
    let v = secretsmanager(ctx)?
        .get_secret_value(
            &ctx.region,
            id,
            q.get("version_id").filter(|v| !v.is_empty()),
            q.get("stage").filter(|v| !v.is_empty()),
        )
        .map_err(ApiError::from_aws)?;
    let (string, binary) = match &v.value {
        SecretValueInput::String(s) => (Some(s.clone()), None),
        SecretValueInput::Binary(b) => (None, Some(BASE64.encode(b))),
    };
    revealed(&json!({
        "name": v.name,
        "arn": v.arn,
        "version_id": v.version_id,
        "stages": v.stages,
        "secret_string": string,
        "secret_binary": binary,
    }))
}
