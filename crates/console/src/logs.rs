//! CloudWatch Logs through its typed operations: the region's log groups, a group's streams
//! (latest event first), a stream's events (GetLogEvents, paged by its tokens) and a group's
//! events across streams (FilterLogEvents, with a filter pattern), which the page polls to tail.

use crate::api::Ctx;
use crate::web::{ApiError, ApiResult, Query, json_ok};
use cumulo_services::logs::{
    DescribeGroupsInput, DescribeStreamsInput, FilterInput, FilteredEvent, GetEventsInput,
    LogsService,
};
use serde_json::{Value, json};
use std::sync::Arc;

/// Events per page, at most and by default.
const MAX_EVENTS: usize = 10_000;
const DEFAULT_EVENTS: usize = 100;

fn service(ctx: &Ctx<'_>) -> Result<Arc<LogsService>, ApiError> {
    ctx.service::<LogsService>()
}

fn ms(t: i64) -> Value {
    chrono::DateTime::from_timestamp_millis(t)
        .map_or(Value::Null, |t| json!(crate::stacks::time(&t)))
}

/// `(name, arn)` of every log group of the region (DescribeLogGroups, every page).
pub fn group_names(ctx: &Ctx<'_>) -> Result<Vec<(String, String)>, ApiError> {
    let svc = service(ctx)?;
    Ok(all_groups(ctx)?
        .into_iter()
        .map(|g| {
            let arn = svc.group_arn(&ctx.region, &g.name);
            (g.name, arn)
        })
        .collect())
}

fn all_groups(ctx: &Ctx<'_>) -> Result<Vec<cumulo_services::logs::LogGroup>, ApiError> {
    let svc = service(ctx)?;
    let mut out = Vec::new();
    let mut next_token = None;
    loop {
        let (page, next) = svc
            .describe_log_groups(
                &ctx.region,
                DescribeGroupsInput {
                    next_token,
                    ..Default::default()
                },
            )
            .map_err(ApiError::from_aws)?;
        out.extend(page);
        match next {
            Some(t) => next_token = Some(t),
            None => return Ok(out),
        }
    }
}

/// `GET logs/groups`: each group as DescribeLogGroups reports it.
pub fn groups(ctx: &Ctx<'_>) -> ApiResult {
    let svc = service(ctx)?;
    let list: Vec<Value> = all_groups(ctx)?
        .into_iter()
        .map(|g| {
            json!({
                "name": g.name,
                "arn": svc.group_arn(&ctx.region, &g.name),
                "creation_time": ms(g.creation_time),
                "retention_in_days": g.retention_in_days,
                "kms_key_id": g.kms_key_id,
                "log_group_class": g.log_group_class,
                "tags": g.tags,
            })
        })
        .collect();
    json_ok(&json!({ "groups": list }))
}

/// `GET logs/groups/{name}/streams`: the group's streams, the latest event first.
pub fn streams(ctx: &Ctx<'_>, group: &str) -> ApiResult {
    let svc = service(ctx)?;
    let g = svc
        .log_group(&ctx.region, group)
        .map_err(ApiError::from_aws)?;
    let mut list = Vec::new();
    let mut next_token = None;
    loop {
        let (page, next) = svc
            .describe_log_streams(
                &ctx.region,
                DescribeStreamsInput {
                    group: group.to_string(),
                    order_by_last_event: true,
                    descending: true,
                    next_token,
                    ..Default::default()
                },
            )
            .map_err(ApiError::from_aws)?;
        list.extend(page.into_iter().map(|s| {
            json!({
                "name": s.name,
                "arn": svc.stream_arn(&ctx.region, group, &s.name),
                "creation_time": ms(s.creation_time),
                "first_event": s.first_event.map(ms),
                "last_event": s.last_event.map(ms),
                "last_ingestion": s.last_ingestion.map(ms),
                "stored_bytes": s.stored_bytes,
            })
        }));
        match next {
            Some(t) => next_token = Some(t),
            None => break,
        }
    }
    json_ok(&json!({
        "group": g.name,
        "arn": svc.group_arn(&ctx.region, &g.name),
        "retention_in_days": g.retention_in_days,
        "streams": list,
    }))
}

fn time_param(q: &Query<'_>, name: &str) -> Result<Option<i64>, ApiError> {
    match q.get(name).filter(|v| !v.is_empty()) {
        None => Ok(None),
        Some(v) => v
            .parse::<i64>()
            .ok()
            .filter(|t| *t >= 0)
            .map(Some)
            .ok_or_else(|| {
                ApiError::bad_request(format!(
                    "Query parameter {name} must be milliseconds since the epoch, got '{v}'"
                ))
            }),
    }
}

fn event_json(timestamp: i64, ingestion_time: i64, message: &str) -> Value {
    json!({
        "timestamp": timestamp,
        "time": ms(timestamp),
        "ingestion_time": ingestion_time,
        "message": message,
    })
}

/// `GET logs/groups/{group}/streams/{stream}/events?limit=&next_token=&start_from_head=&start_time=&end_time=`:
/// one page of GetLogEvents (oldest first; by default the latest page).
pub fn stream_events(ctx: &Ctx<'_>, group: &str, stream: &str) -> ApiResult {
    let q = Query::of(ctx.req);
    let input = GetEventsInput {
        group: group.to_string(),
        stream: stream.to_string(),
        start_time: time_param(&q, "start_time")?,
        end_time: time_param(&q, "end_time")?,
        next_token: q
            .get("next_token")
            .filter(|t| !t.is_empty())
            .map(str::to_string),
        limit: Some(q.number("limit", DEFAULT_EVENTS, MAX_EVENTS)? as i64),
        start_from_head: q.flag("start_from_head", false)?,
    };
    let out = service(ctx)?
        .get_log_events(&ctx.region, input)
        .map_err(ApiError::from_aws)?;
    let events: Vec<Value> = out
        .events
        .iter()
        .map(|e| event_json(e.timestamp, e.ingestion_time, &e.message))
        .collect();
    json_ok(&json!({
        "events": events,
        "next_forward_token": out.forward_token,
        "next_backward_token": out.backward_token,
    }))
}

