//! The awsJson1_1 adapter: decodes `AWSEvents.<Operation>` bodies into typed calls and encodes
//! results with AWS's member names (timestamps in epoch seconds).

use super::EventsService;
use super::operations::OPERATIONS;
use super::ops::{
    BusSettings, CreateEventBusInput, PutRuleInput, TargetFailure, parse_pattern, validation,
};
use super::put::{PutEventsEntry, PutEventsResult};
use super::state::{Bus, InputTransformer, LogConfig, Rule, Target};
use crate::json_body::{self, Body, null_member};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use serde_json::{Map, Value, json};

pub fn handle(svc: &EventsService, req: &AwsRequest) -> AwsResponse {
    let op = req.target_operation().unwrap_or("");
    let result =
        json_body::parse(req).and_then(|m| dispatch(svc, &req.region, op, Body::new(&m, missing)));
    json_body::respond(req, result)
}

fn missing(name: &str) -> AwsError {
    validation(null_member(&lower_first(name)))
}

fn lower_first(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_lowercase().chain(c).collect(),
        None => String::new(),
    }
}

fn with_token(mut v: Value, next: Option<String>) -> Value {
    if let Some(t) = next {
        v["NextToken"] = t.into();
    }
    v
}

fn failures_json(failures: &[TargetFailure]) -> Value {
    json!({
        "FailedEntryCount": failures.len(),
        "FailedEntries": failures.iter().map(|f| json!({
            "TargetId": f.target_id, "ErrorCode": f.code, "ErrorMessage": f.message,
        })).collect::<Vec<_>>(),
    })
}

fn tags_json(tags: &std::collections::BTreeMap<String, String>) -> Value {
    Value::Array(
        tags.iter()
            .map(|(k, v)| json!({"Key": k, "Value": v}))
            .collect(),
    )
}

/// Target members that only the target kinds cumulo does not deliver to read: kept verbatim.
const STORED_PARAMETERS: &[&str] = &[
    "KinesisParameters",
    "RunCommandParameters",
    "EcsParameters",
    "BatchParameters",
    "HttpParameters",
    "RedshiftDataParameters",
    "SageMakerPipelineParameters",
    "AppSyncParameters",
];

pub(super) fn target(t: &Body<'_>) -> Result<Target, AwsError> {
    let id = t.str("Id")?;
    let parameters = STORED_PARAMETERS
        .iter()
        .filter_map(|k| t.get(k).map(|v| (k.to_string(), v.clone())))
        .collect();
    let transformer = match t.object("InputTransformer")? {
        None => None,
        Some(x) => Some(InputTransformer {
            paths: x.string_map("InputPathsMap")?.into_iter().collect(),
            template: x.str("InputTemplate")?,
        }),
    };
    let dead_letter_arn = match t.object("DeadLetterConfig")? {
        Some(d) => d.opt_str("Arn")?,
        None => None,
    };
    let message_group_id = match t.object("SqsParameters")? {
        Some(s) => s.opt_str("MessageGroupId")?,
        None => None,
    };
    Ok(Target {
        id,
        arn: t.str("Arn")?,
        role_arn: t.opt_str("RoleArn")?,
        input: t.opt_str("Input")?,
        input_path: t.opt_str("InputPath")?,
        input_transformer: transformer,
        dead_letter_arn,
        message_group_id,
        retry_policy: match t.object("RetryPolicy")? {
            Some(r) => Some(json!({
                "MaximumRetryAttempts": r.opt_i64("MaximumRetryAttempts")?,
                "MaximumEventAgeInSeconds": r.opt_i64("MaximumEventAgeInSeconds")?,
            })),
            None => None,
        },
        parameters,
    })
}

pub fn target_json(t: &Target) -> Value {
    let mut m = Map::new();
    m.insert("Id".into(), json!(t.id));
    m.insert("Arn".into(), json!(t.arn));
    if let Some(v) = &t.role_arn {
        m.insert("RoleArn".into(), json!(v));
    }
    if let Some(v) = &t.input {
        m.insert("Input".into(), json!(v));
    }
    if let Some(v) = &t.input_path {
        m.insert("InputPath".into(), json!(v));
    }
    if let Some(x) = &t.input_transformer {
        let mut tm = json!({"InputTemplate": x.template});
        if !x.paths.is_empty() {
            tm["InputPathsMap"] = json!(x.paths);
        }
        m.insert("InputTransformer".into(), tm);
    }
    if let Some(v) = &t.dead_letter_arn {
        m.insert("DeadLetterConfig".into(), json!({"Arn": v}));
    }
    if let Some(v) = &t.message_group_id {
        m.insert("SqsParameters".into(), json!({"MessageGroupId": v}));
    }
    if let Some(Value::Object(r)) = &t.retry_policy {
        let set: Map<String, Value> = r
            .iter()
            .filter(|(_, v)| !v.is_null())
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        m.insert("RetryPolicy".into(), Value::Object(set));
    }
    for (k, v) in &t.parameters {
        m.insert(k.clone(), v.clone());
    }
    Value::Object(m)
}

