//! The awsJson1_0 adapter: decodes `AWSStepFunctions.<Operation>` bodies into typed calls and
//! encodes results with AWS's member names (timestamps in epoch seconds).

use super::Sfn;
use super::asl::{Event, validate};
use super::executions::{StartInput, execution_json};
use super::integrations::failure_signal;
use super::ops::{
    AliasInput, CreateMachineInput, Target, UpdateMachineInput, arn_parts, err, validation,
};
use super::state::{Machine, Revision};
use super::tokens::Signal;
use crate::json_body::{self, Body, null_member};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse, Protocol};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;

pub async fn handle(sfn: &Arc<Sfn>, req: &AwsRequest) -> AwsResponse {
    let op = req.target_operation().unwrap_or("").to_string();
    let result = match json_body::parse(req) {
        Ok(m) => dispatch(sfn, &req.region, &op, Body::new(&m, missing)).await,
        Err(e) => Err(e),
    };
    match result {
        Ok(v) => AwsResponse::json("application/x-amz-json-1.0", &v)
            .with_header("x-amzn-requestid", &req.request_id),
        Err(e) => e.into_response(Protocol::Json10, &req.request_id),
    }
}

fn missing(name: &str) -> AwsError {
    validation(null_member(name))
}

fn tags(b: &Body<'_>) -> Result<Vec<(String, String)>, AwsError> {
    b.tag_list("tags", "key", "value")
}

fn tags_json(t: &std::collections::BTreeMap<String, String>) -> Value {
    Value::Array(
        t.iter()
            .map(|(k, v)| json!({"key": k, "value": v}))
            .collect(),
    )
}

/// One page of `items`: `maxResults` (0 or absent: 100, at most 1000) from the offset
/// `nextToken` carries (at most `token_max` characters).
fn page<T: Clone>(
    items: &[T],
    b: &Body<'_>,
    token_max: usize,
) -> Result<(Vec<T>, Option<String>), AwsError> {
    use base64::Engine;
    let n = b.opt_i64("maxResults")?.unwrap_or(0);
    if n > 1000 {
        return Err(validation(format!(
            "1 validation error detected: Value '{n}' at 'maxResults' failed to satisfy constraint: Member must have value less than or equal to 1000"
        )));
    }
    if n < 0 {
        return Err(validation(format!(
            "1 validation error detected: Value '{n}' at 'maxResults' failed to satisfy constraint: Member must have value greater than or equal to 0"
        )));
    }
    let n = if n == 0 { 100 } else { n as usize };
    let start = match b.opt_str("nextToken")? {
        None => 0,
        Some(t) => {
            if t.len() > token_max {
                return Err(validation(format!(
                    "1 validation error detected: Value '{t}' at 'nextToken' failed to satisfy constraint: Member must have length less than or equal to {token_max}"
                )));
            }
            base64::engine::general_purpose::STANDARD
                .decode(&t)
                .ok()
                .and_then(|d| String::from_utf8(d).ok())
                .and_then(|s| s.strip_prefix("cumulo:")?.parse::<usize>().ok())
                .ok_or_else(|| err("InvalidToken", "Invalid Token: 'Invalid token'"))?
        }
    };
    let end = (start + n).min(items.len());
    let slice = items.get(start..end).map(<[T]>::to_vec).unwrap_or_default();
    let next = (end < items.len())
        .then(|| base64::engine::general_purpose::STANDARD.encode(format!("cumulo:{end}")));
    Ok((slice, next))
}

fn with_next(mut v: Value, next: Option<String>) -> Value {
    if let Some(t) = next {
        v["nextToken"] = json!(t);
    }
    v
}

fn revision_json(v: &mut Value, r: &Revision) {
    v["definition"] = json!(r.definition);
    v["roleArn"] = json!(r.role_arn);
    v["loggingConfiguration"] = r.logging.clone();
    v["tracingConfiguration"] = r.tracing.clone();
    if let Some(id) = &r.revision_id {
        v["revisionId"] = json!(id);
    }
}

fn machine_json(m: &Machine) -> Value {
    let mut v = json!({
        "stateMachineArn": m.arn,
        "name": m.name,
        "status": "ACTIVE",
        "type": m.kind,
        "creationDate": m.created,
    });
    revision_json(&mut v, &m.revision);
    if let Some(d) = &m.description {
        v["description"] = json!(d);
    }
    v
}

