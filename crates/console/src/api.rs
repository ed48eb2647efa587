//! The JSON API, version 1: routes `/_cumulo/api/v1/...` to the handlers of each area. Paths,
//! query parameters and answers are documented in README.md ("The console and its API"); a
//! change that breaks a client is a new version beside this one.

use crate::web::{self, ApiError, ApiResult, Query, check_origin, error_response, json_ok};
use crate::{
    drift, dynamodb, ecs, edge, elb, events, iam, kms, lambda, live, logs, s3, secrets, sns, sqs,
    stacks, stepfunctions, vpc,
};
use cumulo_services::Gateway;
use cumulo_wire::AwsRequest;
use http::Method;
use serde_json::json;
use std::sync::Arc;

const V1: &str = "/_cumulo/api/v1/";

/// What every handler gets: the services, the caller's region and how the caller reached us.
pub struct Ctx<'a> {
    pub gateway: &'a Arc<Gateway>,
    /// The open event streams (what a page subscribes its stream to).
    pub streams: &'a Arc<live::Streams>,
    pub req: &'a AwsRequest,
    pub region: String,
}

impl Ctx<'_> {
    pub fn account_id(&self) -> &str {
        &self.gateway.config().account_id
    }

    /// Whether a service is built or may hold persisted state, without building it: what a
    /// read across services (the search) asks before reading one.
    pub fn in_use<S: cumulo_services::catalog::Listed>(&self) -> bool {
        self.gateway.catalog().is_some_and(|c| c.in_use::<S>())
    }

    /// A catalogued service's typed handle, built now if this is its first use.
    pub fn service<S: cumulo_services::catalog::Listed>(&self) -> Result<Arc<S>, ApiError> {
        let catalog = self.gateway.catalog().ok_or_else(|| {
            ApiError::new(
                ::http::StatusCode::SERVICE_UNAVAILABLE,
                "ServiceUnavailable",
                "This endpoint has no service catalog",
            )
        })?;
        catalog.get::<S>().map_err(|e| {
            ApiError::new(
                ::http::StatusCode::INTERNAL_SERVER_ERROR,
                "InternalFailure",
                format!("The {} service could not start: {e}", S::SERVICE.name),
            )
        })
    }
}

pub async fn handle(
    gateway: &Arc<Gateway>,
    streams: &Arc<live::Streams>,
    req: AwsRequest,
) -> ::http::Response<crate::Body> {
    match route(gateway, streams, &req).await {
        Ok(r) => r,
        Err(e) => error_response(&e),
    }
}

