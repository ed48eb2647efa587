//! The awsJson1_1 adapter: decodes `AmazonEC2ContainerServiceV20141113.<Operation>` bodies
//! into typed calls and encodes results with AWS's member names (timestamps in epoch seconds).
//! Nested configuration (container definitions, network and deployment configuration) is kept
//! as the JSON the API takes, so it is answered exactly as given.

use super::EcsService;
use super::operations::OPERATIONS;
use super::ops::{
    CreateClusterInput, ListTasksFilter, RunTaskInput, ServiceInput, invalid, short_name,
};
use crate::json_body::{self, Body, null_member};
use cumulo_wire::{AwsError, AwsRequest, AwsResponse};
use serde_json::{Map, Value, json};

pub fn handle(svc: &EcsService, req: &AwsRequest) -> AwsResponse {
    let op = req.target_operation().unwrap_or("");
    let result = json_body::parse(req).and_then(|m| dispatch(svc, &req.region, op, &m));
    json_body::respond(req, result)
}

fn missing(name: &str) -> AwsError {
    invalid(null_member(name))
}

fn wrong_type(name: &str) -> AwsError {
    AwsError::bad_request(
        "SerializationException",
        format!("Unexpected JSON type for member {name}"),
    )
}

/// A list member whose items are kept as given (absent is empty).
fn values(m: &Map<String, Value>, name: &str) -> Result<Vec<Value>, AwsError> {
    match m.get(name) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => Ok(a.clone()),
        Some(_) => Err(wrong_type(name)),
    }
}

fn opt_values(m: &Map<String, Value>, name: &str) -> Result<Option<Vec<Value>>, AwsError> {
    match m.get(name) {
        None | Some(Value::Null) => Ok(None),
        _ => values(m, name).map(Some),
    }
}

/// A structure member kept as given.
fn structure(m: &Map<String, Value>, name: &str) -> Result<Option<Value>, AwsError> {
    match m.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(v @ Value::Object(_)) => Ok(Some(v.clone())),
        Some(_) => Err(wrong_type(name)),
    }
}

fn tags_in(b: &Body<'_>) -> Result<Vec<(String, String)>, AwsError> {
    b.tag_list("tags", "key", "value")
}

fn include_tags(b: &Body<'_>) -> Result<bool, AwsError> {
    Ok(b.strings("include")?.iter().any(|i| i == "TAGS"))
}

/// Paging over a listed set of ARNs (`maxResults` up to 100, `nextToken` an offset).
fn page(items: Vec<String>, b: &Body<'_>, member: &str) -> Result<Value, AwsError> {
    let max = b.opt_i64("maxResults")?.unwrap_or(100);
    if !(1..=100).contains(&max) {
        return Err(invalid("maxResults can be between 1 and 100."));
    }
    let offset: usize = match b.opt_str("nextToken")? {
        None => 0,
        Some(t) => t.parse().map_err(|_| invalid("Invalid nextToken."))?,
    };
    let end = offset.saturating_add(max as usize).min(items.len());
    let slice = items.get(offset.min(items.len())..end).unwrap_or(&[]);
    let mut out = json!({ member: slice });
    if end < items.len() {
        out["nextToken"] = json!(end.to_string());
    }
    Ok(out)
}

/// The members of CreateService/UpdateService kept as the service's configuration.
const SERVICE_CONFIG: &[&str] = &[
    "loadBalancers",
    "serviceRegistries",
    "networkConfiguration",
    "deploymentConfiguration",
    "serviceConnectConfiguration",
    "placementConstraints",
    "placementStrategy",
    "healthCheckGracePeriodSeconds",
    "schedulingStrategy",
    "deploymentController",
    "enableECSManagedTags",
    "propagateTags",
    "enableExecuteCommand",
    "role",
    "volumeConfigurations",
    "availabilityZoneRebalancing",
    "vpcLatticeConfigurations",
];

fn service_input(
    m: &Map<String, Value>,
    b: &Body<'_>,
    name: &str,
) -> Result<ServiceInput, AwsError> {
    let mut config = Map::new();
    for key in SERVICE_CONFIG {
        if let Some(v) = m.get(*key).filter(|v| !v.is_null()) {
            let key = if *key == "role" { "roleArn" } else { key };
            config.insert(key.to_string(), v.clone());
        }
    }
    Ok(ServiceInput {
        cluster: b.opt_str("cluster")?,
        name: b.str(name)?,
        task_definition: b.opt_str("taskDefinition")?,
        desired: b.opt_i64("desiredCount")?,
        launch_type: b.opt_str("launchType")?,
        capacity_provider_strategy: opt_values(m, "capacityProviderStrategy")?,
        platform_version: b.opt_str("platformVersion")?,
        config,
        force_new_deployment: b.bool("forceNewDeployment")?,
        tags: tags_in(b)?,
    })
}