/// `GET logs/groups/{group}/events?filter=&stream_prefix=&start_time=&end_time=&limit=&next_token=`:
/// one page of FilterLogEvents across the group's streams (what a live tail polls with
/// `start_time` just after the last event it has).
pub fn group_events(ctx: &Ctx<'_>, group: &str) -> ApiResult {
    let q = Query::of(ctx.req);
    let input = FilterInput {
        group: group.to_string(),
        stream_prefix: q
            .get("stream_prefix")
            .filter(|t| !t.is_empty())
            .map(str::to_string),
        start_time: time_param(&q, "start_time")?,
        end_time: time_param(&q, "end_time")?,
        pattern: q
            .get("filter")
            .filter(|t| !t.is_empty())
            .map(str::to_string),
        next_token: q
            .get("next_token")
            .filter(|t| !t.is_empty())
            .map(str::to_string),
        limit: Some(q.number("limit", DEFAULT_EVENTS, MAX_EVENTS)? as i64),
        ..Default::default()
    };
    let out = service(ctx)?
        .filter_log_events(&ctx.region, input)
        .map_err(ApiError::from_aws)?;
    let events: Vec<Value> = out
        .events
        .iter()
        .map(|e| {
            let mut v = event_json(e.timestamp, e.ingestion_time, &e.message);
            v["stream"] = json!(e.stream);
            v["event_id"] = json!(e.event_id);
            v
        })
        .collect();
    json_ok(&json!({
        "events": events,
        "searched_streams": out.searched_streams,
        "next_token": out.next_token,
    }))
}

/// A live tail (`POST events/stream/{id}/logs`): a group's events, of one stream or all,
/// matching a filter pattern, from a time on; the tab's event stream reads it each second and
/// sends what is new.
#[derive(Debug)]
pub struct Tail {
    group: String,
    stream: Option<String>,
    filter: Option<String>,
    /// The newest timestamp sent (the next read starts there: events may share it).
    since: i64,
    /// Ids of the events sent whose timestamp is `since`.
    seen: std::collections::HashSet<String>,
}

/// Events a tail sends at most per read.
const TAIL_EVENTS: i64 = 1_000;

impl Tail {
    /// The tail a subscription's body asks for (`{"group", "stream"?, "filter"?,
    /// "start_time"?}`), once its group (and stream) is known to exist.
    pub fn subscribe(ctx: &Ctx<'_>, body: &Value) -> Result<Tail, ApiError> {
        let text = |k: &str| match &body[k] {
            Value::Null => Ok(None),
            Value::String(s) if s.is_empty() => Ok(None),
            Value::String(s) => Ok(Some(s.clone())),
            _ => Err(ApiError::bad_request(format!("{k} must be a string"))),
        };
        let group = text("group")?.ok_or_else(|| ApiError::bad_request("group is required"))?;
        let since = match &body["start_time"] {
            Value::Null => 0,
            v => v.as_i64().filter(|t| *t >= 0).ok_or_else(|| {
                ApiError::bad_request("start_time must be milliseconds since the epoch")
            })?,
        };
        let mut tail = Tail {
            group,
            stream: text("stream")?,
            filter: text("filter")?,
            since,
            seen: Default::default(),
        };
        // Refuses an unknown group or stream, or a bad pattern, now rather than in the stream
        // (FilterLogEvents does not refuse an unknown stream name; GetLogEvents does).
        if let Some(stream) = &tail.stream {
            service(ctx)?
                .get_log_events(
                    &ctx.region,
                    GetEventsInput {
                        group: tail.group.clone(),
                        stream: stream.clone(),
                        limit: Some(1),
                        ..Default::default()
                    },
                )
                .map_err(ApiError::from_aws)?;
        }
        tail.filter_events(ctx, Some(1))?;
        Ok(tail)
    }

    fn filter_events(
        &mut self,
        ctx: &Ctx<'_>,
        limit: Option<i64>,
    ) -> Result<Vec<FilteredEvent>, ApiError> {
        let out = service(ctx)?
            .filter_log_events(
                &ctx.region,
                FilterInput {
                    group: self.group.clone(),
                    stream_names: self.stream.clone().map(|s| vec![s]),
                    start_time: Some(self.since),
                    pattern: self.filter.clone(),
                    limit,
                    ..Default::default()
                },
            )
            .map_err(ApiError::from_aws)?;
        Ok(out.events)
    }

    /// The events not sent yet, oldest first (as the page's first read shows them).
    pub fn read(&mut self, ctx: &Ctx<'_>) -> Result<Vec<Value>, ApiError> {
        let mut fresh = Vec::new();
        for e in self.filter_events(ctx, Some(TAIL_EVENTS))? {
            if e.timestamp < self.since || self.seen.contains(&e.event_id) {
                continue;
            }
            if e.timestamp > self.since {
                self.since = e.timestamp;
                self.seen.clear();
            }
            self.seen.insert(e.event_id.clone());
            let mut v = event_json(e.timestamp, e.ingestion_time, &e.message);
            v["stream"] = json!(e.stream);
            v["event_id"] = json!(e.event_id);
            fresh.push(v);
        }
        Ok(fresh)
    }
}