fn rule_json(svc: &EventsService, region: &str, r: &Rule, describe: bool) -> Value {
    let mut m = Map::new();
    m.insert("Name".into(), json!(r.name));
    m.insert("Arn".into(), json!(svc.rule_arn(region, &r.bus, &r.name)));
    if let Some(v) = &r.event_pattern {
        m.insert("EventPattern".into(), json!(v));
    }
    if let Some(v) = &r.schedule {
        m.insert("ScheduleExpression".into(), json!(v));
    }
    m.insert("State".into(), json!(r.state));
    if let Some(v) = &r.description {
        m.insert("Description".into(), json!(v));
    }
    if let Some(v) = &r.role_arn {
        m.insert("RoleArn".into(), json!(v));
    }
    m.insert("EventBusName".into(), json!(r.bus));
    if describe {
        m.insert("CreatedBy".into(), json!(svc.account()));
    }
    Value::Object(m)
}

fn bus_json(svc: &EventsService, region: &str, b: &Bus) -> Value {
    let mut m = json!({"Name": b.name, "Arn": svc.bus_arn(region, &b.name)});
    if let Some(d) = &b.description {
        m["Description"] = json!(d);
    }
    if let Some(p) = &b.policy {
        m["Policy"] = json!(p);
    }
    if b.created > 0.0 {
        m["CreationTime"] = json!(b.created);
        m["LastModifiedTime"] = json!(b.modified);
    }
    m
}

/// The settings CreateEventBus and UpdateEventBus read.
fn bus_settings(b: &Body<'_>) -> Result<BusSettings, AwsError> {
    Ok(BusSettings {
        description: b.opt_str("Description")?,
        kms_key: b.opt_str("KmsKeyIdentifier")?,
        dead_letter_arn: match b.object("DeadLetterConfig")? {
            Some(d) => d.opt_str("Arn")?,
            None => None,
        },
        log_config: match b.object("LogConfig")? {
            Some(l) => Some(LogConfig {
                include_detail: l.opt_str("IncludeDetail")?,
                level: l.opt_str("Level")?,
            }),
            None => None,
        },
    })
}

/// The settings as CreateEventBus, UpdateEventBus and DescribeEventBus answer them.
fn settings_json(out: &mut Value, b: &Bus) {
    if let Some(d) = &b.description {
        out["Description"] = json!(d);
    }
    if let Some(k) = &b.kms_key {
        out["KmsKeyIdentifier"] = json!(k);
    }
    if let Some(d) = &b.dead_letter_arn {
        out["DeadLetterConfig"] = json!({"Arn": d});
    }
    if let Some(l) = &b.log_config {
        let mut c = Map::new();
        if let Some(v) = &l.include_detail {
            c.insert("IncludeDetail".into(), json!(v));
        }
        if let Some(v) = &l.level {
            c.insert("Level".into(), json!(v));
        }
        out["LogConfig"] = Value::Object(c);
    }
}

