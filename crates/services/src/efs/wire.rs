//! The REST-JSON adapter: routes `/2015-02-01/...` to the typed operations and answers in the
//! shapes and status codes of botocore's EFS model.

use super::EfsService;
use super::ops::{bad_request, user_tags};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use http::{Method, StatusCode};
use serde_json::{Map, Value, json};

pub(super) fn handle(svc: &EfsService, req: &AwsRequest) -> AwsResponse {
    match route(svc, req) {
        Ok(r) => r,
        Err(e) => e.into_response(Protocol::RestJson, &req.request_id),
    }
}

fn answer(status: u16, v: Value) -> AwsResponse {
    AwsResponse::new(
        StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
        "application/json",
        v.to_string(),
    )
}

fn no_content() -> AwsResponse {
    AwsResponse::empty(StatusCode::NO_CONTENT)
}

fn body(req: &AwsRequest) -> Result<Value, AwsError> {
    if req.body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Map::new()));
    }
    match serde_json::from_slice::<Value>(&req.body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        _ => Err(bad_request("The request body is not a JSON object.")),
    }
}

/// The query string's members as an input object (`tagKeys` repeated becomes a list).
fn query(req: &AwsRequest) -> Value {
    let mut m = Map::new();
    for (k, v) in &req.query {
        m.insert(k.clone(), Value::String(v.clone()));
    }
    Value::Object(m)
}

/// The path's segments after the API version, each percent-decoded (an ARN label arrives
/// with its `/` encoded).
fn segments(req: &AwsRequest) -> Vec<String> {
    req.raw_path
        .split('/')
        .filter(|s| !s.is_empty())
        .skip(1)
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect()
}