/// The members of RegisterTaskDefinition kept as the definition.
const TASK_DEFINITION_MEMBERS: &[&str] = &[
    "family",
    "taskRoleArn",
    "executionRoleArn",
    "networkMode",
    "containerDefinitions",
    "volumes",
    "placementConstraints",
    "requiresCompatibilities",
    "cpu",
    "memory",
    "pidMode",
    "ipcMode",
    "proxyConfiguration",
    "inferenceAccelerators",
    "ephemeralStorage",
    "runtimePlatform",
    "enableFaultInjection",
];

fn dispatch(
    svc: &EcsService,
    region: &str,
    op: &str,
    m: &Map<String, Value>,
) -> Result<Value, AwsError> {
    let b = Body::new(m, missing);
    let cluster = b.opt_str("cluster")?;
    let cluster = cluster.as_deref();
    match op {
        "CreateCluster" => {
            let input = CreateClusterInput {
                name: b.opt_str("clusterName")?,
                capacity_providers: b.strings("capacityProviders")?,
                default_strategy: values(m, "defaultCapacityProviderStrategy")?,
                settings: values(m, "settings")?,
                configuration: structure(m, "configuration")?,
                service_connect_defaults: structure(m, "serviceConnectDefaults")?,
                tags: tags_in(&b)?,
            };
            let c = svc.create_cluster(region, input)?;
            Ok(json!({"cluster": c}))
        }
        "DescribeClusters" => {
            Ok(svc.describe_clusters(region, &b.strings("clusters")?, include_tags(&b)?))
        }
        "ListClusters" => page(svc.list_clusters(region), &b, "clusterArns"),
        "DeleteCluster" => Ok(json!({"cluster": svc.delete_cluster(region, &b.str("cluster")?)?})),
        "UpdateCluster" => Ok(json!({"cluster": svc.update_cluster(
            region,
            &b.str("cluster")?,
            opt_values(m, "settings")?,
            structure(m, "configuration")?,
            structure(m, "serviceConnectDefaults")?,
        )?})),
        "UpdateClusterSettings" => Ok(json!({"cluster": svc.update_cluster(
            region,
            &b.str("cluster")?,
            Some(values(m, "settings")?),
            None,
            None,
        )?})),
        "PutClusterCapacityProviders" => {
            if !b.has("capacityProviders") {
                return Err(missing("capacityProviders"));
            }
            if !b.has("defaultCapacityProviderStrategy") {
                return Err(missing("defaultCapacityProviderStrategy"));
            }
            Ok(json!({"cluster": svc.put_cluster_capacity_providers(
                region,
                &b.str("cluster")?,
                b.strings("capacityProviders")?,
                values(m, "defaultCapacityProviderStrategy")?,
            )?}))
        }
        "DescribeCapacityProviders" => {
            let names = b.strings("capacityProviders")?;
            let names = if names.is_empty() {
                vec!["FARGATE".to_string(), "FARGATE_SPOT".to_string()]
            } else {
                names
            };
            let mut found = Vec::new();
            let mut failures = Vec::new();
            for n in names {
                let name = short_name(&n).to_string();
                let arn = format!(
                    "arn:aws:ecs:{region}:{}:capacity-provider/{name}",
                    svc.account_id
                );
                if name == "FARGATE" || name == "FARGATE_SPOT" {
                    found.push(json!({"capacityProviderArn": arn, "name": name, "status": "ACTIVE", "tags": []}));
                } else {
                    failures.push(json!({"arn": arn, "reason": "MISSING"}));
                }
            }
            Ok(json!({"capacityProviders": found, "failures": failures}))
        }
        "RegisterTaskDefinition" => {
            b.str("family")?;
            if !b.has("containerDefinitions") {
                return Err(missing("containerDefinitions"));
            }
            values(m, "containerDefinitions")?;
            let mut body = Map::new();
            for key in TASK_DEFINITION_MEMBERS {
                if let Some(v) = m.get(*key).filter(|v| !v.is_null()) {
                    body.insert(key.to_string(), v.clone());
                }
            }
            svc.register_task_definition(region, body, tags_in(&b)?)
        }
        "DescribeTaskDefinition" => {
            let (td, tags) = svc.describe_task_definition(region, &b.str("taskDefinition")?)?;
            let mut out = json!({"taskDefinition": td});
            if include_tags(&b)? {
                out["tags"] = tags;
            }
            Ok(out)
        }
        "DeregisterTaskDefinition" => Ok(json!({
            "taskDefinition": svc.deregister_task_definition(region, &b.str("taskDefinition")?)?,
        })),
        "DeleteTaskDefinitions" => {
            let ids = b.strings("taskDefinitions")?;
            if ids.is_empty() {
                return Err(missing("taskDefinitions"));
            }
            svc.delete_task_definitions(region, &ids)
        }
        "ListTaskDefinitions" => {
            let status = b.opt_str("status")?.unwrap_or_else(|| "ACTIVE".into());
            let desc = b.opt_str("sort")?.as_deref() == Some("DESC");
            let family = b.opt_str("familyPrefix")?;
            let arns = svc.list_task_definitions(region, family.as_deref(), &status, desc);
            page(arns, &b, "taskDefinitionArns")
        }
        "ListTaskDefinitionFamilies" => {
            let status = b.opt_str("status")?.unwrap_or_else(|| "ACTIVE".into());
            let prefix = b.opt_str("familyPrefix")?;
            let families = svc.list_task_definition_families(region, prefix.as_deref(), &status);
            page(families, &b, "families")
        }
        "CreateService" => Ok(json!({
            "service": svc.create_service(region, service_input(m, &b, "serviceName")?)?,
        })),
        "UpdateService" => Ok(json!({
            "service": svc.update_service(region, service_input(m, &b, "service")?)?,
        })),
        "DeleteService" => Ok(json!({"service": svc.delete_service(
            region,
            cluster,
            &b.str("service")?,
            b.bool("force")?,
        )?})),
        "DescribeServices" => {
            let ids = b.strings("services")?;
            if ids.is_empty() {
                return Err(missing("services"));
            }
            svc.describe_services(region, cluster, &ids, include_tags(&b)?)
        }
        "ListServices" => {
            let lt = b.opt_str("launchType")?;
            page(
                svc.list_services(region, cluster, lt.as_deref())?,
                &b,
                "serviceArns",
            )
        }
        "RunTask" => svc.run_task(
            region,
            RunTaskInput {
                cluster: cluster.map(str::to_string),
                task_definition: b.str("taskDefinition")?,
                count: b.opt_i64("count")?.unwrap_or(1),
                launch_type: b.opt_str("launchType")?,
                capacity_provider_strategy: values(m, "capacityProviderStrategy")?,
                platform_version: b.opt_str("platformVersion")?,
                network_configuration: structure(m, "networkConfiguration")?,
                overrides: structure(m, "overrides")?,
                started_by: b.opt_str("startedBy")?,
                group: b.opt_str("group")?,
                tags: tags_in(&b)?,
            },
        ),
        "StartTask" => {
            b.str("taskDefinition")?;
            let instances = b.strings("containerInstances")?;
            if instances.is_empty() {
                return Err(missing("containerInstances"));
            }
            svc.start_task(region, cluster, &instances)
        }
        "StopTask" => Ok(json!({"task": svc.stop_task(
            region,
            cluster,
            &b.str("task")?,
            b.opt_str("reason")?,
        )?})),
        "DescribeTasks" => {
            let ids = b.strings("tasks")?;
            if ids.is_empty() {
                return Err(missing("tasks"));
            }
            svc.describe_tasks(region, cluster, &ids, include_tags(&b)?)
        }
        "ListTasks" => {
            let filter = ListTasksFilter {
                service: b.opt_str("serviceName")?,
                family: b.opt_str("family")?,
                started_by: b.opt_str("startedBy")?,
                desired_status: b.opt_str("desiredStatus")?,
                launch_type: b.opt_str("launchType")?,
            };
            page(svc.list_tasks(region, cluster, &filter)?, &b, "taskArns")
        }
        "TagResource" => {
            let tags = tags_in(&b)?;
            svc.tag_resource(region, &b.str("resourceArn")?, tags)?;
            Ok(json!({}))
        }
        "UntagResource" => {
            svc.untag_resource(region, &b.str("resourceArn")?, &b.strings("tagKeys")?)?;
            Ok(json!({}))
        }
        "ListTagsForResource" => {
            let tags = svc.list_tags(region, &b.str("resourceArn")?)?;
            Ok(json!({"tags": super::view::tags(&tags)}))
        }
        "ListAccountSettings" => {
            let name = b.opt_str("name")?;
            let value = b.opt_str("value")?;
            let principal = format!("arn:aws:iam::{}:root", svc.account_id);
            let settings: Vec<Value> = svc
                .list_account_settings(region)
                .into_iter()
                .filter(|(n, v)| {
                    name.as_deref().is_none_or(|x| x == n) && value.as_deref().is_none_or(|x| x == v)
                })
                .map(|(n, v)| json!({"name": n, "value": v, "principalArn": principal, "type": "user"}))
                .collect();
            Ok(json!({"settings": settings}))
        }
        "PutAccountSetting" | "PutAccountSettingDefault" => {
            let name = b.str("name")?;
            let value = b.str("value")?;
            svc.put_account_setting(region, &name, &value)?;
            Ok(json!({"setting": {
                "name": name, "value": value,
                "principalArn": format!("arn:aws:iam::{}:root", svc.account_id),
                "type": "user",
            }}))
        }
        "" => Err(AwsError::bad_request(
            "MissingAction",
            "Missing X-Amz-Target header naming the operation",
        )),
        other if OPERATIONS.contains(&other) => Err(AwsError::not_implemented("ecs", other)),
        other => Err(AwsError::bad_request(
            "UnknownOperationException",
            format!("Unknown operation {other}"),
        )),
    }
}
