//! Stacks through the engine's typed methods (what DescribeStacks & co. answer with): the list
//! with nested stacks under their parents, one stack, its events, resources, templates, change
//! sets and resource graph, and the search across stacks and the services the console shows.

use crate::api::Ctx;
use crate::graph;
use crate::web::{ApiError, ApiResult, Query, json_ok};
use chrono::{DateTime, SecondsFormat, Utc};
use cumulo_engine::{
    Caller, ChangeSetRef, DescribeChangeSetInput, DescribeStackEventsInput, DescribeStacksInput,
    Engine, EngineError, GetTemplateInput, ListChangeSetsInput, ListStackResourcesInput,
    ListStacksInput, StackEvent, StackResourceView, StackSummary,
};
use cumulo_services::acm::AcmService;
use cumulo_services::apigateway::ApiGatewayService;
use cumulo_services::catalog::Listed;
use cumulo_services::cloudformation::CloudFormationService;
use cumulo_services::dynamodb::DynamoDbService;
use cumulo_services::ec2::Ec2Service;
use cumulo_services::ecs::EcsService;
use cumulo_services::elasticloadbalancing::ElbService;
use cumulo_services::events::EventsService;
use cumulo_services::iam::IamService;
use cumulo_services::kms::KmsService;
use cumulo_services::lambda::LambdaService;
use cumulo_services::logs::LogsService;
use cumulo_services::route53::Route53Service;
use cumulo_services::s3::S3Service;
use cumulo_services::secretsmanager::SecretsManagerService;
use cumulo_services::sns::SnsService;
use cumulo_services::sqs::SqsService;
use cumulo_services::ssm::SsmService;
use cumulo_services::stepfunctions::StepFunctionsService;
use serde_json::{Value, json};
use std::collections::HashMap;

/// Pages read at most from a paginated engine call: a stack with more events than this shows
/// its newest ones (each engine page holds 100).
const MAX_PAGES: usize = 50;

pub fn engine(ctx: &Ctx<'_>) -> Result<Engine, ApiError> {
    Ok(ctx.service::<CloudFormationService>()?.engine().clone())
}

pub fn caller(ctx: &Ctx<'_>) -> Caller {
    Caller {
        region: ctx.region.clone(),
        account_id: ctx.account_id().to_string(),
        request_id: ctx.req.request_id.clone(),
        host: ctx.req.host.clone(),
    }
}

/// The engine's refusal as an API error: an unknown stack is a 404.
pub fn engine_error(e: EngineError) -> ApiError {
    let status = http::StatusCode::from_u16(e.status).unwrap_or(http::StatusCode::BAD_REQUEST);
    if e.code == "ValidationError" && e.message.ends_with("does not exist") {
        return ApiError::not_found("StackNotFound", e.message);
    }
    ApiError::new(status, e.code, e.message)
}

pub fn time(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Millis, true)
}

pub fn opt_time(t: &Option<DateTime<Utc>>) -> Value {
    t.as_ref().map_or(Value::Null, |t| json!(time(t)))
}

/// Every stack summary of the region (ListStacks, every page).
pub async fn summaries(ctx: &Ctx<'_>) -> Result<Vec<StackSummary>, ApiError> {
    let engine = engine(ctx)?;
    let caller = caller(ctx);
    let mut out = Vec::new();
    let mut next_token = None;
    for _ in 0..MAX_PAGES {
        let page = engine
            .list_stacks(
                &caller,
                ListStacksInput {
                    stack_status_filter: Vec::new(),
                    next_token,
                },
            )
            .await
            .map_err(engine_error)?;
        out.extend(page.stack_summaries);
        next_token = page.next_token;
        if next_token.is_none() {
            break;
        }
    }
    Ok(out)
}

fn summary_json(s: &StackSummary) -> Value {
    json!({
        "name": s.stack_name,
        "id": s.stack_id,
        "status": s.stack_status.as_str(),
        "status_reason": s.stack_status_reason,
        "description": s.template_description,
        "creation_time": time(&s.creation_time),
        "last_updated_time": opt_time(&s.last_updated_time),
        "deletion_time": opt_time(&s.deletion_time),
        "parent_id": s.parent_id,
        "root_id": s.root_id,
        "drift_status": s.drift.status,
        "nested": [],
    })
}

