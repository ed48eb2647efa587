//! The awsJson1_1 adapter: decodes `Logs_20140328.<Operation>` bodies into typed calls and
//! encodes results with AWS's member names (timestamps in epoch milliseconds).

use super::account::page;
use super::groups::{group_identifier, invalid};
use super::operations::OPERATIONS;
use super::state::{LogGroup, LogStream};
use super::{
    CreateLogGroupInput, DescribeGroupsInput, DescribeStreamsInput, FilterInput, GetEventsInput,
    InputLogEvent, LogsService, PutPolicyInput, PutQueryInput, PutSubscriptionInput,
    QueryDefinition, ResourcePolicy, SubscriptionFilter,
};
use crate::json_body::{self, Body, null_member};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

pub fn handle(svc: &LogsService, req: &AwsRequest) -> AwsResponse {
    let op = req.target_operation().unwrap_or("");
    let result =
        json_body::parse(req).and_then(|m| dispatch(svc, &req.region, op, Body::new(&m, missing)));
    json_body::respond(req, result)
}

fn missing(name: &str) -> AwsError {
    invalid(null_member(name))
}

fn subscription_json(group: &str, f: &SubscriptionFilter) -> Value {
    let mut v = json!({
        "filterName": f.filter_name,
        "logGroupName": group,
        "filterPattern": f.filter_pattern,
        "destinationArn": f.destination_arn,
        "distribution": f.distribution,
        "applyOnTransformedLogs": f.apply_on_transformed_logs,
        "creationTime": f.creation_time,
    });
    if let Some(r) = &f.role_arn {
        v["roleArn"] = json!(r);
    }
    v
}

fn tags_json(tags: &BTreeMap<String, String>) -> Value {
    json!({ "tags": tags })
}