fn route(svc: &EfsService, req: &AwsRequest) -> Result<AwsResponse, AwsError> {
    let region = req.region.as_str();
    let segs = segments(req);
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    let m = &req.method;
    let unimplemented = |op: &str| Err(AwsError::not_implemented("EFS", op));
    match (m, s.as_slice()) {
        (&Method::POST, ["file-systems"]) => Ok(answer(
            201,
            svc.create_file_system(region, &body(req)?, Vec::new())?,
        )),
        (&Method::GET, ["file-systems"]) => {
            Ok(answer(200, svc.describe_file_systems(region, &query(req))?))
        }
        (&Method::GET, ["file-systems", "replication-configurations"]) => {
            unimplemented("DescribeReplicationConfigurations")
        }
        (&Method::PUT, ["file-systems", id]) => Ok(answer(
            202,
            svc.update_file_system(region, id, &body(req)?)?,
        )),
        (&Method::DELETE, ["file-systems", id]) => {
            svc.delete_file_system(region, id)?;
            Ok(no_content())
        }
        (&Method::PUT, ["file-systems", id, "backup-policy"]) => {
            Ok(answer(200, svc.put_backup_policy(region, id, &body(req)?)?))
        }
        (&Method::GET, ["file-systems", id, "backup-policy"]) => {
            Ok(answer(200, svc.describe_backup_policy(region, id)?))
        }
        (&Method::PUT, ["file-systems", id, "protection"]) => Ok(answer(
            200,
            svc.update_file_system_protection(region, id, &body(req)?)?,
        )),
        (&Method::PUT, ["file-systems", id, "policy"]) => Ok(answer(
            200,
            svc.put_file_system_policy(region, id, &body(req)?)?,
        )),
        (&Method::GET, ["file-systems", id, "policy"]) => {
            Ok(answer(200, svc.describe_file_system_policy(region, id)?))
        }
        (&Method::DELETE, ["file-systems", id, "policy"]) => {
            svc.delete_file_system_policy(region, id)?;
            Ok(answer(200, json!({})))
        }
        (&Method::PUT, ["file-systems", id, "lifecycle-configuration"]) => Ok(answer(
            200,
            svc.put_lifecycle_configuration(region, id, &body(req)?)?,
        )),
        (&Method::GET, ["file-systems", id, "lifecycle-configuration"]) => Ok(answer(
            200,
            svc.describe_lifecycle_configuration(region, id)?,
        )),
        (&Method::POST, ["file-systems", _, "replication-configuration"]) => {
            unimplemented("CreateReplicationConfiguration")
        }
        (&Method::DELETE, ["file-systems", _, "replication-configuration"]) => {
            unimplemented("DeleteReplicationConfiguration")
        }
        (&Method::POST, ["mount-targets"]) => {
            Ok(answer(200, svc.create_mount_target(region, &body(req)?)?))
        }
        (&Method::GET, ["mount-targets"]) => Ok(answer(
            200,
            svc.describe_mount_targets(region, &query(req))?,
        )),
        (&Method::DELETE, ["mount-targets", id]) => {
            svc.delete_mount_target(region, id)?;
            Ok(no_content())
        }
        (&Method::GET, ["mount-targets", id, "security-groups"]) => Ok(answer(
            200,
            svc.describe_mount_target_security_groups(region, id)?,
        )),
        (&Method::PUT, ["mount-targets", id, "security-groups"]) => {
            svc.modify_mount_target_security_groups(region, id, &body(req)?)?;
            Ok(no_content())
        }
        (&Method::POST, ["access-points"]) => Ok(answer(
            200,
            svc.create_access_point(region, &body(req)?, Vec::new())?,
        )),
        (&Method::GET, ["access-points"]) => Ok(answer(
            200,
            svc.describe_access_points(region, &query(req))?,
        )),
        (&Method::DELETE, ["access-points", id]) => {
            svc.delete_access_point(region, id)?;
            Ok(no_content())
        }
        (&Method::POST, ["resource-tags", id]) => {
            let tags = user_tags(&body(req)?, "Tags")?;
            svc.tag_resource(region, id, tags)?;
            Ok(answer(200, json!({})))
        }
        (&Method::DELETE, ["resource-tags", id]) => {
            let keys: Vec<String> = req
                .query
                .iter()
                .filter(|(k, _)| k == "tagKeys")
                .map(|(_, v)| v.clone())
                .collect();
            if keys.is_empty() {
                return Err(bad_request("TagKeys is required"));
            }
            svc.untag_resource(region, id, &keys)?;
            Ok(answer(200, json!({})))
        }
        (&Method::GET, ["resource-tags", id]) => {
            Ok(answer(200, svc.list_tags_for_resource(region, id)?))
        }
        (&Method::POST, ["create-tags", id]) => {
            let tags = user_tags(&body(req)?, "Tags")?;
            svc.tag_resource(
                region,
                &super::ops::file_system_id("fileSystemId", id)?,
                tags,
            )?;
            Ok(no_content())
        }
        (&Method::POST, ["delete-tags", id]) => {
            let input = body(req)?;
            let keys: Vec<String> = input["TagKeys"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|k| k.as_str().map(str::to_string))
                .collect();
            svc.untag_resource(
                region,
                &super::ops::file_system_id("fileSystemId", id)?,
                &keys,
            )?;
            Ok(no_content())
        }
        (&Method::GET, ["tags", id]) => {
            Ok(answer(200, svc.describe_tags(region, id, &query(req))?))
        }
        (&Method::GET, ["account-preferences"]) => Ok(answer(
            200,
            json!({"ResourceIdPreference": {"ResourceIdType": "LONG_ID", "Resources": ["FILE_SYSTEM", "MOUNT_TARGET"]}}),
        )),
        (&Method::PUT, ["account-preferences"]) => unimplemented("PutAccountPreferences"),
        _ => Err(AwsError::new(
            StatusCode::NOT_FOUND,
            "UnknownOperationException",
            format!(
                "cumulo: EFS has no operation at {} {}",
                req.method, req.raw_path
            ),
        )),
    }
}
