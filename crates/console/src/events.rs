//! EventBridge through its typed operations: the region's event buses and their rules, and one
//! rule with its pattern or schedule and its targets.

use crate::api::Ctx;
use crate::web::{ApiError, ApiResult, Query, json_ok};
use cumulo_services::events::{EventsService, Rule};
use serde_json::{Value, json};
use std::sync::Arc;

fn service(ctx: &Ctx<'_>) -> Result<Arc<EventsService>, ApiError> {
    ctx.service::<EventsService>()
}

fn bus_names(ctx: &Ctx<'_>, svc: &EventsService) -> Result<Vec<String>, ApiError> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let (page, next) = svc
            .list_event_buses(&ctx.region, None, None, token.as_deref())
            .map_err(ApiError::from_aws)?;
        out.extend(page.into_iter().map(|b| b.name));
        match next {
            Some(t) => token = Some(t),
            None => return Ok(out),
        }
    }
}

fn rules_of(ctx: &Ctx<'_>, svc: &EventsService, bus: &str) -> Result<Vec<Rule>, ApiError> {
    let mut out = Vec::new();
    let mut token: Option<String> = None;
    loop {
        let (page, next) = svc
            .list_rules(&ctx.region, None, Some(bus), None, token.as_deref())
            .map_err(ApiError::from_aws)?;
        out.extend(page);
        match next {
            Some(t) => token = Some(t),
            None => return Ok(out),
        }
    }
}

/// `(name, arn, bus)` of every rule of every bus of the region.
pub fn rule_names(ctx: &Ctx<'_>) -> Result<Vec<(String, String, String)>, ApiError> {
    let svc = service(ctx)?;
    let mut out = Vec::new();
    for bus in bus_names(ctx, &svc)? {
        for r in rules_of(ctx, &svc, &bus)? {
            let arn = svc.rule_arn(&ctx.region, &bus, &r.name);
            out.push((r.name, arn, bus.clone()));
        }
    }
    Ok(out)
}

fn rule_json(svc: &EventsService, region: &str, r: &Rule) -> Value {
    json!({
        "name": r.name,
        "arn": svc.rule_arn(region, &r.bus, &r.name),
        "event_bus": r.bus,
        "state": r.state,
        "description": r.description,
        "event_pattern": r.event_pattern.as_deref()
            .map(|p| serde_json::from_str::<Value>(p).unwrap_or(json!(p))),
        "schedule_expression": r.schedule,
        "role_arn": r.role_arn,
        "targets": r.targets.len(),
    })
}

/// `GET events/rules`: every bus with its rules.
pub fn rules(ctx: &Ctx<'_>) -> ApiResult {
    let svc = service(ctx)?;
    let mut buses = Vec::new();
    for bus in bus_names(ctx, &svc)? {
        let rules: Vec<Value> = rules_of(ctx, &svc, &bus)?
            .iter()
            .map(|r| rule_json(&svc, &ctx.region, r))
            .collect();
        buses.push(json!({
            "name": bus,
            "arn": svc.bus_arn(&ctx.region, &bus),
            "rules": rules,
        }));
    }
    json_ok(&json!({ "event_buses": buses }))
}

/// `GET events/rules/{name}?bus=`: DescribeRule with its targets (ListTargetsByRule) and tags.
/// A rule's CloudFormation physical id (`bus|name` on a custom bus) is taken too: a rule name
/// cannot hold `|`.
pub fn rule(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let (bus, name) = match (
        Query::of(ctx.req).get("bus").filter(|b| !b.is_empty()),
        name.split_once('|'),
    ) {
        (Some(b), _) => (Some(b), name),
        (None, Some((b, n))) => (Some(b), n),
        (None, None) => (None, name),
    };
    let svc = service(ctx)?;
    let r = svc
        .describe_rule(&ctx.region, name, bus)
        .map_err(ApiError::from_aws)?;
    let targets: Vec<Value> = r
        .targets
        .iter()
        .map(|t| {
            json!({
                "id": t.id,
                "arn": t.arn,
                "role_arn": t.role_arn,
                "input": t.input,
                "input_path": t.input_path,
                "dead_letter_arn": t.dead_letter_arn,
            })
        })
        .collect();
    let mut v = rule_json(&svc, &ctx.region, &r);
    v["targets"] = json!(targets);
    v["tags"] = json!(r.tags);
    json_ok(&v)
}
