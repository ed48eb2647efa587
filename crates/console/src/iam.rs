//! IAM through its typed operations: the account's roles (trust policy, inline and attached
//! policies, tags) and managed policies (the default version's document, what uses it).

use crate::api::Ctx;
use crate::web::{ApiError, ApiResult, Query, json_ok};
use cumulo_services::iam::model::Role;
use cumulo_services::iam::{IamService, Scope};
use serde_json::{Value, json};
use std::sync::Arc;

fn service(ctx: &Ctx<'_>) -> Result<Arc<IamService>, ApiError> {
    ctx.service::<IamService>()
}

fn tags(list: &[(String, String)]) -> Vec<Value> {
    list.iter()
        .map(|(k, v)| json!({"key": k, "value": v}))
        .collect()
}

/// A policy document as given, parsed when it is JSON (a URL-encoded one is decoded first).
fn document(text: &str) -> Value {
    let decoded = percent_encoding::percent_decode_str(text).decode_utf8_lossy();
    serde_json::from_str(text)
        .or_else(|_| serde_json::from_str(&decoded))
        .unwrap_or_else(|_| json!(text))
}

/// `(name, arn)` of every role of the account.
pub fn role_names(ctx: &Ctx<'_>) -> Result<Vec<(String, String)>, ApiError> {
    Ok(service(ctx)?
        .list_roles(ctx.account_id(), None)
        .map_err(ApiError::from_aws)?
        .into_iter()
        .map(|r| (r.name, r.arn))
        .collect())
}

fn role_summary(r: &Role) -> Value {
    json!({
        "name": r.name,
        "id": r.id,
        "arn": r.arn,
        "path": r.path,
        "description": r.description,
        "create_date": crate::stacks::time(&r.create_date),
        "max_session_duration": r.max_session_duration,
    })
}

/// `GET iam/roles`: every role (ListRoles).
pub fn roles(ctx: &Ctx<'_>) -> ApiResult {
    let list: Vec<Value> = service(ctx)?
        .list_roles(ctx.account_id(), None)
        .map_err(ApiError::from_aws)?
        .iter()
        .map(role_summary)
        .collect();
    json_ok(&json!({ "roles": list }))
}

/// `GET iam/roles/{name}`: GetRole with the trust policy, inline policies (with documents),
/// attached managed policy ARNs, permissions boundary and tags.
pub fn role(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let r = service(ctx)?
        .get_role(ctx.account_id(), name)
        .map_err(ApiError::from_aws)?;
    let mut v = role_summary(&r);
    v["assume_role_policy"] = document(&r.assume_role_policy);
    v["permissions_boundary"] = json!(r.permissions_boundary);
    v["inline_policies"] = r
        .inline
        .iter()
        .map(|(n, d)| json!({"name": n, "document": document(d)}))
        .collect();
    v["attached_policies"] = json!(r.attached);
    v["tags"] = json!(tags(&r.tags));
    json_ok(&v)
}

/// `GET iam/policies?scope=Local|AWS|All`: managed policies (ListPolicies; by default the
/// account's own, as AWS managed ones are many).
pub fn policies(ctx: &Ctx<'_>) -> ApiResult {
    let scope = match Query::of(ctx.req).get("scope").unwrap_or("Local") {
        "Local" => Scope::Local,
        "AWS" => Scope::Aws,
        "All" => Scope::All,
        other => {
            return Err(ApiError::bad_request(format!(
                "Query parameter scope must be Local, AWS or All, got '{other}'"
            )));
        }
    };
    let list: Vec<Value> = service(ctx)?
        .list_policies(ctx.account_id(), scope, false, None)
        .map_err(ApiError::from_aws)?
        .into_iter()
        .map(|p| {
            json!({
                "name": p.name,
                "id": p.id,
                "arn": p.arn,
                "path": p.path,
                "default_version": p.default_version,
                "attachment_count": p.attachment_count,
                "update_date": crate::stacks::time(&p.update_date),
            })
        })
        .collect();
    json_ok(&json!({ "policies": list }))
}

/// `GET iam/policies/{arn}`: GetPolicy and the default version's document.
pub fn policy(ctx: &Ctx<'_>, arn: &str) -> ApiResult {
    let svc = service(ctx)?;
    let p = svc
        .get_policy(ctx.account_id(), arn)
        .map_err(ApiError::from_aws)?;
    let (version, _) = svc
        .get_policy_version(ctx.account_id(), arn, &p.default_version)
        .map_err(ApiError::from_aws)?;
    json_ok(&json!({
        "name": p.name,
        "id": p.id,
        "arn": p.arn,
        "path": p.path,
        "description": p.description,
        "default_version": p.default_version,
        "attachment_count": p.attachment_count,
        "create_date": crate::stacks::time(&p.create_date),
        "update_date": crate::stacks::time(&p.update_date),
        "document": document(&version.document),
        "tags": tags(&p.tags),
    }))
}

#[cfg(test)]
mod tests {
    use super::document;
    use serde_json::json;

    #[test]
    fn documents_are_parsed_as_given_or_url_decoded() {
        assert_eq!(
            document(r#"{"Version":"2012-10-17"}"#),
            json!({"Version": "2012-10-17"})
        );
        assert_eq!(
            document("%7B%22Version%22%3A%222012-10-17%22%7D"),
            json!({"Version": "2012-10-17"})
        );
        assert_eq!(document("not json"), json!("not json"));
    }
}
