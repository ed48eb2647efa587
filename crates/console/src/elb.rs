//! Elastic Load Balancing (v2) through its typed operations (`ElbService::call` with the API's
//! member names, Describe operations only): the region's load balancers, and one with its
//! listeners and their rules, and its target groups with their targets' health.

use crate::api::Ctx;
use crate::web::{ApiError, ApiResult, json_ok};
use cumulo_services::elasticloadbalancing::ElbService;
use serde_json::{Value, json};
use std::sync::Arc;

fn service(ctx: &Ctx<'_>) -> Result<Arc<ElbService>, ApiError> {
    ctx.service::<ElbService>()
}

fn describe(
    ctx: &Ctx<'_>,
    svc: &ElbService,
    op: &str,
    input: Value,
    key: &str,
) -> Result<Vec<Value>, ApiError> {
    let out = svc
        .call(&ctx.region, op, &input)
        .map_err(ApiError::from_aws)?;
    Ok(out[key].as_array().cloned().unwrap_or_default())
}

/// Every load balancer of the region (DescribeLoadBalancers).
pub fn all(ctx: &Ctx<'_>) -> Result<Vec<Value>, ApiError> {
    let svc = service(ctx)?;
    describe(
        ctx,
        &svc,
        "DescribeLoadBalancers",
        json!({}),
        "LoadBalancers",
    )
}

/// `GET elb/loadbalancers`: DescribeLoadBalancers.
pub fn load_balancers(ctx: &Ctx<'_>) -> ApiResult {
    json_ok(&json!({ "load_balancers": all(ctx)? }))
}

/// `GET elb/loadbalancers/{name or ARN}`: the load balancer, its listeners each with its rules
/// (DescribeListeners, DescribeRules), its target groups each with its targets' health
/// (DescribeTargetGroups, DescribeTargetHealth).
pub fn load_balancer(ctx: &Ctx<'_>, id: &str) -> ApiResult {
    let svc = service(ctx)?;
    let input = if id.starts_with("arn:") {
        json!({"LoadBalancerArns": [id]})
    } else {
        json!({"Names": [id]})
    };
    let lb = describe(ctx, &svc, "DescribeLoadBalancers", input, "LoadBalancers")?
        .into_iter()
        .next()
        .ok_or_else(|| {
            ApiError::not_found(
                "LoadBalancerNotFound",
                "One or more load balancers not found",
            )
        })?;
    let arn = lb["LoadBalancerArn"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let mut listeners = describe(
        ctx,
        &svc,
        "DescribeListeners",
        json!({"LoadBalancerArn": arn}),
        "Listeners",
    )?;
    for l in &mut listeners {
        let rules = describe(
            ctx,
            &svc,
            "DescribeRules",
            json!({"ListenerArn": l["ListenerArn"]}),
            "Rules",
        )?;
        l["Rules"] = json!(rules);
    }
    let mut groups = describe(
        ctx,
        &svc,
        "DescribeTargetGroups",
        json!({"LoadBalancerArn": arn}),
        "TargetGroups",
    )?;
    for g in &mut groups {
        let health = describe(
            ctx,
            &svc,
            "DescribeTargetHealth",
            json!({"TargetGroupArn": g["TargetGroupArn"]}),
            "TargetHealthDescriptions",
        )?;
        g["TargetHealthDescriptions"] = json!(health);
    }
    json_ok(&json!({
        "load_balancer": lb,
        "listeners": listeners,
        "target_groups": groups,
    }))
}

/// Every classic load balancer of the region (the 2012-06-01 API's DescribeLoadBalancers).
pub fn all_classic(ctx: &Ctx<'_>) -> Result<Vec<Value>, ApiError> {
    let out = service(ctx)?
        .classic_call(&ctx.region, "DescribeLoadBalancers", &json!({}))
        .map_err(ApiError::from_aws)?;
    Ok(out["LoadBalancerDescriptions"]
        .as_array()
        .cloned()
        .unwrap_or_default())
}

/// `GET elb/classic`: the classic load balancers (DescribeLoadBalancers, 2012-06-01).
pub fn classic_load_balancers(ctx: &Ctx<'_>) -> ApiResult {
    json_ok(&json!({ "load_balancers": all_classic(ctx)? }))
}

/// `GET elb/classic/{name}`: one classic load balancer (its listeners, health check, subnets,
/// security groups and instances are in its description), its instances' health
/// (DescribeInstanceHealth) and attributes (DescribeLoadBalancerAttributes).
pub fn classic_load_balancer(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let svc = service(ctx)?;
    let call = |op: &str| {
        svc.classic_call(&ctx.region, op, &json!({"LoadBalancerName": name}))
            .map_err(ApiError::from_aws)
    };
    let described = svc
        .classic_call(
            &ctx.region,
            "DescribeLoadBalancers",
            &json!({"LoadBalancerNames": [name]}),
        )
        .map_err(ApiError::from_aws)?;
    let lb = described["LoadBalancerDescriptions"][0].clone();
    json_ok(&json!({
        "load_balancer": lb,
        "instance_health": call("DescribeInstanceHealth")?["InstanceStates"],
        "attributes": call("DescribeLoadBalancerAttributes")?["LoadBalancerAttributes"],
    }))
}