fn dispatch(svc: &LogsService, region: &str, op: &str, b: Body<'_>) -> Result<Value, AwsError> {
    match op {
        "CreateLogGroup" => {
            svc.create_log_group(
                region,
                CreateLogGroupInput {
                    name: b.str("logGroupName")?,
                    kms_key_id: b.opt_str("kmsKeyId")?,
                    tags: b.string_map("tags")?,
                    log_group_class: b.opt_str("logGroupClass")?,
                    deletion_protection: b.bool("deletionProtectionEnabled")?,
                },
            )?;
            Ok(json!({}))
        }
        "PutLogGroupDeletionProtection" => {
            svc.put_deletion_protection(
                region,
                &b.str("logGroupIdentifier")?,
                b.opt_bool("deletionProtectionEnabled")?
                    .ok_or_else(|| missing("deletionProtectionEnabled"))?,
            )?;
            Ok(json!({}))
        }
        "DeleteLogGroup" => {
            svc.delete_log_group(region, &b.str("logGroupName")?)?;
            Ok(json!({}))
        }
        "DescribeLogGroups" => {
            let (groups, next) = svc.describe_log_groups(
                region,
                DescribeGroupsInput {
                    prefix: b.opt_str("logGroupNamePrefix")?,
                    pattern: b.opt_str("logGroupNamePattern")?,
                    class: b.opt_str("logGroupClass")?,
                    identifiers: b.opt_strings("logGroupIdentifiers")?,
                    limit: b.opt_i64("limit")?,
                    next_token: b.opt_str("nextToken")?,
                },
            )?;
            let items: Vec<Value> = groups.iter().map(|g| group_json(svc, region, g)).collect();
            let mut out = json!({ "logGroups": items });
            if let Some(t) = next {
                out["nextToken"] = t.into();
            }
            Ok(out)
        }
        "PutRetentionPolicy" => {
            svc.put_retention_policy(region, &b.str("logGroupName")?, b.i64("retentionInDays")?)?;
            Ok(json!({}))
        }
        "PutSubscriptionFilter" => {
            svc.put_subscription_filter(
                region,
                PutSubscriptionInput {
                    log_group_name: b.str("logGroupName")?,
                    filter_name: b.str("filterName")?,
                    filter_pattern: b.str("filterPattern")?,
                    destination_arn: b.str("destinationArn")?,
                    role_arn: b.opt_str("roleArn")?,
                    distribution: b.opt_str("distribution")?,
                    apply_on_transformed_logs: b
                        .opt_bool("applyOnTransformedLogs")?
                        .unwrap_or(false),
                },
            )?;
            Ok(json!({}))
        }
        "DescribeSubscriptionFilters" => {
            let group = b.str("logGroupName")?;
            let prefix = b.opt_str("filterNamePrefix")?;
            let filters: Vec<Value> = svc
                .describe_subscription_filters(region, &group, prefix.as_deref())?
                .iter()
                .map(|f| subscription_json(&group, f))
                .collect();
            Ok(json!({"subscriptionFilters": filters}))
        }
        "DeleteSubscriptionFilter" => {
            svc.delete_subscription_filter(region, &b.str("logGroupName")?, &b.str("filterName")?)?;
            Ok(json!({}))
        }
        "DeleteRetentionPolicy" => {
            svc.delete_retention_policy(region, &b.str("logGroupName")?)?;
            Ok(json!({}))
        }
        "AssociateKmsKey" => {
            svc.set_kms_key(region, &b.str("logGroupName")?, Some(b.str("kmsKeyId")?))?;
            Ok(json!({}))
        }
        "DisassociateKmsKey" => {
            svc.set_kms_key(region, &b.str("logGroupName")?, None)?;
            Ok(json!({}))
        }
        "CreateLogStream" => {
            svc.create_log_stream(region, &b.str("logGroupName")?, &b.str("logStreamName")?)?;
            Ok(json!({}))
        }
        "DeleteLogStream" => {
            svc.delete_log_stream(region, &b.str("logGroupName")?, &b.str("logStreamName")?)?;
            Ok(json!({}))
        }
        "DescribeLogStreams" => {
            let group =
                group_identifier(b.opt_str("logGroupName")?, b.opt_str("logGroupIdentifier")?)?;
            let order_by_last_event = match b.opt_str("orderBy")?.as_deref() {
                None | Some("LogStreamName") => false,
                Some("LastEventTime") => true,
                Some(other) => {
                    return Err(invalid(format!(
                        "1 validation error detected: Value '{other}' at 'orderBy' failed to satisfy constraint: Member must satisfy enum value set: [LogStreamName, LastEventTime]"
                    )));
                }
            };
            let (streams, next) = svc.describe_log_streams(
                region,
                DescribeStreamsInput {
                    group: group.clone(),
                    prefix: b.opt_str("logStreamNamePrefix")?,
                    order_by_last_event,
                    descending: b.bool("descending")?,
                    limit: b.opt_i64("limit")?,
                    next_token: b.opt_str("nextToken")?,
                },
            )?;
            let items: Vec<Value> = streams
                .iter()
                .map(|s| stream_json(svc, region, &group, s))
                .collect();
            let mut out = json!({ "logStreams": items });
            if let Some(t) = next {
                out["nextToken"] = t.into();
            }
            Ok(out)
        }
        "PutLogEvents" => {
            let events = b
                .objects("logEvents")?
                .iter()
                .map(|e| {
                    Ok(InputLogEvent {
                        timestamp: e.i64("timestamp")?,
                        message: e.str("message")?,
                    })
                })
                .collect::<Result<Vec<_>, AwsError>>()?;
            if !b.has("logEvents") {
                return Err(missing("logEvents"));
            }
            // sequenceToken is accepted and ignored, as AWS has done since January 2023.
            b.opt_str("sequenceToken")?;
            let out = svc.put_log_events(
                region,
                &b.str("logGroupName")?,
                &b.str("logStreamName")?,
                &events,
            )?;
            let mut v = json!({ "nextSequenceToken": out.next_sequence_token });
            if let Some(r) = out.rejected {
                let mut info = Map::new();
                if let Some(i) = r.too_new_start {
                    info.insert("tooNewLogEventStartIndex".into(), i.into());
                }
                if let Some(i) = r.too_old_end {
                    info.insert("tooOldLogEventEndIndex".into(), i.into());
                }
                if let Some(i) = r.expired_end {
                    info.insert("expiredLogEventEndIndex".into(), i.into());
                }
                v["rejectedLogEventsInfo"] = Value::Object(info);
            }
            Ok(v)
        }
        "GetLogEvents" => {
            let out = svc.get_log_events(
                region,
                GetEventsInput {
                    group: group_identifier(
                        b.opt_str("logGroupName")?,
                        b.opt_str("logGroupIdentifier")?,
                    )?,
                    stream: b.str("logStreamName")?,
                    start_time: b.opt_i64("startTime")?,
                    end_time: b.opt_i64("endTime")?,
                    next_token: b.opt_str("nextToken")?,
                    limit: b.opt_i64("limit")?,
                    start_from_head: b.bool("startFromHead")?,
                },
            )?;
            let events: Vec<Value> = out
                .events
                .iter()
                .map(|e| {
                    json!({
                        "timestamp": e.timestamp,
                        "message": e.message,
                        "ingestionTime": e.ingestion_time,
                    })
                })
                .collect();
            Ok(json!({
                "events": events,
                "nextForwardToken": out.forward_token,
                "nextBackwardToken": out.backward_token,
            }))
        }
        "FilterLogEvents" => {
            let names = b.opt_strings("logStreamNames")?;
            let out = svc.filter_log_events(
                region,
                FilterInput {
                    group: group_identifier(
                        b.opt_str("logGroupName")?,
                        b.opt_str("logGroupIdentifier")?,
                    )?,
                    stream_names: names,
                    stream_prefix: b.opt_str("logStreamNamePrefix")?,
                    start_time: b.opt_i64("startTime")?,
                    end_time: b.opt_i64("endTime")?,
                    pattern: b.opt_str("filterPattern")?,
                    next_token: b.opt_str("nextToken")?,
                    limit: b.opt_i64("limit")?,
                },
            )?;
            let searched_completely = out.next_token.is_none();
            let events: Vec<Value> = out
                .events
                .iter()
                .map(|e| {
                    json!({
                        "logStreamName": e.stream,
                        "timestamp": e.timestamp,
                        "message": e.message,
                        "ingestionTime": e.ingestion_time,
                        "eventId": e.event_id,
                    })
                })
                .collect();
            let searched: Vec<Value> = out
                .searched_streams
                .iter()
                .map(|s| json!({"logStreamName": s, "searchedCompletely": searched_completely}))
                .collect();
            let mut v = json!({ "events": events, "searchedLogStreams": searched });
            if let Some(t) = out.next_token {
                v["nextToken"] = t.into();
            }
            Ok(v)
        }
        "TagLogGroup" => {
            svc.tag_log_group(region, &b.str("logGroupName")?, &b.string_map("tags")?)?;
            Ok(json!({}))
        }
        "UntagLogGroup" => {
            svc.untag_log_group(region, &b.str("logGroupName")?, &b.strings("tags")?)?;
            Ok(json!({}))
        }
        "ListTagsLogGroup" => Ok(tags_json(
            &svc.list_tags_log_group(region, &b.str("logGroupName")?)?,
        )),
        "TagResource" => {
            let group = svc.group_of_resource_arn(&b.str("resourceArn")?)?;
            if !b.has("tags") {
                return Err(missing("tags"));
            }
            svc.tag_log_group(region, &group, &b.string_map("tags")?)?;
            Ok(json!({}))
        }
        "UntagResource" => {
            let group = svc.group_of_resource_arn(&b.str("resourceArn")?)?;
            svc.untag_log_group(region, &group, &b.strings("tagKeys")?)?;
            Ok(json!({}))
        }
        "ListTagsForResource" => {
            let group = svc.group_of_resource_arn(&b.str("resourceArn")?)?;
            Ok(tags_json(&svc.list_tags_log_group(region, &group)?))
        }
        "PutResourcePolicy" => {
            let p = svc.put_resource_policy(
                region,
                PutPolicyInput {
                    policy_name: b.opt_str("policyName")?,
                    policy_document: b.opt_str("policyDocument")?,
                    resource_arn: b.opt_str("resourceArn")?,
                    expected_revision_id: b.opt_str("expectedRevisionId")?,
                },
            )?;
            let mut out = json!({ "resourcePolicy": policy_json(&p) });
            if let Some(r) = &p.revision_id {
                out["revisionId"] = r.clone().into();
            }
            Ok(out)
        }
        "DescribeResourcePolicies" => {
            let all = svc.describe_resource_policies(
                region,
                b.opt_str("policyScope")?.as_deref(),
                b.opt_str("resourceArn")?.as_deref(),
            )?;
            let next = b.opt_str("nextToken")?;
            let (items, next) = page(all, b.opt_i64("limit")?, 50, "limit", next.as_deref())?;
            let mut out =
                json!({ "resourcePolicies": items.iter().map(policy_json).collect::<Vec<_>>() });
            if let Some(t) = next {
                out["nextToken"] = t.into();
            }
            Ok(out)
        }
        "DeleteResourcePolicy" => {
            svc.delete_resource_policy(
                region,
                b.opt_str("policyName")?.as_deref(),
                b.opt_str("resourceArn")?.as_deref(),
            )?;
            Ok(json!({}))
        }
        "PutQueryDefinition" => {
            let id = svc.put_query_definition(
                region,
                PutQueryInput {
                    name: b.str("name")?,
                    query_string: b.str("queryString")?,
                    query_definition_id: b.opt_str("queryDefinitionId")?,
                    log_group_names: b.opt_strings("logGroupNames")?.unwrap_or_default(),
                    query_language: b.opt_str("queryLanguage")?,
                    parameters: match b.get("parameters") {
                        None | Some(Value::Null) => Vec::new(),
                        Some(Value::Array(a)) => a.clone(),
                        Some(_) => return Err(invalid("parameters must be a list.")),
                    },
                    client_token: b.opt_str("clientToken")?,
                },
            )?;
            Ok(json!({ "queryDefinitionId": id }))
        }
        "DescribeQueryDefinitions" => {
            let all = svc.describe_query_definitions(
                region,
                b.opt_str("queryDefinitionNamePrefix")?.as_deref(),
                b.opt_str("queryLanguage")?.as_deref(),
            );
            let next = b.opt_str("nextToken")?;
            let (items, next) = page(
                all,
                b.opt_i64("maxResults")?,
                1000,
                "maxResults",
                next.as_deref(),
            )?;
            let mut out =
                json!({ "queryDefinitions": items.iter().map(query_json).collect::<Vec<_>>() });
            if let Some(t) = next {
                out["nextToken"] = t.into();
            }
            Ok(out)
        }
        "DeleteQueryDefinition" => {
            svc.delete_query_definition(region, &b.str("queryDefinitionId")?)?;
            Ok(json!({ "success": true }))
        }
        "" => Err(AwsError::bad_request(
            "MissingAction",
            "Missing X-Amz-Target header naming the operation",
        )),
        other if OPERATIONS.contains(&other) => Err(AwsError::not_implemented("logs", other)),
        other => Err(AwsError::bad_request(
            "UnknownOperationException",
            format!("Unknown operation {other}"),
        )),
    }
}