fn dispatch(svc: &EventsService, region: &str, op: &str, b: Body<'_>) -> Result<Value, AwsError> {
    let bus = b.opt_str("EventBusName")?;
    let bus = bus.as_deref();
    match op {
        "CreateEventBus" => {
            if b.has("EventSourceName") {
                return Err(validation("cumulo: partner event sources are not emulated"));
            }
            let name = b.str("Name")?;
            let arn = svc.create_event_bus(
                region,
                CreateEventBusInput {
                    name: name.clone(),
                    settings: bus_settings(&b)?,
                    tags: b.tag_list("Tags", "Key", "Value")?,
                    system_tags: Vec::new(),
                },
            )?;
            let mut out = json!({"EventBusArn": arn});
            settings_json(&mut out, &svc.describe_event_bus(region, Some(&name))?);
            Ok(out)
        }
        "UpdateEventBus" => {
            let name = b.opt_str("Name")?;
            let arn = svc.update_event_bus(region, name.as_deref(), bus_settings(&b)?)?;
            let name = super::ops::bus_name(name.as_deref());
            let mut out = json!({"Arn": arn, "Name": name});
            settings_json(&mut out, &svc.describe_event_bus(region, Some(&name))?);
            Ok(out)
        }
        "DeleteEventBus" => {
            svc.delete_event_bus(region, &b.str("Name")?)?;
            Ok(json!({}))
        }
        "DescribeEventBus" => {
            let name = b.opt_str("Name")?;
            let bus = svc.describe_event_bus(region, name.as_deref())?;
            let mut out = bus_json(svc, region, &bus);
            settings_json(&mut out, &bus);
            Ok(out)
        }
        "ListEventBuses" => {
            let (buses, next) = svc.list_event_buses(
                region,
                b.opt_str("NamePrefix")?.as_deref(),
                b.opt_i64("Limit")?,
                b.opt_str("NextToken")?.as_deref(),
            )?;
            let items: Vec<Value> = buses.iter().map(|x| bus_json(svc, region, x)).collect();
            Ok(with_token(json!({"EventBuses": items}), next))
        }
        "PutRule" => {
            let arn = svc.put_rule(
                region,
                PutRuleInput {
                    name: b.str("Name")?,
                    bus: bus.map(str::to_string),
                    event_pattern: b.opt_str("EventPattern")?,
                    schedule: b.opt_str("ScheduleExpression")?,
                    state: b.opt_str("State")?,
                    description: b.opt_str("Description")?,
                    role_arn: b.opt_str("RoleArn")?,
                    tags: b.tag_list("Tags", "Key", "Value")?,
                    system_tags: Vec::new(),
                },
            )?;
            Ok(json!({"RuleArn": arn}))
        }
        "DescribeRule" => {
            let r = svc.describe_rule(region, &b.str("Name")?, bus)?;
            Ok(rule_json(svc, region, &r, true))
        }
        "ListRules" => {
            let (rules, next) = svc.list_rules(
                region,
                b.opt_str("NamePrefix")?.as_deref(),
                bus,
                b.opt_i64("Limit")?,
                b.opt_str("NextToken")?.as_deref(),
            )?;
            let items: Vec<Value> = rules
                .iter()
                .map(|r| rule_json(svc, region, r, false))
                .collect();
            Ok(with_token(json!({"Rules": items}), next))
        }
        "DeleteRule" => {
            svc.delete_rule(region, &b.str("Name")?, bus)?;
            Ok(json!({}))
        }
        "EnableRule" | "DisableRule" => {
            svc.set_rule_state(region, &b.str("Name")?, bus, op == "EnableRule")?;
            Ok(json!({}))
        }
        "PutTargets" => {
            let rule = b.str("Rule")?;
            let raw = b.objects("Targets")?;
            let mut targets = Vec::new();
            for t in &raw {
                targets.push(target(t)?);
            }
            if !b.has("Targets") {
                return Err(missing("Targets"));
            }
            let failures = svc.put_targets(region, &rule, bus, targets)?;
            Ok(failures_json(&failures))
        }
        "RemoveTargets" => {
            let failures = svc.remove_targets(region, &b.str("Rule")?, bus, &b.strings("Ids")?)?;
            Ok(failures_json(&failures))
        }
        "ListTargetsByRule" => {
            let (targets, next) = svc.list_targets_by_rule(
                region,
                &b.str("Rule")?,
                bus,
                b.opt_i64("Limit")?,
                b.opt_str("NextToken")?.as_deref(),
            )?;
            let items: Vec<Value> = targets.iter().map(target_json).collect();
            Ok(with_token(json!({"Targets": items}), next))
        }
        "ListRuleNamesByTarget" => {
            let names = svc.list_rule_names_by_target(region, &b.str("TargetArn")?, bus);
            Ok(json!({"RuleNames": names}))
        }
        "PutEvents" => {
            let entries = b
                .objects("Entries")?
                .iter()
                .map(|e| {
                    Ok(PutEventsEntry {
                        source: e.opt_str("Source")?,
                        detail_type: e.opt_str("DetailType")?,
                        detail: e.opt_str("Detail")?,
                        resources: e.strings("Resources")?,
                        time: e.opt_f64("Time")?,
                        bus: e.opt_str("EventBusName")?,
                    })
                })
                .collect::<Result<Vec<_>, AwsError>>()?;
            let results = svc.put_events(region, &entries)?;
            let failed = results
                .iter()
                .filter(|r| matches!(r, PutEventsResult::Failed { .. }))
                .count();
            let items: Vec<Value> = results
                .into_iter()
                .map(|r| match r {
                    PutEventsResult::Ok(id) => json!({"EventId": id}),
                    PutEventsResult::Failed { code, message } => {
                        json!({"ErrorCode": code, "ErrorMessage": message})
                    }
                })
                .collect();
            Ok(json!({"FailedEntryCount": failed, "Entries": items}))
        }
        "TestEventPattern" => {
            let pattern = parse_pattern(&b.str("EventPattern")?)?;
            let event: Value = serde_json::from_str(&b.str("Event")?)
                .ok()
                .filter(|v: &Value| {
                    ["id", "account", "source", "time", "region", "detail-type"]
                        .iter()
                        .all(|k| v.get(k).is_some())
                })
                .ok_or_else(|| validation("Parameter Event is not valid."))?;
            Ok(json!({"Result": pattern.matches(&event)}))
        }
        "TagResource" => {
            svc.tag_resource(
                region,
                &b.str("ResourceARN")?,
                &b.tag_list("Tags", "Key", "Value")?,
            )?;
            Ok(json!({}))
        }
        "UntagResource" => {
            svc.untag_resource(region, &b.str("ResourceARN")?, &b.strings("TagKeys")?)?;
            Ok(json!({}))
        }
        "ListTagsForResource" => {
            let tags = svc.list_tags(region, &b.str("ResourceARN")?)?;
            Ok(json!({"Tags": tags_json(&tags)}))
        }
        "" => Err(AwsError::bad_request(
            "MissingAction",
            "Missing X-Amz-Target header naming the operation",
        )),
        other if OPERATIONS.contains(&other) => Err(AwsError::not_implemented("events", other)),
        other => Err(AwsError::bad_request(
            "UnknownOperationException",
            format!("Unknown operation {other}"),
        )),
    }
}