async fn route(
    gateway: &Arc<Gateway>,
    streams: &Arc<live::Streams>,
    req: &AwsRequest,
) -> ApiResult {
    let Some(rest) = req.raw_path.strip_prefix(V1) else {
        return Err(ApiError::not_found(
            "NotFound",
            format!(
                "No API at {}; this endpoint serves version 1 under {V1}",
                req.raw_path
            ),
        ));
    };
    check_origin(req)?;
    let segs = web::segments(rest, "")
        .ok_or_else(|| ApiError::bad_request("The path is not valid UTF-8"))?;
    let ctx = Ctx {
        gateway,
        streams,
        req,
        region: Query::of(req).region(&gateway.config().default_region)?,
    };
    let segs: Vec<&str> = segs.iter().map(String::as_str).collect();
    let m = &req.method;
    match (m, segs.as_slice()) {
        (&Method::GET, ["health"]) => health(&ctx),
        (&Method::GET, ["search"]) => stacks::search(&ctx).await,
        (&Method::GET, ["events", "stream"]) => live::stream(&ctx),
        (&Method::POST, ["events", "stream", id, "logs"]) => live::subscribe_logs(&ctx, id),
        (&Method::DELETE, ["events", "stream", id, "logs"]) => live::unsubscribe_logs(&ctx, id),
        (&Method::GET, ["stacks"]) => stacks::list(&ctx).await,
        (&Method::GET, ["stacks", name]) => stacks::one(&ctx, name).await,
        (&Method::GET, ["stacks", name, "events"]) => stacks::events(&ctx, name).await,
        (&Method::GET, ["stacks", name, "resources"]) => stacks::resources(&ctx, name).await,
        (&Method::GET, ["stacks", name, "template"]) => stacks::template(&ctx, name).await,
        (&Method::GET, ["stacks", name, "changesets"]) => stacks::change_sets(&ctx, name).await,
        (&Method::GET, ["stacks", name, "graph"]) => stacks::graph(&ctx, name).await,
        (&Method::GET, ["stacks", name, "drift"]) => drift::drift(&ctx, name).await,
        (&Method::GET, ["s3", "buckets"]) => s3::buckets(&ctx),
        (&Method::GET, ["s3", "buckets", bucket, "objects"]) => s3::objects(&ctx, bucket),
        (&Method::GET, ["s3", "buckets", bucket, "objects", key @ ..]) if !key.is_empty() => {
            s3::download(&ctx, bucket, &object_key(rest))
        }
        (&Method::PUT, ["s3", "buckets", bucket, "objects", key @ ..]) if !key.is_empty() => {
            s3::upload(&ctx, bucket, &object_key(rest))
        }
        (&Method::GET, ["sqs", "queues"]) => sqs::queues(&ctx),
        (&Method::GET, ["sqs", "queues", name]) => sqs::queue(&ctx, name),
        (&Method::GET, ["sqs", "queues", name, "messages"]) => sqs::peek(&ctx, name),
        (&Method::POST, ["sqs", "queues", name, "messages"]) => sqs::send(&ctx, name),
        (&Method::POST, ["sqs", "queues", name, "purge"]) => sqs::purge(&ctx, name),
        (&Method::GET, ["sns", "topics"]) => sns::topics(&ctx),
        (&Method::GET, ["sns", "topics", topic]) => sns::topic(&ctx, topic),
        (&Method::GET, ["dynamodb", "tables"]) => dynamodb::tables(&ctx),
        (&Method::GET, ["dynamodb", "tables", table]) => dynamodb::table(&ctx, table),
        (&Method::GET, ["dynamodb", "tables", table, "items"]) => dynamodb::items(&ctx, table),
        (&Method::GET, ["ssm", "parameters"]) => secrets::parameters(&ctx),
        (&Method::GET, ["ssm", "parameters", name]) => secrets::parameter(&ctx, name),
        (&Method::POST, ["ssm", "parameters", name, "reveal"]) => {
            secrets::reveal_parameter(&ctx, name)
        }
        (&Method::GET, ["secretsmanager", "secrets"]) => secrets::secrets(&ctx),
        (&Method::GET, ["secretsmanager", "secrets", id]) => secrets::secret(&ctx, id),
        (&Method::POST, ["secretsmanager", "secrets", id, "reveal"]) => {
            secrets::reveal_secret(&ctx, id)
        }
        (&Method::GET, ["lambda", "functions"]) => lambda::functions(&ctx),
        (&Method::GET, ["lambda", "functions", name]) => lambda::function(&ctx, name),
        (&Method::POST, ["lambda", "functions", name, "invoke"]) => {
            lambda::invoke(&ctx, name).await
        }
        (&Method::GET, ["logs", "groups"]) => logs::groups(&ctx),
        (&Method::GET, ["logs", "groups", group, "streams"]) => logs::streams(&ctx, group),
        (&Method::GET, ["logs", "groups", group, "streams", stream, "events"]) => {
            logs::stream_events(&ctx, group, stream)
        }
        (&Method::GET, ["logs", "groups", group, "events"]) => logs::group_events(&ctx, group),
        (&Method::GET, ["iam", "roles"]) => iam::roles(&ctx),
        (&Method::GET, ["iam", "roles", name]) => iam::role(&ctx, name),
        (&Method::GET, ["iam", "policies"]) => iam::policies(&ctx),
        (&Method::GET, ["iam", "policies", arn]) => iam::policy(&ctx, arn),
        (&Method::GET, ["kms", "keys"]) => kms::keys(&ctx),
        (&Method::GET, ["kms", "keys", id]) => kms::key(&ctx, id),
        (&Method::GET, ["events", "rules"]) => events::rules(&ctx),
        (&Method::GET, ["events", "rules", name]) => events::rule(&ctx, name),
        (&Method::GET, ["stepfunctions", "machines"]) => stepfunctions::machines(&ctx),
        (&Method::GET, ["stepfunctions", "machines", name]) => stepfunctions::machine(&ctx, name),
        (&Method::GET, ["stepfunctions", "executions", arn]) => stepfunctions::execution(&ctx, arn),
        (&Method::GET, ["route53", "zones"]) => edge::zones(&ctx),
        (&Method::GET, ["route53", "zones", id]) => edge::zone(&ctx, id),
        (&Method::GET, ["acm", "certificates"]) => edge::certificates(&ctx),
        (&Method::GET, ["acm", "certificates", arn]) => edge::certificate(&ctx, arn),
        (&Method::GET, ["apigateway", "apis"]) => edge::apis(&ctx),
        (&Method::GET, ["apigateway", "apis", id]) => edge::api(&ctx, id),
        (&Method::GET, ["ecs", "clusters"]) => ecs::clusters(&ctx),
        (&Method::GET, ["ecs", "clusters", name]) => ecs::cluster(&ctx, name),
        (&Method::GET, ["elb", "loadbalancers"]) => elb::load_balancers(&ctx),
        (&Method::GET, ["elb", "loadbalancers", id]) => elb::load_balancer(&ctx, id),
        (&Method::GET, ["elb", "classic"]) => elb::classic_load_balancers(&ctx),
        (&Method::GET, ["elb", "classic", name]) => elb::classic_load_balancer(&ctx, name),
        (&Method::GET, ["ec2", "vpcs"]) => vpc::vpcs(&ctx),
        (&Method::GET, ["ec2", "vpcs", id]) => vpc::vpc(&ctx, id),
        (&Method::GET, ["ec2", "securitygroups"]) => vpc::security_groups(&ctx),
        (&Method::GET, ["ec2", "securitygroups", id]) => vpc::security_group(&ctx, id),
        _ => Err(ApiError::not_found(
            "NotFound",
            format!("No API operation {} {}", req.method, req.raw_path),
        )),
    }
}

/// An S3 key is everything after `/objects/`, decoded once: keys may hold `/` and empty
/// segments, which the segment split would lose.
fn object_key(rest: &str) -> String {
    let raw = rest.split_once("/objects/").map_or("", |(_, k)| k);
    percent_encoding::percent_decode_str(raw)
        .decode_utf8_lossy()
        .into_owned()
}

/// The endpoint's health report (the services built so far among all, the store) plus what
/// the console's header shows (the default region and the data directory) and how many event
/// streams are open.
fn health(ctx: &Ctx<'_>) -> ApiResult {
    let (_, mut report) = ctx.gateway.health_report();
    report["default_region"] = json!(ctx.gateway.config().default_region);
    report["region"] = json!(ctx.region);
    report["account_id"] = json!(ctx.account_id());
    report["console"] = json!({ "streams": ctx.streams.count() });
    json_ok(&report)
}