pub fn event_json(e: &Event) -> Value {
    let mut v = json!({
        "id": e.id,
        "previousEventId": e.previous,
        "timestamp": e.timestamp,
        "type": e.kind,
    });
    if let Some((k, d)) = &e.details {
        v[k] = d.clone();
    }
    v
}

fn routing(b: &Body<'_>) -> Result<Vec<(String, u64)>, AwsError> {
    b.objects("routingConfiguration")?
        .iter()
        .map(|r| {
            Ok((
                r.str("stateMachineVersionArn")?,
                r.i64("weight")?.max(0) as u64,
            ))
        })
        .collect()
}

fn routing_json(r: &[(String, u64)]) -> Value {
    Value::Array(
        r.iter()
            .map(|(a, w)| json!({"stateMachineVersionArn": a, "weight": w}))
            .collect(),
    )
}

fn start_input(b: &Body<'_>) -> Result<StartInput, AwsError> {
    Ok(StartInput {
        target: b.str("stateMachineArn")?,
        name: b.opt_str("name")?,
        input: b.opt_str("input")?,
        trace_header: b.opt_str("traceHeader")?,
    })
}

async fn dispatch(sfn: &Arc<Sfn>, region: &str, op: &str, b: Body<'_>) -> Result<Value, AwsError> {
    match op {
        "CreateStateMachine" => {
            let input = CreateMachineInput {
                name: b.str("name")?,
                definition: b.str("definition")?,
                role_arn: b.str("roleArn")?,
                kind: b.opt_str("type")?,
                logging: b.get("loggingConfiguration").cloned(),
                tracing: b.get("tracingConfiguration").cloned(),
                tags: tags(&b)?,
                publish: b.opt_bool("publish")?.unwrap_or(false),
                version_description: b.opt_str("versionDescription")?,
            };
            let w = sfn.create_state_machine(region, input)?;
            let mut v = json!({"stateMachineArn": w.arn, "creationDate": w.date});
            if let Some(a) = w.version_arn {
                v["stateMachineVersionArn"] = json!(a);
            }
            Ok(v)
        }
        "DescribeStateMachine" => {
            let arn = b.str("stateMachineArn")?;
            match sfn.target(&arn)? {
                Target::Machine(m) => Ok(machine_json(&m)),
                Target::Version(m, ver) => {
                    let mut v = machine_json(&m);
                    v["stateMachineArn"] = json!(arn);
                    v["creationDate"] = json!(ver.created);
                    revision_json(&mut v, &ver.revision);
                    if let Some(d) = &ver.description {
                        v["description"] = json!(d);
                    }
                    Ok(v)
                }
                Target::Alias(..) => Err(super::ops::machine_missing(&arn)),
            }
        }
        "UpdateStateMachine" => {
            let arn = b.str("stateMachineArn")?;
            let input = UpdateMachineInput {
                definition: b.opt_str("definition")?,
                role_arn: b.opt_str("roleArn")?,
                logging: b.get("loggingConfiguration").cloned(),
                tracing: b.get("tracingConfiguration").cloned(),
                publish: b.opt_bool("publish")?.unwrap_or(false),
                version_description: b.opt_str("versionDescription")?,
            };
            let w = sfn.update_state_machine(&arn, input)?;
            let mut v = json!({"updateDate": w.date});
            if let Some(r) = w.revision_id {
                v["revisionId"] = json!(r);
            }
            if let Some(a) = w.version_arn {
                v["stateMachineVersionArn"] = json!(a);
            }
            Ok(v)
        }
        "DeleteStateMachine" => {
            sfn.delete_state_machine(&b.str("stateMachineArn")?)?;
            Ok(json!({}))
        }
        "ListStateMachines" => {
            let all = sfn.list_state_machines(region);
            let (items, next) = page(&all, &b, 1024)?;
            let list: Vec<Value> = items
                .iter()
                .map(|m| {
                    json!({"stateMachineArn": m.arn, "name": m.name, "type": m.kind,
                        "creationDate": m.created})
                })
                .collect();
            Ok(with_next(json!({"stateMachines": list}), next))
        }
        "ValidateStateMachineDefinition" => {
            let def = b.str("definition")?;
            let express = b.opt_str("type")?.as_deref() == Some("EXPRESS");
            let diags = validate::check(&def, express);
            let list: Vec<Value> = diags
                .iter()
                .map(|d| {
                    let mut v = json!({"severity": "ERROR", "code": d.code, "message": d.message});
                    if let Some(l) = &d.location {
                        v["location"] = json!(l);
                    }
                    v
                })
                .collect();
            Ok(json!({
                "result": if list.is_empty() { "OK" } else { "FAIL" },
                "diagnostics": list,
                "truncated": false,
            }))
        }
        "PublishStateMachineVersion" => {
            let (arn, date) = sfn.publish_state_machine_version(
                &b.str("stateMachineArn")?,
                b.opt_str("revisionId")?.as_deref(),
                b.opt_str("description")?,
            )?;
            Ok(json!({"stateMachineVersionArn": arn, "creationDate": date}))
        }
        "ListStateMachineVersions" => {
            let m = sfn.machine(&b.str("stateMachineArn")?)?;
            let all: Vec<Value> = m
                .versions
                .values()
                .rev()
                .map(|v| {
                    json!({"stateMachineVersionArn": format!("{}:{}", m.arn, v.number),
                        "creationDate": v.created})
                })
                .collect();
            let (items, next) = page(&all, &b, 1024)?;
            Ok(with_next(json!({"stateMachineVersions": items}), next))
        }
        "DeleteStateMachineVersion" => {
            sfn.delete_state_machine_version(&b.str("stateMachineVersionArn")?)?;
            Ok(json!({}))
        }
        "CreateStateMachineAlias" => {
            let input = AliasInput {
                name: b.str("name")?,
                description: b.opt_str("description")?,
                routing: routing(&b)?,
            };
            let (arn, date) = sfn.create_state_machine_alias(input)?;
            Ok(json!({"stateMachineAliasArn": arn, "creationDate": date}))
        }
        "DescribeStateMachineAlias" => {
            let arn = b.str("stateMachineAliasArn")?;
            arn_parts(&arn, "stateMachine")?;
            let Ok(Target::Alias(_, a)) = sfn.target(&arn) else {
                return Err(super::ops::not_found());
            };
            let mut v = json!({"stateMachineAliasArn": arn, "name": a.name,
                "routingConfiguration": routing_json(&a.routing), "creationDate": a.created});
            if let Some(d) = &a.description {
                v["description"] = json!(d);
            }
            if let Some(u) = a.updated {
                v["updateDate"] = json!(u);
            }
            Ok(v)
        }
        "UpdateStateMachineAlias" => {
            let r = if b.has("routingConfiguration") {
                Some(routing(&b)?)
            } else {
                None
            };
            let date = sfn.update_state_machine_alias(
                &b.str("stateMachineAliasArn")?,
                b.opt_str("description")?,
                r,
            )?;
            Ok(json!({"updateDate": date}))
        }
        "DeleteStateMachineAlias" => {
            sfn.delete_state_machine_alias(&b.str("stateMachineAliasArn")?)?;
            Ok(json!({}))
        }
        "ListStateMachineAliases" => {
            let m = sfn.machine(&b.str("stateMachineArn")?)?;
            let all: Vec<Value> = m
                .aliases
                .values()
                .map(|a| {
                    json!({"stateMachineAliasArn": format!("{}:{}", m.arn, a.name),
                        "creationDate": a.created})
                })
                .collect();
            let (items, next) = page(&all, &b, 1024)?;
            Ok(with_next(json!({"stateMachineAliases": items}), next))
        }
        "CreateActivity" => {
            let (arn, date) = sfn.create_activity(region, &b.str("name")?, tags(&b)?)?;
            Ok(json!({"activityArn": arn, "creationDate": date}))
        }
        "DescribeActivity" => {
            let a = sfn.activity(&b.str("activityArn")?)?;
            Ok(json!({"activityArn": a.arn, "name": a.name, "creationDate": a.created}))
        }
        "DeleteActivity" => {
            sfn.delete_activity(&b.str("activityArn")?)?;
            Ok(json!({}))
        }
        "ListActivities" => {
            let all = sfn.list_activities(region);
            let (items, next) = page(&all, &b, 1024)?;
            let list: Vec<Value> = items
                .iter()
                .map(|a| json!({"activityArn": a.arn, "name": a.name, "creationDate": a.created}))
                .collect();
            Ok(with_next(json!({"activities": list}), next))
        }
        "GetActivityTask" => {
            let arn = b.str("activityArn")?;
            sfn.activity(&arn)?;
            let worker = b.opt_str("workerName")?.unwrap_or_default();
            match sfn
                .tokens
                .poll(&arn, &worker, Duration::from_secs(60))
                .await
            {
                Some((token, input)) => Ok(json!({"taskToken": token, "input": input})),
                None => Ok(json!({})),
            }
        }
        "SendTaskSuccess" => {
            let token = b.str("taskToken")?;
            let output = b.str("output")?;
            let value: Value = serde_json::from_str(&output).map_err(|e| {
                err(
                    "InvalidOutput",
                    format!("Invalid State Machine Execution Output: '{e}'"),
                )
            })?;
            sfn.send_task(&token, Signal::Done(Ok(value)))?;
            Ok(json!({}))
        }
        "SendTaskFailure" => {
            let token = b.str("taskToken")?;
            let signal = failure_signal(b.opt_str("error")?, b.opt_str("cause")?);
            sfn.send_task(&token, signal)?;
            Ok(json!({}))
        }
        "SendTaskHeartbeat" => {
            sfn.send_task(&b.str("taskToken")?, Signal::Heartbeat)?;
            Ok(json!({}))
        }
        "TagResource" => {
            let arn = b.str("resourceArn")?;
            sfn.change_tags(&arn, &tags(&b)?, &[])?;
            Ok(json!({}))
        }
        "UntagResource" => {
            let arn = b.str("resourceArn")?;
            sfn.change_tags(&arn, &[], &b.strings("tagKeys")?)?;
            Ok(json!({}))
        }
        "ListTagsForResource" => {
            let t = sfn.tags(&b.str("resourceArn")?)?;
            Ok(json!({"tags": tags_json(&t)}))
        }
        "StartExecution" => {
            let (arn, start) = sfn.start_execution(start_input(&b)?)?;
            Ok(json!({"executionArn": arn, "startDate": start}))
        }
        "StartSyncExecution" => sfn.start_sync_execution(start_input(&b)?).await,
        "DescribeExecution" => {
            let x = sfn.describe_execution(&b.str("executionArn")?)?;
            Ok(execution_json(&x))
        }
        "DescribeStateMachineForExecution" => {
            let x = sfn.describe_execution(&b.str("executionArn")?)?;
            let mut v = json!({
                "stateMachineArn": x.machine_arn,
                "name": x.machine_arn.rsplit(':').next().unwrap_or(""),
                "updateDate": x.machine_updated,
            });
            revision_json(&mut v, &x.revision);
            Ok(v)
        }
        "StopExecution" => {
            let date = sfn.stop_execution(
                &b.str("executionArn")?,
                b.opt_str("error")?,
                b.opt_str("cause")?,
            )?;
            Ok(json!({"stopDate": date}))
        }
        "RedriveExecution" => {
            let date = sfn.redrive_execution(&b.str("executionArn")?)?;
            Ok(json!({"redriveDate": date}))
        }
        "ListExecutions" => {
            let arn = b.str("stateMachineArn")?;
            let all = sfn.list_executions(&arn, b.opt_str("statusFilter")?.as_deref())?;
            let (items, next) = page(&all, &b, 3096)?;
            let list: Vec<Value> = items
                .iter()
                .map(|x| {
                    let mut v = json!({
                        "executionArn": x.arn, "stateMachineArn": x.machine_arn,
                        "name": x.name, "status": x.status, "startDate": x.start,
                        "redriveCount": x.redrive_count,
                    });
                    if let Some(s) = x.stop {
                        v["stopDate"] = json!(s);
                    }
                    if let Some(a) = &x.version_arn {
                        v["stateMachineVersionArn"] = json!(a);
                    }
                    if let Some(a) = &x.alias_arn {
                        v["stateMachineAliasArn"] = json!(a);
                    }
                    v
                })
                .collect();
            Ok(with_next(json!({"executions": list}), next))
        }
        "GetExecutionHistory" => {
            let mut events = sfn.history(&b.str("executionArn")?)?;
            if b.opt_bool("reverseOrder")?.unwrap_or(false) {
                events.reverse();
            }
            let all: Vec<Value> = events.iter().map(event_json).collect();
            let (items, next) = page(&all, &b, 3096)?;
            Ok(with_next(json!({"events": items}), next))
        }
        "" => Err(AwsError::bad_request(
            "UnknownOperationException",
            "The X-Amz-Target header names no operation",
        )),
        other => Err(AwsError::not_implemented("states", other)),
    }
}
