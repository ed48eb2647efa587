//! The REST-JSON adapter: routes `/schedules`, `/schedule-groups` and `/tags` to the typed
//! operations, with the query members botocore's model places there.

use super::SchedulerService;
use super::ops::validation;
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use http::{Method, StatusCode};
use serde_json::{Map, Value, json};

pub(super) fn handle(svc: &SchedulerService, req: &AwsRequest) -> AwsResponse {
    match route(svc, req) {
        Ok(v) => AwsResponse::new(StatusCode::OK, "application/json", v.to_string()),
        Err(e) => e.into_response(Protocol::RestJson, &req.request_id),
    }
}

fn body(req: &AwsRequest) -> Result<Value, AwsError> {
    if req.body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::Object(Map::new()));
    }
    match serde_json::from_slice::<Value>(&req.body) {
        Ok(v @ Value::Object(_)) => Ok(v),
        _ => Err(validation("The request body is not a JSON object.")),
    }
}

/// The query string as input members, renamed from their wire names (`ScheduleGroup`,
/// `groupName`) to the API's.
fn query(req: &AwsRequest) -> Value {
    let mut m = Map::new();
    for (k, v) in &req.query {
        let member = match k.as_str() {
            "ScheduleGroup" | "groupName" => "GroupName",
            other => other,
        };
        m.insert(member.to_string(), Value::String(v.clone()));
    }
    Value::Object(m)
}

fn segments(req: &AwsRequest) -> Vec<String> {
    req.raw_path
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect()
}

fn route(svc: &SchedulerService, req: &AwsRequest) -> Result<Value, AwsError> {
    let region = req.region.as_str();
    let segs = segments(req);
    let s: Vec<&str> = segs.iter().map(String::as_str).collect();
    let q = query(req);
    let group = q.get("GroupName").and_then(Value::as_str);
    match (&req.method, s.as_slice()) {
        (&Method::POST, ["schedules", name]) => svc.create_schedule(region, name, &body(req)?),
        (&Method::PUT, ["schedules", name]) => svc.update_schedule(region, name, &body(req)?),
        (&Method::GET, ["schedules", name]) => svc.get_schedule(region, name, group),
        (&Method::DELETE, ["schedules", name]) => {
            svc.delete_schedule(region, name, group)?;
            Ok(json!({}))
        }
        (&Method::GET, ["schedules"]) => svc.list_schedules(region, &q),
        (&Method::POST, ["schedule-groups", name]) => {
            svc.create_schedule_group(region, name, &body(req)?)
        }
        (&Method::GET, ["schedule-groups", name]) => svc.get_schedule_group(region, name),
        (&Method::DELETE, ["schedule-groups", name]) => {
            svc.delete_schedule_group(region, name)?;
            Ok(json!({}))
        }
        (&Method::GET, ["schedule-groups"]) => svc.list_schedule_groups(region, &q),
        (m, ["tags", arn @ ..]) if !arn.is_empty() => {
            let arn = arn.join("/");
            match *m {
                Method::POST => svc
                    .tag_resource(region, &arn, &body(req)?)
                    .map(|()| json!({})),
                Method::DELETE => {
                    let keys: Vec<String> = req
                        .query
                        .iter()
                        .filter(|(k, _)| k == "TagKeys")
                        .map(|(_, v)| v.clone())
                        .collect();
                    svc.untag_resource(region, &arn, &keys).map(|()| json!({}))
                }
                Method::GET => svc.list_tags(region, &arn),
                _ => Err(unknown(req)),
            }
        }
        _ => Err(unknown(req)),
    }
}

fn unknown(req: &AwsRequest) -> AwsError {
    AwsError::new(
        StatusCode::NOT_FOUND,
        "UnknownOperationException",
        format!(
            "cumulo: Scheduler has no operation at {} {}",
            req.method, req.raw_path
        ),
    )
}