/// `GET stacks[?deleted=true]`: root stacks newest first, each nested stack under its parent.
pub async fn list(ctx: &Ctx<'_>) -> ApiResult {
    let deleted = Query::of(ctx.req).flag("deleted", false)?;
    json_ok(&json!({ "stacks": stack_tree(ctx, deleted).await? }))
}

pub async fn stack_tree(ctx: &Ctx<'_>, deleted: bool) -> Result<Vec<Value>, ApiError> {
    let all: Vec<StackSummary> = summaries(ctx)
        .await?
        .into_iter()
        .filter(|s| deleted || s.stack_status.as_str() != "DELETE_COMPLETE")
        .collect();
    Ok(nest(&all))
}

/// Nested stacks under their parents (a child whose parent is not listed is a root).
fn nest(all: &[StackSummary]) -> Vec<Value> {
    let ids: std::collections::HashSet<&str> = all.iter().map(|s| s.stack_id.as_str()).collect();
    let mut children: HashMap<&str, Vec<&StackSummary>> = HashMap::new();
    let mut roots = Vec::new();
    for s in all {
        match s.parent_id.as_deref().filter(|p| ids.contains(p)) {
            Some(p) => children.entry(p).or_default().push(s),
            None => roots.push(s),
        }
    }
    fn build(s: &StackSummary, children: &HashMap<&str, Vec<&StackSummary>>) -> Value {
        let mut v = summary_json(s);
        if let Some(kids) = children.get(s.stack_id.as_str()) {
            v["nested"] = kids.iter().map(|k| build(k, children)).collect();
        }
        v
    }
    roots.iter().map(|s| build(s, &children)).collect()
}

/// `GET stacks/{name-or-id}`: DescribeStacks' view (NoEcho parameters masked `****` by the
/// engine, as AWS masks them).
pub async fn one(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let engine = engine(ctx)?;
    let out = engine
        .describe_stacks(
            &caller(ctx),
            DescribeStacksInput {
                stack_name: Some(name.to_string()),
                next_token: None,
            },
        )
        .await
        .map_err(engine_error)?;
    let s = out
        .stacks
        .first()
        .ok_or_else(|| engine_error(EngineError::stack_not_found(name)))?;
    json_ok(&json!({
        "name": s.stack_name,
        "id": s.stack_id,
        "status": s.stack_status.as_str(),
        "status_reason": s.stack_status_reason,
        "description": s.description,
        "creation_time": time(&s.creation_time),
        "last_updated_time": opt_time(&s.last_updated_time),
        "deletion_time": opt_time(&s.deletion_time),
        "parameters": s.parameters.iter().map(|p| json!({
            "key": p.key, "value": p.value, "resolved_value": p.resolved_value,
        })).collect::<Vec<_>>(),
        "outputs": s.outputs.iter().map(|o| json!({
            "key": o.key, "value": o.value, "description": o.description,
            "export_name": o.export_name,
        })).collect::<Vec<_>>(),
        "tags": s.tags.iter().map(|t| json!({"key": t.key, "value": t.value})).collect::<Vec<_>>(),
        "capabilities": s.capabilities,
        "disable_rollback": s.disable_rollback,
        "termination_protection": s.enable_termination_protection,
        "parent_id": s.parent_id,
        "root_id": s.root_id,
        "drift_status": s.drift.status,
        "change_set_id": s.change_set_id,
    }))
}

/// Every event of the stack, newest first (DescribeStackEvents, every page).
pub async fn all_events(ctx: &Ctx<'_>, name: &str) -> Result<Vec<StackEvent>, ApiError> {
    let engine = engine(ctx)?;
    let caller = caller(ctx);
    let mut out = Vec::new();
    let mut next_token = None;
    for _ in 0..MAX_PAGES {
        let page = engine
            .describe_stack_events(
                &caller,
                DescribeStackEventsInput {
                    stack_name: name.to_string(),
                    next_token,
                },
            )
            .await
            .map_err(engine_error)?;
        out.extend(page.stack_events);
        next_token = page.next_token;
        if next_token.is_none() {
            break;
        }
    }
    Ok(out)
}

