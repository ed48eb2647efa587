//! ECS through its typed operations (which answer in the API's JSON shapes): the region's
//! clusters, and one cluster with its services and its tasks, running and stopped.

use crate::api::Ctx;
use crate::web::{ApiError, ApiResult, json_ok};
use cumulo_services::ecs::{EcsService, ListTasksFilter};
use serde_json::{Value, json};
use std::sync::Arc;

fn service(ctx: &Ctx<'_>) -> Result<Arc<EcsService>, ApiError> {
    ctx.service::<EcsService>()
}

/// `(name, arn)` of every active cluster of the region.
pub fn cluster_names(ctx: &Ctx<'_>) -> Result<Vec<(String, String)>, ApiError> {
    Ok(service(ctx)?
        .list_clusters(&ctx.region)
        .into_iter()
        .map(|arn| (arn.rsplit('/').next().unwrap_or_default().to_string(), arn))
        .collect())
}

/// `GET ecs/clusters`: DescribeClusters of every active cluster.
pub fn clusters(ctx: &Ctx<'_>) -> ApiResult {
    let svc = service(ctx)?;
    let arns = svc.list_clusters(&ctx.region);
    let clusters = if arns.is_empty() {
        json!([])
    } else {
        svc.describe_clusters(&ctx.region, &arns, false)["clusters"].clone()
    };
    json_ok(&json!({ "clusters": clusters }))
}

/// `GET ecs/clusters/{name or ARN}`: DescribeClusters (with tags), DescribeServices of its
/// services, DescribeTasks of its running and stopped tasks.
pub fn cluster(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let svc = service(ctx)?;
    // ListServices refuses an unknown cluster with ECS's own ClusterNotFoundException.
    let services = svc
        .list_services(&ctx.region, Some(name), None)
        .map_err(ApiError::from_aws)?;
    let described = svc.describe_clusters(&ctx.region, &[name.to_string()], true);
    let services = if services.is_empty() {
        json!([])
    } else {
        svc.describe_services(&ctx.region, Some(name), &services, false)
            .map_err(ApiError::from_aws)?["services"]
            .clone()
    };
    let mut tasks: Vec<Value> = Vec::new();
    for status in ["RUNNING", "STOPPED"] {
        let arns = svc
            .list_tasks(
                &ctx.region,
                Some(name),
                &ListTasksFilter {
                    desired_status: Some(status.to_string()),
                    ..Default::default()
                },
            )
            .map_err(ApiError::from_aws)?;
        if arns.is_empty() {
            continue;
        }
        let page = svc
            .describe_tasks(&ctx.region, Some(name), &arns, false)
            .map_err(ApiError::from_aws)?;
        if let Some(list) = page["tasks"].as_array() {
            tasks.extend(list.iter().cloned());
        }
    }
    json_ok(&json!({
        "cluster": described["clusters"][0],
        "services": services,
        "tasks": tasks,
    }))
}