pub fn group_json(svc: &LogsService, region: &str, g: &LogGroup) -> Value {
    let mut m = json!({
        "logGroupName": g.name,
        "creationTime": g.creation_time,
        "metricFilterCount": 0,
        "arn": svc.group_arn(region, &g.name),
        "storedBytes": g.stored_bytes(),
        "logGroupClass": g.log_group_class,
        "logGroupArn": svc.group_arn_bare(region, &g.name),
        "deletionProtectionEnabled": g.deletion_protection,
    });
    if let Some(d) = g.retention_in_days {
        m["retentionInDays"] = d.into();
    }
    if let Some(k) = &g.kms_key_id {
        m["kmsKeyId"] = k.clone().into();
    }
    m
}

fn policy_json(p: &ResourcePolicy) -> Value {
    let mut m = json!({
        "policyDocument": p.policy_document,
        "lastUpdatedTime": p.last_updated_time,
        "policyScope": p.scope(),
    });
    if let Some(n) = &p.policy_name {
        m["policyName"] = n.clone().into();
    }
    if let Some(a) = &p.resource_arn {
        m["resourceArn"] = a.clone().into();
    }
    if let Some(r) = &p.revision_id {
        m["revisionId"] = r.clone().into();
    }
    m
}

fn query_json(q: &QueryDefinition) -> Value {
    json!({
        "queryDefinitionId": q.query_definition_id,
        "name": q.name,
        "queryString": q.query_string,
        "lastModified": q.last_modified,
        "logGroupNames": q.log_group_names,
        "queryLanguage": q.query_language,
        "parameters": q.parameters,
    })
}

fn stream_json(svc: &LogsService, region: &str, group: &str, s: &LogStream) -> Value {
    let mut m = json!({
        "logStreamName": s.name,
        "creationTime": s.creation_time,
        "arn": svc.stream_arn(region, group, &s.name),
        "storedBytes": 0,
    });
    if let Some(t) = s.first_event {
        m["firstEventTimestamp"] = t.into();
    }
    if let Some(t) = s.last_event {
        m["lastEventTimestamp"] = t.into();
    }
    if let Some(t) = s.last_ingestion {
        m["lastIngestionTime"] = t.into();
        m["uploadSequenceToken"] = s.sequence_token().into();
    }
    m
}