/// `GET stacks/{name}/events`: newest first, as DescribeStackEvents.
pub async fn events(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let events: Vec<Value> = all_events(ctx, name)
        .await?
        .iter()
        .map(|e| {
            json!({
                "event_id": e.event_id,
                "logical_id": e.logical_resource_id,
                "physical_id": e.physical_resource_id,
                "type": e.resource_type,
                "timestamp": time(&e.timestamp),
                "status": e.resource_status,
                "status_reason": e.resource_status_reason,
            })
        })
        .collect();
    json_ok(&json!({ "events": events }))
}

async fn stack_resources(ctx: &Ctx<'_>, name: &str) -> Result<Vec<StackResourceView>, ApiError> {
    let engine = engine(ctx)?;
    let caller = caller(ctx);
    let mut out = Vec::new();
    let mut next_token = None;
    for _ in 0..MAX_PAGES {
        let page = engine
            .list_stack_resources(
                &caller,
                ListStackResourcesInput {
                    stack_name: name.to_string(),
                    next_token,
                },
            )
            .await
            .map_err(engine_error)?;
        out.extend(page.stack_resource_summaries);
        next_token = page.next_token;
        if next_token.is_none() {
            break;
        }
    }
    Ok(out)
}

/// Whether cumulo created the resource as a stub or with no local effect: its status reason
/// says so with a `cumulo:` prefix.
fn stubbed(reason: Option<&str>) -> bool {
    reason.is_some_and(|r| r.starts_with("cumulo:"))
}

fn resource_json(r: &StackResourceView) -> Value {
    json!({
        "logical_id": r.logical_resource_id,
        "physical_id": r.physical_resource_id,
        "type": r.resource_type,
        "status": r.resource_status,
        "status_reason": r.resource_status_reason,
        "last_updated": time(&r.last_updated_timestamp),
        "stubbed": stubbed(r.resource_status_reason.as_deref()),
        "drift_status": r.drift.status,
        "view": r.physical_resource_id.as_deref().and_then(|p| service_view(&r.resource_type, p)),
    })
}

/// The console page showing a resource, for the types the console has a view of.
pub fn service_view(resource_type: &str, physical_id: &str) -> Option<String> {
    let enc = crate::web::encode;
    match resource_type {
        "AWS::S3::Bucket" => Some(format!("/_cumulo/console/s3/{}", enc(physical_id))),
        "AWS::SQS::Queue" => {
            let name = physical_id.rsplit('/').next().filter(|n| !n.is_empty())?;
            Some(format!("/_cumulo/console/sqs/{}", enc(name)))
        }
        "AWS::CloudFormation::Stack" => {
            Some(format!("/_cumulo/console/stacks/{}", enc(physical_id)))
        }
        "AWS::SNS::Topic" => {
            let name = physical_id.rsplit(':').next().filter(|n| !n.is_empty())?;
            Some(format!("/_cumulo/console/sns/{}", enc(name)))
        }
        "AWS::DynamoDB::Table" | "AWS::DynamoDB::GlobalTable" => {
            Some(format!("/_cumulo/console/dynamodb/{}", enc(physical_id)))
        }
        "AWS::SSM::Parameter" => Some(format!("/_cumulo/console/ssm/{}", enc(physical_id))),
        "AWS::SecretsManager::Secret" => Some(format!(
            "/_cumulo/console/secretsmanager/{}",
            enc(physical_id)
        )),
        "AWS::Lambda::Function" => Some(format!("/_cumulo/console/lambda/{}", enc(physical_id))),
        "AWS::Logs::LogGroup" => Some(format!("/_cumulo/console/logs/{}", enc(physical_id))),
        "AWS::IAM::Role" => Some(format!("/_cumulo/console/iam/roles/{}", enc(physical_id))),
        "AWS::IAM::ManagedPolicy" => Some(format!(
            "/_cumulo/console/iam/policies/{}",
            enc(physical_id)
        )),
        "AWS::StepFunctions::StateMachine" => {
            let name = physical_id.rsplit(':').next().filter(|n| !n.is_empty())?;
            Some(format!("/_cumulo/console/stepfunctions/{}", enc(name)))
        }
        "AWS::Route53::HostedZone" => {
            Some(format!("/_cumulo/console/route53/{}", enc(physical_id)))
        }
        "AWS::CertificateManager::Certificate" => {
            Some(format!("/_cumulo/console/acm/{}", enc(physical_id)))
        }
        "AWS::ApiGateway::RestApi" | "AWS::ApiGatewayV2::Api" => {
            Some(format!("/_cumulo/console/apigateway/{}", enc(physical_id)))
        }
        "AWS::ECS::Cluster" => Some(format!("/_cumulo/console/ecs/{}", enc(physical_id))),
        "AWS::ECS::Service" => {
            // arn:aws:ecs:REGION:ACCOUNT:service/CLUSTER/NAME: the cluster's page lists it.
            let cluster = physical_id.split('/').nth(1).filter(|c| !c.is_empty())?;
            Some(format!("/_cumulo/console/ecs/{}", enc(cluster)))
        }
        "AWS::ElasticLoadBalancingV2::LoadBalancer" => {
            Some(format!("/_cumulo/console/elb/{}", enc(physical_id)))
        }
        "AWS::EC2::VPC" => Some(format!("/_cumulo/console/ec2/{}", enc(physical_id))),
        "AWS::EC2::SecurityGroup" => Some(format!(
            "/_cumulo/console/ec2/securitygroups/{}",
            enc(physical_id)
        )),
        "AWS::ElasticLoadBalancing::LoadBalancer" => {
            Some(format!("/_cumulo/console/elb/classic/{}", enc(physical_id)))
        }
        "AWS::KMS::Key" => Some(format!("/_cumulo/console/kms/{}", enc(physical_id))),
        "AWS::Events::Rule" => Some(format!("/_cumulo/console/events/{}", enc(physical_id))),
        _ => None,
    }
}

