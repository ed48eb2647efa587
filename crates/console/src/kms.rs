//! KMS through its typed operations: the region's keys (DescribeKey's KeyMetadata each) with
//! their aliases, and one key's metadata, policy, rotation and tags. No key material is shown.

use crate::api::Ctx;
use crate::web::{ApiError, ApiResult, json_ok};
use cumulo_services::kms::{KmsService, key_metadata};
use serde_json::{Value, json};
use std::sync::Arc;

fn service(ctx: &Ctx<'_>) -> Result<Arc<KmsService>, ApiError> {
    ctx.service::<KmsService>()
}

/// `(alias name, alias ARN, target key id)` of every alias of the region.
fn aliases(ctx: &Ctx<'_>, svc: &KmsService) -> Result<Vec<(String, String, String)>, ApiError> {
    let mut out = Vec::new();
    let mut marker: Option<String> = None;
    loop {
        let (page, next) = svc
            .list_aliases(&ctx.region, None, Some(100), marker.as_deref())
            .map_err(ApiError::from_aws)?;
        out.extend(page.into_iter().map(|a| (a.name, a.arn, a.target_key_id)));
        match next {
            Some(m) => marker = Some(m),
            None => return Ok(out),
        }
    }
}

/// `(key id, key ARN)` of every key of the region.
pub fn key_ids(ctx: &Ctx<'_>) -> Result<Vec<(String, String)>, ApiError> {
    let svc = service(ctx)?;
    let mut out = Vec::new();
    let mut marker: Option<String> = None;
    loop {
        let (page, next) = svc
            .list_keys(&ctx.region, Some(1000), marker.as_deref())
            .map_err(ApiError::from_aws)?;
        out.extend(page);
        match next {
            Some(m) => marker = Some(m),
            None => return Ok(out),
        }
    }
}

/// `GET kms/keys`: each key's metadata and aliases.
pub fn keys(ctx: &Ctx<'_>) -> ApiResult {
    let svc = service(ctx)?;
    let aliases = aliases(ctx, &svc)?;
    let mut list = Vec::new();
    for (id, _) in key_ids(ctx)? {
        let m = key_metadata(
            &svc.describe_key(&ctx.region, &id)
                .map_err(ApiError::from_aws)?,
        );
        let names: Vec<&str> = aliases
            .iter()
            .filter(|(_, _, k)| *k == id)
            .map(|(n, _, _)| n.as_str())
            .collect();
        list.push(json!({
            "key_id": id,
            "arn": m["Arn"],
            "description": m["Description"],
            "key_state": m["KeyState"],
            "key_manager": m["KeyManager"],
            "creation_date": m["CreationDate"],
            "aliases": names,
        }));
    }
    json_ok(&json!({ "keys": list }))
}

/// `GET kms/keys/{key id, ARN or alias}`: DescribeKey's KeyMetadata, the default key policy,
/// rotation status, aliases and tags.
pub fn key(ctx: &Ctx<'_>, id: &str) -> ApiResult {
    let svc = service(ctx)?;
    let view = svc
        .describe_key(&ctx.region, id)
        .map_err(ApiError::from_aws)?;
    let key_id = view.key_id().to_string();
    let policy = svc
        .get_key_policy(&ctx.region, &key_id, None)
        .map_err(ApiError::from_aws)?;
    let tags: Vec<Value> = svc
        .list_resource_tags(&ctx.region, &key_id)
        .map_err(ApiError::from_aws)?
        .into_iter()
        .map(|(k, v)| json!({"key": k, "value": v}))
        .collect();
    let aliases: Vec<String> = aliases(ctx, &svc)?
        .into_iter()
        .filter(|(_, _, k)| *k == key_id)
        .map(|(n, _, _)| n)
        .collect();
    json_ok(&json!({
        "key_id": key_id,
        "metadata": key_metadata(&view),
        "policy": serde_json::from_str::<Value>(&policy).unwrap_or(json!(policy)),
        "rotation_enabled": view.record.rotation_enabled,
        "aliases": aliases,
        "tags": tags,
    }))
}