/// `GET stacks/{name}/resources`.
pub async fn resources(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let list: Vec<Value> = stack_resources(ctx, name)
        .await?
        .iter()
        .map(resource_json)
        .collect();
    json_ok(&json!({ "resources": list }))
}

async fn template_text(ctx: &Ctx<'_>, name: &str, stage: &str) -> Result<String, ApiError> {
    let out = engine(ctx)?
        .get_template(
            &caller(ctx),
            GetTemplateInput {
                stack_name: Some(name.to_string()),
                change_set_name: None,
                template_stage: Some(stage.to_string()),
            },
        )
        .await
        .map_err(engine_error)?;
    Ok(out.template_body)
}

/// `GET stacks/{name}/template`: the template as submitted and as processed (transforms run).
pub async fn template(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let original = template_text(ctx, name, "Original").await?;
    let processed = template_text(ctx, name, "Processed").await?;
    json_ok(&json!({ "original": original, "processed": processed }))
}

/// `GET stacks/{name}/changesets`: each change set with its changes.
pub async fn change_sets(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let engine = engine(ctx)?;
    let caller = caller(ctx);
    let list = engine
        .list_change_sets(
            &caller,
            ListChangeSetsInput {
                stack_name: name.to_string(),
                next_token: None,
            },
        )
        .await
        .map_err(engine_error)?;
    let mut out = Vec::new();
    for s in list.summaries {
        let changes = engine
            .describe_change_set(
                &caller,
                DescribeChangeSetInput {
                    change_set: ChangeSetRef {
                        change_set_name: s.change_set_id.clone(),
                        stack_name: Some(s.stack_id.clone()),
                    },
                    next_token: None,
                    include_property_values: false,
                },
            )
            .await
            .map(|v| {
                v.changes
                    .iter()
                    .map(|c| {
                        json!({
                            "action": c.action,
                            "logical_id": c.logical_resource_id,
                            "physical_id": c.physical_resource_id,
                            "type": c.resource_type,
                            "replacement": c.replacement,
                            "scope": c.scope,
                        })
                    })
                    .collect::<Vec<_>>()
            })
            .unwrap_or_default();
        out.push(json!({
            "name": s.change_set_name,
            "id": s.change_set_id,
            "status": s.status,
            "execution_status": s.execution_status,
            "status_reason": s.status_reason,
            "creation_time": time(&s.creation_time),
            "description": s.description,
            "changes": changes,
        }));
    }
    json_ok(&json!({ "change_sets": out }))
}

/// `GET stacks/{name}/graph`: the processed template's resources and their dependencies,
/// each node with the resource's current status.
pub async fn graph(ctx: &Ctx<'_>, name: &str) -> ApiResult {
    let text = template_text(ctx, name, "Processed").await?;
    let resources = stack_resources(ctx, name).await?;
    let (nodes, edges) = graph::of_template(&text).map_err(|m| {
        ApiError::new(
            http::StatusCode::UNPROCESSABLE_ENTITY,
            "TemplateUnreadable",
            m,
        )
    })?;
    let by_id: HashMap<&str, &StackResourceView> = resources
        .iter()
        .map(|r| (r.logical_resource_id.as_str(), r))
        .collect();
    let nodes: Vec<Value> = nodes
        .iter()
        .map(|n| {
            let mut v = json!({"id": n.id, "type": n.resource_type, "level": n.level});
            match by_id.get(n.id.as_str()) {
                Some(r) => {
                    let r = resource_json(r);
                    for k in ["status", "status_reason", "physical_id", "stubbed", "view"] {
                        v[k] = r[k].clone();
                    }
                }
                None => {
                    v["status"] = Value::Null;
                    v["stubbed"] = json!(false);
                }
            }
            v
        })
        .collect();
    let edges: Vec<Value> = edges
        .iter()
        .map(|e| json!({"from": e.from, "to": e.to, "kinds": e.kinds}))
        .collect();
    json_ok(&json!({ "nodes": nodes, "edges": edges }))
}

/// `GET search?q=`: stacks by name or id, stack resources by logical or physical id, buckets
/// and queues by name, URL or ARN (case-insensitive substring).
pub async fn search(ctx: &Ctx<'_>) -> ApiResult {
    let q = Query::of(ctx.req)
        .get("q")
        .map(str::trim)
        .filter(|q| !q.is_empty())
        .ok_or_else(|| ApiError::bad_request("Query parameter q is required"))?
        .to_lowercase();
    let hit = |s: &str| s.to_lowercase().contains(&q);
    let enc = crate::web::encode;
    let mut results = Vec::new();
    let stacks = if ctx.in_use::<CloudFormationService>() {
        summaries(ctx).await?
    } else {
        Vec::new()
    };
    for s in stacks {
        if s.stack_status.as_str() == "DELETE_COMPLETE" {
            continue;
        }
        if hit(&s.stack_name) || hit(&s.stack_id) {
            results.push(json!({
                "kind": "stack", "name": s.stack_name, "id": s.stack_id,
                "view": format!("/_cumulo/console/stacks/{}", enc(&s.stack_name)),
            }));
        }
        for r in stack_resources(ctx, &s.stack_id).await.unwrap_or_default() {
            let physical = r.physical_resource_id.as_deref().unwrap_or("");
            if hit(&r.logical_resource_id) || hit(physical) {
                results.push(json!({
                    "kind": "resource", "name": r.logical_resource_id, "id": physical,
                    "type": r.resource_type, "stack": s.stack_name,
                    "view": service_view(&r.resource_type, physical).unwrap_or_else(||
                        format!("/_cumulo/console/stacks/{}", enc(&s.stack_name))),
                }));
            }
        }
    }
    for b in used::<S3Service, _>(ctx, crate::s3::bucket_names)? {
        if hit(&b) || hit(&format!("arn:aws:s3:::{b}")) {
            results.push(json!({
                "kind": "bucket", "name": b, "id": format!("arn:aws:s3:::{b}"),
                "view": format!("/_cumulo/console/s3/{}", enc(&b)),
            }));
        }
    }
    for (name, url, arn) in used::<SqsService, _>(ctx, crate::sqs::queue_names)? {
        if hit(&name) || hit(&url) || hit(&arn) {
            results.push(json!({
                "kind": "queue", "name": name, "id": arn,
                "view": format!("/_cumulo/console/sqs/{}", enc(&name)),
            }));
        }
    }
    let named = [
        (
            "topic",
            "sns",
            named_arns(used::<SnsService, _>(ctx, crate::sns::topic_arns)?),
        ),
        (
            "table",
            "dynamodb",
            used::<DynamoDbService, _>(ctx, table_arns)?,
        ),
        (
            "parameter",
            "ssm",
            used::<SsmService, _>(ctx, crate::secrets::parameter_names)?,
        ),
        (
            "secret",
            "secretsmanager",
            used::<SecretsManagerService, _>(ctx, crate::secrets::secret_names)?,
        ),
        (
            "function",
            "lambda",
            used::<LambdaService, _>(ctx, crate::lambda::function_names)?,
        ),
        (
            "log-group",
            "logs",
            used::<LogsService, _>(ctx, crate::logs::group_names)?,
        ),
        (
            "cluster",
            "ecs",
            used::<EcsService, _>(ctx, crate::ecs::cluster_names)?,
        ),
        (
            "state-machine",
            "stepfunctions",
            used::<StepFunctionsService, _>(ctx, crate::stepfunctions::machine_names)?,
        ),
    ];
    let rules = used::<EventsService, _>(ctx, crate::events::rule_names)?
        .into_iter()
        .map(|(name, arn, bus)| {
            let id = if bus == "default" {
                name.clone()
            } else {
                format!("{bus}|{name}")
            };
            (name, arn, format!("events/{}", enc(&id)))
        });
    let roles = used::<IamService, _>(ctx, crate::iam::role_names)?
        .into_iter()
        .map(|(name, arn)| {
            let view = format!("iam/roles/{}", enc(&name));
            (name, arn, view)
        });
    let keys = used::<KmsService, _>(ctx, crate::kms::key_ids)?
        .into_iter()
        .map(|(id, arn)| {
            let view = format!("kms/{}", enc(&id));
            (id, arn, view)
        });
    let zones = used::<Route53Service, _>(ctx, crate::edge::all_zones)?
        .into_iter()
        .map(|z| {
            let id = z["Id"]
                .as_str()
                .unwrap_or_default()
                .trim_start_matches("/hostedzone/")
                .to_string();
            let name = z["Name"].as_str().unwrap_or_default().to_string();
            (name, id.clone(), format!("route53/{}", enc(&id)))
        });
    let certificates = used::<AcmService, _>(ctx, crate::edge::all_certificates)?
        .into_iter()
        .map(|c| {
            let arn = c["CertificateArn"].as_str().unwrap_or_default().to_string();
            let name = c["DomainName"].as_str().unwrap_or_default().to_string();
            (name, arn.clone(), format!("acm/{}", enc(&arn)))
        });
    let apis = used::<ApiGatewayService, _>(ctx, crate::edge::api_names)?
        .into_iter()
        .map(|(name, id, _)| (name, id.clone(), format!("apigateway/{}", enc(&id))));
    let balancers = used::<ElbService, _>(ctx, crate::elb::all)?
        .into_iter()
        .map(|lb| {
            let arn = lb["LoadBalancerArn"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let name = lb["LoadBalancerName"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            (name, arn.clone(), format!("elb/{}", enc(&arn)))
        });
    let classic = used::<ElbService, _>(ctx, crate::elb::all_classic)?
        .into_iter()
        .map(|lb| {
            let name = lb["LoadBalancerName"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let dns = lb["DNSName"].as_str().unwrap_or_default().to_string();
            (name.clone(), dns, format!("elb/classic/{}", enc(&name)))
        });
    let groups = used::<Ec2Service, _>(ctx, crate::vpc::security_group_ids)?
        .into_iter()
        .map(|(name, id)| {
            let view = format!("ec2/securitygroups/{}", enc(&id));
            (name, id, view)
        });
    let network = used::<Ec2Service, _>(ctx, crate::vpc::network_ids)?
        .into_iter()
        .map(|(id, name, vpc)| (name, id, format!("ec2/{}", enc(&vpc))));
    for (kind, list) in [
        ("network", network.collect::<Vec<_>>()),
        ("load-balancer", balancers.collect()),
        ("load-balancer", classic.collect()),
        ("security-group", groups.collect()),
        ("hosted-zone", zones.collect()),
        ("certificate", certificates.collect()),
        ("api", apis.collect()),
    ] {
        for (name, id, view) in list {
            if hit(&name) || hit(&id) {
                results.push(json!({
                    "kind": kind, "name": name, "id": id,
                    "view": format!("/_cumulo/console/{view}"),
                }));
            }
        }
    }
    for (kind, list) in [
        ("rule", rules.collect::<Vec<_>>()),
        ("role", roles.collect()),
        ("key", keys.collect()),
    ] {
        for (name, arn, view) in list {
            if hit(&name) || hit(&arn) {
                results.push(json!({
                    "kind": kind, "name": name, "id": arn,
                    "view": format!("/_cumulo/console/{view}"),
                }));
            }
        }
    }
    for (kind, page, list) in named {
        for (name, arn) in list {
            if hit(&name) || hit(&arn) {
                // A secret's page is reached by ARN (its name need not be unique over time).
                let subject = if kind == "secret" { &arn } else { &name };
                results.push(json!({
                    "kind": kind, "name": name, "id": arn,
                    "view": format!("/_cumulo/console/{page}/{}", enc(subject)),
                }));
            }
        }
    }
    json_ok(&json!({ "results": results }))
}

/// What `read` finds in service `S`, or nothing when `S` is neither built nor holds persisted
/// state: a search must not build every service (each costs resident memory for as long as
/// `serve` runs) to find nothing in most of them.
fn used<S: Listed, T>(
    ctx: &Ctx<'_>,
    read: impl FnOnce(&Ctx<'_>) -> Result<Vec<T>, ApiError>,
) -> Result<Vec<T>, ApiError> {
    if ctx.in_use::<S>() {
        read(ctx)
    } else {
        Ok(Vec::new())
    }
}

/// `(name, arn)` from ARNs whose last `:` part is the name (SNS topics).
fn named_arns(arns: Vec<String>) -> Vec<(String, String)> {
    arns.into_iter()
        .map(|a| (a.rsplit(':').next().unwrap_or_default().to_string(), a))
        .collect()
}

fn table_arns(ctx: &Ctx<'_>) -> Result<Vec<(String, String)>, ApiError> {
    Ok(crate::dynamodb::table_names(ctx)?
        .into_iter()
        .map(|n| {
            let arn = format!(
                "arn:aws:dynamodb:{}:{}:table/{n}",
                ctx.region,
                ctx.account_id()
            );
            (n, arn)
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn views_link_the_types_the_console_shows() {
        assert_eq!(
            service_view("AWS::S3::Bucket", "my-bucket").as_deref(),
            Some("/_cumulo/console/s3/my-bucket")
        );
        assert_eq!(
            service_view("AWS::SQS::Queue", "http://localhost:4566/000000000000/q1").as_deref(),
            Some("/_cumulo/console/sqs/q1")
        );
        assert_eq!(
            service_view("AWS::SNS::Topic", "arn:aws:sns:us-east-1:000000000000:t1").as_deref(),
            Some("/_cumulo/console/sns/t1")
        );
        assert_eq!(
            service_view("AWS::Logs::LogGroup", "/aws/lambda/f").as_deref(),
            Some("/_cumulo/console/logs/%2Faws%2Flambda%2Ff")
        );
        assert_eq!(
            service_view("AWS::Events::Rule", "bus|r").as_deref(),
            Some("/_cumulo/console/events/bus%7Cr")
        );
        assert_eq!(
            service_view("AWS::EC2::SecurityGroup", "sg-1").as_deref(),
            Some("/_cumulo/console/ec2/securitygroups/sg-1")
        );
        assert_eq!(
            service_view("AWS::ElasticLoadBalancing::LoadBalancer", "web").as_deref(),
            Some("/_cumulo/console/elb/classic/web")
        );
        assert_eq!(service_view("AWS::EC2::Instance", "i-1"), None);
        assert!(stubbed(Some(
            "cumulo: AWS::X::Y is not emulated; nothing was created"
        )));
        assert!(!stubbed(Some("Resource creation Initiated")));
        assert!(!stubbed(None));
    }
}
